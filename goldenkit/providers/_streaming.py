"""Streamed replies put back together: OpenAI-style server-sent events and Ollama's JSON lines.

With ``stream = true`` a chat provider asks the server to stream its answer and
feeds each line of the reply to one of these collectors; :meth:`result` then
gives the object the same server would have sent unstreamed, which the
provider decodes exactly as it decodes a plain reply. So text, tool calls and
verdicts are the same either way; only the time to the first token
(``ttft_ms``) is new. ``feed`` returns True for a line that carried output.

* :class:`OpenAIStream`: ``data: {chunk}`` events until ``data: [DONE]``; each
  chunk's ``choices[0].delta`` adds ``content`` and ``tool_calls`` pieces (joined
  by ``index``); ``finish_reason``, ``model`` and ``usage`` (sent when the server
  honours ``stream_options.include_usage``) are kept. An ``error`` event is
  passed on as the reply, so it is reported like an unstreamed error.
* :class:`OllamaStream`: one JSON object per line, ``message.content`` pieces,
  ``message.tool_calls`` lists, and the last (``done: true``) object's counts.

``finished`` says whether the stream carried its end marker (OpenAI: ``data: [DONE]``
or a chunk with a ``finish_reason``; Ollama: ``done: true``). A stream that ends
without one was cut (by a proxy, a gateway, a crashed server): its text is not an
answer, and the provider raises an ``infrastructure`` error instead of grading it.

    >>> s = OpenAIStream("http://h/v1/chat/completions")
    >>> s.feed(b'data: {"model": "m", "choices": [{"delta": {"content": "he"}}]}')
    True
    >>> s.feed(b'data: {"choices": [{"delta": {"content": "y"}, "finish_reason": "stop"}]}')
    True
    >>> s.feed(b"data: [DONE]")
    False
    >>> s.result()["choices"][0]["message"]["content"], s.finished
    ('hey', True)
"""

from __future__ import annotations

from typing import Any

import orjson

from goldenkit._scrub import scrub
from goldenkit.errors import ProviderError


def _parse(data: bytes, url: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except ValueError:
        shown = scrub(data.decode("utf-8", "replace"))[:80]  # masked before it is cut
        raise ProviderError(
            f"malformed reply from {url}: a streamed chunk is not JSON ({shown!r})", kind="infrastructure", url=url
        ) from None
    if not isinstance(obj, dict):
        raise ProviderError(
            f"malformed reply from {url}: a streamed chunk is not a JSON object", kind="infrastructure", url=url
        )
    return obj


class OpenAIStream:
    """Collects a chat.completions SSE stream into one chat.completions reply object."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] | None = None
        self.error: Any = None
        self.chunks = 0
        self.done = False  # data: [DONE] came

    @property
    def finished(self) -> bool:
        """The stream carried its end: ``[DONE]`` or a ``finish_reason``."""
        return self.done or self.finish_reason is not None

    def feed(self, line: bytes) -> bool:
        if not line.startswith(b"data:"):
            return False  # blank separators, comments, event:/id: fields
        data = line[5:].strip()
        if data == b"[DONE]":
            self.done = True
            return False
        if not data:
            return False
        obj = _parse(data, self.url)
        self.chunks += 1
        if "error" in obj:
            self.error = obj["error"]
            return False
        self.model = obj.get("model") or self.model
        if isinstance(obj.get("usage"), dict):
            self.usage = obj["usage"]
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return False  # the usage-only chunk
        choice = choices[0]
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return False
        out = False
        if isinstance(delta.get("content"), str) and delta["content"]:
            self.text.append(delta["content"])
            out = True
        for piece in delta.get("tool_calls") or []:
            if isinstance(piece, dict):
                self._add_call(piece)
                out = True
        return out

    def _add_call(self, piece: dict[str, Any]) -> None:
        """One streamed piece of a tool call, as OpenAI's streaming format means it: the call's ``id``,
        ``type`` and ``function.name`` are set by the first delta that carries them and kept (OpenAI sends
        them once; llama.cpp's server repeats them in every delta: the same call either way);
        ``function.arguments`` are appended."""
        index = piece.get("index", len(self.calls))
        call = self.calls.setdefault(index, {"id": None, "type": None, "name": None, "arguments": ""})
        fn = piece.get("function")
        fn = fn if isinstance(fn, dict) else {}
        for key, value in (("id", piece.get("id")), ("type", piece.get("type")), ("name", fn.get("name"))):
            if call[key] is None and isinstance(value, str) and value:
                call[key] = value
        if isinstance(fn.get("arguments"), str):
            call["arguments"] += fn["arguments"]

    def result(self) -> dict[str, Any]:
        """The reply as an unstreamed server would have sent it."""
        if self.error is not None:
            return {"error": self.error}
        if not self.chunks:
            return {}
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": c["type"] or "function",
                    "function": {"name": c["name"] or "", "arguments": c["arguments"]},
                }
                for _, c in sorted(self.calls.items())
            ]
        obj: dict[str, Any] = {
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.usage is not None:
            obj["usage"] = self.usage
        return obj


class OllamaStream:
    """Collects Ollama's streamed ``/api/chat`` lines into one unstreamed reply object."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.text: list[str] = []
        self.calls: list[Any] = []
        self.last: dict[str, Any] | None = None
        self.error: Any = None

    @property
    def finished(self) -> bool:
        """The stream carried its end: a ``done: true`` line."""
        return self.last is not None and self.last.get("done") is True

    def feed(self, line: bytes) -> bool:
        if not line.strip():
            return False
        obj = _parse(line, self.url)
        if "error" in obj:
            self.error = obj["error"]
            return False
        self.last = obj
        msg = obj.get("message")
        if not isinstance(msg, dict):
            return False
        out = False
        if isinstance(msg.get("content"), str) and msg["content"]:
            self.text.append(msg["content"])
            out = True
        if isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
            self.calls.extend(msg["tool_calls"])
            out = True
        return out

    def result(self) -> dict[str, Any]:
        """The reply as an unstreamed Ollama would have sent it."""
        if self.error is not None:
            return {"error": self.error}
        if self.last is None:
            return {}
        obj = dict(self.last)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            message["tool_calls"] = self.calls
        obj["message"] = message
        return obj


__all__ = ["OllamaStream", "OpenAIStream"]
