"""ADK-style grading criteria carried by a case (``test_config.json``'s ``criteria``).

``case.criteria`` is ``{metric: threshold | {"threshold": ..., ...}}``, or the
whole test_config object ``{"criteria": {...}}``; both are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldenkit.errors import InputError
from goldenkit.formats._eval_config import ADK_METRICS

__all__ = ["criterion", "has_criteria", "is_simulated"]


def criterion(criteria: Mapping[str, Any], name: str) -> tuple[bool, dict[str, Any]]:
    """(named?, settings) for one metric of ADK-style criteria (``{metric: float | {...}}``)."""
    if not isinstance(criteria, Mapping):
        return False, {}
    if "criteria" in criteria and isinstance(criteria["criteria"], Mapping):
        criteria = criteria["criteria"]
    if name not in criteria:
        return False, {}
    value = criteria[name]
    if isinstance(value, Mapping):
        return True, dict(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, {"threshold": float(value)}
    raise InputError(f"criteria.{name} must be a number or an object, got {value!r}")


def has_criteria(criteria: Mapping[str, Any]) -> bool:
    """Whether the criteria name any of ADK's metrics (then the metrics they do not name do not apply).

    >>> has_criteria({"rubric_based_multi_turn_trajectory_quality_v1": {"threshold": 0.8}})
    True
    >>> has_criteria({"simulated_user": {}})
    False
    """
    if isinstance(criteria, Mapping) and isinstance(criteria.get("criteria"), Mapping):
        criteria = criteria["criteria"]
    return isinstance(criteria, Mapping) and any(k in ADK_METRICS for k in criteria)


def is_simulated(criteria: Mapping[str, Any]) -> bool:
    """Whether the case is an ADK conversation scenario (an LLM-simulated user).

    ADK's per-turn metrics (trajectory, response match) need expected
    invocations, which a scenario does not have, so they do not apply.
    """
    return isinstance(criteria, Mapping) and criteria.get("simulated_user") is not None
