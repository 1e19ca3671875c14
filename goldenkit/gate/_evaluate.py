"""evaluate_gate and its rules; the rules, the [gate] table and the exit codes are documented in
:mod:`goldenkit.gate` (``help(goldenkit.gate)``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldenkit._display import number
from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit._text import did_you_mean
from goldenkit.compare import RunRef, compare_runs, missing_repeats, resolve_side
from goldenkit.errors import (
    EXIT_COMPARISON_INVALID,
    EXIT_GATE_FAILED,
    EXIT_INFRASTRUCTURE,
    ComparisonInvalid,
    ConfigError,
)
from goldenkit.gate._evidence import (
    baseline_evidence,
    error_rules,
    own_rows,
    red_rate_rule,
    red_rules,
    rows_evidence,
    slice_evidence,
)
from goldenkit.gate._judge import judge_rules
from goldenkit.gate._policy import ABSOLUTE_THRESHOLDS, UNDECIDED, GateDecision, GatePolicy, GateRule
from goldenkit.gate._power import POWER_DELTA, power_warnings
from goldenkit.gate._regression import detection_notes, non_inferiority_rules, point_rules, regression_rules
from goldenkit.gate._sequential import evaluate_sequential, sequential_record
from goldenkit.schema import INVALID
from goldenkit.stats import collapse_repeats, slice_table, too_few_repeats

if TYPE_CHECKING:
    from goldenkit.compare import Comparison

__all__ = ["POWER_DELTA", "GateDecision", "GatePolicy", "GateRule", "evaluate_gate", "own_comparison", "power_warnings"]

# --------------------------------------------------------------------------- evaluation


def _min_rule(name: str, actual: float, threshold: float, what: str, evidence: str = "") -> GateRule:
    ok = not math.isnan(actual) and actual >= threshold
    detail = f"{what} {number(actual)} {'>=' if ok else '<'} {threshold:.4f}"
    return GateRule(name, ok, actual, threshold, detail, evidence=evidence)


def _hallucination_rate(outcomes: pd.DataFrame, grader: str) -> tuple[float, int, int]:
    """(rate, failed, graded) over attempts the grader judged."""
    if "graders" not in outcomes.columns:
        return float("nan"), 0, 0
    bad = judged = 0
    for g in outcomes["graders"].tolist():
        if isinstance(g, list):
            g = dict(g)
        if not isinstance(g, dict):
            continue
        r = g.get(grader)
        if not isinstance(r, dict) or r.get("passed") is None or r.get("error"):
            continue
        judged += 1
        bad += not r["passed"]
    return (bad / judged if judged else float("nan")), bad, judged


def _inputs(
    run: pd.DataFrame | RunLike, manifest: Mapping[str, Any] | None, policy: GatePolicy
) -> tuple[pd.DataFrame | None, pd.DataFrame, dict[str, Any]]:
    """(outcomes or None, collapsed rows, manifest) from a DataFrame, a run or a baseline."""
    rule = policy.rule
    man = dict(manifest) if manifest is not None else dict(getattr(run, "manifest", None) or {})
    if isinstance(run, pd.DataFrame):
        if "n_pass" in run.columns and "repeat" not in run.columns:
            return None, run, man
        return run, collapse_repeats(run, rule), man
    collapsed_fn = getattr(run, "collapsed", None)
    if callable(collapsed_fn):
        return None, collapsed_fn(), man
    outcomes_fn = getattr(run, "outcomes", None)
    if callable(outcomes_fn):
        cols = ["row_id", "slice", "repeat", "verdict", "error_kind"]
        if policy.max_hallucination_rate is not None:
            cols.append("graders")
        if policy.max_hallucination_rate is not None or policy.min_negative_case_pass_rate is not None:
            cols.append("tags")  # the red rows and the hallucination rows
        df = outcomes_fn(columns=cols)
        return df, collapse_repeats(df, rule), man
    raise ConfigError("evaluate_gate needs outcomes (a DataFrame), a run or a baseline")


def own_comparison(baseline: Any, run: Any, policy: GatePolicy) -> tuple[Comparison | None, str | None]:
    """``(comparison, None)`` of ``run`` against ``baseline`` under the policy's rule and alpha, or
    ``(None, why)`` when they are not comparable: the one comparison every gate reads."""

    if isinstance(run, pd.DataFrame) or getattr(run, "manifest", None) is None:
        return None, None
    try:
        return compare_runs(baseline, run, rule=policy.rule, alpha=policy.alpha), None
    except ComparisonInvalid as exc:
        return None, str(exc)


def evaluate_gate(
    run: pd.DataFrame | RunLike | RunRef,
    *,
    policy: GatePolicy,
    comparison: Comparison | None = None,
    baseline: RunLike | RunRef | None = None,
    baseline_missing_reason: str | None = None,
    comparison_invalid: str | None = None,
    manifest: Mapping[str, Any] | None = None,
    results_dir: RunRef = "results",
    baselines_dir: RunRef = "baselines",
) -> GateDecision:
    """Check a run against ``policy`` and return the decision (never raises for a failed gate).

    ``run`` is an outcome DataFrame (row x repeat), a collapsed table, a run
    (``.manifest`` + ``.outcomes()``) or a baseline (``.collapsed()``); ``run``
    and ``baseline`` may also be given by name, as ``goldenkit gate`` takes them
    (a run folder, a run id under ``results_dir``, a baseline name under
    ``baselines_dir`` or file: :func:`goldenkit.compare._groups.resolve_side`).
    The gate owns its comparison: given ``baseline`` (and no ``comparison``) it
    compares ``run`` against it under the policy's rule and alpha
    (:func:`own_comparison`), so every caller reads the same ledger; a
    ``comparison`` made under another rule or alpha is refused. When regression
    is on and there is no baseline, the ``baseline`` rule fails with
    ``baseline_missing_reason``.
    ``baseline`` is the baseline itself (a run or a snapshot), read for its
    evidence when there is no comparison (the comparison carries it otherwise).
    ``comparison_invalid`` is the message of the ComparisonInvalid raised when
    the baseline was compared (exit 4). ``manifest`` (the run.json dict)
    supplies validity when ``run`` is a bare DataFrame.
    """
    run, baseline = (resolve_side(x, results_dir, baselines_dir) for x in (run, baseline))
    _rule_fits(policy, (run, manifest), (baseline, None))
    if sequential_record(getattr(run, "manifest", None)) is not None:  # its own procedure, on the rows it read
        return _sequential_gate(run, baseline, policy)
    if comparison is not None and comparison.by != "slice":
        raise ConfigError(f"evaluate_gate: the comparison's lines are by {comparison.by}, the gate reads slices")
    if policy.regression and comparison is None and baseline is not None and comparison_invalid is None:
        comparison, comparison_invalid = own_comparison(baseline, run, policy)
    elif comparison is not None and comparison.rule != policy.rule:  # alpha is the gate's own: read from the policy
        raise ConfigError(
            f"evaluate_gate: the comparison collapsed repeats under rule {comparison.rule}, the policy says "
            f"{policy.rule}: pass the baseline and let the gate compare"
        )
    outcomes, collapsed, man = _inputs(run, manifest, policy)
    table = slice_table(collapsed, rule=policy.rule)
    rules = _run_rules(man, collapsed, table.iloc[-1], policy)
    rules += _absolute_rules(table, outcomes, policy) + red_rules(outcomes, policy)
    review: list[str] = []
    warnings: list[str] = []
    if policy.regression:
        base_rule = baseline_evidence(comparison, baseline, policy.rule, policy.max_error_rate)
        if base_rule is not None:
            rules.append(base_rule)
        if comparison_invalid is not None:
            rules.append(
                GateRule(
                    "baseline.comparable",
                    False,
                    None,
                    None,
                    f"baseline not comparable: {comparison_invalid}",
                    "protocol",
                    EXIT_COMPARISON_INVALID,
                )
            )
        elif comparison is None:
            reason = baseline_missing_reason or "no baseline given (set [gate] baseline or pass --baseline)"
            why = f"no baseline: {reason}: no regression rule could be checked"
            rules.append(GateRule("baseline", False, None, None, why, UNDECIDED, EXIT_INFRASTRUCTURE))
    paired = comparison if policy.regression else None
    known = {str(s) for s in table["slice"].iloc[:-1]} | set(paired.ledger.slices() if paired is not None else ())
    rules += _with_slice_meant(slice_evidence(policy, paired, table, warnings), policy, known)
    rules += error_rules(policy, paired, collapsed)
    if paired is not None:
        family, shown = regression_rules(paired, policy, review)
        rules += family + non_inferiority_rules(paired, policy, shown) + point_rules(paired, policy)
        warnings += power_warnings(paired, policy) + detection_notes(paired, policy)
    rules += _quality_checked(policy) + judge_rules(run, baseline if paired is not None else None, man, rules, policy)
    return GateDecision(rules=rules, review=review, comparison=comparison, warnings=warnings)


def _quality_checked(policy: GatePolicy) -> list[GateRule]:
    """``quality`` (exit 3): a policy with regression off and no absolute threshold checks no quality,
    so it is never green; nothing when it checks some."""
    if policy.regression or policy.slices or any(getattr(policy, k) is not None for k in ABSOLUTE_THRESHOLDS):
        return []
    detail = (
        "the policy checks no quality: regression = false and no absolute threshold "
        f"({', '.join(ABSOLUTE_THRESHOLDS)}, [gate.slices.NAME]); set one, or gate against a baseline"
    )
    return [GateRule("quality", False, None, None, detail, UNDECIDED, EXIT_INFRASTRUCTURE)]


def _sequential_gate(run: Any, baseline: Any, policy: GatePolicy) -> GateDecision:
    """A sequential run (:mod:`goldenkit.gate._sequential`): its procedure on the rows it read, and the
    other rules (this gate without its regression rules) on the outcomes of those rows."""
    others = replace(policy, regression=False)
    man = getattr(run, "manifest", None)
    optimistic = _unread_as_passed(baseline, sequential_record(man) or {}, int((man or {}).get("repeats") or 1), policy)
    unread = optimistic["row_id"].nunique() if len(optimistic) else 0
    why = f"not shown: a point rule over the rows read, which the {unread} row(s) not run could change"

    def read_rules(frame: pd.DataFrame) -> GateDecision:
        d = evaluate_gate(frame, policy=others, manifest=man)
        if policy.allowed_regression is not None:  # a point comparison of full runs: not one of a run's prefix
            allowed = policy.allowed_regression
            d.rules.append(
                GateRule("allowed_regression", False, None, allowed, _NOT_FULL, UNDECIDED, EXIT_INFRASTRUCTURE)
            )
        if len(optimistic):  # a threshold missed on a stopped run's rows: shown only if missed with every row passed
            best = {r.name: r.passed for r in evaluate_gate(pd.concat([frame, optimistic]), policy=others).rules}
            d.rules = [
                replace(r, detail=f"{r.detail}; {why}", kind=UNDECIDED, exit_code=EXIT_INFRASTRUCTURE)
                if not r.passed and r.kind == "absolute" and (best.get(r.name, True) or not r.name.startswith(_RATES))
                else r
                for r in d.rules
            ]
        return d

    return evaluate_sequential(run, baseline, policy, read_rules=read_rules)


_NOT_FULL = (
    "allowed_regression compares the pass rates of full runs point for point, and a sequential run did not "
    "run every row: not checked (resume it without --sequential to a full run, or unset allowed_regression)"
)
#: The absolute rules a row more PASS can only help (the others read graders or tags a row not run lacks).
_RATES = ("pass_rate", "wilson_lower")


def _unread_as_passed(baseline: Any, rec: Mapping[str, Any], repeats: int, policy: GatePolicy) -> pd.DataFrame:
    """The rows of a sequential run's design (the baseline's graded rows) it did not read, as outcomes with
    every repeat PASS (a PASS row under any collapse rule)."""
    if baseline is None:
        return pd.DataFrame()
    _, table, _ = _inputs(baseline, None, policy)
    read = {str(r) for r in rec.get("rows") or []}
    ids, verdicts = table["row_id"].astype(str), table["verdict"].astype(str)
    left = table[(~ids.isin(read) & verdicts.isin(["PASS", "FAIL"])).to_numpy()]
    out = pd.DataFrame({"row_id": left["row_id"].astype(str), "slice": left["slice"].astype(str)})
    out = out.loc[out.index.repeat(repeats)].assign(repeat=[r for _ in range(len(left)) for r in range(repeats)])
    return out.assign(split=None, tags=[[] for _ in range(len(out))], verdict="PASS", error_kind=None)


def _rule_fits(policy: GatePolicy, *sides: tuple[Any, Mapping[str, Any] | None]) -> None:
    """Refuse (exit 1) a collapse rule that needs more repeats than a side has: ``at_least:5`` over 3
    repeats makes every row FAIL on both sides whatever they answered, and "no regression" automatic."""
    for side, given in sides:
        man = given if given is not None else getattr(side, "manifest", None)
        repeats = man.get("repeats") if isinstance(man, Mapping) else None
        if isinstance(repeats, float) and repeats.is_integer():
            repeats = int(repeats)
        if isinstance(repeats, int) and not isinstance(repeats, bool):
            short = too_few_repeats(policy.rule, repeats)
            if short is not None:
                who = man.get("run_id") if isinstance(man, Mapping) else None
                raise ConfigError(f"[gate] rule {short}" + (f" (run {who})" if who else ""))


def _run_rules(man: Mapping[str, Any], collapsed: pd.DataFrame, overall: Any, policy: GatePolicy) -> list[GateRule]:
    """Is the run evidence at all: validity, completeness (also of its repeats), error rate, graded rows."""
    rules: list[GateRule] = []
    if (short := missing_repeats(man, collapsed)) is not None:
        rules.append(GateRule("run.repeats", False, None, None, f"the run is {short}", "infrastructure", 3))
    shard = man.get("shard")
    if shard and not man.get("merged_from"):
        part = f"{shard['k']}/{shard['n']}" if isinstance(shard, Mapping) and {"k", "n"} <= set(shard) else shard
        why = f"the run is shard {part} of a sharded run: merge its shards first (goldenkit merge), then gate the merge"
        rules.append(GateRule("run.shard", False, None, None, why, "infrastructure", 3))
    if man.get("validity") == INVALID:
        reason = man.get("invalid_reason") or "run.json says INVALID"
        rules.append(GateRule("run.validity", False, None, None, f"run is INVALID: {reason}", "infrastructure", 3))
    if man.get("complete") is False:
        rules.append(
            GateRule(
                "run.complete",
                False,
                None,
                None,
                "the run did not finish (run.json: complete = false); resume it",
                "infrastructure",
                3,
            )
        )
    attempts, errors = int(overall["attempts"]), int(overall["error"])
    # the candidate's own errors (agent, refused) count against it (errors.new_permanent), not its validity
    own = int(collapsed["n_candidate_errors"].sum()) if "n_candidate_errors" in collapsed.columns else 0
    errors -= own
    err_rate = errors / attempts if attempts else float("nan")
    if policy.max_error_rate is not None:
        ok = attempts > 0 and err_rate <= policy.max_error_rate
        detail = (
            f"error rate {number(err_rate)} ({errors}/{attempts} attempts, errors nobody's answer caused) "
            f"{'<=' if ok else '>'} {policy.max_error_rate:.4f}" + ("" if ok else ": the run is not evidence")
        )
        if own:
            detail += f"; the candidate's own {own} ERROR attempt(s) (agent, refused) count against it instead"
        if attempts == 0:
            detail = "no attempts: nothing was run"
            ok = True  # an empty run is not evidence by the run.graded rule, not by its error rate
        rules.append(
            GateRule(
                "error_rate",
                ok,
                err_rate,
                policy.max_error_rate,
                detail,
                "infrastructure",
                3,
                evidence=f"{attempts} attempt(s), {errors + own} ERROR ({own} the candidate's own)",
            )
        )
    n_graded = int(overall["n"])
    what = f"{n_graded} rows graded"
    # an empty or fully skipped run, or one whose every row the candidate's own errors took, is a quality
    # failure (exit 2: there was nothing to grade, by the run's own doing); rows errors nobody caused took
    # are not evidence (3)
    code = EXIT_INFRASTRUCTURE
    if n_graded == 0:
        rows, skipped = int(overall["rows"]), int(overall["skipped_rows"])
        what = "empty run" if rows == 0 else "no row was graded (all skipped or errored)"
        if rows == 0 or skipped == rows or (own and errors == 0):
            code = EXIT_GATE_FAILED
    ev = rows_evidence(overall, own_rows(collapsed))
    rules.append(GateRule("run.graded", n_graded > 0, float(n_graded), None, what, "evidence", code, ev))
    return rules


def _absolute_rules(table: pd.DataFrame, outcomes: pd.DataFrame | None, policy: GatePolicy) -> list[GateRule]:
    rules: list[GateRule] = []
    overall = table.iloc[-1]
    ev = rows_evidence(overall)
    if policy.min_pass_rate is not None:
        rules.append(_min_rule("pass_rate", float(overall["p_hat"]), policy.min_pass_rate, "pass rate", ev))
    if policy.min_wilson_lower is not None:
        rules.append(
            _min_rule("wilson_lower", float(overall["ci_low"]), policy.min_wilson_lower, "Wilson lower bound", ev)
        )
    per_slice = table.iloc[:-1].set_index("slice")
    for name in per_slice.index:
        own = policy.slices.get(str(name), {})
        line = per_slice.loc[name]
        for key, col, what in (
            ("min_pass_rate", "p_hat", "pass rate"),
            ("min_wilson_lower", "ci_low", "Wilson lower bound"),
        ):
            thr = own.get(key, getattr(policy, f"per_slice_{key}"))
            if thr is not None:
                rules.append(
                    _min_rule(f"{key[4:]}[{name}]", float(line[col]), thr, f"{name} {what}", rows_evidence(line))
                )
    for name in policy.slices:
        if name not in per_slice.index:
            meant = did_you_mean(name, [str(s) for s in per_slice.index])
            rules.append(
                GateRule(f"pass_rate[{name}]", False, None, None, f"slice {name} has no rows in this run{meant}")
            )
    if policy.max_hallucination_rate is not None:
        rules.append(_hallucination_rule(outcomes, policy))
    return rules


def _with_slice_meant(rules: list[GateRule], policy: GatePolicy, known: set[str]) -> list[GateRule]:
    """The evidence rules, a critical slice that no side has named with the closest slice that exists."""
    meant = {f"evidence.critical[{s}]": did_you_mean(s, known) for s in policy.critical if s not in known}
    return [replace(r, detail=r.detail + meant[r.name]) if meant.get(r.name) else r for r in rules]


def _hallucination_rule(outcomes: pd.DataFrame | None, policy: GatePolicy) -> GateRule:
    limit = policy.max_hallucination_rate
    if outcomes is None:
        return GateRule(
            "hallucination_rate",
            False,
            None,
            limit,
            "hallucination rate needs per-attempt grader results (not in a baseline)",
        )
    rate, bad, judged = _hallucination_rate(outcomes, policy.hallucination_grader)
    ok = not math.isnan(rate) and limit is not None and rate <= limit
    if judged == 0 and limit is not None and "tags" in outcomes.columns:  # the hallucination rows decide
        rule = red_rate_rule(outcomes, "hallucination_rate", limit)
        return replace(rule, detail=f"no attempt was judged by grader {policy.hallucination_grader!r}; {rule.detail}")
    if judged == 0:
        detail = f"no attempt was judged by grader {policy.hallucination_grader!r}"
    else:
        detail = (
            f"hallucination rate {number(rate)} ({bad}/{judged} judged attempts) {'<=' if ok else '>'} {number(limit)}"
        )
    return GateRule("hallucination_rate", ok, rate, limit, detail, evidence=f"{judged} judged attempt(s)")


publish(globals())
