"""Reading a simulated-user scenario out of a case, in any of the three shapes.

* contract ``scenario: {starting_prompt, plan, max_turns?, stop?}``;
* ADK ``conversation_scenario: {starting_prompt, conversation_plan, user_persona?}``
  (either casing);
* Vertex ``user_scenario: {starting_prompt, conversation_plan, test_case_title?}``.

Each gives one :class:`~goldenkit.records.Scenario`; a malformed one is a
case error naming the row and the field. An ADK ``user_persona`` (a pre-built
persona's id such as ``"NOVICE"``, or an inline persona ``{id, description,
behaviors[{name, description, behavior_instructions[]}]}``) is part of what the
user simulator must play, so it is appended to the plan the simulator's prompt
carries (:func:`persona_text`); a persona's ``violation_rubrics`` judge the
simulator, not the agent, and stay out of it.

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


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def persona_text(value: Any, row_id: str | None, field: str) -> str | None:
    """The ADK ``user_persona`` as the lines the simulator's plan gets (None: there is none).

    >>> persona_text("NOVICE", None, "user_persona")
    'Play this user persona: NOVICE (an ADK pre-built persona).'
    """
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            raise case_error(row_id, f"{field} is empty")
        return f"Play this user persona: {value.strip()} (an ADK pre-built persona)."
    if not isinstance(value, Mapping):
        raise case_error(row_id, f"{field} must be a persona id or a persona object")
    name, description = value.get("id"), value.get("description")
    head = f"Play this user persona: {name or 'custom'}" + (f": {description}" if isinstance(description, str) else "")
    lines = [head.rstrip(".") + "."]
    behaviors = value.get("behaviors") or []
    if not isinstance(behaviors, list):
        raise case_error(row_id, f"{field}.behaviors must be a list")
    for i, b in enumerate(behaviors):
        if not isinstance(b, Mapping):
            raise case_error(row_id, f"{field}.behaviors[{i}] must be an object")
        what = ": ".join(str(x) for x in (b.get("name"), b.get("description")) if isinstance(x, str) and x)
        lines.append(f"- {what}" if what else f"- behavior {i + 1}")
        lines.extend(f"  - {step}" for step in _strings(_get(b, "behavior_instructions")))
    return "\n".join(lines)


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
    persona = persona_text(_get(value, "user_persona"), row_id, f"{field}.user_persona")
    if persona is not None:
        plan = f"{plan}\n\n{persona}" if plan else persona
    return Scenario(starting_prompt=start, plan=plan, max_turns=max_turns, stop=stop)


__all__ = ["persona_text", "read_scenario"]
