"""Whose fault a failed model call is: every failure as a :class:`~goldenkit.errors.ProviderError` of one kind.

The kinds are the error taxonomy of :mod:`goldenkit.schema` (the outcome's ``error_kind``).
This module is the one place that decides them, for HTTP replies (:func:`classify_status`),
requests that got no reply (:func:`transport_error`), error texts a server sent inside a 200
or a stream (:func:`reply_error`) and exceptions raised inside an in-process agent
(:func:`exception_error`).

HTTP statuses:

* ``transient`` (retried): 408, 409, 425, 429 (a short Retry-After; a longer one than the
  run's cap is ``infrastructure``, see :func:`goldenkit.runner._limits.throttle_error`) and 5xx;
* ``refused`` (the candidate's own request refused by the model, never retried): a 400, 413
  or 422 whose body says the prompt exceeds the context length, that a content filter
  blocked it, or that a tool's schema is invalid;
* ``infrastructure`` (an answer nobody gave, never retried): 401, 403, a 402/403/429 saying
  the quota or credit is exhausted, 404 (a gateway's page when its body is not JSON), any
  other 4xx, and a 5xx whose body says the request itself is invalid (a validation error:
  the same bytes get the same 500, so retrying cannot help; llama.cpp's server answers a
  malformed body with a 500 carrying pydantic's message).

Requests with no reply: a TLS certificate that does not verify, an unsupported URL, and a
proxy that refused the call are ``infrastructure``; timeouts, refused, reset or dropped
connections are ``transient``. A timeout (a deadline) is retried as ``transient``; when it
is still what failed on the last attempt the outcome records it as ``infrastructure``
(``final_kind``): nobody answered in time.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import ssl
import time
from typing import TYPE_CHECKING

from goldenkit._registry import publish
from goldenkit._scrub import scrub
from goldenkit.errors import ProviderError

if TYPE_CHECKING:  # httpx is imported by the HTTP providers; an in-process agent's run never needs it
    import httpx

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})
TRANSIENT, INFRASTRUCTURE, REFUSED, AGENT = "transient", "infrastructure", "refused", "agent"

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "context window",
    "exceeds the context",
    "too many tokens",
    "n_ctx",
)
_FILTER_MARKERS = (
    "content_filter",
    "content filter",
    "content management policy",
    "content_policy_violation",
    "responsibleaipolicyviolation",
    "flagged by the safety",
    "blocked by the safety",
)
_TOOL_SCHEMA_MARKERS = (
    "invalid schema for function",
    "invalid_function_parameters",
    "invalid tool schema",
    "tool schema",
    "invalid 'tools",
    "invalid value for 'tools",
)
# A 429 (or 402/403) whose body says the account's quota or credit is used up: not a rate limit.
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
# A 5xx whose body is a validation of the request (FastAPI/pydantic): deterministic, not retried.
_INVALID_REQUEST_MARKERS = (
    "validation error",
    "input should be",
    "field required",
    "extra inputs are not permitted",
    "invalid_request_error",
)


def refusal(text: str) -> str | None:
    """Why the model refused the request, when ``text`` (an error body, lowercased or not) says so."""
    low = text.lower()
    if any(m in low for m in _CONTEXT_MARKERS):
        return "prompt exceeds the model's context length"
    if any(m in low for m in _FILTER_MARKERS):
        return "the request was blocked by a content filter"
    if any(m in low for m in _TOOL_SCHEMA_MARKERS):
        return "a tool's schema is invalid"
    return None


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


def error_text(body: bytes, limit: int = 200) -> str:
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
    text = scrub(" ".join(text.split()))  # masked before it is cut (goldenkit._scrub)
    return text[:limit] + ("..." if len(text) > limit else "")


def describe(exc: BaseException) -> str:
    """``ExceptionName: message`` on one line, without the URL (it may carry userinfo); an exception
    whose ``str()`` itself raises is described by its name."""
    try:
        detail = " ".join(str(exc).split())
    except Exception:  # noqa: BLE001 - an agent's exception class with a broken __str__
        detail = ""
    # masked before it is cut: a key cut short is too short to be known by its shape
    detail = scrub(re.sub(r"[a-z][a-z0-9+.-]*://\S+", "<url>", detail))[:160]
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def is_json_body(body: bytes, content_type: str | None) -> bool:
    """Whether a reply is JSON by its content type, or (no content type) by its first byte."""
    if content_type:
        ct = content_type.split(";", 1)[0].strip().lower()
        return ct == "application/json" or ct.endswith("+json") or ct == "application/x-ndjson"
    return body.lstrip()[:1] in (b"{", b"[")


def classify_status(status: int, body: bytes, url: str, headers: httpx.Headers | None = None) -> ProviderError:
    """The ProviderError for a non-2xx reply (see the module doc)."""
    excerpt = error_text(body)
    retry_after = parse_retry_after(headers.get("retry-after")) if headers is not None else None
    lowered = body[:4000].decode("utf-8", "replace").lower()
    content_type = headers.get("content-type") if headers is not None else None
    where = f"HTTP {status} from {url}"
    if status in (400, 413, 422) and (is_json_body(body, content_type) or not body.strip()):
        why = refusal(lowered)  # only the model server's own JSON refuses a request (a proxy's page never does)
        if why is not None:
            return ProviderError(f"{where}: {why} ({excerpt})", kind=REFUSED, status=status, url=url)
    if status in (402, 403, 429) and any(m in lowered for m in _QUOTA_MARKERS):
        return ProviderError(
            f"{where}: quota or credit exhausted, retrying cannot help ({excerpt})",
            kind=INFRASTRUCTURE,
            status=status,
            url=url,
            retry_after=retry_after,
        )
    if status >= 500 and any(m in lowered for m in _INVALID_REQUEST_MARKERS):
        return ProviderError(
            f"{where}: the server calls the request invalid; the same request gets the same answer, "
            f"so it is not retried ({excerpt})",
            kind=INFRASTRUCTURE,
            status=status,
            url=url,
        )
    if status == 404 and not is_json_body(body, content_type):
        return ProviderError(
            f"{where}: a page that is not the model server's JSON (a gateway or proxy? check the base URL) "
            f"({error_text(body, 80)!r})",
            kind=INFRASTRUCTURE,
            status=status,
            url=url,
        )
    kind = TRANSIENT if status in TRANSIENT_STATUSES or status >= 500 else INFRASTRUCTURE
    msg = f"{where}: {excerpt}" if excerpt else where
    return ProviderError(msg, kind=kind, status=status, url=url, retry_after=retry_after)


def reply_error(message: object, url: str, status: int | None = None) -> ProviderError:
    """An error the server reported inside a reply (a 200's ``error`` object, a stream's error event)."""
    text = " ".join(str(message).split())[:300]
    why = refusal(text)
    if why is not None:
        return ProviderError(f"error reply from {url}: {why} ({text})", kind=REFUSED, status=status, url=url)
    return ProviderError(f"error reply from {url}: {text}", kind=INFRASTRUCTURE, status=status, url=url)


def _certificate_problem(exc: BaseException) -> str | None:
    """The certificate check's verdict when ``exc`` (or what caused it) is a failed TLS verification."""
    for cur in _chain(exc):
        inner = getattr(cur, "certificate_error", None)  # aiohttp's ClientConnectorCertificateError
        found = inner if isinstance(inner, ssl.SSLCertVerificationError) else cur
        if isinstance(found, ssl.SSLCertVerificationError):
            why = getattr(found, "verify_message", None) or getattr(found, "reason", None)
            return str(why or "certificate verify failed")
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first (each once)."""
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not seen for seen in out):
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def transport_error(exc: httpx.TransportError, url: str) -> ProviderError:
    """The ProviderError for a request that got no HTTP reply (``url`` already redacted).

    httpx's classes are told by name along the exception's MRO (:func:`_names`), so no attribute of
    the httpx module is read: an agent may be importing it in another thread right now.
    """
    names = _names(exc)
    problem = _certificate_problem(exc)
    if problem is not None:
        return ProviderError(
            f"TLS certificate verification failed calling {url}: {problem} "
            "(give the CA with --ca-bundle FILE or SSL_CERT_FILE)",
            kind=INFRASTRUCTURE,
            url=url,
        )
    if any(isinstance(e, ssl.SSLError) for e in _chain(exc)):
        return ProviderError(
            f"TLS failed calling {url}: {describe(exc.__cause__ or exc)}", kind=INFRASTRUCTURE, url=url
        )
    if "TimeoutException" in names:
        cause = exc.__cause__
        if cause is not None and not isinstance(cause, TimeoutError | asyncio.TimeoutError):
            # A "timeout" caused by something else (a dropped connection): name the real cause.
            return ProviderError(f"{describe(cause)} calling {url}", kind=TRANSIENT, url=url)
        return ProviderError(f"timed out calling {url}", kind=TRANSIENT, final_kind=INFRASTRUCTURE, url=url)
    if "UnsupportedProtocol" in names:
        return ProviderError(f"unsupported URL {url}: {describe(exc)}", kind=INFRASTRUCTURE, url=url)
    if "ProxyError" in names:
        return ProviderError(f"proxy refused the call to {url}: {describe(exc)}", kind=INFRASTRUCTURE, url=url)
    return ProviderError(f"{describe(exc.__cause__ or exc)} calling {url}", kind=TRANSIENT, url=url)


def _attr(obj: object, name: str) -> object:
    """``obj.name``, or None when it is missing or reading it raises (a property of an agent's class)."""
    try:
        return getattr(obj, name, None)
    except Exception:  # noqa: BLE001 - classifying must not raise
        return None


def _status_of(exc: BaseException) -> int | None:
    """The HTTP status an HTTP library's exception carries (httpx, aiohttp, the openai, google-genai,
    Cohere and Mistral SDKs, requests, websockets' ``InvalidStatus``, botocore's
    ``response["ResponseMetadata"]["HTTPStatusCode"]``), an integer or a string of digits."""
    response = _attr(exc, "response")
    meta = response.get("ResponseMetadata") if isinstance(response, dict) else None
    for value in (
        _attr(exc, "status_code"),
        _attr(exc, "status"),
        _attr(response, "status_code"),
        meta.get("HTTPStatusCode") if isinstance(meta, dict) else None,
        _attr(exc, "code"),
    ):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
            return value
    return None


#: gRPC status names that are nobody's answer (``exc.code().name`` of a grpc RpcError)
_GRPC_OUTAGES = {
    "UNAVAILABLE": TRANSIENT,
    "DEADLINE_EXCEEDED": TRANSIENT,
    "RESOURCE_EXHAUSTED": INFRASTRUCTURE,
    "UNAUTHENTICATED": INFRASTRUCTURE,
    "PERMISSION_DENIED": INFRASTRUCTURE,
    "INTERNAL": TRANSIENT,
    "ABORTED": TRANSIENT,
}


def _grpc_kind(exc: BaseException) -> str | None:
    code = _attr(exc, "code")
    if not callable(code):
        return None
    try:
        name = getattr(code(), "name", None)
    except Exception:  # noqa: BLE001 - an object whose code() is something else
        return None
    return _GRPC_OUTAGES.get(str(name)) if name else None


# Outages by the names of the exception's classes (its MRO), lowercased: an agent's dependencies
# (requests, urllib3, aiohttp, websockets, httpx, grpc, the SDKs) are not goldenkit's, so their classes
# are never imported here, and a module an agent is importing in another thread is never touched.
# A class name containing one of these words is a network failure: ``transient``.
_NETWORK_WORDS = (
    "timeout",  # TimeoutError, ReadTimeout, ReadTimeoutError (urllib3), APITimeoutError, ServerTimeoutError
    "timedout",
    "deadline",  # DeadlineExceeded (google-api-core)
    "connection",  # ConnectionError (builtin, requests), NewConnectionError, ConnectionClosedError (websockets)
    "disconnect",  # ServerDisconnectedError (aiohttp), RemoteDisconnected (http.client)
    "protocolerror",  # ProtocolError (urllib3: connection aborted), RemoteProtocolError (httpx)
    "maxretry",  # MaxRetryError (urllib3: every retry of a connection failed)
    "chunkedencoding",  # ChunkedEncodingError (requests: a cut body)
    "incompleteread",  # IncompleteRead (http.client)
    "payloaderror",  # ClientPayloadError (aiohttp)
    "serviceunavailable",  # ServiceUnavailable (google-api-core)
    "httpexception",  # http.client's: a reply cut or garbled on the way
)
#: Class names of a connection that was made but never spoke the protocol (a proxy's or gateway's page
#: where a WebSocket or HTTP server was expected): ``infrastructure``.
_GATEWAY_WORDS = ("invalidhandshake",)
_PLAIN = frozenset({"object", "baseexception", "exception"})


def _names(exc: BaseException) -> list[str]:
    """The names of ``exc``'s classes along its MRO (reading a type never runs the agent's code)."""
    return [c.__name__ for c in type(exc).__mro__]


def exception_error(exc: BaseException, where: str, *, default: str = AGENT) -> ProviderError:
    """The ProviderError for an exception raised inside an in-process agent or callable.

    ``where`` opens the message (``"callable pkg:fn raised"``). The network and OS family
    is never the agent's own fault, found in the exception, what caused it (``raise ...
    from``) and the members of an exception group, by the names of its classes along the
    MRO and by the status it carries: timeouts, connection errors and cut replies
    (:data:`_NETWORK_WORDS`, HTTP libraries' transport errors) are ``transient``; an
    exception that carries an HTTP status (an SDK's status error, websockets' ``InvalidStatus``:
    ``status_code``, ``status``, ``response.status_code`` or an integer ``code``) is classified
    by its status (:func:`classify_status`); a gRPC error by its status code; a protocol never
    spoken (:data:`_GATEWAY_WORDS`) and any other ``OSError`` are ``infrastructure``.
    Everything else is ``default`` (``agent``: the agent's own code raised).

    Classifying never raises: it imports nothing and reads no module, and an exception whose
    attributes or text raise when read is classified by what can be read. Should the
    classification itself fail, the error is ``infrastructure`` (nobody's answer, never
    the candidate's), saying so.
    """
    if isinstance(exc, ProviderError):
        return exc
    msg = f"{where} {describe(exc)}"
    try:
        for cur in _causes(exc):
            found = _outage(cur)
            if found is not None:
                return found.with_message(msg)
    except Exception as bug:  # noqa: BLE001 - a classifier bug must not stop the run
        why = f"its kind could not be told ({type(bug).__name__}); counted as nobody's answer"
        return ProviderError(f"{msg} [{why}]", kind=INFRASTRUCTURE)
    return ProviderError(msg, kind=default)


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``, what caused it, and the members of exception groups among them (each once, outermost first)."""
    out: list[BaseException] = []
    todo = [exc]
    while todo and len(out) < 50:
        for cur in _chain(todo.pop(0)):
            if all(cur is not seen for seen in out):
                out.append(cur)
                members = _attr(cur, "exceptions")  # an ExceptionGroup's members
                todo.extend(
                    m for m in (members if isinstance(members, list | tuple) else ()) if isinstance(m, BaseException)
                )
    return out


_STATUS_FAMILY = ("statuserror", "apierror", "httperror", "clienterror", "servererror", "responseerror", "sdkerror")


def _outage(exc: BaseException) -> ProviderError | None:
    """The ProviderError when ``exc`` itself is an outage (see :func:`exception_error`), else None."""
    names = _names(exc)
    low = [n.lower() for n in names if n.lower() not in _PLAIN]
    if "TransportError" in names and any(c.__module__.startswith("httpx") for c in type(exc).__mro__):
        return transport_error(exc, "the agent's endpoint")  # type: ignore[arg-type]  # httpx's, by name
    if any(n.endswith(_STATUS_FAMILY) or "status" in n for n in low):
        status = _status_of(exc)
        if status is not None:
            return classify_status(status, describe(exc).encode(), "the agent's endpoint")
    if any(n.endswith("rpcerror") for n in low) and (grpc := _grpc_kind(exc)) is not None:
        return ProviderError(describe(exc), kind=grpc)
    if isinstance(exc, TimeoutError | ConnectionError) or any(w in n for n in low for w in _NETWORK_WORDS):
        return ProviderError(describe(exc), kind=TRANSIENT)
    if any(w in n for n in low for w in _GATEWAY_WORDS) or isinstance(exc, OSError):
        return ProviderError(describe(exc), kind=INFRASTRUCTURE)
    return None


__all__ = [
    "TRANSIENT_STATUSES",
    "classify_status",
    "describe",
    "error_text",
    "exception_error",
    "is_json_body",
    "parse_retry_after",
    "refusal",
    "reply_error",
    "transport_error",
]

publish(globals())
