"""goldenkit.stats against independent values.

R is the reference the issue names; every R call is cited beside the test. The
reference numbers themselves are computed here independently of the library:
closed forms in 50-digit Decimal arithmetic, binomial tails by exact summation
with fractions.Fraction, and published tables where the literature gives them.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from goldenkit.errors import InputError, ResultsError
from goldenkit.stats import (
    OVERALL,
    clustered_se,
    collapse_repeats,
    flaky_rows,
    holm,
    mcnemar_exact,
    mcnemar_power,
    min_detectable_effect,
    paired_diff_ci,
    rows_needed,
    slice_table,
    wilson_ci,
)

getcontext().prec = 50
REL = 1e-9


def rel_close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0) or a == b


# ----------------------------------------------------------------- independent references


def z_of(confidence: float) -> Decimal:
    return Decimal(repr(NormalDist().inv_cdf(1 - (1 - confidence) / 2)))


def wilson_ref(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval by its closed form, 50 digits.

    Equals R: prop.test(k, n, correct = FALSE)$conf.int
    """
    z = z_of(confidence)
    K, N = Decimal(k), Decimal(n)
    z2 = z * z
    center = (K + z2 / 2) / (N + z2)
    half = z / (N + z2) * (K * (N - K) / N + z2 / 4).sqrt()
    return float(center - half), float(center + half)


def binom_two_sided_ref(b: int, c: int) -> float:
    """Exact two-sided McNemar p by summing comb(m, j) / 2^m with integers.

    Equals R: binom.test(min(b, c), b + c)$p.value
    """
    m = b + c
    if m == 0:
        return 1.0
    lo = min(b, c)
    term, total = 1, 0
    for j in range(lo + 1):
        if j:
            term = term * (m - j + 1) // j
        total += term
    return float(min(Fraction(1), Fraction(2 * total, 2**m)))


def holm_ref(p: list[float]) -> list[float]:
    """Holm step-down, hand-coded. Equals R: p.adjust(p, "holm")"""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def newcombe10_ref(a: int, b: int, c: int, d: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Newcombe (1998) method 10 by hand, 50 digits, for p1 - p2 with p1=(a+b)/n, p2=(a+c)/n."""
    n = a + b + c + d
    N = Decimal(n)
    p1, p2 = Decimal(a + b) / N, Decimal(a + c) / N

    def wil(k: int) -> tuple[Decimal, Decimal]:
        z = z_of(confidence)
        K = Decimal(k)
        z2 = z * z
        center = (K + z2 / 2) / (N + z2)
        half = z / (N + z2) * (K * (N - K) / N + z2 / 4).sqrt()
        lo = Decimal(0) if k == 0 else center - half
        hi = Decimal(1) if k == n else center + half
        return lo, hi

    l1, u1 = wil(a + b)
    l2, u2 = wil(a + c)
    A = Decimal(a * d - b * c)
    if A > N / 2:
        A = A - N / 2
    elif A >= 0:
        A = Decimal(0)
    marg = Decimal((a + b) * (c + d) * (a + c) * (b + d))
    phi = A / marg.sqrt() if marg > 0 else Decimal(0)
    dl = ((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2).sqrt()
    du = ((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2).sqrt()
    est = p1 - p2
    return float(est), float(max(Decimal(-1), est - dl)), float(min(Decimal(1), est + du))


# ----------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    ("k", "n"),
    [(352, 400), (356, 400), (1, 10), (9, 10), (50, 100), (3, 7), (999, 1000), (12345, 67890), (1, 1_000_000)],
)
def test_wilson_matches_closed_form(k: int, n: int) -> None:
    # R: prop.test(k, n, correct = FALSE)$conf.int
    lo, hi = wilson_ci(k, n)
    rlo, rhi = wilson_ref(k, n)
    assert rel_close(lo, rlo) and rel_close(hi, rhi)


def test_wilson_other_confidence() -> None:
    # R: prop.test(17, 40, conf.level = 0.9, correct = FALSE)$conf.int
    lo, hi = wilson_ci(17, 40, confidence=0.9)
    rlo, rhi = wilson_ref(17, 40, 0.9)
    assert rel_close(lo, rlo) and rel_close(hi, rhi)


def test_wilson_published_example() -> None:
    lo, hi = wilson_ci(352, 400)
    assert (round(lo * 100, 2), round(hi * 100, 2)) == (84.45, 90.83)
    lo, hi = wilson_ci(356, 400)
    assert (round(lo * 100, 2), round(hi * 100, 2)) == (85.55, 91.70)


def test_wilson_published_table() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Stat Med 17:857-872,
    # Table I, method 3 (score interval without continuity correction), to the 4 decimals printed there
    published = {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }
    for (k, n), interval in published.items():
        lo, hi = wilson_ci(k, n)
        assert (round(float(lo), 4), round(float(hi), 4)) == interval, (k, n)
        # and the 50-digit reference used everywhere else in this file agrees with the table
        rlo, rhi = wilson_ref(k, n)
        assert (round(max(rlo, 0.0), 4), round(rhi, 4)) == interval, (k, n)


def test_wilson_bounds_exact_at_the_edges_and_nan_for_no_rows() -> None:
    lo, hi = wilson_ci(0, 25)
    assert lo == 0.0 and rel_close(hi, wilson_ref(0, 25)[1])
    lo, hi = wilson_ci(25, 25)
    assert hi == 1.0 and rel_close(lo, wilson_ref(25, 25)[0])
    lo, hi = wilson_ci(0, 0)
    assert math.isnan(lo) and math.isnan(hi)


def test_wilson_vectorized() -> None:
    k = np.array([0, 5, 10, 0])
    n = np.array([10, 10, 10, 0])
    lo, hi = wilson_ci(k, n)
    assert lo.shape == hi.shape == (4,)
    for i in range(3):
        rlo, rhi = wilson_ref(int(k[i]), int(n[i]))
        assert lo[i] == pytest.approx(rlo, rel=REL, abs=0) and hi[i] == pytest.approx(rhi, rel=REL, abs=0)
    assert np.isnan(lo[3]) and np.isnan(hi[3])


def test_wilson_at_an_effective_sample_size_is_wilson_at_a_whole_one() -> None:
    from goldenkit.stats import wilson_ci_effective

    for k, n in ((0, 25), (7, 10), (25, 25), (352, 400)):
        assert wilson_ci_effective(k / n, float(n)) == pytest.approx(wilson_ci(k, n), rel=1e-12)
    assert wilson_ci_effective(0.0, 2.5)[0] == 0.0 and wilson_ci_effective(1.0, 2.5)[1] == 1.0
    assert all(math.isnan(b) for b in wilson_ci_effective(0.5, 0.0))
    for p_hat, n_eff in ((1.5, 3.0), (-0.1, 3.0), (0.5, -1.0), (math.nan, 3.0), (0.5, math.inf)):
        with pytest.raises(InputError):
            wilson_ci_effective(p_hat, n_eff)


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(InputError):
        wilson_ci(5, 3)
    with pytest.raises(InputError):
        wilson_ci(-1, 3)
    with pytest.raises(InputError):
        wilson_ci(1.5, 3)
    with pytest.raises(InputError):
        wilson_ci(1, 3, confidence=1.0)


@given(st.integers(0, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))).filter(lambda t: t[1] > 0))
@settings(max_examples=200, deadline=None)
def test_wilson_contains_k_over_n(kn: tuple[int, int]) -> None:
    k, n = kn
    lo, hi = wilson_ci(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


# ----------------------------------------------------------------- McNemar


@pytest.mark.parametrize(
    ("b", "c"),
    [(10, 14), (8, 1), (2, 13), (6, 16), (0, 5), (5, 0), (1, 1), (0, 1), (37, 61), (250, 310), (5000, 5000)],
)
def test_mcnemar_matches_exact_summation(b: int, c: int) -> None:
    # R: binom.test(min(b, c), b + c)$p.value  (not mcnemar.test, which is the chi-square test)
    assert rel_close(mcnemar_exact(b, c), binom_two_sided_ref(b, c))


def test_mcnemar_published_values() -> None:
    assert round(mcnemar_exact(10, 14), 4) == 0.5413
    assert round(mcnemar_exact(8, 1), 4) == 0.0391
    assert round(mcnemar_exact(2, 13), 5) == 0.00739
    # Fagerland, Lydersen & Laake (2017), ch. 8, Cavo et al. 2012 table: exact conditional P = 0.052479
    assert round(mcnemar_exact(6, 16), 6) == 0.052479


def test_mcnemar_no_underflow_at_thousands_of_flips() -> None:
    assert mcnemar_exact(5000, 5000) == 1.0
    # 10,000 vs 10,400 flips: a naive 0.5 ** 20400 sum is 0; the exact value is about 0.005
    p = mcnemar_exact(10_000, 10_400)
    assert p > 0 and rel_close(p, binom_two_sided_ref(10_000, 10_400), 1e-8)
    assert mcnemar_exact(0, 0) == 1.0
    # tails far in the double range that a plain binomial CDF underflows to 0
    for b, c in ((30, 1120), (10, 1065), (0, 1000), (5, 1065)):
        assert rel_close(mcnemar_exact(b, c), binom_two_sided_ref(b, c), 1e-9)


def test_mcnemar_vectorized() -> None:
    p = mcnemar_exact(np.array([8, 2, 0]), np.array([1, 13, 0]))
    assert p.shape == (3,) and p[2] == 1.0
    assert rel_close(float(p[0]), 20 / 512)


@given(st.integers(0, 3000), st.integers(0, 3000))
@settings(max_examples=150, deadline=None)
def test_mcnemar_symmetric_and_a_probability(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert p == mcnemar_exact(c, b)
    assert 0.0 <= p <= 1.0
    if p == 0.0:  # only where the true p is below the smallest double: 2 C(m, k) / 2^m < 5e-324
        m, k = b + c, min(b, c)
        log_low = math.log(2) + math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1) - m * math.log(2)
        assert log_low < math.log(5e-324)


# ----------------------------------------------------------------- Holm


def test_holm_matches_hand_step_down_in_input_order() -> None:
    p = [0.0391, 0.00739, 0.2, 0.04, 0.001, 0.7]
    # R: p.adjust(c(0.0391, 0.00739, 0.2, 0.04, 0.001, 0.7), "holm")
    got = holm(p)
    ref = holm_ref(p)
    assert all(rel_close(float(g), r) for g, r in zip(got, ref, strict=True))
    # the worked example: two families 0.0391 and 0.00739 -> 0.0391 and 0.0148
    adj = holm([mcnemar_exact(8, 1), mcnemar_exact(2, 13)])
    assert round(adj[0], 4) == 0.0391 and round(adj[1], 4) == 0.0148


def test_holm_keeps_nan_out_of_the_family() -> None:
    got = holm([0.01, float("nan"), 0.04])
    assert math.isnan(got[1])
    assert got[0] == pytest.approx(0.02) and got[2] == pytest.approx(0.04)
    assert holm([]).shape == (0,)


@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
@settings(max_examples=150, deadline=None)
def test_holm_properties(p: list[float]) -> None:
    adj = holm(p)
    ref = holm_ref(p)
    assert all(a >= raw - 1e-15 for a, raw in zip(adj, p, strict=True))
    assert all(a <= 1.0 for a in adj)
    order = np.argsort(p, kind="stable")
    assert all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p
    assert np.allclose(adj, ref, rtol=1e-12, atol=0)


def test_holm_agrees_with_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for size in (1, 2, 5, 40):
        p = rng.uniform(0, 0.2, size)
        assert np.allclose(holm(p), multipletests(p, method="holm")[1], rtol=1e-14, atol=0)


# ----------------------------------------------------------------- paired difference


def test_paired_diff_published_example() -> None:
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8:
    # Cavo et al. (2012) table [[59, 6], [16, 80]], Newcombe square-and-add: -0.0621 (-0.1186 to -0.0046)
    est, lo, hi = paired_diff_ci(59, 6, 16, 80)
    assert (round(est, 4), round(lo, 4), round(hi, 4)) == (-0.0621, -0.1186, -0.0046)


@pytest.mark.parametrize(
    "table",
    [(59, 6, 16, 80), (1, 1, 7, 12), (36, 12, 2, 0), (342, 14, 10, 34), (0, 0, 0, 10), (5, 0, 0, 5), (0, 3, 4, 0)],
)
def test_paired_diff_matches_hand_computation(table: tuple[int, int, int, int]) -> None:
    est, lo, hi = paired_diff_ci(*table)
    r_est, r_lo, r_hi = newcombe10_ref(*table)
    for got, ref in ((est, r_est), (lo, r_lo), (hi, r_hi)):
        assert got == pytest.approx(ref, rel=REL, abs=1e-15)


def test_paired_diff_vectorized_and_empty() -> None:
    est, lo, hi = paired_diff_ci(np.array([59, 0]), np.array([6, 0]), np.array([16, 0]), np.array([80, 0]))
    assert round(float(lo[0]), 4) == -0.1186 and math.isnan(est[1]) and math.isnan(hi[1])


@given(st.integers(0, 200), st.integers(0, 60), st.integers(0, 60), st.integers(0, 200))
@settings(max_examples=150, deadline=None)
def test_paired_diff_contains_the_estimate(a: int, b: int, c: int, d: int) -> None:
    if a + b + c + d == 0:
        return
    est, lo, hi = paired_diff_ci(a, b, c, d)
    assert -1.0 <= lo <= est + 1e-12 and est - 1e-12 <= hi <= 1.0
    # swapping the two sides mirrors the interval
    est2, lo2, hi2 = paired_diff_ci(a, c, b, d)
    assert est2 == pytest.approx(-est) and lo2 == pytest.approx(-hi) and hi2 == pytest.approx(-lo)


# ----------------------------------------------------------------- clustered SE


def test_clustered_se_matches_exact_formula() -> None:
    # Miller (2024), "Adding Error Bars to Evals": Var = (1/n^2) sum_c (sum_{i in c} (s_i - mean))^2
    scores = [1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0.5]
    groups = ["a", "a", "a", "b", "b", "c", "c", "c", "c", "d", "d", "d"]
    n = len(scores)
    s = [Fraction(x).limit_denominator() for x in scores]
    mean = sum(s) / n
    per: dict[str, Fraction] = {}
    for x, g in zip(s, groups, strict=True):
        per[g] = per.get(g, Fraction(0)) + (x - mean)
    var = sum(v * v for v in per.values()) / (n * n)
    ref = float(Decimal(var.numerator) / Decimal(var.denominator)) ** 0.5
    res = clustered_se(scores, groups)
    assert res.se == pytest.approx(ref, rel=1e-12)
    assert res.mean == pytest.approx(float(mean)) and res.n == n and res.clusters == 4
    iid = float(np.std(scores, ddof=1) / math.sqrt(n))
    assert res.se_iid == pytest.approx(iid, rel=1e-12)
    # statsmodels' small-sample correction multiplies the variance by G/(G-1)
    corrected = clustered_se(scores, groups, small_sample=True)
    assert corrected.se == pytest.approx(ref * math.sqrt(4 / 3), rel=1e-12)


def test_clustered_se_dataframe_and_singletons() -> None:
    df = pd.DataFrame({"conv": ["x", "y", "z", "w"], "score": [1.0, 0.0, 1.0, 1.0]})
    res = clustered_se(df, "conv", "score")
    # every row its own cluster: sqrt(sum (s - mean)^2) / n
    assert res.se == pytest.approx(math.sqrt(sum((v - 0.75) ** 2 for v in [1, 0, 1, 1])) / 4, rel=1e-12)
    with pytest.raises(InputError):
        clustered_se([1, 0, 1], ["a", "a", "a"])
    with pytest.raises(InputError):
        clustered_se(df, "nope", "score")


def test_clustered_se_grows_with_correlated_clusters() -> None:
    scores = [1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    groups = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    res = clustered_se(scores, groups)
    assert res.se > res.se_iid and res.design_effect > 2


# ----------------------------------------------------------------- planning


def connor_ref(delta: float, psi: float, alpha: float, power: float) -> float:
    nd = NormalDist()
    za, zb = nd.inv_cdf(1 - alpha / 2), nd.inv_cdf(power)
    return (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2


@pytest.mark.parametrize(
    ("delta", "psi", "alpha", "power"),
    [(0.02, 0.06, 0.05, 0.8), (0.05, 0.2, 0.05, 0.9), (0.1, 0.3, 0.01, 0.8), (0.03, 0.03, 0.05, 0.8)],
)
def test_rows_needed_connor(delta: float, psi: float, alpha: float, power: float) -> None:
    # Connor (1987), Biometrics 43:207-211 (the approximation, on request)
    n = rows_needed(delta, psi, alpha, power, method="connor")
    assert n == math.ceil(connor_ref(delta, psi, alpha, power))
    assert rows_needed(-delta, psi, alpha, power, method="connor") == n


def test_rows_needed_worked_plan() -> None:
    # (1.95996 * sqrt(.06) + 0.84162 * sqrt(.0596))^2 / .0004 = 1174.98...
    assert rows_needed(0.02, 0.06, method="connor") == 1175
    # the default is the exact test the gate uses; Connor's n falls short of 80% exact power
    n = rows_needed(0.02, 0.06)
    assert n == rows_needed(0.02, 0.06, method="exact") == 1244
    assert mcnemar_power(1175, 0.02, 0.06) < 0.8 <= mcnemar_power(n, 0.02, 0.06)


def exact_power_ref(n: int, p_fix: Fraction, p_break: Fraction, alpha: Fraction) -> float:
    """Power of the exact McNemar test by enumerating the trinomial (fixed, broke, unchanged)."""
    p_same = 1 - p_fix - p_break
    total = Fraction(0)
    for x in range(n + 1):
        for y in range(n + 1 - x):
            m = x + y
            lo = min(x, y)
            tail = sum(math.comb(m, j) for j in range(lo + 1))
            p = min(Fraction(1), Fraction(2 * tail, 2**m)) if m else Fraction(1)
            if p < alpha:
                coef = math.factorial(n) // (math.factorial(x) * math.factorial(y) * math.factorial(n - m))
                total += coef * p_fix**x * p_break**y * p_same ** (n - m)
    return float(total)


@pytest.mark.parametrize(("n", "delta", "psi"), [(40, 0.15, 0.25), (25, 0.2, 0.4), (60, 0.05, 0.15)])
def test_exact_power_matches_trinomial_enumeration(n: int, delta: float, psi: float) -> None:
    d, p = Fraction(delta).limit_denominator(1000), Fraction(psi).limit_denominator(1000)
    ref = exact_power_ref(n, (p + d) / 2, (p - d) / 2, Fraction(1, 20))
    assert mcnemar_power(n, delta, psi, 0.05) == pytest.approx(ref, rel=1e-9)


def test_rows_needed_exact_is_the_first_n_reaching_the_power() -> None:
    n = rows_needed(0.1, 0.3, 0.05, 0.8)
    assert n == rows_needed(0.1, 0.3, 0.05, 0.8, method="exact")
    assert mcnemar_power(n, 0.1, 0.3) >= 0.8 > mcnemar_power(n - 1, 0.1, 0.3)
    # the normal approximation is close to (and, for the conservative exact test, below) the exact answer
    assert abs(n - rows_needed(0.1, 0.3, method="connor")) / n < 0.15


def test_rows_needed_default_against_trinomial_enumeration() -> None:
    # independent: exact rational enumeration of every (fixed, broke) split of n rows
    n = rows_needed(0.2, 0.4, 0.05, 0.8)
    p_fix, p_break = Fraction(3, 10), Fraction(1, 10)  # (psi + delta) / 2, (psi - delta) / 2
    assert exact_power_ref(n, p_fix, p_break, Fraction(1, 20)) >= 0.8
    assert exact_power_ref(n - 1, p_fix, p_break, Fraction(1, 20)) < 0.8


def test_min_detectable_effect_exact_by_default_connor_on_request() -> None:
    n = rows_needed(0.02, 0.06)
    mde = min_detectable_effect(n, 0.06)
    assert mcnemar_power(n, mde, 0.06) == pytest.approx(0.8, abs=1e-6)  # the exact test's power at the MDE
    assert mde <= 0.02 and rows_needed(mde * 1.0001, 0.06) <= n
    n_c = rows_needed(0.02, 0.06, method="connor")
    assert mcnemar_power(n_c, 0.02, 0.06, method="connor") >= 0.8
    mde_c = min_detectable_effect(n_c, 0.06, method="connor")
    assert connor_ref(mde_c, 0.06, 0.05, 0.8) == pytest.approx(n_c, rel=1e-9)
    assert math.isnan(min_detectable_effect(3, 0.06)) and math.isnan(min_detectable_effect(3, 0.06, method="connor"))
    with pytest.raises(InputError):
        min_detectable_effect(100, 0.06, method="normal")


def test_planning_rejects_impossible_inputs() -> None:
    with pytest.raises(InputError):
        rows_needed(0.1, 0.05)  # more change than flips
    with pytest.raises(InputError):
        rows_needed(0.0, 0.05)
    with pytest.raises(InputError):
        rows_needed(0.02, 0.06, power=1.2)


# ----------------------------------------------------------------- collapsing


def frame(rows: list[tuple[str, str, list[str]]]) -> pd.DataFrame:
    recs = [
        {"row_id": rid, "slice": s, "repeat": i, "verdict": v, "tags": ["t"]}
        for rid, s, vs in rows
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(recs)


CASES = [
    ("ppp", "a", ["PASS", "PASS", "PASS"]),
    ("ppf", "a", ["PASS", "PASS", "FAIL"]),
    ("pff", "a", ["PASS", "FAIL", "FAIL"]),
    ("fff", "b", ["FAIL", "FAIL", "FAIL"]),
    ("pef", "b", ["PASS", "ERROR", "FAIL"]),  # tie among graded repeats
    ("pep", "b", ["PASS", "ERROR", "PASS"]),
    ("eee", "b", ["ERROR", "ERROR", "ERROR"]),
    ("sss", "a", ["SKIPPED", "SKIPPED", "SKIPPED"]),
    ("ses", "a", ["SKIPPED", "ERROR", "SKIPPED"]),
    ("psf", "a", ["PASS", "SKIPPED", "SKIPPED"]),
]


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        # pef: the graded repeats tie only because a repeat errored -> undecided (ERROR), never FAIL
        ("majority", ["PASS", "PASS", "FAIL", "FAIL", "ERROR", "PASS", "ERROR", "SKIPPED", "ERROR", "PASS"]),
        # all, pep: the errored repeat could have been a FAIL -> undecided; pef: the FAIL decides
        ("all", ["PASS", "FAIL", "FAIL", "FAIL", "FAIL", "ERROR", "ERROR", "SKIPPED", "ERROR", "PASS"]),
        ("any", ["PASS", "PASS", "PASS", "FAIL", "PASS", "PASS", "ERROR", "SKIPPED", "ERROR", "PASS"]),
        # at_least:2, pef: 1 pass, and the errored repeat could have been the second -> undecided
        ("at_least:2", ["PASS", "PASS", "FAIL", "FAIL", "ERROR", "PASS", "ERROR", "SKIPPED", "ERROR", "FAIL"]),
    ],
)
def test_collapse_rules(rule: str, expected: list[str]) -> None:
    c = collapse_repeats(frame(CASES), rule)
    assert c["row_id"].tolist() == [r[0] for r in CASES]
    assert c["verdict"].astype(str).tolist() == expected


def test_collapse_counts_and_flaky() -> None:
    c = collapse_repeats(frame(CASES)).set_index("row_id")
    assert c.loc["pef", ["n_pass", "n_fail", "n_error", "n_skipped", "n_graded", "attempts"]].tolist() == [
        1,
        1,
        1,
        0,
        2,
        3,
    ]
    assert c["flaky"].to_dict() == {
        "ppp": False,
        "ppf": True,
        "pff": True,
        "fff": False,
        "pef": True,
        "pep": False,
        "eee": False,
        "sss": False,
        "ses": False,
        "psf": False,
    }
    assert c.loc["ppf", "slice"] == "a" and c.loc["ppf", "tags"] == ["t"]
    assert c["undecided"].to_dict() == {
        "ppp": False,
        "ppf": False,
        "pff": False,
        "fff": False,
        "pef": True,
        "pep": False,
        "eee": False,
        "sss": False,
        "ses": False,
        "psf": False,
    }


def test_an_error_repeat_never_decides_a_row() -> None:
    rows = [
        ("tie-by-error", "a", ["PASS", "FAIL", "ERROR"]),  # undecided
        ("tie-no-error", "a", ["PASS", "FAIL"]),  # a pass must be earned: FAIL
        ("ppe", "a", ["PASS", "PASS", "ERROR"]),  # 2 of 2 graded: PASS whatever the error was
        ("ffe", "a", ["FAIL", "FAIL", "ERROR"]),
        ("pfe-e", "a", ["PASS", "FAIL", "ERROR", "ERROR"]),
    ]
    c = collapse_repeats(frame(rows)).set_index("row_id")
    assert c["verdict"].astype(str).to_dict() == {
        "tie-by-error": "ERROR",
        "tie-no-error": "FAIL",
        "ppe": "PASS",
        "ffe": "FAIL",
        "pfe-e": "ERROR",
    }
    t = slice_table(c.reset_index()).set_index("slice").loc["a"]
    # the undecided rows are error rows, outside the pass rate's n
    assert (t["n"], t["k"], t["error_rows"]) == (3, 1, 2)


def _short(code: str) -> list[str]:
    return [{"P": "PASS", "F": "FAIL", "E": "ERROR", "S": "SKIPPED"}[ch] for ch in code]


@pytest.mark.parametrize(
    ("rule", "repeats", "expected"),
    [
        # the rule's examples, as the docs give them (majority over 3 repeats, then all and any)
        pytest.param("majority", "PPE", "PASS", id="majority-P,P,E-is-PASS"),
        pytest.param("majority", "PEE", "UNDECIDED", id="majority-P,E,E-is-UNDECIDED"),
        pytest.param("majority", "PFE", "UNDECIDED", id="majority-P,F,E-is-UNDECIDED"),
        pytest.param("majority", "FFE", "FAIL", id="majority-F,F,E-is-FAIL"),
        pytest.param("all", "PPE", "UNDECIDED", id="all-P,P,E-is-UNDECIDED"),
        pytest.param("any", "FEE", "UNDECIDED", id="any-F,E,E-is-UNDECIDED"),
        # and around them
        pytest.param("majority", "FEE", "UNDECIDED", id="majority-F,E,E-is-UNDECIDED"),
        pytest.param("majority", "PE", "UNDECIDED", id="majority-P,E-is-UNDECIDED"),
        pytest.param("majority", "PF", "FAIL", id="majority-P,F-tie-is-FAIL"),
        pytest.param("majority", "PPFE", "UNDECIDED", id="majority-P,P,F,E-is-UNDECIDED"),
        pytest.param("majority", "PPPFE", "PASS", id="majority-P,P,P,F,E-is-PASS"),
        pytest.param("majority", "PSE", "UNDECIDED", id="majority-P,S,E-skipped-not-in-the-vote"),
        pytest.param("majority", "PSS", "PASS", id="majority-P,S,S-is-PASS"),
        pytest.param("all", "PFE", "FAIL", id="all-P,F,E-is-FAIL"),
        pytest.param("all", "PPS", "PASS", id="all-P,P,S-is-PASS"),
        pytest.param("any", "PEE", "PASS", id="any-P,E,E-is-PASS"),
        pytest.param("any", "FFF", "FAIL", id="any-F,F,F-is-FAIL"),
        pytest.param("at_least:2", "PEE", "UNDECIDED", id="at_least:2-P,E,E-is-UNDECIDED"),
        pytest.param("at_least:2", "PPE", "PASS", id="at_least:2-P,P,E-is-PASS"),
        pytest.param("at_least:4", "PPE", "FAIL", id="at_least:4-P,P,E-cannot-reach-4"),
        pytest.param("majority", "EEE", "ERROR", id="majority-E,E,E-is-ERROR"),
        pytest.param("at_least:4", "EEE", "ERROR", id="at_least:4-E,E,E-is-ERROR"),
        pytest.param("majority", "ESS", "ERROR", id="majority-E,S,S-is-ERROR"),
        pytest.param("all", "SSS", "SKIPPED", id="all-S,S,S-is-SKIPPED"),
    ],
)
def test_an_errored_repeat_never_decides_by_example(rule: str, repeats: str, expected: str) -> None:
    c = collapse_repeats(frame([("r", "a", _short(repeats))]), rule).iloc[0]
    verdict = "ERROR" if expected == "UNDECIDED" else expected  # an undecided row is an error row
    assert (str(c["verdict"]), bool(c["undecided"])) == (verdict, expected == "UNDECIDED")


def test_collapse_counts_the_candidates_errors_and_names_the_kind() -> None:
    # row: (repeats, recorded error_kind of each repeat, n_candidate_errors, error_kind of the row)
    cases: dict[str, tuple[str, list[str | None], int, str | None]] = {
        # undecided: a refused repeat (recorded under the old name) names the row, not the transient one
        "x": ("EEP", ["permanent", "transient", None], 1, "refused"),
        # FAIL: not an error row, so no kind, whatever errored
        "y": ("EFF", ["transient", None, None], 0, None),
        # agent against two graders: the candidate's own kind first
        "z": ("EEE", ["grader", "agent", "grader"], 1, "agent"),
        # grader 1, simulator 1: equal counts go to the first in ERROR_KINDS
        "w": ("EES", ["simulator", "grader", None], 0, "grader"),
        # a missing and an unknown kind read as infrastructure: 2 against 1 transient
        "v": ("EEE", [None, "transient", "weird"], 0, "infrastructure"),
        # refused 1, agent 2: the more frequent of the candidate's kinds
        "u": ("EEE", ["refused", "agent", "agent"], 3, "agent"),
    }
    df = frame([(rid, "a", _short(reps)) for rid, (reps, _, _, _) in cases.items()])
    df["error_kind"] = [k for _, kinds, _, _ in cases.values() for k in kinds]
    c = collapse_repeats(df).set_index("row_id")
    assert c["n_candidate_errors"].to_dict() == {rid: want[2] for rid, want in cases.items()}
    assert c["n_permanent"].to_dict() == c["n_candidate_errors"].to_dict()  # the old name, for one release
    assert c["error_kind"].to_dict() == {rid: want[3] for rid, want in cases.items()}
    assert c["error_kind"].dtype == object
    same = collapse_repeats(df.astype({"error_kind": "category"})).set_index("row_id")
    assert same["error_kind"].to_dict() == c["error_kind"].to_dict()
    assert "error_kind" not in collapse_repeats(df.drop(columns="error_kind")).columns


def test_collapse_refuses_bad_input() -> None:
    df = frame([("x", "a", ["PASS", "FAIL"])])
    dup = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    with pytest.raises(ResultsError, match="row 'x' repeat 0 appears more than once"):
        collapse_repeats(dup)
    bad = df.assign(verdict=["PASS", "MAYBE"])
    with pytest.raises(ResultsError, match="MAYBE"):
        collapse_repeats(bad)
    with pytest.raises(InputError, match="collapse rule"):
        collapse_repeats(df, "most")
    with pytest.raises(InputError):
        collapse_repeats(df, "at_least:0")


def test_collapse_accepts_categoricals() -> None:
    df = frame(CASES)
    cat = df.astype({"row_id": "category", "slice": "category", "verdict": "category"})
    a = collapse_repeats(df)
    b = collapse_repeats(cat)
    assert a["verdict"].astype(str).tolist() == b["verdict"].astype(str).tolist()
    assert a["row_id"].astype(str).tolist() == b["row_id"].astype(str).tolist()


def test_flaky_rows_most_unstable_first() -> None:
    f = flaky_rows(frame(CASES))
    assert set(f["row_id"]) == {"ppf", "pff", "pef"}
    assert f["row_id"].iloc[0] == "pef"  # 1 of 2 graded: closest to a coin flip
    assert f["pass_fraction"].iloc[0] == 0.5


def test_slice_table_counts_rows_not_attempts() -> None:
    t = slice_table(frame(CASES)).set_index("slice")
    assert list(t.index) == ["a", "b", OVERALL]
    a = t.loc["a"]
    # slice a: ppp ppf pff sss ses psf -> graded rows ppp ppf pff psf, passing ppp ppf psf
    assert (a["rows"], a["attempts"], a["n"], a["k"]) == (6, 18, 4, 3)
    assert (a["pass"], a["fail"], a["error"], a["skipped"]) == (7, 3, 1, 7)
    assert (a["error_rows"], a["skipped_rows"], a["flaky"]) == (1, 1, 2)
    lo, hi = wilson_ref(3, 4)
    assert a["ci_low"] == pytest.approx(lo, rel=REL) and a["ci_high"] == pytest.approx(hi, rel=REL)
    assert a["attempt_p_hat"] == pytest.approx(7 / 10)
    o = t.loc[OVERALL]
    # slice b: fff pef pep eee -> graded fff pep (pef is undecided: an error row), passing pep
    assert (o["rows"], o["n"], o["k"], o["error_rows"]) == (10, 6, 4, 3)
    assert o["p_hat"] == pytest.approx(4 / 6)


def test_slice_table_of_empty_and_by_other_column() -> None:
    t = slice_table(frame(CASES).assign(split="dev"), by="split")
    assert t["split"].tolist() == ["dev", OVERALL]
    empty = slice_table(frame([("x", "a", ["SKIPPED"])]))
    assert empty["n"].tolist() == [0, 0] and empty["p_hat"].isna().all() and empty["ci_low"].isna().all()
    with pytest.raises(InputError):
        slice_table(frame(CASES), by="nope")


def test_rows_needed_stays_finite_for_a_tiny_alpha() -> None:
    from goldenkit.stats import rows_needed

    # z_{1 - alpha/2} for alpha = 1e-20 is 9.336045 (qnorm(1e-20 / 2, lower.tail = FALSE) in R; the normal
    # tail phi(z) / z * (1 - 1 / z^2) at that z is 5.0e-21, as it must be)
    n = rows_needed(0.02, 0.06, alpha=1e-20, method="connor")
    z, zb = 9.336045, 0.841621
    expected = math.ceil((z * math.sqrt(0.06) + zb * math.sqrt(0.06 - 0.0004)) ** 2 / 0.0004)
    assert abs(n - expected) <= 2 and n > rows_needed(0.02, 0.06, alpha=1e-12, method="connor")
