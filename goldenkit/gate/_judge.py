"""The gate's judge-graded rules: the judge's figures, corrected by human labels when there are any.

A **judge-graded figure** is one read from the judge grader's verdict column (``graders["judge"]`` of
each outcome, :func:`goldenkit.results.judge_rows`); a run is judge-graded when its judge is a hard
grader (``grader_hard`` of run.json), so that its row verdicts are the judge's.

* :func:`judge_rate_rule` (``judge_pass_rate``, with ``[gate] judge_min_pass_rate``): the one-sided
  ``1 - alpha`` lower bound of the judge-graded pass rate must reach the threshold (exit 2 below it).
  With human labels drawn by a recorded design (labels.jsonl, :mod:`goldenkit.results`) the bound is the
  prediction-powered one of the *human* pass rate (:func:`goldenkit.results.judge_estimates`), and the
  detail says ``prediction-powered: n human, N judged, lambda``; without, the judge's own Wilson bound,
  marked ``judge-only (no human labels)``. Labels picked by hand are counted and refused for inference.
  The prediction-powered bound rests on a normal approximation that does not hold its level with few
  labels (simulated: a judge passing half the human FAILs of a 70% pass rate, labels of a simple random
  sample, threshold at the true rate: a false green in over a quarter of the draws with 10 labels, 11%
  with 40, 8% with 100, against alpha 5%). So every labelled rule reads :func:`gate_bound`: the more
  conservative of the prediction-powered bound and the labels' own exact one (Clopper-Pearson on the
  labels alone; labels of unequal probabilities, of a design or of the last complete round of ``judge
  next``, first thinned to a simple random sample), which holds its level whatever the number of labels,
  the design or the judge's bias (``tests/test_gate_judge_error_rates.py``: at most alpha plus sampling
  noise in every cell, 10 to 100 labels, simple random and unequal-probability draws), and the detail
  says which of the two the gate read. The figures reports show stay the prediction-powered ones
  (asymptotic).
* :func:`judge_pair_rules` (``judge.non_inferiority``, ``judge.non_inferiority[SLICE]``, when both runs
  are judge-graded and a margin is set): the one-sided upper bound of the paired drop (baseline minus
  candidate, :func:`goldenkit.results.judge_difference`: prediction-powered over the rows labelled on
  both runs by one draw, the larger of it and the labels' exact bound on the share of rows the human
  passed on the baseline and failed on the candidate (:func:`gate_bound`; 50 labelled pairs that all
  agree: 0.058), else the judge's Newcombe interval, marked) must be below the margin; above it,
  not shown (3), or 2 when the drop itself is shown to exceed the margin: its lower bound, the smaller
  of the prediction-powered one and the labels' (the share lost less the share won, :func:`gate_bound`
  with ``won``), above it, so that a red holds its level as a green does. It is one more requirement of
  green beside the ledger's ``non_inferiority`` (an intersection: the false-pass rate stays at most alpha);
  the Holm family of regression rules reads the row verdicts, the judge's on a judge-graded run.
* :func:`self_preference_rule` (``judge.self_preference``, exit 3): when the judge and the candidate
  share a model family (:func:`goldenkit._model_family.self_preference`: the judge's model is the first
  part of run.json's ``judge_version``, the candidate's is ``agent_version.model_id``) and a quality rule
  that passed rests on the judge's verdicts alone, the gate is not green, unless ``[gate]
  accept_self_preference = true``. A rule rests on the judge alone when it is a judge-graded rule without
  human labels, or a rule on the row verdicts of a run whose only hard grader is the judge that no
  prediction-powered counterpart backs (``judge_pass_rate`` for the absolute thresholds,
  ``judge.non_inferiority`` for the regression rules): one labelled rule (a trivial
  ``judge_min_pass_rate``) does not vouch for a non-inferiority the judge alone showed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import beta

from goldenkit._display import number
from goldenkit._model_family import self_preference
from goldenkit.errors import EXIT_GATE_FAILED, EXIT_INFRASTRUCTURE, ComparisonInvalid, InputError
from goldenkit.gate._policy import UNDECIDED, GatePolicy, GateRule
from goldenkit.results import Run, complete_rounds, judge_difference, judge_estimates, judge_rows, read_rounds
from goldenkit.stats import OVERALL

__all__ = [
    "JUDGE_ONLY",
    "gate_bound",
    "judge_graded",
    "judge_pair_rules",
    "judge_rate_rule",
    "judge_rules",
    "self_preference_rule",
]

#: The judge grader's name in an outcome's ``graders`` and run.json's ``grader_hard``.
_JUDGE = "judge"
#: How a figure the judge alone gave is marked.
JUDGE_ONLY = "judge-only (no human labels)"
#: The rules whose pass reads the row verdicts (the judge's, on a run whose only hard grader is the judge).
_ROW_RULES = ("pass_rate", "wilson_lower", "regression", "non_inferiority", "allowed_regression", "negative_case")


def _hard(man: Mapping[str, Any]) -> set[str]:
    hard = man.get("grader_hard")
    if isinstance(hard, Mapping):
        return {str(k) for k, v in hard.items() if v}
    return set()


def judge_graded(man: Mapping[str, Any] | None) -> bool:
    """True when the run's judge is a hard grader: its verdicts decide the rows."""
    return _JUDGE in _hard(man or {})


def _run_of(side: Any) -> Any:
    """The run folder (a :class:`goldenkit.results.Run`) a side is, or None (a table, a snapshot)."""

    return side if isinstance(side, Run) else None


def _how(line: Mapping[str, Any]) -> tuple[bool, str]:
    """(prediction-powered?, what the figure rests on) of a line of judge_estimates / judge_difference."""
    hand = int(line.get("n_hand") or 0)
    refused = (
        f"; {hand} label(s) refused for inference: picked by hand, not drawn by a recorded sampling design "
        "(shown, never used)"
        if hand
        else ""
    )
    if line["method"] == "judge only":
        designed = int(line.get("n_human") or 0)
        why = JUDGE_ONLY if not designed else f"judge-only ({line['reason']})"
        return False, why + refused
    lam = line["lam"]
    ppi = f"prediction-powered: {int(line['n_human'])} human, {int(line['n_judged'])} judged, lambda {lam:.2f}"
    return True, ppi + refused


def judge_rate_rule(run: Any, policy: GatePolicy) -> list[GateRule]:
    """``judge_pass_rate`` when ``judge_min_pass_rate`` is set (module doc)."""
    thr = policy.judge_min_pass_rate
    if thr is None:
        return []
    r = _run_of(run)
    if r is None:
        why = "judge_min_pass_rate reads the judge's verdicts and labels of a run folder (not a table or a snapshot)"
        return [GateRule("judge_pass_rate", False, None, thr, why, UNDECIDED, EXIT_INFRASTRUCTURE)]

    try:
        line = judge_estimates(r, alpha=min(0.99, 2 * policy.alpha), rule=policy.rule).loc[OVERALL]
    except InputError as exc:
        return [
            GateRule(
                "judge_pass_rate", False, None, thr, f"the judge-graded figure could not be read: {exc}", UNDECIDED, 3
            )
        ]
    ppi, how = _how(line)
    low = float(line["ci_low"] if ppi else line["judge_ci_low"])
    rate = float(line["estimate"] if ppi else line["judge_rate"])
    if ppi:
        rows = judge_rows(r, rule=policy.rule)
        rows = rows[rows["judge"].isin(["PASS", "FAIL"])]
        w, smallest = _label_weights(r, rows)
        bound, labels, n = gate_bound(low, rows["human"] == "PASS", w, policy.alpha, upper=False, smallest=smallest)
        how += "; " + _decided(low, float(labels), int(n), w, upper=False)
        low = float(bound)
    ok = not math.isnan(low) and low >= thr
    what = "human pass rate" if ppi else "judge's pass rate"
    shown = f"lower {1 - policy.alpha:.0%} bound {number(low)}"
    detail = f"{what} {number(rate)}, {shown} {'>=' if ok else '<'} {thr:.4f} ({how})"
    evidence = f"{int(line['n_judged'])} judged row(s), {int(line['n_human'])} human label(s) used"
    return [GateRule("judge_pass_rate", ok, low, thr, detail, "absolute", EXIT_GATE_FAILED, evidence)]


def gate_bound(
    ppi: ArrayLike,
    hits: ArrayLike,
    weights: ArrayLike,
    alpha: float,
    *,
    upper: bool,
    smallest: ArrayLike | None = None,
    won: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gate's one-sided ``1 - alpha`` bound of a judge-graded figure: the more conservative of the
    prediction-powered bound ``ppi`` and an exact bound on the human labels alone, which holds its level
    at any number of labels (module doc). Returns (the gate's bound, the labels' bound, the labels read).

    ``hits`` (0/1) and ``weights`` (0 for a row without a label, else the inverse of the probability it
    was drawn with) per row, in the last axis (earlier axes: draws, so a simulation calls it once). The
    labels' bound is Clopper-Pearson's on the share of hits among the labels: lower (``upper`` False)
    for a pass rate, the hits being the human PASSes; upper for a paired drop, the hits being the rows
    the human passed on the baseline and failed on the candidate (the drop is at most their share). No
    label: 0 (lower), 1 (upper). ``won`` (0/1 per row, with ``upper`` False) makes it a lower bound of a
    paired drop, the hits being the rows lost and ``won`` the rows the human failed on the baseline and
    passed on the candidate: the drop is the share lost less the share won, so the labels' bound is
    Clopper-Pearson's lower bound of the one less its upper bound of the other, each at ``alpha / 2``
    (Bonferroni: it holds its level at any number of labels, so a red drop is as valid as a green one);
    no label: -1. Labels of equal probabilities are a simple random sample: the bound is exact. Labels
    drawn with unequal probabilities are first thinned to one: a label drawn with probability
    ``p`` is kept with probability ``smallest / p`` (a fixed seed: the gate says the same twice), so
    every row was kept with probability ``smallest``, the design's smallest (default: the labels'
    smallest), and the kept labels are again a simple random sample. Weighting them instead
    (Clopper-Pearson on the weighted share at Kish's effective size) went green in up to 40% of
    simulated draws when the design favoured the rows that pass, against alpha 5%.

    >>> bound, labels, n = gate_bound(0.75, [1, 1, 1, 0], [1, 1, 1, 0], 0.05, upper=False)
    >>> round(float(bound), 4), int(n)  # 3 labels, all PASS: 0.05 ** (1 / 3)
    (0.3684, 3)
    >>> round(float(gate_bound(0.02, [0] * 50, [1] * 50, 0.05, upper=True)[0]), 4)  # 50 pairs, no drop
    0.0582
    >>> lost = [1] * 20 + [0] * 30  # 50 pairs, 20 lost, none won: at least 0.2641 lost, at most 0.0711 won
    >>> round(float(gate_bound(0.3, lost, [1] * 50, 0.05, upper=False, won=[0] * 50)[0]), 4)
    0.193
    """
    h, w = np.asarray(hits, dtype=float), np.asarray(weights, dtype=float)
    labelled = w > 0
    prob = 1.0 / np.where(labelled, w, 1.0)
    low = np.where(labelled, prob, np.inf).min(-1) if smallest is None else np.asarray(smallest, dtype=float)
    keep = np.minimum(1.0, np.asarray(low)[..., None] / prob) * (1 + 1e-9)  # equal probabilities: every label
    kept = labelled & (np.random.default_rng(0).random(w.shape) < keep)
    n, k = kept.sum(-1), (kept & (h > 0)).sum(-1)
    if upper:
        labels = _clopper_pearson(k, n, alpha, upper=True)
        return np.maximum(np.asarray(ppi, dtype=float), labels), labels, n
    if won is None:
        labels = _clopper_pearson(k, n, alpha, upper=False)
    else:
        gained = (kept & (np.asarray(won, dtype=float) > 0)).sum(-1)
        lost = _clopper_pearson(k, n, alpha / 2, upper=False) - _clopper_pearson(gained, n, alpha / 2, upper=True)
        labels = np.where(n > 0, lost, -1.0)
    return np.minimum(np.asarray(ppi, dtype=float), labels), labels, n


def _clopper_pearson(k: np.ndarray, n: np.ndarray, alpha: float, *, upper: bool) -> np.ndarray:
    """Clopper-Pearson's one-sided ``1 - alpha`` bound of a share from ``k`` hits of ``n`` (no label: the
    widest, 1 or 0)."""

    with np.errstate(divide="ignore", invalid="ignore"):
        if upper:
            return np.asarray(np.where(k >= n, 1.0, beta.ppf(1.0 - alpha, k + 1, np.maximum(n - k, 1))), dtype=float)
        return np.asarray(np.where(k <= 0, 0.0, beta.ppf(alpha, np.maximum(k, 1), n - k + 1)), dtype=float)


def _decided(ppi: float, labels: float, kept: int, w: np.ndarray, *, upper: bool) -> str:
    """What the detail says of the two bounds and which one the gate read (``w``: the labels' weights)."""
    w = w[w > 0]
    sample = f"{kept} labels of a simple random sample"
    if w.size and np.ptp(w) > 1e-9 * w.max():
        sample = (
            f"{kept} of {w.size} labels drawn with unequal probabilities, thinned to a simple random sample "
            f"of probability {1 / w.max():.3g}"
        )
    read = "labels-alone" if (labels > ppi if upper else labels < ppi) else "prediction-powered"
    return (
        f"the gate reads the {read} bound: prediction-powered {number(ppi)} (asymptotic), "
        f"labels alone {number(labels)} (Clopper-Pearson, {sample})"
    )


def _round_labels(run: Any, rows: Any) -> tuple[np.ndarray, float] | None:
    """The weights of the last complete round of judge next (:func:`goldenkit.results.complete_rounds`;
    the rows it knew weigh 1, those it drew ``1 / probability``; 0 elsewhere) and its smallest probability, or None
    without such a round."""

    done, _ = complete_rounds(read_rounds(run), rows)
    if not done:
        return None
    rd = done[-1]
    p = rows["row_id"].map(rd.probabilities).fillna(0.0).to_numpy(dtype=float)
    used = ((p >= 1.0) | rows["row_id"].isin(rd.drawn).to_numpy()) & (p > 0)
    return np.where(used, 1.0 / np.where(used, p, 1.0), 0.0), float(p[p > 0].min())


def _label_weights(run: Any, rows: Any) -> tuple[np.ndarray, float | None]:
    """Per judged row, the weight of its designed label in the labels' bound (0: not used), and the
    design's smallest probability when known: the last complete round of judge next's, else one design's
    recorded probabilities (rows a round drew left out, as the estimate leaves them; the design's
    smallest probability taken to be its labels')."""
    found = _round_labels(run, rows)
    if found is not None:
        return found

    drawn = {r for rd in read_rounds(run) for r in rd.drawn}
    used = (rows["label"] == "designed").to_numpy() & ~rows["row_id"].isin(drawn).to_numpy()
    prob = rows["probability"].to_numpy(dtype=float)
    return np.where(used, 1.0 / np.where(used, prob, 1.0), 0.0), None


def judge_pair_rules(run: Any, baseline: Any, policy: GatePolicy) -> list[GateRule]:
    """``judge.non_inferiority`` overall and on each critical slice (module doc); none unless both runs
    are judge-graded run folders and a margin is set."""
    m = policy.non_inferiority_margin
    cand, base = _run_of(run), _run_of(baseline)
    if m is None or cand is None or base is None or not (judge_graded(cand.manifest) and judge_graded(base.manifest)):
        return []

    try:
        table = judge_difference(cand, base, alpha=min(0.99, 2 * policy.alpha), rule=policy.rule)
    except (InputError, ComparisonInvalid) as exc:
        why = f"overall: judge-graded non-inferiority not shown: {exc}"
        return [GateRule("judge.non_inferiority", False, None, m, why, UNDECIDED, EXIT_INFRASTRUCTURE)]
    rules = []
    pairs = None
    for s in [OVERALL, *(x for x in policy.critical if x in table.index)]:
        line = table.loc[s]
        ppi, how = _how(line)
        lo, hi = (line["ci_low"], line["ci_high"]) if ppi else (line["judge_ci_low"], line["judge_ci_high"])
        drop_hi, drop_lo = -float(lo), -float(hi)  # the drop is baseline minus candidate
        lower = ""
        if ppi:
            pairs = _pair_labels(cand, base, policy.rule) if pairs is None else pairs
            group = pairs if s == OVERALL else pairs[pairs["slice"].astype(str) == s]
            w = group["weight"].to_numpy()
            bound, labels, n = gate_bound(drop_hi, group["drop"], w, policy.alpha, upper=True)
            how += "; " + _decided(drop_hi, float(labels), int(n), w, upper=True)
            drop_hi = float(bound)
            low, labels_low, _ = gate_bound(drop_lo, group["drop"], w, policy.alpha, upper=False, won=group["won"])
            lower = (
                f"; its lower bound the smaller of prediction-powered {number(drop_lo)} and labels alone "
                f"{number(float(labels_low))} (share lost less share won, Clopper-Pearson at alpha / 2 each)"
            )
            drop_lo = float(low)
        name = "judge.non_inferiority" + ("" if s == OVERALL else f"[{s}]")
        what = f"{'overall' if s == OVERALL else s}: upper {1 - policy.alpha:.0%} bound of the judge-graded drop"
        what += f" {number(drop_hi)}"
        ev = f"{int(line['n_judged'])} row(s) both judges decided"
        if drop_hi < m:
            detail = f"{what} < margin {m:g}: non-inferiority shown ({how})"
            rules.append(GateRule(name, True, drop_hi, m, detail, "regression", EXIT_GATE_FAILED, ev))
        elif drop_lo > m:
            detail = f"{what}; the drop itself exceeds the margin {m:g} (lower bound {number(drop_lo)}) ({how}{lower})"
            rules.append(GateRule(name, False, drop_hi, m, detail, "regression", EXIT_GATE_FAILED, ev))
        else:
            detail = f"{what} >= margin {m:g}: non-inferiority not shown ({how}{lower})"
            rules.append(GateRule(name, False, drop_hi, m, detail, UNDECIDED, EXIT_INFRASTRUCTURE, ev))
    return rules


def _pair_labels(cand: Any, base: Any, rule: str) -> Any:
    """The rows both judges decided, with ``slice``, ``drop`` (the human passed the baseline's answer and
    failed the candidate's), ``won`` (the other way round) and ``weight`` (1 / probability where one draw
    labelled both runs, as :func:`goldenkit.results.judge_difference` uses them; 0 elsewhere)."""

    def side(run: Any) -> Any:
        rows = judge_rows(run, by="slice", rule=rule)
        drawn = {r for rd in read_rounds(run) for r in rd.drawn}
        used = (rows["label"] == "designed") & ~rows["row_id"].isin(drawn)
        return rows.assign(used=used)[["row_id", "slice", "judge", "human", "probability", "used"]]

    pair = side(cand).merge(side(base).drop(columns=["slice"]), on="row_id", suffixes=("_c", "_b"))
    pair = pair[pair["judge_c"].isin(["PASS", "FAIL"]) & pair["judge_b"].isin(["PASS", "FAIL"])]
    same = pair["used_c"] & pair["used_b"] & np.isclose(pair["probability_c"], pair["probability_b"], rtol=0)
    prob = pair["probability_c"].to_numpy(dtype=float)
    weight = np.where(same, 1.0 / np.where(same, prob, 1.0), 0.0)
    drop = (pair["human_b"] == "PASS") & (pair["human_c"] == "FAIL")
    won = (pair["human_b"] == "FAIL") & (pair["human_c"] == "PASS")
    out = pair.assign(drop=drop.to_numpy(dtype=float), won=won.to_numpy(dtype=float), weight=weight)
    return out[["slice", "drop", "won", "weight"]]


def _judge_alone(rule: GateRule, judge_is_the_grader: bool, backed: set[str]) -> bool:
    """Does a passed quality rule rest on the judge's verdicts alone? ``backed``: the judge-graded rules
    that passed prediction-powered (a row rule of their kind rests on human labels too)."""
    if rule.name.startswith(("judge_pass_rate", "judge.non_inferiority")):
        return rule.name not in backed
    if not (judge_is_the_grader and rule.name.startswith(_ROW_RULES)):
        return False
    return ("judge.non_inferiority" if rule.kind == "regression" else "judge_pass_rate") not in backed


def self_preference_rule(
    man: Mapping[str, Any] | None, rules: Sequence[GateRule], policy: GatePolicy
) -> list[GateRule]:
    """``judge.self_preference`` (exit 3) when a judge of the candidate's family alone makes the gate
    green (module doc); a passed rule saying so when the policy accepts it; nothing otherwise."""
    man = man or {}
    judge_model = str(man.get("judge_version") or "").split("+rubric.")[0] or None
    agent = man.get("agent_version")
    cand_model = agent.get("model_id") if isinstance(agent, Mapping) else None
    flag = self_preference(judge_model, cand_model if isinstance(cand_model, str) else None)
    if flag is None or not flag["flag"]:
        return []
    hard = _hard(man)
    passed = [r for r in rules if r.passed and r.kind in ("regression", "absolute")]
    backed = {r.name for r in passed if r.name.startswith("judge") and "prediction-powered" in r.detail}
    alone = [r for r in passed if _judge_alone(r, hard == {_JUDGE}, backed)]
    if not alone:
        return []
    family = flag["family"]
    why = (
        f"the judge (family {family}) shares the candidate's family: its verdicts alone are not evidence; "
        "set [gate] accept_self_preference = true to accept"
    )
    evidence = f"{flag['why']}; rules green on the judge's verdicts alone: {', '.join(r.name for r in alone)}"
    if policy.accept_self_preference:
        detail = f"the judge (family {family}) shares the candidate's family: accepted (accept_self_preference = true)"
        return [GateRule("judge.self_preference", True, None, None, detail, UNDECIDED, EXIT_INFRASTRUCTURE, evidence)]
    return [GateRule("judge.self_preference", False, None, None, why, UNDECIDED, EXIT_INFRASTRUCTURE, evidence)]


def judge_rules(
    run: Any, baseline: Any, man: Mapping[str, Any] | None, rules: Sequence[GateRule], policy: GatePolicy
) -> list[GateRule]:
    """The judge-graded rules of a gate whose other ``rules`` are checked (module doc); ``baseline`` None
    when the gate compares no pair."""
    out = judge_rate_rule(run, policy) + judge_pair_rules(run, baseline, policy)
    return out + self_preference_rule(man, [*rules, *out], policy)
