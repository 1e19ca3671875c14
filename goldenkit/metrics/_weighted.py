"""The weighted score: one convenience number over the run's rates, as the golden harness reports it.

``weighted_score = sum(w_m * r_m) / sum(w_m)`` over the rates ``r_m`` of
:func:`goldenkit.metrics.run_metrics` that are defined in the run (a metric
with no attempt is left out, not counted as 0), a rate where lower is better
entering as ``1 - rate`` (the hallucination rate as the harness's
``hallucinationInverse``). The weights ``w_m`` come from ``[metrics] weights``
in goldenkit.toml (``weights = { hallucination_rate = 2, judge_accept_rate = 0 }``);
a metric the table does not name weighs 1, so the default is the plain mean of
the defined rates.

It is a summary for people, **not evidence**: the rates it mixes are
dependent (the same attempts), so it has no interval and no error rate, it
is never compared with a test and never a gate rule. Read the rates and
their intervals for a decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit._text import did_you_mean
from goldenkit.config import table_values
from goldenkit.errors import ConfigError

__all__ = ["FIXED_METRICS", "WEIGHTED_SCORE", "metric_weights", "weighted_score", "weighted_score_row"]

#: The name of the weighted score's line in :func:`goldenkit.metrics.run_metrics`.
WEIGHTED_SCORE = "weighted_score"
#: The metrics a weight may name besides ``pass_rate:<grader>``.
FIXED_METRICS = (
    "overall_pass_rate",
    "judge_accept_rate",
    "refusal_accuracy",
    "hallucination_rate",
    "trajectory_accuracy",
    "negative_case_pass_rate",
)


def metric_weights(cfg: Mapping[str, Any] | None) -> dict[str, float]:
    """The ``[metrics] weights`` table of a goldenkit.toml dict, checked: each key a metric of
    :func:`~goldenkit.metrics.run_metrics` (``pass_rate:<grader>`` or one of :data:`FIXED_METRICS`),
    each value a finite number >= 0; anything else is a one-line ConfigError naming the key.

    >>> metric_weights({"metrics": {"weights": {"hallucination_rate": 2}}})
    {'hallucination_rate': 2.0}
    >>> metric_weights({"_path": "g.toml", "metrics": {"weights": {"halucination_rate": 2}}})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    goldenkit.errors.ConfigError: g.toml: [metrics] weights.halucination_rate: not a metric (did you mean ...?)
    """
    cfg = cfg or {}
    where = f"{cfg.get('_path', 'goldenkit.toml')}: [metrics]"
    raw = table_values(cfg, "metrics")["weights"]  # each weight checked as [metrics] declares it
    out: dict[str, float] = {}
    for name, value in raw.items():
        key = str(name)
        if key not in FIXED_METRICS and not (key.startswith("pass_rate:") and len(key) > len("pass_rate:")):
            hint = did_you_mean(key, FIXED_METRICS) or "; known: pass_rate:<grader>, " + ", ".join(FIXED_METRICS)
            raise ConfigError(f"{where} weights.{key}: not a metric{hint}")
        out[key] = float(value)
    return out


def weighted_score(metrics: pd.DataFrame, weights: Mapping[str, float] | None = None) -> tuple[float, str]:
    """``(score, formula)`` over the defined rates of a :func:`~goldenkit.metrics.run_metrics` table (see the
    module doc); the formula shows each weight and rate, as the harness stores it. ``(nan, "")`` when no
    rate with a positive weight is defined.

    >>> m = pd.DataFrame({"metric": ["overall_pass_rate", "hallucination_rate", "judge_accept_rate"],
    ...                   "total": [10, 4, 0], "rate": [0.8, 0.25, float("nan")],
    ...                   "lower_is_better": [False, True, False]})
    >>> weighted_score(m)  # the judge judged nothing: left out
    (0.775, '(1.00*overall_pass_rate(0.800) + 1.00*(1 - hallucination_rate)(0.750)) / 2.00')
    >>> weighted_score(m, {"hallucination_rate": 3})[0]  # (0.8 + 3 * 0.75) / 4
    0.7625
    """
    w = weights or {}
    num = den = 0.0
    terms = []
    for r in metrics.to_dict(orient="records"):
        name = str(r["metric"])
        rate = float(r["rate"])
        if name == WEIGHTED_SCORE or not r["total"] or math.isnan(rate):
            continue
        weight = float(w.get(name, 1.0))
        if weight <= 0:
            continue
        lower = bool(r["lower_is_better"])
        value = (1.0 - rate) if lower else rate
        num += weight * value
        den += weight
        terms.append(f"{weight:.2f}*{f'(1 - {name})' if lower else name}({value:.3f})")
    if not den:
        return math.nan, ""
    return num / den, f"({' + '.join(terms)}) / {den:.2f}"


def weighted_score_row(metrics: pd.DataFrame, weights: Mapping[str, float] | None, rows: int) -> dict[str, Any]:
    """The ``weighted_score`` line of :func:`~goldenkit.metrics.run_metrics` over its other lines ``metrics``:
    hits 0, total the rates weighed, ``rows`` the run's rows, and no interval (no error rate)."""
    score, formula = weighted_score(metrics, weights)
    return {
        "metric": WEIGHTED_SCORE,
        "grader": None,
        "hits": 0,
        "total": formula.count("*"),
        "rows": rows,
        "rate": score,
        "ci_low": math.nan,  # not an estimate with an error rate: no interval
        "ci_high": math.nan,
        "lower_is_better": False,
    }


publish(globals())
