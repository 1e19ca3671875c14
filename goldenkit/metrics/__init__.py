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

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
