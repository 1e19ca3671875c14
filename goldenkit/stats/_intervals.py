"""Confidence intervals of proportions: Wilson's score interval and Newcombe's paired difference.

Wilson's interval comes at a count of trials (:func:`wilson_ci`) or at an
effective sample size (:func:`wilson_ci_effective`), through one formula. All
are vectorized (scalars in, floats out; arrays in, arrays out) and explained in
:mod:`goldenkit.stats`. The small input checks shared by the vectorized
functions of the package live here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as _sps
from statsmodels.stats.proportion import proportion_confint

from goldenkit._registry import publish
from goldenkit.errors import InputError

__all__ = ["paired_diff_ci", "wilson_ci", "wilson_ci_effective"]

# --------------------------------------------------------------------------- helpers (mcnemar.py uses them too)


def _is_scalar(*xs: Any) -> bool:
    return all(np.ndim(x) == 0 for x in xs)


def _ret(x: np.ndarray, scalar: bool) -> Any:
    return float(x) if scalar else x


def _counts(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.floor(arr)):
        raise InputError(f"{name} must be non-negative whole numbers, got {x!r}")
    return arr


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(_sps.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


# --------------------------------------------------------------------------- Wilson


def wilson_ci(k: Any, n: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval for k successes in n trials, vectorized.

    Returns ``(ci_low, ci_high)`` as floats for scalar input, arrays otherwise.
    ``k = 0`` gives a lower bound of exactly 0.0 and ``k = n`` an upper bound of
    exactly 1.0. ``n = 0`` gives ``(nan, nan)`` (no evidence).

    >>> lo, hi = wilson_ci(352, 400)
    >>> round(lo, 4), round(hi, 4)
    (0.8445, 0.9083)
    """
    _z(confidence)  # validates
    scalar = _is_scalar(k, n)
    k_arr, n_arr = np.broadcast_arrays(_counts(k, "k"), _counts(n, "n"))
    if np.any(k_arr > n_arr):
        raise InputError(f"k must not exceed n (k={k!r}, n={n!r})")
    lo, hi = _wilson(k_arr, n_arr, confidence)
    return _ret(lo, scalar), _ret(hi, scalar)


def wilson_ci_effective(p_hat: Any, n_eff: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval of a proportion ``p_hat`` at an effective sample size ``n_eff``, vectorized.

    The interval of :func:`wilson_ci` with ``k / n = p_hat`` and ``n = n_eff``, where
    ``n_eff`` need not be whole: the sample size a clustered standard error implies
    (``n_eff = p (1 - p) / SE^2``, as :func:`goldenkit.metrics.clustered_interval` uses).
    ``p_hat = 0`` gives a lower bound of exactly 0.0, ``p_hat = 1`` an upper bound of
    exactly 1.0, ``n_eff = 0`` gives ``(nan, nan)``.

    >>> lo, hi = wilson_ci_effective(0.5, 1.0)
    >>> round(lo, 4), round(hi, 4)
    (0.0546, 0.9454)
    """
    _z(confidence)  # validates
    scalar = _is_scalar(p_hat, n_eff)
    p_arr, n_arr = np.broadcast_arrays(np.asarray(p_hat, dtype=float), np.asarray(n_eff, dtype=float))
    if np.any(~np.isfinite(p_arr)) or np.any(p_arr < 0) or np.any(p_arr > 1):
        raise InputError(f"p_hat must be a proportion in [0, 1], got {p_hat!r}")
    if np.any(~np.isfinite(n_arr)) or np.any(n_arr < 0):
        raise InputError(f"n_eff must be a finite number >= 0, got {n_eff!r}")
    lo, hi = _wilson(p_arr * n_arr, n_arr, confidence)
    return _ret(lo, scalar), _ret(hi, scalar)


def _wilson(k: np.ndarray, n: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson bounds of ``k`` successes in ``n`` trials (``n`` may be fractional), exact at the ends."""
    empty = n == 0
    safe_n = np.where(empty, 1.0, n)
    lo, hi = proportion_confint(k, safe_n, alpha=1.0 - confidence, method="wilson")
    lo = np.clip(np.asarray(lo, dtype=float), 0.0, 1.0)
    hi = np.clip(np.asarray(hi, dtype=float), 0.0, 1.0)
    lo = np.where(k == 0, 0.0, lo)
    hi = np.where(k == n, 1.0, hi)
    lo = np.where(empty, np.nan, lo)
    hi = np.where(empty, np.nan, hi)
    return lo, hi


# --------------------------------------------------------------------------- paired difference


def paired_diff_ci(n11: Any, n10: Any, n01: Any, n00: Any, confidence: float = 0.95) -> tuple[Any, Any, Any]:
    """Newcombe (1998) method 10 interval for ``p1 - p2`` of paired proportions.

    The 2x2 table of paired outcomes: ``n11`` both succeeded, ``n10`` only the
    first, ``n01`` only the second, ``n00`` neither. ``p1 = (n11 + n10)/N``,
    ``p2 = (n11 + n01)/N``, estimate ``(n10 - n01)/N``. Returns
    ``(estimate, ci_low, ci_high)``; NaN when ``N = 0``. Vectorized.

    In a comparison, first = candidate and second = baseline: ``n10`` is the
    number of fixed rows, ``n01`` the number of broken rows.

    >>> est, lo, hi = paired_diff_ci(59, 6, 16, 80)  # Cavo et al. 2012, Fagerland et al. 2017 ch. 8
    >>> round(est, 4), round(lo, 4), round(hi, 4)
    (-0.0621, -0.1186, -0.0046)
    """
    scalar = _is_scalar(n11, n10, n01, n00)
    a, b, c, d = np.broadcast_arrays(_counts(n11, "n11"), _counts(n10, "n10"), _counts(n01, "n01"), _counts(n00, "n00"))
    n = a + b + c + d
    safe = np.where(n > 0, n, 1.0)
    p1 = (a + b) / safe
    p2 = (a + c) / safe
    l1, u1 = wilson_ci(a + b, n, confidence)
    l2, u2 = wilson_ci(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    num = a * d - b * c
    num = np.where(num > n / 2.0, num - n / 2.0, np.where(num >= 0, 0.0, num))
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0, num / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
    d1 = np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    d2 = np.sqrt(np.maximum((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    est = p1 - p2
    lo = np.maximum(-1.0, est - d1)
    hi = np.minimum(1.0, est + d2)
    empty = n == 0
    est, lo, hi = (np.where(empty, np.nan, x) for x in (est, lo, hi))
    return _ret(est, scalar), _ret(lo, scalar), _ret(hi, scalar)


publish(globals())
