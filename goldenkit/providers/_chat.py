"""The conversation loop shared by chat providers (OpenAI-compatible, Ollama).

This is the one place where the message list sent to a model is built:

1. the system instruction (the provider's override, else the case's),
2. the case's prior history,
3. for each user turn in order: the user message, then the model's *actual*
   answer to it (text and tool calls) before the next turn is sent.

Each wire protocol only encodes the neutral :class:`goldenkit.records.Message`
list (:meth:`ChatBackend.send`) and decodes one reply into a :class:`ChatReply`.

Tool calls the model asks for are parsed into ``TurnOutput.tool_calls``. :func:`converse`
runs the conversation in :mod:`goldenkit.providers._conversation`: each turn with the
conversation so far (``history`` actual or expected) and the tool loop (calls answered
from the case's recorded tool responses until the model answers in text).
"""

from __future__ import annotations

import json
import os
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from goldenkit._checks import check_env_name
from goldenkit._scrub import header_secrets, note_secrets
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import Provider, Response
from goldenkit.providers._client import ClientHolder, basic_auth_header, check_header_value
from goldenkit.providers._conversation import ConversationOptions, initial_messages, run_conversation
from goldenkit.providers._http import DEFAULT_MAX_REPLY_BYTES, post_json, post_stream
from goldenkit.records import Case, ImagePart, Message, ToolCall


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
    ttft_ms: float | None = None
    tokens_cached: int | None = None  # part of tokens_in
    tokens_reasoning: int | None = None  # part of tokens_out


class StreamCollector(Protocol):
    """Collects one streamed reply: ``feed`` each line (True when it carried output), then ``result``;
    ``finished`` says whether the stream carried its end marker."""

    @property
    def finished(self) -> bool: ...

    def feed(self, line: bytes) -> bool: ...

    def result(self) -> dict[str, Any]: ...


class ChatBackend(Protocol):
    async def send(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> ChatReply: ...


async def converse(case: Case, backend: ChatBackend, *, system: str | None = None, **options: Any) -> Response:
    """Send every user turn of ``case`` with the conversation so far; one TurnOutput per turn.

    ``options`` are :func:`goldenkit.providers._conversation.run_conversation`'s
    (``history``, ``max_tool_steps``, ``tool_responses``).
    """
    return await run_conversation(case, backend, system=system, **options)


class ChatProvider(Provider):
    """What the OpenAI-compatible and Ollama providers share: one pooled HTTP client
    (``_http``), request headers with an optional bearer key read from the environment,
    and the conversation and tool loop. Subclasses set ``url``, ``safe_url`` (no
    userinfo), ``system`` and ``conversation``, and implement :meth:`payload`,
    :meth:`decode` and :meth:`collector` (the streamed reply's) for their wire format.

    Transport options every chat provider takes: ``ca_bundle`` (a PEM file of CA
    certificates), ``no_proxy`` (ignore the proxy variables), ``stream`` (ask for a
    streamed reply; the response then carries ``ttft_ms``) and ``max_reply_bytes``.
    None of them is part of the agent version (:meth:`settings`): they change how
    the answer travels, not what it is.
    """

    model: str
    url: str
    safe_url: str
    system: str | None
    conversation: ConversationOptions
    stream: bool
    _http: ClientHolder
    bounds_calls = True  # every request has a deadline of ``timeout``, connect to last byte

    def _init_http(
        self,
        *,
        api_key_env: str | None,
        timeout: float,
        max_connections: int,
        auth: tuple[str, str] | None,
        auth_source: str = "the base URL's user:password",
        ca_bundle: str | None = None,
        no_proxy: bool = False,
        stream: bool = False,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        """The client and headers; the key itself is never stored anywhere but the header.

        Every header value is checked here, before any request: a key with CR, LF or
        another control character is a ConfigError naming its variable (exit 1). The
        headers are the client's own (sent with every request, encoded once)."""
        headers: dict[str, str] = {}
        if api_key_env:
            check_env_name(api_key_env, f"provider {self.name}: api_key_env")
            key = os.environ.get(api_key_env)
            if not key:
                raise ConfigError(
                    f"provider {self.name}: environment variable {api_key_env} is not set (it should hold the API key)"
                )
            check_header_value(key, f"provider {self.name}: environment variable {api_key_env}")
            headers["authorization"] = f"Bearer {key}"
        elif auth is not None:
            user, password = auth
            check_header_value(f"{user}:{password}", f"provider {self.name}: {auth_source}")
            headers["authorization"] = basic_auth_header(user, password)
        if isinstance(max_reply_bytes, bool) or not isinstance(max_reply_bytes, int) or max_reply_bytes < 1:
            raise ConfigError(
                f"provider {self.name}: max_reply_bytes must be a positive integer, not {max_reply_bytes!r}"
            )
        note_secrets(*header_secrets(headers))  # a scope open now (the CLI's, a run's) masks them
        self.stream = bool(stream)
        self.max_reply_bytes = max_reply_bytes
        self._http = ClientHolder(
            timeout=timeout,
            max_connections=max_connections,
            ca_bundle=ca_bundle,
            no_proxy=no_proxy,
            headers=headers,
        )

    def secret_values(self) -> tuple[str, ...]:
        """The key or password in this provider's request headers (:func:`goldenkit._scrub.header_secrets`)."""
        return tuple(header_secrets(self._http.headers))

    @abstractmethod
    def payload(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The request body for one model call (``stream`` set from :attr:`stream`)."""

    @abstractmethod
    def decode(self, obj: Any) -> ChatReply:
        """One decoded reply (ProviderError, permanent, naming ``safe_url`` when malformed)."""

    @abstractmethod
    def collector(self) -> StreamCollector:
        """A fresh collector of one streamed reply (see :mod:`goldenkit.providers._streaming`)."""

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        self._http.configure(timeout=timeout, max_in_flight=max_in_flight)

    def set_transport(self, *, ca_bundle: str | None = None, no_proxy: bool = False) -> None:
        """Use this CA bundle / ignore the proxy variables (a run applies its settings to its judge)."""
        self._http.set_transport(ca_bundle=ca_bundle, no_proxy=no_proxy)

    async def send(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> ChatReply:
        """One request; ``timeout`` is its whole deadline, connect to last byte, streamed or not.

        A streamed reply that ends without its end marker (:attr:`StreamCollector.finished`)
        is an ``infrastructure`` error: a cut answer is never graded. A stream that ended before
        its first chunk (llama.cpp's server answers a prompt over its context that way: 200 and
        nothing) is asked once more unstreamed, within the same attempt, so the server can say why:
        its own error (a context length: the candidate's ``refused``) or its answer."""
        body = self.payload(messages, tools)
        deadline = self._http.timeout
        if not self.stream:
            obj = await post_json(
                self._http.get(), self.url, body, deadline=deadline, max_reply_bytes=self.max_reply_bytes
            )
            return self.decode(obj)
        collected = self.collector()
        ttft = await post_stream(
            self._http.get(), self.url, body, collected.feed, deadline=deadline, max_reply_bytes=self.max_reply_bytes
        )
        obj = collected.result()
        if not obj and not collected.finished:  # nothing came: the unstreamed request says why
            unstreamed = {**body, "stream": False}
            unstreamed.pop("stream_options", None)
            obj = await post_json(
                self._http.get(), self.url, unstreamed, deadline=deadline, max_reply_bytes=self.max_reply_bytes
            )
            return self.decode(obj)
        if "error" not in obj and not collected.finished:
            raise ProviderError(
                f"the stream from {self.safe_url} ended before its end marker (cut by a proxy, gateway or "
                "server?); a cut answer is not graded",
                kind="infrastructure",
                url=self.safe_url,
            )
        reply = self.decode(obj)
        reply.ttft_ms = ttft
        return reply

    def image_refusal(self, image: ImagePart) -> str | None:
        if not image.is_image:
            return f"provider {self.name} sends only images, not {image.mime_type} parts"
        if image.url is not None and not image.url.lower().startswith(("http://", "https://")):
            return f"provider {self.name} sends image URLs only over http(s), not {image.url}"
        return None

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        return await converse(case, self, system=self.system, **self.conversation.kwargs())

    async def aclose(self) -> None:
        await self._http.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, url={self.safe_url!r})"


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


def token_count(value: Any) -> int | None:
    """A token count as the server reported it; None when it reported none, or not a count (a text, a
    negative or a fraction: never a guess)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


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
    "ChatProvider",
    "ChatBackend",
    "ChatReply",
    "content_text",
    "converse",
    "function_tools",
    "initial_messages",
    "parse_arguments",
]
