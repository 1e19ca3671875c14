"""An httpx transport for model calls: HTTP/1.1 keep-alive connections on asyncio protocols.

Why not httpx's own transport, or aiohttp under httpx. ``benchmarks/bench_runner.py``
measures the client CPU per call against a local server: a plain
``httpx.AsyncClient`` (httpcore) spends 2-4 ms per call under concurrency, a bare
aiohttp ``ClientSession`` loop 0.26-0.4 ms, and the Rust-based clients pyreqwest
(which ships an httpx transport) and rnet 0.15-0.35 ms; a request written to an
``asyncio.Protocol`` whose reply is parsed by llhttp (through ``httptools``) spends
about 0.1 ms. A model call is one small POST whose reply is wanted whole, so
that is all this transport does, and it does it in that cheap form:

* one connection pool per origin (scheme, host, port), at most
  ``max_connections`` open, reused last-in first-out, a connection idle longer
  than ``keepalive_expiry`` closed instead of reused, callers beyond the limit
  waiting (``pool`` timeout) for a connection to come back;
* the request head and body written with one ``transport.write``; the reply
  parsed by ``httptools.HttpResponseParser`` (llhttp: Content-Length, chunked and
  read-until-close bodies, keep-alive rules, 1xx replies skipped, no body after
  HEAD) and returned as an ``httpx.Response`` whose content is already loaded and
  whose ``elapsed`` is set; a compressed reply (``Content-Encoding``) is decoded
  by httpx itself when the caller reads it; a streamed request body is read whole
  and sent with a ``Content-Length``;
* httpx's timeouts (``connect``, ``read`` = from the request written to the
  reply complete, ``pool``; ``write`` is covered by ``read``, the request being
  buffered by asyncio) and httpx's exceptions: ``ConnectError``,
  ``ConnectTimeout``, ``ReadTimeout``, ``PoolTimeout``, ``ReadError`` (a
  connection reset) and ``RemoteProtocolError`` (a connection closed before the
  reply is complete, or a reply that is not HTTP);
* ``https`` with httpx's SSL context (certifi, no environment) and SNI.

No proxies, no HTTP/2, no redirects (the client does none). A connection whose request
was cancelled or failed is closed, never reused.
"""

from __future__ import annotations

import asyncio
import datetime
import ssl as _ssl
from collections import deque

import httptools
import httpx

_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_NO_BODY_STATUSES = frozenset({204, 304})


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: writes a request, parses the reply into ``waiter``'s result."""

    __slots__ = (
        "transport",
        "parser",
        "waiter",
        "timer",
        "status",
        "headers",
        "body",
        "headers_done",
        "closed",
        "reusable",
        "idle_since",
        "head_request",
    )

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes]] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.headers_done = False
        self.closed = False
        self.reusable = False
        self.idle_since = 0.0
        self.head_request = False

    def begin(
        self,
        waiter: asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes]],
        *,
        head: bool,
        read_timeout: float | None,
    ) -> None:
        """Expect the reply to a new request (nothing of the previous reply is kept), failing
        it with ``ReadTimeout`` if it is not complete within ``read_timeout`` seconds."""
        self.waiter = waiter
        self.reusable = False
        self.head_request = head
        self.status = 0
        self.headers = []
        self.body = []
        self.headers_done = False
        if read_timeout is not None:
            loop = waiter.get_loop()
            self.timer = loop.call_at(loop.time() + read_timeout, self.read_timed_out, read_timeout)

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.waiter is None:  # bytes nobody asked for: the connection cannot be trusted
            self.abort()
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.fail(httpx.RemoteProtocolError("the server switched protocols (Upgrade) in a model reply"))
        except httptools.HttpParserError as exc:
            self.fail(httpx.RemoteProtocolError(f"malformed HTTP reply: {' '.join(str(exc).split())[:160]}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        if self.waiter is None or self.waiter.done():
            return
        if self.headers_done and self._until_close():
            self._complete()  # a body delimited by the end of the connection is whole now
            return
        if self.headers_done:
            self.fail(httpx.RemoteProtocolError("Connection closed by the server in the middle of the reply"))
        elif isinstance(exc, OSError):
            self.fail(httpx.ReadError(f"Connection lost before a reply: {exc}"))
        else:
            self.fail(httpx.RemoteProtocolError("Connection closed by the server before a reply"))

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        self.headers = []
        self.body = []
        self.headers_done = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True
        if self.head_request and self.status >= 200:
            # A reply to HEAD has no body whatever its Content-Length says, and the parser
            # cannot be told so: the reply is complete, the connection is not reused.
            self._complete()

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.waiter is None:  # the rest of a reply already handed back (HEAD)
            return
        if 100 <= self.status < 200:  # an interim reply (100 Continue, 103 Early Hints): the real one follows
            self.headers_done = False
            return
        self.reusable = self.parser.should_keep_alive()
        self._complete()

    # -- helpers

    def _until_close(self) -> bool:
        """Whether the reply's body runs until the connection closes (no length, not chunked)."""
        if self.status in _NO_BODY_STATUSES:
            return False
        for name, _ in self.headers:
            lowered = name.lower()
            if lowered == b"content-length" or lowered == b"transfer-encoding":
                return False
        return True

    def _end(self) -> asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes]] | None:
        """The request in flight is over: its waiter, if still waiting (the read timer is stopped)."""
        waiter, self.waiter = self.waiter, None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        return waiter if waiter is not None and not waiter.done() else None

    def _complete(self) -> None:
        waiter = self._end()
        if waiter is not None:
            waiter.set_result((self.status, self.headers, b"".join(self.body)))

    def fail(self, exc: Exception) -> None:
        """End the request in flight with ``exc`` and close the connection."""
        waiter = self._end()
        if waiter is not None:
            waiter.set_exception(exc)
        self.abort()

    def abort(self) -> None:
        self.reusable = False
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def read_timed_out(self, seconds: float) -> None:
        self.timer = None
        self.fail(httpx.ReadTimeout(f"no complete reply within the read timeout of {seconds:g}s"))


class _Pool:
    """The connections to one origin."""

    __slots__ = ("host", "port", "ssl", "server_hostname", "idle", "open", "waiters")

    def __init__(self, host: str, port: int, ssl: _ssl.SSLContext | None) -> None:
        self.host = host
        self.port = port
        self.ssl = ssl
        self.server_hostname = host if ssl is not None else None
        self.idle: list[_Connection] = []
        self.open = 0
        self.waiters: deque[asyncio.Future[_Connection | None]] = deque()


class PoolTransport(httpx.AsyncBaseTransport):
    """httpx transport: pooled HTTP/1.1 keep-alive connections on asyncio protocols (see the module)."""

    def __init__(
        self,
        *,
        max_connections: int = 64,
        keepalive_expiry: float = 15.0,
        ssl_context: _ssl.SSLContext | None = None,
    ) -> None:
        self.max_connections = max(1, int(max_connections))
        self.keepalive_expiry = float(keepalive_expiry)
        self._pools: dict[tuple[bytes, bytes, int], _Pool] = {}
        self._ssl = ssl_context  # None: httpx's (certifi, no environment), made on the first https URL
        self._closed = False

    # -- the pool

    def _pool(self, url: httpx.URL) -> _Pool:
        scheme = url.raw_scheme
        port = url.port or _DEFAULT_PORTS.get(scheme)
        key = (scheme, url.raw_host, port or 0)
        pool = self._pools.get(key)
        if pool is None:
            if scheme not in _DEFAULT_PORTS or port is None:
                raise httpx.UnsupportedProtocol(f"only http:// and https:// URLs are supported, not {scheme!r}")
            ctx = None
            if scheme == b"https":
                if self._ssl is None:
                    self._ssl = httpx.create_ssl_context(trust_env=False)
                    self._ssl.set_alpn_protocols(["http/1.1"])
                ctx = self._ssl
            pool = self._pools[key] = _Pool(url.host, port, ctx)
        return pool

    async def _acquire(self, pool: _Pool, timeouts: dict[str, float | None]) -> _Connection:
        loop = asyncio.get_running_loop()
        while pool.idle:
            conn = pool.idle.pop()
            if not conn.closed and loop.time() - conn.idle_since <= self.keepalive_expiry:
                return conn
            self._discard(pool, conn)
        if pool.open >= self.max_connections:
            waiter: asyncio.Future[_Connection | None] = loop.create_future()
            pool.waiters.append(waiter)
            try:
                async with asyncio.timeout(timeouts.get("pool")):
                    handed = await waiter
            except BaseException as exc:
                if waiter.done() and not waiter.cancelled():  # handed over just as we gave up: pass it on
                    got = waiter.result()
                    if got is not None:
                        self._release(pool, got)
                    else:
                        self._slot_freed(pool)
                else:
                    waiter.cancel()  # left in the queue, skipped when a connection comes back
                if isinstance(exc, TimeoutError):
                    raise httpx.PoolTimeout("no free connection within the pool timeout") from None
                raise
            if handed is not None:
                return handed
            # a slot (not a connection) was handed over: pool.open already counts it
        else:
            pool.open += 1
        try:
            return await self._connect(pool, timeouts.get("connect"))
        except BaseException:
            self._slot_freed(pool)
            raise

    async def _connect(self, pool: _Pool, timeout: float | None) -> _Connection:
        loop = asyncio.get_running_loop()
        where = f"{pool.host}:{pool.port}"
        try:
            async with asyncio.timeout(timeout):
                _, conn = await loop.create_connection(
                    _Connection, pool.host, pool.port, ssl=pool.ssl, server_hostname=pool.server_hostname
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {where} within the connect timeout of {timeout:g}s") from None
        except (OSError, _ssl.SSLError) as exc:
            raise httpx.ConnectError(f"cannot connect to {where}: {exc}") from exc
        return conn

    def _release(self, pool: _Pool, conn: _Connection) -> None:
        """Give ``conn`` back after a request: to the next waiter, to the idle list, or close it."""
        if not conn.reusable or conn.closed or self._closed:
            self._discard(pool, conn)
            return
        while pool.waiters:
            waiter = pool.waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        conn.idle_since = asyncio.get_running_loop().time()
        pool.idle.append(conn)

    def _discard(self, pool: _Pool, conn: _Connection) -> None:
        conn.abort()
        self._slot_freed(pool)

    def _slot_freed(self, pool: _Pool) -> None:
        """A connection slot is free: hand it to a waiter (who opens a connection) or count it free."""
        while pool.waiters:
            waiter = pool.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        pool.open -= 1

    # -- httpx.AsyncBaseTransport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise httpx.ConnectError("the transport is closed")
        url = request.url
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), url.raw_path)]
        try:
            body = request.content
        except httpx.RequestNotRead:
            # A streamed body is read whole and sent with its length instead of chunked.
            body = await request.aread()
            framing = (b"content-length", b"transfer-encoding")
            head.extend(b"%s: %s\r\n" % kv for kv in request.headers.raw if kv[0].lower() not in framing)
            head.append(b"Content-Length: %d\r\n" % len(body))
        else:
            head.extend(b"%s: %s\r\n" % kv for kv in request.headers.raw)
        head.append(b"\r\n")
        if body:
            head.append(body)
        timeouts: dict[str, float | None] = request.extensions.get("timeout") or {}
        pool = self._pool(url)
        loop = asyncio.get_running_loop()
        started = loop.time()
        conn = await self._acquire(pool, timeouts)
        waiter: asyncio.Future[tuple[int, list[tuple[bytes, bytes]], bytes]] = loop.create_future()
        conn.begin(waiter, head=request.method == "HEAD", read_timeout=timeouts.get("read"))
        try:
            conn.transport.write(b"".join(head))  # type: ignore[union-attr]
            status, headers, content = await waiter
        except BaseException:
            conn.fail(httpx.ReadError("request abandoned"))  # cancelled or failed: never reuse the connection
            self._release(pool, conn)
            raise
        self._release(pool, conn)
        response = _response(request, status, headers, content)
        response.elapsed = datetime.timedelta(seconds=loop.time() - started)
        return response

    async def aclose(self) -> None:
        self._closed = True
        for pool in self._pools.values():
            for conn in pool.idle:
                conn.abort()
            pool.idle.clear()
            for waiter in pool.waiters:
                if not waiter.done():
                    waiter.set_exception(httpx.ConnectError("the transport was closed"))
            pool.waiters.clear()
        self._pools.clear()


def _response(request: httpx.Request, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> httpx.Response:
    """The ``httpx.Response``: content loaded as is, or left for httpx to decode when compressed."""
    encoded = any(k.lower() == b"content-encoding" and v.strip().lower() != b"identity" for k, v in headers)
    response = httpx.Response(
        status,
        headers=headers,
        stream=httpx.ByteStream(body),
        request=request,
        extensions={"http_version": b"HTTP/1.1"},
    )
    if not encoded:
        # What Response.read() would produce, without the chunk iterators and decoder pipeline.
        response._content = body  # noqa: SLF001
        response.is_stream_consumed = True
    return response


__all__ = ["PoolTransport"]
