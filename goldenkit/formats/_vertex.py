"""Vertex AI GenAI eval cases and dataset files (JSON, JSONL, CSV).

A Vertex ``EvalCase`` (or one row of an eval DataFrame) normalizes to a
:class:`~goldenkit.records.Case` like this:

* ``prompt`` (fallback ``source``; a string or a Content dict) is the user turn;
  ``system_instruction`` / ``instruction`` the system; ``conversation_history`` /
  ``history`` (Content dicts, or Message ``{content, author}``) the prior messages,
  with role ``model`` read as ``assistant`` (a string history is ignored, as Vertex does).
* image parts (``inline_data`` bytes, ``file_data`` URIs) of the prompt, of a user
  event in ``agent_data``, of a history Content or of a request's user message go
  with that message (``Turn.images`` / ``Message.images``).
* ``reference`` (a string, a Content, or a ResponseCandidate ``{response}``) is
  the expected answer of the last turn.
* ``reference_trajectory`` (``[{tool_name, tool_input}]``, agent-evaluation-lab
  style) is the expected tool calls of the last turn.
* ``agent_data`` (a dict or a JSON string): each ConversationTurn becomes a turn.
  Events by ``user`` give the user text; ``function_call`` parts the expected tool
  calls; ``function_response`` parts the recorded tool responses; text of the
  last agent event with text is the expected response and earlier agent texts
  are intermediate responses. The root agent's ``instruction`` is the system
  (unless one is given) and the agents' function declarations are the tools.
* GEMINI request/response rows (``request.contents``) and OPENAI rows
  (``request.messages``) are read as Vertex's loader reads them: a trailing
  user item is the prompt, a trailing model/assistant item is the reference
  (the one before it being the prompt), the rest is history.
* ``response`` / ``responses`` are answers recorded by someone else's run; they
  are not expectations, so they stay in ``Case.raw`` only.
* ``session_inputs`` / ``session_input`` -> ``Case.session``; ``user_scenario``
  is a simulated-user scenario like ADK's (``Case.scenario``; one opening turn
  for runs without a user simulator, noted in criteria).

Reading files (:func:`read_vertex`): ``.jsonl`` (one record a line), ``.csv``
(every cell a string; an empty cell is missing and a cell holding a JSON object
or array is parsed) and ``.json`` holding a list of records, one record, an
``{"eval_cases": [...]}`` object, or a pandas column-oriented frame
(``{"prompt": {"0": ...}, "reference": {"0": ...}}``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from goldenkit.errors import DatasetError
from goldenkit.formats._common import (
    case_error,
    chat_message,
    content_images,
    content_json,
    content_parts,
    content_text,
    decode_text,
    get,
    is_missing,
    json_object_line,
    lenient_json,
    maybe_json,
    message_content,
    tool_call,
    tool_response,
)
from goldenkit.formats._rubrics import vertex_rubrics
from goldenkit.formats._scenario import read_scenario
from goldenkit.records import Case, ImagePart, Message, Scenario, ToolCall, ToolResponse, Turn

_VERTEX_KEYS = (
    "agent_data",
    "response",
    "responses",
    "reference_trajectory",
    "conversation_history",
    "system_instruction",
    "intermediate_events",
    "eval_case_id",
    "request",
    "rubric_groups",
    "user_scenario",
    "instruction",
    "source",
)

#: CSV columns that hold nested JSON (parsed when they parse; otherwise kept as text).
_JSON_COLUMNS = frozenset(
    {
        "agent_data",
        "reference_trajectory",
        "conversation_history",
        "history",
        "request",
        "responses",
        "session_inputs",
        "session_input",
        "user_scenario",
        "intermediate_events",
        "rubric_groups",
        "agent_info",
    }
)
#: CSV columns that are text or a Content dict (parsed only when they hold a Content).
_CONTENT_COLUMNS = frozenset({"prompt", "source", "response", "reference", "system_instruction", "instruction"})

SIMULATED_USER_NOTE = (
    "simulated-user scenario (Vertex user_scenario): a user simulator drives the conversation "
    "(goldenkit run --user-simulator); the starting prompt is its first turn, and nothing is expected of the answer"
)


def is_vertex(raw: Mapping[str, Any]) -> bool:
    """Whether a dict looks like a Vertex eval case / row."""
    if any(get(raw, k) is not None for k in _VERTEX_KEYS):
        return True
    return isinstance(raw.get("prompt"), Mapping) or isinstance(raw.get("reference"), Mapping)


def normalize_vertex(raw: Mapping[str, Any], row_id: str | None = None) -> Case:
    """Normalize a Vertex GenAI eval case or DataFrame row."""
    rec = {k: v for k, v in raw.items() if not is_missing(v)}
    case_id = row_id or _str_or_none(get(rec, "eval_case_id")) or ""
    rid = case_id or None
    request = lenient_json(rec.get("request"))
    if isinstance(request, Mapping) and ("contents" in request or "messages" in request):
        return _from_request(rec, request, case_id, rid)

    system = _text_or_none(get(rec, "system_instruction", rec.get("instruction")), rid, "system_instruction")
    history = _history(get(rec, "conversation_history", rec.get("history")), rid)
    reference = _reference(rec.get("reference"), rid)
    trajectory = _trajectory(maybe_json(rec.get("reference_trajectory"), row_id=rid, field="reference_trajectory"), rid)
    tools: list[dict[str, Any]] = []
    criteria: dict[str, Any] = {}
    turns: list[Turn] = []
    simulated: Scenario | None = None

    agent_data = maybe_json(get(rec, "agent_data"), row_id=rid, field="agent_data")
    if agent_data is not None:
        if not isinstance(agent_data, Mapping):
            raise case_error(rid, "agent_data must be an object (or a JSON string of one)")
        turns, agent_system, tools = _agent_data(agent_data, rid)
        system = system if system is not None else agent_system
    if not turns:
        prompt = get(rec, "prompt", rec.get("source"))
        scenario = maybe_json(get(rec, "user_scenario"), row_id=rid, field="user_scenario")
        if prompt is not None:
            turns = [Turn(user=_text(prompt, rid, "prompt"), images=_images(prompt, rid, "prompt"))]
        elif isinstance(scenario, Mapping) and isinstance(get(scenario, "starting_prompt"), str):
            simulated = read_scenario(scenario, rid, "user_scenario")
            start = simulated.starting_prompt
            turns = [Turn(user=start)]
            criteria["simulated_user"] = {
                "starting_prompt": start,
                "conversation_plan": get(scenario, "conversation_plan"),
                "note": SIMULATED_USER_NOTE,
            }
        else:
            raise case_error(rid, "Vertex eval case has no prompt (nor agent_data turns, nor a request)")
    last = turns[-1]
    if reference is not None:
        last = _replace(last, expected_response=reference)
    if trajectory:
        last = _replace(last, expected_tools=tuple(trajectory))
    turns[-1] = last
    session = maybe_json(get(rec, "session_inputs", get(rec, "session_input")), row_id=rid, field="session_inputs")
    if session is not None and not isinstance(session, Mapping):
        raise case_error(rid, "session_inputs must be an object")
    return Case(
        id=case_id,
        shape="vertex",
        turns=tuple(turns),
        system=system,
        history=tuple(history),
        tools=tuple(tools),
        reference=turns[-1].expected_response,
        criteria=criteria,
        session=dict(session) if session is not None else None,
        raw=dict(raw),
        rubrics=tuple(vertex_rubrics(maybe_json(get(rec, "rubric_groups"), row_id=rid, field="rubric_groups"), rid)),
        scenario=simulated,
    )


def _from_request(rec: Mapping[str, Any], request: Mapping[str, Any], case_id: str, rid: str | None) -> Case:
    """A GEMINI (``contents``) or OPENAI (``messages``) request row."""
    system: str | None = None
    reference: str | None = None
    if "contents" in request:
        items = request["contents"]
        if not isinstance(items, list) or not items:
            raise case_error(rid, "request.contents must be a non-empty list")
        msgs = [_content_message(c, rid, f"request.contents[{i}]") for i, c in enumerate(items)]
        si = get(request, "system_instruction")
        if si is not None:
            system = _text(si, rid, "request.system_instruction")
    else:
        items = request["messages"]
        if not isinstance(items, list) or not items:
            raise case_error(rid, "request.messages must be a non-empty list")
        msgs = [chat_message(m, row_id=rid, field=f"request.messages[{i}]") for i, m in enumerate(items)]
        if msgs and msgs[0].role == "system":
            system = msgs[0].content
            msgs = msgs[1:]
    if msgs and msgs[-1].role == "assistant":
        reference = msgs[-1].content
        msgs = msgs[:-1]
    if not msgs or msgs[-1].role != "user":
        raise case_error(rid, "request has no user message to send as the prompt")
    if reference is None and rec.get("reference") is not None:
        reference = _reference(rec.get("reference"), rid)
    turn = Turn(user=msgs[-1].content, expected_response=reference, images=msgs[-1].images)
    return Case(
        id=case_id,
        shape="vertex",
        turns=(turn,),
        system=system,
        history=tuple(msgs[:-1]),
        reference=reference,
        raw=dict(rec),
        rubrics=tuple(vertex_rubrics(maybe_json(get(rec, "rubric_groups"), row_id=rid, field="rubric_groups"), rid)),
    )


def _content_message(content: Any, rid: str | None, field: str) -> Message:
    if not isinstance(content, Mapping):
        raise case_error(rid, f"{field} must be a Content object")
    role = content.get("role") or "user"
    if not isinstance(role, str):
        raise case_error(rid, f"{field}.role must be a string")
    role = {"model": "assistant"}.get(role, role)
    if role not in ("user", "assistant", "system", "tool"):
        raise case_error(rid, f"{field} has unknown role {content.get('role')!r}")
    images = content_images(content, row_id=rid, field=f"{field}.parts")
    return Message(role=role, content=content_text(content, row_id=rid, field=field), images=images)


def _history(value: Any, rid: str | None) -> list[Message]:
    value = lenient_json(value)
    if value is None or isinstance(value, str):
        return []  # Vertex silently ignores a string history
    if not isinstance(value, list):
        raise case_error(rid, "conversation_history must be a list of Content or Message objects")
    out = []
    for i, item in enumerate(value):
        field = f"conversation_history[{i}]"
        if isinstance(item, Mapping) and "content" in item and isinstance(item["content"], Mapping):
            # Message {turn_id, content: Content, author}
            msg = _content_message(item["content"], rid, field)
            author = item.get("author")
            if isinstance(author, str) and "role" not in item["content"]:
                is_user = author == "user"
                msg = Message(
                    role="user" if is_user else "assistant",
                    content=msg.content,
                    name=None if is_user else author,
                    images=msg.images,
                )
            out.append(msg)
        elif isinstance(item, Mapping) and "parts" in item:
            out.append(_content_message(item, rid, field))
        else:
            out.append(chat_message(item, row_id=rid, field=field))
    return out


def _reference(value: Any, rid: str | None) -> str | None:
    value = content_json(value)
    if value is None:
        return None
    if isinstance(value, Mapping) and "response" in value and "parts" not in value:
        value = value["response"]  # ResponseCandidate
    return _text(value, rid, "reference")


def _trajectory(value: Any, rid: str | None) -> list[ToolCall]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise case_error(rid, "reference_trajectory must be a list of {tool_name, tool_input}")
    out = []
    for i, item in enumerate(value):
        if isinstance(item, Mapping) and ("tool_name" in item or "tool_input" in item):
            out.append(
                tool_call(
                    item, row_id=rid, field=f"reference_trajectory[{i}]", name_key="tool_name", args_key="tool_input"
                )
            )
        else:
            out.append(tool_call(item, row_id=rid, field=f"reference_trajectory[{i}]"))
    return out


def _agent_data(data: Mapping[str, Any], rid: str | None) -> tuple[list[Turn], str | None, list[dict[str, Any]]]:
    agents = data.get("agents") or {}
    if not isinstance(agents, Mapping):
        raise case_error(rid, "agent_data.agents must be an object keyed by agent id")
    system = None
    tools: list[dict[str, Any]] = []
    root = get(data, "root_agent_id")
    for agent_id, config in agents.items():
        if not isinstance(config, Mapping):
            raise case_error(rid, f"agent_data.agents[{agent_id!r}] must be an object")
        instruction = config.get("instruction")
        if isinstance(instruction, str) and (system is None or agent_id == root):
            system = instruction
        agent_tools = config.get("tools") or []
        if not isinstance(agent_tools, list):
            raise case_error(rid, f"agent_data.agents[{agent_id!r}].tools must be a list")
        for tool in agent_tools:
            decls = get(tool, "function_declarations") if isinstance(tool, Mapping) else None
            if decls is not None and not isinstance(decls, list):
                raise case_error(rid, f"agent_data.agents[{agent_id!r}].tools[].function_declarations must be a list")
            for decl in decls or []:
                if isinstance(decl, Mapping) and isinstance(decl.get("name"), str):
                    if all(t.get("name") != decl["name"] for t in tools):
                        tools.append(dict(decl))
    turns_in = data.get("turns") or []
    if not isinstance(turns_in, list):
        raise case_error(rid, "agent_data.turns must be a list")
    turns: list[Turn] = []
    for i, turn in enumerate(turns_in):
        field = f"agent_data.turns[{i}]"
        if not isinstance(turn, Mapping):
            raise case_error(rid, f"{field} must be an object")
        events = turn.get("events") or []
        if not isinstance(events, list):
            raise case_error(rid, f"{field}.events must be a list")
        users: list[str] = []
        user_images: list[ImagePart] = []
        calls: list[ToolCall] = []
        responses: list[ToolResponse] = []
        agent_texts: list[tuple[str, str]] = []
        for j, ev in enumerate(events):
            if not isinstance(ev, Mapping):
                raise case_error(rid, f"{field}.events[{j}] must be an object")
            author = ev.get("author") or ""
            content = ev.get("content")
            texts = []
            for part in content_parts(content):
                fc, fr = get(part, "function_call"), get(part, "function_response")
                if fc is not None:
                    calls.append(tool_call(fc, row_id=rid, field=f"{field}.events[{j}].function_call"))
                if fr is not None:
                    responses.append(
                        tool_response(fr, row_id=rid, field=f"{field}.events[{j}].function_response", calls=calls)
                    )
                if isinstance(part.get("text"), str) and not part.get("thought"):
                    texts.append(part["text"])
            role = content.get("role") if isinstance(content, Mapping) else None
            if author == "user" or (not author and role == "user"):
                if texts:
                    users.append("\n".join(texts))
                user_images += content_images(content, row_id=rid, field=f"{field}.events[{j}].content.parts")
            elif texts:
                agent_texts.append((author, "\n".join(texts)))
        if not users:
            raise case_error(rid, f"{field} has no user event with text")
        expected = agent_texts[-1][1] if agent_texts else None
        turns.append(
            Turn(
                user="\n".join(users),
                expected_response=expected,
                expected_tools=tuple(calls),
                tool_responses=tuple(responses),
                intermediate_responses=tuple(agent_texts[:-1]),
                images=tuple(user_images),
            )
        )
    return turns, system, tools


def _text(value: Any, rid: str | None, field: str) -> str:
    value = content_json(value)
    if isinstance(value, list):
        return message_content(value, row_id=rid, field=field)
    return content_text(value, row_id=rid, field=field)


def _images(value: Any, rid: str | None, field: str) -> tuple[ImagePart, ...]:
    """The image parts of a prompt given as a Content dict or a list of parts (text has none)."""
    value = content_json(value)
    return content_images(value, row_id=rid, field=f"{field}.parts") if isinstance(value, Mapping | list) else ()


def _text_or_none(value: Any, rid: str | None, field: str) -> str | None:
    return None if is_missing(value) else _text(value, rid, field)


def _str_or_none(value: Any) -> str | None:
    if value is None or is_missing(value):
        return None
    return str(value)


def _replace(turn: Turn, **changes: Any) -> Turn:

    return replace(turn, **changes)


# --- files ---------------------------------------------------------------------------------------


def read_vertex(path: Path, data: bytes) -> list[tuple[str, dict[str, Any], str]]:
    """The records of a Vertex eval file as ``(case id, record, where)``.

    Ids are ``eval_case_id`` when a record has one, else ``eval_case_{i}`` with
    ``i`` the 0-based record index (the frame index for a column-oriented frame),
    as Vertex generates them. ``where`` is ``line N`` (JSONL, CSV) or a position.
    """
    text = decode_text(data, path.name)
    suffix = path.suffix.lower()
    records: list[tuple[str | None, dict[str, Any], str]] = []
    if suffix == ".jsonl":
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            rec = json_object_line(line, where=path.name, lineno=lineno, what="each line")
            records.append((None, rec, f"line {lineno}"))
    elif suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        for rec_in in reader:
            lineno = reader.line_num
            if None in rec_in:
                raise DatasetError("row has more cells than the header", path=path.name, line=lineno)
            rec = {}
            for key, cell in rec_in.items():
                if cell is None or cell == "":
                    continue  # an empty cell is a missing value (pandas reads NaN)
                if key in _JSON_COLUMNS:
                    rec[key] = lenient_json(cell)
                elif key in _CONTENT_COLUMNS:
                    rec[key] = content_json(cell)
                else:
                    rec[key] = cell
            records.append((None, rec, f"line {lineno}"))
    elif suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg}", path=path.name, line=exc.lineno) from None
        if isinstance(doc, list):
            for i, rec in enumerate(doc):
                if not isinstance(rec, dict):
                    raise DatasetError(f"record [{i}] must be an object", path=path.name)
                records.append((None, rec, f"[{i}]"))
        elif isinstance(doc, dict) and isinstance(doc.get("eval_cases"), list):
            for i, rec in enumerate(doc["eval_cases"]):
                if not isinstance(rec, dict):
                    raise DatasetError(f"eval_cases[{i}] must be an object", path=path.name)
                records.append((None, rec, f"eval_cases[{i}]"))
        elif isinstance(doc, dict) and _is_column_frame(doc):
            for index, rec in _columns_to_records(doc, path):
                records.append((f"eval_case_{index}", rec, f"index {index}"))
        elif isinstance(doc, dict):
            records.append((None, doc, "record"))
        else:
            raise DatasetError(f"not a Vertex eval file: top level is {type(doc).__name__}", path=path.name)
    else:
        raise DatasetError(f"unsupported Vertex eval file type {suffix!r} (use .json, .jsonl or .csv)", path=path.name)
    if not records:
        raise DatasetError("no eval cases", path=path.name)
    out = []
    for i, (gen_id, rec, where) in enumerate(records):
        rid = _str_or_none(get(rec, "eval_case_id")) or gen_id or f"eval_case_{i}"
        out.append((rid, rec, where))
    return out


def _is_column_frame(doc: dict[str, Any]) -> bool:
    """A pandas ``orient="columns"`` frame: every value a dict keyed by (numeric) index labels."""
    if not doc or not all(isinstance(v, dict) and v for v in doc.values()):
        return False
    return all(label.lstrip("-").isdigit() for column in doc.values() for label in column)


def _columns_to_records(doc: dict[str, dict[str, Any]], path: Path) -> list[tuple[str, dict[str, Any]]]:
    """A pandas ``orient="columns"`` frame as records, in index order (numeric when the labels are)."""
    index: list[str] = []
    for column in doc.values():
        for label in column:
            if label not in index:
                index.append(label)
    if all(label.lstrip("-").isdigit() for label in index):
        index.sort(key=int)
    out = []
    for label in index:
        rec = {col: values[label] for col, values in doc.items() if label in values and not is_missing(values[label])}
        out.append((label, rec))
    return out


__all__ = ["SIMULATED_USER_NOTE", "is_vertex", "normalize_vertex", "read_vertex"]
