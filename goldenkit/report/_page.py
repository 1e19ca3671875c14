"""The run report and the comparison as one HTML piece each, without a notebook: what ``goldenkit pages`` shows.

:func:`run_page` and :func:`compare_page` follow the page's declaration (:data:`goldenkit.report.LAYOUTS`,
from which ``report.ipynb`` and ``compare.ipynb`` are written): they call the same report functions, in the
same order, with the same parameters, and put each result in the page as the notebook shows it: an HTML piece
as it is (an interval figure's inline SVG too), a matplotlib figure as a PNG ``data:`` image
(:func:`goldenkit.report.figure_png`), a table through
:func:`goldenkit.report.table_html`. The page is one autoescaped Jinja2 template
(``goldenkit/templates/gk_report.html.j2``): headings and prose are text, the pieces markup the report
functions built from escaped text. A step that raises is one goldenkit error naming the page and the step,
of the class it raised when that is goldenkit's (so its meaning and exit code stay).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from goldenkit._display import HTMLBlock, table_html, templates
from goldenkit._registry import publish
from goldenkit.errors import GoldenkitError, InputError
from goldenkit.report._html import _data_image, figure_png
from goldenkit.report._layout import COMPARE, REPORT, Layout, Step, Text

if TYPE_CHECKING:
    from markupsafe import Markup


def _scope(layout: Layout, parameters: Mapping[str, Any], replaced: Mapping[str, Any]) -> dict[str, Any]:
    """The page's names before its first step: its imports (an imported name in ``replaced`` replaced by its value
    there), its parameters' defaults, then ``parameters``."""
    known = [p.name for p in layout.params]
    unknown = sorted(set(parameters) - set(known))
    if unknown:
        raise InputError(f"{layout.name} page: unknown parameter {unknown[0]!r} (known: {', '.join(known)})")
    scope: dict[str, Any] = {}
    for module, names in layout.imports:
        loaded = importlib.import_module(module)
        for name in names:
            found = getattr(loaded, name, None)
            scope[name] = found if found is not None else importlib.import_module(f"{module}.{name}")
    foreign = sorted(set(replaced) - set(scope))
    if foreign:
        raise InputError(f"{layout.name} page: {foreign[0]!r} is not a name the page imports")
    scope.update(replaced)
    scope.update({p.name: p.default for p in layout.params})
    scope.update(parameters)
    return scope


def _figure(fig: Any) -> str:
    """A matplotlib Figure as an ``<img>`` of its PNG (alt: its first title); the figure is not kept."""
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return _data_image(figure_png(fig), "image/png", titles[0] if titles else "figure")


def shown_html(value: Any) -> str:
    """What a step's value shows as HTML: a piece as it is, a figure as a PNG image, a table through
    :func:`goldenkit.report.table_html`, nothing for None, any other value as escaped text."""
    import pandas as pd

    if value is None:
        return ""
    if isinstance(value, pd.DataFrame):
        return str(table_html(value))
    if hasattr(value, "savefig"):
        return _figure(value)
    rich = getattr(value, "_repr_html_", None)
    if callable(rich):
        return str(rich() or "")
    from html import escape

    return f"<pre>{escape(str(value))}</pre>"


def _prose(text: str) -> Markup:
    """A paragraph of a :class:`Text`: escaped, with ```code``` as ``<code>``."""
    from markupsafe import Markup, escape

    parts = text.split("`")
    return Markup("").join(escape(p) if i % 2 == 0 else Markup("<code>%s</code>") % p for i, p in enumerate(parts))


def _step_error(layout: Layout, number: int, step: Step, exc: Exception) -> GoldenkitError:
    code = next((line.strip() for line in step.source().splitlines() if line.strip()), "")
    where = f"step {number} ({code[:60]}{'...' if len(code) > 60 else ''})"
    lines = str(exc).strip().splitlines()
    message = f"{layout.name} page: {where} raised {type(exc).__name__}: {lines[0] if lines else ''}"
    kind = type(exc) if isinstance(exc, GoldenkitError) else GoldenkitError
    try:
        return kind(message)
    except TypeError:  # a goldenkit error made with other arguments: its meaning as a plain one
        return GoldenkitError(message)


def layout_page(layout: Layout, parameters: Mapping[str, Any], names: Mapping[str, Any] | None = None) -> HTMLBlock:
    """The page ``layout`` declares, with ``parameters`` over its defaults (see the module doc); ``names``: imported
    functions replaced by others that give the same values (a site's build reads a baseline its pages share once)."""
    from markupsafe import Markup

    scope = _scope(layout, parameters, names or {})
    parts: list[dict[str, Any]] = [{"heading": layout.title.heading, "level": 1, "prose": _prose(layout.title.prose)}]
    number = 0
    for part in layout.body:
        if isinstance(part, Text):
            parts.append({"heading": part.heading, "level": part.level, "prose": _prose(part.prose)})
            continue
        number += 1
        try:
            value = part.run(scope)
        except Exception as exc:  # a step that raises: one error naming the page and the step
            raise _step_error(layout, number, part, exc) from exc
        shown = shown_html(value)
        if shown:
            parts.append({"html": Markup(shown)})
    return HTMLBlock(templates().get_template("gk_report.html.j2").render(parts=parts))


def run_page(run: Any, **parameters: Any) -> HTMLBlock:
    """The run report of ``run`` (a run folder, a run id under ``results_dir``, or a Run) as ``report.ipynb``
    shows it; ``parameters`` are the notebook's (``results_dir``, ``rule``, ``top_reasons``, ``config``)."""
    return layout_page(REPORT, {**parameters, "run": run})


def compare_page(base: Any, cand: Any, **parameters: Any) -> HTMLBlock:
    """The paired comparison of ``cand`` against ``base`` (each a run folder, run id, baseline name or a Run) as
    ``compare.ipynb`` shows it; ``parameters`` are the notebook's (``results_dir``, ``baselines_dir``, ``rule``,
    ``alpha``, ``by``, ``config``, ``flip_limit``)."""
    return layout_page(COMPARE, {**parameters, "base": base, "cand": cand})


__all__ = ["compare_page", "layout_page", "run_page", "shown_html"]

publish(globals())
