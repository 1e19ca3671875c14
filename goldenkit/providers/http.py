"""The HTTP layer every HTTP provider shares: one client, one error classification.

The client (``httpx.AsyncClient`` on aiohttp's pool, proxies, CA certificates,
header checks, the headers every request carries) is built in
:mod:`goldenkit.providers.client`; this module sends the requests through httpx's
public API only. What is the same for every call is done once: a URL is parsed
and redacted once (:func:`call_target`), the static headers are the client's.

Requests (:func:`post_json`, :func:`post_stream`):

* a 307/308 is followed (at most :data:`MAX_REDIRECTS` hops, method and body
  kept; the ``Authorization`` header is dropped when the origin changes); a
  301/302/303 to a POST is a permanent error naming the Location (without
  secrets), since re-sending it as a GET would not be the same call;
* a reply larger than ``max_reply_bytes`` (default 32 MiB) is a permanent error,
  read no further.

Errors. Every failure becomes a :class:`goldenkit.errors.ProviderError` with a
one-line message that names the status and the URL *without secrets* (userinfo
and query strings removed):

* transient (retried): 408, 409, 425, 429, 5xx, timeouts, connection refused or
  reset, ``ReadError`` / ``RemoteProtocolError`` (a server closing an idle
  keep-alive connection), any other ``httpx.TransportError``;
* permanent (ERROR at once): 400, 401, 403, 404, 422 and other 4xx, a TLS
  certificate that does not verify (named: expired, unknown issuer, wrong host),
  and a reply that is not the JSON object expected. A 400 whose body says the
  prompt is longer than the context (``context_length_exceeded``) names context length;
  a 429 (or 402/403) whose body says the quota or credit is exhausted
  (OpenAI ``insufficient_quota`` and the like) is permanent and says so.

``Retry-After`` (seconds or an HTTP date) is parsed into ``retry_after``.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import re
import ssl
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from goldenkit.errors import ProviderError

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
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


MAX_REDIRECTS = 3
DEFAULT_MAX_REPLY_BYTES = 32 * 1024 * 1024
_ERROR_BODY_BYTES = 64 * 1024  # what an error reply is read for its message


def _certificate_problem(exc: BaseException) -> str | None:
    """The certificate check's verdict when ``exc`` (or what caused it) is a failed TLS verification."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        inner = getattr(cur, "certificate_error", None)  # aiohttp's ClientConnectorCertificateError
        found = inner if isinstance(inner, ssl.SSLCertVerificationError) else cur
        if isinstance(found, ssl.SSLCertVerificationError):
            why = getattr(found, "verify_message", None) or getattr(found, "reason", None)
            return str(why or "certificate verify failed")
        cur = cur.__cause__ or cur.__context__
    return None


def transport_error(exc: httpx.TransportError, url: str) -> ProviderError:
    """The ProviderError for a request that got no HTTP reply (``url`` already redacted)."""
    problem = _certificate_problem(exc)
    if problem is not None:
        return ProviderError(
            f"TLS certificate verification failed calling {url}: {problem} "
            "(give the CA with --ca-bundle FILE or SSL_CERT_FILE)",
            transient=False,
            url=url,
        )
    if isinstance(exc, httpx.TimeoutException):
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, TimeoutError | asyncio.TimeoutError):
            # A "timeout" caused by something else (a dropped connection): name the real cause.
            return ProviderError(f"{_describe(cause)} calling {url}", transient=True, url=url)
        return ProviderError(f"timed out calling {url}", transient=True, url=url)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return ProviderError(f"unsupported URL {url}: {_describe(exc)}", transient=False, url=url)
    if isinstance(exc, httpx.ProxyError):
        return ProviderError(f"proxy refused the call to {url}: {_describe(exc)}", transient=True, url=url)
    return ProviderError(f"{_describe(exc.__cause__ or exc)} calling {url}", transient=True, url=url)


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


async def _open(
    client: httpx.AsyncClient,
    url: str,
    body: bytes,
    headers: dict[str, str] | None,
    timeout: float | None,
    max_reply_bytes: int,
) -> httpx.Response:
    """Send the POST (following 307/308) and return the open 2xx reply; raise ProviderError otherwise.

    ``headers`` are this call's beyond the client's own; after a hop to another
    origin no ``authorization`` header is sent, whichever of the two it came from.
    """
    target, safe = call_target(url)
    extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    foreign = False  # a redirect left the original origin
    for _hop in range(MAX_REDIRECTS + 1):
        request = client.build_request("POST", target, content=body, headers=headers, **extra)
        if foreign:
            request.headers.pop("authorization", None)
        try:
            resp = await client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise transport_error(exc, safe) from None
        status = resp.status_code
        if status < 300:
            length = resp.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > max_reply_bytes:
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
                transient=False,
                status=status,
                url=safe,
            )
        raise classify_status(status, excerpt, safe, resp.headers)
    raise ProviderError(f"more than {MAX_REDIRECTS} redirects calling {safe}", transient=False, url=safe)


def _too_large(url: str, limit: int) -> ProviderError:
    return ProviderError(
        f"reply from {url} is larger than max_reply_bytes ({limit:,} bytes); not read further",
        transient=False,
        url=url,
    )


async def _chunks(resp: httpx.Response, url: str) -> AsyncIterator[bytes]:
    """The reply's (decoded) body in chunks; transport failures as ProviderError."""
    try:
        async for chunk in resp.aiter_bytes():
            yield chunk
    except httpx.TransportError as exc:
        raise transport_error(exc, url) from None


async def _read_capped(resp: httpx.Response, limit: int, url: str, *, truncate: bool = False) -> bytes:
    """The whole body, at most ``limit`` bytes (beyond it: cut when ``truncate``, else an error)."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
            parts.append(chunk)
            if size > limit:
                if truncate:
                    break
                raise _too_large(url, limit)
    except httpx.TransportError as exc:
        raise transport_error(exc, url) from None
    return b"".join(parts)


def _encode(payload: dict[str, Any]) -> bytes:
    return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS, default=str)


def _json_object(data: bytes, url: str, status: int) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except ValueError:  # orjson.JSONDecodeError is a ValueError
        raise ProviderError(
            f"malformed reply from {url}: HTTP {status} body is not JSON ({_error_text(data, 80)!r})",
            transient=False,
            status=status,
            url=url,
        ) from None
    if not isinstance(obj, dict):
        raise ProviderError(
            f"malformed reply from {url}: expected a JSON object, got {type(obj).__name__}",
            transient=False,
            status=status,
            url=url,
        )
    return obj


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``url`` and return the reply's JSON object.

    ``client`` is one from :func:`goldenkit.providers.client.make_client`, whose
    own headers say JSON; ``headers`` are more for this call only. Every failure
    is raised as :class:`ProviderError` (see the module docstring).
    """
    body = _encode(payload)
    safe = call_target(url)[1]
    resp = await _open(client, url, body, headers, timeout, max_reply_bytes)
    try:
        data = await _read_capped(resp, max_reply_bytes, safe)
    finally:
        await resp.aclose()
    return _json_object(data, safe, resp.status_code)


async def post_stream(
    client: httpx.AsyncClient,
    url: str,
    payload: dict[str, Any],
    on_line: Callable[[bytes], bool],
    *,
    headers: dict[str, str] | None = None,
    timeout: float | None = None,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> float | None:
    """POST ``payload`` and hand each line of the streamed reply to ``on_line``.

    ``on_line(line)`` (without the line end) returns True when the line carried
    the first output (a token or a tool call). Returns the time to that first
    output in milliseconds from the moment the request was sent (None if none came).
    The same client, headers and errors as :func:`post_json`; ``max_reply_bytes``
    caps the whole stream.
    """
    body = _encode(payload)
    safe = call_target(url)[1]
    t0 = time.perf_counter()
    resp = await _open(client, url, body, headers, timeout, max_reply_bytes)
    ttft: float | None = None
    size = 0
    pending = b""
    try:
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
