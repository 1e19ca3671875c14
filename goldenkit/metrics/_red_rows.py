"""Which rows a metric counts: the rows that must refuse, the hallucination rows, the red rows.

Which rows must refuse: ``refusal_rows`` if given, else the cases (``cases``:
a Dataset, or a mapping row id -> Case or raw case dict) whose contract says
``refusal: true`` (alias ``refuse``), else rows tagged ``refusal``,
``refuse`` or ``must_refuse``. Hallucination rows: ``hallucination_rows`` if
given, else rows with a tag matching one of ``hallucination_tags`` (default
``hallucinate-*``) or an id starting with ``hallucinate-``, and the red rows
that need not refuse.

**Red rows** are negative cases (expected failures; see
:func:`goldenkit.dataset._red.red_row_ids`): ``red_rows`` if given, else rows
tagged ``red`` (a run that includes them tags every red row ``red``, also
those only dataset.json lists). A run without ``--red`` has none, and then
``negative_case_pass_rate`` is not reported.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from goldenkit._registry import publish
from goldenkit.records import expects_refusal
from goldenkit.schema import RED_TAG

__all__ = ["hallucination_ids", "hallucination_row_ids", "red_ids", "refusal_ids", "tag_list"]

_REFUSAL_TAGS = ("refusal", "refuse", "must_refuse")


def tag_list(value: Any) -> list[str]:
    """An outcome's ``tags`` value as a list of str (none for a missing value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        return [value]
    return [str(t) for t in value]


def refusal_ids(ids: Iterable[str], tags: list[list[str]], cases: Any, refusal_rows: Iterable[str] | None) -> set[str]:
    """The rows that must refuse (module doc)."""
    ids = list(ids)
    if refusal_rows is not None:
        return set(refusal_rows)
    if cases is not None:
        lookup: Callable[[str], Any] = cases.case if hasattr(cases, "case") else cases.__getitem__
        # a Dataset raises DatasetError, not KeyError, for a row it lacks: ask it which rows it holds
        held = set(cases.ids) if hasattr(cases, "ids") else None
        out = set()
        for rid in set(ids):
            if held is not None and rid not in held:
                continue
            try:
                case = lookup(rid)
            except LookupError:
                continue
            if isinstance(case, Mapping):
                expect = case.get("expect") or {}
                flag = expect.get("refusal", expect.get("refuse")) is True
            else:
                flag = expects_refusal(case.expect)
            if flag:
                out.add(rid)
        return out
    return {rid for rid, t in zip(ids, tags, strict=True) if any(x in _REFUSAL_TAGS for x in t)}


def hallucination_ids(
    ids: list[str],
    tags: list[list[str]],
    rows: Iterable[str] | None,
    patterns: Iterable[str],
    red: set[str],
    refusing: set[str],
) -> set[str]:
    """The hallucination rows (module doc)."""
    if rows is not None:
        return set(rows)
    pats = list(patterns)
    tagged = {
        rid
        for rid, t in zip(ids, tags, strict=True)
        if rid.startswith("hallucinate-") or any(fnmatch.fnmatchcase(x, p) for x in t for p in pats)
    }
    return tagged | (red - refusing)


def red_ids(ids: Sequence[str], tags: Sequence[Sequence[str]], red_rows: Iterable[str] | None = None) -> set[str]:
    """The red rows among ``ids``: those in ``red_rows`` if given, else those tagged ``red``."""
    if red_rows is not None:
        wanted = set(red_rows)
        return {rid for rid in ids if rid in wanted}
    return {rid for rid, t in zip(ids, tags, strict=True) if RED_TAG in t}


def hallucination_row_ids(
    ids: Sequence[str], tags: Sequence[Sequence[str]], hallucination_tags: Iterable[str] = ("hallucinate-*",)
) -> set[str]:
    """The hallucination rows :func:`run_metrics` uses when given outcomes alone (refusal rows by tag)."""
    tag_lists = [list(t) for t in tags]
    refusing = refusal_ids(ids, tag_lists, None, None)
    return hallucination_ids(list(ids), tag_lists, None, hallucination_tags, red_ids(ids, tags), refusing)


publish(globals())
