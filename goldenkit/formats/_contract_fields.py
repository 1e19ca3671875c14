"""The field readers of a contract case (:mod:`goldenkit.formats._contract`).

Each reads one field of a contract case (a turn, its tool calls, the recorded
tool responses, the history, a list of strings, an optional string) and raises
a case error naming the field when its value has the wrong shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from goldenkit.formats._common import case_error, chat_message, contract_images, tool_call
from goldenkit.records import Message, ToolCall, ToolResponse, Turn

#: ``isinstance(x, MAPPING)`` answers for a dict (every JSON object) without the Mapping ABC's slower check.
MAPPING = (dict, Mapping)


def read_turn(item: Any, i: int, rid: str | None, responses: tuple[ToolResponse, ...]) -> Turn:
    if isinstance(item, str):
        return Turn(user=item, tool_responses=responses)
    if isinstance(item, MAPPING):
        user = item.get("user", item.get("prompt", item.get("content")))
        if not isinstance(user, str):
            raise case_error(rid, f"turns[{i}] has no user text (user/prompt/content)")
        ref = item.get("reference", item.get("expected_response"))
        if ref is not None and not isinstance(ref, str):
            raise case_error(rid, f"turns[{i}].reference must be a string")
        calls = tool_list(item.get("tools") or [], row_id=rid, field=f"turns[{i}].tools")
        own = tuple(tool_responses(item.get("tool_responses"), row_id=rid, field=f"turns[{i}].tool_responses"))
        images = contract_images(item.get("images"), row_id=rid, field=f"turns[{i}].images")
        return Turn(
            user=user,
            expected_response=ref,
            expected_tools=tuple(calls),
            tool_responses=own or responses,
            images=images,
        )
    raise case_error(rid, f"turns[{i}] must be a string or an object")


def tool_list(value: Any, *, row_id: str | None, field: str) -> list[ToolCall]:
    if not isinstance(value, list):
        raise case_error(row_id, f"{field} must be a list of {{name, args}} objects")
    return [tool_call(v, row_id=row_id, field=f"{field}[{i}]") for i, v in enumerate(value)]


def tool_responses(value: Any, *, row_id: str | None, field: str = "tool_responses") -> list[ToolResponse]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise case_error(row_id, f"{field} must be a list")
    out = []
    for i, v in enumerate(value):
        if not isinstance(v, MAPPING) or not isinstance(v.get("name"), str) or "response" not in v:
            raise case_error(row_id, f"{field}[{i}] needs a name and a response")
        args = v.get("args")
        if args is not None and not isinstance(args, MAPPING):
            raise case_error(row_id, f"{field}[{i}].args must be an object")
        out.append(ToolResponse(name=v["name"], args=dict(args) if args is not None else None, response=v["response"]))
    return out


def history_messages(value: Any, *, row_id: str | None) -> list[Message]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise case_error(row_id, "history must be a list of {role, content} messages")
    return [chat_message(m, row_id=row_id, field=f"history[{i}]") for i, m in enumerate(value)]


def str_list(value: Any, *, row_id: str | None, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        for v in value:
            if not isinstance(v, str):
                break
        else:
            return list(value)
    raise case_error(row_id, f"{field} must be a list of strings")


def merge_new(first: list[str], second: list[str]) -> list[str]:
    out = list(first)
    for item in second:
        if item not in out:
            out.append(item)
    return out


def opt_str(raw: Mapping[str, Any], key: str, row_id: str | None) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise case_error(row_id, f"{key} must be a string, got {type(value).__name__}")
    return value


def replace_turn(turn: Turn, **changes: Any) -> Turn:

    return replace(turn, **changes)


__all__ = [
    "MAPPING",
    "history_messages",
    "merge_new",
    "opt_str",
    "read_turn",
    "replace_turn",
    "str_list",
    "tool_list",
    "tool_responses",
]
