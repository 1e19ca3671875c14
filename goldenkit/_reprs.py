"""Short reprs and Jupyter summaries of what a notebook holds: a run, a comparison, a leaderboard, a decision.

Each object's ``repr`` is one or two lines (never a whole DataFrame: its tables
are attributes to open); its ``_repr_html_`` is a small summary card that
Jupyter shows when the object is a cell's last value, built only from escaped
text (:func:`html.escape`). The functions read their object by its attributes,
so this module imports nothing heavy and sits below the modules whose classes
call it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from goldenkit._display import STYLE, interval, p_value, pct
from goldenkit._run_label import labelled, run_label

__all__ = [
    "comparison_html",
    "comparison_repr",
    "decision_html",
    "decision_repr",
    "leaderboard_html",
    "leaderboard_repr",
    "run_html",
    "run_repr",
]

#: Table lines shown in a summary card at most (the rest is counted, and is in the object's tables).
MAX_LINES = 30


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], more: int = 0) -> str:
    """An escaped HTML table; ``more`` lines left out are counted under it."""
    th = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    tail = f"<p>... {more} more line(s)</p>" if more > 0 else ""
    return f'<table class="gk-side-by-side"><tr>{th}</tr>{body}</table>{tail}'


def _card(title: str, lines: Iterable[str], body: str = "", *, ok: bool | None = None) -> str:
    """A summary card: an escaped title (a banner when ``ok`` is given), escaped lines, then ``body`` (HTML)."""
    if ok is None:
        head = f"<p><b>{html.escape(title)}</b></p>"
    else:
        head = f'<div class="gk-banner gk-banner-{"ok" if ok else "bad"}">{html.escape(title)}</div>'
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return STYLE + f'<div class="gk-card">{head}' + (f"<ul>{items}</ul>" if items else "") + f"{body}</div>"


# --------------------------------------------------------------------------- a run


def _counts(counts: Mapping[str, Any]) -> str:
    shown = " ".join(f"{v} {counts.get(v, 0)}" for v in ("PASS", "FAIL", "ERROR", "SKIPPED"))
    return f"{counts.get('total', 0)}/{counts.get('expected', 0)} outcomes ({shown})"


def run_repr(run: Any) -> str:
    """``Run('tiny T=0.8', 'nightly', VALID, complete, 300/300 outcomes (PASS 250 ...), path results/nightly)``:
    the run's label first (:func:`goldenkit._run_label.run_label`), its id after it."""
    m = run.manifest
    state = "complete" if run.complete else "incomplete"
    counts = m.get("counts")
    what = _counts(counts) if isinstance(counts, Mapping) else "no counts yet"
    validity = m.get("validity") or "no validity yet"
    return f"Run({run_label(m)!r}, {run.run_id!r}, {validity}, {state}, {what}, path {run.path})"


def run_html(run: Any) -> str:
    """A run's identity, validity and counts as a card."""
    m = run.manifest
    ds = m.get("dataset") if isinstance(m.get("dataset"), Mapping) else {}
    av = m.get("agent_version") if isinstance(m.get("agent_version"), Mapping) else {}
    validity = str(m.get("validity") or "no validity yet")
    if m.get("invalid_reason"):
        validity += f": {m['invalid_reason']}"
    counts = m.get("counts")
    lines = [
        f"dataset {ds.get('name')}@{ds.get('version')} (sha256 {str(ds.get('sha256'))[:12]})",
        f"model {av.get('model_id')}, mode {m.get('mode')}, repeats {m.get('repeats')}",
        _counts(counts) if isinstance(counts, Mapping) else "no counts yet",
        f"{'complete' if run.complete else 'incomplete (resume it with the same run id)'}; folder {run.path}",
    ]
    if m.get("shard") and not m.get("merged_from"):
        lines.append(f"shard {_shard(m['shard'])} of a sharded run: merge its shards first (goldenkit merge)")
    return _card(f"run {labelled(run_label(m), run.run_id)}: {validity}", lines, ok=m.get("validity") == "VALID")


def _shard(spec: Any) -> str:
    if isinstance(spec, Mapping) and "k" in spec and "n" in spec:
        return f"{spec['k']}/{spec['n']}"
    return str(spec)


# --------------------------------------------------------------------------- a comparison


def comparison_repr(cmp: Any) -> str:
    """Two lines: the sides and settings, then the overall b, c, p and paired difference."""
    ov = cmp.overall
    by = "" if cmp.by == "slice" else f", by {cmp.by}"
    head = f"Comparison({cmp.base_id!r} -> {cmp.cand_id!r}, rule {cmp.rule}, alpha {cmp.alpha}{by})"
    ci = interval(ov["diff_ci_low"], ov["diff_ci_high"], signed=True, unit="")
    body = (
        f"  {int(ov['rows'])} rows, {int(ov['n_paired'])} paired: b={int(ov['b'])} broke, c={int(ov['c'])} fixed, "
        f"p={p_value(ov['p_val'])}; diff {pct(ov['diff'], unit='', signed=True)} pts {ci}"
        f"; {len(cmp.slices)} {cmp.by} line(s), {len(cmp.flip_rows)} flip(s), {len(cmp.notes)} note(s)"
    )
    return f"{head}\n{body}"


def _comparison_line(r: Mapping[str, Any], by: str) -> list[Any]:
    counts = [int(r[c]) for c in ("n_paired", "b", "c")]
    diff = (
        f"{pct(r['diff'], unit='', signed=True)} {interval(r['diff_ci_low'], r['diff_ci_high'], signed=True, unit='')}"
    )
    return [
        r[by],
        int(r["rows"]),
        pct(r["p_base"]),
        pct(r["p_cand"]),
        *counts,
        p_value(r["p_val"]),
        p_value(r["p_adj"]),
        diff,
    ]


def comparison_html(cmp: Any) -> str:
    """The overall line, the notes and the per-line table (b, c, p, Holm p, paired difference) as a card."""
    by = cmp.by
    head = [by, "rows", "base pass", "cand pass", "paired", "b", "c", "p", "p (Holm, all lines)", "diff pts [95% CI]"]
    lines = [_comparison_line(r, by) for r in cmp.table.to_dict("records")]
    shown = lines[:MAX_LINES] + ([lines[-1]] if len(lines) > MAX_LINES else [])
    body = _table(head, shown, more=len(lines) - len(shown))
    body += "<p>b = broke (PASS -> FAIL), c = fixed (FAIL -> PASS); p = two-sided exact McNemar, unadjusted</p>"
    title = comparison_repr(cmp).replace("\n ", ";")
    return _card(title, [f"note: {n}" for n in cmp.notes], body)


# --------------------------------------------------------------------------- a leaderboard


def _overall_block(table: Any) -> Any:
    if "slice" in table.columns:
        return table[table["slice"] == table["slice"].iloc[0]] if len(table) else table
    return table


def leaderboard_repr(lb: Any) -> str:
    """``Leaderboard(3 runs, rule majority, alpha 0.05: top a, b; 1 of 3 pairs significant after Holm)``."""
    t = _overall_block(lb.table)
    pairs = _overall_block(lb.pairs)
    lead = t[t["group"] == "top"]
    top = ", ".join(labelled(a, b) for a, b in zip(lead.get("label", lead["run_id"]), lead["run_id"], strict=True))
    top = top or "none"
    sig = int(pairs["significant"].sum()) if len(pairs) else 0
    left = f"; {len(lb.left_out)} left out" if getattr(lb, "left_out", None) else ""
    return (
        f"Leaderboard({len(t)} runs, rule {lb.rule}, alpha {lb.alpha}: top {top}; "
        f"{sig} of {len(pairs)} pairs significant after Holm{left})"
    )


def _run_line(r: Mapping[str, Any]) -> list[Any]:
    rank = f"{r['rank_low']}" if r["rank_low"] == r["rank_high"] else f"{r['rank_low']}-{r['rank_high']}"
    rate = f"{pct(r['pass_rate'])} {interval(r['ci_low'], r['ci_high'])}"
    return [r["group"], rank, labelled(r.get("label"), r["run_id"]), r["model"], f"{r['k']}/{r['n']}", rate]


def _pair_line(p: Mapping[str, Any]) -> list[Any]:
    counts = [int(p[c]) for c in ("n_paired", "b_count", "c_count")]
    diff = (
        f"{pct(p['diff'], unit='', signed=True)} {interval(p['diff_ci_low'], p['diff_ci_high'], signed=True, unit='')}"
    )
    return [
        p["a"],
        p["b"],
        *counts,
        p_value(p["p_val"]),
        p_value(p["p_adj"]),
        "yes" if p["significant"] else "no",
        diff,
    ]


def leaderboard_html(lb: Any) -> str:
    """The ranked runs and the pairs (adjusted and unadjusted values labelled) as a card."""
    t = _overall_block(lb.table)
    runs = [_run_line(r) for r in t.to_dict("records")]
    body = _table(["group", "rank", "run", "model", "passed", "pass rate [95% Wilson]"], runs)
    pairs = [_pair_line(p) for p in _overall_block(lb.pairs).to_dict("records")]
    if pairs:
        head = [
            "a",
            "b",
            "paired",
            "b",
            "c",
            "p (unadjusted)",
            "p (Holm)",
            "significant",
            "diff pts [95% CI, unadjusted]",
        ]
        shown = pairs[:MAX_LINES]
        body += _table(head, shown, more=len(pairs) - len(shown))
    return _card(leaderboard_repr(lb), [f"note: {n}" for n in lb.notes], body)


# --------------------------------------------------------------------------- a gate decision


def decision_repr(decision: Any) -> str:
    """``GateDecision(FAILED, exit 2: 2 of 14 rules failed: pass_rate, regression.overall)``."""
    failed = decision.failed_rules
    if not failed:
        warned = f", {len(decision.warnings)} warning(s)" if decision.warnings else ""
        return f"GateDecision(PASSED, exit 0: {len(decision.rules)} rules{warned})"
    names = ", ".join(r.name for r in failed[:6]) + (", ..." if len(failed) > 6 else "")
    name = decision.summary().split(":", 1)[0].removeprefix("gate ")  # FAILED, NOT EVIDENCE, ...: as the exit code
    return (
        f"GateDecision({name}, exit {decision.exit_code}: {len(failed)} of {len(decision.rules)} rules failed: {names})"
    )


def decision_html(decision: Any) -> str:
    """The verdict as a banner, then every rule with its detail and evidence, failed rules first."""
    order = sorted(decision.rules, key=lambda r: r.passed)
    rows = [[r.mark, r.name, r.detail, r.evidence] for r in order]
    shown = rows[:MAX_LINES]
    body = _table(["", "rule", "detail", "evidence"], shown, more=len(rows) - len(shown))
    notes = [
        f"review: slice {s}: more broke than fixed (p below alpha before adjustment), not failed"
        for s in decision.review
    ]
    notes += [f"warning: {w}" for w in decision.warnings]
    return _card(decision.summary(), notes, body, ok=decision.passed)
