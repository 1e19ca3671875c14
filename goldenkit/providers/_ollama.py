"""``ollama``: a model served by Ollama, ``POST {host}/api/chat`` with ``"stream": false``
(``stream=True``: its streamed JSON lines, put back together by
:class:`goldenkit.providers._streaming.OllamaStream`).

The host comes from the ``host`` option, else the ``OLLAMA_HOST`` environment
variable (``host:port`` or a URL), else http://127.0.0.1:11434. Basic auth
(for an Ollama behind a proxy) comes from userinfo in the URL
(``http://user:pw@host``; httpx does not send it by itself) or else from
``OLLAMA_USER`` / ``OLLAMA_PASSWORD``; userinfo is stripped from every URL
that appears in a message or in run.json. A user message's images are sent in
its ``images`` list as base64; an image given only by URL is refused before the
run starts (goldenkit does not fetch images from the network).
"""

from __future__ import annotations

import os
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
from goldenkit.providers._streaming import OllamaStream
from goldenkit.records import ImagePart, Message, ToolCall

DEFAULT_HOST = "http://127.0.0.1:11434"


def normalize_host(host: str) -> str:
    """``OLLAMA_HOST`` values such as ``0.0.0.0:11434`` or ``example.org`` as a URL."""
    h = host.strip()
    if "://" not in h:
        h = "http://" + h
    return h.rstrip("/")


def encode_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages in Ollama's chat format (an assistant's tool calls with ``"content": ""``
    when it said nothing, as Ollama itself sends them: its ``content`` is a string, never null)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content or ""}
        if m.role == "assistant" and m.tool_calls:
            d["tool_calls"] = [{"function": {"name": tc.name, "arguments": tc.args}} for tc in m.tool_calls]
        if m.role == "tool" and m.name:
            d["tool_name"] = m.name
        if m.images:
            d["images"] = [_base64(image) for image in m.images]
        out.append(d)
    return out


def _base64(image: ImagePart) -> str:
    if image.data is None:  # a run refuses such rows before the first call (image_refusal)
        raise ProviderError(f"ollama takes images as base64 data only, not a URL ({image.url})", kind="infrastructure")
    return image.base64()


def decode_reply(obj: dict[str, Any], url: str) -> ChatReply:
    msg = obj.get("message")
    if not isinstance(msg, dict):
        if "error" in obj:
            raise reply_error(obj["error"], url)
        raise ProviderError(f"malformed reply from {url}: no message", kind="infrastructure", url=url)
    calls: list[ToolCall] = []
    for tc in msg.get("tool_calls") or []:
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ProviderError(
                f"malformed reply from {url}: tool call without a function name", kind="infrastructure", url=url
            )
        calls.append(ToolCall(fn["name"], parse_arguments(fn.get("arguments"))))
    return ChatReply(
        text=content_text(msg.get("content")),
        tool_calls=calls,
        tokens_in=token_count(obj.get("prompt_eval_count")),
        tokens_out=token_count(obj.get("eval_count")),
        model=obj.get("model"),
        finish_reason=obj.get("done_reason"),
        raw=obj,
    )


class OllamaProvider(ChatProvider):
    """Ollama's native chat API. Options: ``model`` (required), ``host``, ``temperature``,
    ``seed``, ``max_tokens`` (sent as ``num_predict``), ``system``, ``timeout``, ``options``
    (more Ollama options, e.g. num_ctx), ``keep_alive``; ``history``, ``max_tool_steps``,
    ``tool_responses``: the conversation and tool loop (see :mod:`goldenkit.providers._conversation`);
    ``ca_bundle``, ``no_proxy``, ``stream``, ``max_reply_bytes``: the transport
    (:class:`goldenkit.providers._chat.ChatProvider`)."""

    name = "ollama"
    mode = "live"

    def __init__(
        self,
        *,
        model: str | None = None,
        host: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        system: str | None = None,
        history: str = "actual",
        max_tool_steps: int = DEFAULT_MAX_TOOL_STEPS,
        tool_responses: str | None = None,
        timeout: float = 60.0,
        max_connections: int = 64,
        options: dict[str, Any] | None = None,
        keep_alive: str | None = None,
        api_key_env: str | None = None,
        ca_bundle: str | None = None,
        no_proxy: bool = False,
        stream: bool = False,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        if not model:
            raise ConfigError("provider ollama: --model is required")
        raw_host = host or base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        bare, userinfo = split_userinfo(normalize_host(raw_host))
        auth_source = "the host URL's user:password"
        if userinfo is None and (os.environ.get("OLLAMA_USER") or os.environ.get("OLLAMA_PASSWORD")):
            userinfo = (os.environ.get("OLLAMA_USER", ""), os.environ.get("OLLAMA_PASSWORD", ""))
            auth_source = "environment variable OLLAMA_USER or OLLAMA_PASSWORD"
        self.model = model
        self.host = bare
        self.url = bare.rstrip("/") + "/api/chat"
        self.safe_url = redact_url(self.url)
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.system = system
        self.conversation = ConversationOptions(history, max_tool_steps, tool_responses)
        self.options = dict(options or {})
        self.keep_alive = keep_alive
        self.api_key_env = api_key_env
        self._init_http(
            api_key_env=api_key_env,
            timeout=timeout,
            max_connections=max_connections,
            auth=userinfo,
            auth_source=auth_source,
            ca_bundle=ca_bundle,
            no_proxy=no_proxy,
            stream=stream,
            max_reply_bytes=max_reply_bytes,
        )

    def settings(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "host": redact_url(self.host),
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "system": self.system,
            **self.conversation.settings(),
            **({"options": self.options} if self.options else {}),
        }

    def payload(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        options = dict(self.options)
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.seed is not None:
            options["seed"] = self.seed
        if self.max_tokens is not None:
            options["num_predict"] = self.max_tokens
        body: dict[str, Any] = {"model": self.model, "messages": encode_messages(messages), "stream": self.stream}
        if options:
            body["options"] = options
        if tools:
            body["tools"] = function_tools(tools)
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        return body

    def image_refusal(self, image: ImagePart) -> str | None:
        if image.data is None:
            return (
                f"ollama takes images as base64 data only, and this one is a URL ({image.url}); "
                "goldenkit does not fetch from the network during a run: embed the image as data"
            )
        return super().image_refusal(image)

    def decode(self, obj: Any) -> ChatReply:
        return decode_reply(obj, self.safe_url)

    def collector(self) -> OllamaStream:
        return OllamaStream(self.safe_url)


__all__ = ["OllamaProvider", "decode_reply", "encode_messages", "normalize_host"]

publish(globals())
