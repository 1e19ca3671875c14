"""The run report's and the comparison's pages, declared once: their parameters, their sections (heading and
prose) and the report function each step calls.

``scripts/make_notebooks.py`` writes ``report.ipynb`` and ``compare.ipynb`` from :data:`LAYOUTS` (a markdown
cell per :class:`Text`, a code cell per :class:`Step` whose source is its calls as Python text), and
:func:`goldenkit.report.run_page` / :func:`goldenkit.report.compare_page` make the same page by calling the same
functions in the same order (no kernel, no notebook). A step is data, not code: a call of a function reached
from the page's scope (an import, a parameter or a name an earlier step bound) with arguments that are names
of that scope or literals.

>>> step = Step(show=call("report.table_html", call("report.run_key_table", Name("r")), header=False))
>>> print(step.source())
report.table_html(report.run_key_table(r), header=False)
>>> step.run({"report": __import__("types").SimpleNamespace(table_html=lambda t, header: f"<{t}>",
...                                                        run_key_table=str.upper), "r": "key"})
'<KEY>'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from goldenkit._registry import publish

#: the longest line a step's source keeps on one line (longer calls put each argument on a line of its own)
LINE = 110


@dataclass(frozen=True)
class Name:
    """A name of the page's scope: a parameter, an imported name, or what an earlier step bound."""

    name: str


@dataclass(frozen=True)
class Call:
    """A call of the function ``func`` (a dotted path from a name of the scope: ``report.table_html``,
    ``r.outcomes``) with positional and keyword arguments, each a :class:`Name`, a :class:`Call` or a literal."""

    func: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()


def call(func: str, *args: Any, **kwargs: Any) -> Call:
    """``Call(func, args, kwargs)`` written as the call reads."""
    return Call(func, args, tuple(kwargs.items()))


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # double quotes, as the project's format writes them
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    raise TypeError(f"not a literal of a page step: {value!r}")


def source(expr: Any, indent: str = "", lead: int = 0) -> str:
    """``expr`` as Python text (``lead``: characters before it on its line); a call longer than :data:`LINE`
    puts each argument on a line of its own."""
    if isinstance(expr, Name):
        return expr.name
    if not isinstance(expr, Call):
        return _literal(expr)
    parts = [source(a) for a in expr.args] + [f"{k}={source(v)}" for k, v in expr.kwargs]
    flat = f"{expr.func}({', '.join(parts)})"
    if len(indent) + lead + len(flat) <= LINE or not parts:
        return flat
    inner = indent + "    "
    parts = [_broken(a, inner) for a in expr.args] + [f"{k}={source(v, inner)}" for k, v in expr.kwargs]
    return f"{expr.func}(\n" + "".join(f"{inner}{p},\n" for p in parts) + f"{indent})"


def _broken(expr: Any, indent: str) -> str:
    """An argument on a line of its own: a text too long for the line is split into adjacent literals."""
    if not isinstance(expr, str) or len(indent) + len(_literal(expr)) <= LINE:
        return source(expr, indent)
    pieces, line = [], ""
    for word in expr.split(" "):
        if line and len(indent) + len(line) + len(word) + 3 > LINE:
            pieces.append(line)
            line = ""
        line += word + " "
    pieces.append(line[:-1])
    return f"\n{indent}".join(_literal(p) for p in pieces)


def evaluate(expr: Any, scope: dict[str, Any]) -> Any:
    """The value of ``expr`` in ``scope``: a name's value, a call's result, a literal itself."""
    if isinstance(expr, Name):
        return scope[expr.name]
    if not isinstance(expr, Call):
        return expr
    head, *path = expr.func.split(".")
    func = scope[head]
    for attribute in path:
        func = getattr(func, attribute)
    return func(*(evaluate(a, scope) for a in expr.args), **{k: evaluate(v, scope) for k, v in expr.kwargs})


@dataclass(frozen=True)
class Step:
    """One code cell: names bound in order (``bind``: targets and the call whose value they take; several
    targets unpack it), then the value shown (``show``, or nothing); ``comment`` ends the shown line."""

    bind: tuple[tuple[tuple[str, ...], Any], ...] = ()
    show: Any = None
    comment: str = ""

    def source(self) -> str:
        lines = [f"{', '.join(t)} = {source(e, lead=len(', '.join(t)) + 3)}" for t, e in self.bind]
        if self.show is not None:
            lines.append(source(self.show) + (f"  # {self.comment}" if self.comment else ""))
        return "\n".join(lines)

    def run(self, scope: dict[str, Any]) -> Any:
        """Bind this step's names in ``scope``; the value it shows (None when it shows nothing)."""
        for targets, expr in self.bind:
            value = evaluate(expr, scope)
            if len(targets) == 1:
                scope[targets[0]] = value
            else:
                scope.update(zip(targets, value, strict=True))
        return None if self.show is None else evaluate(self.show, scope)


def let(target: str, expr: Any) -> tuple[tuple[str, ...], Any]:
    """A binding of :class:`Step`: ``"a, b"`` unpacks the value into two names."""
    return tuple(t.strip() for t in target.split(",")), expr


@dataclass(frozen=True)
class Text:
    """A markdown cell: a heading (``level`` 1 for the page's title) and a paragraph under it, where
    ```code``` is code."""

    heading: str
    prose: str = ""
    level: int = 2

    def source(self) -> str:
        return f"{'#' * self.level} {self.heading}" + (f"\n{self.prose}" if self.prose else "")


@dataclass(frozen=True)
class Param:
    """A parameter of the page: its name, its default (a literal) and what it is (the cell's comment)."""

    name: str
    default: Any
    help: str


@dataclass(frozen=True)
class Layout:
    """A page: its name (the notebook's), its title, its parameters, its imports (module, names) and its body."""

    name: str
    title: Text
    params: tuple[Param, ...]
    imports: tuple[tuple[str, tuple[str, ...]], ...]
    body: tuple[Text | Step, ...] = field(default=())

    def cells(self) -> list[tuple[str, str]]:
        """The notebook's cells as ``(kind, source)``, kind ``md``, ``params`` or ``code``: the title, the
        ``parameters`` cell (one literal a line, its comment after it), the imports and the notebook's display
        settings (``report.setup_notebook()``), then the body."""
        params = "\n".join(f"{p.name} = {_literal(p.default)}  # {p.help}" for p in self.params)
        imports = "\n".join(f"from {module} import {', '.join(names)}" for module, names in self.imports)
        return [
            ("md", self.title.source()),
            ("params", params),
            ("code", f"{imports}\n\nreport.setup_notebook()"),
            *(("md" if isinstance(part, Text) else "code", part.source()) for part in self.body),
        ]


_ID = Name("r")
_OUT = Name("outcomes")
_RULE = Name("rule")
_CLUSTERS = Name("clusters")

REPORT = Layout(
    "report",
    Text("Run report", "One run: how good it is, whether it is evidence, each slice, and what went wrong.", 1),
    (
        Param("run", "results/latest", "run folder, or a run id under results_dir"),
        Param("results_dir", "results", "where run ids are looked up"),
        Param("rule", "majority", "how repeats collapse to one verdict per row: majority | all | any | at_least:K"),
        Param("top_reasons", 10, "failure clusters shown"),
        Param("config", None, "goldenkit.toml with [metrics] weights (None: the run's own, else beside its dataset)"),
    ),
    (("goldenkit", ("report", "stats", "why")), ("goldenkit.results", ("read_run",))),
    (
        Step(
            (
                let("r", call("read_run", Name("run"), Name("results_dir"))),
                let("outcomes", call("r.outcomes")),
                let("clusters", call("why", _ID, rule=_RULE)),  # the failing rows by finding, read once
            ),
            call("report.quality_banner", _ID, _OUT, rule=_RULE, config=Name("config"), clusters=_CLUSTERS),
        ),
        Step(show=call("report.validity_banner", _ID)),
        Text("Run key"),
        Step(show=call("report.table_html", call("report.run_key_table", _ID), header=False)),
        Text(
            "Pass rate per slice",
            "One verdict per row after collapsing repeats; 95% Wilson intervals. "
            "ERROR and SKIPPED rows are outside the rate.",
        ),
        Step(
            (let("table", call("stats.slice_table", _OUT, rule=_RULE)),),
            call(
                "report.table_html",
                call("report.format_slice_table", Name("table")),
                "The run has no outcome: no slice to show.",
            ),
        ),
        Step(show=call("report.pass_rate_figure", Name("table"))),
        Step(show=call("report.judge_figures_html", _ID, rule=_RULE)),
        Text(
            "Why rows fail",
            "The failing rows (repeats collapsed) grouped by what the graders found: one line per finding, "
            "however many different values (order ids, amounts) it was found with.",
        ),
        Step(
            show=call(
                "report.table_html",
                call("report.failure_clusters", _ID, rule=_RULE, top=Name("top_reasons"), clusters=_CLUSTERS),
                "No failing row: every graded row passed, so there is no failure to group.",
            )
        ),
        Text("ERROR and SKIPPED outcomes", "Nothing was graded for these; they are not failures."),
        Step(
            show=call(
                "report.table_html",
                call("report.errors_and_skips", _OUT),
                "No ERROR or SKIPPED outcome: every attempt was answered and graded. Timeouts, refused or failed "
                "calls and rows no grader applies to would be listed here, by kind and reason.",
            )
        ),
        Text("Flaky rows", "Rows that passed some but not all of their graded repeats."),
        Step(
            show=call(
                "report.table_html", call("report.flaky_table", _OUT, _RULE), call("report.flaky_note", _OUT, _RULE)
            )
        ),
        Text(
            "What the run cost",
            "Calls, tokens (the judge's and the simulated user's apart), latency over answered outcomes (ERROR "
            "excluded), per slice and per passing row; money only from the provider's price or the run's "
            "`[pricing]`, labelled, else n/a.",
        ),
        Step(
            show=call(
                "report.table_html", call("report.latency_summary", _OUT, run=_ID), "No outcome: nothing to count."
            )
        ),
        Text(
            "Red rows",
            "Expected failures (tag `red`), apart from the rest: negative-case pass rate and hallucination rate, "
            "95% intervals clustered by row.",
        ),
        Step(show=call("report.red_rows_block", _OUT)),
    ),
)

_CMP = Name("comparison")
_BASE = Name("base_run")
_CAND = Name("cand_run")
_WHERE = (Name("results_dir"), Name("baselines_dir"))
_PAIRED = {"rule": _RULE, "alpha": Name("alpha"), "by": Name("by")}

COMPARE = Layout(
    "compare",
    Text("Paired comparison", "Baseline vs candidate, row by row: what broke, what was fixed, and is it noise.", 1),
    (
        Param("base", "baselines/main.json", "baseline: run folder, run id, or baseline name / .json"),
        Param("cand", "results/latest", "candidate: run folder or run id"),
        Param("results_dir", "results", "where run ids are looked up"),
        Param("baselines_dir", "baselines", "where baseline names are looked up"),
        Param("rule", "majority", "repeat collapse rule: majority | all | any | at_least:K"),
        Param("alpha", 0.05, "significance level of the comparison and the regression rules"),
        Param("by", "slice", "the table's lines: slice, tags (a row in each of its tags) or another per-row column"),
        Param("config", None, "goldenkit.toml with the [gate] policy (None: ./goldenkit.toml, else defaults)"),
        Param("flip_limit", 200, "flipped rows shown side by side"),
    ),
    (("goldenkit", ("report",)), ("goldenkit.baselines", ("resolve_run_or_baseline",))),
    (
        Step(
            (
                let("base_run", call("resolve_run_or_baseline", Name("base"), *_WHERE)),
                let("cand_run", call("resolve_run_or_baseline", Name("cand"), *_WHERE)),
                let("comparison, differences", call("report.try_compare", _BASE, _CAND, **_PAIRED)),
            ),
        ),
        Step(
            (
                let(
                    "decision",
                    call("report.gate_decision", _CAND, _CMP, Name("differences"), Name("config"), baseline=_BASE),
                ),
            ),
            call("report.gate_banner", Name("decision")),
        ),
        Text("Comparability", "What the two runs share, or each reason they cannot be compared."),
        Step(show=call("report.comparability_banner", _CMP, Name("differences"))),
        Text("Gate rules", "Every rule the gate checked, with the evidence each one saw."),
        Step(show=call("report.table_html", call("report.gate_table", Name("decision")))),
        Text(
            "Per slice and overall",
            "One line per slice (or per tag, or per value of the column `by` names). b = broke (PASS → FAIL), "
            "c = fixed (FAIL → PASS); exact McNemar p; Holm-adjusted across the lines; a significant regression "
            "or gain is marked, in the table and in red or green in the plot; paired difference (candidate − "
            "base) with Newcombe's interval.",
        ),
        Step(show=call("report.table_html", call("report.format_compare_table", _CMP))),
        Step(show=call("report.forest_figure", _CMP)),
        Text(
            "What the change costs",
            "The paired change per row in the candidate's tokens (in + out) and latency (candidate − base, each "
            "row's mean over its answered repeats), with Student's paired t 95% interval.",
        ),
        Step(show=call("report.table_html", call("report.usage_change_table", _BASE, _CAND))),
        Step(show=call("report.judge_figures_html", _CAND, _BASE, **_PAIRED), comment="graded by the same judge"),
        Step(show=call("report.clusters_html", _CMP)),
        Text(
            "Sequential run",
            "When the candidate ran with `--sequential`: the confidence sequence of the mean drop (base − "
            "candidate) and the regression e-value against the rows run, with the margin, the thresholds and the "
            "row where the run stopped.",
        ),
        Step(show=call("report.sequence_figure", _CMP)),
        Text("Flip list", "NEW_FAILURE first; both responses and grader reasons side by side."),
        Step(show=call("report.flip_list_html", _CMP, limit=Name("flip_limit"))),
    ),
)

#: the pages declared here, by their notebook's name
LAYOUTS = {layout.name: layout for layout in (REPORT, COMPARE)}

__all__ = ["LAYOUTS", "Call", "Layout", "Name", "Param", "Step", "Text", "call", "evaluate", "let", "source"]

publish(globals())
