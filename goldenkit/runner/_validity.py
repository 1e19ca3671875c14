"""Whether a run is evidence: VALID or INVALID from its final counts, and why (:func:`validity`).

Errors are charged to their cause (the taxonomy of :mod:`goldenkit.schema`): an ERROR
nobody's answer caused (``transient``, ``infrastructure``, ``grader``, ``simulator``) is
missing evidence and counts toward ``max_error_rate``; the candidate's own errors
(``agent``, ``refused``: ``counts["candidate_errors"]``) are evidence against the
candidate, counted by the gate (exit 2 when new), and never make a run INVALID.

A crash of goldenkit itself (a worker that raised what is not a row's error) is not an
interruption: :func:`crash_report` says why the run is not evidence and what run.json
records of every worker's exception (``"stopped_because": "crash"``, ``"crash"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldenkit._text import one_line
from goldenkit.schema import ERROR, INVALID, VALID


def validity(
    counts: Mapping[str, int], expected: int, max_error_rate: float, stopped: str | None, first_error: str | None
) -> tuple[str, str | None, float]:
    """``(VALID | INVALID, why, error rate)`` of a run's final counts.

    The error rate is ``(ERROR outcomes that are not the candidate's own + grader_errors) / total``:
    a model, judge or simulator call that failed is missing evidence whether or not it decided the
    row (``grader_errors``: outcomes that are not ERROR but have a grader that could not grade).

    >>> validity({"total": 30, "ERROR": 1, "candidate_errors": 1}, 30, 0.02, None, None)
    ('VALID', None, 0.0)
    >>> validity({"total": 30, "ERROR": 1}, 30, 0.02, None, None)[:2]
    ('INVALID', 'error rate 3.3% (1 of 30) exceeds max_error_rate 2.0%')
    """
    total = counts.get("total", 0)
    outages = counts.get(ERROR, 0) - counts.get("candidate_errors", 0)
    failed = outages + counts.get("grader_errors", 0)
    rate = failed / total if total else 0.0
    if stopped:
        return INVALID, stopped, rate
    if expected and total == 0:
        return INVALID, "no outcome was written", rate
    if total and outages == total:
        why = f"every call errored ({outages} of {total})"
        if first_error:
            why += f"; e.g. {first_error}"
        return INVALID, why, rate
    if rate > max_error_rate:
        what = f"{failed} of {total}"
        if counts.get("grader_errors"):
            what += f", {counts['grader_errors']} of them a soft grader that could not grade"
        return INVALID, f"error rate {rate:.1%} ({what}) exceeds max_error_rate {max_error_rate:.1%}", rate
    if total < expected:
        return INVALID, f"incomplete: {total} of {expected} outcomes", rate
    return VALID, None, rate


def worker_exceptions(exc: BaseException) -> list[BaseException]:
    """The exceptions of a run's workers in ``exc``: the members of (nested) exception groups, else ``exc``."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for member in exc.exceptions for leaf in worker_exceptions(member)]
    return [exc]


def crash_report(errors: Sequence[BaseException]) -> tuple[str, dict[str, Any]]:
    """``(why, record)`` of a run its workers' ``errors`` stopped: the one-line reason (INVALID) and the
    fields run.json records, ``stopped_because: "crash"`` and each exception's type and message (scrubbed).

    >>> why, rec = crash_report([KeyError("k"), RuntimeError("disk")])
    >>> why
    "goldenkit crashed: KeyError: 'k' (and 1 more worker exception: run.json crash); outcomes so far kept"
    >>> rec["crash"]
    [{'type': 'KeyError', 'message': "'k'"}, {'type': 'RuntimeError', 'message': 'disk'}]
    """
    record = [{"type": type(e).__name__, "message": one_line(str(e), 500)} for e in errors]
    first = f"{record[0]['type']}: {record[0]['message']}" if record else "unknown"
    more = len(record) - 1
    also = f" (and {more} more worker exception{'s' if more > 1 else ''}: run.json crash)" if more else ""
    why = f"goldenkit crashed: {one_line(first, 200)}{also}; outcomes so far kept"
    return why, {"stopped_because": "crash", "crash": record}


__all__ = ["crash_report", "validity", "worker_exceptions"]
