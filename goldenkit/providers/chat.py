"""The conversation loop shared by chat providers (OpenAI-compatible, Ollama).

This is the one place where the message list sent to a model is built:

1. the system instruction (the provider's override, else the case's),
2. the case's prior history,
3. for each user turn in order: the user message, then the model's *actual*
   answer to it (text and tool calls) before the next turn is sent.

Each wire protocol only encodes the neutral :class:`goldenkit.cases.Message`
list (:meth:`ChatBackend.send`) and decodes one reply into a :class:`ChatReply`.

Tool calls the model asks for are parsed into ``TurnOutput.tool_calls``. Answering
them from the case's recorded tool responses and sending the model back round
(the tool loop) belongs in :func:`converse`, right after ``send`` returns; today a
turn ends at the model's first reply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from goldenkit.cases import Case, Message, ToolCall
from goldenkit.providers.base import Response, TurnOutput


@dataclass
class ChatReply:
    """One decoded model reply."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str | None = None
    finish_reason: str | None = None
    raw: Any = None


class ChatBackend(Protocol):
    async def send(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> ChatReply: ...


def initial_messages(case: Case, system: str | None = None) -> list[Message]:
    """System instruction (``system`` overrides the case's) and the case's prior history."""
    out: list[Message] = []
    sys_text = system if system is not None else case.system
    if sys_text:
        out.append(Message(role="system", content=sys_text))
    out.extend(case.history)
    return out


async def converse(case: Case, backend: ChatBackend, *, system: str | None = None) -> Response:
    """Send every user turn of ``case`` with the conversation so far; one TurnOutput per turn."""
    messages = initial_messages(case, system)
    turns: list[TurnOutput] = []
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: str | None = None
    raws: list[Any] = []
    for turn in case.turns:
        messages.append(Message(role="user", content=turn.user))
        reply = await backend.send(messages, case.tools)
        # Tool loop (answering reply.tool_calls from turn.tool_responses and sending
        # the model back round) is added here.
        messages.append(Message(role="assistant", content=reply.text, tool_calls=tuple(reply.tool_calls)))
        turns.append(TurnOutput(text=reply.text, tool_calls=list(reply.tool_calls)))
        if reply.tokens_in is not None:
            tokens_in = (tokens_in or 0) + reply.tokens_in
        if reply.tokens_out is not None:
            tokens_out = (tokens_out or 0) + reply.tokens_out
        model = reply.model or model
        raws.append(reply.raw)
    return Response(
        turns=turns,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        model=model,
        raw=raws[0] if len(raws) == 1 else raws,
    )


def function_tools(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool declarations in the ``{"type": "function", "function": {...}}`` form both APIs take."""
    out = []
    for t in tools:
        if t.get("type") == "function" and "function" in t:
            out.append(t)
            continue
        fn: dict[str, Any] = {"name": t["name"]}
        if t.get("description"):
            fn["description"] = t["description"]
        fn["parameters"] = t.get("parameters") or {"type": "object", "properties": {}}
        out.append({"type": "function", "function": fn})
    return out


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict.

    OpenAI sends a JSON string; Ollama an object. Arguments that are not valid
    JSON (for example cut off by max_tokens) are kept verbatim under
    ``"_invalid_json"`` so a trajectory grader fails the call with a visible reason
    instead of the run crashing.
    """
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            obj = json.loads(arguments)
        except ValueError:
            return {"_invalid_json": arguments}
        return obj if isinstance(obj, dict) else {"_value": obj}
    return {"_value": arguments}


def content_text(content: Any) -> str:
    """Message content as text (a string, or a list of ``{"type": "text", "text": ...}`` parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, str):
                parts.append(p)
        return "".join(parts)
    return str(content)


__all__ = [
    "ChatBackend",
    "ChatReply",
    "content_text",
    "converse",
    "function_tools",
    "initial_messages",
    "parse_arguments",
]
