"""pass@k and pass^k: how often k attempts at a row succeed at least once, or every time.

Both are estimated per row from its ``n`` graded repeats of which ``c`` passed,
then averaged over the rows (the unit of evidence is the row, as everywhere in
goldenkit). ERROR and SKIPPED repeats are not graded and do not count in ``n``.

* **pass@k** -- the unbiased estimator of Chen et al. (2021), "Evaluating Large
  Language Models Trained on Code", arXiv:2107.03374, eq. 1: the chance that
  at least one of ``k`` repeats drawn without replacement from the row's ``n``
  passes, ``1 - C(n - c, k) / C(n, k)``. Computed, as the paper's numerically
  stable code does, as ``1 - prod_{j = n - c + 1}^{n} (1 - k / j)``; it is 1
  when ``n - c < k``.
* **pass^k** ("pass hat k") -- Yao et al. (2024), "tau-bench: A Benchmark for
  Tool-Agent-User Interaction in Real-World Domains", arXiv:2406.12045, sec. 5:
  the chance that all ``k`` drawn repeats pass, ``C(c, k) / C(n, k)``; it is 0
  when ``c < k``. It measures consistency: a flaky agent's pass^k falls with k.

A row with fewer than ``k`` graded repeats has no estimate: it is left out of
both means and counted (``left_out``). With ``k = 1`` both equal the
attempt-weighted pass rate of each row.

>>> import numpy as np
>>> r = pass_at_k(np.array([3, 3, 3]), np.array([3, 1, 0]), 2)
>>> round(r.pass_at_k, 4), round(r.pass_hat_k, 4), r.rows, r.left_out  # (1 + 2/3 + 0) / 3, (1 + 0 + 0) / 3
(0.5556, 0.3333, 3, 0)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from goldenkit._registry import publish
from goldenkit.errors import InputError

__all__ = ["PassAtK", "pass_at_k", "row_pass_at_k", "row_pass_hat_k"]


class PassAtK(NamedTuple):
    """Mean pass@k and pass^k over the ``rows`` that had at least k graded repeats."""

    k: int
    pass_at_k: float
    pass_hat_k: float
    rows: int
    left_out: int


def _check(n: Any, c: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    n_arr = np.asarray(n, dtype=np.int64)
    c_arr = np.asarray(c, dtype=np.int64)
    if n_arr.shape != c_arr.shape:
        raise InputError("n and c must have the same shape")
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise InputError("every row needs 0 <= c <= n")
    return n_arr, c_arr


def _ratio(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``C(top, k) / C(n, k)`` as ``prod_{i=0}^{k-1} (top - i) / (n - i)``, 0 when ``top < k`` (needs n >= k)."""
    out = np.ones(top.shape, dtype=float)
    for i in range(k):
        with np.errstate(divide="ignore", invalid="ignore"):
            out *= np.where(n - i > 0, (top - i) / np.maximum(n - i, 1), 0.0)
    return np.where(top < k, 0.0, out)


def row_pass_at_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Per row ``1 - C(n - c, k) / C(n, k)``; NaN where ``n < k``."""
    n_arr, c_arr = _check(n, c, k)
    # Chen et al.'s product over the passing repeats: 1 - prod_{j=n-c+1}^{n} (1 - k/j)
    width = int(c_arr.max(initial=0))
    prod = np.ones(n_arr.shape, dtype=float)
    for i in range(width):
        j = n_arr - i
        active = i < c_arr
        with np.errstate(divide="ignore", invalid="ignore"):
            prod *= np.where(active, 1.0 - k / np.maximum(j, 1), 1.0)
    est = np.where(n_arr - c_arr < k, 1.0, 1.0 - prod)
    return np.where(n_arr < k, np.nan, est)


def row_pass_hat_k(n: Any, c: Any, k: int) -> np.ndarray:
    """Per row ``C(c, k) / C(n, k)``; NaN where ``n < k``."""
    n_arr, c_arr = _check(n, c, k)
    return np.where(n_arr < k, np.nan, _ratio(c_arr, n_arr, k))


def pass_at_k(n: Any, c: Any, k: int) -> PassAtK:
    """Mean pass@k and pass^k over rows with at least ``k`` graded repeats (``n``: graded, ``c``: passed).

    NaN means when no row has ``k`` graded repeats.
    """
    n_arr, c_arr = _check(n, c, k)
    ok = n_arr >= k
    used = int(ok.sum())
    if used == 0:
        return PassAtK(int(k), float("nan"), float("nan"), 0, int(n_arr.size))
    at = row_pass_at_k(n_arr[ok], c_arr[ok], k)
    hat = row_pass_hat_k(n_arr[ok], c_arr[ok], k)
    return PassAtK(int(k), float(at.mean()), float(hat.mean()), used, int(n_arr.size) - used)


publish(globals())
