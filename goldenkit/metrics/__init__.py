"""Run metrics from outcomes, attempt-weighted as in the golden harness, with row-clustered intervals.

The package owns four things, one module each: the rates and their 95%
intervals (:func:`run_metrics`, :data:`METRIC_COLUMNS`,
:func:`clustered_interval`; the definitions are in
:mod:`goldenkit.metrics._rates`), which rows are red, refusal or
hallucination rows (:func:`red_ids`, :func:`hallucination_row_ids`;
:mod:`goldenkit.metrics._red_rows`), and the report's text lines
(:func:`red_metrics_text`; :mod:`goldenkit.metrics._text`); and the weighted
score, a convenience number without an error rate (:func:`weighted_score`,
:func:`metric_weights`; :mod:`goldenkit.metrics._weighted`). Every public name
is importable from ``goldenkit.metrics``.
"""

from __future__ import annotations

from goldenkit.metrics._rates import METRIC_COLUMNS, clustered_interval, run_metrics
from goldenkit.metrics._red_rows import hallucination_row_ids, red_ids
from goldenkit.metrics._text import red_metrics_text
from goldenkit.metrics._weighted import WEIGHTED_SCORE, metric_weights, weighted_score
from goldenkit.records import grader_results

__all__ = [
    "METRIC_COLUMNS",
    "WEIGHTED_SCORE",
    "clustered_interval",
    "grader_results",
    "hallucination_row_ids",
    "metric_weights",
    "red_ids",
    "red_metrics_text",
    "run_metrics",
    "weighted_score",
]
