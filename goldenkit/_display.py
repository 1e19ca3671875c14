"""HTML pieces shared by everything that displays evidence (the report and the audit).

:class:`HTMLBlock` is a ``str`` that Jupyter renders as HTML; :data:`STYLE` is
the stylesheet each piece carries, so it looks the same in Jupyter and in the
exported page. Build an HTMLBlock only from escaped text.

:func:`table_html` shows a DataFrame to people: no numbered index column (a named
index is the first column), counts with thousands separators, measures with one
decimal, no ``NaN``/``<NA>`` (an en dash), text left-aligned and numbers
right-aligned, and an empty table replaced by a sentence saying what would fill it.

>>> print(cell_text(1200), cell_text(float("nan")), cell_text(0.01234), cell_text(True), cell_text(["a", "b"]))
1,200 – 0.0123 yes a, b
>>> import pandas as pd
>>> page = table_html(pd.DataFrame({"ms": [700.25, 558.0]}, index=pd.Index(["a", "b"], name="slice")))
>>> page[page.index("<table"):]  # doctest: +NORMALIZE_WHITESPACE
'<table class="gk-table"><thead><tr><th>slice</th><th class="gk-num">ms</th></tr></thead><tbody><tr><td>a</td><td
class="gk-num">700.2</td></tr><tr><td>b</td><td class="gk-num">558.0</td></tr></tbody></table></div>'
>>> table_html(pd.DataFrame(), "No flaky row: every repeat agreed.")
'<p class="gk-empty">No flaky row: every repeat agreed.</p>'
"""

from __future__ import annotations

import math
import numbers
import re
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# Styles of the HTML pieces goldenkit builds; each piece carries them, so they look the same in
# Jupyter and in the exported page (where the notebook CSS would otherwise right-align cells).
STYLE = """<style>
.gk-side-by-side { border-collapse: collapse; width: 100%; table-layout: fixed; }
.gk-side-by-side th, .gk-side-by-side td { border: 1px solid #ccc !important; padding: 4px 6px !important;
  vertical-align: top !important; text-align: left !important; }
.gk-side-by-side pre { white-space: pre-wrap !important; word-break: break-word; margin: 2px 0 !important;
  font-size: 12px; background: transparent !important; text-align: left !important; }
.gk-status-NEW_FAILURE td { background: #fde2e1 !important; }
.gk-status-RECOVERED td { background: #e3f6e5 !important; }
.gk-status-NEW_ERROR td, .gk-status-ERROR_CLEARED td { background: #fff3cd !important; }
.gk-banner { padding: 6px 10px; border-radius: 4px; font-weight: bold; }
.gk-banner-ok { background: #e3f6e5; border-left: 6px solid #2e7d32; }
.gk-banner-bad { background: #fde2e1; border-left: 6px solid #c62828; }
.gk-banner-warn { background: #fff3cd; border-left: 6px solid #b26a00; }
.gk-banner-info { background: #eef1f5; border-left: 6px solid #7a8699; font-weight: normal; }
.gk-banner-items { margin: 4px 0 10px 0; }
.gk-card { margin: 0 0 14px 0; }
.gk-table-wrap { max-width: 100%; overflow-x: auto; margin: 4px 0 12px 0; }
.gk-table { border-collapse: collapse; font-size: 13px; }
.gk-table th, .gk-table td { border: 1px solid #d8d8d8 !important; padding: 3px 6px !important;
  text-align: left !important; vertical-align: top !important; }
.gk-table th { background: #f4f5f7 !important; font-weight: 600; }
.gk-table .gk-num { text-align: right !important; font-variant-numeric: tabular-nums; }
.gk-table tbody tr:nth-child(even) { background: #fafafa; }
.gk-empty { color: #555; font-style: italic; }
</style>"""


class HTMLBlock(str):
    """A piece of HTML that Jupyter displays rendered (and ``str`` everywhere else).

    Build it only from escaped text: every function here that returns one runs
    :func:`html.escape` over model output and dataset text.
    """

    def _repr_html_(self) -> str:
        return str(self)


# text that reads as a number (a count, a rate, an interval, a difference, a p-value): right-aligned
_NUMERIC_TEXT = re.compile(r"^[<>≤≥]?\s?[\[(]?[+\-−]?\d[\d,.]*(e[+\-]\d+)?(%| pp)?")
MISSING = "–"  # what a table shows for a missing value


def _missing(value: Any) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value)


def _scalar(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and not isinstance(value, str | bytes) else value


def cell_text(value: Any, decimals: int | None = None) -> str:
    """One table cell as text for people: an en dash for a missing value, ``1,200`` for a count, a measure
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
    cls = [' class="gk-num"' if n else "" for n in numeric]
    head = ""
    if header:
        names = "".join(f"<th{c}>{escape(n)}</th>" for n, c in zip(columns, cls, strict=True))
        head = f"<thead><tr>{names}</tr></thead>"
    rows = (
        "<tr>"
        + "".join(f"<td{cls[j]}>{escape(cell_text(values[j][i], decimals[j]))}</td>" for j in range(len(cls)))
        + "</tr>"
        for i in range(frame.shape[0])
    )
    body = f'<table class="gk-table">{head}<tbody>{"".join(rows)}</tbody></table>'
    return HTMLBlock(f'{STYLE}<div class="gk-table-wrap">{body}</div>')


def pct(x: float | None, digits: int = 1) -> str:
    """``0.875 -> '87.5%'``; missing values (None/NaN) as an en dash."""
    return MISSING if x is None or _missing(x) else f"{100 * float(x):.{digits}f}%"


def signed_pct(x: float | None, digits: int = 1) -> str:
    """A difference in percentage points with its sign: ``0.01 -> '+1.0 pp'``."""
    return MISSING if x is None or _missing(x) else f"{100 * float(x):+.{digits}f} pp"


def interval(low: float | None, high: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """``(0.8445, 0.9083) -> '[84.5%, 90.8%]'``; ``signed``: a difference's, ``'[-1.0 pp, +3.0 pp]'``."""
    if _missing(low) or _missing(high):
        return MISSING
    form = signed_pct if signed else pct
    return f"[{form(low, digits)}, {form(high, digits)}]"


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
    "HTMLBlock",
    "cell_text",
    "interval",
    "judge_figures_line",
    "judge_figures_table",
    "pct",
    "signed_pct",
    "table_html",
]
