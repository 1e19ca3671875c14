"""The paired change in usage per row between two runs: the candidate's tokens and latency, with an interval.

A row's value is the mean over its answered repeats (not ERROR); :func:`goldenkit.stats.paired_mean_diff`
gives the interval (Student's paired t). ``goldenkit compare`` prints it (:func:`paired_usage_line`) and the
compare report shows it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from goldenkit._registry import publish
from goldenkit.results._accounting import _column
from goldenkit.schema import ERROR

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PAIRED_MEASURES", "paired_usage", "paired_usage_line", "runs_usage_change"]

#: The measures :func:`paired_usage` compares per row: the candidate's tokens (in + out) and latency.
PAIRED_MEASURES = ("tokens", "latency_ms")


def _per_row(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Each row's mean over its answered repeats (not ERROR) of the candidate's tokens (in + out, where
    both were reported) and latency (ms); NaN for a row with no answered repeat."""
    import pandas as pd

    answered = outcomes[outcomes["verdict"] != ERROR] if "verdict" in outcomes.columns else outcomes
    tin = pd.to_numeric(pd.Series(_column(answered, "tokens_in"), dtype=object), errors="coerce")
    tout = pd.to_numeric(pd.Series(_column(answered, "tokens_out"), dtype=object), errors="coerce")
    lat = pd.to_numeric(pd.Series(_column(answered, "latency_ms"), dtype=object), errors="coerce")
    frame = pd.DataFrame(
        {"row_id": _column(answered, "row_id"), "tokens": (tin + tout).to_numpy(), "latency_ms": lat.to_numpy()}
    )
    means = frame.groupby("row_id", sort=False)[list(PAIRED_MEASURES)].mean()
    return means.reindex(pd.unique(pd.Series(_column(outcomes, "row_id"), dtype=object)))  # an all-ERROR row: NaN


def paired_usage(base: pd.DataFrame, cand: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """The paired change per row from ``base``'s outcomes to ``cand``'s, one line per measure of
    :data:`PAIRED_MEASURES`: ``n`` (rows with the measure on both sides), ``dropped`` (rows both runs have,
    left out for lacking the measure on a side: no usage reported, or every repeat an ERROR),
    ``base_mean``, ``cand_mean``, ``diff`` (candidate minus base) and its interval ``ci_low, ci_high``
    (:func:`goldenkit.stats.paired_mean_diff`, Student's paired t). A row's value is the mean over its
    answered repeats (not ERROR)."""
    import pandas as pd

    from goldenkit.stats import paired_mean_diff

    b, c = _per_row(base), _per_row(cand)
    both = b.merge(c, how="inner", left_index=True, right_index=True, suffixes=("_base", "_cand"))
    lines = [
        paired_mean_diff(both[f"{m}_base"], both[f"{m}_cand"], confidence).assign(measure=m) for m in PAIRED_MEASURES
    ]
    return pd.concat(lines, ignore_index=True).set_index("measure")


def runs_usage_change(base: Any, cand: Any) -> pd.DataFrame | None:
    """:func:`paired_usage` of two runs (anything with ``outcomes(columns)``: a Run); None when a side is a
    baseline, which keeps verdicts, not usage."""
    if not (hasattr(base, "outcomes") and hasattr(cand, "outcomes")):
        return None
    cols = ["row_id", "verdict", "tokens_in", "tokens_out", "latency_ms"]
    return paired_usage(base.outcomes(cols), cand.outcomes(cols))


def paired_usage_line(change: pd.DataFrame) -> str:
    """``usage per row, candidate - base (paired t, 95%): tokens +15.0 [+2.6, +27.4] over 3 rows; latency ...``."""
    parts = []
    for measure, r in change.iterrows():
        name = "latency ms" if measure == "latency_ms" else str(measure)
        dropped = int(r.get("dropped") or 0)
        left_out = f", {dropped:,} row{'s' if dropped != 1 else ''} without it on a side left out" if dropped else ""
        if not r["n"]:
            parts.append(f"{name} n/a (no row has it on both sides)")
        elif math.isnan(float(r["ci_low"])):
            parts.append(f"{name} {float(r['diff']):+,.1f} over {int(r['n'])} row (no interval from one row{left_out})")
        else:
            ci = f"[{float(r['ci_low']):+,.1f}, {float(r['ci_high']):+,.1f}]"
            parts.append(f"{name} {float(r['diff']):+,.1f} {ci} over {int(r['n']):,} rows" + left_out)
    return "usage per row, candidate - base (paired t, 95% CI): " + "; ".join(parts)


publish(globals())
