"""The sequential paired test (goldenkit.stats.sequential_paired_test): its error rates, its values, its invariants.

The error rates are shown by simulation: 10,000 random orders of a 400-row
population per case, whole paths at once through the same vectorized functions
the public function calls, and each rate's binomial upper 99% confidence limit
(Clopper-Pearson) must lie below alpha.

The confidence sequence is checked against the reference implementation of
Waudby-Smith & Ramdas, the ``confseq`` package (0.0.11, the latest): its values
were computed once with ``confseq.predmix.predmix_empbern_lower_cs(y, alpha,
running_intersection=True, N=N)`` and are cited below. ``confseq`` is not a test
dependency: it builds only from source (it needs the Boost headers and a
pybind11 older than Python 3.11 supports) and fails to import under NumPy 2
(``np.float_``). A step-by-step scalar implementation of the paper's formulas,
written here in plain Python, is compared on random inputs besides. The
e-value's closed form is checked against exact rational integration and
against ``scipy.integrate.quad``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate
from scipy.stats import binomtest

from goldenkit.errors import InputError
from goldenkit.stats import SequentialTest, sequential_paired_test, sequential_path
from goldenkit.stats._sequential import DECISIONS, _decide, _log_e_value, _path_matrix, _wor_eb_lower

N = 400
SIMS = 10_000
ALPHA = 0.05
MARGIN = 0.05
REGRESSION, NON_INFERIOR = DECISIONS.index("regression"), DECISIONS.index("non_inferior")


# --------------------------------------------------------------------------- simulation helpers


def _population(broke: int, fixed: int, rows: int = N) -> np.ndarray[Any, Any]:
    """A population of per-row drops: ``broke`` rows of +1, ``fixed`` rows of -1, the rest 0."""
    d = np.zeros(rows, dtype=np.int8)
    d[:broke] = 1
    d[broke : broke + fixed] = -1
    return d


def _simulate(d: np.ndarray[Any, Any], seed: int, margin: float = MARGIN) -> dict[str, np.ndarray[Any, Any]]:
    """SIMS uniformly random orders of the population ``d``: the decision code and step of each, and whether
    the confidence sequence alone (regression ignored) ever went below the margin."""
    rng = np.random.default_rng(seed)
    codes, steps, cs_pass = [], [], []
    for _ in range(SIMS // 2500):  # 2,500 runs at a time: bounded memory
        rows = d[np.argsort(rng.random((2500, d.size)), axis=1)]
        path = _path_matrix((rows == 1).astype(np.int8), (rows == -1).astype(np.int8), d.size, ALPHA, ALPHA)
        code, step = _decide(path, margin, ALPHA)
        codes.append(code)
        steps.append(step)
        cs_pass.append((path["drop_high"] < margin).any(axis=1))
    return {"code": np.concatenate(codes), "step": np.concatenate(steps), "cs_pass": np.concatenate(cs_pass)}


def _upper_99(events: int) -> float:
    """Clopper-Pearson upper limit of a rate of ``events`` in SIMS runs (two-sided 99% interval)."""
    return float(binomtest(events, SIMS).proportion_ci(confidence_level=0.99, method="exact").high)


# --------------------------------------------------------------------------- error rates and power


def test_no_change_fails_less_often_than_alpha_and_passes_most_runs() -> None:
    sims = _simulate(_population(20, 20), seed=1)  # 10% discordant rows: 5% broke, 5% fixed
    false_fail = int((sims["code"] == REGRESSION).sum())
    assert _upper_99(false_fail) < ALPHA, false_fail
    passed = sims["code"] == NON_INFERIOR
    assert passed.mean() > 0.95  # observed: 99.4%, median step 226 of 400
    assert np.median(sims["step"][passed]) < 0.7 * N


@pytest.mark.parametrize(("broke", "fixed"), [(20, 0), (30, 10), (120, 100)])
def test_a_drop_equal_to_the_margin_passes_less_often_than_alpha(broke: int, fixed: int) -> None:
    d = _population(broke, fixed)
    assert d.sum() / N == MARGIN  # the population's exact mean drop is the margin
    sims = _simulate(d, seed=2 + broke)
    assert _upper_99(int((sims["code"] == NON_INFERIOR).sum())) < ALPHA
    # the confidence sequence alone, as if the regression test never stopped the run first
    assert _upper_99(int(sims["cs_pass"].sum())) < ALPHA


def test_a_15_point_regression_is_shown_early() -> None:
    sims = _simulate(_population(70, 10), seed=3)  # drop 60 / 400 = 0.15
    shown = sims["code"] == REGRESSION
    assert shown.mean() > 0.99
    assert np.median(sims["step"][shown]) < 0.3 * N  # observed: median step 54 of 400


def test_a_5_point_gain_is_non_inferior() -> None:
    sims = _simulate(_population(10, 30), seed=4)  # drop -20 / 400 = -0.05
    passed = sims["code"] == NON_INFERIOR
    assert passed.mean() > 0.99
    assert np.median(sims["step"][passed]) < 0.5 * N  # observed: median step 122 of 400


def test_the_public_function_decides_as_the_simulated_paths() -> None:
    rng = np.random.default_rng(5)
    d = _population(40, 20)
    for _ in range(40):
        rows = d[rng.permutation(N)]
        base, cand = (rows >= 0).astype(int), (rows <= 0).astype(int)  # broke: 1 -> 0; fixed: 0 -> 1
        path = _path_matrix((rows == 1)[None].astype(np.int8), (rows == -1)[None].astype(np.int8), N, ALPHA, ALPHA)
        code, step = _decide(path, MARGIN, ALPHA)
        res = sequential_paired_test(base, cand, population=N)
        assert (res.decision, res.step) == (DECISIONS[code[0]], int(step[0]) or None)
        at = (res.step or N) - 1
        assert (res.b, res.c) == (int((rows[: at + 1] == 1).sum()), int((rows[: at + 1] == -1).sum()))
        assert res.drop == rows[: at + 1].sum() / (at + 1)


# --------------------------------------------------------------------------- the confidence sequence's values

# confseq 0.0.11: predmix_empbern_lower_cs(y, alpha, running_intersection=True, N=N) at the given steps,
# for y = (1 - d) / 2 and for 1 - y (the lower bounds behind drop_high and drop_low)
SEQ_A = [0, 0, 1, 0, -1, 0, 0, 0, 1, 0] * 6  # N = 60, alpha = 0.05, every row run
CONFSEQ_A = [
    (5, 0.0, 0.0),
    (15, 0.07552869747245061, 0.1548790976878926),
    (20, 0.17128955721933303, 0.268594868993256),
    (30, 0.28016050228969364, 0.37743381160977774),
    (40, 0.33859792186628124, 0.4358152530597084),
    (60, 0.42353101745917, 0.5202352448602731),
]
SEQ_B = [1 if i % 9 == 0 else (-1 if i % 13 == 0 else 0) for i in range(1, 81)]  # N = 200, alpha = 0.1
CONFSEQ_B = [
    (1, 0.0, 0.0),
    (9, 0.0, 0.03204223164924924),
    (13, 0.13264345248939874, 0.1521670716211398),
    (27, 0.3145937629662505, 0.3381864315017315),
    (40, 0.36530337788463524, 0.39924329592660696),
    (80, 0.4265959875890909, 0.4572154808970186),
]


@pytest.mark.parametrize(
    ("seq", "population", "alpha", "table"), [(SEQ_A, 60, 0.05, CONFSEQ_A), (SEQ_B, 200, 0.1, CONFSEQ_B)]
)
def test_the_confidence_sequence_equals_confseq(
    seq: list[int], population: int, alpha: float, table: list[tuple[int, float, float]]
) -> None:
    y = (1.0 - np.asarray(seq, dtype=float)) / 2.0
    low_y, low_not_y = _wor_eb_lower(y[None], alpha, population)[0], _wor_eb_lower(1.0 - y[None], alpha, population)[0]
    d = np.asarray(seq)
    path = sequential_path(
        (d >= 0).astype(int), (d <= 0).astype(int), population=population, alpha=alpha
    )  # broke: 1 -> 0; fixed: 0 -> 1
    s = np.cumsum(d)
    for step, ref_y, ref_not_y in table:
        assert low_y[step - 1] == pytest.approx(ref_y, abs=1e-9)
        assert low_not_y[step - 1] == pytest.approx(ref_not_y, abs=1e-9)
        band = ((s[step - 1] - (population - step)) / population, (s[step - 1] + (population - step)) / population)
        assert path["drop_high"][step - 1] == pytest.approx(np.clip(1 - 2 * ref_y, *band), abs=1e-9)
        assert path["drop_low"][step - 1] == pytest.approx(np.clip(2 * ref_not_y - 1, *band), abs=1e-9)


def _reference_lower(x: list[float], alpha: float, population: int) -> list[float]:
    """The predictable-mixture empirical-Bernstein lower sequence without replacement, one row at a time.

    Waudby-Smith & Ramdas (2020), predictable-mixture empirical Bernstein, with the bets and variance terms of
    confseq's ``predmix_empbern_lower_cs`` (truncation 1/2, one fake observation of
    mean 1/2 and variance 1/4 in the bets; ``v_i = (x_i - mean_{i-1})^2``, mean_0 = 0).
    """
    out, best = [], 0.0
    total = sq = num = den = pen = 0.0
    sigma2_prev, mean_prev = 0.25, 0.0
    for i, xi in enumerate(x, start=1):
        lam = min(0.5, math.sqrt(2 * math.log(1 / alpha) / (sigma2_prev * i * math.log(1 + i))))
        num += lam * (xi + total / (population - i + 1))
        den += lam * (1 + (i - 1) / (population - i + 1))
        pen += (xi - mean_prev) ** 2 * (-math.log(1 - lam) - lam)
        total += xi
        reg_mean = min((0.5 + total) / (i + 1), 1.0)
        sq += (xi - reg_mean) ** 2
        sigma2_prev, mean_prev = (0.25 + sq) / (i + 1), total / i
        best = max(best, num / den - (math.log(1 / alpha) + pen) / den, 0.0)
        out.append(best)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=150),
    st.integers(min_value=0, max_value=200),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_the_confidence_sequence_equals_a_row_by_row_computation(x: list[float], extra: int, alpha: float) -> None:
    population = len(x) + extra
    got = _wor_eb_lower(np.asarray([x]), alpha, population)[0]
    np.testing.assert_allclose(got, _reference_lower(x, alpha, population), rtol=0, atol=1e-9)


# --------------------------------------------------------------------------- the e-value's values


def _exact_e(b: int, c: int) -> Fraction:
    """``2^n * integral_{1/2}^{1} q^b (1 - q)^c * 2 dq`` in exact rationals (binomial expansion of (1 - q)^c)."""
    integral = sum(
        Fraction(math.comb(c, j) * (-1) ** j, b + j + 1) * (1 - Fraction(1, 2 ** (b + j + 1))) for j in range(c + 1)
    )
    return 2 ** (b + c + 1) * integral


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10, 20, 30])
def test_the_e_value_is_the_exact_mixture(n: int) -> None:
    b = np.arange(n + 1)
    got = np.exp(_log_e_value(b, n - b))
    want = [float(_exact_e(int(k), n - int(k))) for k in b]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("n", [1, 7, 40, 100, 300])
def test_the_e_value_equals_numerical_integration(n: int) -> None:
    for b in sorted({0, n // 3, n // 2, (2 * n) // 3, (9 * n) // 10, n}):
        c = n - b
        peak = [b / n] if 0.5 < b / n < 1 else None

        def density(q: float, b: int = b, c: int = c) -> float:
            return math.exp(n * math.log(2) + b * math.log(q) + c * math.log1p(-q) + math.log(2)) if q < 1 else 0.0

        want, _ = integrate.quad(density, 0.5, 1.0, points=peak, epsabs=0, epsrel=1e-11, limit=200)
        assert math.exp(_log_e_value(np.array([b]), np.array([c]))[0]) == pytest.approx(want, rel=1e-8), (n, b)


def test_more_broke_rows_give_a_larger_e_value() -> None:
    b, c = np.meshgrid(np.arange(200), np.arange(200), indexing="ij")
    log_e = _log_e_value(b, c)
    assert np.all(np.diff(log_e, axis=0) > 0)  # one more broke row, the same fixed ones
    assert np.all(np.diff(log_e, axis=1) < 0)  # one more fixed row
    # the same discordant rows, one more of them broke
    n = 150
    assert np.all(np.diff(_log_e_value(np.arange(n + 1), n - np.arange(n + 1))) > 0)


# --------------------------------------------------------------------------- invariants

populations = st.lists(st.sampled_from([-1, 0, 0, 0, 1]), min_size=1, max_size=120)


def _verdicts(d: list[int] | np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Baseline and candidate verdicts with these drops (a concordant row passes on both sides)."""
    arr = np.asarray(d)
    return (arr >= 0).astype(int), (arr <= 0).astype(int)


@settings(max_examples=150, deadline=None)
@given(populations, st.data())
def test_a_population_worse_than_the_margin_is_not_passed_on_what_the_rows_prove(d: list[int], data: Any) -> None:
    # the guarantee over random orders is the simulation above; whatever the order, a pass never happens
    # once the rows run prove the drop >= margin, nor at the last row of a population worse than the margin
    order = data.draw(st.permutations(d))
    base, cand = _verdicts(order)
    path = sequential_path(base, cand, population=len(d))
    proven = (np.cumsum(order) - (len(d) - np.arange(1, len(d) + 1))) / len(d) >= MARGIN
    assert not np.any(proven & (path["drop_high"] < MARGIN))
    if sum(d) / len(d) > MARGIN:
        k = data.draw(st.integers(min_value=1, max_value=len(d)))
        res = sequential_paired_test(base[:k], cand[:k], population=len(d))
        assert not (res.decision == "non_inferior" and res.step == len(d))
        assert path["drop_high"][-1] > MARGIN


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0, 1]), min_size=1, max_size=150), st.integers(0, 100), st.data())
def test_a_population_without_discordant_rows_is_never_failed(verdicts: list[int], extra: int, data: Any) -> None:
    k = data.draw(st.integers(min_value=0, max_value=len(verdicts)))
    res = sequential_paired_test(verdicts[:k], verdicts[:k], population=len(verdicts) + extra)
    assert res.decision != "regression"
    assert (res.b, res.c, res.e_value) == (0, 0, 1.0)
    path = sequential_path(verdicts, verdicts, population=len(verdicts) + extra)
    assert np.all(path["e_value"] == 1.0)


@settings(max_examples=150, deadline=None)
@given(populations, st.sampled_from([0.01, 0.05, 0.2]), st.sampled_from([0.02, 0.05, 0.1]))
def test_run_to_its_last_row_non_inferiority_is_the_exact_comparison(d: list[int], alpha: float, margin: float) -> None:
    base, cand = _verdicts(d)
    exact = sum(d) / len(d)
    path = sequential_path(base, cand, population=len(d), alpha=alpha)
    assert path["drop_high"][-1] == path["drop_low"][-1] == exact
    assert (path["drop_high"][-1] < margin) == (exact < margin)
    res = sequential_paired_test(base, cand, population=len(d), alpha=alpha, margin=margin)
    if exact < margin:
        assert res.decision != "undecided"  # decided at the last row at the latest
    assert np.all(path["drop_low"] <= path["drop_high"])


def test_a_prefix_of_a_larger_population_is_bounded_by_the_rows_not_run() -> None:
    res = sequential_paired_test([1] * 10, [1] * 10, population=1000)
    assert (res.decision, res.step, res.rows, res.drop) == ("undecided", None, 10, 0.0)
    assert res.drop_low == pytest.approx(-0.99) and res.drop_high == pytest.approx(0.99)
    assert sequential_paired_test([], [], population=5).drop_high == 1.0


def test_regression_wins_when_both_decide_at_the_same_row() -> None:
    # three runs of four rows: both rules met at row 3; only non-inferiority at row 3; neither
    log_20 = math.log(20.0)
    path = {
        "log_e": np.array([[0.0, 0.5, log_20, log_20], [0.0, 0.5, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]]),
        "drop_high": np.array([[0.9, 0.5, 0.04, 0.03], [0.9, 0.5, 0.04, 0.03], [0.9, 0.5, 0.05, 0.05]]),
    }
    code, step = _decide(path, margin=0.05, regression_alpha=0.05)
    assert [DECISIONS[i] for i in code] == ["regression", "non_inferior", "undecided"]
    assert step.tolist() == [3, 3, 0]


def test_the_record_is_a_plain_dict() -> None:
    res = sequential_paired_test([1] * 12, [0] * 12, population=100, regression_alpha=0.01)
    assert isinstance(res, SequentialTest)
    record = res.to_dict()
    assert record["decision"] == "regression" and record["step"] == 9 and record["regression_alpha"] == 0.01
    assert set(record) == {
        "decision",
        "step",
        "rows",
        "population",
        "b",
        "c",
        "e_value",
        "drop",
        "drop_low",
        "drop_high",
        "alpha",
        "regression_alpha",
        "margin",
    }


@pytest.mark.parametrize(
    ("base", "cand", "options", "message"),
    [
        ([1, 0], [1], {}, r"equal length"),
        ([1, 2], [1, 0], {}, r"base\[1\] is 2"),
        ([1, 0], [1, 0.5], {}, r"cand\[1\] is 0.5"),
        ([1, 0, 1], [1, 0, 1], {"population": 2}, r"population 2 is smaller than the 3 rows"),
        ([1], [1], {"population": 0}, r"population must be"),
        ([1], [1], {"alpha": 0.0}, r"alpha must be in \(0, 1\)"),
        ([1], [1], {"margin": 1.0}, r"margin must be in \(0, 1\)"),
        ([1], [1], {"regression_alpha": -0.1}, r"regression_alpha must be in \(0, 1\)"),
    ],
)
def test_bad_input_is_refused_in_one_line(
    base: list[float], cand: list[float], options: dict[str, Any], message: str
) -> None:
    kwargs: dict[str, Any] = {"population": 10, **options}
    with pytest.raises(InputError, match=message) as err:
        sequential_paired_test(base, cand, **kwargs)
    assert "\n" not in str(err.value)


def test_the_path_of_no_rows_is_empty() -> None:
    path = sequential_path([], [], population=10)
    assert set(path) == {"b", "c", "e_value", "drop_low", "drop_high"} and all(len(v) == 0 for v in path.values())
