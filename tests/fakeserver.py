"""A real, scriptable model server on 127.0.0.1 for tests: OpenAI-compatible and Ollama-compatible.

It is a stdlib ``ThreadingHTTPServer`` (HTTP/1.1 keep-alive) running in a
background thread, so the client under test goes through real sockets, real
status codes and real connection drops; nothing in httpx or the transport is mocked.

Endpoints::

    POST /v1/chat/completions   OpenAI chat.completions (also /chat/completions)
    POST /api/chat              Ollama chat ("stream": false)

Usage::

    from fakeserver import FakeModelServer, Reply   # tests/ is on sys.path under pytest

    with FakeModelServer() as srv:                       # starts; stops on exit
        srv.script(Reply.status(429, retry_after=1), Reply.text("hello"))
        ...  # point the provider at srv.url ("http://127.0.0.1:PORT")
        assert srv.count() == 2
        srv.requests[1].json["messages"]            # what the client sent

What a request gets, in order of precedence:

1. ``api_key="k"``: a request without ``Authorization: Bearer k`` gets 401;
   ``basic_auth=("u", "p")``: a request without that Basic auth gets 401;
2. the next scripted reply (:meth:`FakeModelServer.script`, consumed in order);
3. ``responder(request) -> Reply`` when set (answer by content: prompt, model...);
4. ``default`` (a :class:`Reply`; initially ``Reply.text("ok")``).

Replies (:class:`Reply` constructors): ``text`` (with token usage),
``tool_calls``, ``status`` (any code, optional Retry-After and body), ``slow``
(answer after a delay), ``hang`` (wait longer than the client's timeout, then
answer), ``drop`` (close the connection without a reply), ``malformed``
(200 with a body that is not the JSON expected), ``page`` (any status with a body
of another content type: a proxy's or gateway's HTML page), ``redirect`` (a 3xx
with a Location), ``dripping`` (a normal answer sent one byte every ``interval``
seconds, streamed or not). A request whose JSON body says ``"stream": true`` gets its reply
streamed (OpenAI: server-sent events ending in ``data: [DONE]``; Ollama: JSON
lines), chunked, a few characters per chunk, with the same text and tool calls;
``text(..., cut=True)`` streams it without its end (no finish_reason chunk and no
``[DONE]``; for Ollama no ``done: true`` line), as a cut stream would arrive.
``FakeModelServer(close_after_reply=True)`` closes every connection right after its
reply without saying so (no ``Connection: close``), as tinyproxy does: a client that
pools the connection finds it closed on its next request.
``FakeModelServer(tls=ssl_context)`` serves https. Every request is recorded in
``requests`` (:class:`Recorded`: path, headers, parsed JSON, arrival time),
including those answered 401; ``in_flight`` and ``peak_in_flight`` count the
requests being answered at once.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeModelServer", "Recorded", "Reply"]


@dataclass
class Reply:
    """What the server does with one request. Build with the class methods."""

    kind: str = "text"  # text | status | drop | malformed
    content: str = "ok"
    calls: list[dict[str, Any]] = field(default_factory=list)
    code: int = 200
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    tokens_in: int = 10
    tokens_out: int = 5
    model: str | None = None
    content_type: str = "application/json"
    drip: float = 0.0  # seconds between the bytes of the reply (0: all at once)
    cut: bool = False  # a streamed reply without its end marker
    usage: dict[str, Any] = field(default_factory=dict)  # more of OpenAI's usage block (prompt_tokens_details...)

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        """A normal answer; ``tokens_in``/``tokens_out``/``model``/``delay``/``usage`` (more of the usage
        block: ``{"prompt_tokens_details": {"cached_tokens": 4}}``) may be given."""
        return cls(kind="text", content=text, **kw)

    @classmethod
    def tool_calls(cls, calls: list[dict[str, Any]], text: str = "", **kw: Any) -> Reply:
        """``calls``: ``[{"name": ..., "args": {...}}]``; ``args`` may be a raw string (sent verbatim)."""
        return cls(kind="text", content=text, calls=list(calls), **kw)

    @classmethod
    def status(cls, code: int, *, retry_after: float | str | None = None, body: bytes | str | None = None) -> Reply:
        """An HTTP error (or any status) with an OpenAI-style error body unless ``body`` is given."""
        hdrs = {} if retry_after is None else {"Retry-After": str(retry_after)}
        if body is None:
            body = json.dumps({"error": {"message": f"fake error {code}", "code": code}})
        return cls(kind="status", code=code, headers=hdrs, body=body.encode() if isinstance(body, str) else body)

    @classmethod
    def slow(cls, seconds: float, text: str = "ok", **kw: Any) -> Reply:
        """Answer ``text`` after ``seconds``."""
        return cls(kind="text", content=text, delay=seconds, **kw)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        """Say nothing for ``seconds`` (longer than the client's timeout), then answer."""
        return cls(kind="text", content="too late", delay=seconds)

    @classmethod
    def drop(cls, after: float = 0.0) -> Reply:
        """Read the request, then close the connection without a reply."""
        return cls(kind="drop", delay=after)

    @classmethod
    def page(
        cls, code: int, body: str = "<html><body><h1>Bad Gateway</h1></body></html>", content_type: str = "text/html"
    ) -> Reply:
        """A ``code`` reply whose body is of ``content_type`` (a proxy's, portal's or gateway's page)."""
        return cls(kind="status", code=code, body=body.encode(), content_type=content_type)

    @classmethod
    def dripping(cls, interval: float = 1.0, text: str = "ok") -> Reply:
        """A normal answer, sent one byte every ``interval`` seconds (each read gets a byte in time)."""
        return cls(kind="text", content=text, drip=interval)

    @classmethod
    def redirect(cls, code: int, location: str) -> Reply:
        """A ``code`` (301, 302, 303, 307, 308) redirect to ``location``."""
        return cls(kind="status", code=code, headers={"Location": location}, body=b"")

    @classmethod
    def malformed(cls, body: bytes | str = b'{"choices": [ this is not json') -> Reply:
        """HTTP 200 with a body that is not the JSON expected."""
        return cls(kind="malformed", body=body.encode() if isinstance(body, str) else body)


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    json: Any
    at: float


class FakeModelServer:
    """Start with ``start()`` or ``with``; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        basic_auth: tuple[str, str] | None = None,
        default: Reply | None = None,
        responder: Callable[[Recorded], Reply | None] | None = None,
        model: str = "fake-model",
        tls: ssl.SSLContext | None = None,
        close_after_reply: bool = False,
    ) -> None:
        self.tls = tls
        self.close_after_reply = close_after_reply
        self.api_key = api_key
        self.basic_auth = basic_auth
        self.default = default or Reply.text("ok")
        self.responder = responder
        self.model = model
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._url: str | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.in_flight = 0  # requests being answered now
        self.peak_in_flight = 0  # the most at once since start

    # -- control
    def script(self, *replies: Reply) -> FakeModelServer:
        """Queue replies for the next requests, in order (after auth checks)."""
        with self._lock:
            self._script.extend(replies)
        return self

    def count(self, path: str | None = None) -> int:
        """Requests received (optionally only those to ``path``)."""
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._script.clear()

    @property
    def url(self) -> str:
        """The server's URL (still known after stop, for messages and logs that name it)."""
        assert self._url is not None, "server not started"
        return self._url

    def start(self) -> FakeModelServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        if self.tls is not None:
            self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
        scheme = "https" if self.tls is not None else "http"
        self._url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler
    def _choose(self, rec: Recorded) -> Reply:
        with self._lock:
            self.requests.append(rec)
            if self._auth_failed(rec):
                return Reply.status(401, body=json.dumps({"error": {"message": "invalid api key"}}))
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            out = self.responder(rec)
            if out is not None:
                return out
        return self.default

    def _auth_failed(self, rec: Recorded) -> bool:
        auth = rec.headers.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return True
        if self.basic_auth is not None:
            token = base64.b64encode(f"{self.basic_auth[0]}:{self.basic_auth[1]}".encode()).decode()
            if auth != f"Basic {token}":
                return True
        return False


class _Handler(BaseHTTPRequestHandler):
    owner: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default stderr log
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        owner = self.owner
        with owner._lock:
            owner.in_flight += 1
            owner.peak_in_flight = max(owner.peak_in_flight, owner.in_flight)
        try:
            self._post()
        finally:
            with owner._lock:
                owner.in_flight -= 1

    def _post(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        rec = Recorded(
            path=path, headers={k.lower(): v for k, v in self.headers.items()}, json=body, at=time.monotonic()
        )
        if path not in ("/v1/chat/completions", "/chat/completions", "/api/chat"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        reply = self.owner._choose(rec)
        if reply.delay:
            end = time.monotonic() + reply.delay
            while time.monotonic() < end and not self.owner._stopping.is_set():
                time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        if reply.kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if self.owner.close_after_reply:
            self.close_connection = True  # closed after this reply, without a Connection: close header
        if reply.kind == "status":
            self._send(reply.code, reply.body or b"", reply.headers, reply.content_type)
            return
        if reply.kind == "malformed":
            self._send(200, reply.body or b"", {})
            return
        model = reply.model or (body or {}).get("model") or self.owner.model
        if isinstance(body, dict) and body.get("stream") is True:
            lines = _ollama_stream(reply, model) if path == "/api/chat" else _openai_stream(reply, model)
            if reply.cut:
                lines = lines[:-1] if path == "/api/chat" else lines[:-4]  # no done line / finish, usage, [DONE]
            ctype = "application/x-ndjson" if path == "/api/chat" else "text/event-stream"
            self._send_chunked(lines, ctype, drip=reply.drip)
            return
        if path == "/api/chat":
            payload = _ollama_reply(reply, model)
        else:
            payload = _openai_reply(reply, model)
        self._send(200, json.dumps(payload).encode(), reply.headers, drip=reply.drip)

    def _send(
        self,
        status: int,
        body: bytes,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
        drip: float = 0.0,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if not drip:
                self.wfile.write(body)
            for i in range(len(body) if drip else 0):
                if self.owner._stopping.is_set():
                    break
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(drip)
            self.wfile.flush()
        except OSError:  # the client went away (timed out)
            self.close_connection = True

    def _send_chunked(self, lines: list[bytes], content_type: str, drip: float = 0.0) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for line in lines:
                for piece in [line[i : i + 1] for i in range(len(line))] if drip else [line]:
                    if self.owner._stopping.is_set():
                        break
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    time.sleep(drip)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True


def _pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _openai_stream(reply: Reply, model: str) -> list[bytes]:
    """The reply as chat.completions SSE events: a role chunk, content and tool-call pieces, usage, [DONE]."""
    full = _openai_reply(reply, model)
    message, finish = full["choices"][0]["message"], full["choices"][0]["finish_reason"]
    head = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": p} for p in _pieces(message["content"] or "")]
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        deltas += [{"tool_calls": [{"index": i, "function": {"arguments": p}}]} for p in _pieces(fn["arguments"], 5)]
    events = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    events.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    events.append({**head, "choices": [], "usage": full["usage"]})
    return [b"data: " + json.dumps(e).encode() + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]


def _ollama_stream(reply: Reply, model: str) -> list[bytes]:
    """The reply as Ollama's JSON lines: content pieces, tool calls, then the done line with the counts."""
    full = _ollama_reply(reply, model)
    head = {"model": model, "created_at": full["created_at"], "done": False}
    lines = [{**head, "message": {"role": "assistant", "content": p}} for p in _pieces(reply.content)]
    if full["message"].get("tool_calls"):
        lines.append(
            {**head, "message": {"role": "assistant", "content": "", "tool_calls": full["message"]["tool_calls"]}}
        )
    done = {k: v for k, v in full.items() if k != "message"}
    lines.append({**done, "message": {"role": "assistant", "content": ""}})
    return [json.dumps(x).encode() + b"\n" for x in lines]


def _openai_reply(reply: Reply, model: str) -> dict[str, Any]:
    content = reply.content if reply.content or not reply.calls else None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": c["name"],
                    "arguments": c["args"] if isinstance(c.get("args"), str) else json.dumps(c.get("args") or {}),
                },
            }
            for i, c in enumerate(reply.calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.calls else "stop"}],
        "usage": {
            "prompt_tokens": reply.tokens_in,
            "completion_tokens": reply.tokens_out,
            "total_tokens": reply.tokens_in + reply.tokens_out,
            **reply.usage,
        },
    }


def _ollama_reply(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.calls:
        message["tool_calls"] = [
            {"function": {"name": c["name"], "arguments": c.get("args") or {}}} for c in reply.calls
        ]
    return {
        "model": model,
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": reply.tokens_in,
        "eval_count": reply.tokens_out,
    }
