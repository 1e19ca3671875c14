"""The sequential gate's monitor of a run: the design order of its rows, the decision after each row read,
and run.json's ``sequential`` record (:class:`SequentialGate`, made by :func:`sequential_gate`).

``goldenkit run DATASET ... --baseline REF --sequential`` hands the runner this monitor
(:class:`goldenkit.runner._sequential.RowMonitor`); the procedure it applies, and the same decision read
back from run.json, are :mod:`goldenkit.gate._sequential`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.compare import side_problems
from goldenkit.errors import ConfigError, InfrastructureError
from goldenkit.gate._policy import GatePolicy
from goldenkit.gate._sequential import (
    _UNGRADED,
    ReadRows,
    SequentialDecision,
    _side_table,
    baseline_values,
    candidate_values,
    decide_sequential,
    sequential_order,
)
from goldenkit.stats import OVERALL, collapse_repeats

__all__ = ["SequentialGate", "sequential_gate"]


class SequentialGate:
    """The monitor of a sequential run (:class:`goldenkit.runner._sequential.RowMonitor`): the design
    order of the run's rows, the decision after each row read, and run.json's ``sequential``."""

    def __init__(
        self, baseline: pd.DataFrame, policy: GatePolicy, *, seed: int, max_rows: int | None, baseline_id: str
    ) -> None:
        margin = policy.non_inferiority_margin
        if margin is None or not 0 < margin < 1:
            raise ConfigError(f"--sequential needs a [gate] non_inferiority_margin in (0, 1) (got {margin})")
        if max_rows is not None and max_rows < 1:
            raise ConfigError(f"--max-rows must be >= 1 (got {max_rows})")
        self.base = baseline_values(baseline)
        self.policy, self.seed, self.max_rows, self.baseline_id = policy, int(seed), max_rows, baseline_id
        self.baseline: Any = None  # the baseline itself (a run or a snapshot), for the gate at the end
        self.rows = ReadRows()
        self.read: list[str] = []
        self.populations: dict[str, int] = {}
        self.total = 0
        self.decision: SequentialDecision | None = None
        self._next = 1  # the rows read at the next decision

    def order(self, rows: Sequence[tuple[str, str]]) -> list[str]:
        """The run's rows that the baseline graded, in the design order; the populations counted."""
        design = [(rid, self.base[rid][0]) for rid, _ in rows if rid in self.base]
        order = sequential_order(design, self.seed)
        self.total = len(order)
        self.populations = {OVERALL: len(order)}
        for _, sl in design:
            self.populations[sl] = self.populations.get(sl, 0) + 1
        return order

    def observe(self, row_id: str, outcomes: list[dict[str, Any]]) -> bool:
        """One more row read, in the design order: True when the decision is reached or the budget spent."""
        sl, base = self.base[row_id]
        cand = _row_value(outcomes, self.policy.rule)
        self.rows.append(sl, base, cand)
        self.read.append(row_id)
        n = len(self.rows)
        budget = self.max_rows is not None and n >= self.max_rows
        if n < self._next and not budget and n < self.total:
            return False
        # decided again after every row while few are read, then after every 1% more: the decision is the
        # first crossing, found at its own row whenever it is computed (at most 1% more rows are read)
        self._next = n + max(1, n // 100)
        self.decision = decide_sequential(self.rows, self.populations, self.policy, self.total)
        return self.decision.decision != "undecided" or budget

    def record(self, *, calls: int, calls_full: int, finished: bool) -> dict[str, Any]:
        """run.json's ``sequential`` (see the module doc)."""
        d = self.decision = decide_sequential(self.rows, self.populations, self.policy, self.total)
        why = d.stopped_because
        if d.decision == "undecided":
            budget = self.max_rows is not None and len(self.rows) >= self.max_rows < self.total
            why = f"budget of {self.max_rows} rows spent, undecided" if budget else "every row run, undecided"
            if not finished:
                why = "interrupted, undecided"
            if d.rows_needed is not None:
                why += f"; about {d.rows_needed} more rows would be needed (estimate)"
        return {
            "seed": self.seed,
            "rows_run": d.rows_run,
            "rows_total": self.total,
            "calls": calls,
            "calls_full": calls_full,
            "decision": d.decision,
            "exit_code": d.exit_code,
            "stopped_because": why,
            "rows_needed": d.rows_needed,
            "baseline": self.baseline_id,
            "max_rows": self.max_rows,
            "alpha": self.policy.alpha,
            "margin": self.policy.non_inferiority_margin,
            "populations": dict(self.populations),
            "rows": self.read[: d.rows_run],  # the rows it decided on (rows read after: not needed)
            "statistics": {name: t.to_dict() for name, t in d.members.items()},
        }


def _row_value(outcomes: list[dict[str, Any]], rule: str) -> int | None:
    """One candidate row's worth (:func:`candidate_values`) from its outcomes."""
    if not outcomes:
        return None
    frame = pd.DataFrame([{"row_id": "r", **o} for o in outcomes])
    if "error_kind" not in frame.columns:
        frame["error_kind"] = None
    return candidate_values(collapse_repeats(frame[["row_id", "repeat", "verdict", "error_kind"]], rule))["r"]


def sequential_gate(baseline: Any, policy: GatePolicy, *, seed: int = 0, max_rows: int | None = None) -> SequentialGate:
    """The monitor of a sequential run against ``baseline`` (a run or a snapshot), under ``policy``; a
    baseline that is not evidence (INVALID, incomplete, short of repeats) is refused before any call."""
    table = _side_table(baseline, policy.rule)
    snapshot = callable(getattr(baseline, "collapsed", None))  # a committed snapshot is named by its name
    names = ("name", "run_id") if snapshot else ("run_id", "name")
    label = str(next((v for v in (getattr(baseline, n, None) for n in names) if v), "baseline"))
    man = dict(getattr(baseline, "manifest", None) or {})
    problems = side_problems(man, table) + ([] if baseline_values(table) else _UNGRADED)
    if problems:
        raise InfrastructureError(f"baseline {label} is not evidence: {'; '.join(problems)}")
    gate = SequentialGate(table, policy, seed=seed, max_rows=max_rows, baseline_id=label)
    gate.baseline = baseline
    return gate


publish(globals())
