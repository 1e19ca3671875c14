"""The report's text lines of the run metrics: the red rows' rates with their intervals."""

from __future__ import annotations

import pandas as pd

from goldenkit._registry import publish

__all__ = ["red_metrics_text"]


def red_metrics_text(metrics: pd.DataFrame) -> list[str]:
    """The report's red-row lines: negative-case pass rate and hallucination rate with their intervals.

    Empty when the run has no red rows (a run without ``--red``), so a report of
    such a run shows nothing new.

    >>> m = pd.DataFrame([
    ...     {"metric": "negative_case_pass_rate", "hits": 2, "total": 3, "rows": 3, "rate": 2 / 3,
    ...      "ci_low": 0.20766, "ci_high": 0.93851},
    ...     {"metric": "hallucination_rate", "hits": 0, "total": 2, "rows": 2, "rate": 0.0,
    ...      "ci_low": 0.0, "ci_high": 0.6576}])
    >>> print("\\n".join(red_metrics_text(m)))
    red rows (expected failures), apart from the rest:
      negative-case pass rate  66.7%  (2/3 attempts, 3 rows; 95% CI 20.8%-93.9%)
      hallucination rate        0.0%  (0/2 attempts, 2 rows; 95% CI 0.0%-65.8%; lower is better)
    """
    by = {str(r["metric"]): r for r in metrics.to_dict(orient="records")}
    if "negative_case_pass_rate" not in by:
        return []
    out = ["red rows (expected failures), apart from the rest:"]
    for key, label, note in (
        ("negative_case_pass_rate", "negative-case pass rate", ""),
        ("hallucination_rate", "hallucination rate", "; lower is better"),
    ):
        r = by.get(key)
        if r is None:
            continue
        if not r["total"]:
            out.append(f"  {label:<23}    n/a  (no graded attempt)")
            continue
        counts = f"{r['hits']}/{r['total']} attempts, {r['rows']} rows"
        out.append(f"  {label:<23}  {r['rate']:>5.1%}  ({counts}; 95% CI {r['ci_low']:.1%}-{r['ci_high']:.1%}{note})")
    return out


publish(globals())
