"""``openai``: any OpenAI-compatible chat endpoint (OpenAI, vLLM, LM Studio, llama.cpp server).

``POST {base_url}/v1/chat/completions`` with ``stream: false`` (``stream=True``: server-sent
events, put back together by :class:`goldenkit.providers._streaming.OpenAIStream`). ``base_url`` may
end in ``/v1`` or not. The API key is read from the environment variable the
user names (``api_key_env``) when the provider is built, sent as
``Authorization: Bearer``, and never appears in settings, messages or results.
A user message with images is sent as content parts: its text, then one
``image_url`` part per image (bytes as a ``data:<mime>;base64,...`` URI).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from goldenkit._registry import publish
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._chat import (
    ChatProvider,
    ChatReply,
    content_text,
    function_tools,
    parse_arguments,
    token_count,
)
from goldenkit.providers._conversation import DEFAULT_MAX_TOOL_STEPS, ConversationOptions
from goldenkit.providers._failures import reply_error
from goldenkit.providers._http import DEFAULT_MAX_REPLY_BYTES, redact_url, split_userinfo
from goldenkit.providers._streaming import OpenAIStream
from goldenkit.records import Message, ToolCall

DEFAULT_BASE_URL = "https://api.openai.com"


def chat_completions_url(base_url: str) -> str:
    """``{base}/v1/chat/completions`` whether or not ``base_url`` already ends in ``/v1``."""
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if base.endswith("/v1"):
        return base + "/chat/completions"
    return base + "/v1/chat/completions"


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages in the OpenAI chat format."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            # No "content" key when the message has no text: OpenAI's API takes it so, and servers that
            # validate "content" as a string (llama.cpp's) refuse a null with a 500.
            text: dict[str, Any] = {"content": m.content} if m.content else {}
            out.append(
                {
                    "role": "assistant",
                    **text,
                    "tool_calls": [
                        {
                            "id": tc.id or f"call_{i}",
                            "type": "function",
                            "function": {"name": tc.name, "arguments": json.dumps(tc.args, ensure_ascii=False)},
                        }
                        for i, tc in enumerate(m.tool_calls)
                    ],
                }
            )
        elif m.role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": getattr(m, "tool_call_id", None) or m.name or "", "content": m.content}
            )
        elif m.images:
            out.append({"role": m.role, "content": content_parts(m)})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def content_parts(m: Message) -> list[dict[str, Any]]:
    """A message with images as OpenAI content parts: its text (when there is any), then one
    ``image_url`` part per image (bytes as a ``data:`` URI, a URL as it is)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
    for image in m.images:
        parts.append({"type": "image_url", "image_url": {"url": image.data_uri()}})
    return parts


def decode_reply(obj: dict[str, Any], url: str) -> ChatReply:
    """One chat.completions reply as a ChatReply. An ``error`` object is the server's error
    (:func:`goldenkit.providers._failures.reply_error`: ``refused`` for a context length or a content
    filter, else ``infrastructure``); anything else unexpected is an ``infrastructure`` ProviderError."""
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if "error" in obj:
            err = obj["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            code = err.get("code") if isinstance(err, dict) else None
            raise reply_error(f"{msg} ({code})" if isinstance(code, str) else msg, url)
        raise ProviderError(f"malformed reply from {url}: no choices[0]", kind="infrastructure", url=url)
    choice = choices[0]
    msg = choice.get("message")
    if not isinstance(msg, dict):
        raise ProviderError(f"malformed reply from {url}: choices[0] has no message", kind="infrastructure", url=url)
    calls: list[ToolCall] = []
    for tc in msg.get("tool_calls") or []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ProviderError(
                f"malformed reply from {url}: tool call without a function name", kind="infrastructure", url=url
            )
        calls.append(ToolCall(fn["name"], parse_arguments(fn.get("arguments")), id=tc.get("id")))
    usage_obj = obj.get("usage")
    usage: dict[str, Any] = usage_obj if isinstance(usage_obj, dict) else {}
    return ChatReply(
        text=content_text(msg.get("content")),
        tool_calls=calls,
        tokens_in=token_count(usage.get("prompt_tokens")),
        tokens_out=token_count(usage.get("completion_tokens")),
        model=obj.get("model"),
        finish_reason=choice.get("finish_reason"),
        raw=obj,
        tokens_cached=token_count(_detail(usage, "prompt_tokens_details", "cached_tokens")),
        tokens_reasoning=token_count(_detail(usage, "completion_tokens_details", "reasoning_tokens")),
    )


def _detail(usage: dict[str, Any], details: str, key: str) -> Any:
    """``usage[details][key]`` (``prompt_tokens_details.cached_tokens``), None when the server sent none."""
    table = usage.get(details)
    return table.get(key) if isinstance(table, dict) else None


TOOL_CHOICE_MODES = ("auto", "none", "required")


def tool_choice_field(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    """The ``tool_choice`` body field: a mode as is, a tool name as a named (forced) choice."""
    if isinstance(choice, dict) or choice in TOOL_CHOICE_MODES:
        return choice
    return {"type": "function", "function": {"name": choice}}


class OpenAIProvider(ChatProvider):
    """An OpenAI-compatible chat.completions endpoint.

    Options: ``model`` (required), ``base_url`` (default https://api.openai.com,
    with or without ``/v1``), ``api_key_env`` (the *name* of the environment
    variable holding the key; None sends no key), ``temperature``, ``seed``,
    ``max_tokens``, ``system`` (a system prompt that overrides the case's),
    ``tool_choice`` (sent with requests that offer tools: ``"auto"``, ``"none"``,
    ``"required"``, or a tool name, sent as a named choice
    ``{"type": "function", "function": {"name": ...}}``; default: not sent),
    ``timeout`` (seconds per request), ``extra`` (more body fields, e.g. top_p);
    ``history``, ``max_tool_steps``, ``tool_responses``: the conversation and tool
    loop (:class:`goldenkit.providers._conversation.ConversationOptions`);
    ``ca_bundle``, ``no_proxy``, ``stream``, ``max_reply_bytes``: the transport
    (:class:`goldenkit.providers._chat.ChatProvider`). Streamed requests also ask for
    ``stream_options.include_usage`` (servers that ignore it report no token counts).
    """

    name = "openai"
    mode = "live"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        system: str | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        history: str = "actual",
        max_tool_steps: int = DEFAULT_MAX_TOOL_STEPS,
        tool_responses: str | None = None,
        timeout: float = 60.0,
        max_connections: int = 64,
        extra: dict[str, Any] | None = None,
        ca_bundle: str | None = None,
        no_proxy: bool = False,
        stream: bool = False,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        if not model:
            raise ConfigError("provider openai: --model is required")
        bare, userinfo = split_userinfo(base_url or DEFAULT_BASE_URL)
        self.model = model
        self.base_url = bare
        self.url = chat_completions_url(bare)
        self.safe_url = redact_url(self.url)
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.system = system
        if tool_choice is not None and not (
            isinstance(tool_choice, dict) or (isinstance(tool_choice, str) and tool_choice)
        ):
            raise ConfigError(
                f"provider openai: tool_choice must be a tool name, auto, none or required, not {tool_choice!r}"
            )
        self.tool_choice = tool_choice
        self.conversation = ConversationOptions(history, max_tool_steps, tool_responses)
        self.extra = dict(extra or {})
        self._init_http(
            api_key_env=api_key_env,
            timeout=timeout,
            max_connections=max_connections,
            auth=userinfo,
            ca_bundle=ca_bundle,
            no_proxy=no_proxy,
            stream=stream,
            max_reply_bytes=max_reply_bytes,
        )

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": redact_url(self.base_url),
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "system": self.system,
            **({"tool_choice": self.tool_choice} if self.tool_choice is not None else {}),
            **self.conversation.settings(),
            **({"extra": self.extra} if self.extra else {}),
        }

    def payload(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": encode_messages(messages), "stream": self.stream}
        if self.stream:
            body["stream_options"] = {"include_usage": True}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if tools:
            body["tools"] = function_tools(tools)
            choice = self.choice_for(messages, body["tools"])
            if choice is not None:
                body["tool_choice"] = choice
        body.update(self.extra)
        return body

    def choice_for(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> str | dict[str, Any] | None:
        """The ``tool_choice`` of one request (None: not sent).

        A forcing choice (``"required"`` or a tool's name) forces the turn's first request
        only: once tool results are being sent back (the last message is a tool's) the
        request says ``"auto"``, so the model can answer in text and the tool loop ends
        (forced on every request, it would call tools until ``max_tool_steps``). A named
        choice is sent only with requests that offer that tool (a server refuses a
        choice naming a tool it was not given)."""
        choice = self.tool_choice
        if choice is None or (isinstance(choice, str) and choice in ("auto", "none")):
            return choice
        if messages and messages[-1].role == "tool":
            return "auto"
        if isinstance(choice, str) and choice != "required":
            if not any(t.get("function", {}).get("name") == choice for t in tools):
                return None
        return tool_choice_field(choice)

    def decode(self, obj: Any) -> ChatReply:
        return decode_reply(obj, self.safe_url)

    def collector(self) -> OpenAIStream:
        return OpenAIStream(self.safe_url)


__all__ = [
    "OpenAIProvider",
    "chat_completions_url",
    "content_parts",
    "decode_reply",
    "encode_messages",
    "tool_choice_field",
]

publish(globals())
