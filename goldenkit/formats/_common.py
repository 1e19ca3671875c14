"""Helpers shared by the format modules: key lookup, genai Content text, errors.

Nothing here knows a whole format; each function reads one small piece that
several formats share (a google-genai ``Content`` dict, a snake_case or
camelCase key, a JSON string inside a CSV cell).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import math
import mimetypes
from collections.abc import Iterable, Mapping
from typing import Any

from goldenkit._registry import publish
from goldenkit._scrub import scrub
from goldenkit.errors import DatasetError
from goldenkit.records import ImagePart, Message, ToolCall, ToolResponse

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
        images = content_images(d, row_id=row_id, field=field)
    else:
        content = message_content(d.get("content"), row_id=row_id, field=f"{field}.content")
        images = content_images(d.get("content"), row_id=row_id, field=f"{field}.content")
    calls = []
    for i, tc in enumerate(d.get("tool_calls") or []):
        calls.append(_chat_tool_call(tc, row_id=row_id, field=f"{field}.tool_calls[{i}]"))
    name = d.get("name")
    if d.get("images") is not None:  # the contract spelling (message_to_dict writes it)
        images += contract_images(d["images"], row_id=row_id, field=f"{field}.images")
    return Message(
        role=role, content=content, tool_calls=tuple(calls), name=name if isinstance(name, str) else None, images=images
    )


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
    if m.images:
        out["images"] = [i.to_dict() for i in m.images]
    return out


# --- images --------------------------------------------------------------------------------------

#: URL schemes an image part may point at (anything else, such as a file path, is a case error).
IMAGE_URL_SCHEMES = ("http://", "https://", "gs://")


def _b64decode(text: str, *, row_id: str | None, field: str) -> bytes:
    """Standard or URL-safe base64 (pydantic writes the latter for genai ``Blob.data``), padding optional."""
    cleaned = "".join(text.split()).replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        raise case_error(row_id, f"{field} is not valid base64") from None


def _guess_mime(url: str) -> str:
    guessed, _ = mimetypes.guess_type(url.split("?", 1)[0])
    return guessed or "image/*"


def image_from_url(value: Any, *, mime_type: Any = None, row_id: str | None, field: str) -> ImagePart:
    """An image given as a data URI (decoded into bytes) or an http(s)/gs:// URL.

    A file path or any other text is a case error: goldenkit reads no image files at run
    time, so a dataset carries the bytes (a data URI, or base64 ``data``) or a URL.
    """
    if not isinstance(value, str) or not value.strip():
        raise case_error(row_id, f"{field} must be a non-empty URL or data URI")
    url = value.strip()
    mime = mime_type if isinstance(mime_type, str) and mime_type else None
    if url.startswith("data:"):
        head, sep, payload = url[5:].partition(",")
        if not sep or not head.endswith(";base64"):
            raise case_error(row_id, f"{field} is a data URI without ';base64,' data")
        return ImagePart(
            mime or head[: -len(";base64")] or "image/*", data=_b64decode(payload, row_id=row_id, field=field)
        )
    if url.lower().startswith(IMAGE_URL_SCHEMES):
        return ImagePart(mime or _guess_mime(url), url=url)
    raise case_error(
        row_id,
        f"{field} is neither a URL nor a data URI ({scrub(url)[:60]!r}); goldenkit reads no image files: "
        "embed the image as a data URI or base64 data",
    )


def genai_part_image(part: Mapping[str, Any], *, row_id: str | None, field: str) -> ImagePart | None:
    """The media of a genai Part: ``inline_data {mime_type, data}`` or ``file_data {file_uri, mime_type}``."""
    inline = get(part, "inline_data")
    if inline is not None:
        if not isinstance(inline, Mapping) or not isinstance(get(inline, "data"), str):
            raise case_error(row_id, f"{field}.inline_data needs base64 data")
        mime = get(inline, "mime_type")
        if not isinstance(mime, str) or not mime:
            raise case_error(row_id, f"{field}.inline_data has no mime_type")
        return ImagePart(mime, data=_b64decode(get(inline, "data"), row_id=row_id, field=f"{field}.inline_data.data"))
    file_data = get(part, "file_data")
    if file_data is not None:
        if not isinstance(file_data, Mapping):
            raise case_error(row_id, f"{field}.file_data must be an object")
        return image_from_url(
            get(file_data, "file_uri"), mime_type=get(file_data, "mime_type"), row_id=row_id, field=f"{field}.file_data"
        )
    return None


def _chat_part_image(part: Mapping[str, Any], *, row_id: str | None, field: str) -> ImagePart | None:
    """An inspect ``ContentImage`` (``{"type": "image", "image"}``) or OpenAI ``image_url`` part."""
    kind = part.get("type")
    if kind == "image":
        return image_from_url(part.get("image"), row_id=row_id, field=f"{field}.image")
    if kind == "image_url":
        inner = part.get("image_url")
        url = inner.get("url") if isinstance(inner, Mapping) else inner
        return image_from_url(url, row_id=row_id, field=f"{field}.image_url")
    return genai_part_image(part, row_id=row_id, field=field)


def content_images(content: Any, *, row_id: str | None, field: str = "content") -> tuple[ImagePart, ...]:
    """The images of message content: a genai Content (``parts``), or a list of chat / genai parts.

    Text content (a string, None) has none. The explicit ``null`` Part fields older ADK
    versions write (``"inline_data": null``) are no image.
    """
    if isinstance(content, Mapping):
        parts = content.get("parts") if "parts" in content else [content]
    else:
        parts = content
    if not isinstance(parts, list):
        return ()
    out = []
    for i, part in enumerate(parts):
        if isinstance(part, Mapping):
            image = _chat_part_image(part, row_id=row_id, field=f"{field}[{i}]")
            if image is not None:
                out.append(image)
    return tuple(out)


def contract_images(value: Any, *, row_id: str | None, field: str = "images") -> tuple[ImagePart, ...]:
    """A contract case's ``images``: a list of URL / data URI strings or ``{"mime_type", "data" | "url"}`` objects."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise case_error(row_id, f"{field} must be a list of images")
    out = []
    for i, item in enumerate(value):
        where = f"{field}[{i}]"
        if isinstance(item, str):
            out.append(image_from_url(item, row_id=row_id, field=where))
        elif isinstance(item, Mapping) and isinstance(item.get("data"), str):
            mime = item.get("mime_type")
            if not isinstance(mime, str) or not mime:
                raise case_error(row_id, f"{where} has data but no mime_type")
            out.append(ImagePart(mime, data=_b64decode(item["data"], row_id=row_id, field=f"{where}.data")))
        elif isinstance(item, Mapping) and item.get("url") is not None:
            out.append(image_from_url(item["url"], mime_type=item.get("mime_type"), row_id=row_id, field=where))
        else:
            raise case_error(row_id, f'{where} must be a URL, a data URI, or {{"mime_type", "data"}} / {{"url"}}')
    return tuple(out)


__all__ = [
    "LFS_POINTER_PREFIX",
    "MESSAGE_ROLES",
    "camel",
    "case_error",
    "chat_message",
    "content_images",
    "content_json",
    "content_parts",
    "content_text",
    "contract_images",
    "decode_text",
    "genai_part_image",
    "get",
    "has",
    "image_from_url",
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

publish(globals())
