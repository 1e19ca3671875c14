"""Prediction-powered estimates: a judge's verdicts on every row, corrected by human labels on some.

A judge-graded pass rate is the judge's rate: its interval says how sure we are
of what the judge thinks, not of the truth. With human verdicts on ``n`` rows
(``human_labelled``, 0/1) and the judge's verdicts on those rows
(``judge_labelled``) and on ``N`` others (``judge_unlabelled``),
:func:`ppi_mean` estimates the *human* pass rate over all ``n + N`` rows:

* **PPI++** (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023; Angelopoulos,
  Duchi & Zrnic 2023, "PPI++"): ``θ̂ = λ·mean(judge_unlabelled) +
  mean(human_labelled − λ·judge_labelled)``. The judge's mean carries the
  unlabelled rows; the labelled rows measure and remove its bias. ``λ`` is tuned
  for power from the data, ``λ = Cov(human, judge) / ((1 + n/N)·Var(judge))``
  (the judge's variance over all its verdicts), clipped to ``[0, 1]``: ``λ = 0``
  is the human-only estimate, which is what a judge that does not help falls back
  to (also when the judge gave one verdict throughout). The interval is the
  normal one, ``θ̂ ± z·√(Var(λ·judge_unlabelled)/N + Var(human − λ·judge)/n)``,
  valid whatever the judge's quality (its errors only widen it). With the same
  inputs this is ppi-python's ``ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha)``.
* **Labels drawn with unequal probabilities** (``weights``: the inverse of each
  labelled row's sampling probability, Zrnic & Candès 2024, "Active statistical
  inference"): every row ``i`` of the ``M = n + N`` contributes
  ``Z_i = λ·judge_i + (human_i − λ·judge_i)·ξ_i·w_i`` (``ξ_i`` 1 when labelled),
  whose mean is unbiased for the human pass rate when row ``i`` was labelled
  with probability ``1/w_i``; ``θ̂ = mean(Z)``, its interval
  ``θ̂ ± z·sd(Z)/√M``, ``λ`` the value in ``[0, 1]`` that minimises ``Var(Z)``.
  Rows labelled by hand (no recorded probability) are not a sampling design:
  the caller must refuse them for inference.

**Nothing to estimate a variance from.** When the plug-in standard error is 0 (every labelled value
alike and nothing for ``λ`` to use, or a judge that gave one verdict on every row it alone graded and
agrees with the labels), the normal interval would have no width: a certainty ten labels cannot give.
The estimate is then the labels' own mean ``m`` (weighted by ``weights``), ``λ = 0``, and its interval
``[m - (m - low)·u, m + (high - m)·u]`` with ``u = z² / (n + z²)``, ``n`` the labels' effective size
(``(Σw)² / Σw²``, Kish; their number without weights), ``low, high`` the bounds: ``u`` is Wilson's bound
on the share of rows that differ from what every label showed when none of ``n`` did, so for 0/1
verdicts all PASS this is exactly Wilson's ``[n / (n + z²), 1]``, and a paired difference whose labelled
rows all held is ``±u``. ``se`` is its larger half over ``z``.

Intervals are clipped to ``[0, 1]`` (a pass rate). ``bounds=(lo, hi)`` takes any values in ``[lo, hi]``
instead of 0/1 verdicts and clips to those bounds: the paired difference of two runs' verdicts on one row
lies in ``{-1, 0, 1}`` (``bounds=(-1, 1)``); the formulas above are those of any bounded mean, and with
the same inputs the result is again ppi-python's ``ppi_mean_ci``. The guarantee is asymptotic
(central limit): coverage at the nominal level as ``n`` grows, for any judge;
``tests/test_ppi.py`` simulates it at 5,000 draws for judges that agree 70% and
90% of the time with a planted bias.

>>> est = ppi_mean([1, 1, 0, 1] * 50, [1, 0, 1, 1, 0], [1, 0, 1, 0, 0], alpha=0.05)
>>> round(est.estimate, 4), est.n, est.N
(0.5231, 5, 200)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy.stats import norm

from goldenkit._registry import publish

__all__ = ["PPIEstimate", "ppi_mean"]


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate of the human pass rate, with what it stands on.

    ``lam`` the power-tuning weight (0: human labels only); ``se`` its standard
    error; ``n`` human labels, ``N`` rows the judge alone graded; ``effective_n``
    the human labels a human-only estimate would need for the same standard error
    (``n`` when the judge does not help), so ``effective_n - n`` is what the judge
    gained; ``judge_rate`` the judge's own pass rate over all ``n + N`` rows."""

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    lam: float
    n: int
    N: int
    alpha: float
    effective_n: float
    judge_rate: float
    weighted: bool

    def to_dict(self) -> dict[str, float | int | bool]:
        return asdict(self)


def _values(name: str, values: Sequence[float] | np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if bounds is None:
        if arr.size and not np.isin(arr, (0.0, 1.0)).all():
            raise ValueError(f"ppi_mean: {name} must hold 0/1 verdicts")
    elif arr.size and not (np.isfinite(arr).all() and (arr >= bounds[0]).all() and (arr <= bounds[1]).all()):
        raise ValueError(f"ppi_mean: {name} must hold values in [{bounds[0]:g}, {bounds[1]:g}]")
    return arr


def _batch(fu: np.ndarray, fl: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, se, lam) of PPI++ for each row of (draws x N), (draws x n), (draws x n) arrays."""
    n, big_n = y.shape[1], fu.shape[1]
    theta1 = fu.mean(1) + (y - fl).mean(1)  # lam = 1: the centre ppi-python tunes lam around
    g, gh = y - theta1[:, None], fl - theta1[:, None]
    cov = 2.0 * ((g - g.mean(1, keepdims=True)) * (gh - gh.mean(1, keepdims=True))).sum(1) / n
    var = np.concatenate([fl, fu], axis=1).var(1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = cov / (2.0 * (1.0 + n / big_n) * var)
    lam = np.clip(np.nan_to_num(lam, nan=0.0), 0.0, 1.0)  # a judge of one verdict throughout: human only
    est = lam * fu.mean(1) + (y - lam[:, None] * fl).mean(1)
    se = np.sqrt((lam[:, None] * fu).var(1) / big_n + (y - lam[:, None] * fl).var(1) / n)
    return est, se, lam


def _weighted(fu: np.ndarray, fl: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """(estimate, se, lam) of the inverse-probability-weighted estimator over all M rows."""
    f = np.concatenate([fl, fu])
    labelled_w = np.concatenate([w, np.zeros(fu.size)])
    human = np.concatenate([y, np.zeros(fu.size)])
    a, b = f * (1.0 - labelled_w), human * labelled_w  # Z = lam * a + b
    var_a = a.var()
    lam = float(np.clip(-np.cov(a, b, ddof=0)[0, 1] / var_a, 0.0, 1.0)) if var_a > 0 else 0.0
    z = lam * a + b
    return float(z.mean()), float(z.std() / np.sqrt(z.size)), lam


def _labels_alone(
    y: np.ndarray, weights: Sequence[float] | np.ndarray | None, bounds: tuple[float, float], z: float
) -> tuple[float, float, float]:
    """(estimate, se, lam = 0) from the labels alone when they give no variance (module doc)."""
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    mean = float((w * y).sum() / w.sum())
    n_eff = float(w.sum() ** 2 / (w**2).sum())
    u = z * z / (n_eff + z * z)
    return mean, max(mean - bounds[0], bounds[1] - mean) * u / z, 0.0


def ppi_mean(
    judge_unlabelled: Sequence[float] | np.ndarray,
    judge_labelled: Sequence[float] | np.ndarray,
    human_labelled: Sequence[float] | np.ndarray,
    *,
    weights: Sequence[float] | np.ndarray | None = None,
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
) -> PPIEstimate:
    """The prediction-powered estimate of the human pass rate and its ``1 - alpha`` interval (module doc).

    ``judge_unlabelled``: the judge's 0/1 verdicts on the rows without a human
    label; ``judge_labelled`` and ``human_labelled``: the judge's and the human's
    verdicts on the labelled rows, in the same order; ``weights``: for each
    labelled row, the inverse of the probability with which it was drawn for
    labelling (None: a simple random sample of the rows); ``bounds``: None for 0/1 verdicts, else the
    ``(low, high)`` every value lies in (``(-1, 1)`` for paired differences), the interval clipped to it.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"ppi_mean: alpha must be in (0, 1), got {alpha}")
    if bounds is not None and not (np.isfinite(bounds).all() and bounds[0] < bounds[1]):
        raise ValueError(f"ppi_mean: bounds must be finite (low, high) with low < high, got {bounds!r}")
    fu, fl = _values("judge_unlabelled", judge_unlabelled, bounds), _values("judge_labelled", judge_labelled, bounds)
    y = _values("human_labelled", human_labelled, bounds)
    if fl.size != y.size:
        raise ValueError(f"ppi_mean: {fl.size} judge verdicts on labelled rows, {y.size} human labels")
    if y.size < 2 or fu.size < 1:
        raise ValueError("ppi_mean: needs at least 2 labelled rows and 1 row graded by the judge alone")
    if weights is None:
        est_a, se_a, lam_a = _batch(fu[None, :], fl[None, :], y[None, :])
        est, se, lam = float(est_a[0]), float(se_a[0]), float(lam_a[0])
    else:
        w = np.asarray(weights, dtype=float).reshape(-1)
        if w.size != y.size or not np.isfinite(w).all() or (w < 1.0).any():
            raise ValueError("ppi_mean: weights are one inverse sampling probability (>= 1) per labelled row")
        est, se, lam = _weighted(fu, fl, y, w)
    low, high = (0.0, 1.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    z = float(norm.ppf(1.0 - alpha / 2.0))
    if not se > 1e-12:  # no variance to read: the labels' own Wilson interval (module doc)
        est, se, lam = _labels_alone(y, weights, (low, high), z)
    half = z * se
    human_sd = float(y.std())  # a human-only estimate's standard error is human_sd / sqrt(n)
    effective_n = (human_sd / se) ** 2 if se > 0 and human_sd > 0 else float(y.size)
    return PPIEstimate(
        estimate=est,
        ci_low=max(low, est - half),
        ci_high=min(high, est + half),
        se=se,
        lam=lam,
        n=int(y.size),
        N=int(fu.size),
        alpha=alpha,
        effective_n=effective_n,
        judge_rate=float(np.concatenate([fl, fu]).mean()),
        weighted=weights is not None,
    )


publish(globals())
