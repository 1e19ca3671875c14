"""Helpers shared by the format modules: key lookup, genai Content text, errors.

Nothing here knows a whole format; each function reads one small piece that
several formats share (a google-genai ``Content`` dict, a snake_case or
camelCase key, a JSON string inside a CSV cell).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from goldenkit.cases import Message, ToolCall, ToolResponse
from goldenkit.errors import DatasetError

#: The first bytes of a Git LFS pointer file (the real data lives elsewhere).
LFS_POINTER_PREFIX = b"version https://git-lfs"


@functools.cache
def camel(key: str) -> str:
    """``user_content`` -> ``userContent`` (pydantic's ``to_camel`` for lower-first names).

    Memoized: callers pass the field names of the formats, a small fixed set, and
    every case of a run looks them up.
    """
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def get(d: Mapping[str, Any], key: str, default: Any = None) -> Any:
    """``d[key]`` under its snake_case or camelCase spelling (snake_case wins when both are set)."""
    if key in d and d[key] is not None:
        return d[key]
    alt = camel(key)
    if alt in d and d[alt] is not None:
        return d[alt]
    return default


def has(d: Mapping[str, Any], key: str) -> bool:
    """Whether ``key`` (snake_case or camelCase) is present and not null."""
    return get(d, key) is not None


def is_missing(value: Any) -> bool:
    """None, or a float NaN (how pandas and CSV readers spell an empty cell)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def decode_text(data: bytes, where: str) -> str:
    """A file's bytes as text (UTF-8, a leading BOM dropped); anything else is a DatasetError at its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError("not UTF-8 text", path=where, line=data[: exc.start].count(b"\n") + 1) from None


def json_object_line(line: str, *, where: str, lineno: int, what: str) -> dict[str, Any]:
    """One JSONL line parsed as a JSON object; ``what`` names the record in the error (``a sample``)."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=where, line=lineno) from None
    if not isinstance(rec, dict):
        raise DatasetError(f"{what} must be a JSON object, got {type(rec).__name__}", path=where, line=lineno)
    return rec


def line_of(where: str) -> int | None:
    """The line number in a record position written ``"line N"`` (other positions have none)."""
    return int(where.split()[1]) if where.startswith("line ") else None


def case_error(row_id: str | None, message: str) -> DatasetError:
    """A DatasetError whose message names the case (the dataset layer adds file:line)."""
    prefix = f'case "{row_id}": ' if row_id else ""
    return DatasetError(prefix + message)


def maybe_json(value: Any, *, row_id: str | None = None, field: str = "") -> Any:
    """Parse a JSON object or array given as a string (CSV cells, JSON columns); other values pass through."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise case_error(row_id, f"{field or 'value'} looks like JSON but does not parse: {exc.msg}") from None
    return value


def lenient_json(value: Any) -> Any:
    """A string holding a JSON object or array, parsed; any other value (or unparsable text) as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def content_json(value: Any) -> Any:
    """A string holding a google-genai Content (``{"parts": ...}``) or ResponseCandidate, parsed.

    Any other string, including one holding some other JSON (a JSON answer such
    as ``{"status": "ok"}``), is plain text and is returned unchanged.
    """
    parsed = lenient_json(value)
    if isinstance(parsed, Mapping):
        inner = parsed.get("response")
        if "parts" in parsed or (isinstance(inner, Mapping) and "parts" in inner):
            return parsed
    return value


def content_text(content: Any, *, row_id: str | None = None, field: str = "content") -> str:
    """The text of a google-genai Content (or a plain string).

    ``"\\n".join`` of the parts' ``text`` values, skipping parts whose text is
    null or absent (function calls, explicit-null dumps), exactly as ADK joins
    a final response. A bare Part (``{"text": ...}``) and a list of parts are
    accepted too.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if "parts" in content:
            parts = content["parts"]
            if parts is None:
                return ""
        elif "text" in content:
            parts = [content]
        else:
            raise case_error(row_id, f"{field} has neither 'parts' nor 'text'")
    elif isinstance(content, list):
        parts = content
    else:
        raise case_error(row_id, f"{field} must be a string or a Content object, got {type(content).__name__}")
    if not isinstance(parts, list):
        raise case_error(row_id, f"{field}.parts must be a list")
    texts = []
    for part in parts:
        if not isinstance(part, Mapping):
            raise case_error(row_id, f"{field}.parts items must be objects")
        text = part.get("text")
        if text is not None:
            if not isinstance(text, str):
                raise case_error(row_id, f"{field}.parts[].text must be a string")
            texts.append(text)
    return "\n".join(texts)


def content_parts(content: Any) -> list[Mapping[str, Any]]:
    """The parts of a Content dict (empty when there are none)."""
    if isinstance(content, Mapping):
        parts = content.get("parts")
        if isinstance(parts, list):
            return [p for p in parts if isinstance(p, Mapping)]
    return []


def tool_call(d: Any, *, row_id: str | None, field: str, name_key: str = "name", args_key: str = "args") -> ToolCall:
    """A ToolCall from a FunctionCall-like dict (``{name, args, id?}``)."""
    if not isinstance(d, Mapping):
        raise case_error(row_id, f"{field} must be an object with a name, got {type(d).__name__}")
    name = d.get(name_key)
    if not isinstance(name, str) or not name:
        raise case_error(row_id, f"{field} has no {name_key!r}")
    args = d.get(args_key)
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise case_error(row_id, f"{field}.{args_key} must be an object, got {type(args).__name__}")
    call_id = d.get("id")
    return ToolCall(name=name, args=dict(args), id=call_id if isinstance(call_id, str) else None)


def tool_response(
    d: Any, *, row_id: str | None, field: str, calls: Iterable[ToolCall] = (), args: Any = None
) -> ToolResponse:
    """A ToolResponse from a FunctionResponse-like dict (``{name, response, id?, args?}``).

    A FunctionResponse carries no args; when its ``id`` matches one of
    ``calls`` that call's args are used, so a runner can answer by (name, args).
    """
    if not isinstance(d, Mapping):
        raise case_error(row_id, f"{field} must be an object")
    name = d.get("name")
    if not isinstance(name, str) or not name:
        raise case_error(row_id, f"{field} has no 'name'")
    if args is None:
        args = d.get("args")
        if args is None and d.get("id") is not None:
            for call in calls:
                if call.id == d.get("id"):
                    args = call.args
                    break
    if args is not None and not isinstance(args, Mapping):
        raise case_error(row_id, f"{field}.args must be an object")
    return ToolResponse(name=name, args=dict(args) if args is not None else None, response=d.get("response"))


_ROLE_ALIASES = {"model": "assistant", "developer": "system", "human": "user", "ai": "assistant"}
MESSAGE_ROLES = ("system", "user", "assistant", "tool")


def chat_message(d: Any, *, row_id: str | None, field: str) -> Message:
    """A Message from a chat dict ``{role, content, name?, tool_calls?}`` (OpenAI / inspect / contract style).

    ``content`` may be a string or a list of content parts (``{"type": "text", "text": ...}``),
    whose texts are joined with newlines.
    """
    if not isinstance(d, Mapping):
        raise case_error(row_id, f"{field} must be an object with role and content")
    role = d.get("role")
    if not isinstance(role, str):
        raise case_error(row_id, f"{field} has no role")
    role = _ROLE_ALIASES.get(role, role)
    if role not in MESSAGE_ROLES:
        raise case_error(
            row_id, f"{field} has unknown role {d.get('role')!r} (expected one of {', '.join(MESSAGE_ROLES)})"
        )
    if "content" not in d and "parts" in d:
        content = content_text(d, row_id=row_id, field=field)
    else:
        content = message_content(d.get("content"), row_id=row_id, field=f"{field}.content")
    calls = []
    for i, tc in enumerate(d.get("tool_calls") or []):
        calls.append(_chat_tool_call(tc, row_id=row_id, field=f"{field}.tool_calls[{i}]"))
    name = d.get("name")
    return Message(role=role, content=content, tool_calls=tuple(calls), name=name if isinstance(name, str) else None)


def message_content(content: Any, *, row_id: str | None, field: str) -> str:
    """Chat message content: a string, or a list of parts whose texts are joined with newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    raise case_error(row_id, f"{field} must be a string or a list of content parts")


def _chat_tool_call(tc: Any, *, row_id: str | None, field: str) -> ToolCall:
    """An OpenAI-style ``{id, function: {name, arguments}}`` or inspect-style ``{function, arguments}`` call."""
    if not isinstance(tc, Mapping):
        raise case_error(row_id, f"{field} must be an object")
    fn = tc.get("function")
    if isinstance(fn, Mapping):
        name, args = fn.get("name"), fn.get("arguments")
    else:
        name, args = fn if isinstance(fn, str) else tc.get("name"), tc.get("arguments", tc.get("args"))
    args = maybe_json(args, row_id=row_id, field=f"{field}.arguments")
    if args is None:
        args = {}
    if not isinstance(name, str) or not name or not isinstance(args, Mapping):
        raise case_error(row_id, f"{field} needs a function name and object arguments")
    call_id = tc.get("id")
    return ToolCall(name=name, args=dict(args), id=call_id if isinstance(call_id, str) else None)


def message_to_dict(m: Message) -> dict[str, Any]:
    """A Message as a contract-shape history entry."""
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.name:
        out["name"] = m.name
    if m.tool_calls:
        out["tool_calls"] = [c.to_dict() for c in m.tool_calls]
    return out


__all__ = [
    "LFS_POINTER_PREFIX",
    "MESSAGE_ROLES",
    "camel",
    "case_error",
    "chat_message",
    "content_parts",
    "content_json",
    "content_text",
    "decode_text",
    "get",
    "has",
    "is_missing",
    "json_object_line",
    "lenient_json",
    "line_of",
    "maybe_json",
    "message_content",
    "message_to_dict",
    "tool_call",
    "tool_response",
]
