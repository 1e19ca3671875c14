"""The exact McNemar test, Holm's adjustment, and planning a paired comparison (power, rows needed).

The formulas and their sources are in :mod:`goldenkit.stats`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats as _sps
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp

from goldenkit._registry import publish
from goldenkit.errors import InputError
from goldenkit.stats._intervals import _counts, _is_scalar, _ret

__all__ = [
    "MAX_PLAN_ROWS",
    "holm",
    "mcnemar_exact",
    "mcnemar_one_sided",
    "mcnemar_power",
    "min_detectable_effect",
    "rows_needed",
]

#: The largest plan :func:`rows_needed` answers; beyond it the plan is refused at once (not practical).
MAX_PLAN_ROWS = 10_000_000

# --------------------------------------------------------------------------- McNemar and Holm


def mcnemar_exact(b: Any, c: Any) -> Any:
    """Two-sided exact McNemar p-value from discordant counts, vectorized.

    ``p = min(1, 2 * P[X <= min(b, c)])``, ``X ~ Binomial(b + c, 1/2)``;
    ``p = 1`` when ``b + c = 0``. Same value as R's ``binom.test(min(b, c), b + c)$p.value``.

    >>> round(mcnemar_exact(8, 1), 4), round(mcnemar_exact(2, 13), 5), mcnemar_exact(5000, 5000)
    (0.0391, 0.00739, 1.0)
    """
    scalar = _is_scalar(b, c)
    b_arr, c_arr = np.broadcast_arrays(_counts(b, "b"), _counts(c, "c"))
    m = b_arr + c_arr
    k = np.minimum(b_arr, c_arr)
    p = np.array(np.minimum(1.0, 2.0 * _sps.binom.cdf(k, m, 0.5)), dtype=float)
    # scipy's CDF underflows to 0 well above the smallest double (e.g. 1e-287 for
    # k=30, m=1150); recompute tiny tails as a log-sum-exp of exact log terms.
    tiny = np.flatnonzero((p < 1e-250) & (m > 0))
    for i in tiny:
        p.flat[i] = _tiny_two_sided(int(k.flat[i]), int(m.flat[i]))
    p = np.where(m == 0, 1.0, p)
    return _ret(p, scalar)


def mcnemar_one_sided(b: Any, c: Any) -> Any:
    """One-sided exact McNemar p-value (more broke than fixed) from discordant counts, vectorized.

    ``p = P[X >= b]``, ``X ~ Binomial(b + c, 1/2)``: the exact binomial test of
    ``b`` broken rows out of ``b + c`` discordant ones at 1/2, alternative
    "greater"; ``p = 1`` when ``b + c = 0``. Same value as R's
    ``binom.test(b, b + c, 0.5, alternative = "greater")$p.value`` and
    ``scipy.stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue``.
    The gate's regression rules use it: the regression question is one-sided.

    >>> round(mcnemar_one_sided(8, 1), 4), round(mcnemar_one_sided(10, 14), 4), mcnemar_one_sided(0, 0)
    (0.0195, 0.8463, 1.0)
    """
    scalar = _is_scalar(b, c)
    b_arr, c_arr = np.broadcast_arrays(_counts(b, "b"), _counts(c, "c"))
    m = b_arr + c_arr
    # P[X >= b] = P[X <= c] by symmetry at 1/2: the lower tail keeps tiny values exact
    p = np.array(np.minimum(1.0, _sps.binom.cdf(c_arr, m, 0.5)), dtype=float)
    tiny = np.flatnonzero((p < 1e-250) & (m > 0))
    for i in tiny:
        p.flat[i] = _tiny_two_sided(int(c_arr.flat[i]), int(m.flat[i])) / 2.0
    p = np.where(m == 0, 1.0, p)
    return _ret(p, scalar)


def _tiny_two_sided(k: int, m: int) -> float:
    """2 * P[X <= k], X ~ Bin(m, 1/2), for a tail far below 1e-250 (log-space sum)."""

    j = np.arange(k + 1, dtype=float)
    log_terms = gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1) - m * math.log(2.0)
    return float(np.exp(logsumexp(log_terms) + math.log(2.0)))


def holm(p_values: Any) -> np.ndarray:
    """Holm step-down adjusted p-values, in the order given.

    NaN entries are left out of the family and stay NaN. Equivalent to R's
    ``p.adjust(p, "holm")`` and to statsmodels ``multipletests(p,
    method="holm")[1]`` -- computed here with NumPy because that statsmodels
    call runs ``gc.collect()`` on every Holm adjustment (0.1-0.3 s with a
    large heap), which a comparison of a million outcomes cannot afford.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        if np.any((p[ok] < 0) | (p[ok] > 1)):
            raise InputError("p-values must lie in [0, 1]")
        q = p[ok]
        order = np.argsort(q, kind="stable")
        m = q.size
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
        res = np.empty(m)
        res[order] = adj
        out[ok] = res
    return out


# --------------------------------------------------------------------------- planning


def _check_plan(delta: float, discordance: float, alpha: float, power: float | None) -> None:
    if not 0.0 < discordance <= 1.0:
        raise InputError(f"discordance must be in (0, 1], got {discordance!r}")
    if not 0.0 < abs(delta) <= discordance:
        raise InputError(f"|delta| must be in (0, discordance]: delta={delta!r}, discordance={discordance!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    if power is not None and not 0.0 < power < 1.0:
        raise InputError(f"power must be in (0, 1), got {power!r}")


def _connor_n(delta: float, psi: float, alpha: float, power: float) -> float:
    za = _sps.norm.isf(alpha / 2)  # not ppf(1 - alpha / 2): 1 - 1e-20 / 2 is 1.0 in floating point
    zb = _sps.norm.ppf(power)
    return float((za * math.sqrt(psi) + zb * math.sqrt(psi - delta * delta)) ** 2 / (delta * delta))


def _exact_reject_prob(m: np.ndarray, pi_fix: float, alpha: float) -> np.ndarray:
    """P(exact McNemar p < alpha | m discordant rows), each fixed with probability pi_fix."""
    m = np.asarray(m, dtype=float)
    # largest x with 2*cdf(x; m, 1/2) < alpha (the lower rejection bound); -1 when none
    x = _sps.binom.ppf(alpha / 2.0, m, 0.5)
    x = np.where(2.0 * _sps.binom.cdf(x, m, 0.5) < alpha, x, x - 1)
    x = np.where((x >= 0) & (2.0 * _sps.binom.cdf(x, m, 0.5) < alpha), x, -1.0)
    # p-value is symmetric: reject when X <= x or X >= m - x
    lower = np.where(x >= 0, _sps.binom.cdf(x, m, pi_fix), 0.0)
    upper = np.where(x >= 0, _sps.binom.sf(m - x - 1, m, pi_fix), 0.0)
    return np.where(m > 0, np.minimum(1.0, lower + upper), 0.0)


def mcnemar_power(n: int, delta: float, discordance: float, alpha: float = 0.05, method: str = "exact") -> float:
    """Power of a two-sided McNemar comparison of ``n`` paired rows.

    ``discordance`` is the expected share of rows that flip either way and
    ``delta`` the expected change in pass rate (``|delta| <= discordance``).
    ``method="exact"``: the exact conditional test (reject when ``p < alpha``),
    enumerating the number of discordant rows ``M ~ Bin(n, discordance)`` and
    the fixed count among them ``~ Bin(M, (discordance + |delta|) / (2 discordance))``.
    ``method="connor"``: the normal approximation of Connor (1987).
    """
    _check_plan(delta, discordance, alpha, None)
    if n < 1:
        raise InputError(f"n must be >= 1, got {n!r}")
    d = abs(delta)
    if method == "connor":
        za = _sps.norm.isf(alpha / 2)  # not ppf(1 - alpha / 2): 1 - 1e-20 / 2 is 1.0 in floating point
        if d >= discordance:
            return 1.0
        zb = (math.sqrt(n) * d - za * math.sqrt(discordance)) / math.sqrt(discordance - d * d)
        return float(_sps.norm.cdf(zb))
    if method != "exact":
        raise InputError(f"unknown power method {method!r}: use exact or connor")
    pi_fix = (discordance + d) / (2.0 * discordance)
    # M ~ Bin(n, discordance): outside its central 1 - 2e-16 the terms add nothing a double holds,
    # so the sum runs over O(sqrt(n)) values, whatever n (memory and time stay bounded)
    lo = int(_sps.binom.ppf(1e-16, n, discordance))
    hi = int(_sps.binom.isf(1e-16, n, discordance))
    m = np.arange(max(0, lo - 1), min(n, hi + 1) + 1)
    pm = _sps.binom.pmf(m, n, discordance)
    keep = pm > 1e-300
    return float(np.sum(pm[keep] * _exact_reject_prob(m[keep], pi_fix, alpha)))


def rows_needed(
    delta: float, discordance: float, alpha: float = 0.05, power: float = 0.8, method: str = "exact"
) -> int:
    """Rows needed to detect a change ``delta`` in pass rate with the exact McNemar test.

    ``method="exact"`` (default): the first n at which the exact test's power
    (see :func:`mcnemar_power`) reaches ``power``, found by a scan upward in
    steps of about 2% and refined one row at a time (the exact test's power is
    a slightly saw-toothed function of n, so a smaller n may reach it by a hair).
    ``method="connor"``: Connor's (1987) normal approximation,
    ``n = ceil((z_{1-alpha/2} sqrt(psi) + z_power sqrt(psi - delta^2))^2 / delta^2)``.

    >>> rows_needed(0.02, 0.06, method="connor")
    1175
    """
    _check_plan(delta, discordance, alpha, power)
    n_conn = math.ceil(_connor_n(abs(delta), discordance, alpha, power) - 1e-9)
    if method not in ("exact", "connor"):
        raise InputError(f"unknown method {method!r}: use connor or exact")
    if n_conn > MAX_PLAN_ROWS:
        raise InputError(
            f"about {n_conn:,} rows needed (Connor's approximation), more than {MAX_PLAN_ROWS:,}: "
            "the plan is not practical (a larger change to detect needs fewer rows)"
        )
    if method == "connor":
        return int(n_conn)
    n = max(1, int(n_conn * 0.7))
    while mcnemar_power(n, delta, discordance, alpha) >= power and n > 1:
        n = max(1, n // 2)
    step = max(1, n // 50)
    while mcnemar_power(n, delta, discordance, alpha) < power:
        n += step
        if n > 2 * MAX_PLAN_ROWS:
            raise InputError(f"more than {2 * MAX_PLAN_ROWS:,} rows needed; the plan is not practical")
    return _first_reaching(max(1, n - step), n, lambda k: mcnemar_power(k, delta, discordance, alpha) >= power)


def _first_reaching(lo: int, hi: int, reaches: Any) -> int:
    """The first n in ``[lo, hi]`` that ``reaches`` (``hi`` does): one row at a time over at most 200
    rows, else in ten finer scans (the exact power is slightly saw-toothed in n, so not a bisection)."""
    while hi - lo > 200:
        step = max(1, (hi - lo) // 10)
        k = lo
        while k < hi and not reaches(k):
            k += step
        lo, hi = max(lo, k - step), min(hi, k)
    for cand in range(lo, hi + 1):
        if reaches(cand):
            return cand
    return hi


def min_detectable_effect(
    n: int, discordance: float, alpha: float = 0.05, power: float = 0.8, method: str = "exact"
) -> float:
    """Smallest change in pass rate that ``n`` paired rows detect with the given power.

    ``method="exact"`` (default): the ``delta`` at which the exact McNemar
    test's power (:func:`mcnemar_power`, increasing in ``|delta|``) reaches
    ``power``, solved with Brent's method. ``method="connor"``: Connor's (1987)
    approximate formula inverted for ``delta``. Returns ``nan`` when even
    ``delta = psi`` (every flip in one direction) is not detectable.
    """

    _check_plan(discordance, discordance, alpha, power)
    if n < 1:
        raise InputError(f"n must be >= 1, got {n!r}")
    if method == "exact":

        def short(d: float) -> float:
            return mcnemar_power(n, d, discordance, alpha) - power

        if short(discordance) < 0:
            return float("nan")
        return float(brentq(short, 1e-9, discordance, xtol=1e-10, rtol=1e-10))
    if method != "connor":
        raise InputError(f"unknown method {method!r}: use exact or connor")
    za = float(_sps.norm.ppf(1 - alpha / 2))
    zb = float(_sps.norm.ppf(power))

    def f(d: float) -> float:
        return math.sqrt(n) * d - za * math.sqrt(discordance) - zb * math.sqrt(max(discordance - d * d, 0.0))

    if f(discordance) < 0:
        return float("nan")
    return float(brentq(f, 1e-12, discordance, xtol=1e-14, rtol=1e-12))


publish(globals())
