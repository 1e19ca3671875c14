"""The pieces every notebook's display shares: number formatting, banners, figures and notebook setup.

Tables are DataFrames (they render escaped: ``DataFrame.to_html`` escapes by
default). Where a layout needs real HTML (the side-by-side flip list, the audit
sample, banners) it is built with :func:`html.escape` on every piece of model
output or dataset text and returned as :class:`HTMLBlock`, a ``str`` that
Jupyter renders as HTML (defined in :mod:`goldenkit.display`, which the audit shares).

>>> pct(0.875), interval(0.8445, 0.9083), signed_pct(0.01), p_value(3e-6)
('87.5%', '[84.5%, 90.8%]', '+1.0 pp', '3.00e-06')
>>> banner("VALID", ok=True).endswith('<div class="gk-banner gk-banner-ok">VALID</div>')
True
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import pandas as pd

from goldenkit import stats
from goldenkit.display import STYLE, HTMLBlock

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OVERALL = stats.OVERALL


# ---------------------------------------------------------------- notebook setup


def figure_png(fig: Figure) -> bytes:
    """A matplotlib Figure as PNG bytes (what Jupyter and the HTML report show)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def setup_notebook() -> None:
    """Display settings for goldenkit's notebooks: Figures render as PNG, long tables are not cut.

    Figures built here do not use pyplot, so nothing registers their display
    unless this does; without an IPython kernel it only sets pandas options.
    """
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
    pd.set_option("display.max_colwidth", 200)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return
    ip = get_ipython()
    if ip is None:
        return
    from matplotlib.figure import Figure

    ip.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


# ---------------------------------------------------------------- formatting helpers


def pct(x: float | None, digits: int = 1) -> str:
    """``0.875 -> '87.5%'``; missing values (None/NaN) as an en dash."""
    if x is None or pd.isna(x):
        return "–"
    return f"{100 * float(x):.{digits}f}%"


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """``(0.8445, 0.9083) -> '[84.5%, 90.8%]'``."""
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "–"
    return f"[{pct(low, digits)}, {pct(high, digits)}]"


def signed_pct(x: float | None, digits: int = 1) -> str:
    """A difference in percentage points with its sign: ``0.01 -> '+1.0 pp'``."""
    if x is None or pd.isna(x):
        return "–"
    return f"{100 * float(x):+.{digits}f} pp"


def p_value(p: float | None) -> str:
    """Exact-enough p-value text: 4 significant digits, ``<1e-4`` in scientific notation."""
    if p is None or pd.isna(p):
        return "–"
    p = float(p)
    if p >= 1e-4:
        return f"{p:.4g}"
    return f"{p:.2e}"


def banner(text: str, *, ok: bool) -> HTMLBlock:
    """``text`` (escaped) as a green (``ok``) or red banner carrying the stylesheet."""
    cls = "gk-banner gk-banner-ok" if ok else "gk-banner gk-banner-bad"
    return HTMLBlock(f'{STYLE}<div class="{cls}">{escape(text)}</div>')


def shown_or_note(table: pd.DataFrame, note: str) -> pd.DataFrame | HTMLBlock:
    """The table, or a one-line note when it is empty (an empty grid reads as a bug)."""
    return HTMLBlock(f"<p>{escape(note)}</p>") if table.empty else table


__all__ = [
    "OVERALL",
    "STYLE",
    "HTMLBlock",
    "banner",
    "figure_png",
    "interval",
    "p_value",
    "pct",
    "setup_notebook",
    "shown_or_note",
    "signed_pct",
]
