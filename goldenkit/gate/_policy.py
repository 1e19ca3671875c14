"""The gate's records: its policy in, its rules and decision out (the rules are in :mod:`goldenkit.gate`).

:class:`GatePolicy` is the ``[gate]`` table of goldenkit.toml, validated:
:meth:`GatePolicy.from_config` raises :class:`goldenkit.errors.ConfigError`
naming the key for an unknown key or a value of the wrong type; absent keys
take the documented defaults. :class:`GateRule` is one checked rule with the
evidence it saw; :class:`GateDecision` is every rule, the exit code they force
(a side not evidence 3, over 4, over 2, over "not enough evidence to decide" 3) and the
slices named for review or as warnings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from goldenkit._text import did_you_mean
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
from goldenkit.stats import parse_rule

__all__ = [
    "ABSOLUTE_THRESHOLDS",
    "DECISION_NAMES",
    "REVIEW_NOTE",
    "UNDECIDED",
    "GateDecision",
    "GatePolicy",
    "GateRule",
]

#: Why a slice is listed in ``decision.review``.
REVIEW_NOTE = (
    "more broke than fixed, one-sided p below alpha before adjustment; listed for review, not failed "
    "(outside the gate's Holm family unless fail_on_slices = true, or not significant after Holm)"
)

_SLICE_KEYS = ("min_pass_rate", "min_wilson_lower")

#: The absolute thresholds of a policy: any of them is a check of quality without a baseline.
ABSOLUTE_THRESHOLDS = (
    "min_pass_rate",
    "min_wilson_lower",
    "per_slice_min_pass_rate",
    "per_slice_min_wilson_lower",
    "max_hallucination_rate",
    "min_negative_case_pass_rate",
)


#: The ``kind`` of a rule whose failure means "not shown either way" (exit 3, below a shown failure's 2).
UNDECIDED = "undecided"

#: The last line of a decision, by exit code: the decision named as the exit code means it.
DECISION_NAMES = {
    EXIT_OK: "PASSED",
    EXIT_GATE_FAILED: "FAILED",
    EXIT_INFRASTRUCTURE: "NOT EVIDENCE",
    EXIT_COMPARISON_INVALID: "COMPARISON INVALID",
}


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
    min_negative_case_pass_rate: float | None = None
    max_error_rate: float | None = 0.02
    regression: bool = True
    baseline: str | None = None
    alpha: float = 0.05
    critical: tuple[str, ...] = ()
    non_inferiority_margin: float | None = 0.05
    fail_on_slices: bool = False
    allowed_regression: float | None = None
    allow_noisy: bool = False
    min_paired_rows: int = 1
    min_paired_share: float = 0.9
    max_new_permanent_errors: int | None = 0
    max_slice_error_rate: float | None = 0.05

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 0.5:
            raise ConfigError(f"GatePolicy: alpha must be in (0, 0.5), got {self.alpha!r}")
        m = self.non_inferiority_margin
        if m is not None and not 0.0 < m < 1.0:
            raise ConfigError(f"GatePolicy: non_inferiority_margin must be in (0, 1) or None (off), got {m!r}")

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, where: str = "[gate]") -> GatePolicy:
        """Validate the ``[gate]`` table (a dict) and build the policy."""
        cfg = dict(cfg or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(cfg) - known)
        if unknown:
            hint = did_you_mean(unknown[0], known)
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}{hint}; known: {', '.join(sorted(known))}")
        kw: dict[str, Any] = {}
        rates = ("max_error_rate", "max_slice_error_rate", "min_paired_share", "allowed_regression")
        for key in (*ABSOLUTE_THRESHOLDS, *rates):
            if key in cfg and cfg[key] is not None:
                kw[key] = _rate(where, key, cfg[key])
        for key, low in (("min_paired_rows", 1), ("max_new_permanent_errors", 0)):
            if key in cfg:
                v = cfg[key]
                if isinstance(v, bool) or not isinstance(v, int) or v < low:
                    raise ConfigError(f"{where}: {key} must be a whole number >= {low}, got {v!r}")
                kw[key] = v
        if "alpha" in cfg:
            a = _rate(where, "alpha", cfg["alpha"])
            if not 0.0 < a < 0.5:
                raise ConfigError(
                    f"{where}: alpha must be in (0, 0.5) (its bounds are two-sided 1 - 2 alpha), got {a!r}"
                )
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
        for key in ("regression", "fail_on_slices", "allow_noisy"):
            if key in cfg:
                if not isinstance(cfg[key], bool):
                    raise ConfigError(f"{where}: {key} must be true or false, got {cfg[key]!r}")
                kw[key] = cfg[key]
        if "non_inferiority_margin" in cfg:
            m = cfg["non_inferiority_margin"]
            if m is not False and (isinstance(m, bool) or not isinstance(m, (int, float)) or not 0.0 < m < 1.0):
                raise ConfigError(
                    f"{where}: non_inferiority_margin must be a number in (0, 1) or false (off), got {m!r} "
                    "(a margin of 1 tolerates every drop, 0 none)"
                )
            kw["non_inferiority_margin"] = None if m is False else float(m)
        if "critical" in cfg:
            crit = cfg["critical"]
            if not isinstance(crit, list) or not all(isinstance(s, str) and s for s in crit):
                raise ConfigError(f"{where}: critical must be a list of slice names, got {crit!r}")
            kw["critical"] = tuple(dict.fromkeys(crit))
        if "slices" in cfg:
            kw["slices"] = _slice_tables(where, cfg["slices"])
        return cls(**kw)


def _slice_tables(where: str, sl: Any) -> dict[str, dict[str, float]]:
    """The ``[gate.slices.NAME]`` tables: per-slice absolute thresholds, each a rate."""
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
    return out


@dataclass(frozen=True)
class GateRule:
    """One checked rule: ``actual`` compared with ``threshold``, and the ``evidence`` it saw."""

    name: str
    passed: bool
    actual: float | None
    threshold: float | None
    detail: str
    kind: str = "absolute"  # absolute | regression | infrastructure | protocol | evidence
    exit_code: int = EXIT_GATE_FAILED  # the exit code this rule forces when it fails
    evidence: str = ""  # rows the rule saw: graded, paired, left out and why

    @property
    def mark(self) -> str:
        """``PASS``, ``FAIL`` (a failure shown, or a side not evidence) or ``NOT SHOWN`` (exit 3: the
        evidence shows neither a failure nor what the rule asks, e.g. non-inferiority)."""
        if self.passed:
            return "PASS"
        return "NOT SHOWN" if self.kind == UNDECIDED else "FAIL"

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
            "exit_code": self.exit_code,
            "evidence": self.evidence,
        }


@dataclass
class GateDecision:
    """The verdict: ``passed``, ``exit_code``, every ``rules`` entry, ``review`` slices and ``warnings``."""

    rules: list[GateRule]
    review: list[str] = field(default_factory=list)
    comparison: Any = field(default=None, repr=False)
    #: slices that are not evidence but not critical (named, not failed)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed_rules(self) -> list[GateRule]:
        return [r for r in self.rules if not r.passed]

    @property
    def exit_code(self) -> int:
        """3 when a side is not evidence, else 4, else 2 (a failure shown), else 3 (not shown either way), else 0."""
        failed = self.failed_rules
        shown = {r.exit_code for r in failed if r.kind != UNDECIDED}
        for code in (EXIT_INFRASTRUCTURE, EXIT_COMPARISON_INVALID, EXIT_GATE_FAILED):
            if code in shown:
                return code
        return EXIT_INFRASTRUCTURE if failed else EXIT_OK

    @property
    def passed(self) -> bool:
        return self.exit_code == EXIT_OK

    def summary(self) -> str:
        """One line naming the decision its exit code means (PASSED, FAILED, NOT EVIDENCE, COMPARISON
        INVALID) and the failed rules that force that code."""
        code = self.exit_code
        name = DECISION_NAMES.get(code, f"exit {code}")
        if self.passed:
            warned = f", {len(self.warnings)} warning(s)" if self.warnings else ""
            return f"gate PASSED ({len(self.rules)} rules{warned})"
        forcing = [r for r in self.failed_rules if r.exit_code == code]
        shown = [r for r in forcing if r.kind != UNDECIDED]
        return f"gate {name}: " + "; ".join(f"{r.name}: {r.detail}" for r in (shown or forcing))

    def format(self) -> str:
        """Every rule with the evidence it saw, then the review list, the warnings and the summary."""
        lines = []
        for r in self.rules:
            lines.append(f"[{r.mark}] {r.name}: {r.detail}")
            if r.evidence:
                lines.append(f"       evidence: {r.evidence}")
        for s in self.review:
            lines.append(f"[REVIEW] slice {s}: {REVIEW_NOTE}")
        for w in self.warnings:
            lines.append(f"[WARN] {w}")
        lines.append(self.summary())
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "exit_code": self.exit_code,
            "decision": DECISION_NAMES.get(self.exit_code, f"exit {self.exit_code}"),
            "rules": [r.to_dict() for r in self.rules],
            "review": list(self.review),
            "warnings": list(self.warnings),
        }

    def __repr__(self) -> str:
        from goldenkit._reprs import decision_repr

        return decision_repr(self)

    def _repr_html_(self) -> str:
        from goldenkit._reprs import decision_html

        return decision_html(self)

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
