"""Run metrics from outcomes, attempt-weighted as in the golden harness.

Every rate is ``hits / total`` over *attempts* (one outcome = one row x
repeat) whose verdict is PASS or FAIL; ERROR and SKIPPED attempts never enter
a denominator, and no rate is a mean of per-row rates. The point estimate is
the golden harness's attempt-weighted one; **its 95% interval is clustered by
row**: repeats of one row are not independent, so the interval is a Wilson
interval at the effective sample size ``n_eff = p (1 - p) / SE^2``, with SE the
cluster-robust standard error of the mean attempt score, clustered by row
(Miller 2024, :func:`goldenkit.stats.clustered_se`), capped at the attempts.
With one attempt per row ``n_eff`` is the number of attempts and the interval
is the plain Wilson interval; with repeats that agree it widens towards one
observation per row. When ``SE`` is 0 (every attempt the same) or there is one
row, ``n_eff`` is the number of rows. ``rows`` is the number of distinct rows.

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
negative_case_pass_rate   on red rows: PASS / (PASS + FAIL) (only when the run has red rows)
weighted_score            the weighted mean of the rates above that are defined (lower-is-better
                          ones as 1 - rate): a convenience number, no interval, never a gate rule
                          (:mod:`goldenkit.metrics._weighted`); hits 0, total the rates it weighs
========================  =================================================================

The rows that must refuse, the hallucination rows and the red rows are chosen
as :mod:`goldenkit.metrics._red_rows` says. A metric with no attempts has total
0 and NaN rate and interval.

The red rows' two metrics, precisely, over their PASS and FAIL attempts (ERROR
and SKIPPED excluded, as everywhere):

* ``negative_case_pass_rate = PASS / (PASS + FAIL)``: the share of attempts in
  which the model did what the negative case demands (refused, or answered
  without what the contract forbids); higher is better; the golden harness's
  ``negativeCasePassRate``.
* ``hallucination_rate = FAIL / (PASS + FAIL)`` on the hallucination rows: a red
  row that need not refuse is an adversarial one (the prompt pushes for a
  made-up locator, an invented message), so its FAIL is a hallucination -- the
  harness's ``hallucinationHit``; a red row that must refuse and fails is a
  refusal failure (``refusal_accuracy``), not a hallucination. Lower is better.

Both carry the interval above: with one attempt per row the plain Wilson 95%
interval, e.g. 2 PASS of 3 red rows gives 0.6667 (0.2077, 0.9385), and 0
hallucinations in 2 rows gives 0 (0, 0.6576).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.metrics._red_rows import hallucination_ids, red_ids, refusal_ids, tag_list
from goldenkit.metrics._weighted import weighted_score_row
from goldenkit.records import grader_results
from goldenkit.stats import clustered_se, wilson_ci_effective

__all__ = ["METRIC_COLUMNS", "clustered_interval", "run_metrics"]

METRIC_COLUMNS = ("metric", "grader", "hits", "total", "rows", "rate", "ci_low", "ci_high", "lower_is_better")
_DECIDED = ("PASS", "FAIL")


def clustered_interval(row_ids: Sequence[str], hits: Sequence[bool], confidence: float = 0.95) -> tuple[float, float]:
    """Wilson interval of an attempt-weighted rate at the row-clustered effective sample size (module doc).

    ``(nan, nan)`` with no attempts.
    """
    n = len(hits)
    if n == 0:
        return math.nan, math.nan
    p = sum(map(bool, hits)) / n
    rows = len(set(row_ids))
    n_eff = float(rows)
    if rows >= 2 and 0.0 < p < 1.0:
        se = clustered_se([float(h) for h in hits], list(row_ids)).se
        if se > 0:
            n_eff = min(float(n), p * (1.0 - p) / (se * se))
    lo, hi = wilson_ci_effective(p, n_eff, confidence)
    return float(lo), float(hi)


def _row(
    metric: str, attempts: list[tuple[str, bool]], grader: str | None = None, lower: bool = False
) -> dict[str, Any]:
    ids = [rid for rid, _ in attempts]
    hits = sum(h for _, h in attempts)
    total = len(attempts)
    lo, hi = clustered_interval(ids, [h for _, h in attempts])
    return {
        "metric": metric,
        "grader": grader,
        "hits": int(hits),
        "total": int(total),
        "rows": len(set(ids)),
        "rate": hits / total if total else math.nan,
        "ci_low": lo,
        "ci_high": hi,
        "lower_is_better": lower,
    }


def run_metrics(
    outcomes: pd.DataFrame,
    *,
    cases: Any = None,
    refusal_rows: Iterable[str] | None = None,
    hallucination_rows: Iterable[str] | None = None,
    hallucination_tags: Iterable[str] = ("hallucinate-*",),
    red_rows: Iterable[str] | None = None,
    judge: str = "judge",
    trajectory: str = "trajectory",
    contract: str = "contract",
    weights: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """The run's metrics (see the module doc), one row each, columns :data:`METRIC_COLUMNS`.

    ``outcomes`` needs ``row_id`` and ``verdict``; ``graders`` and ``tags``
    are used when present. ``negative_case_pass_rate`` is a row only when the
    run has red rows (``red_rows``, else tagged ``red``). The last row is ``weighted_score``, its
    ``weights`` by metric name (:func:`goldenkit.metrics.metric_weights` reads them from goldenkit.toml;
    a metric not named weighs 1).
    """
    for col in ("row_id", "verdict"):
        if col not in outcomes.columns:
            raise ValueError(f"outcomes need a {col!r} column")
    n = len(outcomes)
    ids = [str(x) for x in outcomes["row_id"].tolist()]
    verdicts = [str(v) for v in outcomes["verdict"].tolist()]
    graders = [grader_results(v) for v in outcomes["graders"].tolist()] if "graders" in outcomes.columns else [{}] * n
    tags = [tag_list(v) for v in outcomes["tags"].tolist()] if "tags" in outcomes.columns else [[]] * n
    decided = [v in _DECIDED for v in verdicts]

    def on(rows: set[str], hit: str) -> list[tuple[str, bool]]:
        return [(r, v == hit) for r, v, ok in zip(ids, verdicts, decided, strict=True) if ok and r in rows]

    rows = [_row("overall_pass_rate", on(set(ids), "PASS"))]

    def grader_attempts(name: str) -> list[tuple[str, bool]]:
        out = []
        for rid, ok, g in zip(ids, decided, graders, strict=True):
            res = g.get(name)
            if ok and res is not None and res.get("passed") is not None:
                out.append((rid, bool(res["passed"])))
        return out

    names = sorted({name for g in graders for name in g})
    for name in names:
        rows.append(_row(f"pass_rate:{name}", grader_attempts(name), grader=name))
    rows.append(_row("judge_accept_rate", grader_attempts(judge), grader=judge))

    refusing = refusal_ids(ids, tags, cases, refusal_rows)
    refusal = []
    for rid, ok, verdict, g in zip(ids, decided, verdicts, graders, strict=True):
        if not ok or rid not in refusing:
            continue
        res = g.get(contract)
        passed = res.get("passed") if res is not None else None
        refusal.append((rid, bool(passed) if passed is not None else verdict == "PASS"))
    rows.append(_row("refusal_accuracy", refusal))

    red = red_ids(ids, tags, red_rows)
    halluc = hallucination_ids(ids, tags, hallucination_rows, hallucination_tags, red, refusing)
    rows.append(_row("hallucination_rate", on(halluc, "FAIL"), lower=True))
    rows.append(_row("trajectory_accuracy", grader_attempts(trajectory), grader=trajectory))
    if red:
        rows.append(_row("negative_case_pass_rate", on(red, "PASS")))
    rows.append(weighted_score_row(pd.DataFrame(rows, columns=list(METRIC_COLUMNS)), weights, len(set(ids))))
    out = pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
    types = {"hits": "int64", "total": "int64", "rows": "int64", "rate": "float64", "ci_low": "float64"}
    return out.astype({**types, "ci_high": "float64"})


publish(globals())
