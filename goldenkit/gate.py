"""The quality gate: a policy in, a decision out. No I/O.

:func:`evaluate_gate` checks a run's outcomes (and, for regression rules, a
:class:`goldenkit.compare.Comparison` against a baseline) against a
:class:`GatePolicy` and returns a :class:`GateDecision`; the caller decides
what to do with it (``decision.raise_for_failure()``, or the CLI's exit code).

Exit codes of a decision: 0 passed · 2 a quality rule failed (also an empty or
fully skipped run, and a missing baseline) · 3 the run is not evidence (run
INVALID, or its error rate over ``max_error_rate``) · 4 the baseline cannot be
compared with the run (another protocol). When several rules fail, 3 wins over
4, and 4 over 2.

Configuration: the ``[gate]`` table of goldenkit.toml
------------------------------------------------------

::

    [gate]
    rule = "majority"                # collapse rule for repeats: majority | all | any | at_least:K
    min_pass_rate = 0.85             # overall pass rate (rows, after collapsing) must be >= this
    min_wilson_lower = 0.80          # overall Wilson 95% lower bound must be >= this
    per_slice_min_pass_rate = 0.70   # every slice's pass rate must be >= this
    per_slice_min_wilson_lower = 0.5 # every slice's Wilson lower bound must be >= this
    max_hallucination_rate = 0.02    # share of graded attempts the hallucination grader failed
    hallucination_grader = "hallucination"   # grader whose failure counts as a hallucination
    max_error_rate = 0.02            # ERROR attempts / all attempts; over it: exit 3 (default 0.02)
    regression = true                # compare against a baseline (default true; a missing one fails)
    baseline = "main"                # default baseline (name or run); --baseline overrides
    alpha = 0.05                     # significance level of the regression rules
    critical = ["refunds"]           # slices forming their own Holm family
    non_inferiority_margin = 0.03    # fail when the upper bound of the paired drop exceeds this

    [gate.slices.refunds]            # per-slice absolute thresholds (override the per_slice_ ones)
    min_pass_rate = 0.90
    min_wilson_lower = 0.80

All keys are optional; an absent threshold is not checked. Unknown keys and
values of the wrong type are a :class:`goldenkit.errors.ConfigError`.

Rules
-----
* ``run.validity`` (exit 3): the run's manifest says INVALID.
* ``error_rate`` (exit 3): ERROR attempts over all attempts exceed ``max_error_rate``.
* ``run.graded`` (exit 2): no row has a PASS/FAIL (empty or fully skipped run).
* ``pass_rate``, ``wilson_lower``, ``pass_rate[SLICE]``, ``wilson_lower[SLICE]``,
  ``hallucination_rate`` (exit 2): absolute thresholds; a NaN actual (no rows) fails.
* ``baseline`` (exit 2): regression is on and there is no baseline.
  ``baseline.comparable`` (exit 4): the baseline is from another protocol.
* ``regression.overall`` (exit 2): fails when ``b > c`` and the overall exact
  McNemar ``p < alpha``.
* ``regression.critical[SLICE]`` (exit 2): the critical slices are one Holm
  family; a slice fails when ``b > c`` and its adjusted ``p < alpha``.
* ``regression.slice[SLICE]`` (exit 2): all other slices are another Holm
  family, same test. A slice with ``b > c`` whose raw p is below alpha but
  whose adjusted p is not is listed in ``decision.review``, not failed.
* ``non_inferiority`` (exit 2): the upper bound of the paired drop
  (base minus candidate, Newcombe interval) must not exceed the margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from goldenkit.errors import (
    EXIT_COMPARISON_INVALID,
    EXIT_GATE_FAILED,
    EXIT_INFRASTRUCTURE,
    EXIT_OK,
    ComparisonInvalid,
    ConfigError,
    GateFailed,
    InfrastructureError,
)
from goldenkit.schema import INVALID
from goldenkit.stats import collapse_repeats, holm, parse_rule, slice_table

__all__ = ["GateDecision", "GatePolicy", "GateRule", "evaluate_gate"]

_SLICE_KEYS = ("min_pass_rate", "min_wilson_lower")


def _rate(where: str, key: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= float(v) <= 1.0:
        raise ConfigError(f"{where}: {key} must be a number in [0, 1], got {v!r}")
    return float(v)


@dataclass(frozen=True)
class GatePolicy:
    """What the gate checks; built from ``[gate]`` by :meth:`from_config`."""

    rule: str = "majority"
    min_pass_rate: float | None = None
    min_wilson_lower: float | None = None
    per_slice_min_pass_rate: float | None = None
    per_slice_min_wilson_lower: float | None = None
    slices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    max_hallucination_rate: float | None = None
    hallucination_grader: str = "hallucination"
    max_error_rate: float | None = 0.02
    regression: bool = True
    baseline: str | None = None
    alpha: float = 0.05
    critical: tuple[str, ...] = ()
    non_inferiority_margin: float | None = None

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, where: str = "[gate]") -> GatePolicy:
        """Validate the ``[gate]`` table (a dict) and build the policy."""
        cfg = dict(cfg or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        kw: dict[str, Any] = {}
        for key in (
            "min_pass_rate",
            "min_wilson_lower",
            "per_slice_min_pass_rate",
            "per_slice_min_wilson_lower",
            "max_hallucination_rate",
            "max_error_rate",
            "non_inferiority_margin",
        ):
            if key in cfg and cfg[key] is not None:
                kw[key] = _rate(where, key, cfg[key])
        if "alpha" in cfg:
            a = _rate(where, "alpha", cfg["alpha"])
            if not 0.0 < a < 1.0:
                raise ConfigError(f"{where}: alpha must be in (0, 1), got {a!r}")
            kw["alpha"] = a
        if "rule" in cfg:
            try:
                parse_rule(cfg["rule"])
            except Exception:
                raise ConfigError(
                    f"{where}: rule must be majority, all, any or at_least:K, got {cfg['rule']!r}"
                ) from None
            kw["rule"] = cfg["rule"]
        for key in ("hallucination_grader", "baseline"):
            if key in cfg and cfg[key] is not None:
                if not isinstance(cfg[key], str) or not cfg[key]:
                    raise ConfigError(f"{where}: {key} must be a non-empty string, got {cfg[key]!r}")
                kw[key] = cfg[key]
        if "regression" in cfg:
            if not isinstance(cfg["regression"], bool):
                raise ConfigError(f"{where}: regression must be true or false, got {cfg['regression']!r}")
            kw["regression"] = cfg["regression"]
        if "critical" in cfg:
            crit = cfg["critical"]
            if not isinstance(crit, list) or not all(isinstance(s, str) and s for s in crit):
                raise ConfigError(f"{where}: critical must be a list of slice names, got {crit!r}")
            kw["critical"] = tuple(dict.fromkeys(crit))
        if "slices" in cfg:
            sl = cfg["slices"]
            if not isinstance(sl, dict):
                raise ConfigError(f"{where}: slices must be a table of [gate.slices.NAME] tables")
            out: dict[str, dict[str, float]] = {}
            for name, t in sl.items():
                w = f"{where}.slices.{name}"
                if not isinstance(t, dict):
                    raise ConfigError(f"{w}: must be a table")
                bad = sorted(set(t) - set(_SLICE_KEYS))
                if bad:
                    raise ConfigError(f"{w}: unknown key(s) {', '.join(bad)}; known: {', '.join(_SLICE_KEYS)}")
                out[str(name)] = {k: _rate(w, k, v) for k, v in t.items()}
            kw["slices"] = out
        return cls(**kw)


@dataclass(frozen=True)
class GateRule:
    """One checked rule: ``actual`` compared with ``threshold``."""

    name: str
    passed: bool
    actual: float | None
    threshold: float | None
    detail: str
    kind: str = "absolute"  # absolute | regression | infrastructure | protocol
    exit_code: int = EXIT_GATE_FAILED  # the exit code this rule forces when it fails

    def to_dict(self) -> dict[str, Any]:
        def num(x: float | None) -> float | None:
            return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

        return {
            "name": self.name,
            "passed": self.passed,
            "actual": num(self.actual),
            "threshold": num(self.threshold),
            "detail": self.detail,
            "kind": self.kind,
        }


@dataclass
class GateDecision:
    """The gate's verdict: ``passed``, ``exit_code``, every ``rules`` entry and ``review``."""

    rules: list[GateRule]
    review: list[str] = field(default_factory=list)
    comparison: Any = field(default=None, repr=False)

    @property
    def failed_rules(self) -> list[GateRule]:
        return [r for r in self.rules if not r.passed]

    @property
    def exit_code(self) -> int:
        codes = {r.exit_code for r in self.failed_rules}
        for code in (EXIT_INFRASTRUCTURE, EXIT_COMPARISON_INVALID, EXIT_GATE_FAILED):
            if code in codes:
                return code
        return EXIT_OK

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    def summary(self) -> str:
        """One line: PASSED, or FAILED naming the failed rules."""
        if self.passed:
            return f"gate PASSED ({len(self.rules)} rules)"
        return "gate FAILED: " + "; ".join(f"{r.name}: {r.detail}" for r in self.failed_rules)

    def format(self) -> str:
        """Every rule on its own line, then the review list and the summary."""
        lines = []
        for r in self.rules:
            mark = "PASS" if r.passed else "FAIL"
            lines.append(f"[{mark}] {r.name}: {r.detail}")
        for s in self.review:
            lines.append(f"[REVIEW] slice {s}: raw p below alpha, not significant after Holm")
        lines.append(self.summary())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "rules": [r.to_dict() for r in self.rules],
            "review": list(self.review),
        }

    def raise_for_failure(self) -> None:
        """Raise InfrastructureError (exit 3), ComparisonInvalid (4) or GateFailed (2); None when passed."""
        code = self.exit_code
        if code == EXIT_OK:
            return
        msg = self.summary()
        if code == EXIT_INFRASTRUCTURE:
            raise InfrastructureError(msg)
        if code == EXIT_COMPARISON_INVALID:
            raise ComparisonInvalid(msg, [r.detail for r in self.failed_rules if r.exit_code == code])
        raise GateFailed(msg, decision=self)


# --------------------------------------------------------------------------- evaluation


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.4f}"


def _min_rule(name: str, actual: float, threshold: float, what: str) -> GateRule:
    ok = not math.isnan(actual) and actual >= threshold
    return GateRule(name, ok, actual, threshold, f"{what} {_fmt(actual)} {'>=' if ok else '<'} {threshold:.4f}")


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


def _inputs(run: Any, manifest: Mapping[str, Any] | None, rule: str) -> tuple[pd.DataFrame | None, pd.DataFrame, dict]:
    """(outcomes or None, collapsed rows, manifest) from a DataFrame, a run or a baseline."""
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
        cols = ["row_id", "slice", "repeat", "verdict", "graders"]
        df = outcomes_fn(columns=cols)
        return df, collapse_repeats(df, rule), man
    raise ConfigError("evaluate_gate needs outcomes (a DataFrame), a run or a baseline")


def evaluate_gate(
    run: Any,
    *,
    policy: GatePolicy,
    comparison: Any = None,
    baseline_missing_reason: str | None = None,
    comparison_invalid: str | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> GateDecision:
    """Check a run against ``policy`` and return the decision (never raises for a failed gate).

    ``run`` is an outcome DataFrame (row x repeat), a collapsed table, a run
    (``.manifest`` + ``.outcomes()``) or a baseline (``.collapsed()``).
    ``comparison`` is ``compare_runs(baseline, run)``; when regression is on
    and it is None, the ``baseline`` rule fails with ``baseline_missing_reason``.
    ``comparison_invalid`` is the message of the ComparisonInvalid raised when
    the baseline was compared (exit 4). ``manifest`` (the run.json dict)
    supplies validity when ``run`` is a bare DataFrame.
    """
    outcomes, collapsed, man = _inputs(run, manifest, policy.rule)
    table = slice_table(collapsed, rule=policy.rule)
    overall = table.iloc[-1]
    rules: list[GateRule] = []

    # --- is the run evidence at all?
    if man.get("validity") == INVALID:
        reason = man.get("invalid_reason") or "run.json says INVALID"
        rules.append(GateRule("run.validity", False, None, None, f"run is INVALID: {reason}", "infrastructure", 3))
    attempts = int(overall["attempts"])
    errors = int(overall["error"])
    err_rate = errors / attempts if attempts else float("nan")
    if policy.max_error_rate is not None:
        ok = attempts > 0 and err_rate <= policy.max_error_rate
        detail = (
            f"error rate {_fmt(err_rate)} ({errors}/{attempts} attempts) "
            f"{'<=' if ok else '>'} {policy.max_error_rate:.4f}" + ("" if ok else ": the run is not evidence")
        )
        if attempts == 0:
            detail = "no attempts: nothing was run"
            ok = True  # an empty run is a quality failure (run.graded), not an infrastructure one
        rules.append(GateRule("error_rate", ok, err_rate, policy.max_error_rate, detail, "infrastructure", 3))
    n_graded = int(overall["n"])
    if n_graded == 0:
        what = "empty run" if int(overall["rows"]) == 0 else "no row was graded (all skipped or errored)"
        rules.append(GateRule("run.graded", False, 0.0, None, what, "absolute"))
    else:
        rules.append(GateRule("run.graded", True, float(n_graded), None, f"{n_graded} rows graded", "absolute"))

    # --- absolute thresholds
    if policy.min_pass_rate is not None:
        rules.append(_min_rule("pass_rate", float(overall["p_hat"]), policy.min_pass_rate, "pass rate"))
    if policy.min_wilson_lower is not None:
        rules.append(_min_rule("wilson_lower", float(overall["ci_low"]), policy.min_wilson_lower, "Wilson lower bound"))
    per_slice = table.iloc[:-1].set_index("slice")
    for name in per_slice.index:
        own = policy.slices.get(str(name), {})
        thr_p = own.get("min_pass_rate", policy.per_slice_min_pass_rate)
        thr_w = own.get("min_wilson_lower", policy.per_slice_min_wilson_lower)
        if thr_p is not None:
            rules.append(
                _min_rule(f"pass_rate[{name}]", float(per_slice.at[name, "p_hat"]), thr_p, f"{name} pass rate")
            )
        if thr_w is not None:
            rules.append(
                _min_rule(
                    f"wilson_lower[{name}]", float(per_slice.at[name, "ci_low"]), thr_w, f"{name} Wilson lower bound"
                )
            )
    for name in policy.slices:
        if name not in per_slice.index:
            rules.append(GateRule(f"pass_rate[{name}]", False, None, None, f"slice {name} has no rows in this run"))
    if policy.max_hallucination_rate is not None:
        if outcomes is None:
            rules.append(
                GateRule("hallucination_rate", False, None, policy.max_hallucination_rate,
                         "hallucination rate needs per-attempt grader results (not in a baseline)")
            )  # fmt: skip
        else:
            rate, bad, judged = _hallucination_rate(outcomes, policy.hallucination_grader)
            ok = not math.isnan(rate) and rate <= policy.max_hallucination_rate
            if judged == 0:
                detail = f"no attempt was judged by grader {policy.hallucination_grader!r}"
            else:
                detail = (
                    f"hallucination rate {_fmt(rate)} ({bad}/{judged} judged attempts) "
                    f"{'<=' if ok else '>'} {policy.max_hallucination_rate:.4f}"
                )
            rules.append(GateRule("hallucination_rate", ok, rate, policy.max_hallucination_rate, detail))

    # --- regression against the baseline
    review: list[str] = []
    if policy.regression:
        if comparison_invalid is not None:
            rules.append(
                GateRule("baseline.comparable", False, None, None, f"baseline not comparable: {comparison_invalid}",
                         "protocol", EXIT_COMPARISON_INVALID)
            )  # fmt: skip
        elif comparison is None:
            reason = baseline_missing_reason or "no baseline given (set [gate] baseline or pass --baseline)"
            rules.append(GateRule("baseline", False, None, None, f"no baseline: {reason}", "regression"))
        else:
            rules.extend(_regression_rules(comparison, policy, review))
    return GateDecision(rules=rules, review=review, comparison=comparison)


def _regression_rules(comparison: Any, policy: GatePolicy, review: list[str]) -> list[GateRule]:
    out: list[GateRule] = []
    alpha = policy.alpha
    t = comparison.table
    ov = t.iloc[-1]
    b, c, p = int(ov["b"]), int(ov["c"]), float(ov["p_val"])
    fail = b > c and p < alpha
    out.append(
        GateRule("regression.overall", not fail, p, alpha,
                 f"overall b={b} broke, c={c} fixed, exact McNemar p={_fmt(p)}"
                 + (f" < {alpha}: significant regression" if fail else ""), "regression")
    )  # fmt: skip
    sl = t.iloc[:-1]
    names = [str(s) for s in sl["slice"]]
    crit = [s for s in policy.critical if s in names]
    for s in policy.critical:
        if s not in names:
            out.append(
                GateRule(f"regression.critical[{s}]", False, None, alpha,
                         f"critical slice {s} has no rows in the comparison", "regression")
            )  # fmt: skip
    other = [s for s in names if s not in policy.critical]
    for family, label in ((crit, "critical"), (other, "slice")):
        if not family:
            continue
        rows = sl.set_index(sl["slice"].astype(str)).loc[family]
        p_raw = rows["p_val"].to_numpy(dtype=float)
        p_adj = holm(p_raw)
        for s, pr, pa, bb, cc in zip(family, p_raw, p_adj, rows["b"], rows["c"], strict=True):
            bb, cc = int(bb), int(cc)
            failed = bb > cc and pa < alpha
            detail = (
                f"{s}: b={bb} broke, c={cc} fixed, p={_fmt(pr)}, Holm p={_fmt(pa)} ({label} family of {len(family)})"
            )
            if failed:
                detail += f" < {alpha}: significant regression"
            elif bb > cc and pr < alpha:
                detail += ": raw p below alpha, flagged for review"
                review.append(s)
            out.append(GateRule(f"regression.{label}[{s}]", not failed, float(pa), alpha, detail, "regression"))
    if policy.non_inferiority_margin is not None:
        m = policy.non_inferiority_margin
        drop_hi = -float(ov["diff_ci_low"])
        ok = not np.isnan(drop_hi) and drop_hi <= m
        out.append(
            GateRule("non_inferiority", ok, drop_hi, m,
                     f"upper bound of the paired drop {_fmt(drop_hi)} {'<=' if ok else '>'} margin {m:.4f}",
                     "regression")
        )  # fmt: skip
    return out
