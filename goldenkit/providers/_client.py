"""The HTTP client goldenkit's providers use, and the checks made before any request.

Model calls go through ``httpx.AsyncClient`` on aiohttp's connection pool
(:class:`httpx_aiohttp.HttpxAiohttpClient`, the transport the OpenAI SDK ships as
its aiohttp option): httpx's own pool spends milliseconds of CPU per call at a few
hundred calls in flight, aiohttp's does not (``benchmarks/bench_runner.py``
measures both). goldenkit owns no protocol code: the client is built by
:func:`make_client` and used through httpx's public API only.

The environment is honoured as httpx honours it (``trust_env``): ``HTTPS_PROXY``,
``HTTP_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` in either case, each proxied
request sent by aiohttp through that proxy (CONNECT for https); ``no_proxy=True``
(``--no-proxy``) ignores them. Certificates are checked against ``ca_bundle``
(``--ca-bundle FILE``), else ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, else certifi's
bundle. Proxy URLs (and their credentials) are never recorded or printed.

Stale keep-alive connections: the client's aiohttp session reports (through
aiohttp's public tracing signals) when a request went out on a pooled connection
(:func:`watch_reuse`), so :mod:`goldenkit.providers._http` can send a request once
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

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

    A bundle that cannot be read is a ConfigError naming it (exit 1 before any call).
    """
    if ca_bundle is not None:
        return _load_context(cafile=str(ca_bundle), what=f"--ca-bundle {ca_bundle}")
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = os.environ.get("SSL_CERT_DIR") or None
    if cafile or capath:
        what = f"SSL_CERT_FILE={cafile}" if cafile else f"SSL_CERT_DIR={capath}"
        return _load_context(cafile=cafile, capath=capath, what=what)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _load_context(*, cafile: str | None = None, capath: str | None = None, what: str) -> ssl.SSLContext:
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


async def _on_reuse(session: object, context: object, params: object) -> None:
    box = _REUSED.get()
    if box is not None:
        box.append(True)


@functools.cache
def _client_class() -> type[httpx.AsyncClient]:
    """``HttpxAiohttpClient`` whose transports' aiohttp sessions report connection reuse (see the module doc).

    The transports are httpx-aiohttp's own, built the way it builds them; only the aiohttp
    session they create gets a ``TraceConfig`` (and the same connector settings).
    """
    import aiohttp
    from httpx_aiohttp import HttpxAiohttpClient
    from httpx_aiohttp.transport import AiohttpTransport

    class Transport(AiohttpTransport):
        def get_client(self) -> aiohttp.ClientSession:
            limit = self.limits.max_connections
            connector = aiohttp.TCPConnector(
                keepalive_timeout=self.limits.keepalive_expiry, ssl=self.ssl_context, limit=limit or 0
            )
            trace = aiohttp.TraceConfig()
            trace.on_connection_reuseconn.append(_on_reuse)
            return aiohttp.ClientSession(connector=connector, trace_configs=[trace])

    class Client(HttpxAiohttpClient):
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
            return Transport(verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, limits=limits)

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
            return Transport(
                verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, limits=limits, proxy=proxy
            )

    return Client


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
    "basic_auth_header",
    "check_header_value",
    "make_client",
    "ssl_context",
    "watch_reuse",
]
