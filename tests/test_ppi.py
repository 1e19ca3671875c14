"""goldenkit.stats.ppi_mean: prediction-powered estimates of a human pass rate from judge verdicts.

Checked three ways: against ppi-python (its ``ppi_mean_ci`` / ``ppi_mean_pointestimate``, a test-only
dependency) to 1e-9 where the methods coincide (a simple random sample of labelled rows); by exact
values where the answer is known (a judge of one verdict gives the human-only estimate); and by
simulating coverage over 5,000 draws for judges that agree 70% and 90% of the time with the human and
are planted with a bias (twice as likely to pass a failing answer as to fail a passing one), for a
simple random sample of labels and for labels drawn with unequal probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from goldenkit.stats import PPIEstimate, ppi_mean
from goldenkit.stats._ppi import _batch

ppi_py = pytest.importorskip("ppi_py")

TRUE_RATE = 0.6


def _draw(rng: np.random.Generator, shape: tuple[int, ...], agree: float) -> tuple[np.ndarray, np.ndarray]:
    """(human, judge) verdicts: human PASS with TRUE_RATE; the judge errs on a FAIL twice as often as on a
    PASS, for an overall agreement of ``agree``."""
    human = (rng.random(shape) < TRUE_RATE).astype(float)
    err_pass = (1.0 - agree) / (2 * (1 - TRUE_RATE) + TRUE_RATE)
    err = np.where(human == 1, err_pass, 2 * err_pass)
    judge = np.where(rng.random(shape) < err, 1.0 - human, human)
    return human, judge


@pytest.mark.parametrize("seed", range(25))
def test_it_is_ppi_python_on_a_simple_random_sample(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(5, 80)), int(rng.integers(20, 400))
    agree = float(rng.uniform(0.55, 0.98))
    human, judge = _draw(rng, (n + big_n,), agree)
    y, fl, fu = human[:n], judge[:n], judge[n:]
    alpha = float(rng.choice([0.05, 0.1, 0.2]))
    got = ppi_mean(fu, fl, y, alpha=alpha)
    lo, hi = ppi_py.ppi_mean_ci(y, fl, fu, alpha=alpha)
    assert got.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, fl, fu)[0]), abs=1e-9)
    if 0 < lo[0] and hi[0] < 1:  # ours is clipped to [0, 1], a pass rate
        assert (got.ci_low, got.ci_high) == pytest.approx((float(lo[0]), float(hi[0])), abs=1e-9)
    assert got.ci_low <= got.estimate <= got.ci_high and (got.n, got.N) == (n, big_n)


def test_a_judge_of_one_verdict_gives_the_human_only_estimate() -> None:
    y = np.array([1, 0, 1, 1, 0, 1, 1, 1], dtype=float)
    est = ppi_mean(np.ones(40), np.ones(8), y, alpha=0.05)
    assert est.lam == 0.0 and est.estimate == pytest.approx(y.mean(), abs=1e-12)
    half = 1.959963984540054 * y.std() / np.sqrt(8)
    assert (est.ci_low, est.ci_high) == pytest.approx((y.mean() - half, min(1.0, y.mean() + half)), abs=1e-12)
    assert est.effective_n == pytest.approx(8.0)


def test_a_perfect_judge_narrows_the_interval_and_counts_as_more_labels() -> None:
    rng = np.random.default_rng(7)
    human = (rng.random(1000) < 0.7).astype(float)
    est = ppi_mean(human[100:], human[:100], human[:100])
    human_only = 1.959963984540054 * human[:100].std() / 10
    assert est.lam > 0.75 and (est.ci_high - est.ci_low) / 2 < human_only / 2
    assert est.effective_n > 400 and isinstance(est, PPIEstimate)


@pytest.mark.parametrize("agree", [0.7, 0.9])
def test_coverage_at_the_nominal_level_for_a_biased_judge(agree: float) -> None:
    draws, n, big_n, alpha = 5000, 200, 2000, 0.05
    rng = np.random.default_rng(int(agree * 100))
    human, judge = _draw(rng, (draws, n + big_n), agree)
    est, se, lam = _batch(judge[:, n:], judge[:, :n], human[:, :n])
    z = 1.959963984540054
    covered = int(((est - z * se <= TRUE_RATE) & (TRUE_RATE <= est + z * se)).sum())
    # consistent with 95% coverage: the upper 99.9% confidence limit of the observed coverage reaches it
    upper = binomtest(covered, draws).proportion_ci(confidence_level=0.999).high
    assert upper >= 1 - alpha, f"coverage {covered / draws:.4f} over {draws} draws"
    judge_only = judge.mean(1)
    assert abs(judge_only.mean() - TRUE_RATE) > 0.01  # the planted bias: the judge's own rate is off
    assert abs(est.mean() - TRUE_RATE) < 0.005  # the corrected estimate is not
    assert 0 < lam.mean() <= 1


@pytest.mark.parametrize("agree", [0.7, 0.9])
def test_labels_drawn_with_unequal_probabilities_keep_their_coverage(agree: float) -> None:
    """Rows the judge failed are labelled with probability 0.3, rows it passed with 0.1 (active
    labelling); the inverse-probability weights keep the estimate unbiased and the interval valid.
    (Rarer labels make the weighted terms skewed and the normal interval slow to reach its level:
    0.935 at 0.4 / 0.1 over 1,500 rows.)"""
    draws, rows, alpha = 5000, 2000, 0.05
    rng = np.random.default_rng(int(agree * 1000))
    covered = 0
    estimates = []
    for _ in range(draws):
        human, judge = _draw(rng, (rows,), agree)
        prob = np.where(judge == 0, 0.3, 0.1)
        labelled = rng.random(rows) < prob
        est = ppi_mean(judge[~labelled], judge[labelled], human[labelled], weights=1 / prob[labelled], alpha=alpha)
        covered += est.ci_low <= TRUE_RATE <= est.ci_high
        estimates.append(est.estimate)
    upper = binomtest(covered, draws).proportion_ci(confidence_level=0.999).high
    assert upper >= 1 - alpha, f"coverage {covered / draws:.4f} over {draws} draws"
    assert abs(float(np.mean(estimates)) - TRUE_RATE) < 0.005


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1, 0], [1, 0, 1], [1, 0]), {}, "3 judge verdicts on labelled rows, 2 human labels"),
        (([1, 0], [1, 2], [1, 0]), {}, "judge_labelled must hold 0/1"),
        (([1, 0], [1], [1]), {}, "at least 2 labelled rows"),
        (([1, 0], [1, 0], [1, 0]), {"alpha": 1.5}, "alpha must be in"),
        (([1, 0], [1, 0], [1, 0]), {"weights": [0.5, 2]}, "inverse sampling probability"),
    ],
)
def test_bad_input_is_one_clear_error(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ppi_mean(*args, **kwargs)
