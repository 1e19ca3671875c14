"""The HTTP layer every HTTP provider shares: one client, one error classification.

The client (``httpx.AsyncClient`` on aiohttp's pool, proxies, CA certificates,
header checks, the headers every request carries) is built in
:mod:`goldenkit.providers._client`; this module sends the requests through it. What
is the same for every call is done once: a URL is parsed and redacted once
(:func:`call_target`), the static headers are the client's. A JSON POST of a client
from :func:`goldenkit.providers._client.make_client` goes straight to the aiohttp pool
httpx chose for its URL, with the client's headers and timeouts (:func:`_fast_post`):
httpx's per-request objects cost as much CPU as the whole call on aiohttp; any reply but
a 2xx goes on through httpx, and so does every request of a client with cookies, auth
or a transport of its own.

Requests (:func:`post_json`, :func:`post_stream`):

* ``deadline`` (the run's ``--timeout``) bounds the whole request, from the connection
  to the last byte of the reply, streamed or not: a server that drips a byte a second
  is a ``transient`` error at the deadline (retried; ``infrastructure`` when the runner
  gives up on it). httpx's connect, read, write and pool timeouts stay inside it;
* a pooled keep-alive connection that the server or a proxy closed while it was idle
  (the request fails before any reply on a *reused* connection) is retried once, at
  once, on a new connection, as HTTP clients do; it is not an attempt of its own. A
  request that fails on a fresh connection is an error as it was;
* every reply is read to its end, or its connection is closed, before the connection
  goes back to the pool (a stream left early, an error, a cancel);
* a 307/308 is followed (at most :data:`MAX_REDIRECTS` hops, method and body
  kept; the ``Authorization`` header is dropped when the origin changes); a
  301/302/303 to a POST is an ``infrastructure`` error naming the Location (without
  secrets), since re-sending it as a GET would not be the same call;
* a reply larger than ``max_reply_bytes`` (default 32 MiB) is an ``infrastructure``
  error, read no further; so is a 2xx that is not JSON where JSON was due (an HTML
  page of a proxy, a captive portal or a gateway), named by its content type.

Errors. Every failure becomes a :class:`goldenkit.errors.ProviderError` with a
one-line message that names the status and the URL *without secrets* (userinfo
and query strings removed), of the kind :mod:`goldenkit.providers._failures` decides
(transient, infrastructure or refused). ``Retry-After`` (seconds or an HTTP date) is
parsed into ``retry_after``.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from goldenkit.errors import ProviderError
from goldenkit.providers._client import ReplyStream, as_response, fast_route, watch_reuse
from goldenkit.providers._failures import (
    TRANSIENT_STATUSES,
    classify_status,
    error_text,
    is_json_body,
    parse_retry_after,
    transport_error,
)

T = TypeVar("T")


def redact_url(url: str | httpx.URL) -> str:
    """``url`` without userinfo, query string or fragment (where keys could hide)."""
    parts = urlsplit(str(url))
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@functools.lru_cache(maxsize=256)
def call_target(url: str) -> tuple[httpx.URL, str]:
    """``url`` parsed and redacted (:func:`redact_url`), once per distinct URL: a run
    calls the same one thousands of times. ``httpx.URL`` is immutable, so sharing it is safe."""
    return httpx.URL(url), redact_url(url)


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


MAX_REDIRECTS = 3
DEFAULT_MAX_REPLY_BYTES = 32 * 1024 * 1024
_ERROR_BODY_BYTES = 64 * 1024  # what an error reply is read for its message


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


def _aiohttp_names(exc: BaseException) -> set[str]:
    """The names of ``exc``'s aiohttp classes: told by name, so a module an agent is importing in
    another thread right now is never read."""
    return {c.__name__ for c in type(exc).__mro__ if c.__module__.startswith("aiohttp")}


def _closed_by_peer(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection was closed under the request (not a timeout, not TLS)."""
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not e for e in seen):
        seen.append(cur)
        if isinstance(cur, TimeoutError | asyncio.TimeoutError | httpx.TimeoutException):
            if cur is not exc:  # httpx-aiohttp maps a disconnect to ConnectTimeout: look at its cause
                return False
        elif isinstance(cur, ConnectionResetError | BrokenPipeError | httpx.RemoteProtocolError):
            return True
        elif {"ServerDisconnectedError", "ClientOSError"} & (names := _aiohttp_names(cur)):
            return "ClientConnectorError" not in names
        cur = cur.__cause__ or cur.__context__
    return False


async def _send(client: httpx.AsyncClient, request: httpx.Request, url: str) -> httpx.Response:
    """``client.send`` (streamed), as :func:`_once_more` sends."""
    return await _once_more(lambda: client.send(request, stream=True), url)


async def _once_more(send: Callable[[], Awaitable[T]], url: str) -> T:
    """``send()``, once more at once when a reused keep-alive connection was found closed."""
    for last in (False, True):
        reused, token = watch_reuse()
        try:
            return await send()
        except httpx.TransportError as exc:
            if last or not reused or not _closed_by_peer(exc):
                raise transport_error(exc, url) from None
        finally:
            token.var.reset(token)
    raise ProviderError(f"no reply calling {url}", kind="transient", url=url)  # not reached: the loop returns


async def _open(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str] | None,
    max_reply_bytes: int,
    first: httpx.Response | None = None,
) -> httpx.Response:
    """Send the POST (following 307/308) and return the open 2xx reply; raise ProviderError otherwise.

    ``headers`` are this call's beyond the client's own; after a hop to another
    origin no ``authorization`` header is sent, whichever of the two it came from.
    ``first``: the reply to the first request when it was already sent (by :func:`_fast_post`).
    """
    target, safe = call_target(url)
    foreign = False  # a redirect left the original origin
    for _hop in range(MAX_REDIRECTS + 1):
        if first is not None:
            resp, first = first, None
        else:
            request = client.build_request("POST", target, content=body, headers=headers)
            if foreign:
                request.headers.pop("authorization", None)
            resp = await _send(client, request, safe)
        status = resp.status_code
        if status < 300:
            if _declared_over(resp.headers.get("content-length"), max_reply_bytes):
                await resp.aclose()
                raise _too_large(safe, max_reply_bytes)
            return resp
        location = resp.headers.get("location")
        if status in (307, 308) and location:
            await resp.aclose()
            nxt = target.join(location)
            foreign = foreign or not _same_origin(target, nxt)
            target = nxt
            continue
        try:
            excerpt = await _read_capped(resp, _ERROR_BODY_BYTES, safe, truncate=True)
        finally:
            await resp.aclose()
        if status in (301, 302, 303) and location:
            raise ProviderError(
                f"HTTP {status} from {safe}: redirected to {redact_url(target.join(location))}; a POST is not "
                "re-sent as a GET (point the base URL at the new address)",
                kind="infrastructure",
                status=status,
                url=safe,
            )
        raise classify_status(status, excerpt, safe, resp.headers)
    raise ProviderError(f"more than {MAX_REDIRECTS} redirects calling {safe}", kind="infrastructure", url=safe)


def _declared_over(length: str | None, limit: int) -> bool:
    """Whether a reply's Content-Length says its body is larger than ``limit`` (refused before reading it)."""
    return length is not None and length.isdigit() and int(length) > limit


def _too_large(url: str, limit: int) -> ProviderError:
    return ProviderError(
        f"reply from {url} is larger than max_reply_bytes ({limit:,} bytes); not read further",
        kind="infrastructure",
        url=url,
    )


async def _chunks(resp: httpx.Response, url: str) -> AsyncIterator[bytes]:
    """The reply's (decoded) body in chunks; transport failures as ProviderError."""
    try:
        async for chunk in resp.aiter_bytes():
            yield chunk
    except httpx.TransportError as exc:
        raise transport_error(exc, url) from None
    except httpx.DecodingError as exc:
        raise _undecodable(url, resp, exc) from None


def _undecodable(url: str, resp: httpx.Response | AsyncIterable[bytes], exc: Exception) -> ProviderError:
    """A reply whose content encoding (gzip, deflate, br) does not decode: ``infrastructure``."""
    encoding = resp.headers.get("content-encoding", "?") if isinstance(resp, httpx.Response) else "?"
    return ProviderError(f"reply from {url} cannot be decoded ({encoding}): {exc}", kind="infrastructure", url=url)


async def _read_capped(
    resp: httpx.Response | AsyncIterable[bytes], limit: int, url: str, *, truncate: bool = False
) -> bytes:
    """The whole body (of a reply, or its chunks), at most ``limit`` bytes (beyond it: cut when
    ``truncate``, else an error)."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in resp.aiter_bytes() if isinstance(resp, httpx.Response) else resp:
            size += len(chunk)
            parts.append(chunk)
            if size > limit:
                if truncate:
                    break
                raise _too_large(url, limit)
    except httpx.TransportError as exc:
        raise transport_error(exc, url) from None
    except httpx.DecodingError as exc:
        raise _undecodable(url, resp, exc) from None
    return b"".join(parts)


def _encode(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS, default=str)


def _not_json(data: bytes, url: str, status: int, content_type: str | None) -> ProviderError:
    """A 2xx reply that is not the JSON due: a proxy's, portal's or gateway's page (``infrastructure``)."""
    what = f"is {content_type.split(';', 1)[0].strip()}" if content_type else "has no content type"
    return ProviderError(
        f"HTTP {status} from {url} {what}, not the JSON a model server sends "
        f"(a proxy's or gateway's page?): {error_text(data, 80)!r}",
        kind="infrastructure",
        status=status,
        url=url,
    )


def _json_object(data: bytes, url: str, status: int, content_type: str | None = None) -> dict[str, Any]:
    if content_type is not None and not is_json_body(data, content_type) and not is_json_body(data, None):
        raise _not_json(data, url, status, content_type)
    try:
        obj = orjson.loads(data)
    except ValueError:  # orjson.JSONDecodeError is a ValueError
        raise ProviderError(
            f"malformed reply from {url}: HTTP {status} body is not JSON ({error_text(data, 80)!r})",
            kind="infrastructure",
            status=status,
            url=url,
        ) from None
    if not isinstance(obj, dict):
        raise ProviderError(
            f"malformed reply from {url}: expected a JSON object, got {type(obj).__name__}",
            kind="infrastructure",
            status=status,
            url=url,
        )
    return obj


def _deadline_error(deadline: float, url: str) -> ProviderError:
    return ProviderError(
        f"timed out: no complete reply within the {deadline:g}s deadline calling {url} (--timeout bounds "
        "the whole request, connect to last byte)",
        kind="transient",
        final_kind="infrastructure",
        url=url,
    )


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    deadline: float | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``url`` and return the reply's JSON object.

    ``client`` is one from :func:`goldenkit.providers._client.make_client`, whose
    own headers say JSON; ``headers`` are more for this call only; ``deadline``
    (seconds) bounds the whole request. Every failure is raised as
    :class:`ProviderError` (see the module doc).
    """
    body = _encode(payload)
    safe = call_target(url)[1]
    timer = asyncio.timeout(deadline)
    try:
        async with timer:
            got = await _fast_post(client, url, body, max_reply_bytes) if headers is None else None
            if isinstance(got, tuple):
                status, content_type, data = got
            else:
                resp = await _open(client, url, body, headers, max_reply_bytes, first=got)
                try:
                    data = await _read_capped(resp, max_reply_bytes, safe)
                finally:
                    await resp.aclose()
                status, content_type = resp.status_code, resp.headers.get("content-type")
    except TimeoutError:
        if deadline is not None and timer.expired():
            raise _deadline_error(deadline, safe) from None
        raise
    return _json_object(data, safe, status, content_type)


async def _fast_post(
    client: httpx.AsyncClient, url: str, body: bytes, max_reply_bytes: int
) -> tuple[int, str | None, bytes] | httpx.Response | None:
    """The POST sent straight to the client's aiohttp pool (:func:`goldenkit.providers._client.fast_route`:
    the client's proxy, certificates, headers and timeouts, without httpx's per-request objects): a 2xx
    reply without a content encoding read whole, as ``(status, content type, body)``; any other reply
    (redirects, errors, a compressed body, decoded by httpx as it is read and capped as it is decoded) as
    the httpx response :func:`_open` goes on from; None when the client takes no shortcut.

    The same rules as the httpx path: a stale pooled connection is tried once more, the body is capped,
    a cookie the reply sets goes into the client's jar. ``bench_runner.py``, 256 calls in flight: run_eval's
    CPU per call 0.46 -> 0.32 ms, its calls/s 89% -> 98% of bare aiohttp's.
    """
    target, safe = call_target(url)
    route = fast_route(client, target)
    if route is None:
        return None
    pool, headers, timeout = route
    resp = await _once_more(lambda: pool.open("POST", _wire_url(url), headers, body, timeout), safe)
    if "Set-Cookie" in resp.headers:  # into the client's jar, as client.send puts it (its next calls send it)
        client.cookies.extract_cookies(
            httpx.Response(resp.status, headers=resp.raw_headers, request=httpx.Request("POST", target))
        )
    if resp.status >= 300 or "Content-Encoding" in resp.headers:
        return as_response(resp)
    stream = ReplyStream(resp)
    try:
        if _declared_over(resp.headers.get("Content-Length"), max_reply_bytes):
            raise _too_large(safe, max_reply_bytes)
        data = await _read_capped(stream, max_reply_bytes, safe)
    finally:
        await stream.aclose()
    return resp.status, resp.headers.get("Content-Type"), data


@functools.lru_cache(maxsize=256)
def _wire_url(url: str) -> str:
    """``url`` as httpx sends it (parsed and normalized, :func:`call_target`)."""
    return str(call_target(url)[0])


async def post_stream(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    on_line: Callable[[bytes], bool],
    *,
    headers: dict[str, str] | None = None,
    deadline: float | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> float | None:
    """POST ``payload`` and hand each line of the streamed reply to ``on_line``.

    ``on_line(line)`` (without the line end) returns True when the line carried
    the first output (a token or a tool call). Returns the time to that first
    output in milliseconds from the moment the request was sent (None if none came).
    The same client, headers, deadline and errors as :func:`post_json`;
    ``max_reply_bytes`` caps the whole stream. The stream is read to its end
    (whether it carried its end marker is the collector's to say).
    """
    body = _encode(payload)
    safe = call_target(url)[1]
    timer = asyncio.timeout(deadline)
    try:
        async with timer:
            return await _stream(client, url, safe, body, headers, on_line=on_line, max_reply_bytes=max_reply_bytes)
    except TimeoutError:
        if deadline is not None and timer.expired():
            raise _deadline_error(deadline, safe) from None
        raise


async def _stream(
    client: httpx.AsyncClient,
    url: str,
    safe: str,
    body: bytes,
    headers: dict[str, str] | None,
    *,
    on_line: Callable[[bytes], bool],
    max_reply_bytes: int,
) -> float | None:
    t0 = time.perf_counter()
    resp = await _open(client, url, body, headers, max_reply_bytes)
    ttft: float | None = None
    size = 0
    pending = b""
    try:
        content_type = resp.headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() == "text/html":
            page = await _read_capped(resp, _ERROR_BODY_BYTES, safe, truncate=True)
            raise _not_json(page, safe, resp.status_code, content_type)
        async for chunk in _chunks(resp, safe):
            size += len(chunk)
            if size > max_reply_bytes:
                raise _too_large(safe, max_reply_bytes)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if on_line(line.rstrip(b"\r")) and ttft is None:
                    ttft = 1000 * (time.perf_counter() - t0)
        if pending.strip() and on_line(pending.rstrip(b"\r")) and ttft is None:
            ttft = 1000 * (time.perf_counter() - t0)
    finally:
        await resp.aclose()
    return ttft


__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "MAX_REDIRECTS",
    "TRANSIENT_STATUSES",
    "call_target",
    "classify_status",
    "parse_retry_after",
    "post_json",
    "post_stream",
    "redact_url",
    "split_userinfo",
    "transport_error",
]
