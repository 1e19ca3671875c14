"""How goldenkit shows figures to people, in one place: every renderer (the report, the pages, the
leaderboards, the reprs, the gate's lines, the command line, the demo) formats through here.

Figures: :func:`pct` (``87.5%``), :func:`signed_pct` (``+1.0 pp``), :func:`interval`, :func:`p_value`
(``0.5413``, ``3.0e-06``), :func:`number` (``0.8000``) and :func:`money` (``$0.0123``); a missing one
(None, NaN, pandas' NA) is :data:`MISSING` (``n/a``) in every one of them, in tables and in text.

>>> pct(0.875), pct(None), interval(0.8445, 0.9083), signed_pct(0.01), p_value(0.5413), p_value(3e-6)
('87.5%', 'n/a', '[84.5%, 90.8%]', '+1.0 pp', '0.5413', '3.0e-06')
>>> p_value(0.5413, significant=2), p_value(0.0391, significant=2)
('0.54', '0.039')
>>> money(12.345), money(0.0123), money(0.00001), number(0.8), number(float("nan"))
('$12.35', '$0.0123', 'under $0.0001', '0.8000', 'n/a')

:class:`HTMLBlock` is a ``str`` that Jupyter renders as HTML; :data:`STYLE` is
the stylesheet, carried once by a page (the site's shell) or a notebook (the output of
``goldenkit.report.setup_notebook()``), so a table looks the same in Jupyter and in the
exported page. Build an HTMLBlock only from escaped text.

:func:`table_html` shows a DataFrame to people: no numbered index column (a named
index is the first column), counts with thousands separators, measures with one
decimal, no ``NaN``/``<NA>`` (:data:`MISSING`), text left-aligned and numbers
right-aligned, and an empty table replaced by a sentence saying what would fill it.

>>> print(cell_text(1200), cell_text(float("nan")), cell_text(0.01234), cell_text(True), cell_text(["a", "b"]))
1,200 n/a 0.0123 yes a, b
>>> import pandas as pd
>>> page = table_html(pd.DataFrame({"ms": [700.25, 558.0]}, index=pd.Index(["a", "b"], name="slice")))
>>> page[page.index("<table"):]  # doctest: +NORMALIZE_WHITESPACE
'<table class="gk-table"><thead><tr><th>slice</th><th class="gk-num">ms</th></tr></thead><tbody><tr><td>a</td><td
class="gk-num">700.2</td></tr><tr><td>b</td><td class="gk-num">558.0</td></tr></tbody></table></div>'
>>> table_html(pd.DataFrame(), "No flaky row: every repeat agreed.")
'<p class="gk-empty">No flaky row: every repeat agreed.</p>'
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldenkit._registry import publish

if TYPE_CHECKING:
    import pandas as pd
    from jinja2 import Environment

#: goldenkit's one stylesheet (package data, read once), shown once by a notebook's setup cell or a page's shell, so
#: a piece looks the same in Jupyter and in the exported page (where notebook CSS would otherwise right-align cells).
STYLESHEET = Path(__file__).resolve().parent / "templates" / "goldenkit.css"
STYLE = f"<style>\n{STYLESHEET.read_text(encoding='utf-8')}</style>"


class HTMLBlock(str):
    """A piece of HTML that Jupyter displays rendered (and ``str`` everywhere else).

    Build it only from escaped text: every function here that returns one runs
    :func:`html.escape` over model output and dataset text.
    """

    def _repr_html_(self) -> str:
        return str(self)


# text that reads as a number (a count, a rate, an interval, a difference, a p-value): right-aligned
_NUMERIC_TEXT = re.compile(r"^[<>≤≥]?\s?[\[(]?[+\-−]?\d[\d,.]*(e[+\-]\d+)?(%| pp)?")
MISSING = "n/a"  # how every figure, cell and line shows a missing value


def _missing(value: Any) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value)


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and not isinstance(value, str | bytes) else value


def cell_text(value: Any, decimals: int | None = None) -> str:
    """One table cell as text for people: ``n/a`` for a missing value, ``1,200`` for a count, a measure
    with ``decimals`` (default: none when whole, else 1; 3 significant digits below 1), ``yes``/``no``,
    lists joined by commas."""
    if isinstance(value, list | tuple) or getattr(value, "ndim", 0) == 1:
        return ", ".join(cell_text(v) for v in list(value))
    if _missing(value):
        return MISSING
    value = _scalar(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if decimals is None:
            whole = value == int(value) and abs(value) < 1e15
            decimals = 0 if whole else (1 if abs(value) >= 1 else -1)
        return f"{value:.3g}" if decimals < 0 else f"{value:,.{decimals}f}"
    return str(value)


def _is_number(value: Any) -> bool:
    if isinstance(value, str):
        return bool(_NUMERIC_TEXT.match(value))
    return isinstance(_scalar(value), numbers.Number) and not isinstance(_scalar(value), bool)


def _decimals(column: list[Any]) -> int | None:
    """One number of decimals for a column of floats (so 558 and 700.3 read as 558.0 and 700.3)."""
    floats = [float(_scalar(v)) for v in column if isinstance(_scalar(v), float) and not _missing(v)]
    finite = [f for f in floats if not math.isinf(f)]
    if not finite or all(f == int(f) for f in finite):
        return 0 if finite else None
    return 1 if max(abs(f) for f in finite) >= 1 else -1


def table_html(table: pd.DataFrame | HTMLBlock, empty: str = "Nothing to show.", *, header: bool = True) -> HTMLBlock:
    """``table`` as an escaped HTML table for people (see the module doc), or the sentence ``empty``
    saying what would fill it. ``header=False`` leaves out the column names (a field/value table). An
    HTMLBlock (what a display shows instead of a table, e.g. for an invalid comparison) is returned as it is."""
    if isinstance(table, HTMLBlock):
        return table
    if table.empty:
        return HTMLBlock(f'<p class="gk-empty">{escape(empty)}</p>')
    import pandas as pd

    frame = table
    if not isinstance(frame.index, pd.RangeIndex) and (frame.index.name is not None or frame.index.dtype == object):
        frame = frame.reset_index().rename(columns={"index": ""})
    columns = [str(c) for c in frame.columns]
    values = [frame.iloc[:, j].tolist() for j in range(frame.shape[1])]
    numeric = [
        any(_is_number(v) for v in col) and all(_is_number(v) or _missing(v) or v in (MISSING, "") for v in col)
        for col in values
    ]
    decimals = [_decimals(col) for col in values]
    cells = [[cell_text(values[j][i], decimals[j]) for j in range(len(values))] for i in range(frame.shape[0])]
    shown = _table_macro()(columns, cells, {j for j, n in enumerate(numeric) if n}, cls="gk-table", header=header)
    return HTMLBlock(f'<div class="gk-table-wrap">{shown}</div>')  # styled by the page's one STYLE


def missing(value: Any) -> bool:
    """Whether ``value`` is a missing figure (None, NaN, pandas' NA or NaT), shown as :data:`MISSING`."""
    return _missing(_scalar(value))


def _real(x: Any) -> float | None:
    """``x`` as a float, or None when it is missing or not a number (so it is shown as :data:`MISSING`)."""
    if isinstance(x, str | bytes) or missing(x):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def pct(x: Any, digits: int = 1, *, unit: str = "%", signed: bool = False) -> str:
    """A share in percent: ``0.875 -> '87.5%'`` (``unit=''``: ``'87.5'``; ``signed``: ``'+87.5%'``);
    a missing value as :data:`MISSING`."""
    v = _real(x)
    return MISSING if v is None else f"{100 * v:{'+' if signed else ''}.{digits}f}{unit}"


def signed_pct(x: Any, digits: int = 1) -> str:
    """A difference in percentage points with its sign: ``0.01 -> '+1.0 pp'``."""
    return pct(x, digits, unit=" pp", signed=True)


def interval(low: Any, high: Any, digits: int = 1, *, signed: bool = False, unit: str | None = None) -> str:
    """``(0.8445, 0.9083) -> '[84.5%, 90.8%]'``; ``signed``: a difference's, ``'[-1.0 pp, +3.0 pp]'``
    (``unit`` replaces ``%`` / `` pp``); missing when either end is."""
    if _real(low) is None or _real(high) is None:
        return MISSING
    shown = unit if unit is not None else (" pp" if signed else "%")
    return f"[{pct(low, digits, unit=shown, signed=signed)}, {pct(high, digits, unit=shown, signed=signed)}]"


def p_value(p: Any, significant: int | None = None) -> str:
    """A p-value with four decimals, below 1e-4 in scientific notation: ``0.5413``, ``3.0e-06``;
    ``significant``: to that many significant digits, as a sentence reads it (``0.54``, ``0.039``)."""
    v = _real(p)
    if v is None:
        return MISSING
    if v < 1e-4:
        return f"{v:.1e}"
    return f"{v:.4f}" if significant is None else f"{v:.{significant}g}"


def number(x: Any, digits: int = 4) -> str:
    """A measure with ``digits`` decimals (a gate's figure and threshold: ``0.8000``)."""
    v = _real(x)
    return MISSING if v is None else f"{v:.{digits}f}"


def money(x: Any) -> str:
    """US dollars: ``$0.0123``, ``$12.34``; a sum too small to show in four decimals is ``under $0.0001``,
    never $0.0000."""
    v = _real(x)
    if v is None:
        return MISSING
    if 0 < v < 0.00005:
        return "under $0.0001"
    return f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


@functools.cache
def templates() -> Environment:
    """goldenkit's templates (goldenkit/templates/, each loaded once), autoescaped: a value a template shows is
    text, escaped as :func:`html.escape` escapes it (quotes too), unless it is markup a template built; a missing
    value (None, NaN, pandas' NA) shows as nothing. This module's formatters are its functions (``{{ pct(x) }}``)."""
    from jinja2 import Environment, FileSystemLoader
    from markupsafe import Markup

    def shown(value: Any) -> Any:
        if type(value) is str:  # most values: text (the checks below cost a 1,000-run index a tenth of a second)
            return Markup(escape(value))
        if hasattr(value, "__html__"):
            return value
        return Markup("" if missing(value) else escape(str(value)))

    env = Environment(
        loader=FileSystemLoader(STYLESHEET.parent),
        autoescape=True,
        auto_reload=False,
        keep_trailing_newline=True,
        finalize=shown,
        extensions=["jinja2.ext.do"],
    )
    formatters = (cell_text, interval, missing, money, number, p_value, pct, signed_pct)
    env.globals.update({f.__name__: f for f in formatters}, MISSING=MISSING)
    return env


def _table_macro() -> Any:
    """The one table renderer: the ``table`` macro of goldenkit/templates/gk_table.html.j2."""
    module: Any = templates().get_template("gk_table.html.j2").module  # a template's macros are its attributes
    return module.table


#: The columns of :func:`judge_figures_table`, in order.
JUDGE_FIGURES = ("N judged", "judge only", "prediction-powered", "n human", "hand-picked", "lambda", "ESS gained")


def judge_figures_table(table: pd.DataFrame, *, diff: bool = False) -> pd.DataFrame:
    """The judge-graded figures of :func:`goldenkit.results.judge_estimates` (``diff``: of
    :func:`goldenkit.results.judge_difference`) for people, one line per group: the judge-only figure
    and the prediction-powered one beside it (estimate and interval), the human labels used (``n human``)
    and those picked by hand (shown, never used), the rows the judge graded (``N judged``), lambda, the
    effective sample size the judge's verdicts gained over the labels alone, the method and why."""
    import pandas as pd

    form = signed_pct if diff else pct
    rate = "judge_diff" if diff else "judge_rate"
    lines = []
    for key, r in table.iterrows():
        ppi = r["method"] != "judge only"
        lines.append(
            {
                "": str(key),
                "N judged": int(r["n_judged"]),
                "judge only": f"{form(r[rate])} {interval(r['judge_ci_low'], r['judge_ci_high'], signed=diff)}",
                "prediction-powered": f"{form(r['estimate'])} {interval(r['ci_low'], r['ci_high'], signed=diff)}"
                if ppi
                else MISSING,
                "n human": int(r["n_human"]),
                "hand-picked": int(r["n_hand"]),
                "lambda": f"{r['lam']:.2f}" if ppi else MISSING,
                "ESS gained": f"{r['ess_gain']:+.1f}" if ppi else MISSING,
                "method": str(r["method"]),
                "why": str(r["reason"]),
            }
        )
    return pd.DataFrame(lines).set_index("")


def judge_figures_line(table: pd.DataFrame, key: str, *, diff: bool = False) -> str:
    """One group of :func:`judge_figures_table` in one line of text (``judge only 72.5% [..];
    prediction-powered 70.1% [..] (n human 30, N judged 200, lambda 0.81, ESS gained +25.3)``)."""
    f = judge_figures_table(table.loc[[key]], diff=diff).iloc[0]
    if f["prediction-powered"] == MISSING:
        return f"judge only {f['judge only']} (N judged {f['N judged']}; {f['why']})"
    counts = f"n human {f['n human']}, N judged {f['N judged']}, lambda {f['lambda']}, ESS gained {f['ESS gained']}"
    hand = f", {f['hand-picked']} hand-picked not used" if f["hand-picked"] else ""
    return f"judge only {f['judge only']}; prediction-powered {f['prediction-powered']} ({counts}{hand})"


__all__ = [
    "JUDGE_FIGURES",
    "MISSING",
    "STYLE",
    "STYLESHEET",
    "HTMLBlock",
    "cell_text",
    "interval",
    "judge_figures_line",
    "judge_figures_table",
    "missing",
    "money",
    "number",
    "p_value",
    "pct",
    "signed_pct",
    "table_html",
    "templates",
]

publish(globals(), "goldenkit.report")
