"""The sequential gate: a run that stops as soon as the evidence decides, and the same decision read back.

``goldenkit run DATASET ... --baseline REF --sequential`` runs the rows in a design order
(:func:`sequential_order`: within each slice by a seeded hash, the slices merged at their
share, so every slice advances at its share) against the baseline's collapsed verdicts, with
decided repeats stopped (the run's monitor, :func:`goldenkit.gate.sequential_gate`, is
:mod:`goldenkit.gate._sequential_monitor`). After each row, in that order (rows finish out of order: the longest
finished prefix is read; after every row while few are read, then after every 1% more, which
finds a decision at the row it was reached), :func:`decide_sequential` composes the
one-row-at-a-time statistics of :func:`goldenkit.stats.sequential_paired_test` per the policy:

* **regression** (exit 2): an e-process on the discordant pairs, for the overall rows and
  every critical slice (and every other slice when ``fail_on_slices``): a family of ``k``
  members, each at ``alpha / k`` (e-Bonferroni), so the false-fail rate under no change is at
  most ``alpha`` whenever the run stops;
* **non-inferiority** (exit 0): the confidence sequence's upper bound of the mean drop under the
  margin, overall AND on every critical slice, each at ``alpha`` (intersection-union: a pass
  needs every member, so no split): the false-pass rate at the margin is at most ``alpha``.

Otherwise the run goes on, up to its budget (``--max-rows``, default every row): then exit 3,
"not enough evidence", with the rows it would still need (an estimate from the bound's width).
The policy's other rules (error rates, absolute thresholds) are the fixed-size gate's without its
regression rules, applied to the outcomes of the rows read (point rules with no error rate of
their own, as they are on a full run); what they fail fails the decision, in the run's exit code
and the gate's alike.

What a row is worth: only rows whose baseline verdict is PASS or FAIL are in the design (the
others cannot be evidence and are not run); the population of each member is their count. A
candidate row PASS or FAIL is paired evidence; a candidate ERROR of its own (``refused``,
``agent``: :func:`goldenkit.schema.counts_against_candidate`) counts as FAIL, as the ledger
counts it against the candidate; any other ERROR (an outage) or SKIPPED is no evidence and is
passed over (the population is kept, which only widens the bound).

run.json's ``sequential`` records the seed, the rows read in order, the populations, the
decision with its exit code and the statistics at the stop; :func:`evaluate_sequential` (what
``goldenkit gate`` does with such a run) applies :func:`decide_sequential` to the recorded rows
again. :func:`goldenkit.gate._replay.replay_sequential` (``goldenkit gate --replay-sequential``)
replays the procedure over random orders of a full run: when it would have stopped, and the calls
it would have saved.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.compare import comparability_differences, compare_runs, side_problems
from goldenkit.errors import (
    EXIT_COMPARISON_INVALID,
    EXIT_GATE_FAILED,
    EXIT_INFRASTRUCTURE,
    EXIT_OK,
    ConfigError,
)
from goldenkit.gate._policy import GateDecision, GatePolicy, GateRule
from goldenkit.results import SEQUENTIAL
from goldenkit.schema import ERROR, FAIL, PASS, counts_against_candidate
from goldenkit.stats import OVERALL, SequentialTest, collapse_repeats, sequential_paired_test, sequential_path

__all__ = [
    "EXIT_CODES",
    "ReadRows",
    "SequentialDecision",
    "baseline_values",
    "candidate_values",
    "decide_sequential",
    "evaluate_sequential",
    "sequential_order",
    "sequential_record",
]

EXIT_CODES = {"regression": EXIT_GATE_FAILED, "non_inferior": EXIT_OK, "undecided": EXIT_INFRASTRUCTURE}
_UNGRADED = ["without a graded row (every row SKIPPED or ERROR): nothing to pair"]  # a baseline that is not evidence


def sequential_order(rows: Sequence[tuple[str, str]], seed: int) -> list[str]:
    """The design order of ``(row_id, slice)`` rows: within a slice by the hex SHA-256 of
    ``"{seed}:{slice}:{id}"`` (the sample rule's hash), then the slices merged by each row's
    fractional position ``(i + 1/2) / n`` in its slice (ties by slice name), so after any prefix
    every slice has run its share of its rows, to within one row.

    >>> sequential_order([("a1", "a"), ("a2", "a"), ("b1", "b")], 0)
    ['a1', 'b1', 'a2']
    """
    per: dict[str, list[str]] = {}
    for rid, sl in rows:
        per.setdefault(str(sl), []).append(str(rid))
    keyed: list[tuple[float, str, str]] = []
    for sl, ids in per.items():
        ids.sort(key=lambda rid: hashlib.sha256(f"{seed}:{sl}:{rid}".encode()).hexdigest())
        keyed += [((i + 0.5) / len(ids), sl, rid) for i, rid in enumerate(ids)]
    return [rid for _, _, rid in sorted(keyed)]


# --------------------------------------------------------------------------- what a row is worth


def baseline_values(collapsed: pd.DataFrame) -> dict[str, tuple[str, int]]:
    """The baseline's rows that can be evidence: row id -> (slice, 1 PASS / 0 FAIL)."""
    verdict = collapsed["verdict"].astype(str).to_numpy()
    undecided = collapsed["undecided"].to_numpy(dtype=bool) if "undecided" in collapsed.columns else None
    slices = collapsed["slice"].astype(str).to_numpy()
    out = {}
    for i, rid in enumerate(collapsed["row_id"].astype(str)):
        if verdict[i] in (PASS, FAIL) and not (undecided is not None and undecided[i]):
            out[rid] = (str(slices[i]), int(verdict[i] == PASS))
    return out


def candidate_values(collapsed: pd.DataFrame) -> dict[str, int | None]:
    """The candidate's rows: 1 PASS, 0 FAIL or an error of its own, None (no evidence) otherwise."""
    verdict = collapsed["verdict"].astype(str).to_numpy()
    kinds = collapsed["error_kind"].to_numpy(dtype=object) if "error_kind" in collapsed.columns else None
    out: dict[str, int | None] = {}
    for i, rid in enumerate(collapsed["row_id"].astype(str)):
        v = verdict[i]
        if v in (PASS, FAIL):
            out[rid] = int(v == PASS)
        elif v == ERROR and kinds is not None and counts_against_candidate(kinds[i]):
            out[rid] = 0
        else:
            out[rid] = None
    return out


# --------------------------------------------------------------------------- the decision


@dataclass(frozen=True)
class SequentialDecision:
    """The sequential gate's decision after the rows read so far (see :func:`decide_sequential`)."""

    decision: str  # regression | non_inferior | undecided
    rows_run: int  # rows read when it decided (all read when undecided)
    rows_total: int
    stopped_because: str
    members: dict[str, SequentialTest] = field(default_factory=dict)
    rows_needed: int | None = None  # undecided: an estimate of the further rows it would need

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.decision]

    def line(self) -> str:
        """``stopped after 212 of 400 rows: regression on refunds shown``."""
        return f"stopped after {self.rows_run} of {self.rows_total} rows: {self.stopped_because}"


def _members(policy: GatePolicy, slices: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the regression family, the non-inferiority members) among the overall rows and ``slices``."""
    critical = list(policy.critical)
    others = [s for s in sorted(slices) if s not in critical] if policy.fail_on_slices else []
    return [OVERALL, *critical, *others], [OVERALL, *critical]


class ReadRows:
    """The rows read so far, as arrays grown in place (the decision after each row reads them whole):
    ``slices``, ``base`` (1 PASS, 0 FAIL) and ``cand`` (1, 0, or -1 for no evidence)."""

    def __init__(self, rows: Sequence[tuple[str, int, int | None]] = (), capacity: int = 64) -> None:
        self.n = 0
        self.slices = np.empty(max(capacity, len(rows), 1), dtype=object)
        self.base = np.zeros(len(self.slices), dtype=np.int8)
        self.cand = np.zeros(len(self.slices), dtype=np.int8)
        for row in rows:
            self.append(*row)

    def __len__(self) -> int:
        return self.n

    def append(self, slice_name: str, base: int, cand: int | None) -> None:
        if self.n == len(self.slices):
            grow = len(self.slices)
            self.slices = np.concatenate([self.slices, np.empty(grow, dtype=object)])
            self.base, self.cand = (np.concatenate([a, np.zeros(grow, dtype=np.int8)]) for a in (self.base, self.cand))
        self.slices[self.n], self.base[self.n] = slice_name, base
        self.cand[self.n] = -1 if cand is None else cand
        self.n += 1


def decide_sequential(
    rows: ReadRows | Sequence[tuple[str, int, int | None]],
    populations: Mapping[str, int],
    policy: GatePolicy,
    rows_total: int,
) -> SequentialDecision:
    """The decision of the gate after ``rows`` (``(slice, base 0/1, cand 0/1 or None)`` in the order
    run): the first row where a member of the regression family shows a regression, or where the
    overall rows and every critical slice have shown non-inferiority (see the module doc).
    ``populations``: each member's rows in the design (:data:`goldenkit.stats.OVERALL` for all)."""
    margin = policy.non_inferiority_margin
    if margin is None:
        raise ConfigError("the sequential gate needs a non_inferiority_margin ([gate] non_inferiority_margin)")
    read = rows if isinstance(rows, ReadRows) else ReadRows(rows)
    n = len(read)
    slices, evidence = read.slices[:n], read.cand[:n] >= 0
    regression, inferiority = _members(policy, [str(p) for p in populations if p != OVERALL])
    r_alpha = policy.alpha / len(regression)  # e-Bonferroni over the regression family
    members: dict[str, SequentialTest] = {}
    reg_at: list[tuple[int, str]] = []
    ni_at: list[int] = []
    for name in regression:
        population = int(populations.get(name, 0))
        if population < 1:
            continue
        where = np.flatnonzero(evidence if name == OVERALL else evidence & (slices == name))
        base, cand = read.base[where], read.cand[where]
        test = sequential_paired_test(
            base, cand, population=population, alpha=policy.alpha, margin=margin, regression_alpha=r_alpha
        )
        members[name] = test
        # every member's e-process is watched past its own non-inferiority: the gate decides when all have
        crossed = where[:0]
        if where.size:
            path = sequential_path(base, cand, population=population, alpha=policy.alpha, regression_alpha=r_alpha)
            crossed = np.flatnonzero(np.log(path["e_value"]) >= math.log(1.0 / r_alpha))
        if crossed.size:
            reg_at.append((int(where[crossed[0]]) + 1, name))
        if name in inferiority and test.step is not None and test.decision == "non_inferior":
            ni_at.append(int(where[test.step - 1]) + 1)
    all_ni = len(ni_at) == len(inferiority) and all(n in members for n in inferiority)
    ni_step = max(ni_at) if all_ni and ni_at else None
    if reg_at and (ni_step is None or min(reg_at)[0] <= ni_step):
        step, name = min(reg_at)
        where_ = "overall" if name == OVERALL else f"on {name}"
        return SequentialDecision("regression", step, rows_total, f"regression {where_} shown", members)
    if ni_step is not None:
        crit = f" and on every critical slice ({', '.join(policy.critical)})" if policy.critical else ""
        why = f"non-inferiority shown overall{crit} (margin {margin:g})"
        return SequentialDecision("non_inferior", ni_step, rows_total, why, members)
    missing = [n for n in inferiority if n not in members]
    why = "undecided" + (f" (no row of critical slice {', '.join(missing)} can be evidence)" if missing else "")
    need = _rows_needed(members, inferiority, populations, n, rows_total)
    return SequentialDecision("undecided", n, rows_total, why, members, need)


def _rows_needed(
    members: Mapping[str, SequentialTest],
    inferiority: Sequence[str],
    populations: Mapping[str, int],
    rows_read: int,
    rows_total: int,
) -> int | None:
    """An estimate of the further rows an undecided run needs: the bound's half-width shrinks like
    1/sqrt(rows), so a member at drop ``d`` with half-width ``h`` after ``t`` rows needs about
    ``t (h / (margin - d))^2`` (scaled to all rows by its share); None when a drop at or over the
    margin makes non-inferiority out of reach at this rate. Never more than the rows left: at the last row
    the bound is the exact drop."""
    worst = rows_read
    for name in inferiority:
        t = members.get(name)
        if t is None or t.decision == "non_inferior":
            continue
        if t.rows == 0:
            return max(rows_total - rows_read, 0) or None
        drop = 0.0 if math.isnan(t.drop) else t.drop
        room, half = t.margin - drop, max(t.drop_high - drop, 0.0)
        if room <= 0:
            return None
        share = max(populations.get(name, 1), 1) / max(populations.get(OVERALL, 1), 1)
        worst = max(worst, math.ceil(t.rows * (half / room) ** 2 / share))
    return min(max(worst - rows_read, 0), rows_total - rows_read) if rows_total > rows_read else None


def _side_table(side: Any, rule: str) -> pd.DataFrame:
    """A side's collapsed rows: a snapshot's saved table, else its outcomes collapsed under ``rule``."""
    saved = getattr(side, "collapsed", None)
    if callable(saved):
        return pd.DataFrame(saved())
    cols = ["row_id", "slice", "repeat", "verdict", "error_kind"]
    return collapse_repeats(side.outcomes(columns=cols), rule)


# --------------------------------------------------------------------------- the gate on such a run


def sequential_record(manifest: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """run.json's ``sequential`` when the run is a sequential run, else None."""
    rec = (manifest or {}).get(SEQUENTIAL)
    return dict(rec) if isinstance(rec, Mapping) and isinstance(rec.get("rows"), list) else None


def evaluate_sequential(
    run: Any, baseline: Any, policy: GatePolicy, *, read_rules: Callable[[pd.DataFrame], GateDecision] | None = None
) -> GateDecision:
    """The gate on a sequential run: the recorded rows read again, in their order, against ``baseline``
    by :func:`decide_sequential` (the decision and exit code the run reached, under the same policy).
    ``read_rules``: the gate's other rules (error rates, absolute thresholds: the fixed-size gate without
    its regression rules) applied to the outcomes of the rows read; what they fail fails the decision."""
    man = dict(getattr(run, "manifest", None) or {})
    rec = sequential_record(man) or {}
    rules: list[GateRule] = []
    for why in side_problems(man, None, candidate=True):
        rules.append(GateRule("run.evidence", False, None, None, f"the run is {why}", "infrastructure", 3))
    if baseline is None:
        rules.append(GateRule("baseline", False, None, None, "no baseline: pass --baseline", "regression"))
        return GateDecision(rules=rules)
    bman = dict(getattr(baseline, "manifest", None) or {})
    for why in side_problems(bman, None) + ([] if baseline_values(_side_table(baseline, policy.rule)) else _UNGRADED):
        rules.append(GateRule("baseline.evidence", False, None, None, f"baseline is {why}", "infrastructure", 3))
    diffs = comparability_differences(bman, man, base_rule=policy.rule, cand_rule=policy.rule)
    if diffs:
        detail = "baseline not comparable: " + "; ".join(diffs)
        rules.append(GateRule("baseline.comparable", False, None, None, detail, "protocol", EXIT_COMPARISON_INVALID))
        return GateDecision(rules=rules)

    comparison = compare_runs(baseline, run, rule=policy.rule, alpha=policy.alpha)
    decision = _recorded_decision(rec, comparison, policy)
    if isinstance(decision, str):  # the rows read are not the seed's design order: no sequential evidence
        rules.append(GateRule("sequential.order", False, None, None, decision, "infrastructure", EXIT_INFRASTRUCTURE))
        return GateDecision(rules=rules, comparison=comparison)
    if read_rules is not None:
        rules += _rules_over_rows_read(run, rec, read_rules)
    rules.append(_decision_rule(decision, rec))
    return GateDecision(rules=rules, comparison=comparison)


def _rules_over_rows_read(
    run: Any, rec: Mapping[str, Any], read_rules: Callable[[pd.DataFrame], GateDecision]
) -> list[GateRule]:
    """The gate's rules other than regression on the outcomes of the rows read (the sequential decision is
    the quality rule: the fixed gate's "no quality rule" is not one)."""
    read = {str(r) for r in rec.get("rows") or []}
    cols = ["row_id", "slice", "split", "tags", "repeat", "verdict", "error_kind", "graders"]
    frame = run.outcomes(columns=cols)
    frame = frame[frame["row_id"].astype(str).isin(read).to_numpy()].reset_index(drop=True)
    out = []
    for rule in read_rules(frame).rules:
        if rule.name != "quality":
            out.append(replace(rule, detail=f"{rule.detail} (over the {len(read)} rows read)"))
    return out


def _recorded_decision(rec: Mapping[str, Any], comparison: Any, policy: GatePolicy) -> SequentialDecision | str:
    """The decision on the recorded rows, or why they are not a sequential run's evidence: the design (the
    baseline's graded rows), its populations and the order are drawn again from the recorded seed, and the
    rows read must be that order's first rows (an order chosen, edited or drawn again after rows were seen
    voids the guarantee: the confidence sequence holds over a random order only)."""
    base = baseline_values(comparison.base_collapsed)
    cand = candidate_values(comparison.cand_collapsed)
    read = [str(r) for r in rec.get("rows") or []]
    unknown = [r for r in read if r not in base]
    if unknown:
        raise ConfigError(
            f"the sequential run read row(s) the baseline did not grade ({', '.join(unknown[:3])}): "
            "gate it against the baseline it ran against"
        )
    seed = rec.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        return f"run.json's sequential record has no whole-number seed (got {seed!r}): its order cannot be checked"
    design = [(rid, sl) for rid, (sl, _) in base.items()]
    order = sequential_order(design, seed)
    wrong = next((i for i, rid in enumerate(read) if i >= len(order) or order[i] != rid), None)
    if wrong is not None:
        return (
            f"row {wrong + 1} read ({read[wrong]}) is not row {wrong + 1} of the order seed {seed} draws over the "
            f"baseline's {len(order)} graded rows: the rows were chosen, edited or re-ordered, so the sequential "
            "decision is not evidence; resume the run without --sequential to a full run and gate that"
        )
    populations: dict[str, int] = {OVERALL: len(design)}
    for _, sl in design:
        populations[sl] = populations.get(sl, 0) + 1
    rows = [(base[r][0], base[r][1], cand.get(r)) for r in read]
    return decide_sequential(rows, populations, policy, len(design))


def _decision_rule(d: SequentialDecision, rec: Mapping[str, Any]) -> GateRule:
    stats = d.members.get(OVERALL)
    ev = f"{d.rows_run} of {d.rows_total} rows read"
    if stats is not None:
        ev += f"; overall b={stats.b} broke, c={stats.c} fixed, e-value {stats.e_value:.3g}"
        ev += f", drop <= {stats.drop_high:.4f} (margin {stats.margin:g})"
    detail = d.line()
    if d.decision == "undecided":
        budget = rec.get("max_rows")
        detail = f"sequential: {d.rows_run} of {d.rows_total} rows read" + (f" (budget {budget})" if budget else "")
        detail += ", not enough evidence either way"
        if d.rows_needed is not None:
            detail += f"; about {d.rows_needed} more rows would be needed (estimate)"
        return GateRule("sequential", False, None, None, detail, "undecided", EXIT_INFRASTRUCTURE, evidence=ev)
    if d.decision == "regression":
        return GateRule("sequential", False, None, None, detail, "regression", EXIT_GATE_FAILED, evidence=ev)
    return GateRule("sequential", True, None, None, detail, "regression", evidence=ev)


publish(globals())
