"""PoolTransport against real servers on 127.0.0.1 that write hand-crafted reply bytes.

Each test starts an ``asyncio.start_server`` in its own event loop (``asyncio.run``)
whose handler reads the request off the socket and writes exactly the bytes the
case needs (chunks split across writes, interim replies, truncated bodies, bytes
that are not HTTP, silence). The server counts the connections it accepts, how
many are open at once and the EOFs it sees, so pooling and keep-alive are checked
from the wire. Nothing inside the transport is replaced.
"""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from goldenkit.errors import ProviderError
from goldenkit.providers.http import make_transport_client, post_json
from goldenkit.providers.transport import PoolTransport

CLOSE = "close"  # a responder returns this to close the connection after its reply


@dataclass
class Request:
    """One request as the server read it off the socket."""

    method: str
    target: str
    version: str
    headers: dict[str, str]  # names lowercased
    body: bytes


Responder = Callable[[Request, asyncio.StreamWriter], Awaitable[str | None]]
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Server"], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on the connection (Content-Length bodies), or None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    line, *lines = head.decode("latin-1").split("\r\n")
    method, target, version = line.split(" ")
    headers = {}
    for h in lines:
        if h:
            name, value = h.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method, target, version, headers, body)


def keep_alive(respond: Responder) -> Handler:
    """A handler that answers request after request on one connection with ``respond``."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: Server) -> None:
        while True:
            req = await read_request(reader)
            if req is None:
                server.eofs += 1
                return
            server.requests.append(req)
            if await respond(req, writer) == CLOSE:
                return

    return handler


class Server:
    """A TCP server on 127.0.0.1 running ``handler`` per connection, counting connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.requests: list[Request] = []
        self.accepted = 0
        self.open = 0
        self.max_open = 0
        self.eofs = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.accepted += 1
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            await self.handler(reader, writer, self)
        except (ConnectionResetError, BrokenPipeError):
            self.eofs += 1
        except asyncio.CancelledError:
            pass
        finally:
            self.open -= 1
            writer.close()


def serve(respond: Responder) -> Server:
    return Server(keep_alive(respond))


def reply(body: bytes = b"ok", *headers: str, status: str = "200 OK") -> bytes:
    """A complete HTTP/1.1 reply with a Content-Length body and the extra ``headers``."""
    head = "\r\n".join([f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers])
    return head.encode() + b"\r\n\r\n" + body


async def answer_ok(req: Request, writer: asyncio.StreamWriter) -> None:
    writer.write(reply(req.target.encode()))  # echo the path, so replies cannot be mixed up


async def hang(req: Request, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(3600)


def pool_client(timeout: float | httpx.Timeout = 2.0, **pool: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=PoolTransport(**pool), timeout=timeout)  # type: ignore[arg-type]


async def until(predicate: Callable[[], bool], timeout: float = 1.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


def refused_port() -> socket.socket:
    """A socket bound to a port nobody listens on (kept bound so no one else takes it)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


# -- reply framing


def test_content_length_reply_and_the_request_on_the_wire() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(reply(b"hello world", "X-Reply: yes", "Set-Cookie: a=1", status="201 Created"))

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            resp = await client.post(f"{srv.url}/v1/x?a=1&b=two", content=b"payload", headers={"X-Test": "t"})
            assert resp.status_code == 201
            assert resp.headers["x-reply"] == "yes"
            assert resp.headers["content-length"] == "11"
            assert resp.headers["set-cookie"] == "a=1"
            assert resp.content == b"hello world"
            assert resp.http_version == "HTTP/1.1"
            [req] = srv.requests
            assert (req.method, req.target, req.version) == ("POST", "/v1/x?a=1&b=two", "HTTP/1.1")
            assert req.headers["host"] == f"127.0.0.1:{srv.port}"
            assert req.headers["content-length"] == "7"
            assert req.headers["x-test"] == "t"
            assert req.body == b"payload"

    asyncio.run(main())


def test_large_bodies_both_ways_arrive_whole() -> None:
    up = bytes(range(256)) * 1200  # 300 KB, many TCP segments each way
    down = up[::-1]

    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(reply(down))

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            resp = await client.post(f"{srv.url}/big", content=up)
            assert resp.content == down
            assert srv.requests[0].body == up

    asyncio.run(main())


def test_chunked_reply_split_across_writes() -> None:
    pieces = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhel",
        b"lo\r\n6\r\n wo",
        b"rld\r\n",
        b"0\r\n",
        b"\r\n",
    ]

    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.02)

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            first = await client.get(f"{srv.url}/a")
            second = await client.get(f"{srv.url}/b")  # the parser is ready for the next reply
            assert first.status_code == second.status_code == 200
            assert first.content == second.content == b"hello world"
            assert first.headers["transfer-encoding"] == "chunked"
            assert srv.accepted == 1

    asyncio.run(main())


@pytest.mark.parametrize("status_line", [b"HTTP/1.1 200 OK", b"HTTP/1.0 200 OK"])
def test_reply_delimited_by_close_is_whole(status_line: bytes) -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> str:
        writer.write(status_line + b"\r\nContent-Type: text/plain\r\n\r\nfirst half, ")
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(b"second half")
        await writer.drain()
        return CLOSE

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            first = await client.get(f"{srv.url}/a")
            second = await client.get(f"{srv.url}/b")
            assert first.status_code == 200
            assert first.content == second.content == b"first half, second half"
            assert srv.accepted == 2  # a closed connection is not reused

    asyncio.run(main())


@pytest.mark.parametrize(
    "interim",
    [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"],
    ids=["100", "103"],
)
def test_interim_reply_is_skipped_for_the_real_one(interim: bytes) -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(interim)
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(reply(b"final", "X-Final: 1"))

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            for path in ("/a", "/b"):
                resp = await client.post(srv.url + path, content=b"{}")
                assert resp.status_code == 200
                assert resp.content == b"final"
                assert resp.headers["x-final"] == "1"
                assert "link" not in resp.headers  # the interim reply's headers are not the reply's
            assert srv.accepted == 1

    asyncio.run(main())


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_gzip_reply_is_decoded(framing: str) -> None:
    plain = json.dumps({"answer": "x" * 2000}).encode()
    packed = gzip.compress(plain)

    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        if framing == "content-length":
            writer.write(reply(packed, "Content-Encoding: gzip", "Content-Type: application/json"))
        else:
            head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            half = len(packed) // 2
            chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (packed[:half], packed[half:]))
            writer.write(head + chunks + b"0\r\n\r\n")

    async def main() -> None:
        async with serve(respond) as srv:
            async with pool_client() as client:
                resp = await client.get(f"{srv.url}/gz")
                await resp.aread()
                assert resp.headers["content-encoding"] == "gzip"
                assert resp.content == plain
            kit = make_transport_client(timeout=2.0)
            try:
                assert await post_json(kit, f"{srv.url}/gz", {"q": 1}) == {"answer": "x" * 2000}
            finally:
                await kit.aclose()

    asyncio.run(main())


@pytest.mark.parametrize("status", ["204 No Content", "304 Not Modified"])
def test_bodyless_status_completes_and_keeps_the_connection(status: str) -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(f"HTTP/1.1 {status}\r\nX-N: {req.target}\r\n\r\n".encode())

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            for path in ("/a", "/b"):
                resp = await client.get(srv.url + path)
                assert resp.status_code == int(status[:3])
                assert resp.content == b""
                assert resp.headers["x-n"] == path
            assert srv.accepted == 1

    asyncio.run(main())


# -- keep-alive and the pool


def test_sequential_requests_reuse_one_connection() -> None:
    async def main() -> None:
        async with serve(answer_ok) as srv, pool_client() as client:
            for i in range(20):
                resp = await client.post(f"{srv.url}/r{i}", content=b"x")
                assert resp.content == f"/r{i}".encode()
            assert srv.accepted == 1
            assert len(srv.requests) == 20

    asyncio.run(main())


def test_connection_close_from_the_server_makes_the_next_request_open_a_new_connection() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        # Says close but leaves the socket open: a reuse would show up as a second request here.
        writer.write(reply(b"bye", "Connection: close"))

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            assert (await client.get(f"{srv.url}/a")).content == b"bye"
            assert (await client.get(f"{srv.url}/b")).content == b"bye"
            assert srv.accepted == 2
            await until(lambda: srv.eofs >= 1)  # the client closed the first connection itself

    asyncio.run(main())


def test_connection_closed_by_the_server_while_idle_is_not_reused() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> str:
        writer.write(reply(req.target.encode()))  # keep-alive reply, then an idle close
        await writer.drain()
        return CLOSE

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            assert (await client.get(f"{srv.url}/a")).content == b"/a"
            await asyncio.sleep(0.05)
            assert (await client.get(f"{srv.url}/b")).content == b"/b"
            assert srv.accepted == 2

    asyncio.run(main())


def test_pool_caps_concurrent_connections() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.05)
        writer.write(reply(req.target.encode()))

    async def main() -> None:
        async with serve(respond) as srv, pool_client(max_connections=4) as client:
            started = time.monotonic()
            replies = await asyncio.gather(*(client.get(f"{srv.url}/r{i}") for i in range(20)))
            elapsed = time.monotonic() - started
            assert [r.status_code for r in replies] == [200] * 20
            assert [r.content for r in replies] == [f"/r{i}".encode() for i in range(20)]
            assert srv.max_open == 4
            assert srv.accepted == 4  # the 4 connections carried all 20 requests
            assert elapsed >= 0.2  # 5 rounds of 50 ms: the requests really queued

    asyncio.run(main())


@pytest.mark.parametrize(
    ("expiry", "connections", "closed"),
    [(0.05, 2, 1), (5.0, 1, 0)],
    ids=["idle-past-expiry-is-replaced", "idle-within-expiry-is-reused"],
)
def test_keepalive_expiry_decides_whether_an_idle_connection_is_reused(
    expiry: float, connections: int, closed: int
) -> None:
    async def main() -> None:
        async with serve(answer_ok) as srv, pool_client(keepalive_expiry=expiry) as client:
            await client.get(f"{srv.url}/a")
            await asyncio.sleep(0.15)
            await client.get(f"{srv.url}/b")
            assert srv.accepted == connections
            await until(lambda: srv.eofs == closed)  # an expired connection is closed, not leaked

    asyncio.run(main())


# -- errors mapped to httpx exceptions


def test_connection_refused_is_connect_error() -> None:
    sock = refused_port()
    port = sock.getsockname()[1]

    async def main() -> None:
        async with pool_client() as client:
            with pytest.raises(httpx.ConnectError, match=f"127.0.0.1:{port}"):
                await client.get(f"http://127.0.0.1:{port}/")

    try:
        asyncio.run(main())
    finally:
        sock.close()


def test_silent_server_is_read_timeout_within_the_read_timeout() -> None:
    async def main() -> None:
        async with serve(hang) as srv, pool_client(httpx.Timeout(5.0, read=0.3)) as client:
            started = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                await client.get(f"{srv.url}/slow")
            elapsed = time.monotonic() - started
            assert 0.25 <= elapsed < 2.0

    asyncio.run(main())


def test_close_right_after_the_request_is_remote_protocol_error() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> str:
        return CLOSE

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            with pytest.raises(httpx.RemoteProtocolError, match="before a reply"):
                await client.post(f"{srv.url}/drop", content=b"x")
            assert len(srv.requests) == 1

    asyncio.run(main())


def test_a_kept_alive_connection_closed_before_the_next_reply_reports_no_reply() -> None:
    """Nothing of the first reply leaks into the second request's outcome (the stale keep-alive race)."""

    async def respond(req: Request, writer: asyncio.StreamWriter) -> str | None:
        if req.target == "/first":
            writer.write(reply(b"first"))
            return None
        return CLOSE  # the server drops the kept-alive connection instead of answering

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            assert (await client.post(f"{srv.url}/first", content=b"x")).content == b"first"
            with pytest.raises(httpx.RemoteProtocolError, match="before a reply"):
                await client.post(f"{srv.url}/second", content=b"y")
            assert srv.accepted == 1 and [r.target for r in srv.requests] == ["/first", "/second"]

    asyncio.run(main())


@pytest.mark.parametrize(
    "partial",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\nhello",
    ],
    ids=["content-length", "chunked"],
)
def test_half_a_body_then_close_is_remote_protocol_error(partial: bytes) -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> str:
        writer.write(partial)
        await writer.drain()
        return CLOSE

    async def main() -> None:
        async with serve(respond) as srv, pool_client() as client:
            with pytest.raises(httpx.RemoteProtocolError, match="middle of the reply"):
                await client.get(f"{srv.url}/half")

    asyncio.run(main())


def test_reply_that_is_not_http_is_remote_protocol_error_at_once() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")  # and the connection stays open

    async def main() -> None:
        async with serve(respond) as srv, pool_client(httpx.Timeout(5.0)) as client:
            started = time.monotonic()
            with pytest.raises(httpx.RemoteProtocolError, match="malformed HTTP reply"):
                await client.get(f"{srv.url}/x")
            assert time.monotonic() - started < 1.0  # the parser's verdict, not a timeout

    asyncio.run(main())


def test_pool_timeout_when_the_only_connection_is_held() -> None:
    async def main() -> None:
        async with serve(hang) as srv, pool_client(httpx.Timeout(5.0, pool=0.2), max_connections=1) as client:
            holder = asyncio.create_task(client.get(f"{srv.url}/hold"))
            await until(lambda: len(srv.requests) == 1)
            started = time.monotonic()
            with pytest.raises(httpx.PoolTimeout):
                await client.get(f"{srv.url}/wait")
            assert 0.15 <= time.monotonic() - started < 2.0
            assert srv.accepted == 1
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)

    asyncio.run(main())


def test_ftp_url_is_unsupported_protocol() -> None:
    async def main() -> None:
        transport = PoolTransport()
        with pytest.raises(httpx.UnsupportedProtocol):
            await transport.handle_async_request(httpx.Request("GET", "ftp://127.0.0.1/file"))
        async with httpx.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx.UnsupportedProtocol):
                await client.get("ftp://127.0.0.1:2121/file")

    asyncio.run(main())


# -- the pool after a failure or a cancellation


async def by_path(req: Request, writer: asyncio.StreamWriter) -> str | None:
    """``/hang`` never answers, ``/garbage`` is not HTTP, ``/drop`` closes, anything else is 200."""
    if req.target == "/hang":
        await asyncio.sleep(3600)
    if req.target == "/garbage":
        writer.write(b"\x00\x01 not http at all\r\n\r\n")
        return None
    if req.target == "/drop":
        return CLOSE
    writer.write(reply(req.target.encode()))
    return None


def test_cancelled_request_frees_its_slot() -> None:
    async def main() -> None:
        async with serve(by_path) as srv, pool_client(httpx.Timeout(2.0, pool=0.5), max_connections=1) as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.get(f"{srv.url}/hang"), 0.1)
            resp = await client.get(f"{srv.url}/ok")
            assert resp.content == b"/ok"
            assert srv.accepted == 2  # the abandoned connection was closed, not reused

    asyncio.run(main())


@pytest.mark.parametrize("failing", ["/hang", "/garbage", "/drop"])
def test_failed_request_frees_its_slot(failing: str) -> None:
    errors = {"/hang": httpx.ReadTimeout, "/garbage": httpx.RemoteProtocolError, "/drop": httpx.RemoteProtocolError}

    async def main() -> None:
        timeout = httpx.Timeout(2.0, read=0.2, pool=0.5)
        async with serve(by_path) as srv, pool_client(timeout, max_connections=1) as client:
            with pytest.raises(errors[failing]):
                await client.get(srv.url + failing)
            for path in ("/ok1", "/ok2"):
                assert (await client.get(srv.url + path)).content == path.encode()
            assert srv.accepted == 2  # one for the failure, one reused by both later requests

    asyncio.run(main())


def test_cancelled_pool_waiter_does_not_take_a_slot() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        if req.target == "/slow":
            await asyncio.sleep(0.2)
        writer.write(reply(req.target.encode()))

    async def main() -> None:
        async with serve(respond) as srv, pool_client(httpx.Timeout(2.0), max_connections=1) as client:
            slow = asyncio.create_task(client.get(f"{srv.url}/slow"))
            await until(lambda: len(srv.requests) == 1)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.get(f"{srv.url}/waiting"), 0.05)  # cancelled while queued
            assert (await slow).content == b"/slow"
            assert (await client.get(f"{srv.url}/next")).content == b"/next"
            assert [r.target for r in srv.requests] == ["/slow", "/next"]
            assert srv.accepted == 1

    asyncio.run(main())


# -- through post_json: ProviderError


def test_post_json_returns_the_reply_object() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        sent = json.loads(req.body)
        writer.write(reply(json.dumps({"echo": sent}).encode(), "Content-Type: application/json"))

    async def main() -> None:
        async with serve(respond) as srv:
            kit = make_transport_client(timeout=2.0)
            try:
                got = await post_json(kit, f"{srv.url}/v1/chat", {"model": "m", "n": 2}, headers={"X-Key": "k"})
            finally:
                await kit.aclose()
            assert got == {"echo": {"model": "m", "n": 2}}
            [req] = srv.requests
            assert (req.method, req.target) == ("POST", "/v1/chat")
            assert req.headers["content-type"] == "application/json"
            assert req.headers["host"] == f"127.0.0.1:{srv.port}"
            assert req.headers["x-key"] == "k"
            assert req.headers["content-length"] == str(len(req.body))

    asyncio.run(main())


def post_json_error(respond: Responder | None, timeout: float = 2.0) -> tuple[ProviderError, int]:
    """The ProviderError post_json raises against a server answering with ``respond``
    (None: nothing listens), and the port."""

    async def call(port: int) -> ProviderError:
        kit = make_transport_client(timeout=timeout)
        try:
            with pytest.raises(ProviderError) as info:
                await post_json(kit, f"http://user:s3cret@127.0.0.1:{port}/v1/chat?api_key=k3y", {"q": 1})
        finally:
            await kit.aclose()
        return info.value

    async def main() -> tuple[ProviderError, int]:
        if respond is None:
            sock = refused_port()
            try:
                return await call(sock.getsockname()[1]), sock.getsockname()[1]
            finally:
                sock.close()
        async with serve(respond) as srv:
            return await call(srv.port), srv.port

    return asyncio.run(main())


def assert_redacted(err: ProviderError, port: int) -> None:
    assert f"http://127.0.0.1:{port}/v1/chat" in str(err)
    assert err.url == f"http://127.0.0.1:{port}/v1/chat"
    for secret in ("user", "s3cret", "api_key", "k3y"):
        assert secret not in str(err)


def test_post_json_dropped_connection_is_transient_provider_error() -> None:
    async def drop(req: Request, writer: asyncio.StreamWriter) -> str:
        return CLOSE

    err, port = post_json_error(drop)
    assert err.transient is True
    assert "RemoteProtocolError" in str(err)
    assert_redacted(err, port)


def test_post_json_read_timeout_is_transient_provider_error() -> None:
    started = time.monotonic()
    err, port = post_json_error(hang, timeout=0.3)
    assert time.monotonic() - started < 2.0
    assert err.transient is True
    assert str(err).startswith("timed out calling ")
    assert_redacted(err, port)


def test_post_json_connection_refused_is_transient_provider_error() -> None:
    err, port = post_json_error(None)
    assert err.transient is True
    assert "ConnectionRefusedError" in str(err)
    assert_redacted(err, port)


# -- aclose


def test_aclose_closes_idle_connections() -> None:
    async def main() -> None:
        async with serve(answer_ok) as srv:
            transport = PoolTransport()
            client = httpx.AsyncClient(transport=transport, timeout=2.0)
            await client.get(f"{srv.url}/a")
            await client.get(f"{srv.url}/b")
            assert (srv.accepted, srv.open, srv.eofs) == (1, 1, 0)
            await client.aclose()
            await until(lambda: srv.eofs == 1 and srv.open == 0)
            with pytest.raises(httpx.ConnectError):
                await transport.handle_async_request(httpx.Request("GET", f"{srv.url}/c"))

    asyncio.run(main())


# -- HEAD, streamed request bodies, elapsed


def test_head_reply_with_content_length_has_no_body() -> None:
    async def respond(req: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")  # HEAD: the length of the GET body

    async def main() -> None:
        async with serve(respond) as srv, pool_client(httpx.Timeout(2.0, read=0.3)) as client:
            resp = await client.head(f"{srv.url}/h")
            assert resp.status_code == 200
            assert resp.content == b""

    asyncio.run(main())


def test_streamed_request_body_is_sent_whole_with_its_length() -> None:
    received: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, server: Server) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        received.append(head)
        received.append(await reader.readexactly(11))
        writer.write(reply())

    async def chunks():
        yield b"hello"
        yield b" world"

    async def main() -> None:
        async with Server(handler) as srv, pool_client() as client:
            await client.post(f"{srv.url}/up", content=chunks())
        head = received[0].lower()
        assert b"transfer-encoding" not in head and b"\r\ncontent-length: 11\r\n" in head
        assert received[1] == b"hello world"

    asyncio.run(main())


def test_response_elapsed_is_recorded() -> None:
    async def main() -> None:
        async with serve(answer_ok) as srv, pool_client() as client:
            resp = await client.get(f"{srv.url}/a")
            assert resp.elapsed.total_seconds() >= 0

    asyncio.run(main())


# -- https


def self_signed(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server context, client context trusting only that server) for a fresh self-signed 127.0.0.1 cert."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "goldenkit test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return server, ssl.create_default_context(cafile=str(cert_file))


def test_https_with_sni_and_keep_alive(tmp_path: Path) -> None:
    server_ctx, client_ctx = self_signed(tmp_path)

    async def main() -> None:
        async with Server(keep_alive(answer_ok), tls=server_ctx) as srv:
            transport = PoolTransport(ssl_context=client_ctx)
            async with httpx.AsyncClient(transport=transport, timeout=5.0) as client:
                first = await client.post(f"{srv.url}/one", content=b"x")
                second = await client.post(f"{srv.url}/two", content=b"y")
            assert (first.status_code, first.content, second.content) == (200, b"/one", b"/two")
            assert [r.body for r in srv.requests] == [b"x", b"y"]
            assert srv.accepted == 1  # one TLS connection, kept alive

    asyncio.run(main())


def test_https_certificate_not_trusted_is_a_connect_error(tmp_path: Path) -> None:
    server_ctx, _ = self_signed(tmp_path)

    async def main() -> None:
        async with Server(keep_alive(answer_ok), tls=server_ctx) as srv, pool_client(5.0) as client:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
                await client.post(f"{srv.url}/x", content=b"x")  # httpx's default trust store: not this cert
            assert srv.requests == []

    asyncio.run(main())
