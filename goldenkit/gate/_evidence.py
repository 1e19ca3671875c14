"""The gate's evidence rules: is each side evidence, and which errors count against the candidate.

Used by :func:`goldenkit.gate.evaluate_gate` (the module docstring there lists
the rules and their exit codes): ``baseline.evidence`` (exit 3),
``evidence.critical[SLICE]`` (3 when errors took the rows, else 2; other
slices short of evidence become warnings), ``errors.new_permanent`` (2) and
``errors.slice[SLICE]`` (3), and the red-row rules ``negative_case_pass_rate``
and ``hallucination_rate`` on red rows (:func:`red_rules`). Each rule states
the rows it saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._display import number
from goldenkit.compare import side_problems
from goldenkit.errors import EXIT_GATE_FAILED, EXIT_INFRASTRUCTURE
from goldenkit.gate._policy import UNDECIDED, GatePolicy, GateRule
from goldenkit.metrics import hallucination_row_ids, red_ids, run_metrics
from goldenkit.schema import ERROR, NEW_ERROR, SKIPPED, counts_against_candidate
from goldenkit.stats import collapse_repeats, verdict_codes

__all__ = [
    "baseline_evidence",
    "ledger_evidence",
    "error_rules",
    "own_error_rows",
    "own_rows",
    "evidence_gaps",
    "paired_evidence",
    "red_rate_rule",
    "red_rules",
    "rows_evidence",
    "slice_evidence",
]

_LEFT_OUT_COLUMNS = (
    ("new_error", "ERROR in the candidate only"),
    ("error_cleared", "ERROR in the base only"),
    ("skipped_to_error", "SKIPPED -> ERROR"),
    ("error_to_skipped", "ERROR -> SKIPPED"),
    ("unchanged_error", "ERROR on both sides"),
    ("skipped", "SKIPPED"),
)


def evidence_gaps(comparison: Any, min_paired_rows: int = 1, slices: Sequence[str] | None = None) -> pd.DataFrame:
    """Slices with fewer than ``min_paired_rows`` rows graded on both sides: ``slice, side, paired, errored, why``.

    ``side`` is ``base``, ``candidate``, ``both`` (the side(s) with no graded
    row) or ``paired`` (both sides graded rows, but too few of the same rows);
    ``errored`` says whether ERROR rows took the evidence (else the rows were
    SKIPPED or absent). ``slices`` (default: every slice of the table) may
    name slices the comparison does not have: they are gaps on both sides.
    """
    t = comparison.slices.set_index(comparison.slices["slice"].astype(str))
    names = [str(s) for s in t.index] if slices is None else list(slices)
    recs = []
    for name in names:
        if name not in t.index:
            recs.append({"slice": name, "side": "both", "paired": 0, "errored": False, "why": "no rows on either side"})
            continue
        line = t.loc[name]
        paired = int(line["n_paired"])
        if paired >= min_paired_rows:
            continue
        parts, empty, errors = [], [], {}
        for side, label in (("base", "base"), ("cand", "candidate")):
            n, err, skip = (
                int(line[f"n_{side}"]),
                int(line[f"{side}_error_rows"]),
                int(line[f"{side}_skipped_rows"]),
            )
            errors[label] = err
            if n == 0:
                empty.append(label)
            parts.append(f"{label} {n} of {int(line['rows'])} rows graded ({err} ERROR, {skip} SKIPPED)")
        side = "both" if len(empty) == 2 else empty[0] if empty else "paired"
        errored = any(errors[x] for x in (empty or list(errors)))
        why = f"{paired} paired row(s) < {min_paired_rows}: " + "; ".join(parts)
        recs.append({"slice": name, "side": side, "paired": paired, "errored": errored, "why": why})
    return pd.DataFrame(recs, columns=["slice", "side", "paired", "errored", "why"])


def _own(n: int) -> str:
    """What the candidate's own ERROR rows among those left out are: failures of its own, not missing rows."""
    return (
        f"; {n} of them the candidate's own ERROR (agent, refused): its failures, counted against it "
        "(errors.new_permanent, evidence.paired), not missing evidence"
        if n
        else ""
    )


def rows_evidence(line: Any, own: int = 0) -> str:
    """``N graded row(s) of R; left out: E ERROR, S SKIPPED`` from a slice-table line; ``own``: how many of
    the ERROR rows are the candidate's own."""
    left = [f"{int(line[c])} {w}" for c, w in (("error_rows", "ERROR"), ("skipped_rows", "SKIPPED")) if int(line[c])]
    out = f"{int(line['n'])} graded row(s) of {int(line['rows'])}"
    return out + (f"; left out: {', '.join(left)}{_own(own)}" if left else "")


def own_error_rows(comparison: Any, line: Any) -> int:
    """The rows of a comparison-table line (a slice, or overall) that the candidate's own errors took, by
    the ledger (an outage on the baseline's side of the same row is not the candidate's)."""
    return int(comparison.ledger.account(str(line["slice"])).causes.get("candidate", 0))


def paired_evidence(line: Any, own: int = 0) -> str:
    """``N paired row(s) of R; left out: ...`` from a comparison-table line; ``own``: how many of the rows
    left out the candidate's own errors took (:func:`own_error_rows`)."""
    left = [f"{int(line[c])} {w}" for c, w in _LEFT_OUT_COLUMNS if c in line.index and int(line[c])]
    out = f"{int(line['n_paired'])} paired row(s) of {int(line['rows'])}"
    return out + (f"; left out: {', '.join(left)}{_own(own)}" if left else "")


def _label(obj: Any) -> str:
    for attr in ("name", "run_id"):
        v = getattr(obj, attr, None)
        if isinstance(v, str) and v:
            return v
    return str((getattr(obj, "manifest", None) or {}).get("run_id", "?"))


def _collapsed_of(obj: Any, rule: str) -> pd.DataFrame:
    fn = getattr(obj, "collapsed", None)
    if callable(fn):
        return fn()
    return collapse_repeats(obj.outcomes(columns=["row_id", "slice", "repeat", "verdict"]), rule)


def own_rows(collapsed: pd.DataFrame) -> int:
    """The ERROR rows of a collapsed table that its own agent's errors (agent, refused) took."""
    if "n_candidate_errors" not in collapsed.columns or not len(collapsed):
        return 0
    own = collapsed["n_candidate_errors"].to_numpy() > 0
    return int((own & (collapsed["verdict"].astype(str) == ERROR).to_numpy()).sum())


def _error_share(collapsed: pd.DataFrame) -> tuple[int, int]:
    """(ERROR attempts nobody's answer caused, attempts) of a collapsed table: a side's own errors
    (agent, refused) are not outages."""
    if "attempts" not in collapsed.columns or "n_error" not in collapsed.columns:
        return 0, 0
    own = int(collapsed["n_candidate_errors"].sum()) if "n_candidate_errors" in collapsed.columns else 0
    return int(collapsed["n_error"].sum()) - own, int(collapsed["attempts"].sum())


def baseline_evidence(
    comparison: Any, baseline: Any, rule: str, max_error_rate: float | None = None
) -> GateRule | None:
    """``baseline.evidence`` (exit 3): the baseline is INVALID, incomplete, has no graded row, or more
    ERROR attempts than ``max_error_rate`` (the bound the candidate is held to)."""
    if comparison is not None:
        man, label, collapsed = comparison.base_manifest, comparison.base_id, comparison.base_collapsed
    elif baseline is not None:
        man, label, collapsed = dict(getattr(baseline, "manifest", None) or {}), _label(baseline), None
    else:
        return None
    if collapsed is None:
        collapsed = _collapsed_of(baseline, rule)
    problems = side_problems(man, collapsed)  # INVALID, unfinished, missing repeats: the rule compare applies too
    shard = man.get("shard")
    if shard and not man.get("merged_from"):  # the evidence rules hold on both sides
        part = f"{shard['k']}/{shard['n']}" if isinstance(shard, dict) and {"k", "n"} <= set(shard) else shard
        problems.append(f"it is shard {part} of a sharded run: merge its shards first (goldenkit merge)")
    codes = verdict_codes(collapsed["verdict"]) if len(collapsed) else np.zeros(0, np.int8)
    n_graded, rows = int((codes <= 1).sum()), len(codes)
    err, skip = int((codes == 2).sum()), int((codes == 3).sum())
    if n_graded == 0:
        problems.append("empty (no rows)" if rows == 0 else f"no graded row ({err} ERROR, {skip} SKIPPED of {rows})")
    errors, attempts = _error_share(collapsed)
    if max_error_rate is not None and attempts and errors / attempts > max_error_rate:
        problems.append(f"error rate {errors / attempts:.2%} ({errors}/{attempts} attempts) > {max_error_rate:.2%}")
    own = own_rows(collapsed)
    mine = f" ({own} the baseline's agent's own: agent, refused)" if own else ""
    evidence = f"{n_graded} graded row(s) of {rows}; {err} ERROR{mine}, {skip} SKIPPED"
    if problems:
        detail = f"baseline {label} is not evidence: {'; '.join(problems)}"
        return GateRule("baseline.evidence", False, float(n_graded), None, detail, "evidence", 3, evidence)
    return GateRule(
        "baseline.evidence",
        True,
        float(n_graded),
        None,
        f"baseline {label}: VALID, complete, graded",
        "evidence",
        3,
        evidence,
    )


def _share_rule(name: str, account: Any, policy: GatePolicy, what: str) -> GateRule:
    """One ledger account against ``min_paired_share`` and ``min_paired_rows``: exit 3 when an outage
    (an error nobody's answer caused, on either side) is among the unpaired rows; else 2 when the
    candidate's own errors (agent, refused) are (a failure shown); else 3, not shown either way (rows
    skipped or missing), below a failure shown elsewhere."""
    share, need = account.share, policy.min_paired_share
    ok = account.rows > 0 and share >= need and account.paired >= policy.min_paired_rows
    code, kind, why = EXIT_INFRASTRUCTURE, UNDECIDED, "rows skipped or missing"
    if account.causes.get("outage"):
        why = "errors nobody's answer caused took them (or the baseline's own, on its side: not the candidate's)"
        code, kind = EXIT_INFRASTRUCTURE, "evidence"
    elif account.causes.get("candidate"):
        code, kind, why = EXIT_GATE_FAILED, "evidence", "the candidate's own errors took them (agent, refused)"
    detail = f"{what}: {account.paired} of {account.rows} rows paired ({share:.1%}; needs {need:.0%}"
    detail += f" and {policy.min_paired_rows} row(s))" if policy.min_paired_rows > 1 else ")"
    if not ok:
        detail += f": not evidence ({why})" if account.rows else ": not evidence (no rows on either side)"
    return GateRule(name, ok, share, need, detail, kind, code, account.line())


def ledger_evidence(policy: GatePolicy, comparison: Any, warnings: list[str]) -> list[GateRule]:
    """``evidence.paired`` (overall) and ``evidence.critical[SLICE]`` from the comparison's ledger;
    a non-critical slice under ``min_paired_share`` is a warning."""
    ledger = comparison.ledger
    rules = [_share_rule("evidence.paired", ledger.account(None), policy, "overall")]
    for s in policy.critical:
        rules.append(_share_rule(f"evidence.critical[{s}]", ledger.account(s), policy, f"critical slice {s}"))
    for s in ledger.slices():
        if s not in policy.critical:
            r = _share_rule("", ledger.account(s), policy, f"slice {s}")
            if not r.passed:
                warnings.append(f"{r.detail}; {r.evidence}")
    if comparison.cand_manifest.get("shard") and not comparison.cand_manifest.get("merged_from"):
        warnings.append(f"the candidate is shard {comparison.cand_manifest['shard']}: merge its shards first")
    return rules


def slice_evidence(policy: GatePolicy, comparison: Any, table: pd.DataFrame, warnings: list[str]) -> list[GateRule]:
    """The evidence rules: from the comparison's ledger (:func:`ledger_evidence`), or without a
    comparison, ``evidence.critical[SLICE]`` on the candidate alone (``min_paired_rows`` graded rows)."""
    m = policy.min_paired_rows
    if comparison is not None:
        return ledger_evidence(policy, comparison, warnings)
    else:
        t = table.iloc[:-1].set_index(table.iloc[:-1]["slice"].astype(str))
        gap_of = {}
        for s in sorted(set(t.index) | set(policy.critical)):
            n = int(t.at[s, "n"]) if s in t.index else 0
            if n < m:
                err = int(t.at[s, "error_rows"]) if s in t.index else 0
                why = f"candidate {n} graded row(s) < {m}" + (f" ({err} ERROR)" if err else "")
                gap_of[s] = {"slice": s, "side": "candidate", "why": why, "errored": err > 0}
        got = {s: rows_evidence(t.loc[s]) for s in t.index}
    rules = []
    for s in policy.critical:
        g = gap_of.get(s)
        ev = got.get(s, "no rows")
        if g is None:
            rules.append(
                GateRule(
                    f"evidence.critical[{s}]", True, None, float(m), f"{s}: graded on both sides", "evidence", 3, ev
                )
            )
            continue
        kind = "evidence" if g["errored"] else UNDECIDED  # errors took the rows, or there were none to grade
        detail = f"critical slice {s} is not evidence ({g['side']} side): {g['why']}"
        rules.append(GateRule(f"evidence.critical[{s}]", False, None, float(m), detail, kind, EXIT_INFRASTRUCTURE, ev))
    warnings.extend(
        f"slice {s} is not evidence ({g['side']} side): {g['why']}"
        for s, g in gap_of.items()
        if s not in policy.critical
    )
    return rules


def _new_error_rows(comparison: Any, collapsed: pd.DataFrame) -> pd.DataFrame:
    """row_id, slice, kind (permanent/transient) of the candidate's new ERROR rows (every ERROR row without
    a comparison), and the rows per slice as ``attrs["rows"]``."""
    if comparison is not None:
        r = comparison.rows
        new = r[(r["status"].astype(str) == NEW_ERROR).to_numpy()]
        kinds = ["permanent" if counts_against_candidate(k) else "transient" for k in new["cand_error_kind"]]
        out = pd.DataFrame({"row_id": new["row_id"], "slice": new["slice"].astype(str), "kind": kinds})
        sizes = r["slice"].astype(str).value_counts()
    else:
        err = collapsed[(collapsed["verdict"].astype(str) == ERROR).to_numpy()]
        if "n_candidate_errors" in err.columns:
            perm = err["n_candidate_errors"].to_numpy() > 0
        elif "n_permanent" in err.columns:
            perm = err["n_permanent"].to_numpy() > 0
        else:
            perm = np.zeros(len(err), bool)
        slices = err["slice"].astype(str) if "slice" in err.columns else pd.Series([""] * len(err))
        out = pd.DataFrame(
            {
                "row_id": err["row_id"].to_numpy(),
                "slice": slices.to_numpy(),
                "kind": np.where(perm, "permanent", "transient"),
            }
        )
        all_slices = (
            collapsed["slice"].astype(str) if "slice" in collapsed.columns else pd.Series([""] * len(collapsed))
        )
        sizes = all_slices.value_counts()
    out.attrs["rows"] = {str(k): int(v) for k, v in sizes.items()}
    return out.reset_index(drop=True)


def error_rules(policy: GatePolicy, comparison: Any, collapsed: pd.DataFrame) -> list[GateRule]:
    """``errors.new_permanent`` (exit 2) and ``errors.slice[SLICE]`` (exit 3)."""
    new = _new_error_rows(comparison, collapsed)
    sizes: dict[str, int] = new.attrs["rows"]
    whose = (
        "rows compared with the baseline" if comparison is not None else "rows (no baseline: every ERROR row counts)"
    )
    rules = []
    if policy.max_new_permanent_errors is not None:
        rules.append(_permanent_rule(new[new["kind"] == "permanent"], policy.max_new_permanent_errors, sizes, whose))
    if policy.max_slice_error_rate is None:
        return rules
    lim = policy.max_slice_error_rate
    trans = new[new["kind"] != "permanent"]["slice"].value_counts()
    shares = sorted(
        ((int(k) / sizes[str(s)], str(s), int(k)) for s, k in trans.items() if sizes.get(str(s))), reverse=True
    )
    for share, s, k in sorted(x for x in shares if x[0] > lim):
        detail = f"{s}: {k} of {sizes[s]} rows newly ERROR (transient) = {number(share)} > {lim:.4f}: not evidence"
        ev = f"{sizes[s]} {whose} in {s}"
        rules.append(
            GateRule(f"errors.slice[{s}]", False, share, lim, detail, "infrastructure", EXIT_INFRASTRUCTURE, ev)
        )
    if not shares or shares[0][0] <= lim:
        ev = f"highest: {shares[0][1]} {shares[0][2]}/{sizes[shares[0][1]]}" if shares else "no new transient ERROR row"
        detail = f"no slice over {lim:.4f} new transient ERROR rows"
        top = shares[0][0] if shares else 0.0
        rules.append(GateRule("errors.slice", True, top, lim, detail, "infrastructure", EXIT_INFRASTRUCTURE, ev))
    return rules


def _permanent_rule(perm: pd.DataFrame, limit: int, sizes: dict[str, int], whose: str) -> GateRule:
    ok = len(perm) <= limit
    names = ", ".join(f"{r} ({s})" for r, s in zip(perm["row_id"][:10], perm["slice"][:10], strict=True))
    more = f", ... {len(perm) - 10} more" if len(perm) > 10 else ""
    detail = f"{len(perm)} new permanent ERROR row(s) {'<=' if ok else '>'} {limit}"
    if len(perm):
        detail += f": {names}{more}"
    ev = (
        f"{sum(sizes.values())} {whose}; counted: the candidate's own errors (refused: its request refused,"
        " 400/422, context length, a content filter; agent: its own code raised)"
    )
    return GateRule(
        "errors.new_permanent", ok, float(len(perm)), float(limit), detail, "evidence", EXIT_GATE_FAILED, ev
    )


# --------------------------------------------------------------------------- red rows

_NO_RED = (
    "no red row in the run: red rows are left out unless the run used --red ([run] red = true), "
    "and a sample (--split, --per-slice) may hold none"
)
_RED_RATES = {
    "negative_case_pass_rate": ("negative-case pass rate", "red row(s)", False),
    "hallucination_rate": ("hallucination rate", "hallucination row(s)", True),
}


def red_rules(outcomes: pd.DataFrame | None, policy: GatePolicy) -> list[GateRule]:
    """``negative_case_pass_rate`` (2, or 3 when errors took every graded attempt on the red rows)
    when ``min_negative_case_pass_rate`` is set: see :func:`red_rate_rule`."""
    if policy.min_negative_case_pass_rate is None:
        return []
    return [red_rate_rule(outcomes, "negative_case_pass_rate", policy.min_negative_case_pass_rate)]


def red_rate_rule(outcomes: pd.DataFrame | None, metric: str, threshold: float) -> GateRule:
    """A red-row rate of :func:`goldenkit.metrics.run_metrics` against its threshold; no evidence, no green.

    ``metric`` is ``negative_case_pass_rate`` (must be >= ``threshold``) or
    ``hallucination_rate`` on the hallucination rows (must be <=). It fails with
    exit 2 when the outcomes have no red row (the run left them out, or its
    sample holds none) or no hallucination row, and with exit 3 when none of
    the attempts on those rows was graded and some errored: the errors took
    the evidence.
    """
    what, rows_word, lower = _RED_RATES[metric]
    if outcomes is None or "tags" not in outcomes.columns:
        return GateRule(metric, False, None, threshold, f"{what} needs per-attempt outcomes with tags (not a baseline)")
    ids = [str(x) for x in outcomes["row_id"].tolist()]
    tags = [[str(t) for t in v] if isinstance(v, list | tuple | np.ndarray) else [] for v in outcomes["tags"].tolist()]
    if not red_ids(ids, tags) and metric == "negative_case_pass_rate":
        return GateRule(metric, False, None, threshold, _NO_RED, evidence=f"{len(set(ids))} row(s), none red")
    m = run_metrics(outcomes).set_index("metric")
    row = m.loc[metric]
    verdicts = outcomes["verdict"].astype(str).to_numpy()
    members = _metric_rows(metric, ids, tags)
    on = np.isin(np.asarray(ids, dtype=object), list(members)) if members else np.zeros(len(ids), dtype=bool)
    errors, skipped = int((verdicts[on] == ERROR).sum()), int((verdicts[on] == SKIPPED).sum())
    evidence = f"{len(members)} {rows_word}, {int(row['total'])} graded attempt(s), {errors} ERROR, {skipped} SKIPPED"
    total, rate = int(row["total"]), float(row["rate"])
    if total == 0:
        if not members:
            why = "no hallucination row among the red rows (each must refuse)" if red_ids(ids, tags) else _NO_RED
            return GateRule(metric, False, None, threshold, why, evidence=evidence)
        if errors and not skipped:
            return GateRule(
                metric,
                False,
                None,
                threshold,
                f"every attempt on the {len(members)} {rows_word} errored: not evidence",
                "infrastructure",
                EXIT_INFRASTRUCTURE,
                evidence,
            )
        why = f"no attempt on the {len(members)} {rows_word} was graded"
        if errors:  # some errored, the rest were skipped: the errors took evidence there was to see
            return GateRule(
                metric,
                False,
                None,
                threshold,
                f"{why} ({errors} ERROR): not evidence",
                "infrastructure",
                EXIT_INFRASTRUCTURE,
                evidence,
            )
        return GateRule(metric, False, None, threshold, why, evidence=evidence)
    ok = rate <= threshold if lower else rate >= threshold
    sign = ("<=" if ok else ">") if lower else (">=" if ok else "<")
    ci = f"95% CI {number(float(row['ci_low']))}-{number(float(row['ci_high']))}"
    detail = f"{what} {number(rate)} ({int(row['hits'])}/{total} attempts; {ci}) {sign} {threshold:.4f}"
    return GateRule(metric, ok, rate, threshold, detail, evidence=evidence)


def _metric_rows(metric: str, ids: list[str], tags: list[list[str]]) -> set[str]:
    """The rows a red-row rate is taken over (the sets run_metrics uses, read from the outcomes alone)."""
    return red_ids(ids, tags) if metric == "negative_case_pass_rate" else hallucination_row_ids(ids, tags)
