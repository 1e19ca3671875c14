"""goldenkit's notebooks rendered as HTML in this process, without a kernel (what ``goldenkit pages`` uses).

``goldenkit report`` executes a notebook with papermill in a kernel of its own,
which costs seconds to start and to import the statistics stack; a site of a
thousand runs would start two thousand kernels. :func:`render_notebook` makes
the same page from the same notebook the same way, in this process:

* the parameters are injected by papermill's own function (the same
  ``injected-parameters`` cell after the ``parameters`` cell);
* each code cell runs in order in one namespace; the value of its last
  expression is formatted by IPython's display formatter, the one a kernel
  uses (the same mime bundle: ``text/html`` for tables and HTML blocks,
  ``image/png`` for Figures through :func:`goldenkit.report.figure_png`, the
  formatter ``report.setup_notebook()`` registers in a kernel);
  what a cell prints becomes a stream output, as in a kernel;
* the page is exported by :func:`goldenkit.notebooks.export_html`, with the
  same template, and scrubbed of secrets.

So the page holds what ``goldenkit report``'s holds, cell for cell (only the
cells' random ids differ; a test compares the two). What a kernel gives and
this does not: a timeout per cell, and isolation: a notebook's code runs in the
caller's process (goldenkit's own notebooks, or the path a caller names).
A cell that raises is the same goldenkit error naming the notebook and the cell.

:func:`render_notebooks` renders a batch: in this process when it is small, else
on one worker process per core (started once, each importing the stack once and
keeping its exporter), in job order. The secrets the caller's scope knows are
masked in the workers' pages too. The workers are spawned, so a script that
renders at its top level needs the usual ``if __name__ == "__main__":`` guard
(without it a worker dies, and the batch is rendered in this process instead).
"""

from __future__ import annotations

import ast
import base64
import contextlib
import io
import os
import sys
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from goldenkit._scrub import current_scope, secrets_in_use
from goldenkit.errors import GoldenkitError
from goldenkit.notebooks import _papermill, _raise_execution_error, export_html, notebook_path

__all__ = ["Rendered", "RenderJob", "execute_in_process", "render_notebook", "render_notebooks"]

#: a batch this small renders in this process: a worker costs about 3 s to start and import the stack
#: (two in parallel on 2 cores), a page about 0.3 s to render
POOL_MIN = 16
_PANDAS_OPTIONS = ("display.max_rows", "display.max_columns", "display.max_colwidth")


@dataclass(frozen=True)
class RenderJob:
    """One page to render: the notebook (a bundled name or a path), its parameters, the HTML file, its title."""

    notebook: str | Path
    parameters: Mapping[str, Any]
    html: Path
    title: str | None = None


@dataclass(frozen=True)
class Rendered:
    """What became of a :class:`RenderJob`: the page, or the goldenkit error's message (``error``)."""

    html: Path
    error: str | None
    seconds: float


@lru_cache(maxsize=1)
def _formatter() -> Any:
    """IPython's display formatter, with Figures as PNG as ``report.setup_notebook()`` registers them."""
    from IPython.core.formatters import DisplayFormatter
    from matplotlib.figure import Figure

    from goldenkit.report import figure_png

    formatter = DisplayFormatter()
    formatter.formatters["image/png"].for_type(Figure, figure_png)
    return formatter


def _display_data(value: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mime bundle a kernel sends for ``value`` (binary data base64-encoded, as in a notebook file)."""
    data, metadata = _formatter().format(value)
    for mime, payload in data.items():
        if isinstance(payload, bytes):
            data[mime] = base64.b64encode(payload).decode("ascii")
    return data, metadata


@contextlib.contextmanager
def _kernel_warnings() -> Iterator[None]:
    """Warnings as a kernel shows them: Python's default filters (DeprecationWarning only from the
    notebook's own code), printed to the cell's stderr, whatever the caller's filters and hooks are."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=category, append=True)
        warnings.showwarning = _show_warning
        yield


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _run_cell(cell: Any, index: int, count: int, namespace: dict[str, Any], name: str) -> list[Any]:
    """Run one code cell in ``namespace``; its outputs (streams, then the last expression's value)."""
    from nbformat.v4 import new_output

    filename = f"<{name} cell {index + 1}>"
    out, err = io.StringIO(), io.StringIO()
    value = None
    try:
        tree = ast.parse(cell.source, filename)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _kernel_warnings():
            exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the notebook's own code
            if last is not None:
                value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)  # noqa: S307
    except Exception as exc:  # a cell that raises: the error names the notebook and the cell, as with a kernel
        failed = SimpleNamespace(ename=type(exc).__name__, evalue=str(exc), cell_index=index, source=cell.source)
        _raise_execution_error(failed, name, "none: rendered in process, no page written")
    outputs = [
        new_output("stream", name=stream, text=text.getvalue())
        for stream, text in (("stdout", out), ("stderr", err))
        if text.getvalue()
    ]
    if value is not None:
        data, metadata = _display_data(value)
        outputs.append(new_output("execute_result", data=data, metadata=metadata, execution_count=count))
    return outputs


def execute_in_process(notebook: str | Path, parameters: Mapping[str, Any]) -> Any:
    """The notebook executed in this process with ``parameters`` (see the module doc): a notebook node.

    The display settings its setup cell changes (pandas options) are restored afterwards.
    """
    import pandas as pd

    _papermill()  # papermill (nbformat) without jsonschema's IRI grammar: about 1 s a process
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    source = notebook_path(notebook)
    nb = load_notebook_node(str(source))  # as papermill reads it (every cell gets its tags list)
    nb = parameterize_notebook(nb, dict(parameters), kernel_name="python3", language="python")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    count = 0
    with pd.option_context(*[x for key in _PANDAS_OPTIONS for x in (key, pd.get_option(key))]):
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            count += 1
            cell.outputs = _run_cell(cell, index, count, namespace, source.name)
            cell.execution_count = count
    return nb


def render_notebook(
    notebook: str | Path, parameters: Mapping[str, Any], html: str | Path, *, title: str | None = None
) -> Path:
    """Execute ``notebook`` in this process and write its offline HTML page to ``html`` (replaced whole)."""
    nb = execute_in_process(notebook, parameters)
    name = notebook_path(notebook).stem  # the page's name, as papermill's executed copy has it
    dest = Path(html)
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        export_html(nb, partial, title=title, name=name)
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)
    return dest


def _render_job(job: RenderJob, secrets: tuple[str, ...] = ()) -> Rendered:
    t0 = time.perf_counter()
    try:
        with secrets_in_use(*secrets) if secrets else contextlib.nullcontext():
            path = render_notebook(job.notebook, job.parameters, job.html, title=job.title)
    except GoldenkitError as exc:
        return Rendered(job.html, str(exc), time.perf_counter() - t0)
    return Rendered(path, None, time.perf_counter() - t0)


def render_notebooks(jobs: Sequence[RenderJob], *, workers: int | None = None) -> list[Rendered]:
    """Render every job (see the module doc); one :class:`Rendered` per job, in job order.

    ``workers``: processes to render on (default: one per core); a batch of fewer
    than :data:`POOL_MIN` jobs, or one worker, renders in this process. A page that
    cannot be rendered is a Rendered with its ``error``; the others are still written.
    """
    if not jobs:
        return []
    count = min(os.cpu_count() or 1, len(jobs)) if workers is None else max(1, min(workers, len(jobs)))
    scope = current_scope()
    secrets = tuple(scope.values) if scope is not None else ()
    if count == 1 or len(jobs) < POOL_MIN:
        return [_render_job(job, secrets) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    # spawn: a fresh interpreter per worker, which inherits no thread or lock of this process
    context = multiprocessing.get_context("spawn")
    chunk = max(1, len(jobs) // (count * 8))
    try:
        with ProcessPoolExecutor(count, mp_context=context) as pool:
            return list(pool.map(_render_job, jobs, [secrets] * len(jobs), chunksize=chunk))
    except BrokenProcessPool:  # a worker died (e.g. a script without its __main__ guard): render here
        return [_render_job(job, secrets) for job in jobs]
