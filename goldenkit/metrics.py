"""Run metrics from outcomes, attempt-weighted as in the golden harness.

Every rate is ``hits / total`` over *attempts* (one outcome = one row x
repeat) whose verdict is PASS or FAIL; ERROR and SKIPPED attempts never enter
a denominator, and no rate is a mean of per-row rates. Each comes with a
Wilson 95% interval (:func:`goldenkit.stats.wilson_ci`).

========================  =================================================================
metric                    hits / total
========================  =================================================================
overall_pass_rate         PASS / (PASS + FAIL)
pass_rate:<grader>        grader passed / grader decided (passed True or False)
judge_accept_rate         judge ACCEPT / (ACCEPT + REJECT); PENDING and judge errors excluded
refusal_accuracy          on rows that must refuse: contract passed (or, without a contract
                          result, verdict PASS) / attempts
hallucination_rate        on hallucination rows: FAIL / (PASS + FAIL); lower is better
trajectory_accuracy       trajectory grader passed / trajectory grader decided
========================  =================================================================

Which rows must refuse: ``refusal_rows`` if given, else the cases (``cases``:
a Dataset, or a mapping row id -> Case or raw case dict) whose contract says
``refusal: true`` (alias ``refuse``), else rows tagged ``refusal``,
``refuse`` or ``must_refuse``. Hallucination rows: ``hallucination_rows`` if
given, else rows with a tag matching one of ``hallucination_tags`` (default
``hallucinate-*``) or an id starting with ``hallucinate-``. A metric with no
attempts has total 0 and NaN rate and interval.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from goldenkit.stats import wilson_ci

__all__ = ["METRIC_COLUMNS", "grader_results", "run_metrics"]

METRIC_COLUMNS = ("metric", "grader", "hits", "total", "rate", "ci_low", "ci_high", "lower_is_better")
_DECIDED = ("PASS", "FAIL")
_REFUSAL_TAGS = ("refusal", "refuse", "must_refuse")


def grader_results(value: Any) -> dict[str, dict[str, Any]]:
    """The graders cell of one outcome as ``{name: {passed, score, reason, error}}``.

    The cell may be a dict, an Arrow map read from Parquet (a list of pairs),
    JSON text, or empty (None, NaN); a grader whose result is null is left out.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else {}
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    else:  # a Parquet map comes back as a list of (key, value) pairs
        items = ((k, v) for k, v in value)
    return {str(k): dict(v) for k, v in items if v is not None}


def _tags(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        return [value]
    return [str(t) for t in value]


def _row(metric: str, hits: int, total: int, grader: str | None = None, lower: bool = False) -> dict[str, Any]:
    lo, hi = wilson_ci(hits, total)  # (nan, nan) when total is 0
    rate = hits / total if total else math.nan
    return {
        "metric": metric,
        "grader": grader,
        "hits": int(hits),
        "total": int(total),
        "rate": rate,
        "ci_low": lo,
        "ci_high": hi,
        "lower_is_better": lower,
    }


def _refusal_ids(ids: Iterable[str], tags: list[list[str]], cases: Any, refusal_rows: Iterable[str] | None) -> set[str]:
    ids = list(ids)
    if refusal_rows is not None:
        return set(refusal_rows)
    if cases is not None:
        from goldenkit.graders.contract import contract_expectations

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
                flag = expect.get("refusal", expect.get("refuse"))
            else:
                flag = contract_expectations(case).get("refusal")
            if flag is True:
                out.add(rid)
        return out
    return {rid for rid, t in zip(ids, tags, strict=True) if any(x in _REFUSAL_TAGS for x in t)}


def run_metrics(
    outcomes: pd.DataFrame,
    *,
    cases: Any = None,
    refusal_rows: Iterable[str] | None = None,
    hallucination_rows: Iterable[str] | None = None,
    hallucination_tags: Iterable[str] = ("hallucinate-*",),
    judge: str = "judge",
    trajectory: str = "trajectory",
    contract: str = "contract",
) -> pd.DataFrame:
    """The run's metrics (see the module doc), one row each, columns :data:`METRIC_COLUMNS`.

    ``outcomes`` needs ``row_id`` and ``verdict``; ``graders`` and ``tags``
    are used when present.
    """
    for col in ("row_id", "verdict"):
        if col not in outcomes.columns:
            raise ValueError(f"outcomes need a {col!r} column")
    n = len(outcomes)
    ids = [str(x) for x in outcomes["row_id"].tolist()]
    verdicts = [str(v) for v in outcomes["verdict"].tolist()]
    graders = [grader_results(v) for v in outcomes["graders"].tolist()] if "graders" in outcomes.columns else [{}] * n
    tags = [_tags(v) for v in outcomes["tags"].tolist()] if "tags" in outcomes.columns else [[]] * n
    decided = [v in _DECIDED for v in verdicts]

    rows = [_row("overall_pass_rate", sum(v == "PASS" for v in verdicts), sum(decided))]

    def grader_counts(name: str) -> tuple[int, int]:
        hits = total = 0
        for ok, g in zip(decided, graders, strict=True):
            res = g.get(name)
            if ok and res is not None and res.get("passed") is not None:
                total += 1
                hits += bool(res["passed"])
        return hits, total

    names = sorted({name for g in graders for name in g})
    for name in names:
        rows.append(_row(f"pass_rate:{name}", *grader_counts(name), grader=name))
    rows.append(_row("judge_accept_rate", *grader_counts(judge), grader=judge))

    refusing = _refusal_ids(ids, tags, cases, refusal_rows)
    hits = total = 0
    for rid, ok, verdict, g in zip(ids, decided, verdicts, graders, strict=True):
        if not ok or rid not in refusing:
            continue
        res = g.get(contract)
        passed = res.get("passed") if res is not None else None
        total += 1
        hits += bool(passed) if passed is not None else verdict == "PASS"
    rows.append(_row("refusal_accuracy", hits, total))

    if hallucination_rows is not None:
        halluc = set(hallucination_rows)
    else:
        patterns = list(hallucination_tags)
        halluc = {
            rid
            for rid, t in zip(ids, tags, strict=True)
            if rid.startswith("hallucinate-") or any(fnmatch.fnmatchcase(x, p) for x in t for p in patterns)
        }
    fails = sum(1 for rid, v in zip(ids, verdicts, strict=True) if rid in halluc and v == "FAIL")
    attempts = sum(1 for rid, ok in zip(ids, decided, strict=True) if rid in halluc and ok)
    rows.append(_row("hallucination_rate", fails, attempts, lower=True))

    rows.append(_row("trajectory_accuracy", *grader_counts(trajectory), grader=trajectory))
    out = pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
    return out.astype({"hits": "int64", "total": "int64", "rate": "float64", "ci_low": "float64", "ci_high": "float64"})
