"""The HTTP layer every HTTP provider shares: one client, one error classification.

Client layout. A plain ``httpx.AsyncClient`` (its own httpcore pool) spends 2-4 ms
of CPU per call under concurrency and tops out near 500 calls/s on two cores;
``benchmarks/bench_runner.py`` measures it. goldenkit keeps httpx as the API
(``httpx.Request`` / ``httpx.Response``, timeouts, exceptions) and sends on
:class:`goldenkit.providers.transport.PoolTransport`, pooled HTTP/1.1 connections
on asyncio protocols parsed by llhttp, its pool sized to the run's in-flight
limit. :class:`TransportClient` hands requests straight to that transport,
skipping the AsyncClient middleware a model call does not use (cookies, auth
flow, redirects, hooks), which costs about as much CPU as the transport itself,
and builds each request from a URL and headers parsed once. Bodies are
serialized once with orjson and sent as bytes.

Errors. :func:`post_json` turns every failure into a
:class:`goldenkit.errors.ProviderError` with a one-line message that names the
status and the URL *without secrets* (userinfo and query strings removed):

* transient (retried): 408, 409, 425, 429, 5xx, timeouts, connection refused or
  reset, ``ReadError`` / ``RemoteProtocolError`` (a server closing an idle
  keep-alive connection), any other ``httpx.TransportError``;
* permanent (ERROR at once): 400, 401, 403, 404, 422 and other 4xx, and a reply
  that is not the JSON object expected. A 400 whose body says the prompt is
  longer than the context (``context_length_exceeded``) names context length;
  a 429 (or 402/403) whose body says the quota or credit is exhausted
  (OpenAI ``insufficient_quota`` and the like) is permanent and says so.

``Retry-After`` (seconds or an HTTP date) is parsed into ``retry_after``.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from goldenkit.errors import ProviderError

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
_JSON_HEADERS = {"content-type": "application/json", "accept": "application/json"}
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "context window",
    "exceeds the context",
    "too many tokens",
    "n_ctx",
)

# A 429 (or 402/403) whose body says the account's quota or credit is used up: permanent, not a rate limit.
_QUOTA_MARKERS = (
    "insufficient_quota",
    "exceeded your current quota",
    "billing_hard_limit",
    "credit balance is too low",
    "insufficient credit",
    "insufficient_credit",
    "out of credits",
    "quota exhausted",
    "quota has been exhausted",
)


def redact_url(url: str | httpx.URL) -> str:
    """``url`` without userinfo, query string or fragment (where keys could hide)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """Split ``http://user:pw@host/...`` into the bare URL and ``(user, pw)`` (or None)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    from urllib.parse import unquote

    user = unquote(parts.username or "")
    pw = unquote(parts.password or "")
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), (user, pw)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_text(body: bytes, limit: int = 200) -> str:
    """A short one-line excerpt of an error body (the server's message when JSON)."""
    text = body.decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        err = obj.get("error", obj)
        if isinstance(err, dict):
            # OpenAI-style {"error": {"message"}}; FastAPI servers (llama.cpp's Python server) {"detail"}
            text = str(err.get("message") or err.get("detail") or err.get("code") or err)
        else:
            text = str(err)
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


def _describe(exc: BaseException) -> str:
    """``ExceptionName: message`` on one line, without the URL (it may carry userinfo)."""
    detail = " ".join(str(exc).split())
    detail = re.sub(r"[a-z][a-z0-9+.-]*://\S+", "<url>", detail)[:160]
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def classify_status(status: int, body: bytes, url: str, headers: httpx.Headers | None = None) -> ProviderError:
    """The ProviderError for a non-2xx reply."""
    excerpt = _error_text(body)
    retry_after = parse_retry_after(headers.get("retry-after")) if headers is not None else None
    lowered = body[:4000].decode("utf-8", "replace").lower()
    if status == 400 or status == 413:
        if any(m in lowered for m in _CONTEXT_MARKERS):
            return ProviderError(
                f"HTTP {status} from {url}: prompt exceeds the model's context length ({excerpt})",
                transient=False,
                status=status,
                url=url,
            )
    if status in (402, 403, 429) and any(m in lowered for m in _QUOTA_MARKERS):
        return ProviderError(
            f"HTTP {status} from {url}: quota or credit exhausted, retrying cannot help ({excerpt})",
            transient=False,
            status=status,
            url=url,
            retry_after=retry_after,
        )
    transient = status in TRANSIENT_STATUSES or status >= 500
    msg = f"HTTP {status} from {url}"
    if excerpt:
        msg += f": {excerpt}"
    return ProviderError(msg, transient=transient, status=status, url=url, retry_after=retry_after)


async def post_json(
    client: httpx.AsyncClient | TransportClient,
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``url`` and return the reply's JSON object.

    Every failure is raised as :class:`ProviderError` (see the module docstring).
    """
    body = orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS, default=str)
    hdrs = {**_JSON_HEADERS, **headers} if headers else _JSON_HEADERS
    try:
        if timeout is None:
            resp = await client.post(url, content=body, headers=hdrs)
        else:
            resp = await client.post(url, content=body, headers=hdrs, timeout=timeout)
    except httpx.TimeoutException as exc:
        safe = redact_url(url)
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, TimeoutError):
            # A timeout caused by something else (a dropped connection): name the real cause.
            raise ProviderError(f"{_describe(cause)} calling {safe}", transient=True, url=safe) from None
        raise ProviderError(f"timed out calling {safe}", transient=True, url=safe) from None
    except httpx.UnsupportedProtocol as exc:
        safe = redact_url(url)
        raise ProviderError(f"unsupported URL {safe}: {exc}", transient=False, url=safe) from None
    except httpx.TransportError as exc:
        safe = redact_url(url)
        raise ProviderError(f"{_describe(exc.__cause__ or exc)} calling {safe}", transient=True, url=safe) from None
    if resp.status_code >= 300:
        raise classify_status(resp.status_code, resp.content, redact_url(url), resp.headers)
    try:
        obj = orjson.loads(resp.content)
    except ValueError:  # orjson.JSONDecodeError is a ValueError
        safe = redact_url(url)
        raise ProviderError(
            f"malformed reply from {safe}: HTTP {resp.status_code} body is not JSON "
            f"({_error_text(resp.content, 80)!r})",
            transient=False,
            status=resp.status_code,
            url=safe,
        ) from None
    if not isinstance(obj, dict):
        safe = redact_url(url)
        raise ProviderError(
            f"malformed reply from {safe}: expected a JSON object, got {type(obj).__name__}",
            transient=False,
            status=resp.status_code,
            url=safe,
        )
    return obj


class TransportClient:
    """The subset of ``httpx.AsyncClient`` goldenkit uses (``post``), sent straight to the transport.

    Requests and responses are ``httpx.Request`` / ``httpx.Response`` and errors are
    httpx's exceptions, but the client middleware that a model call does not need
    (cookie jar, auth flow generator, redirect handling, event hooks, URL merging)
    is skipped: on two cores that middleware costs more CPU per call than the whole
    transport. Basic auth, when configured, is a precomputed header.

    Per URL and header set, the parsed ``httpx.URL`` and the ``httpx.Headers`` (with
    ``Host`` and auth) are built once; each request copies them and adds its
    ``Content-Length``, and carries its body as a ready ``ByteStream`` (what
    ``httpx.Request(content=...)`` derives with several header scans per call).
    """

    def __init__(
        self, transport: httpx.AsyncBaseTransport, *, timeout: float, auth: tuple[str, str] | None = None
    ) -> None:
        self._transport = transport
        self._timeout = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        self._auth_header = httpx.BasicAuth(*auth)._auth_header if auth else None  # noqa: SLF001
        self._prepared: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[httpx.URL, httpx.Headers]] = {}
        self.is_closed = False

    def _prepare(self, url: str, headers: dict[str, str]) -> tuple[httpx.URL, httpx.Headers]:
        key = (url, tuple(headers.items()))
        prepared = self._prepared.get(key)
        if prepared is None:
            u = httpx.URL(url)
            h = httpx.Headers({"Host": u.netloc.decode("ascii")})
            h.update(headers)
            if self._auth_header is not None and "authorization" not in h:
                h["Authorization"] = self._auth_header
            prepared = self._prepared[key] = (u, h)
        return prepared

    async def post(
        self, url: str, *, content: bytes, headers: dict[str, str], timeout: float | None = None
    ) -> httpx.Response:
        u, base = self._prepare(url, headers)
        t = self._timeout if timeout is None else dict.fromkeys(self._timeout, timeout)
        request = httpx.Request("POST", u, headers=base, stream=httpx.ByteStream(content), extensions={"timeout": t})
        request.headers["Content-Length"] = str(len(content))
        request.read()
        response = await self._transport.handle_async_request(request)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    async def aclose(self) -> None:
        if not self.is_closed:
            self.is_closed = True
            await self._transport.aclose()


def make_transport_client(
    *, max_connections: int = 64, timeout: float = 60.0, auth: tuple[str, str] | None = None
) -> TransportClient:
    """The client goldenkit's HTTP providers use: :class:`TransportClient` on :class:`PoolTransport`."""
    from goldenkit.providers.transport import PoolTransport

    return TransportClient(PoolTransport(max_connections=max_connections), timeout=timeout, auth=auth)


class ClientHolder:
    """One lazily created client per event loop, sized by :meth:`configure`.

    HTTP providers own one of these: the runner calls ``configure(timeout=...,
    max_in_flight=...)`` before a run (the pool gets that many connections) and
    ``aclose()`` after it. A client is bound to the loop that created it, so a
    provider reused by a later ``asyncio.run`` gets a fresh one.
    """

    def __init__(self, *, timeout: float = 60.0, max_connections: int = 64, auth: tuple[str, str] | None = None):
        self.timeout = float(timeout)
        self.max_connections = int(max_connections)
        self.auth = auth
        self._client: TransportClient | None = None
        self._loop: object | None = None

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        if timeout is not None:
            self.timeout = float(timeout)
        if max_in_flight is not None:
            self.max_connections = max(1, int(max_in_flight))

    def get(self) -> TransportClient:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = make_transport_client(
                max_connections=self.max_connections, timeout=self.timeout, auth=self.auth
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and not client.is_closed:
            await client.aclose()


__all__ = [
    "ClientHolder",
    "TransportClient",
    "TRANSIENT_STATUSES",
    "classify_status",
    "make_transport_client",
    "parse_retry_after",
    "post_json",
    "redact_url",
    "split_userinfo",
]
