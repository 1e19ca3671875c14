"""Partial credit for a trajectory unit: F1 over a multiset matching, and the LCS alignment share.

Both take a predicate ``match(expected_call, actual_call) -> bool`` (name and
argument policy) and return a :class:`Partial`: the score, the matched count,
and the expected calls left unmatched (missing) and actual calls left over (extra).

* ``F1``: a maximum one-to-one matching between expected and actual calls
  (duplicates count as often as they occur); ``tp`` = matched pairs,
  precision = tp / actual, recall = tp / expected, F1 = 2PR / (P + R).
* ``ALIGN``: ``lcs`` = the longest common subsequence (order kept);
  score = 2·lcs / (expected + actual), i.e. F1 where matched calls must also be in order.

Both sides empty scores 1.0; one side empty scores 0.0 (precision or recall is 0).

>>> same = lambda e, a: e == a
>>> f1_partial(["a", "b", "c", "d"], ["a", "b", "c"], same).score     # P=1, R=3/4 -> 6/7
0.8571428571428571
>>> align_partial(["a", "b", "c"], ["c", "a", "b"], same).score       # lcs 2 of 3+3 -> 2/3
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Partial", "align_partial", "f1_partial", "max_matching"]

Match = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class Partial:
    """One unit's partial score: matched pairs, the unmatched expected and the extra actual calls."""

    score: float
    matched: int
    n_expected: int
    n_actual: int
    missing: tuple[Any, ...]
    extra: tuple[Any, ...]

    @property
    def precision(self) -> float:
        """matched / actual calls; 1.0 when no call was made (no wrong call)."""
        return self.matched / self.n_actual if self.n_actual else 1.0

    @property
    def recall(self) -> float:
        """matched / expected calls; 1.0 when none was expected (nothing missed)."""
        return self.matched / self.n_expected if self.n_expected else 1.0


def max_matching(expected: Sequence[Any], actual: Sequence[Any], match: Match) -> list[int | None]:
    """For each actual call, the index of the expected call it is matched to (None: unmatched).

    A maximum bipartite matching (augmenting paths): a first-fit pass is not
    enough once a looser expected call may take the only actual call a stricter
    one accepts.
    """
    owner: list[int | None] = [None] * len(actual)

    def place(i: int, seen: set[int]) -> bool:
        for j, a in enumerate(actual):
            if j not in seen and match(expected[i], a):
                seen.add(j)
                holder = owner[j]
                if holder is None or place(holder, seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(expected)):
        place(i, set())
    return owner


def _dice(matched: int, n_e: int, n_a: int) -> float:
    if n_e == 0 and n_a == 0:
        return 1.0
    return 2.0 * matched / (n_e + n_a)


def f1_partial(expected: Sequence[Any], actual: Sequence[Any], match: Match) -> Partial:
    """F1 of the actual calls against the expected ones (a multiset matching; see the module doc)."""
    owner = max_matching(expected, actual, match)
    used = {i for i in owner if i is not None}
    tp = len(used)
    return Partial(
        score=_dice(tp, len(expected), len(actual)),
        matched=tp,
        n_expected=len(expected),
        n_actual=len(actual),
        missing=tuple(e for i, e in enumerate(expected) if i not in used),
        extra=tuple(a for j, a in enumerate(actual) if owner[j] is None),
    )


def align_partial(expected: Sequence[Any], actual: Sequence[Any], match: Match) -> Partial:
    """The longest-common-subsequence share 2·lcs / (expected + actual) (see the module doc)."""
    n, m = len(expected), len(actual)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if match(expected[i], actual[j]):
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    kept_e: set[int] = set()
    kept_a: set[int] = set()
    i = j = 0
    while i < n and j < m:
        if match(expected[i], actual[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            kept_e.add(i)
            kept_a.add(j)
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    lcs = table[0][0] if n and m else 0
    return Partial(
        score=_dice(lcs, n, m),
        matched=lcs,
        n_expected=n,
        n_actual=m,
        missing=tuple(e for k, e in enumerate(expected) if k not in kept_e),
        extra=tuple(a for k, a in enumerate(actual) if k not in kept_a),
    )
