"""The final-state grader: the session's state at the end against the expected keys.

A case's :attr:`~goldenkit.records.Case.final_state` (ADK ``final_session_state``,
contract ``expect.final_state``) names the keys the session's state must hold
at the end, with their values. The match is a subset match: every expected key
is present with an equal value (nested objects are compared the same way, key
by key); other keys in the actual state are fine.

The actual state is ``Response.raw["final_state"]``, which the ADK provider
fills (with ``history = "actual"``) and a callable may return. A provider that
cannot read the session's state leaves it out: the grade is then *not
applicable* (``passed=None``), said in the reason, never a PASS or a FAIL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from goldenkit._findings import reason_findings
from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets
from goldenkit.graders._base import Grader, GradeResult, selected_for
from goldenkit.records import Case, Response

__all__ = ["StateGrader", "state_differences"]


def _show(value: Any) -> str:
    text = mask_secrets(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))  # before it is cut
    return text if len(text) <= 80 else text[:79] + "…"


def state_differences(expected: Mapping[str, Any], actual: Mapping[str, Any], prefix: str = "") -> list[str]:
    """What keeps ``actual`` from holding ``expected`` (empty: it does).

    >>> state_differences({"cart": {"items": 2}, "user": "ann"}, {"cart": {"items": 3, "sum": 9}, "user": "ann"})
    ['cart.items: expected 2, got 3']
    """
    out = []
    for key, want in expected.items():
        name = f"{prefix}{key}"
        if key not in actual:
            out.append(f"{name}: missing (expected {_show(want)})")
        elif isinstance(want, Mapping) and isinstance(actual[key], Mapping):
            out += state_differences(want, actual[key], f"{name}.")
        elif want != actual[key]:
            out.append(f"{name}: expected {_show(want)}, got {_show(actual[key])}")
    return out


def final_state_of(response: Response) -> Mapping[str, Any] | None:
    """The session's final state a provider reported, or None."""
    raw = response.raw
    if isinstance(raw, Mapping) and isinstance(raw.get("final_state"), Mapping):
        state: Mapping[str, Any] = raw["final_state"]
        return state
    return None


class StateGrader(Grader):
    """Subset match of the session's final state (see the module doc)."""

    name = "state"
    version = "1"

    def __init__(self, *, hard: bool = True) -> None:
        self.hard = hard

    def applies(self, case: Case) -> bool:
        return bool(case.final_state)

    def grade(self, case: Case, response: Response) -> GradeResult:
        if not selected_for(case, self.name):
            return GradeResult(passed=None, reason="not selected for this case")
        if not case.final_state:
            return GradeResult(passed=None, reason="no expected final state")
        actual = final_state_of(response)
        if actual is None:
            return GradeResult(
                passed=None, reason="not applicable: the provider does not report the session's final state"
            )
        diffs = state_differences(case.final_state, actual)
        n = len(case.final_state)
        if not diffs:
            return GradeResult(passed=True, score=1.0, reason="")
        reason = f"final state ({n} expected keys): " + "; ".join(diffs)
        return GradeResult(False, 0.0, reason, findings=reason_findings("state", reason, grader=self.name))


publish(globals())
