"""Shadow mode: the sequential gate replayed over random orders of a full run (``goldenkit gate RUN
--baseline REF --replay-sequential [--orders 50]``): when it would have stopped, with which decision,
and the calls it would have saved, so a team can trust it before switching it on.

Each order is the design order a sequential run with that seed would draw
(:func:`goldenkit.gate._sequential.sequential_order`), read by the same decision
(:func:`goldenkit.gate._sequential.decide_sequential`); its calls are those of the rows it read with
decided repeats stopped (:func:`repeats_needed`, by :func:`goldenkit.stats.row_decided`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import ConfigError
from goldenkit.gate._policy import GateDecision, GatePolicy
from goldenkit.gate._sequential import (
    EXIT_CODES,
    _decision_rule,
    baseline_values,
    candidate_values,
    decide_sequential,
    sequential_order,
)
from goldenkit.stats import OVERALL, row_decided

__all__ = ["ReplayResult", "repeats_needed", "replay_sequential"]


@dataclass(frozen=True)
class ReplayResult:
    """:func:`replay_sequential`: per random order, the decision, the rows read and the calls made."""

    seed: int
    decisions: list[str]
    rows: np.ndarray
    calls: np.ndarray
    rows_total: int
    calls_full: int
    #: per order, the exit code a sequential run would have had: the decision's, unless the policy's other
    #: rules over the rows it read (error rates, absolute thresholds) fail it
    exit_codes: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "orders": len(self.decisions),
            "decisions": {d: self.decisions.count(d) for d in sorted(set(self.decisions))},
            "rows": [int(x) for x in self.rows],
            "calls": [int(x) for x in self.calls],
            "rows_total": self.rows_total,
            "calls_full": self.calls_full,
            "exit_codes": {str(c): self.exit_codes.count(c) for c in sorted(set(self.exit_codes))},
        }

    def format(self) -> str:
        n = len(self.decisions)
        counts = ", ".join(
            f"{d} in {self.decisions.count(d)} (exit {EXIT_CODES[d]})"
            for d in ("regression", "non_inferior", "undecided")
            if d in self.decisions
        )
        med_calls = float(np.median(self.calls))
        saved = self.calls_full - med_calls
        own = [EXIT_CODES[d] for d in self.decisions]
        exits = (
            ""
            if not self.exit_codes or self.exit_codes == own
            else "; with the policy's other rules over the rows read: "
        )
        exits += (
            ", ".join(f"exit {c} in {self.exit_codes.count(c)}" for c in sorted(set(self.exit_codes))) if exits else ""
        )
        return "\n".join(
            [
                f"sequential replay over {n} random orders (seed {self.seed}):",
                f"  decision: {counts} of {n} orders{exits}",
                f"  would have stopped after {np.median(self.rows):g} of {self.rows_total} rows "
                f"(median; range {int(self.rows.min())}-{int(self.rows.max())})",
                f"  calls: {med_calls:g} of the fixed-size {self.calls_full} (median; range "
                f"{int(self.calls.min())}-{int(self.calls.max())}): {saved:g} saved "
                f"({saved / max(self.calls_full, 1):.0%})",
            ]
        )


def repeats_needed(outcomes: pd.DataFrame, rule: str, repeats: int) -> dict[str, int]:
    """Per row, the calls a run that stops decided repeats makes: its repeats in order, up to the
    first after which :func:`goldenkit.stats.row_decided` holds."""
    out: dict[str, int] = {}
    frame = outcomes.sort_values(["row_id", "repeat"], kind="stable")
    for rid, group in frame.groupby("row_id", sort=False):
        verdicts = [str(v) for v in group["verdict"]]
        k = next((i for i in range(1, len(verdicts) + 1) if row_decided(verdicts[:i], rule, repeats)), len(verdicts))
        out[str(rid)] = k
    return out


def replay_sequential(
    comparison: Any,
    outcomes: pd.DataFrame,
    policy: GatePolicy,
    *,
    orders: int = 50,
    seed: int = 0,
    read_rules: Callable[[pd.DataFrame], GateDecision] | None = None,
) -> ReplayResult:
    """Replay the sequential gate on a full run over ``orders`` random design orders (seeds
    ``seed``, ``seed + 1``, ...): each order's decision (:func:`decide_sequential`), the rows it
    would have read, and the calls it would have made with decided repeats stopped
    (:func:`repeats_needed`), against the fixed-size run's calls (every outcome of ``outcomes``).
    ``read_rules``: the gate's other rules (:func:`goldenkit.gate._sequential.evaluate_sequential`), applied
    to the outcomes of the rows each order read, for the exit code a sequential run would have had."""
    if orders < 1:
        raise ConfigError(f"--orders must be >= 1 (got {orders})")
    repeats = int(comparison.cand_manifest.get("repeats") or 1)
    base = baseline_values(comparison.base_collapsed)
    cand = candidate_values(comparison.cand_collapsed)
    design = [(rid, base[rid][0]) for rid in cand if rid in base]
    populations: dict[str, int] = {OVERALL: len(design)}
    for _, sl in design:
        populations[sl] = populations.get(sl, 0) + 1
    needed = repeats_needed(outcomes, policy.rule, repeats)
    decisions, rows, calls, codes = [], [], [], []
    for s in range(seed, seed + orders):
        order = sequential_order(design, s)
        d = decide_sequential([(base[r][0], base[r][1], cand[r]) for r in order], populations, policy, len(order))
        decisions.append(d.decision)
        rows.append(d.rows_run)
        calls.append(sum(needed.get(r, repeats) for r in order[: d.rows_run]))
        rules = [_decision_rule(d, {})]
        if read_rules is not None:
            frame = outcomes[outcomes["row_id"].astype(str).isin(set(order[: d.rows_run])).to_numpy()]
            rules += [r for r in read_rules(frame.reset_index(drop=True)).rules if r.name != "quality"]
        codes.append(GateDecision(rules=rules).exit_code)
    full = int(len(outcomes))
    return ReplayResult(seed, decisions, np.array(rows), np.array(calls), len(design), full, exit_codes=codes)


publish(globals())
