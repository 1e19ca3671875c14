"""How the ``adk`` provider reads an ADK invocation: its events become a turn, its failures an error.

Per turn it keeps what ADK's own evaluator reads (the final response, the tool
calls and responses, the intermediate texts, the token counts; see
:mod:`goldenkit.providers._adk`), and it gives each failure its kind (:func:`code_kind`,
:func:`error_from_exception`): ``transient`` (408, 429, 5xx and their gRPC names,
timeouts, dropped connections), ``infrastructure`` (401/403 and their gRPC names, other
4xx, a network or OS error inside the agent), ``refused`` (a safety block, a context
length), and ``agent`` (the agent's own code or model output: an exception in a tool,
a malformed function call).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from goldenkit._scrub import scrub
from goldenkit.errors import ProviderError
from goldenkit.providers._base import TurnOutput
from goldenkit.providers._failures import exception_error, refusal
from goldenkit.records import ImagePart, ToolCall

__all__ = ["TurnCollector", "as_content", "code_kind", "error_from_exception", "status_transient", "text_of"]

# HTTP status codes and their gRPC / google.genai status names that are worth a retry.
_TRANSIENT_CODES = {"408", "429", "500", "502", "503", "504"}
_TRANSIENT_NAMES = {"RESOURCE_EXHAUSTED", "UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "ABORTED"}
_AUTH_NAMES = {"401", "403", "UNAUTHENTICATED", "PERMISSION_DENIED"}
# Gemini's finish reasons (ADK's error codes) for an answer a safety filter blocked.
_SAFETY_NAMES = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"}


def as_content(role: str, text: str, images: Sequence[ImagePart] = ()) -> Any:
    """A genai Content of ``text`` and then each image: bytes as ``inline_data``, a URL as ``file_data``."""
    from google.genai import types

    parts = [types.Part(text=text)]
    for image in images:
        if image.data is not None:
            parts.append(types.Part(inline_data=types.Blob(mime_type=image.mime_type, data=image.data)))
        else:
            parts.append(types.Part(file_data=types.FileData(file_uri=image.url, mime_type=image.mime_type)))
    return types.Content(role=role, parts=parts)


def text_of(content: Any) -> str:
    """Text of a genai Content the way ADK's evaluators read it: text parts joined by newlines."""
    if content is None or not content.parts:
        return ""
    return "\n".join(p.text for p in content.parts if p.text)


def jsonable(value: Any) -> Any:
    """A tool's result as plain JSON data (a tool may return objects; outcomes are JSON)."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return str(value)


def status_transient(code: Any) -> bool:
    s = str(code).strip().upper()
    return s in _TRANSIENT_CODES or s in _TRANSIENT_NAMES or (s.isdigit() and len(s) == 3 and s.startswith("5"))


def code_kind(code: Any, reason: str = "") -> str:
    """The kind of a model error an agent reported by code (an HTTP status or a gRPC / finish-reason name)."""
    s = str(code).strip().upper()
    if status_transient(s):
        return "transient"
    if s in _AUTH_NAMES:
        return "infrastructure"
    if s in _SAFETY_NAMES or refusal(reason) is not None:
        return "refused"
    if s.isdigit():
        return "infrastructure"  # another HTTP status: not the agent's own code
    return "agent"  # MALFORMED_FUNCTION_CALL, MAX_TOKENS, OTHER: the agent's model run


def error_from_exception(exc: BaseException, where: str) -> ProviderError:
    """Classify an exception raised while the agent ran (``where``: tool, model or agent)."""
    if isinstance(exc, ProviderError):
        return exc
    code = getattr(exc, "code", None)
    if code is None or isinstance(exc, OSError | TimeoutError | asyncio.TimeoutError):
        return exception_error(exc, f"adk {where} error:")
    status = code if isinstance(code, int) else None
    name = type(exc).__name__
    msg = scrub(str(exc).splitlines()[0]) if str(exc) else name  # masked before it is cut
    if len(msg) > 300:
        msg = msg[:297] + "..."
    return ProviderError(f"adk {where} error: {name}: {msg}", kind=code_kind(code, msg), status=status)


class TurnCollector:
    """Turns the events of one invocation into a TurnOutput (ADK's reading of them)."""

    def __init__(self) -> None:
        self.tool_calls: list[ToolCall] = []
        self.tool_responses: list[dict[str, Any]] = []
        self.texts: list[tuple[Any, str, str]] = []  # (event, author, text)
        self.final_event: Any = None
        self.final_has_text = False
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.tokens_cached: int | None = None  # usage_metadata.cached_content_token_count: part of tokens_in
        self.tokens_reasoning: int | None = None  # usage_metadata.thoughts_token_count
        self.error: ProviderError | None = None
        self.pending_calls = 0
        self._args_by_id: dict[str, dict[str, Any]] = {}
        self.invocation_id: str | None = None
        self.final_state: dict[str, Any] | None = None  # the session's state after this turn

    def add_usage(self, usage: Any) -> None:
        """Add one event's ``usage_metadata`` (a count it does not carry leaves the sum as it is: None
        when no event carried it). Gemini counts thoughts apart from the candidates' tokens: both are
        output tokens here, the thoughts also ``tokens_reasoning``."""
        prompt, candidates = usage.prompt_token_count, usage.candidates_token_count
        cached = getattr(usage, "cached_content_token_count", None)
        thoughts = getattr(usage, "thoughts_token_count", None)
        out = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
        for key, count in (("tokens_in", prompt), ("tokens_out", out), ("tokens_cached", cached)):
            if count is not None:
                setattr(self, key, (getattr(self, key) or 0) + count)
        if thoughts is not None:
            self.tokens_reasoning = (self.tokens_reasoning or 0) + thoughts

    def add(self, event: Any) -> None:
        if self.invocation_id is None:
            self.invocation_id = event.invocation_id
        if event.partial:
            return
        usage = event.usage_metadata
        if usage is not None:
            self.add_usage(usage)
        if event.error_code and not event.get_function_calls():
            reason = event.error_message or ""
            code = str(event.error_code)
            lead = reason[:3]
            status = (
                int(code) if code.isdigit() else (int(lead) if lead.isdigit() and reason[3:4] in ("", " ") else None)
            )
            where = "tool" if self.pending_calls else "model"
            kind = "transient" if status is not None and status_transient(status) else code_kind(code, reason)
            self.error = ProviderError(
                f"adk {where} error: {event.error_code}: {reason}".rstrip(": ").splitlines()[0][:400],
                kind=kind,
                status=status,
            )
            return
        content = event.content
        if content is None or not content.parts:
            return
        for p in content.parts:
            if p.function_call:
                fc = p.function_call
                args = dict(fc.args or {})
                self.tool_calls.append(ToolCall(fc.name or "", args, fc.id))
                if fc.id:
                    self._args_by_id[fc.id] = args
                self.pending_calls += 1
            if p.function_response:
                fr = p.function_response
                self.tool_responses.append(
                    {
                        "name": fr.name,
                        "args": self._args_by_id.get(fr.id or "", None),
                        "response": jsonable(fr.response),
                    }
                )
                self.pending_calls = max(0, self.pending_calls - 1)
        text = text_of(content)
        if text:
            self.texts.append((event, event.author or "", text))
        if event.is_final_response():
            if not self.final_has_text or text:
                self.final_event = event
                self.final_has_text = bool(text)

    def output(self) -> TurnOutput:
        final_text = text_of(self.final_event.content) if self.final_event is not None else ""
        intermediate = [(author, text) for ev, author, text in self.texts if ev is not self.final_event]
        return TurnOutput(
            text=final_text,
            tool_calls=list(self.tool_calls),
            tool_responses=list(self.tool_responses),
            intermediate=intermediate,
        )
