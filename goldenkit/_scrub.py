"""The one secret scrubber: what goldenkit masks with ``***``, and where.

Two rules, one per kind of text. **Data of record** (what was graded) is stored
exactly as received except for the secret values in use (:func:`mask_secrets`);
**text for people** (what is printed or rendered, and every error excerpt) also
loses anything shaped like a credential (:func:`scrub`):

=================================================  ===============  ========================================
where                                              kind             masked
=================================================  ===============  ========================================
an outcome's ``response`` (the answer)             data of record   secret values in use
tool calls, their arguments, tool results          data of record   secret values in use
the ``trajectory``; graders' reasons and findings  data of record   secret values in use
recorded fixtures (answers, meta.json)             data of record   secret values in use
run.json (its settings also by key)                data of record   secret values in use
outcomes.parquet                                   its outcomes     as in outcomes.jsonl
``detail``; the reason of a grader in ``error``    text for people  in use, URL credentials, shapes
a recorded error's ``message``                     text for people  in use, URL credentials, shapes
run.json's ``invalid_reason`` and ``crash``        text for people  in use, URL credentials, shapes
every error excerpt (scrubbed, then cut)           text for people  in use, URL credentials, shapes
stdout, stderr, HTML, pages, notebooks             text for people  in use, URL credentials, shapes
=================================================  ===============  ========================================

So an answer "The factory default password: admin1234" or a tool argument
``{"session_token": "S-99887766"}`` is graded, stored, replayed from fixtures
and regraded as it was received, and shown masked on a screen or a page.

1. **The secret values in use** (both rules). A scope (:func:`secrets_in_use`,
   a context manager) holds the values goldenkit read: the API key an
   ``api_key_env`` names, a URL's or ``OLLAMA_PASSWORD``'s password, every secret
   header value (:func:`header_secrets`). A run opens one for its duration with
   its provider's, its judges' and its simulator's secrets; the CLI opens one for
   the whole command, and a scope opened inside another adds its values to the
   outer one (so what the CLI prints after a run still knows the run's keys). A
   provider that reads a key while a scope is open notes it there
   (:func:`note_secrets`). The scope is a :class:`contextvars.ContextVar`: no
   process-wide state changes, two runs in one process keep their own, and
   outside every scope nothing is known. Each value is also masked in its
   JSON-escaped and URL-encoded spellings. Values shorter than
   :data:`MIN_SECRET` are not registered (masking them would mask ordinary
   words). Only whole values are masked: an excerpt is scrubbed before it is
   cut, so no cut key is left to find by its first characters.
2. **URL userinfo and secret query parameters** (text for people:
   ``https://u:pw@host/?api_key=...``, :func:`redact_text`).
3. **Credential shapes** (text for people): ``Bearer <token>``; the key formats
   of the common providers (``sk-...``, ``AIza...``, ``ghp_...``,
   ``github_pat_...``, ``hf_...``); and ``NAME=VALUE`` / ``NAME: VALUE`` (quoted or
   not, as in a header, a query string or JSON) where NAME is a secret key
   (:func:`is_secret_key`: ``api_key``, ``Authorization``, ``X-Api-Key``,
   ``access_token``, ``password``, ...; a name of ``key``, ``keys``, ``sig``,
   ``signature`` or ``auth`` alone is too ambiguous outside a URL, and a name
   whose triggering word is not among ``key``, ``token``, ``secret``, ``pass``,
   ``auth``, ``bearer`` is left to the URL rule) and VALUE looks like a
   credential (8 or more token characters, a digit among them). Every shape
   needs a digit, which keeps ordinary prose and code out.

Speed: a string without any trigger (``://``, a secret word, a key prefix)
costs a lowercase copy and a few substring searches, about 5 microseconds a
kilobyte; Python's regular expressions run only where a trigger was found.

Settings (:func:`redact_settings`, recorded in run.json and hashed into the
agent version) are redacted by key, deterministically, whatever the scope holds:
a key is secret when its last word, after normalizing its spelling (case,
``-``/``_``, camelCase), is one of :data:`SECRET_WORDS`; string values keep their
text but lose URL userinfo and the values of secret-looking query parameters.

>>> redact_settings({"X-Api-Key": "k", "accessToken": "t", "max_tokens": 5, "api_key_env": "OPENAI_API_KEY"})
{'X-Api-Key': '***', 'accessToken': '***', 'max_tokens': 5, 'api_key_env': 'OPENAI_API_KEY'}
>>> redact_settings({"base_url": "https://u:pw@host/v1?api-key=abc&x=1"})
{'base_url': 'https://***@host/v1?api-key=***&x=1'}
>>> with secrets_in_use("k-3f9a7c21e8"):
...     scrub("HTTP 401: bad key k-3f9a7c21e8; Authorization: Bearer abc123def456")
'HTTP 401: bad key ***; Authorization: Bearer ***'
>>> with secrets_in_use("k-3f9a7c21e8"):
...     mask_secrets("answer: k-3f9a7c21e8; Authorization: Bearer abc123def456")
'answer: ***; Authorization: Bearer abc123def456'
>>> scrub("k-3f9a7c21e8 is not known outside the scope; api_key=zz81aa92bb")
'k-3f9a7c21e8 is not known outside the scope; api_key=***'
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from goldenkit._registry import publish

MASK = "***"
#: Shorter values are not registered as secrets.
MIN_SECRET = 6
#: The last word of a secret key, spelling normalized (``X-Api-Key`` -> ``x api key`` -> ``key``).
SECRET_WORDS = frozenset(
    {
        "apikey",
        "key",
        "keys",
        "token",
        "accesstoken",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "authorization",
        "auth",
        "bearer",
        "credential",
        "credentials",
        "cookie",
        "signature",
        "sig",
    }
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# A URL is `[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+` (leftmost, as re.sub finds it), found from each "://"
# (redact_text): the regular expression run over a page tried every letter of every CSS name and
# took 0.45 s on a 260 KB page; found from the separators it is linear (about 1 ms).
_SCHEME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_REST = re.compile(r"[^\s\"'<>]+")


def key_words(key: str) -> list[str]:
    """A setting name as lowercase words: ``"X-Api-Key"`` and ``"xApiKey"`` -> ``["x", "api", "key"]``."""
    return [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", key).lower()) if w]


def is_secret_key(key: str) -> bool:
    """Whether a setting called ``key`` holds a secret (see the module doc)."""
    words = key_words(key)
    return bool(words) and words[-1] in SECRET_WORDS


def _redact_url(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_key(k) for k, _ in pairs):
            query = "&".join(f"{k}=***" if is_secret_key(k) else f"{k}={v}" for k, v in pairs)
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # nothing to mask: the text as it was (urlsplit would lowercase its scheme)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_text(text: str) -> str:
    """``text`` with URL userinfo and secret query-parameter values replaced by ``***``."""
    parts: list[str] = []
    done = 0  # the end of the last URL: where the next one may start
    sep = text.find("://")
    while sep != -1:
        start = sep
        while start > done and text[start - 1] in _SCHEME:
            start -= 1
        while start < sep and not text[start].isalpha():  # a scheme starts with a letter
            start += 1
        rest = _URL_REST.match(text, sep + 3)
        if start == sep or rest is None:
            sep = text.find("://", sep + 1)
            continue
        parts += [text[done:start], _redact_url(text[start : rest.end()])]
        done = rest.end()
        sep = text.find("://", done)
    return "".join(parts) + text[done:] if parts else text


def redact_settings(value: Any) -> Any:
    """Settings with every secret key's value replaced by ``"***"`` and URLs in strings scrubbed (recursively)."""
    if isinstance(value, Mapping):
        return {
            str(k): ("***" if is_secret_key(str(k)) and v not in (None, "") else redact_settings(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_settings(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


# ------------------------------------------------------------------ the secret values in use


_PERCENT = re.compile(r"%[0-9A-F]{2}")


def _spellings(value: str) -> set[str]:
    """``value`` as written raw, JSON-escaped (``/`` as ``\\/`` too, non-ASCII as ``\\u`` escapes too) and
    URL-encoded (``/`` kept or not, a space as ``+`` or ``%20``, hex digits in either case); each of them
    also as it reads inside a JSON string (outcome lines are masked whole)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped)
    json_forms = {escaped, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    json_forms |= {j.replace("/", "\\/") for j in json_forms}
    url_forms = {quote(value, safe=""), quote(value, safe="/"), quote_plus(value, safe=""), quote_plus(value, safe="/")}
    url_forms |= {_PERCENT.sub(lambda m: m.group(0).lower(), u) for u in url_forms}
    forms = {value} | json_forms | url_forms
    return forms | {json.dumps(f, ensure_ascii=a)[1:-1] for f in forms for a in (True, False)}  # inside a JSON line


class SecretScope:
    """The secret values known while a scope is open (see :func:`secrets_in_use`).

    ``values``: every spelling, longest first. Thread-safe: a value is added under a
    lock and the tuple is swapped whole.
    """

    def __init__(self) -> None:
        self.values: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def add(self, values: Iterable[str | None]) -> None:
        """Register ``values`` (None, empty and short values are ignored)."""
        new = {s for v in values if v and len(v) >= MIN_SECRET for s in _spellings(v)}
        with self._lock:
            if new <= set(self.values):
                return
            every = sorted(new | set(self.values), key=lambda s: (-len(s), s))
            self.values = tuple(every)


_SCOPE: contextvars.ContextVar[SecretScope | None] = contextvars.ContextVar("goldenkit_secrets", default=None)


@contextmanager
def secrets_in_use(*values: str | None) -> Iterator[SecretScope]:
    """Mask ``values`` in everything written until the block ends (see the module doc).

    Inside an open scope the values join it, and stay until that outer scope ends.
    """
    outer = _SCOPE.get()
    if outer is not None:
        outer.add(values)
        yield outer
        return
    scope = SecretScope()
    scope.add(values)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def note_secrets(*values: str | None) -> None:
    """Add ``values`` to the open scope, if any (a provider reading its key calls this); else nothing."""
    scope = _SCOPE.get()
    if scope is not None:
        scope.add(values)


def current_scope() -> SecretScope | None:
    """The open scope (None outside every scope)."""
    return _SCOPE.get()


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The secret parts of request headers: each secret header's value, its token without the
    scheme (``Bearer``), and a Basic credential's ``user:password`` and password."""
    found: list[str] = []
    for name, value in headers.items():
        if not is_secret_key(name) or not value:
            continue
        found.append(value)
        scheme, _, token = value.partition(" ")
        if not token:
            continue
        found.append(token.strip())
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                continue
            found += [pair, pair.partition(":")[2]]
    return found


# ------------------------------------------------------------------ shapes

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_AFTER_NAME = re.compile(  # from inside a name: its rest, = or : (quoted or JSON-escaped), a scheme, the value
    r"""[A-Za-z0-9_.-]*((?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)"""
    r"((?:[Bb]earer|[Bb]asic|[Tt]oken)[ \t]+)?([A-Za-z0-9._~+/=!@#$%^-]{8,})"
)
_BEARER = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+([A-Za-z0-9._~+/-]{8,}=*)")
# the key formats of common providers (lowercase trigger -> the key, matched where the trigger starts)
PREFIXED_KEY = re.compile(
    r"sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|hf_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}"
)
# Each trigger is one substring search of the lowercase text (about 0.6 us a kilobyte): the names of
# the key-value shape (a name ending in pwd, cookie, sig or credentials is masked in URLs, not here),
# then the key formats.
_KEY_TRIGGERS = ("key", "token", "secret", "pass", "auth", "bearer")
_PREFIX_TRIGGERS = ("sk-", "aiza", "gh", "hf_", "gsk_", "xai-")
_B64ISH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=_-")


def _has_digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


# names too ambiguous alone for the key-value shape ("primary key: ...", a dataset called "keys" in
# a JSON map); in a URL's query string they still are secret (redact_text)
_AMBIGUOUS_NAMES = frozenset({"key", "keys", "sig", "signature", "auth"})


def _names_a_secret(name: str) -> bool:
    words = key_words(name)
    return bool(words) and words[-1] in SECRET_WORDS and not (len(words) == 1 and words[0] in _AMBIGUOUS_NAMES)


def _key_value_spans(text: str, low: str, word: str, seen: set[int], spans: list[tuple[int, int]]) -> None:
    """Add the span of each secret value after a name holding ``word`` (and of each Bearer token)."""
    i = low.find(word)
    while i >= 0:
        if word == "bearer":
            m = _BEARER.match(text, i)
            if m is not None and _has_digit(m.group(1)):
                spans.append(m.span(1))
        m = _AFTER_NAME.match(text, i)  # most names are not followed by a credential: ends here
        if m is not None and m.start(1) not in seen and _has_digit(m.group(3)):
            end = m.start(1)
            seen.add(end)
            start = i
            while start > 0 and text[start - 1] in _NAME_CHARS:
                start -= 1
            if _names_a_secret(text[start:end]):
                spans.append(m.span(3))
        i = low.find(word, i + len(word))


def _shape_spans(text: str, low: str) -> list[tuple[int, int]]:
    """The spans of every credential shape of ``text`` (``low``: its lowercase copy)."""
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()
    for word in _KEY_TRIGGERS:
        if word in low:
            _key_value_spans(text, low, word, seen, spans)
    for trigger in _PREFIX_TRIGGERS:
        i = low.find(trigger)
        while i >= 0:
            # else inside a longer token (a base64 image, an id); after "=" it is a value (key=sk-...), after
            # "/" a path segment (/v1/keys/sk-...), after "%3D" an encoded "=" (token%3Dsk-...)
            if (
                i == 0
                or text[i - 1] not in _B64ISH
                or text[i - 1] == "="
                or low[max(0, i - 3) : i] == "%3d"
                or (
                    text[i - 1] == "/" and "base64," not in low[low.rfind(" ", 0, i) + 1 : i]  # not in a data URI
                )
            ):
                m = PREFIXED_KEY.match(text, i)
                if m is not None and _has_digit(m.group(0)):
                    spans.append(m.span())
            i = low.find(trigger, i + len(trigger))
    return spans


def _apply(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for start, end in sorted(spans):
        if start < pos:  # overlaps the span masked last: the mask covers both
            pos = max(pos, end)
            continue
        out += [text[pos:start], MASK]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def mask_secrets(text: str, scope: SecretScope | None = None) -> str:
    """``text`` with the secret values in use masked, in every spelling, and nothing else: the rule for
    data of record (see the module doc); the same object when nothing was masked.

    ``scope``: the secrets to mask (default: the open scope's, if any; outside every scope, none).
    """
    scope = scope if scope is not None else _SCOPE.get()
    if not text or scope is None:
        return text
    out = text
    for value in scope.values:
        if value in out:
            out = out.replace(value, MASK)
    return out


def scrub(text: str, scope: SecretScope | None = None) -> str:
    """``text`` with every secret masked (the secret values in use, URL credentials, credential shapes):
    the rule for text for people (see the module doc); the same object when nothing was masked.

    ``scope``: the secrets to mask (default: the open scope's, if any).
    """
    if not text:
        return text
    out = mask_secrets(text, scope)
    if "://" in out:
        out = redact_text(out)
    low = out.lower()
    if len(low) != len(out):  # a character whose lowercase is longer: search an ASCII-lowered copy
        low = "".join(c.lower() if c.isascii() else "?" for c in out)
    spans = _shape_spans(out, low)
    if spans:
        out = _apply(out, spans)
    return text if out == text else out


def _each_string(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, Mapping):
        return {k: _each_string(v, clean) for k, v in value.items()}
    if isinstance(value, list):
        return [_each_string(v, clean) for v in value]
    if isinstance(value, tuple):
        return tuple(_each_string(v, clean) for v in value)
    return value


def scrub_value(value: Any, scope: SecretScope | None = None) -> Any:
    """Every string inside ``value`` (dicts, lists and tuples, each kept as it is) :func:`scrub`-bed;
    the rest unchanged."""
    return _each_string(value, lambda text: scrub(text, scope))


def mask_secrets_value(value: Any, scope: SecretScope | None = None) -> Any:
    """Every string inside ``value`` (dicts, lists and tuples, each kept as it is) with the secret values
    in use masked (:func:`mask_secrets`); the rest unchanged. The same object when no secret is known."""
    scope = scope if scope is not None else _SCOPE.get()
    if scope is None or not scope.values:
        return value
    return _each_string(value, lambda text: mask_secrets(text, scope))


__all__ = [
    "MASK",
    "MIN_SECRET",
    "PREFIXED_KEY",
    "SECRET_WORDS",
    "SecretScope",
    "current_scope",
    "header_secrets",
    "is_secret_key",
    "key_words",
    "mask_secrets",
    "mask_secrets_value",
    "note_secrets",
    "redact_settings",
    "redact_text",
    "scrub",
    "scrub_value",
    "secrets_in_use",
]

publish(globals(), "goldenkit.runner")
