"""Whether a run is evidence: VALID or INVALID from its final counts, and why (:func:`validity`)."""

from __future__ import annotations

from collections.abc import Mapping

from goldenkit.schema import ERROR, INVALID, VALID


def validity(
    counts: Mapping[str, int], expected: int, max_error_rate: float, stopped: str | None, first_error: str | None
) -> tuple[str, str | None, float]:
    """``(VALID | INVALID, why, error rate)`` of a run's final counts.

    The error rate is ``(ERROR outcomes + grader_errors) / total``: a model or
    judge call that failed is missing evidence whether or not it decided the row
    (``grader_errors``: outcomes that are not ERROR but have a grader that could not grade).
    """
    total = counts.get("total", 0)
    errors = counts.get(ERROR, 0)
    failed = errors + counts.get("grader_errors", 0)
    rate = failed / total if total else 0.0
    if stopped:
        return INVALID, stopped, rate
    if expected and total == 0:
        return INVALID, "no outcome was written", rate
    if total and errors == total:
        why = f"every call errored ({errors} of {total})"
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


__all__ = ["validity"]
