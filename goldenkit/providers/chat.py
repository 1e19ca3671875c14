"""The conversation loop shared by chat providers (OpenAI-compatible, Ollama).

This is the one place where the message list sent to a model is built:

1. the system instruction (the provider's override, else the case's),
2. the case's prior history,
3. for each user turn in order: the user message, then the model's *actual*
   answer to it (text and tool calls) before the next turn is sent.

Each wire protocol only encodes the neutral :class:`goldenkit.cases.Message`
list (:meth:`ChatBackend.send`) and decodes one reply into a :class:`ChatReply`.

Tool calls the model asks for are parsed into ``TurnOutput.tool_calls``. :func:`converse`
runs the conversation in :mod:`goldenkit.providers.conversation`: each turn with the
conversation so far (``history`` actual or expected) and the tool loop (calls answered
from the case's recorded tool responses until the model answers in text).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from goldenkit.cases import Case, Message, ToolCall
from goldenkit.providers.base import Response
from goldenkit.providers.conversation import initial_messages, run_conversation


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


async def converse(case: Case, backend: ChatBackend, *, system: str | None = None, **options: Any) -> Response:
    """Send every user turn of ``case`` with the conversation so far; one TurnOutput per turn.

    ``options`` are :func:`goldenkit.providers.conversation.run_conversation`'s
    (``history``, ``max_tool_steps``, ``tool_responses``).
    """
    return await run_conversation(case, backend, system=system, **options)


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
