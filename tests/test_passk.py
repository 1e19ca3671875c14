"""pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024) against exact enumeration and closed forms."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from goldenkit.errors import InputError
from goldenkit.leaderboards._passk import pass_at_k, row_pass_at_k, row_pass_hat_k


def _enumerate(n: int, c: int, k: int) -> tuple[float, float]:
    """Every k-subset of n repeats (c passing): share with >= 1 pass, share with all passing."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(any(outcomes[i] for i in s) for s in subsets)
    all_pass = sum(all(outcomes[i] for i in s) for s in subsets)
    return any_pass / len(subsets), all_pass / len(subsets)


def test_hand_computed_values() -> None:
    # n=3, c=1, k=2: of the 3 pairs, 2 contain the passing repeat; none is all-pass
    assert row_pass_at_k([3], [1], 2)[0] == pytest.approx(2 / 3)
    assert row_pass_hat_k([3], [1], 2)[0] == 0.0
    # n=3, c=2, k=2: every pair has a pass; 1 of 3 pairs is both passing
    assert row_pass_at_k([3], [2], 2)[0] == 1.0
    assert row_pass_hat_k([3], [2], 2)[0] == pytest.approx(1 / 3)
    # n=5, c=2, k=3: 1 - C(3,3)/C(5,3) = 1 - 1/10
    assert row_pass_at_k([5], [2], 3)[0] == pytest.approx(0.9)
    # k = 1: both are c/n
    assert row_pass_at_k([4], [1], 1)[0] == pytest.approx(0.25)
    assert row_pass_hat_k([4], [1], 1)[0] == pytest.approx(0.25)


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_exact_enumeration(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = _enumerate(n, c, k)
    assert row_pass_at_k([n], [c], k)[0] == pytest.approx(at, abs=1e-12)
    assert row_pass_hat_k([n], [c], k)[0] == pytest.approx(hat, abs=1e-12)
    # and the binomial-coefficient forms of the papers
    assert at == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))
    assert hat == pytest.approx(math.comb(c, k) / math.comb(n, k))


def test_large_n_is_stable() -> None:
    # Chen et al.'s product form: no overflowing binomials at n = 200
    est = row_pass_at_k([200], [3], 50)[0]
    assert est == pytest.approx(1 - math.comb(197, 50) / math.comb(200, 50), rel=1e-12)


def test_rows_with_fewer_than_k_graded_repeats_are_left_out_and_counted() -> None:
    # rows: 3/3 passed, 0/3, and one with only 2 graded repeats (an ERROR repeat)
    r = pass_at_k(np.array([3, 3, 2]), np.array([3, 0, 2]), 3)
    assert (r.rows, r.left_out, r.k) == (2, 1, 3)
    assert r.pass_at_k == pytest.approx(0.5)
    assert r.pass_hat_k == pytest.approx(0.5)
    nothing = pass_at_k(np.array([1, 2]), np.array([1, 1]), 3)
    assert nothing.rows == 0 and nothing.left_out == 2 and math.isnan(nothing.pass_at_k)


def test_mean_over_rows() -> None:
    n = np.array([3, 3, 3, 3])
    c = np.array([3, 2, 1, 0])
    r = pass_at_k(n, c, 2)
    assert r.pass_at_k == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)
    assert r.pass_hat_k == pytest.approx((1 + 1 / 3 + 0 + 0) / 4)


@pytest.mark.parametrize(("n", "c", "k"), [([3], [4], 1), ([3], [-1], 1), ([3], [1], 0), ([3, 3], [1], 1)])
def test_bad_input(n: list[int], c: list[int], k: int) -> None:
    with pytest.raises(InputError):
        pass_at_k(np.array(n), np.array(c), k)
