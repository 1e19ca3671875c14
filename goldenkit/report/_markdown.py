"""Markdown for a pull request: the gate's decision and the comparison, as a CI job summary shows them.

:func:`gate_markdown` is what ``goldenkit gate --markdown FILE`` writes (and appends
to ``$GITHUB_STEP_SUMMARY`` when that is set): the decision with its exit code and
the rules that forced it, the per-slice table (pass rates with Wilson intervals,
b broke / c fixed, exact McNemar p), the largest clusters of why rows broke, links
to the HTML reports, and every rule in a folded block. :func:`compare_markdown` is
the same without the gate (``goldenkit compare --markdown``). The cells come from the
same formatting functions as the HTML report (:func:`format_compare_table`,
:func:`gate_table`), so the numbers read the same everywhere; every cell is escaped
(a model's answer can hold ``|``, a newline or HTML).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.report._compare import format_compare_table, gate_table

if TYPE_CHECKING:
    from goldenkit.compare import Comparison
    from goldenkit.gate import GateDecision

__all__ = ["compare_markdown", "gate_markdown", "markdown_table"]

#: the comparison table's columns a pull request shows (the rest stay in compare.html)
_PR_COLUMNS = ("base pass rate", "base 95% Wilson", "candidate pass rate", "candidate 95% Wilson", "b (broke)")
_PR_COLUMNS_TOO = ("c (fixed)", "McNemar p", "significant")


def _cell(value: Any) -> str:
    text = " ".join(str(value).split())  # one line: a newline would end the table row
    return html.escape(text, quote=False).replace("|", "\\|") or " "


def markdown_table(df: pd.DataFrame, *, index: bool = True) -> str:
    """``df`` as a GitHub-flavoured Markdown table (the index as its first column when ``index``)."""
    frame = df.reset_index() if index else df
    head = [_cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _slice_table(comparison: Comparison) -> str:
    table = format_compare_table(comparison)
    if not isinstance(table, pd.DataFrame):
        return "_No comparison table._"
    keep = [c for c in table.columns if c.startswith((*_PR_COLUMNS, *_PR_COLUMNS_TOO))]
    return markdown_table(table[keep])


def _clusters(comparison: Comparison, top: int) -> str:
    from goldenkit.compare import why
    from goldenkit.stats import OVERALL

    table = why(comparison)
    table = table[table["slice"] != OVERALL].head(top)
    if table.empty:
        return "_No row broke._"
    shown = pd.DataFrame(
        {
            "slice": table["slice"].astype(str),
            "rows": [f"{r} of {o} broken" for r, o in zip(table["rows"], table["of"], strict=True)],
            "what the graders found": table["what"].astype(str),
            "examples": [", ".join(str(i) for i in ids[:3]) for ids in table["row_ids"]],
        }
    )
    return markdown_table(shown, index=False)


def _links(links: Mapping[str, str] | None) -> list[str]:
    if not links:
        return []
    items = [f"[{_cell(name)}]({html.escape(url, quote=True)})" for name, url in links.items()]
    return ["", "Reports: " + " · ".join(items)]


def compare_markdown(comparison: Comparison, *, links: Mapping[str, str] | None = None, clusters: int = 5) -> str:
    """The comparison for a pull request: headline, per-slice table, why rows broke, links."""
    head = f"{comparison.b} broke, {comparison.c} fixed"
    lines = [f"### goldenkit compare: {html.escape(head)}", "", _slice_table(comparison), ""]
    lines += ["#### Why rows broke", "", _clusters(comparison, clusters), *_links(links)]
    return "\n".join(lines) + "\n"


def gate_markdown(
    decision: GateDecision, *, links: Mapping[str, str] | None = None, clusters: int = 5, config: str = ""
) -> str:
    """The gate's decision for a pull request (see the module doc); ``config`` names the policy's file."""
    code = decision.exit_code
    summary = decision.summary()
    lines = [f"### goldenkit gate: exit {code}", "", f"**{_cell(summary)}**"]
    if config:
        lines += ["", _cell(config)]
    forcing = [r for r in decision.failed_rules if r.exit_code == code]
    if forcing:
        lines += ["", *(f"- `{_cell(r.name)}`: {_cell(r.detail)}" for r in forcing)]
    if decision.warnings:
        lines += ["", *(f"- warning: {_cell(w)}" for w in decision.warnings)]
    comparison = decision.comparison
    if comparison is not None:
        lines += ["", "#### By slice", "", _slice_table(comparison), "", "#### Why rows broke", ""]
        lines.append(_clusters(comparison, clusters))
    lines += _links(links)
    lines += ["", "<details><summary>Every rule</summary>", "", markdown_table(gate_table(decision)), "", "</details>"]
    return "\n".join(lines) + "\n"


publish(globals())
