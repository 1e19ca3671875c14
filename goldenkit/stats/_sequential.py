"""The sequential paired gate: an e-process for regression and a confidence sequence for the drop.

:func:`sequential_paired_test` reads the baseline's and the candidate's collapsed
verdicts (1 pass, 0 fail) of the rows in the order they were run, one row at a time,
and stops at the first row where the evidence decides. Both decisions keep their
error rates whenever the procedure is stopped, however the stopping time was chosen
(optional stopping, continuation, a budget): each is a time-uniform guarantee.

Regression: an e-process on the discordant pairs
------------------------------------------------
Among the discordant rows seen, ``b`` broke (base 1, candidate 0) and ``c`` were
fixed (base 0, candidate 1); ``n = b + c``. McNemar's null says each discordant row
is broke with probability 1/2, whatever came before. The e-process is the mixture of
likelihood ratios against 1/2 over the alternatives ``q >= 1/2``, ``q`` uniform on
``[1/2, 1]``::

    E_n = 2^n * integral_{1/2}^{1} q^b (1 - q)^(n - b) * 2 dq
        = 2^(n + 1) * B(b + 1, c + 1) * (1 - I_{1/2}(b + 1, c + 1))

(``B`` the beta function, ``I`` the regularized incomplete beta function, computed in
log space with ``scipy.special.betaln`` and ``betainc(c + 1, b + 1, 1/2)``, which is
``1 - I_{1/2}(b + 1, c + 1)`` without cancellation). ``E_0 = 1``, concordant rows leave
it unchanged. Each ratio ``(q / q')^b ((1 - q) / (1 - q'))^c`` with ``q >= 1/2 >= q'``
is a nonnegative supermartingale of mean at most 1 under every null ``P(broke |
discordant) = q' <= 1/2``, so the mixture is one too, and Ville's inequality gives
``P(sup_n E_n >= 1 / regression_alpha) <= regression_alpha``: **the false-fail rate is
at most ``regression_alpha`` (default ``alpha``) under McNemar's null, and whenever
the candidate breaks a discordant row with probability at most 1/2**, at whatever row
the run stops. A gate testing a family of ``k`` slices passes ``regression_alpha =
alpha / k`` (e-Bonferroni: a sum of ``k`` e-values over ``k`` is an e-value).

Non-inferiority: a confidence sequence for the population's mean drop
--------------------------------------------------------------------
The rows form a finite population of ``N = population`` rows; the run draws them in a
uniformly random order (sampling without replacement: the random order is the design,
not an assumption about the agent). Each row has a drop ``d = base - cand`` in
``{-1, 0, 1}``; the target is the population's mean drop ``D``, fixed in advance. The
upper bound is the predictable-mixture empirical-Bernstein confidence sequence for
sampling without replacement of Waudby-Smith & Ramdas (2020), "Confidence sequences
for sampling without replacement" (NeurIPS 2020), on ``y = (1 - d) / 2`` in
``[0, 1]`` (the lower bound of the mean of ``y`` is the upper bound of ``D``)::

    lower_t = sum_i lam_i (y_i + S_{i-1} / (N - i + 1)) / sum_i lam_i (1 + (i - 1) / (N - i + 1))
              - (log(1 / alpha) + sum_i v_i psi(lam_i)) / sum_i lam_i (1 + (i - 1) / (N - i + 1))

with ``S_{i-1}`` the sum of the ``y`` seen before row ``i``, ``v_i = (y_i -
ybar_{i-1})^2`` (``ybar_0 = 0``), ``psi(lam) = -log(1 - lam) - lam``, and the
predictable bets ``lam_i = min(1/2, sqrt(2 log(1 / alpha) / (sigma2_{i-1} i log(1 +
i))))``, where ``sigma2`` is the variance estimate regularized by one fake observation
of mean 1/2 and variance 1/4. These are the choices of the reference implementation,
``confseq.predmix.predmix_empbern_lower_cs(x, alpha, N=N, running_intersection=True)``
(defaults: truncation 1/2, no fixed sample size). The bound is floored at 0, its
running maximum is kept, and the same construction on ``1 - y`` gives ``drop_low``.
With ``P(exists t: D > drop_high_t) <= alpha``, **the false-pass rate is at most
``alpha`` when the population's mean drop equals the margin** (or exceeds it), at
whatever row the run stops. The guarantee is over the random order: an order chosen
to mislead (every fixed row first) can pass a population worse than the margin, so
the order must be drawn at random, never chosen. The empirical-Bernstein form adapts
to the variance: on 400 rows of which 90% are concordant and the rest split evenly,
it passes a margin of 0.05 after 226 rows (median over random orders), where the
Hoeffding form of the same sequence needs 381.

Each bound is then intersected with the deterministic bounds of the rows not yet
run, ``(sum d + (N - t) * (-1)) / N <= D <= (sum d + (N - t) * (+1)) / N`` (the
sequence is clipped into that band, so it is never empty), hence at ``t = N`` both
bounds are the exact mean drop. ``drop_low`` and ``drop_high`` are each a one-sided
``1 - alpha`` sequence, together a two-sided ``1 - 2 alpha`` one; only ``drop_high``
decides, ``drop_low`` is reported.

Decision
--------
At the first row ``t`` where ``E >= 1 / regression_alpha`` the decision is
``"regression"``; at the first where ``drop_high < margin`` (strictly) it is
``"non_inferior"``; when both happen at the same row, regression wins. Otherwise
``"undecided"``. A drop that is real but inside the margin may pass: the margin is
the tolerance the policy accepts.

>>> r = sequential_paired_test([1] * 60, [0] * 10 + [1] * 50, population=400)
>>> r.decision, r.step, r.b, r.c, round(r.e_value, 1)
('regression', 7, 7, 0, 31.9)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import special as _spec

from goldenkit._registry import publish
from goldenkit.errors import InputError

__all__ = ["SequentialTest", "sequential_path", "sequential_paired_test"]

#: The decisions, in the order of their integer codes in the vectorized paths.
DECISIONS = ("undecided", "regression", "non_inferior")

_LAMBDA_MAX = 0.5  # the bets' truncation (confseq's default for the empirical-Bernstein bound)


@dataclass(frozen=True)
class SequentialTest:
    """The decision of :func:`sequential_paired_test` and the statistics at the row it was made.

    ``step`` is the number of rows consumed when it decided (1-based), None when
    undecided; ``b``, ``c``, ``e_value``, ``drop`` (the observed mean drop, base minus
    candidate), ``drop_low`` and ``drop_high`` (the confidence sequence for the
    population's mean drop) are taken at that row, or after every row when undecided.
    """

    decision: str
    step: int | None
    rows: int
    population: int
    b: int
    c: int
    e_value: float
    drop: float
    drop_low: float
    drop_high: float
    alpha: float
    regression_alpha: float
    margin: float

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict (JSON-ready: ``step`` None when undecided)."""
        return asdict(self)


def sequential_paired_test(
    base: Sequence[int] | np.ndarray[Any, Any],
    cand: Sequence[int] | np.ndarray[Any, Any],
    *,
    population: int,
    alpha: float = 0.05,
    margin: float = 0.05,
    regression_alpha: float | None = None,
) -> SequentialTest:
    """Apply the sequential paired gate row by row and return its decision (see the module docstring).

    ``base`` and ``cand`` are the baseline's and the candidate's collapsed verdicts
    (1 pass, 0 fail) of the rows in the order they were run; ``population`` is the
    number of rows the order was drawn from (``>= len(base)``). ``regression_alpha``
    (default ``alpha``) is the level of the regression test, ``alpha`` that of the
    confidence sequence; ``margin`` the mean drop the policy tolerates.

    >>> r = sequential_paired_test([1, 0] * 200, [1, 0] * 200, population=400)
    >>> r.decision, r.step, r.b, r.c, r.e_value
    ('non_inferior', 183, 0, 0, 1.0)
    """
    b_arr, c_arr = _verdicts(base, cand, population)
    r_alpha = _levels(alpha, margin, regression_alpha)
    rows = b_arr.shape[0]
    if rows == 0:  # nothing seen: no drop observed, the bounds of any population
        return SequentialTest("undecided", None, 0, population, 0, 0, 1.0, math.nan, -1.0, 1.0, alpha, r_alpha, margin)
    path = _path_matrix(b_arr[None, :], c_arr[None, :], population, alpha, r_alpha)
    code, step = _decide(path, margin, r_alpha)
    idx = int(step[0]) - 1 if code[0] else rows - 1
    broke, fixed = int(path["b"][0, idx]), int(path["c"][0, idx])
    return SequentialTest(
        decision=DECISIONS[int(code[0])],
        step=idx + 1 if code[0] else None,
        rows=rows,
        population=population,
        b=broke,
        c=fixed,
        e_value=float(np.exp(path["log_e"][0, idx])),
        drop=(broke - fixed) / (idx + 1),
        drop_low=float(path["drop_low"][0, idx]),
        drop_high=float(path["drop_high"][0, idx]),
        alpha=alpha,
        regression_alpha=r_alpha,
        margin=margin,
    )


def sequential_path(
    base: Sequence[int] | np.ndarray[Any, Any],
    cand: Sequence[int] | np.ndarray[Any, Any],
    *,
    population: int,
    alpha: float = 0.05,
    regression_alpha: float | None = None,
) -> dict[str, np.ndarray[Any, Any]]:
    """The statistics after each row: ``b``, ``c``, ``e_value``, ``drop_low``, ``drop_high`` (arrays of ``len(base)``).

    The same computation as :func:`sequential_paired_test`, for plotting the confidence
    sequence against the rows run and for the record.

    >>> p = sequential_path([1, 1, 1], [1, 0, 0], population=10)
    >>> p["b"].tolist(), p["c"].tolist(), p["e_value"].round(3).tolist()
    ([0, 1, 2], [0, 0, 0], [1.0, 1.5, 2.333])
    """
    b_arr, c_arr = _verdicts(base, cand, population)
    r_alpha = _levels(alpha, 0.5, regression_alpha)
    if b_arr.size == 0:  # no row read yet: empty paths
        empty = np.zeros(0)
        return {"b": empty.astype(int), "c": empty.astype(int), "e_value": empty, "drop_low": empty, "drop_high": empty}
    path = _path_matrix(b_arr[None, :], c_arr[None, :], population, alpha, r_alpha)
    return {
        "b": path["b"][0],
        "c": path["c"][0],
        "e_value": np.exp(path["log_e"][0]),
        "drop_low": path["drop_low"][0],
        "drop_high": path["drop_high"][0],
    }


# --------------------------------------------------------------------------- checks


def _verdicts(
    base: Sequence[int] | np.ndarray[Any, Any], cand: Sequence[int] | np.ndarray[Any, Any], population: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The per-row broke and fixed indicators, after checking the inputs."""
    b_in, c_in = np.asarray(base), np.asarray(cand)
    if b_in.ndim != 1 or c_in.ndim != 1 or b_in.shape != c_in.shape:
        raise InputError(f"base and cand must be flat sequences of equal length, got {b_in.shape} and {c_in.shape}")
    for name, arr in (("base", b_in), ("cand", c_in)):
        bad = np.flatnonzero((arr != 0) & (arr != 1))
        if bad.size:
            raise InputError(f"{name}[{bad[0]}] is {arr[bad[0]].item()!r}: verdicts must be 0 (fail) or 1 (pass)")
    if isinstance(population, bool) or not isinstance(population, (int, np.integer)) or population < 1:
        raise InputError(f"population must be a whole number of rows >= 1, got {population!r}")
    if population < b_in.shape[0]:
        raise InputError(f"population {population} is smaller than the {b_in.shape[0]} rows given")
    b_i, c_i = b_in.astype(np.int8), c_in.astype(np.int8)
    return (b_i > c_i).astype(np.int8), (c_i > b_i).astype(np.int8)


def _levels(alpha: float, margin: float, regression_alpha: float | None) -> float:
    """Check the levels and the margin; return the regression level (default ``alpha``)."""
    r_alpha = alpha if regression_alpha is None else regression_alpha
    for name, value in (("alpha", alpha), ("margin", margin), ("regression_alpha", r_alpha)):
        if not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
            raise InputError(f"{name} must be in (0, 1), got {value!r}")
    return float(r_alpha)


# --------------------------------------------------------------------------- vectorized paths


def _path_matrix(
    broke: np.ndarray[Any, Any], fixed: np.ndarray[Any, Any], population: int, alpha: float, regression_alpha: float
) -> dict[str, np.ndarray[Any, Any]]:
    """The statistics after each row of each run: arrays of shape (runs, rows).

    ``broke`` and ``fixed`` are (runs, rows) 0/1 indicators. Returns ``b``, ``c`` (counts
    so far), ``log_e`` (the regression e-process, natural log), ``drop_low`` and
    ``drop_high`` (the confidence sequence for the population's mean drop, clipped
    into the deterministic band). ``regression_alpha`` is not used by the path; it is
    checked by the callers.
    """
    b = np.cumsum(broke, axis=1, dtype=np.int64)
    c = np.cumsum(fixed, axis=1, dtype=np.int64)
    d = broke.astype(float) - fixed.astype(float)
    y = (1.0 - d) / 2.0  # in [0, 1]; its mean's lower bound is the drop's upper bound
    upper = 1.0 - 2.0 * _wor_eb_lower(y, alpha, population)
    lower = 2.0 * _wor_eb_lower(1.0 - y, alpha, population) - 1.0
    t = np.arange(1, d.shape[1] + 1, dtype=float)
    s = (b - c).astype(float)
    band_low, band_high = (s - (population - t)) / population, (s + (population - t)) / population
    return {
        "b": b,
        "c": c,
        "log_e": _log_e_table(_largest(b[:, -1]), _largest(c[:, -1]))[b, c],
        "drop_low": np.clip(lower, band_low, band_high),
        "drop_high": np.clip(upper, band_low, band_high),
    }


def _largest(counts: np.ndarray[Any, Any]) -> int:
    """The largest of non-negative counts, 0 for none."""
    return int(counts.max()) if counts.size else 0


def _log_e_table(max_b: int, max_c: int) -> np.ndarray[Any, Any]:
    """``log E`` for every ``(b, c)`` up to the counts reached (a path only indexes it: over 10 times faster
    than evaluating the beta functions at every row of 10,000 simulated runs)."""
    b, c = np.meshgrid(np.arange(max_b + 1), np.arange(max_c + 1), indexing="ij")
    return _log_e_value(b, c)


def _log_e_value(b: np.ndarray[Any, Any], c: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``log E`` with ``E = 2^(n+1) B(b+1, c+1) (1 - I_{1/2}(b+1, c+1))``, ``n = b + c``; 0 at ``n = 0``."""
    bf, cf = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
    with np.errstate(divide="ignore"):  # an upper tail below the smallest double: E is 0 to double precision
        tail = np.log(_spec.betainc(cf + 1.0, bf + 1.0, 0.5))
    out: np.ndarray[Any, Any] = (bf + cf + 1.0) * math.log(2.0) + _spec.betaln(bf + 1.0, cf + 1.0) + tail
    return out


def _wor_eb_lower(x: np.ndarray[Any, Any], alpha: float, population: int) -> np.ndarray[Any, Any]:
    """Waudby-Smith & Ramdas's predictable-mixture empirical-Bernstein lower sequence, without replacement.

    ``x`` is (runs, rows) in [0, 1]; the lower confidence sequence (running maximum,
    floored at 0) for the mean of the population of ``population`` values the rows
    are drawn from, at level ``alpha``. The bets and the variance terms are those of
    ``confseq.predmix.predmix_empbern_lower_cs`` (see the module docstring).
    """
    t = np.arange(1, x.shape[1] + 1, dtype=float)
    s = np.cumsum(x, axis=1)
    s_prev = _shift(s, 0.0)
    # bets: the mean and variance regularized by one fake observation (mean 1/2, variance 1/4)
    mu_reg = np.minimum((0.5 + s) / (t + 1.0), 1.0)
    sigma2 = (0.25 + np.cumsum((x - mu_reg) ** 2, axis=1)) / (t + 1.0)
    lam = np.sqrt(2.0 * math.log(1.0 / alpha) / (t * np.log1p(t) * _shift(sigma2, 0.25)))
    lam = np.minimum(lam, _LAMBDA_MAX)
    v = (x - _shift(s / t, 0.0)) ** 2
    psi = -np.log1p(-lam) - lam
    weight = np.cumsum(lam * (1.0 + (t - 1.0) / (population - t + 1.0)), axis=1)
    centre = np.cumsum(lam * (x + s_prev / (population - t + 1.0)), axis=1) / weight
    width = (math.log(1.0 / alpha) + np.cumsum(v * psi, axis=1)) / weight
    out: np.ndarray[Any, Any] = np.maximum.accumulate(np.maximum(centre - width, 0.0), axis=1)
    return out


def _shift(a: np.ndarray[Any, Any], first: float) -> np.ndarray[Any, Any]:
    """The previous row's value along axis 1 (``first`` before the first row)."""
    out = np.empty_like(a)
    out[:, 0] = first
    out[:, 1:] = a[:, :-1]
    return out


def _decide(
    path: dict[str, np.ndarray[Any, Any]], margin: float, regression_alpha: float
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The decision code (index into :data:`DECISIONS`) and step (1-based, 0 when undecided) of each run."""
    fail = path["log_e"] >= math.log(1.0 / regression_alpha)
    ok = path["drop_high"] < margin
    either = fail | ok
    runs = either.shape[0]
    if either.shape[1] == 0:
        return np.zeros(runs, dtype=np.int64), np.zeros(runs, dtype=np.int64)
    first = np.argmax(either, axis=1)
    decided = either[np.arange(runs), first]
    regression = fail[np.arange(runs), first]
    code = np.where(decided, np.where(regression, 1, 2), 0)
    step = np.where(decided, first + 1, 0)
    return code.astype(np.int64), step.astype(np.int64)


publish(globals())
