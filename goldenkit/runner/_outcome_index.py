"""Where each outcome of a run is, in a few bytes per row x repeat: memory flat in the size of the run.

A run does not keep its outcomes in memory. :class:`OutcomeIndex` numbers the
run's pairs (pair ``i`` is row ``i // repeats``, repeat ``i % repeats``, rows
in the order of the run) and keeps, per pair, the offset and length of its
last line in ``outcomes.jsonl`` and its verdict (13 bytes a pair: 26 MB for
2,000,000 outcomes). The last line written for a pair supersedes the earlier
ones, as everywhere (last record per pair wins). At the end the counts come
from the verdicts, and :meth:`OutcomeIndex.batches` reads the final outcomes
back from the file, in the order of the pairs and a batch at a time, for the
Parquet file (:func:`goldenkit.results.write_parquet_batches`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from goldenkit.errors import ResultsError
from goldenkit.results import loads_line
from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED, counts_against_candidate

#: The verdict codes of :attr:`OutcomeIndex.status` (0: no outcome yet).
CODES = {PASS: 1, FAIL: 2, ERROR: 3, SKIPPED: 4}
GRADER_ERROR = 0x10  # flag: not ERROR, but a grader could not grade
CANDIDATE_ERROR = 0x20  # flag: an ERROR that is the candidate's own (agent, refused): not the run's validity
_VERDICT_MASK = 0x0F


def has_grader_error(rec: Mapping[str, Any]) -> bool:
    """An outcome that is not ERROR but has a grader that could not grade (a soft judge whose call failed)."""
    if rec.get("verdict") == ERROR:
        return False
    return any((g or {}).get("error") for g in (rec.get("graders") or {}).values())


def is_candidate_error(rec: Mapping[str, Any]) -> bool:
    """An ERROR outcome the candidate's own answer caused (``agent``, ``refused``:
    :func:`goldenkit.schema.counts_against_candidate`): quality evidence against it, never an outage."""
    return rec.get("verdict") == ERROR and counts_against_candidate(rec.get("error_kind"))


class OutcomeIndex:
    """The pairs of a run and, per pair, where its last outcome line is and its verdict (see the module doc)."""

    def __init__(self, row_ids: list[str], repeats: int) -> None:
        self.row_ids = row_ids
        self.repeats = repeats
        self.position = {rid: i for i, rid in enumerate(row_ids)}
        n = len(row_ids) * repeats
        self.offset: npt.NDArray[np.int64] = np.full(n, -1, dtype=np.int64)
        self.length: npt.NDArray[np.int32] = np.zeros(n, dtype=np.int32)
        self.status: npt.NDArray[np.uint8] = np.zeros(n, dtype=np.uint8)

    def __len__(self) -> int:
        return len(self.offset)

    def pair(self, i: int) -> tuple[str, int]:
        """``(row_id, repeat)`` of pair ``i``."""
        return self.row_ids[i // self.repeats], i % self.repeats

    def index_of(self, row_id: str, repeat: int) -> int | None:
        """The number of the pair, or None when it is not in this run."""
        row = self.position.get(row_id)
        if row is None or not 0 <= repeat < self.repeats:
            return None
        return row * self.repeats + repeat

    def note(self, rec: Mapping[str, Any], offset: int, length: int) -> None:
        """Record that ``rec`` was written at ``offset`` (``length`` bytes); it supersedes the pair's earlier line."""
        i = self.index_of(str(rec.get("row_id")), int(rec.get("repeat") or 0))
        if i is None:
            return
        code = CODES.get(str(rec.get("verdict")), CODES[ERROR])
        self.offset[i], self.length[i] = offset, length
        flags = (GRADER_ERROR if has_grader_error(rec) else 0) | (CANDIDATE_ERROR if is_candidate_error(rec) else 0)
        self.status[i] = code | flags

    def pending(self, retry_errors: bool) -> npt.NDArray[np.int64]:
        """The pairs to call, in order: those with no outcome, and with ``retry_errors`` the ERROR ones."""
        verdict = self.status & _VERDICT_MASK
        todo = verdict == 0
        if retry_errors:
            todo |= verdict == CODES[ERROR]
        return np.flatnonzero(todo)

    def counts(self) -> dict[str, int]:
        """Verdict counts, ``total``, ``expected``, ``grader_errors`` and ``candidate_errors`` (as
        ``count_outcomes`` gives them)."""
        per_code = np.bincount(self.status & _VERDICT_MASK, minlength=len(CODES) + 1)
        counts = {v: int(per_code[c]) for v, c in CODES.items()}
        total = int(len(self) - per_code[0])
        grader_errors = int(np.count_nonzero(self.status & GRADER_ERROR))
        candidate_errors = int(np.count_nonzero(self.status & CANDIDATE_ERROR))
        counts.update(total=total, expected=len(self), grader_errors=grader_errors, candidate_errors=candidate_errors)
        return counts

    def first_error_detail(self, jsonl: Path) -> str | None:
        """The ``detail`` of the first ERROR outcome, in pair order (None without one)."""
        errors = np.flatnonzero((self.status & _VERDICT_MASK) == CODES[ERROR])
        if not len(errors):
            return None
        with _Reader(jsonl) as read:
            detail = read(int(errors[0]), self).get("detail")
        return None if detail is None else str(detail)

    def batches(self, jsonl: Path, size: int) -> Iterator[list[dict[str, Any]]]:
        """The last outcome of every pair that has one, read back from ``jsonl`` in pair order, ``size`` at a time."""
        done = np.flatnonzero(self.offset >= 0)
        with _Reader(jsonl) as read:
            for start in range(0, len(done), size):
                yield [read(int(i), self) for i in done[start : start + size]]


class _Reader:
    """Reads single outcome lines of a JSONL file by offset (``os.pread``), checking each is the pair expected."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> _Reader:
        self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def __call__(self, i: int, index: OutcomeIndex) -> dict[str, Any]:
        offset, length = int(index.offset[i]), int(index.length[i])
        data = os.pread(self.fd, length, offset)
        try:
            rec = loads_line(data)
        except ValueError:
            rec = None
        row_id, repeat = index.pair(i)
        if not isinstance(rec, dict) or rec.get("row_id") != row_id or int(rec.get("repeat") or 0) != repeat:
            raise ResultsError(
                f"{self.path}: the outcome of row {row_id!r} repeat {repeat} is no longer at byte {offset} "
                "(was the file changed while the run was writing it?)"
            )
        return rec


__all__ = ["CODES", "GRADER_ERROR", "OutcomeIndex", "has_grader_error"]
