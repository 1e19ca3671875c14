"""outcomes.jsonl: the crash-safe writer of outcome lines, its repair after a kill, its reader.

Lines are written with ``os.write()`` on an unbuffered file descriptor
(:class:`OutcomeWriter`), each as :func:`stored_outcome` makes it (the data of
record as received, the secret values in use masked; the text for people
scrubbed: :mod:`goldenkit._scrub`); a torn last line left by a kill is cut by
:func:`repair_jsonl` and skipped by the reader. The last record per
(row_id, repeat) wins (:func:`latest_per_pair`).

One reader, one rule: every reader of an outcome line goes through
:func:`loads_line` (a line) and :func:`scan_jsonl` (a file; :func:`iter_jsonl`
is its records alone).

* A line is strict JSON (RFC 8259) in UTF-8: ``NaN``, ``Infinity``, ``-Infinity``
  and numbers beyond a double's range are refused, as any other text that is not
  JSON; integers are read exactly. The writer never writes those (a float NaN is
  written as ``null``), so a line holding one was not written by it.
* A line that is not a JSON object, or not JSON, is a :class:`ResultsError` of one
  line naming ``file:line``, except the unterminated last line (no ``\\n``) a
  killed writer leaves: that one is skipped (and :func:`repair_jsonl` cuts it).
* Blank lines are skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets, scrub
from goldenkit.errors import ResultsError


def repair_jsonl(path: str | Path) -> int:
    """Cut a torn last line (no trailing newline, or not valid JSON) off ``path``.

    Returns the number of bytes removed. Complete lines are never touched: a line
    is complete when it ends with ``\\n``; an unterminated last line that still
    parses as a JSON object is kept and terminated.
    """
    p = Path(path)
    if not p.exists():
        return 0
    size = p.stat().st_size
    if size == 0:
        return 0
    with p.open("rb+") as fh:
        # Find the last newline by reading backwards in blocks.
        pos = size
        block = 1 << 16
        last_nl = -1
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                last_nl = start + idx
                break
            pos = start
        if last_nl == size - 1:
            return 0
        fh.seek(last_nl + 1)
        tail = fh.read()
        try:
            obj = loads_line(tail)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            fh.seek(size)
            fh.write(b"\n")
            return 0
        fh.truncate(last_nl + 1)
        return size - (last_nl + 1)


def _stored_grades(graders: dict[str, Any]) -> dict[str, Any]:
    out = dict(graders)
    for name, result in graders.items():
        if isinstance(result, dict) and result.get("error") and isinstance(result.get("reason"), str):
            out[name] = {**result, "reason": scrub(result["reason"])}  # why the grader could not run
    return out


def stored_outcome(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its text for people scrubbed (:func:`goldenkit._scrub.scrub`): the ``detail`` and
    the reason of each grader that could not run (an error excerpt). The rest (the answer, the
    trajectory with its tool calls and arguments, the graders' reasons and findings) is data of
    record, stored as received; the writers mask the secret values in use in the whole line
    (:func:`goldenkit._scrub.mask_secrets`). A new dict when anything changed, else ``record``."""
    detail, graders = record.get("detail"), record.get("graders")
    clean_detail = scrub(detail) if isinstance(detail, str) else detail
    out = record if clean_detail is detail else {**record, "detail": clean_detail}
    if isinstance(graders, dict) and any(isinstance(g, dict) and g.get("error") for g in graders.values()):
        out = {**out, "graders": _stored_grades(graders)}
    return out


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_ORJSON_LINE = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


#: Coalesced lines waiting at most before they are written (see :class:`OutcomeWriter`).
MAX_PENDING_LINES = 256


class OutcomeWriter:
    """Append outcome records to ``outcomes.jsonl``, one line each, written straight to the OS.

    The file is opened unbuffered (``os.open`` with ``O_APPEND``) and lines go out
    with ``os.write``, so nothing sits in a user-space buffer that a SIGKILL could
    lose once the write is made. Opening repairs a torn last line first (see
    :func:`repair_jsonl`).

    ``coalesce=False``: each record is one ``os.write`` of its whole line, at once.
    ``coalesce=True`` (the runner; needs a running event loop): the lines of the
    records written during one pass of the event loop go out together in one
    ``os.write`` at the start of the next pass, before the loop waits for anything
    again. On two cores the write system call costs about as much as the rest of
    writing an outcome, and at hundreds of outcomes per second many complete in one
    pass. A kill can lose only outcomes of the current pass, which a resume calls
    again. A failed write is raised by the next :meth:`write` or by :meth:`close`.
    A pass's lines also go out as soon as :data:`MAX_PENDING_LINES` are waiting:
    an in-process agent that answers without ever awaiting completes a whole
    run in one pass, which would otherwise hold every line in memory until the end.
    """

    def __init__(self, path: str | Path, *, coalesce: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_jsonl(self.path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC, 0o644)
        self._coalesce = coalesce
        self._size = os.fstat(self._fd).st_size  # where the next line lands (this is the file's one writer)
        self._pending: list[bytes] = []
        self._scheduled = False
        self._error: OSError | None = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def write(self, record: dict[str, Any]) -> tuple[int, int]:
        """Append ``record`` as one UTF-8 JSON line as :func:`stored_outcome` makes it, the secret values in
        use masked (see the class for when it reaches the file).

        Returns ``(offset, length)`` of the line in the file (newline included), so
        a caller can read the record back later instead of keeping it in memory.
        """
        if self._fd is None:
            raise ValueError(f"{self.path}: outcome writer is closed")
        if self._error is not None:
            raise self._error
        line = orjson.dumps(stored_outcome(record), default=str, option=_ORJSON_LINE)
        text = line.decode("utf-8")
        clean = mask_secrets(text)  # the whole line, in its JSON spelling: nothing shape-based
        if clean is not text:
            line = clean.encode("utf-8")
        span = (self._size, len(line))
        self._size += len(line)
        if not self._coalesce:
            self._write_all(line)
            return span
        self._pending.append(line)
        if len(self._pending) >= MAX_PENDING_LINES:  # a pass that never ends (an agent that never awaits)
            self.end_pass()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._end_of_pass)
        return span

    def _end_of_pass(self) -> None:
        self._scheduled = False
        self.end_pass()

    def end_pass(self) -> None:
        """Write the pending lines now (a caller that knows the pass's outcomes are all in);
        a failure is kept and raised by the next :meth:`write` or by :meth:`close`."""
        try:
            self.flush()
        except OSError as exc:  # disk full, I/O error: the run hears of it at its next write
            self._error = exc

    def flush(self) -> None:
        """Write the pending lines now."""
        if self._pending and self._fd is not None:
            data = b"".join(self._pending)
            self._pending.clear()
            self._write_all(data)

    def _write_all(self, data: bytes) -> None:
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.path}: outcome writer is closed")
        written = os.write(fd, data)
        while written < len(data):  # a short write (disk full, signal): finish the lines
            written += os.write(fd, data[written:])

    def close(self) -> None:
        """Write what is pending and close; raises the write error, if any, after closing."""
        fd = self._fd
        if fd is None:
            return
        try:
            if self._error is None:
                self.flush()
        except OSError as exc:
            self._error = exc
        finally:
            self._fd = None
            self._pending.clear()
            os.close(fd)
        if self._error is not None:
            raise self._error

    def __enter__(self) -> OutcomeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# orjson reads an outcome line in about 2 us, json in 11 us: a resume and the end of a run read every line
# (18 s more for 2,000,000 outcomes with json alone). orjson reads an integer beyond 64 bits as a float, so a
# line with a run of 19 digits or more (found in 1 us: every digit mapped to "0", the rest to " ") goes to json,
# which reads it exactly; both refuse what the rule refuses.
_DIGITS_ONLY = bytes(ord("0") if ord("0") <= i <= ord("9") else ord(" ") for i in range(256))
_LONG_NUMBER = b"0" * 19


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is beyond a double's range")
    return value


def loads_line(raw: bytes | str) -> Any:
    """The JSON value of one line, by the one rule (a :class:`ValueError` when the line breaks it).

    Strict JSON (RFC 8259) in UTF-8: ``NaN``, ``Infinity``, ``-Infinity`` and numbers beyond a
    double's range are refused; integers are read exactly, whatever their size.
    """
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    if _LONG_NUMBER not in data.translate(_DIGITS_ONLY):
        return orjson.loads(data)
    return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite)


class OutcomeLine(NamedTuple):
    """One line of a JSONL file: its object, its 1-based number, and where it is (newline included)."""

    record: dict[str, Any]
    number: int
    offset: int
    length: int


def scan_jsonl(path: str | Path) -> Iterator[OutcomeLine]:
    """Every JSON object of a JSONL file with where it is, in file order; one line is in memory at a time.

    The rule of the module docstring: a torn (unterminated) last line is skipped;
    any other line that is not a JSON object is a :class:`ResultsError` naming ``file:line``.
    """
    p = Path(path)
    offset = 0
    with p.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            length = len(raw)
            if raw.strip():
                try:
                    obj = loads_line(raw)
                except ValueError:
                    if not raw.endswith(b"\n"):  # torn (unterminated) last line of a killed writer
                        return
                    raise ResultsError(f"{p}:{number}: invalid JSON in outcome line") from None
                if not isinstance(obj, dict):
                    raise ResultsError(f"{p}:{number}: outcome line is not a JSON object")
                yield OutcomeLine(obj, number, offset, length)
            offset += length


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file (:func:`scan_jsonl`'s records): a torn last line is skipped.

    A malformed line anywhere else is a :class:`ResultsError` naming ``file:line``.
    """
    for line in scan_jsonl(path):
        yield line.record


def latest_per_pair(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last record per (row_id, repeat), in first-seen order of the pairs."""
    by_pair: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        by_pair[(str(rec.get("row_id")), int(rec.get("repeat") or 0))] = rec
    return list(by_pair.values())


__all__ = [
    "MAX_PENDING_LINES",
    "OutcomeLine",
    "OutcomeWriter",
    "iter_jsonl",
    "latest_per_pair",
    "loads_line",
    "repair_jsonl",
    "scan_jsonl",
    "stored_outcome",
]

publish(globals())
