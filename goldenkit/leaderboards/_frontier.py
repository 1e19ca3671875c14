"""The quality-cost frontier of a leaderboard: which runs no other run beats on both quality and cost.

Quality is a run's pass rate over its collapsed rows (PASS over PASS + FAIL,
as the leaderboard counts it). Cost is what the run spent per passing row:
its tokens in and out over all its outcomes (every repeat, ERROR included:
they were spent) divided by its passing rows, or its money over its passing
rows when every run of the board has a price (:func:`row_usage` says where
the money came from). A run is *on the frontier* when no other run is at
least as good on both and strictly better on one (Pareto dominance).

How sure that is comes from a paired bootstrap over rows
(:func:`frontier_bootstrap`): the rows of the aligned runs
(:func:`goldenkit.leaderboards._alignment.align_runs`) are resampled with
replacement, the same rows for every run; both figures of every run are
recomputed on each resample and ``frontier_prob`` is the share of resamples
in which the run is on the frontier. ``dominated_95`` marks a run some other
run beats on both in at least 95% of the resamples. The draw is NumPy's
``default_rng(seed).integers(0, rows, size=(resamples, rows))`` (row
positions, one resample per line), so a seed and a number of resamples give
the same probabilities in any language that reproduces PCG64; both are
recorded with the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._pricing import NO_MONEY, money_label
from goldenkit.errors import InputError

__all__ = [
    "DOMINATED_SHARE",
    "FRONTIER_COLUMNS",
    "MONEY",
    "TOKENS",
    "USAGE_COLUMNS",
    "Frontier",
    "RowUsage",
    "Spend",
    "frontier_bootstrap",
    "frontier_mask",
    "row_usage",
]

#: The outcome columns the cost figures are read from.
USAGE_COLUMNS = ("tokens_in", "tokens_out", "latency_ms", "cost")
#: The two cost measures, as the output names them.
TOKENS = "tokens per passing row"
MONEY = "money per passing row"
#: A run beaten on both figures in at least this share of resamples is "dominated at 95%".
DOMINATED_SHARE = 0.95
#: What the frontier adds to each line of the leaderboard's table.
FRONTIER_COLUMNS = ("on_frontier", "frontier_prob", "dominated_95", "dominated_by")
_CELLS = 2_000_000  # resample x row cells per block of the count matrix (16 MB of float64)


@dataclass(frozen=True)
class RowUsage:
    """What every run spent on every aligned row: ``(runs x rows)`` arrays in the leaderboard's row order.

    ``tokens`` sums tokens in and out over the row's outcomes (a count the server did not report adds
    nothing); ``money`` is the row's money where ``money_source[i]`` is not ``"n/a"``;
    ``tokens_known[i]`` is False when run ``i`` reported no token count at all (its cost is then n/a,
    never 0). ``latency`` holds the answered outcomes' latencies per run (for the p50).
    """

    tokens: np.ndarray
    money: np.ndarray
    tokens_known: np.ndarray
    money_source: list[str]
    latency: list[np.ndarray]
    latency_rows: list[np.ndarray]  # the row position of each latency


def _numbers(table: Any, col: str) -> np.ndarray:
    if col not in table.column_names:
        return np.full(table.num_rows, np.nan)
    return np.asarray(pd.to_numeric(table.column(col).to_pandas(), errors="coerce"), dtype=float)


def row_usage(runs: Sequence[Any], row_ids: np.ndarray, pricing: Any = None) -> RowUsage:
    """Each run's tokens, money and latencies per row of ``row_ids`` (the aligned order).

    ``runs``: :class:`~goldenkit.leaderboards._alignment.RunInput` objects whose tables carry
    :data:`USAGE_COLUMNS` (a missing column is no report). Money is the provider's price when every
    answered outcome of the run has one (``"provider"``), else the user's ``pricing``
    (:class:`goldenkit._pricing.Pricing`) of the run's model when every answered outcome reported its
    tokens (labelled ``[pricing] SOURCE DATE``), else ``"n/a"``: never a guess.
    """
    index = pd.Index(row_ids)
    shape = (len(runs), len(row_ids))
    tokens, money = np.zeros(shape), np.zeros(shape)
    known, sources, lat, lat_rows = np.zeros(len(runs), bool), [], [], []
    for i, r in enumerate(runs):
        t = r.table
        pos = index.get_indexer(pd.Series(t.column("row_id").to_pandas(), dtype=object).astype(str))
        answered = np.asarray(t.column("verdict").to_pandas().astype(str) != "ERROR", dtype=bool)
        tin, tout, ms, cost = (_numbers(t, c) for c in USAGE_COLUMNS)
        spent = np.nan_to_num(tin) + np.nan_to_num(tout)
        known[i] = bool(np.isfinite(tin).any() or np.isfinite(tout).any())
        tokens[i] = np.bincount(pos, weights=spent, minlength=len(row_ids))
        price = pricing.price(r.model) if pricing else None
        if answered.any() and np.isfinite(cost[answered]).all():
            each, source = np.nan_to_num(cost), money_label(True, None)
        elif price is not None and answered.any() and np.isfinite(tin[answered] + tout[answered]).all():
            each = np.zeros(len(pos))
            for j in np.flatnonzero(np.isfinite(tin + tout)):  # the price's own rule, one call per outcome
                each[j] = price.cost(int(tin[j]), int(tout[j])) or 0.0
            source = money_label(False, price)
        else:
            each, source = np.zeros(len(pos)), money_label(False, None)
        money[i] = np.bincount(pos, weights=each, minlength=len(row_ids))
        sources.append(source)
        keep = answered & np.isfinite(ms)
        lat.append(ms[keep])
        lat_rows.append(pos[keep])
    return RowUsage(tokens, money, known, sources, lat, lat_rows)


def _figures(weights: np.ndarray, passed: np.ndarray, graded: np.ndarray, spent: np.ndarray) -> tuple[Any, Any]:
    """Quality and cost of every run under row ``weights`` (``(resamples x rows)``): ``(resamples x runs)`` each.

    A run with no graded row has quality -inf (it beats nobody); one that spent without passing has cost
    +inf; one that neither spent nor passed, cost 0.
    """
    k = weights @ passed.T
    n = weights @ graded.T
    c = weights @ spent.T
    with np.errstate(divide="ignore", invalid="ignore"):
        quality = np.where(n > 0, k / np.where(n > 0, n, 1.0), -np.inf)
        cost = np.where(k > 0, c / np.where(k > 0, k, 1.0), np.where(c > 0, np.inf, 0.0))
    return quality, cost


def _beats(quality: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """``(resamples x runs x runs)``: ``[b, j, i]`` when run j dominates run i in resample b."""
    qj, qi = quality[:, :, None], quality[:, None, :]
    cj, ci = cost[:, :, None], cost[:, None, :]
    return (qj >= qi) & (cj <= ci) & ((qj > qi) | (cj < ci))


def frontier_mask(quality: Sequence[float], cost: Sequence[float]) -> np.ndarray:
    """Which points no other point dominates (at least as good on both, strictly better on one).

    >>> frontier_mask([0.9, 0.8, 0.7, 0.85], [100, 50, 60, 100]).tolist()
    [True, True, False, False]
    """
    q = np.asarray(quality, dtype=float)[None, :]
    c = np.asarray(cost, dtype=float)[None, :]
    return np.asarray(~_beats(q, c)[0].any(axis=0))


@dataclass(frozen=True)
class Frontier:
    """The frontier of one block of rows: per run the point estimates and the bootstrap's shares."""

    quality: np.ndarray
    cost: np.ndarray
    on_frontier: np.ndarray
    frontier_prob: np.ndarray
    dominated_share: np.ndarray  # share of resamples some other run beats it on both
    dominated_by: list[str | None]  # off the frontier: the run beating it in the most resamples (else None)

    @property
    def dominated_95(self) -> np.ndarray:
        return np.asarray(self.dominated_share >= DOMINATED_SHARE)


def frontier_bootstrap(
    verdict: np.ndarray,
    spent: np.ndarray,
    run_ids: Sequence[str],
    *,
    seed: int = 0,
    resamples: int = 2000,
) -> Frontier:
    """The frontier of runs over aligned rows, and the paired bootstrap's probabilities (module doc).

    ``verdict``: ``(runs x rows)`` collapsed verdict codes (PASS 0, FAIL 1, ERROR 2, SKIPPED 3);
    ``spent``: ``(runs x rows)`` tokens or money per row.

    >>> v = np.array([[0, 0, 0, 1], [0, 1, 1, 1]])
    >>> f = frontier_bootstrap(v, np.array([[1.0, 1, 1, 1], [5.0, 5, 5, 5]]), ["a", "b"], resamples=50)
    >>> f.on_frontier.tolist(), f.frontier_prob.tolist(), f.dominated_by
    ([True, False], [1.0, 0.0], [None, 'a'])
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InputError(f"resamples must be a positive integer, got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    passed = (verdict == 0).astype(float)
    graded = (verdict <= 1).astype(float)
    spent = np.asarray(spent, dtype=float)
    runs, rows = verdict.shape
    quality, cost = _figures(np.ones((1, rows)), passed, graded, spent)
    on = ~_beats(quality, cost)[0].any(axis=0)
    on_count, beaten, by = np.zeros(runs), np.zeros(runs), np.zeros((runs, runs))
    if rows:
        rng = np.random.default_rng(seed)
        step = max(1, _CELLS // rows)
        for start in range(0, resamples, step):  # blocks of resamples, each one matrix (memory, not speed)
            size = min(step, resamples - start)
            draw = rng.integers(0, rows, size=(size, rows))
            weights = np.bincount((draw + rows * np.arange(size)[:, None]).ravel(), minlength=size * rows)
            beats = _beats(*_figures(weights.reshape(size, rows).astype(float), passed, graded, spent))
            dominated = beats.any(axis=1)
            on_count += (~dominated).sum(axis=0)
            beaten += dominated.sum(axis=0)
            by += beats.sum(axis=0)
    share = on_count / resamples if rows else on.astype(float)
    dom = beaten / resamples if rows else (~on).astype(float)
    top = by.argmax(axis=0)
    names = [str(run_ids[int(top[i])]) if by[top[i], i] > 0 and not on[i] else None for i in range(runs)]
    return Frontier(quality[0], cost[0], on, share, dom, names)


def frontier_frame(f: Frontier) -> pd.DataFrame:
    """The frontier's columns (:data:`FRONTIER_COLUMNS`), one line per run in the order given."""
    return pd.DataFrame(
        {
            "on_frontier": f.on_frontier,
            "frontier_prob": f.frontier_prob,
            "dominated_95": f.dominated_95,
            "dominated_by": f.dominated_by,
        }
    )


@dataclass(frozen=True)
class Spend:
    """What the leaderboard needs for its cost columns: the runs' usage and the frontier's settings.

    ``measure``: :data:`MONEY` when every run has money, else :data:`TOKENS` when every run reported
    tokens, else None (no frontier; :meth:`note` says why).
    """

    usage: RowUsage
    run_ids: list[str]  # in the aligned order of ``usage``
    seed: int = 0
    resamples: int = 2000

    @property
    def measure(self) -> str | None:
        if all(s != NO_MONEY for s in self.usage.money_source):
            return MONEY
        return TOKENS if bool(self.usage.tokens_known.all()) else None

    def __post_init__(self) -> None:
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 1:
            raise InputError(f"frontier resamples must be a positive integer, got {self.resamples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"frontier seed must be an integer >= 0, got {self.seed!r}")

    def note(self) -> str:
        """Why there is no frontier, or which measure it uses and how sure it is."""
        if self.measure is None:
            mute = [r for r, k in zip(self.run_ids, self.usage.tokens_known, strict=True) if not k]
            return f"no quality-cost frontier: run {mute[0]} recorded no token count and no price (cost n/a)"
        return (
            f"quality-cost frontier on pass rate and {self.measure}; frontier_prob from a paired bootstrap "
            f"over rows ({self.resamples} resamples, seed {self.seed})"
        )

    def settings(self) -> dict[str, Any]:
        return {"measure": self.measure, "seed": self.seed, "resamples": self.resamples}

    def columns(self, verdict: np.ndarray, cols: np.ndarray, order: np.ndarray) -> pd.DataFrame:
        """The cost, latency and frontier columns of the runs ``order`` over the rows ``cols`` (that order)."""
        u = self.usage
        v = verdict[np.ix_(order, cols)]
        k = (v == 0).sum(axis=1)
        tokens = u.tokens[np.ix_(order, cols)]
        money = u.money[np.ix_(order, cols)]
        sources = [u.money_source[i] for i in order]
        priced = np.array([s != NO_MONEY for s in sources], dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            tpp = np.where((k > 0) & u.tokens_known[order], tokens.sum(axis=1) / np.maximum(k, 1), np.nan)
            mpp = np.where((k > 0) & priced, money.sum(axis=1) / np.maximum(k, 1), np.nan)
        p50 = [_median(u.latency[i][np.isin(u.latency_rows[i], cols)]) for i in order]
        out = pd.DataFrame(
            {"tokens_per_pass": tpp, "money_per_pass": mpp, "money_source": sources, "latency_p50_ms": p50}
        )
        measure = self.measure
        if measure is None:
            none = pd.DataFrame({c: [None] * len(order) for c in FRONTIER_COLUMNS})
            return pd.concat([out, none], axis=1)
        spent = money if measure == MONEY else tokens
        f = frontier_bootstrap(v, spent, [self.run_ids[i] for i in order], seed=self.seed, resamples=self.resamples)
        return pd.concat([out, frontier_frame(f)], axis=1)


def _median(x: np.ndarray) -> float:
    return float(np.median(x)) if len(x) else float("nan")
