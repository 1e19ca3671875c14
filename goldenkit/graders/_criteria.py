"""ADK-style grading criteria carried by a case (``test_config.json``'s ``criteria``).

``case.criteria`` is ``{metric: threshold | {"threshold": ..., ...}}``, or the
whole test_config object ``{"criteria": {...}}``; both are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit.errors import InputError
from goldenkit.formats import ADK_METRICS

__all__ = ["criterion", "has_criteria", "is_simulated"]


def criterion(criteria: Mapping[str, Any], name: str) -> tuple[bool, dict[str, Any]]:
    """(named?, settings) for one metric of ADK-style criteria (``{metric: float | {...}}``).

    A threshold, given or in ``settings["threshold"]``, is checked by
    :func:`goldenkit._checks.unit_threshold` (finite, in [0, 1]): NaN, Infinity, 5 or -1 is an error.

    >>> criterion({"response_match_score": 0.7}, "response_match_score")
    (True, {'threshold': 0.7})
    >>> criterion({"response_match_score": {"threshold": 5}}, "response_match_score")
    Traceback (most recent call last):
    ...
    goldenkit.errors.ConfigError: criteria.response_match_score.threshold must be a finite number in [0, 1], got 5
    """
    if not isinstance(criteria, Mapping):
        return False, {}
    if "criteria" in criteria and isinstance(criteria["criteria"], Mapping):
        criteria = criteria["criteria"]
    if name not in criteria:
        return False, {}
    value = criteria[name]
    if isinstance(value, Mapping):
        settings = dict(value)
        if settings.get("threshold") is not None:
            settings["threshold"] = unit_threshold(settings["threshold"], f"criteria.{name}.threshold")
        return True, settings
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True, {"threshold": unit_threshold(value, f"criteria.{name}")}
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
