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

from goldenkit._constraint_types import Flag, Names, Number, TableKey, Text
from goldenkit._registry import publish
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
    "GATE_KEYS",
    "REVIEW_NOTE",
    "UNDECIDED",
    "GateDecision",
    "GatePolicy",
    "GateRule",
    "gate_keys_listing",
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
    "judge_min_pass_rate",
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


class _At(ValueError):
    """A refusal inside a table of ``[gate]`` (``slices.NAME``): the message names that table."""

    def __init__(self, table: str, message: str) -> None:
        super().__init__(message)
        self.table = table


@dataclass(frozen=True)
class CollapseRule:
    """A collapse rule of repeats (:func:`goldenkit.stats.parse_rule`)."""

    @property
    def what(self) -> str:
        return "majority, all, any or at_least:K"

    def check(self, value: object) -> str:
        try:
            parse_rule(value)  # type: ignore[arg-type]
        except Exception:
            raise ValueError(f"must be {self.what}, got {value!r}") from None
        return str(value)

    def parse(self, text: str) -> str:
        return self.check(text)


@dataclass(frozen=True)
class OrFalse:
    """``inner``'s value, or ``false`` (and None) for off (None on the policy)."""

    inner: Number

    @property
    def what(self) -> str:
        return f"{self.inner.what} or false (off)"

    def check(self, value: object) -> Any:
        if value is False or value is None:
            return None
        if not isinstance(value, bool):  # true is not a margin
            try:
                return self.inner.check(value)
            except ValueError:
                pass
        raise ValueError(f"must be a {self.what}, got {value!r}")

    def parse(self, text: str) -> Any:
        return self.check(False if text.strip().lower() == "false" else self.inner.parse(text))


@dataclass(frozen=True)
class SliceTables:
    """The ``[gate.slices.NAME]`` tables: per-slice absolute thresholds (``keys``), each a rate."""

    keys: tuple[str, ...] = _SLICE_KEYS

    @property
    def what(self) -> str:
        return "a table of [gate.slices.NAME] tables"

    def check(self, value: object) -> dict[str, dict[str, float]]:
        if not isinstance(value, Mapping):
            raise ValueError(f"must be {self.what}, got {value!r}")
        out: dict[str, dict[str, float]] = {}
        for name, t in value.items():
            w = f"slices.{name}"
            if not isinstance(t, Mapping):
                raise _At(w, "must be a table")
            bad = sorted(set(t) - set(self.keys))
            if bad:
                raise _At(w, f"unknown key(s) {', '.join(bad)}; known: {', '.join(self.keys)}")
            out[str(name)] = {}
            for k, v in t.items():
                try:
                    out[str(name)][k] = float(_RATE.check(v))  # type: ignore[arg-type]
                except ValueError as exc:
                    raise _At(w, f"{k} {exc}") from None
        return out

    def parse(self, text: str) -> dict[str, dict[str, float]]:
        raise ValueError("is a table: set it in goldenkit.toml")


_RATE = Number(low=0, high=1)
_RATE_OR_OFF = Number(low=0, high=1, optional=True)

#: The ``[gate]`` table, declared once (each key a :class:`~goldenkit._constraint_types.TableKey`, as every
#: table of goldenkit.toml is): :meth:`GatePolicy.from_config` checks each key by its constraint,
#: :class:`GatePolicy` takes its defaults from here, and :mod:`goldenkit.gate`'s documentation lists it
#: (:func:`gate_keys_listing`). A key without a field of its own on :class:`GatePolicy` is still checked and
#: held on the policy (``GatePolicy.other_keys``, :meth:`GatePolicy.value`) until a rule reads it.
GATE_KEYS: dict[str, TableKey] = {
    "rule": TableKey(
        CollapseRule(), "majority", "collapse rule for repeats: majority | all | any | at_least:K", '"majority"'
    ),
    "min_pass_rate": TableKey(_RATE_OR_OFF, None, "overall pass rate (rows, after collapsing) must be >= this", "0.85"),
    "min_wilson_lower": TableKey(_RATE_OR_OFF, None, "overall Wilson 95% lower bound must be >= this", "0.80"),
    "per_slice_min_pass_rate": TableKey(_RATE_OR_OFF, None, "every slice's pass rate must be >= this", "0.70"),
    "per_slice_min_wilson_lower": TableKey(
        _RATE_OR_OFF, None, "every slice's Wilson lower bound must be >= this", "0.5"
    ),
    "max_hallucination_rate": TableKey(
        _RATE_OR_OFF, None, "share of graded attempts the hallucination grader failed", "0.02"
    ),
    "hallucination_grader": TableKey(
        Text(length=200), "hallucination", "grader whose failure counts as a hallucination", '"hallucination"'
    ),
    "min_negative_case_pass_rate": TableKey(
        _RATE_OR_OFF, None, "red rows (run with --red): PASS / graded attempts must be >= this", "1.0"
    ),
    "judge_min_pass_rate": TableKey(
        Number(low=0, high=1, low_open=True, optional=True),
        None,
        "judge-graded pass rate in (0, 1] (0 cannot fail): lower bound (prediction-powered with human labels)",
        "0.80",
    ),
    "accept_self_preference": TableKey(
        Flag(), False, "true: a judge of the candidate's family may alone make it green", "false"
    ),
    "max_error_rate": TableKey(_RATE_OR_OFF, 0.02, "ERROR attempts / all attempts; over it: exit 3", "0.02"),
    "max_slice_error_rate": TableKey(
        _RATE_OR_OFF, 0.05, "new transient ERROR rows / rows, per slice; over it: exit 3", "0.05"
    ),
    "max_new_permanent_errors": TableKey(
        Number(integer=True, low=0, optional=True),
        0,
        "rows the baseline graded that the candidate made a permanent ERROR",
        "0",
    ),
    "min_paired_rows": TableKey(
        Number(integer=True, low=1), 1, "rows graded on both sides each critical slice needs", "1"
    ),
    "min_paired_share": TableKey(_RATE, 0.9, "share of rows paired, overall and per critical slice", "0.9"),
    "regression": TableKey(Flag(), True, "compare against a baseline (a missing one fails)", "true"),
    "baseline": TableKey(
        Text(length=4096, optional=True), None, "default baseline (name or run); --baseline overrides", '"main"'
    ),
    "alpha": TableKey(
        Number(low=0, high=0.5, low_open=True, high_open=True),
        0.05,
        "family-wise false-fail rate of the regression rules",
        "0.05",
        "its bounds are two-sided 1 - 2 alpha",
    ),
    "critical": TableKey(
        Names("slice names"), (), "slices in the gate's Holm family, beside the overall table", '["refunds"]'
    ),
    "fail_on_slices": TableKey(Flag(), False, "true: the other slices join the family and can fail", "false"),
    "non_inferiority_margin": TableKey(
        OrFalse(Number(low=0, high=1, low_open=True, high_open=True)),
        0.05,
        "largest drop tolerated; green needs it shown (false: off)",
        "0.05",
        "a margin of 1 tolerates every drop, 0 none",
    ),
    "allowed_regression": TableKey(
        _RATE_OR_OFF, None, "point rule for deterministic runs: largest drop of a pass rate", "0.0"
    ),
    "allow_noisy": TableKey(Flag(), False, "true: allowed_regression also on runs whose repeats disagree", "false"),
    "slices": TableKey(
        SliceTables(),
        {},
        "per-slice absolute thresholds (override the per_slice_ ones)",
        "[gate.slices.refunds]\nmin_pass_rate = 0.90\nmin_wilson_lower = 0.80",
    ),
}


def _checked(where: str, name: str, value: object) -> Any:
    """``value`` of ``[gate]`` key ``name`` as the key takes it; a ConfigError naming ``where`` and the key."""
    try:
        return GATE_KEYS[name].constraint.check(value)
    except _At as exc:
        raise ConfigError(f"{where}.{exc.table}: {exc}") from None
    except ValueError as exc:
        note = GATE_KEYS[name].note
        raise ConfigError(f"{where}: {name} {exc}" + (f" ({note})" if note else "")) from None


def _default(name: str) -> Any:
    """A field's default, from :data:`GATE_KEYS` (a fresh copy of a mutable one per policy)."""
    d = GATE_KEYS[name].default
    return field(default_factory=lambda: type(d)(d)) if isinstance(d, dict | list) else field(default=d)


def gate_keys_listing(indent: str = "    ") -> str:
    """The ``[gate]`` table as goldenkit.toml lines, each key with its example, what it does and its
    default: the listing of :mod:`goldenkit.gate`'s documentation, derived from :data:`GATE_KEYS`."""
    scalars, tables = [], []
    for name, key in GATE_KEYS.items():
        d = key.default
        if isinstance(d, dict):  # a table of tables: its example is the TOML of one
            head, *body = key.example.split("\n")
            tables += ["", f"{head:<32} # {key.help}", *body]
            continue
        shown = "off" if d is None else str(d).lower() if isinstance(d, bool) else f'"{d}"' if isinstance(d, str) else d
        text = f"{name} = {key.example}"
        scalars.append(f"{text:<32} # {key.help} (default {list(d) if isinstance(d, tuple) else shown})")
    return "\n".join(indent + line if line else "" for line in ["[gate]", *scalars, *tables])


@dataclass(frozen=True)
class GatePolicy:
    """What the gate checks; built from ``[gate]`` by :meth:`from_config`. Every field is a key of
    :data:`GATE_KEYS` (its default and its check come from there)."""

    rule: str = _default("rule")
    min_pass_rate: float | None = _default("min_pass_rate")
    min_wilson_lower: float | None = _default("min_wilson_lower")
    per_slice_min_pass_rate: float | None = _default("per_slice_min_pass_rate")
    per_slice_min_wilson_lower: float | None = _default("per_slice_min_wilson_lower")
    slices: Mapping[str, Mapping[str, float]] = _default("slices")
    max_hallucination_rate: float | None = _default("max_hallucination_rate")
    hallucination_grader: str = _default("hallucination_grader")
    min_negative_case_pass_rate: float | None = _default("min_negative_case_pass_rate")
    judge_min_pass_rate: float | None = _default("judge_min_pass_rate")
    accept_self_preference: bool = _default("accept_self_preference")
    max_error_rate: float | None = _default("max_error_rate")
    regression: bool = _default("regression")
    baseline: str | None = _default("baseline")
    alpha: float = _default("alpha")
    critical: tuple[str, ...] = _default("critical")
    non_inferiority_margin: float | None = _default("non_inferiority_margin")
    fail_on_slices: bool = _default("fail_on_slices")
    allowed_regression: float | None = _default("allowed_regression")
    allow_noisy: bool = _default("allow_noisy")
    min_paired_rows: int = _default("min_paired_rows")
    min_paired_share: float = _default("min_paired_share")
    max_new_permanent_errors: int | None = _default("max_new_permanent_errors")
    max_slice_error_rate: float | None = _default("max_slice_error_rate")
    #: the values of the keys of :data:`GATE_KEYS` that no field above declares (read with :meth:`value`)
    other_keys: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Every field checked by its key's constraint (as :meth:`from_config` checks goldenkit.toml), and
        kept as the constraint gives it (a tuple of slice names, a float rate)."""
        for f in fields(self):
            if f.name in GATE_KEYS:
                object.__setattr__(self, f.name, _checked("GatePolicy", f.name, getattr(self, f.name)))
        unknown = sorted(set(self.other_keys) - set(GATE_KEYS))
        if unknown:
            raise ConfigError(f"GatePolicy: unknown key(s) {', '.join(unknown)}")

    def value(self, name: str) -> Any:
        """The value of ``[gate]`` key ``name``: its field, else :attr:`other_keys`, else its default."""
        if name not in GATE_KEYS:
            raise KeyError(f"{name!r} is not a key of [gate]")
        if name in _FIELDS:
            return getattr(self, name)
        return self.other_keys.get(name, GATE_KEYS[name].default)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None, where: str = "[gate]") -> GatePolicy:
        """Validate the ``[gate]`` table (a dict) against :data:`GATE_KEYS` and build the policy."""
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(GATE_KEYS))
        if unknown:
            hint = did_you_mean(unknown[0], GATE_KEYS)
            raise ConfigError(
                f"{where}: unknown key(s) {', '.join(unknown)}{hint}; known: {', '.join(sorted(GATE_KEYS))}"
            )
        checked = {name: _checked(where, name, v) for name, v in cfg.items()}
        own = {k: v for k, v in checked.items() if k in _FIELDS}
        return cls(**own, other_keys={k: v for k, v in checked.items() if k not in _FIELDS})


_FIELDS = frozenset(f.name for f in fields(GatePolicy)) - {"other_keys"}


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


publish(globals())
