"""What every importer shares: the imported sample and run, verdict rules, error kinds, file readers.

A format module reads one result file of another harness into :class:`Imported`
(the tool's identifiers plus one :class:`Sample` per row x repeat);
:mod:`goldenkit.harnesses._runfolder` turns it into an ordinary goldenkit run folder.

Error kinds (:data:`goldenkit.schema.ERROR_KINDS`): an imported ERROR is what its tool
says it was, and each format module states its mapping. A tool that says the model
refused the request (a content filter, a context length the request exceeded) gives
``refused``; a metric or judge that failed to grade gives ``grader``; anything else a
tool leaves unexplained (a provider outage, an exception the file does not attribute)
is ``infrastructure``: never the candidate's fault unless the file says so.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from goldenkit._scrub import scrub
from goldenkit.errors import InputError
from goldenkit.schema import FAIL, INFRASTRUCTURE, PASS, REFUSED


@dataclass
class Sample:
    """One row x repeat of the imported run. ``repeat`` is 0-based, as goldenkit counts."""

    row_id: str
    repeat: int
    input: Any
    verdict: str
    where: str
    score: float | None = None
    reason: str | None = None
    detail: str | None = None
    error_kind: str | None = None
    response: str | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    started_at: str | None = None
    graders: dict[str, dict[str, Any]] | None = None  # the graders cell, where the tool grades with several
    case: dict[str, Any] | None = None  # the row as a contract case, for a regrade


@dataclass
class Imported:
    """One run read from another harness's result file (before it is written)."""

    format: str
    file: Path
    task: str
    samples: list[Sample]
    grader: str
    grader_version: str
    repeats: int = 1
    expected_rows: int | None = None
    model_id: str | None = None
    prompt_sha256: str | None = None
    judge_version: str | None = None
    task_version: str | None = None
    identifiers: dict[str, Any] = field(default_factory=dict)
    not_finished: str | None = None
    suffix: str | None = None
    graders: dict[str, str] | None = None  # the run key's graders, where the tool grades with several
    notes: list[str] = field(default_factory=list)  # what the import kept that a reader should know


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the same text for the same value in any tool."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def short_hash(value: Any, n: int = 16) -> str:
    """The first ``n`` hex digits of the SHA-256 of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:n]


def grader_version(fmt: str, threshold: float | None) -> str:
    """The grader version recorded for an import: the format, and the threshold when one decided."""
    return fmt if threshold is None else f"{fmt} threshold {threshold:g}"


def _number_verdict(value: float, threshold: float | None, where: str, name: str) -> tuple[str, float]:
    if math.isnan(value):
        raise InputError(f"{where}: {name} score is NaN, neither pass/fail nor a number")
    if threshold is not None:
        return (PASS if value >= threshold else FAIL), value
    if value in (0.0, 1.0):
        return (PASS if value == 1.0 else FAIL), value
    raise InputError(f"{where}: {name} score {value!r} is not 0/1; pass --threshold X (PASS when score >= X)")


_WORDS = {"c": True, "correct": True, "true": True, "yes": True, "i": False, "incorrect": False}
_WORDS.update({"false": False, "no": False, "n": False})


def verdict_of(value: Any, threshold: float | None, where: str, name: str) -> tuple[str, float | None]:
    """PASS or FAIL (and the score as a number) from a tool's score value.

    Booleans; inspect's ``C``/``I`` (correct / incorrect; ``N``, no answer, is a FAIL;
    ``P``, partial, counts 0.5 and needs a threshold), ``true``/``false``/``yes``/``no``;
    0/1; any other number needs ``threshold`` (PASS when ``score >= threshold``).
    Anything else is an :class:`InputError` naming ``where``.

    >>> verdict_of("C", None, "f", "match"), verdict_of(0.7, 0.5, "f", "acc")
    (('PASS', 1.0), ('PASS', 0.7))
    """
    if isinstance(value, bool):
        return (PASS if value else FAIL), float(value)
    if isinstance(value, (int, float)):
        return _number_verdict(float(value), threshold, where, name)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _WORDS:
            return (PASS if _WORDS[word] else FAIL), (1.0 if _WORDS[word] else 0.0)
        if word == "p":
            return _number_verdict(0.5, threshold, where, name)
        try:
            number = float(word)
        except ValueError:
            pass
        else:
            return _number_verdict(number, threshold, where, name)
    shown = scrub(canonical_json(value))  # masked before it is cut
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise InputError(f"{where}: {name} score {shown} is neither pass/fail nor a number")


#: What a tool's error message says when the model refused the request itself (context length, content filter).
_REFUSAL_MARKERS = (
    "context_length_exceeded",
    "context length",
    "maximum context",
    "context window",
    "content_filter",
    "content filter",
    "content policy",
    "content management policy",
)


def error_kind_of(message: Any = None, *, refused: bool = False) -> str:
    """The kind of an imported ERROR: ``refused`` when the tool says the model refused the request
    (``refused``, or a message naming a context length or a content filter), else ``infrastructure``.

    >>> error_kind_of("RateLimitError: 429"), error_kind_of("400: context_length_exceeded")
    ('infrastructure', 'refused')
    """
    text = str(message or "").lower()
    if refused or any(marker in text for marker in _REFUSAL_MARKERS):
        return REFUSED
    return INFRASTRUCTURE


#: The kinds :func:`typed` checks, the Python types of each (a bool is never a number), and how a message says it.
_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "object": ((dict,), "an object"),
    "list": ((list,), "a list"),
    "text": ((str,), "a string"),
    "number": ((int, float), "a number"),
    "integer": ((int,), "an integer"),
    "scalar": ((str, int, float, bool), "a string, number or boolean"),
}


def _json_type(value: Any) -> str:
    """How a message names the JSON type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return names.get(type(value), type(value).__name__)


def typed(obj: Any, key: str | int, kind: str, where: str, *, field: str | None = None, default: Any = None) -> Any:
    """``obj[key]`` when it is of ``kind`` (``object``, ``list``, ``text``, ``number``, ``integer``, ``scalar``);
    ``default`` when ``obj`` has no such key or holds null there; else an InputError naming ``where`` (the
    file, and the line or sample) and the field (``field``, the path as the file spells it; default ``key``).

    Every importer reads the fields of another tool's file through this accessor, so a file of the
    right shape with a field of the wrong type is one line naming the file and the field, never a
    traceback. An ``obj`` that is not an object (or, for an integer ``key``, a list) has no fields.

    >>> typed({"scores": [1]}, "scores", "list", "log.json sample 3")
    [1]
    >>> typed({"scores": 7}, "scores", "list", "log.json sample 3", field="samples[2].scores")
    Traceback (most recent call last):
    ...
    goldenkit.errors.InputError: log.json sample 3: field samples[2].scores must be a list, got a number (7)
    """
    if isinstance(key, int):
        value = obj[key] if isinstance(obj, list) and -len(obj) <= key < len(obj) else None
    else:
        value = obj.get(key) if isinstance(obj, dict) else None
    if value is None:
        return default
    types, says = _KINDS[kind]
    if isinstance(value, types) and not (isinstance(value, bool) and kind in ("number", "integer")):
        return value
    shown = scrub(canonical_json(value))  # masked before it is cut
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    raise InputError(f"{where}: field {field or key} must be {says}, got {_json_type(value)} ({shown})")


def pick(name: str | None, present: Sequence[str], what: str, where: str, option: str) -> str:
    """The ``name`` asked for (default: the only or first one present); an unknown name lists those present."""
    if not present:
        raise InputError(f"{where}: no {what} in the file")
    if name is None:
        return present[0]
    if name not in present:
        raise InputError(f"{where}: unknown {what} {name!r} ({option}); present: {', '.join(present)}")
    return name


def read_json(path: Path, what: str) -> Any:
    """A JSON file's value; unreadable or truncated JSON is an InputError naming the file."""
    try:
        return json.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable {what} (invalid or truncated JSON: {exc})") from None


def read_json_lines(path: Path, what: str) -> list[tuple[int, dict[str, Any]]]:
    """A JSONL file's objects with their 1-based line numbers (blank lines skipped); unreadable
    or truncated JSON, or a line that is not an object, is an InputError naming file and line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    out = []
    for i, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{path}:{i}: invalid or truncated JSON line ({exc})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{i}: not a JSON object; not {what}")
        out.append((i, obj))
    return out


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
