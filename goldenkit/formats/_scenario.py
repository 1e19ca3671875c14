"""Reading a simulated-user scenario out of a case, in any of the three shapes.

* contract ``scenario: {starting_prompt, plan, max_turns?, stop?}``;
* ADK ``conversation_scenario: {starting_prompt, conversation_plan, user_persona?}``
  (either casing);
* Vertex ``user_scenario: {starting_prompt, conversation_plan, test_case_title?}``.

Each gives one :class:`~goldenkit.records.Scenario`; a malformed one is a
case error naming the row and the field.

>>> read_scenario({"starting_prompt": "Hi", "conversation_plan": "Ask for a refund."}, None, "conversation_scenario")
Scenario(starting_prompt='Hi', plan='Ask for a refund.', max_turns=None, stop=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldenkit.errors import DatasetError
from goldenkit.records import Scenario


def _get(d: Mapping[str, Any], key: str) -> Any:
    """``d[key]`` in snake_case or camelCase (``starting_prompt`` / ``startingPrompt``)."""
    head, *rest = key.split("_")
    value = d.get(key)
    return value if value is not None else d.get(head + "".join(w.title() for w in rest))


def case_error(row_id: str | None, message: str) -> DatasetError:
    """As :func:`goldenkit.formats._common.case_error` (this module sits below it)."""
    return DatasetError((f'case "{row_id}": ' if row_id else "") + message)


def read_scenario(value: Any, row_id: str | None, field: str) -> Scenario:
    """The Scenario in ``value`` (the ``field`` of row ``row_id``); the plan is ``plan`` or ``conversation_plan``."""
    if not isinstance(value, Mapping):
        raise case_error(row_id, f"{field} must be an object")
    start = _get(value, "starting_prompt")
    if not isinstance(start, str) or not start.strip():
        raise case_error(row_id, f"{field} has no starting_prompt")
    plan = value.get("plan", _get(value, "conversation_plan"))
    if plan is None:
        plan = ""
    if not isinstance(plan, str):
        raise case_error(row_id, f"{field}.plan must be a string")
    max_turns = _get(value, "max_turns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1):
        raise case_error(row_id, f"{field}.max_turns must be a positive integer, not {max_turns!r}")
    stop = value.get("stop")
    if stop is not None and (not isinstance(stop, str) or not stop):
        raise case_error(row_id, f"{field}.stop must be a non-empty string")
    return Scenario(starting_prompt=start, plan=plan, max_turns=max_turns, stop=stop)


__all__ = ["read_scenario"]
