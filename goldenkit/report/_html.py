"""The pieces every notebook's display shares: banners, figures and notebook setup; figures are
formatted by :mod:`goldenkit._display` (re-exported here).

Tables are DataFrames (they render escaped: ``DataFrame.to_html`` escapes by
default). Where a layout needs real HTML (the side-by-side flip list, the audit
sample, banners) it is built with :func:`html.escape` on every piece of model
output or dataset text and returned as :class:`HTMLBlock`, a ``str`` that
Jupyter renders as HTML (defined in :mod:`goldenkit._display`, which the audit shares).

Tables are shown to people through :func:`goldenkit._display.table_html` (re-exported here):
no numbered index column, counts and measures formatted, no ``NaN``/``<NA>``, text
left-aligned, and an empty table replaced by a sentence saying what would fill it. The
``format_*`` functions keep returning DataFrames (the data, for code); the notebooks show
them through it.

>>> pct(0.875), interval(0.8445, 0.9083), signed_pct(0.01), p_value(0.5413), p_value(3e-6)
('87.5%', '[84.5%, 90.8%]', '+1.0 pp', '0.5413', '3.0e-06')
>>> banner("VALID", ok=True).endswith('<div class="gk-banner gk-banner-ok">VALID</div>')
True
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

import pandas as pd

from goldenkit import stats
from goldenkit._display import MISSING, STYLE, HTMLBlock, cell_text, interval, p_value, pct, signed_pct, table_html
from goldenkit._registry import publish

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OVERALL = stats.OVERALL


# ---------------------------------------------------------------- notebook setup


def figure_png(fig: Figure) -> bytes:
    """A matplotlib Figure as PNG bytes (what Jupyter and the HTML report show of the sequential run's, the
    judge's and the coverage's figures; the pass rate and forest figures are inline SVG,
    :class:`goldenkit.report.IntervalFigure`).

    Those figures lay themselves out (``layout="constrained"``): no ``bbox_inches="tight"``, a second layout
    pass that cost a quarter more CPU.
    """
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _data_image(data: bytes, mime: str, alt: str) -> str:
    """An ``<img>`` of ``data`` (a ``data:`` URI of type ``mime``, base64) with ``alt`` (escaped) as its text."""
    encoded = base64.b64encode(data).decode("ascii")
    return f'<img alt="{escape(alt, quote=True)}" src="data:{mime};base64,{encoded}">'


def setup_notebook() -> HTMLBlock:
    """Display settings for goldenkit's notebooks: Figures render as PNG, long tables are not cut; returns the
    stylesheet (:data:`STYLE`), which the cell that calls it displays once for the whole notebook (the tables,
    banners and lists the report functions return carry none of their own).

    Figures built here do not use pyplot, so nothing registers their display
    unless this does; without an IPython kernel it only sets pandas options.
    """
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
    pd.set_option("display.max_colwidth", 200)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return HTMLBlock(STYLE)
    ip = get_ipython()
    if ip is not None:
        from matplotlib.figure import Figure

        ip.display_formatter.formatters["image/png"].for_type(Figure, figure_png)
    return HTMLBlock(STYLE)


#: banner tones: ok (green), bad (red), warn (amber: not evidence), info (neutral: a statement, no verdict)
TONES = ("ok", "bad", "warn", "info")


def banner(text: str, *, ok: bool = False, tone: str | None = None, items: Sequence[str] = ()) -> HTMLBlock:
    """``text`` (escaped) as a banner (styled by the notebook's or the page's one stylesheet): green when ``ok``,
    else red, unless ``tone`` (one of :data:`TONES`) says otherwise; ``items`` (escaped) are listed under it."""
    tone = tone if tone in TONES else ("ok" if ok else "bad")
    listed = "".join(f"<li>{escape(str(i))}</li>" for i in items)
    return HTMLBlock(
        f'<div class="gk-banner gk-banner-{tone}">{escape(text)}</div>'
        + (f'<ul class="gk-banner-items">{listed}</ul>' if listed else "")
    )


def shown_or_note(table: pd.DataFrame, note: str) -> pd.DataFrame | HTMLBlock:
    """The table, or a one-line note when it is empty (an empty grid reads as a bug)."""
    return HTMLBlock(f"<p>{escape(note)}</p>") if table.empty else table


__all__ = [
    "MISSING",
    "OVERALL",
    "STYLE",
    "HTMLBlock",
    "TONES",
    "banner",
    "cell_text",
    "figure_png",
    "interval",
    "p_value",
    "pct",
    "setup_notebook",
    "shown_or_note",
    "signed_pct",
    "table_html",
]

publish(globals())
