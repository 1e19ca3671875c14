"""Google ADK eval cases and files (``*.evalset.json``, ``*.test.json``).

An ADK ``EvalCase`` normalizes to a :class:`~goldenkit.records.Case` like this:

* every ``conversation`` Invocation is one :class:`~goldenkit.records.Turn`:
  ``user_content`` -> the user text, ``final_response`` -> the expected response
  (``"\\n".join`` of the non-null part texts, so a final response whose only
  part has ``text: null`` gives ``""``; an absent final response gives None),
  ``intermediate_data`` -> expected tool calls, recorded tool responses and
  intermediate (sub-agent) responses. ``intermediate_data`` is either
  IntermediateData (``tool_uses``, ``tool_responses``, ``intermediate_responses``)
  or InvocationEvents (``invocation_events``, scanned for ``function_call`` and
  ``function_response`` parts; text from non-user authors is kept as
  intermediate responses).
* image parts of ``user_content`` (``inline_data`` bytes, ``file_data`` URIs) ->
  the turn's ``images`` (:class:`goldenkit.records.ImagePart`), sent with its text.
* ``session_input`` -> ``Case.session`` (``app_name``, ``user_id``, ``state``, ...).
* A ``conversation_scenario`` case has no scripted conversation: a user
  simulator drives it. It normalizes to ``Case.scenario`` (the starting prompt
  and the ``conversation_plan``) and ONE turn holding the ``starting_prompt``
  (nothing expected of the answer), which is all a run without
  ``--user-simulator`` could send; ``Case.criteria["simulated_user"]`` keeps the
  plan, the persona and a note.
* ``criteria`` (copied in from ``test_config.json`` at import) is kept as it is.

Every key is accepted in snake_case and camelCase (ADK's ``EvalBaseModel``
aliases); the explicit ``null`` Part fields older ADK versions write are ignored.

File reading (:func:`read_adk`): an EvalSet object (snake_case at the top, as
ADK's ``EvalSet`` requires; ``evalCases`` is accepted too), legacy format A (a
list of turn dicts that is ONE case, whose id is the file's name where ADK uses
its path) and legacy format B (a list of ``{name, data, initial_session}``, one
case each, id = name). Legacy cases are converted to EvalCase dicts the way ADK converts them,
and the original record is kept under ``original``. A conversation-scenarios file
(``{"scenarios": [{starting_prompt, conversation_plan, user_persona?}]}``, the input of
``adk eval_set add_eval_case --scenarios_file``) gives one ``conversation_scenario``
case per scenario, stored as written; its id is ``scenario-`` + 12 hex digits of the
SHA-256 of the canonical JSON of the scenario's ``{starting_prompt, conversation_plan,
user_persona}`` (keys other tools add, such as ``id`` or ``name``, are kept on the case
but are not its identity; ADK itself refuses them). The custom ``security_agent``
schema (``test_cases``) is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit.errors import DatasetError, InputError
from goldenkit.formats._common import (
    camel,
    case_error,
    content_images,
    content_parts,
    content_text,
    decode_text,
    get,
    has,
    tool_call,
    tool_response,
)
from goldenkit.formats._rubrics import adk_rubrics, criteria_rubrics
from goldenkit.formats._scenario import read_scenario
from goldenkit.records import Case, Scenario, ToolCall, ToolResponse, Turn

#: The criteria ADK's AgentEvaluator uses when no test_config.json is beside a ``.test.json`` file.
DEFAULT_CRITERIA: dict[str, Any] = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}

SIMULATED_USER_NOTE = (
    "simulated-user scenario: a user simulator drives the conversation (goldenkit run --user-simulator); "
    "the starting prompt is its first turn, and nothing is expected of the answer"
)


_ADK_KEYS = ("eval_id", "conversation", "conversation_scenario")
_ADK_SPELLINGS = tuple(dict.fromkeys(spelling for key in _ADK_KEYS for spelling in (key, camel(key))))


def is_adk(raw: Mapping[str, Any]) -> bool:
    """Whether a dict looks like an ADK EvalCase (one of its keys, either casing, not null)."""
    for key in _ADK_SPELLINGS:  # a loop, not any() over a generator: every case of a run asks
        if raw.get(key) is not None:
            return True
    return False


def normalize_adk(raw: Mapping[str, Any], row_id: str | None = None) -> Case:
    """Normalize an ADK EvalCase dict (snake_case or camelCase keys)."""
    eval_id = get(raw, "eval_id")
    if eval_id is not None and not isinstance(eval_id, str):
        raise case_error(row_id, "eval_id must be a string")
    case_id = row_id or eval_id or ""
    rid = case_id or None
    conversation = get(raw, "conversation")
    scenario = get(raw, "conversation_scenario")
    criteria = get(raw, "criteria") or {}
    if not isinstance(criteria, Mapping):
        raise case_error(rid, "criteria must be an object")
    criteria = dict(criteria)
    metrics = criteria["criteria"] if isinstance(criteria.get("criteria"), Mapping) else criteria
    for metric, value in metrics.items():  # a threshold outside [0, 1] makes the metric's verdict fixed
        threshold = value.get("threshold") if isinstance(value, Mapping) else value
        if threshold is not None:
            try:
                unit_threshold(threshold, f"criteria.{metric}")
            except InputError as exc:
                raise case_error(rid, str(exc)) from None

    turns: list[Turn] = []
    simulated: Scenario | None = None
    rubrics = adk_rubrics(get(raw, "rubrics"), rid, "rubrics") + criteria_rubrics(criteria, rid)
    if conversation is not None and scenario is not None:
        raise case_error(rid, "an ADK eval case has either conversation or conversation_scenario, not both")
    if conversation is not None:
        if not isinstance(conversation, list) or not conversation:
            raise case_error(rid, "conversation must be a non-empty list of invocations")
        for i, inv in enumerate(conversation):
            turns.append(_invocation(inv, i, rid))
            if isinstance(inv, Mapping):
                rubrics += adk_rubrics(
                    get(inv, "rubrics"), rid, f"conversation[{i}].rubrics", turn=i, source="adk-invocation"
                )
    elif scenario is not None:
        simulated = read_scenario(scenario, rid, "conversation_scenario")
        start = simulated.starting_prompt
        turns.append(Turn(user=start))
        criteria["simulated_user"] = {
            "starting_prompt": start,
            "conversation_plan": get(scenario, "conversation_plan"),
            "user_persona": get(scenario, "user_persona"),
            "note": SIMULATED_USER_NOTE,
        }
    else:
        raise case_error(rid, "ADK eval case has neither conversation nor conversation_scenario")

    session = get(raw, "session_input")
    if session is not None:
        if not isinstance(session, Mapping):
            raise case_error(rid, "session_input must be an object")
        session = {_snake(k): v for k, v in session.items()}
    reference = turns[-1].expected_response
    final_state = get(raw, "final_session_state")
    if final_state is not None and not isinstance(final_state, Mapping):
        raise case_error(rid, "final_session_state must be an object")
    return Case(
        id=case_id,
        shape="adk",
        turns=tuple(turns),
        reference=reference,
        criteria=criteria,
        session=session,
        raw=dict(raw),
        rubrics=tuple(rubrics),
        final_state=dict(final_state) if final_state else None,
        scenario=simulated,
    )


def _invocation(inv: Any, i: int, rid: str | None) -> Turn:
    field = f"conversation[{i}]"
    if not isinstance(inv, Mapping):
        raise case_error(rid, f"{field} must be an object")
    user_content = get(inv, "user_content")
    if user_content is None:
        raise case_error(rid, f"{field} has no user_content")
    user = content_text(user_content, row_id=rid, field=f"{field}.user_content")
    images = content_images(user_content, row_id=rid, field=f"{field}.user_content.parts")
    final = get(inv, "final_response")
    expected = None if final is None else content_text(final, row_id=rid, field=f"{field}.final_response")
    calls: list[ToolCall] = []
    responses: list[ToolResponse] = []
    intermediate: list[tuple[str, str]] = []
    data = get(inv, "intermediate_data")
    if data is not None:
        if not isinstance(data, Mapping):
            raise case_error(rid, f"{field}.intermediate_data must be an object")
        if has(data, "invocation_events"):
            _scan_events(
                get(data, "invocation_events"), calls, responses, intermediate, rid, f"{field}.intermediate_data"
            )
        else:
            uses = get(data, "tool_uses") or []
            if not isinstance(uses, list):
                raise case_error(rid, f"{field}.intermediate_data.tool_uses must be a list")
            for j, use in enumerate(uses):
                calls.append(tool_call(use, row_id=rid, field=f"{field}.intermediate_data.tool_uses[{j}]"))
            for j, resp in enumerate(_list(data, "tool_responses", rid, field)):
                responses.append(
                    tool_response(resp, row_id=rid, field=f"{field}.intermediate_data.tool_responses[{j}]", calls=calls)
                )
            for j, item in enumerate(_list(data, "intermediate_responses", rid, field)):
                if not isinstance(item, list | tuple) or len(item) != 2 or not isinstance(item[0], str):
                    raise case_error(
                        rid, f"{field}.intermediate_data.intermediate_responses[{j}] must be [author, [parts]]"
                    )
                text = content_text(item[1], row_id=rid, field=f"{field}.intermediate_responses[{j}]")
                intermediate.append((item[0], text))
    return Turn(
        user=user,
        expected_response=expected,
        expected_tools=tuple(calls),
        tool_responses=tuple(responses),
        intermediate_responses=tuple(intermediate),
        images=images,
    )


def _list(data: Mapping[str, Any], key: str, rid: str | None, field: str) -> list[Any]:
    value = get(data, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise case_error(rid, f"{field}.intermediate_data.{key} must be a list")
    return value


def _scan_events(
    events: Any,
    calls: list[ToolCall],
    responses: list[ToolResponse],
    intermediate: list[tuple[str, str]],
    rid: str | None,
    field: str,
) -> None:
    if not isinstance(events, list):
        raise case_error(rid, f"{field}.invocation_events must be a list")
    for j, ev in enumerate(events):
        if not isinstance(ev, Mapping):
            raise case_error(rid, f"{field}.invocation_events[{j}] must be an object")
        author = ev.get("author")
        if not isinstance(author, str):
            raise case_error(rid, f"{field}.invocation_events[{j}] has no author")
        texts = []
        for part in content_parts(ev.get("content")):
            fc = get(part, "function_call")
            fr = get(part, "function_response")
            if fc is not None:
                calls.append(tool_call(fc, row_id=rid, field=f"{field}.invocation_events[{j}].function_call"))
            if fr is not None:
                responses.append(
                    tool_response(
                        fr, row_id=rid, field=f"{field}.invocation_events[{j}].function_response", calls=calls
                    )
                )
            if isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
        if texts and author != "user":
            intermediate.append((author, "\n".join(texts)))


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


# --- files ---------------------------------------------------------------------------------------


def read_adk(path: Path, data: bytes) -> tuple[list[tuple[str, dict[str, Any], str]], str, dict[str, Any]]:
    """The eval cases of an ADK file as ``(eval_id, case, where)``, the kind of file, and the set's header.

    The kind is ``"evalset"``, ``"scenarios"``, ``"legacy-a"`` or ``"legacy-b"``. Cases are
    returned as dicts: EvalSet cases exactly as written; legacy ones converted
    to EvalCase dicts with the legacy record under ``original``. The header is
    the EvalSet object without its cases (``eval_set_id``, ``name``, ...), empty
    for legacy files.
    """
    text = decode_text(data, path.name)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=path.name, line=exc.lineno) from None
    if isinstance(doc, dict):
        if "test_cases" in doc and "eval_cases" not in doc:
            raise DatasetError(
                "not an ADK EvalSet: this file uses a custom schema (test_cases[{id, input, expected_output}]), "
                "like ADK's security_agent samples; convert it to an EvalSet or to contract cases",
                path=path.name,
            )
        if "scenarios" in doc and "eval_cases" not in doc and "evalCases" not in doc:
            return (
                _scenario_cases(doc["scenarios"], path),
                "scenarios",
                {k: v for k, v in doc.items() if k != "scenarios"},
            )
        cases = doc.get("eval_cases")
        if cases is None and "evalCases" in doc:
            cases = doc["evalCases"]
        if not isinstance(cases, list):
            raise DatasetError("not an ADK EvalSet: no eval_cases list", path=path.name)
        out = []
        for i, case in enumerate(cases):
            where = f"eval_cases[{i}]"
            if not isinstance(case, dict):
                raise DatasetError(f"{where} must be an object", path=path.name)
            eval_id = get(case, "eval_id")
            if not isinstance(eval_id, str) or not eval_id:
                raise DatasetError(f"{where} has no eval_id", path=path.name)
            out.append((eval_id, case, where))
        header = {k: v for k, v in doc.items() if k not in ("eval_cases", "evalCases")}
        return out, "evalset", header
    if isinstance(doc, list):
        if not doc:
            raise DatasetError("empty list: no eval cases", path=path.name)
        if all(isinstance(x, dict) and "data" in x for x in doc):
            out = []
            for i, item in enumerate(doc):
                name = item.get("name")
                where = f"[{i}]"
                if not isinstance(name, str) or not name:
                    raise DatasetError(f"legacy eval case {where} has no name", path=path.name)
                out.append(
                    (name, _legacy_case(name, item["data"], item.get("initial_session"), item, path, where), where)
                )
            return out, "legacy-b", {}
        if all(isinstance(x, dict) for x in doc):
            eval_id = path.name
            return [(eval_id, _legacy_case(eval_id, doc, None, doc, path, ""), "")], "legacy-a", {}
        raise DatasetError("a legacy ADK test file must be a list of objects", path=path.name)
    raise DatasetError(f"not an ADK eval file: top level is {type(doc).__name__}", path=path.name)


def scenario_id(scenario: Mapping[str, Any]) -> str:
    """A scenario's id: ``scenario-`` + 12 hex digits of the hash of its ADK fields (see the module docstring)."""
    fields = {key: get(scenario, key) for key in ("starting_prompt", "conversation_plan", "user_persona")}
    text = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "scenario-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _scenario_cases(scenarios: Any, path: Path) -> list[tuple[str, dict[str, Any], str]]:
    """The cases of a conversation-scenarios file: one ``conversation_scenario`` EvalCase per scenario."""
    if not isinstance(scenarios, list) or not scenarios:
        raise DatasetError("not an ADK conversation-scenarios file: scenarios must be a non-empty list", path=path.name)
    out = []
    for i, scenario in enumerate(scenarios):
        where = f"scenarios[{i}]"
        if not isinstance(scenario, dict):
            raise DatasetError(f"{where} must be an object", path=path.name)
        eval_id = scenario_id(scenario)
        out.append((eval_id, {"eval_id": eval_id, "conversation_scenario": scenario}, where))
    return out


def _legacy_case(eval_id: str, turns: Any, session: Any, original: Any, path: Path, where: str) -> dict[str, Any]:
    """A legacy AgentEvaluator record as an EvalCase dict (``original`` keeps the record)."""
    if not isinstance(turns, list) or not turns:
        raise DatasetError(
            f"legacy eval case {where or ''} has no turns (a non-empty list of query dicts)", path=path.name
        )
    conversation = []
    for i, t in enumerate(turns):
        at = f"{where}[{i}]" if where else f"[{i}]"
        if not isinstance(t, dict) or not isinstance(t.get("query"), str):
            raise DatasetError(f"legacy turn {at} has no query", path=path.name)
        uses, mocks = [], []
        for key in ("expected_tool_use", "expected_intermediate_agent_responses"):
            if t.get(key) is not None and not isinstance(t[key], list):
                raise DatasetError(f"legacy turn {at}.{key} must be a list", path=path.name)
        for j, use in enumerate(t.get("expected_tool_use") or []):
            if not isinstance(use, dict) or not isinstance(use.get("tool_name"), str):
                raise DatasetError(f"legacy turn {at}.expected_tool_use[{j}] has no tool_name", path=path.name)
            tool_input = use.get("tool_input") or {}
            if not isinstance(tool_input, dict):
                raise DatasetError(
                    f"legacy turn {at}.expected_tool_use[{j}].tool_input must be an object", path=path.name
                )
            uses.append({"name": use["tool_name"], "args": tool_input})
            if "mock_tool_output" in use:
                mocks.append({"name": use["tool_name"], "args": tool_input, "response": use["mock_tool_output"]})
        inter = []
        for j, r in enumerate(t.get("expected_intermediate_agent_responses") or []):
            if not isinstance(r, dict) or not isinstance(r.get("author"), str):
                raise DatasetError(
                    f"legacy turn {at}.expected_intermediate_agent_responses[{j}] has no author", path=path.name
                )
            inter.append([r["author"], [{"text": r.get("text", "")}]])
        reference = t.get("reference", "")
        if not isinstance(reference, str):
            raise DatasetError(f"legacy turn {at}.reference must be a string", path=path.name)
        data: dict[str, Any] = {"tool_uses": uses, "intermediate_responses": inter}
        if mocks:
            data["tool_responses"] = mocks
        conversation.append(
            {
                "user_content": {"role": "user", "parts": [{"text": t["query"]}]},
                "final_response": {"role": "model", "parts": [{"text": reference}]},
                "intermediate_data": data,
            }
        )
    case: dict[str, Any] = {"eval_id": eval_id, "conversation": conversation}
    if session is not None:
        case["session_input"] = session
    case["original"] = original
    return case


def read_test_config(path: Path) -> tuple[dict[str, Any], str]:
    """The criteria for an ADK test file: ``test_config.json`` beside it, or ADK's default.

    Returns the criteria and where they came from (``"test_config.json"`` or ``"default"``).
    """
    config = path.parent / "test_config.json"
    if not config.is_file():
        return dict(DEFAULT_CRITERIA), "default"
    try:
        doc = json.loads(config.read_text(encoding="utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"does not parse: {exc}", path=config.name) from None
    criteria = doc.get("criteria") if isinstance(doc, dict) else None
    if not isinstance(criteria, dict):
        raise DatasetError("test_config.json has no criteria object", path=config.name)
    return criteria, "test_config.json"


__all__ = [
    "DEFAULT_CRITERIA",
    "SIMULATED_USER_NOTE",
    "is_adk",
    "normalize_adk",
    "read_adk",
    "read_test_config",
    "scenario_id",
]
