"""The HTTP client goldenkit's providers use, and the checks made before any request.

Model calls go through ``httpx.AsyncClient`` on aiohttp's connection pool
(httpx-aiohttp's ``AiohttpTransport``, the transport the OpenAI SDK ships as its
aiohttp option, with a leaner per-request path: :func:`_pool_class`): httpx's own
pool spends milliseconds of CPU per call at a few hundred calls in flight, aiohttp's
does not (``benchmarks/bench_runner.py`` measures both). goldenkit owns no protocol
code: the client is built by :func:`make_client`, and its configuration (proxies from
the environment, certificates, limits, timeouts, headers) is httpx's; a JSON POST may
skip httpx's per-request objects and go straight to the pool httpx chose for its URL
(:func:`fast_route`, used by :mod:`goldenkit.providers._http`).

The environment is honoured as httpx honours it (``trust_env``): ``HTTPS_PROXY``,
``HTTP_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` in either case, each proxied
request sent by aiohttp through that proxy (CONNECT for https); ``no_proxy=True``
(``--no-proxy``) ignores them. Certificates are checked against ``ca_bundle``
(``--ca-bundle FILE``), else ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else certifi's
bundle. Proxy URLs (and their credentials) are never recorded or printed.

Stale keep-alive connections: the client's aiohttp connector reports when a request
went out on a pooled connection (:func:`watch_reuse`), so :mod:`goldenkit.providers._http` can send a request once
more at once when a reused connection turns out to have been closed by the server
or a proxy while it was idle (tinyproxy closes every connection after its reply
without saying so), and never re-sends one that failed on a fresh connection.

Header values (API keys, basic-auth credentials) are checked by
:func:`check_header_value` when a provider is built, before anything is sent.
The headers every request of a provider carries (JSON content type, the key) are
the client's own (``make_client(headers=...)``), encoded once, not per call.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import functools
import os
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

import httpx

from goldenkit._files import disk_state
from goldenkit.errors import ConfigError

#: Sent with every request of a client from :func:`make_client` (goldenkit's providers speak JSON).
JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}


def check_header_value(value: str, where: str) -> str:
    """``value`` unchanged if it can be sent as a header value, else a ConfigError naming ``where``
    (``"environment variable OPENAI_API_KEY"``).

    CR, LF and other control characters would split or corrupt the request (a key
    read from a file with its trailing newline); non-ASCII cannot be encoded. The
    message names where the value came from, never the value.
    """
    for ch in value:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            named = {"\r": "a carriage return (CR)", "\n": "a line feed (LF)"}
            what = named.get(ch, f"control character {ord(ch):#04x}")
            raise ConfigError(
                f"{where} contains {what}; it cannot be sent in an HTTP header "
                "(a trailing newline from a file?), nothing was sent"
            )
        if ord(ch) > 0x7E:
            raise ConfigError(f"{where} contains a non-ASCII character; it cannot be sent in an HTTP header")
    return value


def basic_auth_header(user: str, password: str) -> str:
    """The ``Authorization`` value of HTTP Basic auth."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"


def ssl_context(ca_bundle: str | Path | None = None) -> ssl.SSLContext:
    """The certificate check: ``ca_bundle``, else ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else certifi.

    A bundle that cannot be read is a ConfigError naming it (exit 1 before any call). The context is
    loaded once per file as it is on disk (its path, inode, size, modification and change times: a file
    rewritten in place with its old size and modification time has a new change time), not per client:
    a bundle takes 20 ms of CPU to load, and every run makes a client.
    """
    if ca_bundle is not None:
        return _load_context(str(ca_bundle), None, f"--ca-bundle {ca_bundle}")
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = os.environ.get("SSL_CERT_DIR") or None
    if cafile or capath:
        what = f"SSL_CERT_FILE={cafile}" if cafile else f"SSL_CERT_DIR={capath}"
        return _load_context(cafile, capath, what)
    import certifi

    return _load_context(certifi.where(), None, "certifi's bundle")


def _load_context(cafile: str | None, capath: str | None, what: str) -> ssl.SSLContext:
    return _context_of(cafile, capath, what, (disk_state(cafile), disk_state(capath)))


@functools.lru_cache(maxsize=16)
def _context_of(cafile: str | None, capath: str | None, what: str, stamps: tuple[Any, ...]) -> ssl.SSLContext:
    try:
        return ssl.create_default_context(cafile=cafile, capath=capath)
    except (OSError, ssl.SSLError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise ConfigError(f"{what}: cannot load CA certificates: {reason}") from None


_DEFAULT_LIMITS = httpx.Limits()
_REUSED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar("goldenkit_reused", default=None)


def watch_reuse() -> tuple[list[bool], contextvars.Token[list[bool] | None]]:
    """A list that gets an item when the next request of this task goes out on a pooled connection,
    and the token to ``reset`` the watch with (``token.var.reset(token)``) once it has been sent."""
    box: list[bool] = []
    return box, _REUSED.set(box)


def _reraise(exc: Exception) -> NoReturn:
    """Raise ``exc`` as httpx-aiohttp does: an httpx error whose cause is aiohttp's (else ``exc`` itself)."""
    from httpx_aiohttp.transport import map_aiohttp_exceptions

    with map_aiohttp_exceptions():
        raise exc


class ReplyStream(httpx.AsyncByteStream):
    """An aiohttp reply's body as httpx reads it (in chunks of at most 16 KiB, as httpx-aiohttp's)."""

    def __init__(self, response: Any) -> None:  # an aiohttp.ClientResponse
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_chunked(16 * 1024):
                yield chunk
        except Exception as exc:
            _reraise(exc)

    async def aclose(self) -> None:
        try:
            await self._response.__aexit__(None, None, None)
        except Exception as exc:
            _reraise(exc)


def as_response(resp: Any, request: httpx.Request | None = None) -> httpx.Response:
    """An open aiohttp reply (``ClientResponse``) as an ``httpx.Response`` streaming its body."""
    extensions = {"http_version": b"HTTP/1.1"}
    if resp.reason:
        extensions["reason_phrase"] = resp.reason.encode()
    return httpx.Response(
        resp.status, headers=resp.raw_headers, stream=ReplyStream(resp), request=request, extensions=extensions
    )


@functools.cache
def _connector_class() -> Callable[..., Any]:
    """aiohttp's ``TCPConnector`` that tells :func:`watch_reuse` when it hands out a connection it handed
    out before (a pooled one): one set lookup per request, where aiohttp's trace signals built six
    objects per request to say the same."""
    import weakref

    import aiohttp

    class Connector(aiohttp.TCPConnector):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._known: weakref.WeakSet[object] = weakref.WeakSet()

        async def connect(self, req: aiohttp.ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout) -> Any:
            conn = await super().connect(req, traces, timeout)
            proto = conn.protocol
            if proto in self._known:
                box = _REUSED.get()
                if box is not None:
                    box.append(True)
            elif proto is not None:
                self._known.add(proto)
            return conn

    return Connector


@functools.cache
def _pool_class() -> Callable[..., httpx.AsyncBaseTransport]:
    """The transport under every client of :func:`make_client`: httpx-aiohttp's ``AiohttpTransport``
    (its SSL context, proxy and pool settings), sending each request with fewer copies.

    Per request it hands aiohttp the headers decoded once (not through ``httpx.Headers.items``, which
    finds their encoding again per header), a ``ClientTimeout`` kept per distinct timeout, and no trace
    signals (:func:`_connector_class` tells a pooled connection). Errors are mapped to httpx's as
    httpx-aiohttp maps them (:func:`_reraise`).
    """
    import aiohttp
    from httpx_aiohttp.transport import AiohttpTransport

    class Pool(AiohttpTransport):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            proxy = self.proxy
            self._proxy: dict[str, Any] = {}
            if proxy is not None:  # as httpx-aiohttp passes it
                auth = aiohttp.BasicAuth(*proxy.auth) if proxy.auth else None
                self._proxy = {"proxy": str(proxy.url), "proxy_auth": auth, "proxy_headers": proxy.headers}
            self._timeouts: dict[tuple[Any, ...], aiohttp.ClientTimeout] = {}

        def get_client(self) -> aiohttp.ClientSession:
            limit = self.limits.max_connections
            connector = _connector_class()(
                keepalive_timeout=self.limits.keepalive_expiry, ssl=self.ssl_context, limit=limit or 0
            )
            return aiohttp.ClientSession(connector=connector)

        def _timeout(self, timeout: dict[str, Any]) -> aiohttp.ClientTimeout:
            key = (timeout.get("connect"), timeout.get("read"), timeout.get("pool"))
            found = self._timeouts.get(key)
            if found is None:
                found = self._timeouts[key] = aiohttp.ClientTimeout(
                    sock_connect=key[0], sock_read=key[1], connect=key[2]
                )
            return found

        async def open(
            self, method: str, url: str, headers: Any, data: Any, timeout: dict[str, Any], sni: str | None = None
        ) -> Any:
            """An aiohttp reply to ``method url`` with these ``headers`` (str pairs) and body, open (aiohttp's
            ``ClientResponse``); an error as an httpx one (:func:`_reraise`). ``timeout``: httpx's as a dict."""
            session = self.client
            if not isinstance(session, aiohttp.ClientSession):
                session = self.client = self.get_client()
            try:
                return await session.request(
                    method,
                    url,
                    headers=headers,
                    data=data,
                    allow_redirects=False,
                    auto_decompress=False,
                    compress=False,
                    timeout=self._timeout(timeout),
                    server_hostname=sni,
                    **self._proxy,
                ).__aenter__()
            except Exception as exc:
                _reraise(exc)

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            headers = request.headers
            code = headers.encoding
            data: Any
            try:
                data = request.content or None
            except httpx.RequestNotRead:
                data = request.stream
                headers.pop("transfer-encoding", None)  # aiohttp's to decide
            pairs = [(k.decode(code), v.decode(code)) for k, v in headers.raw]
            ext = request.extensions
            resp = await self.open(
                request.method, str(request.url), pairs, data, ext.get("timeout", {}), ext.get("sni_hostname")
            )
            return as_response(resp, request)

    return Pool


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, which reads a reply for cookies only when it sets one: the standard library's
    jar (default policy) takes nothing from a reply without ``Set-Cookie``, and asking it costs a
    ``urllib`` request and response built per call (6% of a run's CPU at 64 calls in flight)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


@functools.cache
def _client_class() -> type[httpx.AsyncClient]:
    """``httpx.AsyncClient`` on aiohttp's pool (:func:`_pool_class`), the main transport and every proxy's,
    with the cookie jar of :class:`_Cookies`."""
    AiohttpPool = _pool_class()

    class Client(httpx.AsyncClient):
        def __init__(self, **kwargs: Any) -> None:
            self._wire: tuple[list[tuple[bytes, bytes]], httpx.Timeout, list[tuple[str, str]], dict[str, Any]] | None
            self._wire = None
            super().__init__(**kwargs)
            self.cookies = super().cookies  # the jar of :class:`_Cookies`

        def route(self, url: httpx.URL) -> tuple[Any, list[tuple[str, str]], dict[str, Any]] | None:
            """See :func:`fast_route`."""
            if self.auth is not None or self.cookies or self.params or any(self.event_hooks.values()):
                return None
            pool = self._transport_for_url(url)  # the proxy's or the direct one, as httpx decides for the URL
            if not hasattr(pool, "open"):  # a transport given by the caller
                return None
            # kept decoded while the client keeps the same ones (headers compared by value: changed in place too)
            headers, timeout = self.headers, self.timeout
            raw = headers.raw
            if self._wire is None or self._wire[0] != raw or self._wire[1] is not timeout:
                self._wire = (raw, timeout, headers.multi_items(), timeout.as_dict())
            return pool, self._wire[2], self._wire[3]

        @property
        def cookies(self) -> httpx.Cookies:
            return self._jar

        @cookies.setter
        def cookies(self, cookies: httpx._types.CookieTypes) -> None:
            self._jar = _Cookies(cookies)

        def _init_transport(
            self,
            verify: ssl.SSLContext | str | bool = True,
            cert: Any = None,
            trust_env: bool = True,
            http1: bool = True,
            http2: bool = False,
            limits: httpx.Limits = _DEFAULT_LIMITS,
            transport: httpx.AsyncBaseTransport | None = None,
            **kwargs: Any,
        ) -> httpx.AsyncBaseTransport:
            if transport is not None:
                return transport
            return AiohttpPool(verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, limits=limits)

        def _init_proxy_transport(
            self,
            proxy: httpx.Proxy,
            verify: ssl.SSLContext | str | bool = True,
            cert: Any = None,
            trust_env: bool = True,
            http1: bool = True,
            http2: bool = False,
            limits: httpx.Limits = _DEFAULT_LIMITS,
            **kwargs: Any,
        ) -> httpx.AsyncBaseTransport:
            return AiohttpPool(
                verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, limits=limits, proxy=proxy
            )

    return Client


def fast_route(client: httpx.AsyncClient, url: httpx.URL) -> tuple[Any, list[tuple[str, str]], dict[str, Any]] | None:
    """Where a POST of ``client`` (one of :func:`make_client`) to ``url`` may go straight to its aiohttp pool,
    beneath httpx's client layer: ``(pool, the client's headers, its timeouts as a dict)``, the pool the one
    httpx chose for the URL (a proxy's or the direct one, as the environment's proxies and NO_PROXY say).
    None when the request must go through ``client.send``: another client, or one with cookies in its jar,
    query parameters, auth or event hooks, or a transport of the caller's.
    (:func:`goldenkit.providers._http.post_json`.)"""
    route = getattr(client, "route", None)
    return route(url) if route is not None else None


def make_client(
    *,
    max_connections: int = 64,
    timeout: float = 60.0,
    ca_bundle: str | Path | None = None,
    no_proxy: bool = False,
    headers: Mapping[str, str] | None = None,
) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` goldenkit's HTTP providers use (see the module doc).

    ``max_connections`` sizes aiohttp's pool (the run's in-flight limit); ``timeout``
    bounds connect, each read, each write and the wait for a pooled connection (the
    whole request's deadline is :func:`goldenkit.providers._http.post_json`'s).
    Every request carries :data:`JSON_HEADERS` and ``headers`` (already checked
    with :func:`check_header_value`; an ``authorization`` one is dropped by
    :func:`goldenkit.providers._http.post_json` on a redirect to another origin).
    Redirects are not followed by the client: :func:`post_json` decides per status.
    """
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return _client_class()(
        timeout=httpx.Timeout(timeout),
        limits=limits,
        verify=ssl_context(ca_bundle),
        trust_env=not no_proxy,
        follow_redirects=False,
        headers={**JSON_HEADERS, **(headers or {})},
    )


class ClientHolder:
    """One lazily created client per event loop, sized by :meth:`configure`.

    HTTP providers own one of these: the runner calls ``configure(timeout=...,
    max_in_flight=...)`` before a run (the pool gets that many connections) and
    ``aclose()`` after it. A client is bound to the loop that created it, so a
    provider reused by a later ``asyncio.run`` gets a fresh one. ``ca_bundle`` and
    ``no_proxy`` are :func:`make_client`'s; the CA bundle is loaded here, once, so
    a bad file is an error before the run starts.
    """

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        max_connections: int = 64,
        ca_bundle: str | Path | None = None,
        no_proxy: bool = False,
        headers: Mapping[str, str] | None = None,
    ):
        self.timeout = float(timeout)
        self.max_connections = int(max_connections)
        self.headers = dict(headers or {})
        self._client: httpx.AsyncClient | None = None
        self._loop: object | None = None
        self.set_transport(ca_bundle=ca_bundle, no_proxy=no_proxy)

    def set_transport(self, *, ca_bundle: str | Path | None = None, no_proxy: bool = False) -> None:
        """Where certificates come from and whether proxies from the environment apply."""
        if ca_bundle is not None:
            ssl_context(ca_bundle)  # refuse an unreadable bundle now
        self.ca_bundle = ca_bundle
        self.no_proxy = bool(no_proxy)
        self._client = None

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        """Size the next client for a run (called before the run's first call).

        The client library is imported here rather than by the first call: a fresh
        process (a Ray worker) would otherwise stall its event loop for a quarter of a
        second while its first calls wait.
        """
        import httpx_aiohttp  # noqa: F401

        if timeout is not None:
            self.timeout = float(timeout)
        if max_in_flight is not None:
            self.max_connections = max(1, int(max_in_flight))

    def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = make_client(
                max_connections=self.max_connections,
                timeout=self.timeout,
                ca_bundle=self.ca_bundle,
                no_proxy=self.no_proxy,
                headers=self.headers,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and not client.is_closed:
            await client.aclose()


__all__ = [
    "JSON_HEADERS",
    "ClientHolder",
    "ReplyStream",
    "as_response",
    "basic_auth_header",
    "check_header_value",
    "fast_route",
    "make_client",
    "ssl_context",
    "watch_reuse",
]
