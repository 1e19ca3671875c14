"""Execute goldenkit's parameterized notebooks and render them as offline HTML.

:func:`run_notebook` runs one notebook with papermill, in a kernel started
from *the interpreter that is running goldenkit* (so it works inside a
virtualenv on a clean machine, whatever kernels Jupyter has registered
elsewhere), writes the executed notebook, and renders a self-contained HTML
page with nbconvert:

* code cells are hidden (only their outputs are shown);
* nothing is fetched from the network: the template drops require.js, MathJax,
  mermaid and the widget manager; CSS is inlined and plots are ``data:`` URIs;
* model output is escaped by the report functions that display it
  (DataFrames render through ``to_html(escape=True)``, the side-by-side tables
  through :func:`html.escape`), so a response containing ``<script>`` shows as
  text.

:func:`execute_notebooks` runs several notebooks in one kernel, one after
another, each in an empty namespace. A kernel is shut down when its
notebooks have run, never interrupted first (the
SIGINT jupyter_client sends before a shutdown request made the kernel log
``KeyboardInterrupt caught in kernel`` now and then). ``goldenkit pages`` runs
no notebook: it calls :func:`goldenkit.report.run_page` and
:func:`goldenkit.report.compare_page`, which follow the declaration the run
report's and the comparison's notebooks are written from.

The notebooks live in the checkout's top-level ``notebooks/`` folder, one copy.
The build configuration maps that folder into this package as package data
(``goldenkit/notebooks/bundled/*.ipynb`` in the wheel: ``setup.py`` lists the
package, ``pyproject.toml`` maps it to ``notebooks/``). A name such as
``"report"`` is looked up there, read through :mod:`importlib.resources`, and
in a checkout (an editable install) in ``notebooks/`` beside the package; a
path is used as given.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

from goldenkit import errors
from goldenkit._checks import check_output
from goldenkit._scrub import scrub
from goldenkit.errors import GoldenkitError, InfrastructureError, InputError

NOTEBOOK_NAMES = ("report", "compare", "audit", "coverage", "leaderboard")
TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates"
TEMPLATE_FILE = "goldenkit_report.html.j2"
#: The notebooks of a checkout (an editable install): the top-level folder beside the package.
_CHECKOUT = Path(__file__).resolve().parent.parent.parent / "notebooks"

# src/href attributes that point at the network (what an offline page must not have).
_REMOTE_REF = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


@dataclass
class NotebookRun:
    """Where the outputs of one :func:`run_notebook` call went and how long each step took."""

    notebook: Path
    html: Path | None
    timings: dict[str, float] = field(default_factory=dict)


def notebook_path(name_or_path: str | Path) -> Path:
    """The notebook file for a bundled name (``"report"``) or an explicit path."""
    p = Path(name_or_path)
    if p.suffix == ".ipynb" or p.exists():
        if not p.is_file():
            raise InputError(f"{p}: notebook not found")
        return p
    if str(name_or_path) not in NOTEBOOK_NAMES:
        raise InputError(
            f"unknown notebook {str(name_or_path)!r}: expected one of {', '.join(NOTEBOOK_NAMES)} or a path"
        )
    for bundled in (
        resources.files(__name__) / "bundled" / f"{name_or_path}.ipynb",
        _CHECKOUT / f"{name_or_path}.ipynb",
    ):
        if isinstance(bundled, Path) and bundled.is_file():
            return bundled
    raise InfrastructureError(f"goldenkit's {name_or_path}.ipynb is missing from the installed package")


# Run by the kernel as it starts, before it says it is ready: the import every goldenkit notebook begins
# with (goldenkit's report stack, about 1 s), overlapping the command's own start; it binds no name.
_PRELOAD = "__import__('goldenkit.report')"
# Between two notebooks of one kernel: the user namespace emptied (the imported modules stay loaded).
_RESET = "get_ipython().reset(new_session=False)"


def _kernel_manager_class() -> type:
    """An AsyncKernelManager whose kernel is always ``sys.executable -m ipykernel_launcher``.

    Registered kernel specs are not consulted: a user-level ``python3`` spec can
    point at another interpreter that lacks goldenkit.
    """
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    class CurrentInterpreterKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._kernel_spec = KernelSpec(
                argv=[
                    sys.executable,
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                    "--IPKernelApp.log_level=40",
                    f"--IPKernelApp.exec_lines={_PRELOAD}",
                ],
                display_name=f"Python {sys.version_info.major}.{sys.version_info.minor} (goldenkit)",
                language="python",
                metadata={"debugger": False},
            )

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts a kernel (SIGINT) before it asks it to shut down; the kernel
            # then logs "KeyboardInterrupt caught in kernel" when the signal lands between two
            # messages. A notebook that finished has nothing to interrupt: it is shut down, not
            # interrupted (shutdown_request, then SIGTERM/SIGKILL only if it does not exit).
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return CurrentInterpreterKernelManager


def remote_references(html_text: str) -> list[str]:
    """The ``src``/``href`` attributes of a page that would fetch from the network."""
    return [m.group(0) for m in _REMOTE_REF.finditer(html_text)]


def _scrub_file(path: Path) -> None:
    """Mask the secrets in a text file written by another library (papermill's executed notebook)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return  # not written (the kernel did not start)
    clean = scrub(text)
    if clean is not text:
        path.write_text(clean, encoding="utf-8")


_EXPORTERS = threading.local()  # one HTMLExporter per thread: its template compiles once (0.5 s), not per page


def _exporter() -> Any:
    exporter = getattr(_EXPORTERS, "html", None)
    if exporter is None:
        from nbconvert import HTMLExporter

        exporter = HTMLExporter(
            template_name="lab",
            template_file=TEMPLATE_FILE,
            extra_template_paths=[str(TEMPLATE_DIR)],
            exclude_input=True,
            exclude_input_prompt=True,
            exclude_output_prompt=True,
            embed_images=True,
        )
        _EXPORTERS.html = exporter
    return exporter


def export_html(notebook: Any, html_path: str | Path, *, title: str | None = None, name: str | None = None) -> Path:
    """Render an executed notebook (a path, or a notebook node) as offline HTML with code cells hidden
    (``title``: the page title, else ``name``, else the notebook file's name); the page is scrubbed of
    secrets and written to ``html_path``."""
    import nbformat

    if isinstance(notebook, str | Path):
        nb, name = nbformat.read(str(notebook), as_version=4), name or Path(notebook).stem
    else:
        nb, name = notebook, name or Path(html_path).stem
    if title:
        nb.metadata["title"] = title
    body, _ = _exporter().from_notebook_node(nb, resources={"metadata": {"name": name}})
    remote = remote_references(body)
    if remote:  # the template is ours: a remote reference is a bug, never shipped silently
        raise InfrastructureError(f"{html_path}: HTML would load from the network: {remote[0]}")
    out = Path(html_path)
    out.write_text(scrub(body), encoding="utf-8")  # secrets masked (goldenkit._scrub)
    return out


def _papermill() -> Any:
    """papermill, imported without ``rfc3987_syntax`` when jsonschema is not loaded yet.

    papermill reads notebooks with nbformat, which imports jsonschema, whose format checkers import
    ``rfc3987_syntax`` when it is installed (JupyterLab's dependencies bring it): it compiles an IRI
    grammar at import, about 1.3 s before any kernel starts. nbformat never checks formats, so that
    import is waste: it is refused while papermill loads (jsonschema then only lacks its ``iri`` checker).
    """
    if "papermill" in sys.modules or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import papermill

        return papermill
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # `import` raises ImportError
    try:
        import papermill
    finally:
        del sys.modules["rfc3987_syntax"]
    return papermill


# goldenkit's errors that keep their meaning (and exit code) outside the cell that raised them;
# any other exception a cell raises is exit 1 naming the cell (a notebook that raises is no outage).
_PASSTHROUGH: dict[str, type[GoldenkitError]] = {
    "ResultsError": errors.ResultsError,
    "InputError": errors.InputError,
    "ConfigError": errors.ConfigError,
    "DatasetError": errors.InputError,
    "ComparisonInvalid": errors.ComparisonInvalid,
    "InfrastructureError": errors.InfrastructureError,
    "ProviderError": errors.InfrastructureError,
}


def _raise_execution_error(exc: Any, name: str, executed: Path | str) -> NoReturn:
    """Turn a failed cell into one goldenkit error naming the notebook, the cell and the exception.

    ``exc`` carries papermill's ``ename``, ``evalue``, ``cell_index`` and ``source`` (or is the exception);
    ``executed`` is where the executed notebook is (or what was rendered instead)."""
    ename = str(getattr(exc, "ename", type(exc).__name__))
    lines = str(getattr(exc, "evalue", exc)).strip().splitlines()
    cell = getattr(exc, "cell_index", None)
    code = next((line.strip() for line in str(getattr(exc, "source", "")).splitlines() if line.strip()), "")
    where = f"cell {cell + 1}" if isinstance(cell, int) else "a cell"
    if code:
        where += f" ({code[:60]}{'...' if len(code) > 60 else ''})"
    message = f"{name}: {where} raised {ename}: {lines[0] if lines else ''} (executed notebook: {executed})"
    raise _PASSTHROUGH.get(ename, GoldenkitError)(message) from None


def _sync(method: Any) -> Any:
    """An async kernel manager's or client's method, callable from a thread without a running loop."""
    from jupyter_client.utils import run_sync  # type: ignore[attr-defined]  # re-exported from jupyter_core

    return run_sync(method)


class _Kernel:
    """One kernel of this interpreter for notebooks run one after another (:func:`execute_notebooks`).

    It starts in the background as soon as it is made (while the caller imports papermill and reads
    its inputs); each notebook gets an empty namespace (:data:`_RESET` before it when another ran), so
    the second pays neither a kernel start nor the imports again. A kernel that failed (died, or a cell
    ran past its timeout) is replaced before the next notebook.
    """

    def __init__(self, cwd: str) -> None:
        self._cwd = cwd
        self._km: Any = None
        #: a notebook ran since the start or the last reset: its names are in the namespace
        self.used = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="goldenkit-kernel", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        try:
            km = _kernel_manager_class()(kernel_name="python3")
            _sync(km.start_kernel)(cwd=self._cwd)
            self._km = km
        except Exception as exc:  # said by manager(), in the caller's thread
            self._error = exc

    def fresh(self) -> Any:
        """The manager of a started kernel whose namespace no notebook has used (waits for the start)."""
        if self.used:
            self.reset()
        self.used = True
        return self.manager()

    def manager(self) -> Any:
        """The started kernel's manager (waits for the start)."""
        self._thread.join()
        if self._km is None:
            error = self._error
            raise InfrastructureError(f"the notebooks' kernel did not start: {type(error).__name__}: {error}")
        return self._km

    def reset(self) -> None:
        """Empty the user namespace for the next notebook; a kernel that does not answer is replaced."""
        from queue import Empty

        kc = self.manager().client()
        kc.start_channels(iopub=False, stdin=False, hb=False, control=False)  # the shell's reply says it all
        ok = False
        try:
            msg_id = kc.execute(_RESET, silent=True, store_history=False)
            deadline = time.monotonic() + 30
            while not ok:
                reply = _sync(kc.get_shell_msg)(timeout=max(0.0, deadline - time.monotonic()))
                if reply["parent_header"].get("msg_id") == msg_id:
                    ok = reply["content"].get("status") == "ok"
                    break
        except (Empty, TimeoutError, RuntimeError):
            ok = False
        finally:
            kc.stop_channels()
        if not ok:
            self.replace()
        self.used = False

    def replace(self) -> None:
        """Shut this kernel down at once and start a fresh one in the background."""
        self.shutdown(now=True)
        self._error, self.used = None, False
        self._thread = threading.Thread(target=self._start, name="goldenkit-kernel", daemon=True)
        self._thread.start()

    def shutdown(self, *, now: bool = False) -> None:
        self._thread.join()
        km, self._km = self._km, None
        if km is not None:
            try:
                _sync(km.shutdown_kernel)(now=now)
            except (RuntimeError, OSError):  # already gone
                pass


def execute_notebook(
    name_or_path: str | Path,
    parameters: Mapping[str, Any],
    output_dir: str | Path,
    *,
    html: bool = True,
    timeout: float | None = 600,
    title: str | None = None,
    kernel: _Kernel | None = None,
) -> NotebookRun:
    """Execute a notebook with papermill into ``output_dir`` and optionally render HTML.

    Returns a :class:`NotebookRun` with the executed notebook, the HTML page and
    the seconds spent in ``kernel_start``, ``execute`` and ``html_export``;
    ``title`` is the HTML page's title (default: the notebook's name).
    A cell that raises becomes a goldenkit error naming the notebook, the cell
    (its number in the executed notebook and its first line) and the exception:
    exit 1, except that goldenkit's own ``ComparisonInvalid`` keeps exit 4 and
    its ``InfrastructureError`` exit 3. Exit 3 is otherwise only for the
    kernel itself failing (it does not start, dies, or a cell runs past
    ``timeout``). ``kernel`` (:func:`execute_notebooks`) runs it in a shared kernel instead of its own.
    """
    pm = _papermill()
    source = notebook_path(name_or_path)
    out_dir = check_output(output_dir, "output folder", folder=True)  # a file there: one line, not mkdir's error
    out_dir.mkdir(parents=True, exist_ok=True)
    # absolute: papermill resolves relative paths against a cwd it keeps process-wide, which
    # a notebook executed at the same time in another thread may have changed
    executed = out_dir.resolve() / source.name
    timings: dict[str, float] = {}

    t0 = time.time()
    own: dict[str, Any] = {"kernel_manager_class": _kernel_manager_class()}
    try:
        if kernel is not None:
            own = {"km": kernel.fresh()}
        nb = pm.execute_notebook(
            str(source.resolve()),
            str(executed),
            parameters=dict(parameters),
            kernel_name="python3",
            language="python",
            progress_bar=False,
            log_output=False,
            cwd=str(Path.cwd()),
            execution_timeout=timeout,
            **own,
        )
    except pm.PapermillExecutionError as exc:
        _scrub_file(executed)  # a traceback in an output may quote a key
        _raise_execution_error(exc, source.name, executed)
    except (TimeoutError, RuntimeError, OSError) as exc:  # the kernel did not start, died or timed out
        if kernel is not None:
            kernel.replace()
        raise InfrastructureError(f"{source.name}: the notebook's kernel failed: {type(exc).__name__}: {exc}") from None
    total = time.time() - t0
    _scrub_file(executed)
    # Kernel start = from the call until the first cell began (papermill stamps each cell).
    starts = [c.metadata.get("papermill", {}).get("start_time") for c in nb.cells]
    first = next((s for s in starts if s), None)
    if first is not None:
        from datetime import datetime

        started = datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp() - t0
        timings["kernel_start"] = max(0.0, min(started, total))
    timings["execute"] = total - timings.get("kernel_start", 0.0)

    html_path = None
    if html:
        t1 = time.perf_counter()
        html_path = export_html(executed, executed.with_suffix(".html"), title=title)
        timings["html_export"] = time.perf_counter() - t1
    return NotebookRun(notebook=executed, html=html_path, timings=timings)


def execute_notebooks(
    jobs: Sequence[tuple[str | Path, Mapping[str, Any], str | None]],
    output_dir: str | Path,
    *,
    timeout: float | None = 600,
) -> list[NotebookRun]:
    """:func:`execute_notebook` for each ``(notebook, parameters, title)``, in job order, in one kernel.

    The kernel starts at once, in the background, and serves every notebook in turn (each with an
    empty namespace): the kernel start and the imports are paid once, not once a notebook. Each
    page's HTML export runs beside the next notebook's execution. When any fails, the error of the
    first failing job (in job order) is raised after all have finished.
    """
    from concurrent.futures import Future, ThreadPoolExecutor

    if not jobs:
        return []  # no kernel to start
    kernel = _Kernel(str(Path.cwd()))
    runs: list[NotebookRun | GoldenkitError] = []
    exports: list[tuple[NotebookRun, Future[Path]]] = []
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="goldenkit-export") as pool:
            pool.submit(_exporter)  # nbconvert's import and template compile (0.5 s), while the kernel starts
            for name, params, title in jobs:
                try:
                    run = execute_notebook(name, params, output_dir, html=False, timeout=timeout, kernel=kernel)
                except GoldenkitError as exc:
                    runs.append(exc)
                    continue
                runs.append(run)
                html = run.notebook.with_suffix(".html")
                exports.append((run, pool.submit(_timed_export, run, html, title)))
            for run, future in exports:
                run.html = future.result()
    finally:
        kernel.shutdown()
    for item in runs:
        if isinstance(item, GoldenkitError):
            raise item
    return [r for r in runs if isinstance(r, NotebookRun)]


def _timed_export(run: NotebookRun, html_path: Path, title: str | None) -> Path:
    """:func:`export_html` of an executed notebook, its seconds recorded in ``run.timings``."""
    t0 = time.perf_counter()
    page = export_html(run.notebook, html_path, title=title)
    run.timings["html_export"] = time.perf_counter() - t0
    return page


def run_notebook(
    name_or_path: str | Path,
    parameters: Mapping[str, Any],
    output_dir: str | Path,
    *,
    html: bool = True,
) -> Path:
    """Execute a notebook into ``output_dir``; return the HTML page (or the notebook when ``html=False``)."""
    result = execute_notebook(name_or_path, parameters, output_dir, html=html)
    return result.html if result.html is not None else result.notebook


__all__ = [
    "NOTEBOOK_NAMES",
    "NotebookRun",
    "execute_notebook",
    "execute_notebooks",
    "export_html",
    "notebook_path",
    "remote_references",
    "run_notebook",
]
