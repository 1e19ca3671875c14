"""What the compare notebook (``compare.ipynb``) shows: comparability, the paired table, the forest plot,
why rows broke (clusters of findings), the flip list and the quality gate's decision.

The numbers come from :func:`goldenkit.compare.compare_runs` and :func:`goldenkit.gate.evaluate_gate`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit.compare import FLIP_STATUSES, HOLM_FAMILY, Comparison, compare_runs, why
from goldenkit.config import config_for_run, section
from goldenkit.errors import EXIT_COMPARISON_INVALID, EXIT_GATE_FAILED, ComparisonInvalid
from goldenkit.gate import GateDecision, GatePolicy, evaluate_gate
from goldenkit.report._figure import IntervalFigure, LegendEntry, interval_lines
from goldenkit.report._html import (
    MISSING,
    OVERALL,
    HTMLBlock,
    banner,
    cell_text,
    interval,
    p_value,
    pct,
    signed_pct,
)
from goldenkit.schema import NEW_FAILURE, RECOVERED

# ---------------------------------------------------------------- paired comparison


def try_compare(
    base: RunLike, cand: RunLike, *, rule: str = "majority", alpha: float = 0.05, by: str = "slice"
) -> tuple[Comparison | None, list[str]]:
    """``(comparison, [])`` from :func:`goldenkit.compare.compare_runs`, or ``(None, differences)``.

    A comparison that is invalid is not an error here: the notebook states
    each differing key instead of a number. ``by``: the table's lines (``slice``, ``tags`` or a column).
    """
    try:
        return compare_runs(base, cand, rule=rule, alpha=alpha, by=by), []
    except ComparisonInvalid as exc:
        return None, list(exc.differences) or [str(exc)]


def usage_change_table(base: Any, cand: Any) -> pd.DataFrame | HTMLBlock:
    """The paired change per row from ``base`` to ``cand`` in the candidate's tokens (in + out) and latency,
    with Student's paired t 95% interval (:func:`goldenkit.results._usage_change.runs_usage_change`), one line
    per measure; a note when a side is a baseline (it keeps verdicts, not usage)."""
    from goldenkit.results import runs_usage_change

    change = runs_usage_change(base, cand)
    if change is None:
        return HTMLBlock('<p class="gk-empty">A side is a saved baseline: it keeps verdicts, not usage.</p>')
    out = pd.DataFrame(
        {
            "rows paired": change["n"],
            "base mean per row": change["base_mean"],
            "candidate mean per row": change["cand_mean"],
            "change (candidate − base)": change["diff"],
            "95% CI low": change["ci_low"],
            "95% CI high": change["ci_high"],
        }
    ).rename(index={"tokens": "tokens (in + out)", "latency_ms": "latency ms"})
    out.index.name = "measure"
    return out.round(1)


def comparability_banner(comparison: Comparison | None, differences: Sequence[str] = ()) -> HTMLBlock:
    """The comparability statement: what the two sides share, or each reason they cannot be compared."""
    if comparison is None:
        items = "".join(f"<li>{escape(str(d))}</li>" for d in differences)
        return HTMLBlock(
            '<div class="gk-banner gk-banner-bad">COMPARISON INVALID: these runs cannot be compared, '
            f"so no difference is reported.</div><ul>{items}</ul>"
        )
    bm = comparison.base_manifest
    ds = bm.get("dataset") or {}
    graders = ", ".join(f"{k} {v}" for k, v in sorted((bm.get("graders") or {}).items())) or "none"
    n_rows = int(comparison.overall["rows"])
    text = (
        f"COMPARABLE: {comparison.base_id} (base) vs {comparison.cand_id} (candidate) on "
        f"{ds.get('name', '?')} {ds.get('version', '')} (sha256 {str(ds.get('sha256', ''))[:12]}), {n_rows} rows, "
        f"{bm.get('repeats')} repeat(s) collapsed by {comparison.rule}, graders {graders}, "
        f"judge {bm.get('judge_version') or 'none'}; alpha {comparison.alpha}."
    )
    artifacts = (bm.get("agent_version") or {}).get("artifacts_sha256")
    if artifacts:  # the agent's artifacts, the same on both sides (goldenkit._artifacts)
        text = text[:-1] + f"; agent artifacts sha256 {str(artifacts)[:12]}."
    # a statement, not a verdict: neutral, so that the gate's decision above is the only colour
    return banner(text, tone="info", items=[str(n) for n in comparison.notes])


# what a table, plot or list of an invalid comparison shows instead
_NOT_SHOWN = HTMLBlock("<p>Not shown: the comparison is invalid (see above).</p>")


def _lines(comparison: Comparison) -> pd.Series:
    """The names of the comparison's lines: its slices, tags or other column's values (``comparison.by``)."""
    t = comparison.table
    return t[comparison.by if comparison.by in t.columns else t.columns[0]].astype(str)


def significance(comparison: Comparison) -> list[str]:
    """Per line of the comparison's table: ``"regression"`` or ``"gain"`` when its exact McNemar p is below
    the comparison's alpha (Holm-adjusted across the lines; the overall line's own p), else ``"noise"``.
    The forest plot colours by it and the table states it."""
    t = comparison.table
    p = t["p_adj"].where(t["p_adj"].notna(), t["p_val"]).to_numpy(dtype=float)
    diff = t["diff"].to_numpy(dtype=float)
    return [
        ("regression" if d < 0 else "gain" if d > 0 else "noise") if pv < comparison.alpha else "noise"
        for pv, d in zip(p, diff, strict=True)
    ]


def format_compare_table(comparison: Comparison | None) -> pd.DataFrame | HTMLBlock:
    """The per-slice (or per-tag, per-column: ``comparison.by``) and overall comparison table, formatted.

    Both pass rates with Wilson intervals, paired rows, b (broke: PASS -> FAIL),
    c (fixed: FAIL -> PASS), two-sided exact McNemar p, Holm-adjusted p across all
    slices (the column names the family; the gate's one family of one-sided tests
    is in :func:`gate_table`), whether the line is a significant regression or
    gain (:func:`significance`), the paired difference (candidate - base) with
    Newcombe's interval, and the rows left out because of ERROR or SKIPPED.
    """
    if comparison is None:
        return _NOT_SHOWN
    t = comparison.table
    by = comparison.by
    out = pd.DataFrame(index=pd.Index(_lines(comparison).to_numpy(), name=by))
    out["rows"] = t["rows"].to_numpy()
    for side, label in (("base", "base"), ("cand", "candidate")):
        out[f"{label} pass rate"] = [
            f"{pct(p)} ({int(k)}/{int(n)})"
            for p, k, n in zip(t[f"p_{side}"], t[f"k_{side}"], t[f"n_{side}"], strict=True)
        ]
        out[f"{label} 95% Wilson"] = [
            interval(a, b) for a, b in zip(t[f"{side}_ci_low"], t[f"{side}_ci_high"], strict=True)
        ]
    out["paired rows"] = t["n_paired"].to_numpy()
    out["b (broke)"] = t["b"].to_numpy()
    out["c (fixed)"] = t["c"].to_numpy()
    out["McNemar p"] = [p_value(p) for p in t["p_val"]]
    family = HOLM_FAMILY if by == "slice" else f"all {by}"
    out[f"Holm p ({family}, {len(t) - 1})"] = [p_value(p) for p in t["p_adj"]]
    out[f"significant (alpha {comparison.alpha:g})"] = [s if s != "noise" else "no" for s in significance(comparison)]
    out["difference"] = [signed_pct(d) for d in t["diff"]]
    out["95% CI (Newcombe)"] = [
        interval(a, b, signed=True) for a, b in zip(t["diff_ci_low"], t["diff_ci_high"], strict=True)
    ]
    left = ("new_error", "error_cleared", "skipped_to_error", "error_to_skipped", "unchanged_error", "skipped")
    out["left out (error/skipped)"] = t[list(left)].sum(axis=1).to_numpy()
    return out


#: forest-plot colour of each kind of line (:func:`significance`)
_SIGNIFICANCE_COLOURS = {"regression": "tab:red", "gain": "tab:green", "noise": "tab:grey"}


def forest_figure(comparison: Comparison | None) -> IntervalFigure | HTMLBlock:
    """Forest plot of the paired difference (candidate - base) per line (slice, tag or value of
    ``comparison.by``) with Newcombe intervals, as an :class:`~goldenkit.report.IntervalFigure`.

    A line whose change is significant (:func:`significance`) is drawn red (a regression) or green (a
    gain), the rest grey, with a legend; the overall line is a diamond below them, a dashed line marks
    zero; labels carry b and c. A line with no paired row has no point.
    """
    if comparison is None:
        return _NOT_SHOWN
    t = comparison.table
    names = _lines(comparison)
    labels = [
        f"{s} (b={int(b)}, c={int(c)}, n={int(n)})"
        for s, b, c, n in zip(names, t["b"], t["c"], t["n_paired"], strict=True)
    ]
    kinds = significance(comparison)
    overall = (names == OVERALL).to_numpy()
    lines = interval_lines(
        labels,
        t["diff"].to_numpy(dtype=float),
        t["diff_ci_low"].to_numpy(dtype=float),
        t["diff_ci_high"].to_numpy(dtype=float),
        lambda i: (_SIGNIFICANCE_COLOURS[kinds[i]], "D" if overall[i] else "o"),
    )
    family = "Holm-adjusted" if len(t) > 2 else "exact McNemar"
    words = {
        "regression": f"significant regression ({family} p < {comparison.alpha:g})",
        "gain": f"significant gain ({family} p < {comparison.alpha:g})",
        "noise": "not significant",
    }
    legend = [LegendEntry(words[k], c) for k, c in _SIGNIFICANCE_COLOURS.items()]
    legend.append(LegendEntry("overall line", "black", "D", filled=False))
    by = f" (by {comparison.by})" if comparison.by != "slice" else ""
    return IntervalFigure(
        f"{comparison.cand_id} vs {comparison.base_id}{by}",
        "paired difference in pass rate, candidate - base (95% Newcombe interval)",
        lines,
        tick_format=lambda v: f"{100 * v:+.0f} pp",
        zero_line=True,
        legend=tuple(legend),
        width=7.5,
    )


def _reasons_text(reasons: Any) -> str:
    if reasons is None:
        return ""
    if isinstance(reasons, Mapping):
        return "\n".join(f"{k}: {v}" for k, v in reasons.items() if v is not None and str(v) != "")
    return str(reasons)


def flip_anchor(row_id: Any) -> str:
    """The id of a row's line in the flip list (what the clusters link to)."""
    return "flip-" + re.sub(r"\s", "_", str(row_id))


_CLUSTER_HEADS = (
    (NEW_FAILURE, "broken", "Why it broke: the NEW_FAILURE rows by the candidate's findings its base did not have"),
    (RECOVERED, "fixed", "What it fixed: the RECOVERED rows by the base's findings the candidate no longer has"),
)


def clusters_html(comparison: Comparison | None, *, top: int = 10, links: int = 20) -> HTMLBlock:
    """Why rows broke, and what was fixed: the ``top`` largest per-slice clusters of :func:`goldenkit.why`
    (slice, how many of its broken rows, what the graders found), each linking to its first ``links``
    rows in the flip list. Every text is escaped. Deterministic: no model is called."""
    if comparison is None:
        return _NOT_SHOWN
    parts = []
    for status, noun, heading in _CLUSTER_HEADS:
        table = why(comparison, status=status)
        table = table[table["slice"] != OVERALL].head(top)
        if table.empty:
            continue
        body = []
        for r in table.to_dict("records"):
            ids = r["row_ids"]
            rows = ", ".join(f'<a href="#{escape(flip_anchor(i))}">{escape(str(i))}</a>' for i in ids[:links])
            more = f", … {len(ids) - links} more" if len(ids) > links else ""
            body.append(
                f'<tr id="cluster-{escape(r["cluster_id"])}"><td>{escape(str(r["slice"]))}</td>'
                f'<td class="gk-num">{r["rows"]} of {r["of"]} {noun} rows</td><td>{escape(str(r["what"]))}</td>'
                f"<td>{rows}{more}</td></tr>"
            )
        parts.append(
            f'<h3>{escape(heading)}</h3><div class="gk-table-wrap"><table class="gk-table"><thead><tr><th>slice</th>'
            '<th class="gk-num">rows</th><th>what the graders found</th><th>rows in the flip list</th></tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>"
        )
    if not parts:
        return HTMLBlock("<p>No row broke or was fixed: nothing to explain.</p>")
    return HTMLBlock("".join(parts))


def flip_list_html(comparison: Comparison | None, *, limit: int | None = 200) -> HTMLBlock:
    """The flip list side by side: per row its status, then base and candidate responses and reasons.

    Order is the comparison's: NEW_FAILURE first, then RECOVERED, NEW_ERROR,
    ERROR_CLEARED (by slice and row id within each). Every text is escaped.
    At most ``limit`` rows are shown; the rest are counted.
    """
    if comparison is None:
        return _NOT_SHOWN
    flips = comparison.flips
    if flips.empty:
        return HTMLBlock("<p>No row changed status between the two runs.</p>")
    counts = flips["status"].astype(str).value_counts()
    order = [s for s in FLIP_STATUSES if s in counts.index] + [s for s in counts.index if s not in FLIP_STATUSES]
    summary = ", ".join(f"{escape(s)} {int(counts[s])}" for s in order)
    shown = flips if limit is None else flips.head(limit)
    head = (
        '<table class="gk-side-by-side"><colgroup><col style="width:16%"><col style="width:42%">'
        '<col style="width:42%"></colgroup><tr><th>row</th>'
        f"<th>base: {escape(str(comparison.base_id))}</th><th>candidate: {escape(str(comparison.cand_id))}</th></tr>"
    )
    body = []
    for rec in shown.to_dict("records"):
        tags = ", ".join(rec.get("tags") or [])
        row_cell = (
            f"<b>{escape(str(rec['status']))}</b><br>{escape(str(rec['row_id']))}<br>"
            f"slice {escape(str(rec['slice']))}" + (f"<br>tags {escape(tags)}" if tags else "")
        )
        sides = []
        for side in ("base", "cand"):
            sides.append(
                f"<td><b>{escape(str(rec[f'{side}_verdict']))}</b>"
                f"<pre>{escape(str(rec.get(f'{side}_response') or ''))}</pre>"
                f"<pre><i>{escape(_reasons_text(rec.get(f'{side}_reasons')))}</i></pre></td>"
            )
        anchor = escape(flip_anchor(rec["row_id"]))
        status = escape(str(rec["status"]))
        body.append(f'<tr id="{anchor}" class="gk-status-{status}"><td>{row_cell}</td>{"".join(sides)}</tr>')
    more = "" if len(shown) == len(flips) else f"<p>… and {len(flips) - len(shown)} more flipped rows not shown.</p>"
    return HTMLBlock(f"<p>{len(flips)} flipped rows: {summary}.</p>" + head + "".join(body) + "</table>" + more)


def gate_decision(
    run: RunLike,
    comparison: Comparison | None,
    differences: Sequence[str] = (),
    config: str | Path | None = None,
    baseline: RunLike | None = None,
) -> GateDecision:
    """The quality gate for ``run`` against the compared baseline, with the ``[gate]`` policy of ``config``.

    ``config`` is a goldenkit.toml path or None (found as every command finds it:
    :func:`goldenkit.config.config_for_run`). An invalid comparison is passed on as such
    (the gate fails with exit 4), never as a missing baseline; ``baseline``
    (the base run or snapshot) lets the gate check that it is evidence even then.
    """
    cfg = config_for_run(config, getattr(run, "manifest", None), getattr(run, "path", None))
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where)
    if baseline is not None:  # the gate owns its comparison (its rule and alpha), as goldenkit gate does
        if comparison is not None and (comparison.rule, comparison.alpha, comparison.by) == (
            policy.rule,
            policy.alpha,
            "slice",
        ):  # the notebook's comparison is the one the gate makes (compare_runs, same runs, rule and alpha)
            return evaluate_gate(run, policy=policy, comparison=comparison, baseline=baseline)
        return evaluate_gate(run, policy=policy, baseline=baseline)
    invalid = "; ".join(differences) if comparison is None and differences else None
    if comparison is not None and comparison.rule != policy.rule:
        comparison = None  # a comparison under another rule is not the gate's
    return evaluate_gate(run, policy=policy, comparison=comparison, comparison_invalid=invalid)


#: gate rules whose actual value and threshold are counts (the rest: shares or p-values)
_COUNT_RULES = ("run.graded", "baseline.evidence", "errors.new_permanent")


def _rule_value(name: str, x: float | None) -> str:
    """A rule's actual value or threshold as people read it: a p-value, points, a count or a percentage."""
    if x is None or pd.isna(x):
        return MISSING
    if name.startswith("regression."):
        return p_value(x)
    if name.startswith(("non_inferiority", "allowed_regression")):
        return pct(x, unit=" pp")
    if name in _COUNT_RULES:
        return cell_text(float(x))
    return pct(x)


def gate_table(decision: GateDecision) -> pd.DataFrame:
    """Every gate rule: result, actual, threshold (formatted: p-values, percentages, counts), why and the
    evidence it saw; then review slices and warnings (slices that are not evidence but not critical)."""
    rows = [
        {
            "rule": r.name,
            "result": r.mark,
            "actual": _rule_value(r.name, r.actual),
            "threshold": _rule_value(r.name, r.threshold),
            "why": r.detail,
            "evidence": r.evidence or MISSING,
        }
        for r in decision.rules
    ]
    why = "more broke than fixed (p below alpha before adjustment): listed for review, not failed"
    rows += [
        {
            "rule": f"review[{s}]",
            "result": "REVIEW",
            "actual": MISSING,
            "threshold": MISSING,
            "why": why,
            "evidence": MISSING,
        }
        for s in decision.review
    ]
    rows += [
        {
            "rule": f"warning[{i + 1}]",
            "result": "WARN",
            "actual": MISSING,
            "threshold": MISSING,
            "why": w,
            "evidence": MISSING,
        }
        for i, w in enumerate(getattr(decision, "warnings", []))
    ]
    cols = ["rule", "result", "actual", "threshold", "why", "evidence"]
    return pd.DataFrame(rows, columns=cols).set_index("rule")


def gate_banner(decision: GateDecision) -> HTMLBlock:
    """The gate's decision first, coloured by it: PASSED (green), FAILED (red: the candidate's quality) or
    NOT EVIDENCE (amber: exit 3 or 4, nothing to decide on), with the exit code and each failing rule
    (or, when it passed, the warnings and the slices flagged for review)."""
    code = decision.exit_code
    failed = [f"{r.name}: {r.detail}" for r in decision.failed_rules]
    if decision.passed:
        notes = [
            *decision.warnings,
            *(
                f"review[{s}]: more broke than fixed (p below alpha before adjustment), not failed"
                for s in decision.review
            ),
        ]
        return banner(f"{decision.summary()}; exit code {code}", tone="ok", items=notes)
    n = f"{len(failed)} rule{'s' if len(failed) != 1 else ''}"
    if code == EXIT_GATE_FAILED:
        return banner(f"gate FAILED: {n} failed; exit code {code}", tone="bad", items=failed)
    what = "the comparison is invalid" if code == EXIT_COMPARISON_INVALID else "these runs are not evidence"
    return banner(f"gate NOT EVIDENCE: {what}, nothing was decided ({n}); exit code {code}", tone="warn", items=failed)


__all__ = [
    "clusters_html",
    "comparability_banner",
    "flip_list_html",
    "forest_figure",
    "format_compare_table",
    "gate_banner",
    "gate_decision",
    "gate_table",
    "significance",
    "try_compare",
    "usage_change_table",
]

publish(globals())
