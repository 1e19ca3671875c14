"""The paired change of a measure (tokens, latency) between two runs over the rows both have.

:func:`paired_mean_diff` takes one value per row on each side, paired by
position, and gives the mean of the differences ``d_i = cand_i - base_i``
with Student's t interval::

    mean(d) ± t_{(1 + confidence) / 2, n - 1} · sd(d) / sqrt(n)

(``sd`` with ``n - 1`` in the denominator): the interval of
``scipy.stats.ttest_rel(cand, base).confidence_interval(confidence)`` and of
R's ``t.test(cand, base, paired = TRUE)$conf.int``. Pairing removes what the
rows share (a long prompt costs both runs), so the interval is about the change,
not about the rows. With fewer than two pairs there is no interval (NaN); with
no spread at all the interval is the mean itself.

>>> t = paired_mean_diff([100, 200, 300], [110, 215, 320])
>>> t[["n", "dropped", "base_mean", "cand_mean", "diff"]].iloc[0].tolist()
[3.0, 0.0, 200.0, 215.0, 15.0]
>>> round(float(t["ci_low"].iloc[0]), 3), round(float(t["ci_high"].iloc[0]), 3)
(2.579, 27.421)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _sps

from goldenkit._registry import publish
from goldenkit.errors import InputError

__all__ = ["paired_mean_diff"]


def paired_mean_diff(base: Any, cand: Any, confidence: float = 0.95) -> pd.DataFrame:
    """One row: ``n, dropped, base_mean, cand_mean, diff, ci_low, ci_high`` (see the module doc). ``base``
    and ``cand`` are sequences of numbers of one length, paired by position; a pair with a missing value
    (None, NaN) on either side is left out and counted in ``dropped``; anything else that is not a finite
    number (a text, a bool, an infinity) is an InputError naming its side and position."""
    b, c = _numbers(base, "base"), _numbers(cand, "cand")
    if b.shape != c.shape:
        raise InputError(f"paired_mean_diff: {len(b)} base values and {len(c)} candidate values: pair them by row")
    if not 0 < confidence < 1:
        raise InputError(f"paired_mean_diff: confidence must be between 0 and 1, got {confidence!r}")
    keep = ~np.isnan(b) & ~np.isnan(c)
    b, c = b[keep], c[keep]
    n = int(b.size)
    d = c - b
    diff = float(d.mean()) if n else float("nan")
    low = high = float("nan")
    if n >= 2:
        half = float(_sps.t.ppf((1 + confidence) / 2, n - 1)) * float(d.std(ddof=1)) / np.sqrt(n)
        low, high = diff - half, diff + half
    return pd.DataFrame(
        {
            "n": [n],
            "dropped": [int(keep.size) - n],
            "base_mean": [float(b.mean()) if n else float("nan")],
            "cand_mean": [float(c.mean()) if n else float("nan")],
            "diff": [diff],
            "ci_low": [low],
            "ci_high": [high],
        }
    )


def _numbers(values: Any, side: str) -> np.ndarray:
    """``values`` as floats, NaN where one is missing (None, NA, NaN); an InputError for anything else
    that is not a finite number."""
    items = list(values)
    out = np.full(len(items), np.nan)
    for i, v in enumerate(items):
        if v is None or v is pd.NA or (isinstance(v, float | np.floating) and np.isnan(v)):
            continue
        if isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating):
            raise InputError(f"paired_mean_diff: {side}[{i}] is {v!r}, not a number")
        if not np.isfinite(v):
            raise InputError(f"paired_mean_diff: {side}[{i}] is {v!r}, not a finite number")
        out[i] = float(v)
    return out


publish(globals())
