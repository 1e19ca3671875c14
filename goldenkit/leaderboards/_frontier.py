"""The quality-cost frontier of a leaderboard: which runs no other run beats on both quality and cost.

Quality is a run's pass rate over its collapsed rows (PASS over PASS + FAIL,
as the leaderboard counts it). Cost is what the candidate spent per passing
row: its tokens in and out over all its outcomes (every repeat, ERROR
included: they were spent) divided by its passing rows, or its money over its
passing rows when every run of the board has a price (:func:`row_usage` says
where the money came from). Both measures count the candidate alone
(:data:`goldenkit.results._accounting.PASSING_ROW_ROLE`: what choosing the
model costs; the judge's and simulated user's calls are the evaluation's),
and the measure's name says so. A run is *on the frontier* when no other run is at
least as good on both and strictly better on one (Pareto dominance).

How sure that is comes from a paired bootstrap over rows
(:func:`frontier_bootstrap`): the rows of the aligned runs
(:func:`goldenkit.leaderboards._alignment.align_runs`) are resampled with
replacement, the same rows for every run; both figures of every run are
recomputed on each resample and ``frontier_prob`` is the share of resamples
in which the run is on the frontier. ``dominated_95`` marks a run that one
other run beats on both in enough resamples to say so at 95%: of B resamples,
the number in which run j does *not* beat run i gives the ordered pair the
bootstrap p ``(1 + that number) / (1 + B)``, and Holm's adjustment over the
ordered pairs of the board (:func:`goldenkit.stats.holm`) must keep it at 0.05
or below. Runs of equal quality and cost are then called dominated on about 5%
of boards or fewer, however many runs there are (a share per run of "beaten by
any other run" called most of ten equal runs dominated); with m runs it takes at
least ``20 m (m - 1)`` resamples to say it at all (:meth:`LeaderboardCosts.note`).
A run with no graded row has no quality: it neither beats nor is beaten, and its
frontier columns are n/a. The draw is NumPy's
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

from goldenkit.errors import InputError
from goldenkit.results import accounting, outcome_cost, role_models, run_pricing
from goldenkit.schema import OUTCOME_FIELDS, TOKEN_COUNTS
from goldenkit.stats import OVERALL, holm

__all__ = [
    "ACCOUNTING_COLUMNS",
    "DOMINATED_SHARE",
    "FRONTIER_COLUMNS",
    "MONEY",
    "TOKENS",
    "Frontier",
    "RowUsage",
    "LeaderboardCosts",
    "dominated_at_95",
    "frontier_bootstrap",
    "frontier_mask",
    "row_usage",
]

#: The outcome columns a run's cost is read from (by :func:`goldenkit.results._accounting.accounting`).
ACCOUNTING_COLUMNS = (
    "row_id",
    "slice",
    "repeat",
    "verdict",
    "agent_version",
    "attempts",
    *TOKEN_COUNTS,
    "cost",
    "usage",
    "latency_ms",
    "ttft_ms",
)
#: The two cost measures, as the output names them.
TOKENS = "candidate tokens per passing row"
MONEY = "candidate money per passing row"
#: "Dominated at 95%": one other run beats it on both with a Holm-adjusted bootstrap p of at most 1 - this.
DOMINATED_SHARE = 0.95
#: What the frontier adds to each line of the leaderboard's table.
FRONTIER_COLUMNS = ("on_frontier", "frontier_prob", "dominated_95", "dominated_by")
_CELLS = 2_000_000  # resample x row cells per block of the count matrix (16 MB of float64)


@dataclass(frozen=True)
class RowUsage:
    """What every run spent, from the one accounting (:func:`goldenkit.results._accounting.accounting`).

    ``figures[i]``: run ``i``'s accounting per slice and :data:`~goldenkit.stats.OVERALL` (tokens and
    money per passing row, the money's label, latency p50: what the leaderboard shows). For the
    bootstrap, per aligned row (``(runs x rows)``, the leaderboard's row order): the candidate's
    ``tokens`` (in + out) and ``money`` over the row's outcomes
    (:func:`~goldenkit.results._accounting.outcome_cost`; money None unless every run's is known).
    Summed over rows they are the numerators of the accounting's per passing row figures.
    """

    figures: list[pd.DataFrame]
    tokens: np.ndarray
    money: np.ndarray | None

    @property
    def tokens_known(self) -> np.ndarray:
        """Per run: did any outcome report a token count (else its cost is n/a, never 0)."""
        return np.array(
            [_known(f.loc[OVERALL, "tokens_in"]) or _known(f.loc[OVERALL, "tokens_out"]) for f in self.figures]
        )


def _known(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and np.isnan(x))


def _outcomes(run: Any) -> pd.DataFrame:
    """The run's outcomes with the columns its cost is read from."""
    source = run.source
    if isinstance(source, pd.DataFrame):
        return source
    if source is not None:
        return source.outcomes([c for c in ACCOUNTING_COLUMNS if c in OUTCOME_FIELDS])
    return run.table.to_pandas()


def _recorded_pricing(run: Any) -> Any:
    """The ``[pricing]`` a run folder recorded (none for an outcome DataFrame)."""
    path = getattr(run.source, "path", None)
    return run_pricing(run.manifest, path) if path is not None else None


def row_usage(runs: Sequence[Any], row_ids: np.ndarray, pricing: Any = None, rule: str = "majority") -> RowUsage:
    """Each run's accounting, and its tokens and money per row of ``row_ids`` (the aligned order).

    ``runs``: :class:`~goldenkit.leaderboards._alignment.RunInput` objects; ``pricing``: the user's
    prices (:class:`goldenkit._pricing.Pricing`) for calls whose provider returned none (None: each run
    folder's own, the ``[pricing]`` of the goldenkit.toml it recorded). Money is the provider's price or
    ``[pricing]``'s, labelled by the accounting; without either it is n/a, never a guess.
    """
    index = pd.Index(row_ids)
    tokens, money = np.zeros((len(runs), len(row_ids))), np.zeros((len(runs), len(row_ids)))
    figures = []
    for i, r in enumerate(runs):
        df = _outcomes(r)
        models = role_models(r.manifest)
        prices = pricing if pricing is not None else _recorded_pricing(r)
        figures.append(accounting(df, prices, by="slice" if "slice" in df.columns else None, rule=rule, models=models))
        pos = index.get_indexer(df["row_id"].astype(str))
        spent = outcome_cost(df, prices, models=models)
        tokens[i] = np.bincount(pos, weights=spent["tokens"], minlength=len(row_ids))
        money[i] = np.bincount(pos, weights=np.nan_to_num(spent["money"]), minlength=len(row_ids))
    if not all(_known(f.loc[OVERALL, "money"]) for f in figures):  # the candidate's money, as per passing row
        return RowUsage(figures, tokens, None)
    return RowUsage(figures, tokens, money)


def _figures(weights: np.ndarray, passed: np.ndarray, graded: np.ndarray, spent: np.ndarray) -> tuple[Any, Any]:
    """Quality and cost of every run under row ``weights`` (``(resamples x rows)``): ``(resamples x runs)`` each.

    A run with no graded row has quality NaN (no evidence: it neither beats nor is beaten); one that spent
    without passing has cost +inf; one that neither spent nor passed, cost 0.
    """
    k = weights @ passed.T
    n = weights @ graded.T
    c = weights @ spent.T
    with np.errstate(divide="ignore", invalid="ignore"):
        quality = np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan)
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
    beats: np.ndarray  # (runs x runs): [j, i] the number of resamples in which run j beats run i on both
    resamples: int
    dominated_by: list[str | None]  # dominated, or off the frontier: the run beating it most often (else None)

    @property
    def dominated_95(self) -> np.ndarray:
        """Per run: some other run beats it on both at 95%, Holm over the ordered pairs (module doc)."""
        return dominated_at_95(self.beats, self.resamples)


def dominated_at_95(beats: np.ndarray, resamples: int) -> np.ndarray:
    """Per run ``i``: is there a run ``j`` beating it in ``beats[j, i]`` of ``resamples`` resamples often
    enough that the pair's bootstrap p, ``(1 + resamples - beats[j, i]) / (1 + resamples)``, stays at
    ``1 - DOMINATED_SHARE`` or below after Holm's adjustment over every ordered pair of runs.

    >>> dominated_at_95(np.array([[0, 99], [0, 0]]), 100).tolist(), dominated_at_95(np.array([[0, 96], [0, 0]]), 100)
    ([False, True], array([False, False]))
    """
    counts = np.asarray(beats, dtype=float)
    p = (1.0 + resamples - counts) / (1.0 + resamples)
    np.fill_diagonal(p, np.nan)  # a run is not its own rival
    alpha = round(1.0 - DOMINATED_SHARE, 12)
    return np.asarray((holm(p).reshape(counts.shape) <= alpha).any(axis=0))


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
    named = ~on | dominated_at_95(by, resamples)
    top = by.argmax(axis=0)
    names = [str(run_ids[int(top[i])]) if by[top[i], i] > 0 and named[i] else None for i in range(runs)]
    return Frontier(quality[0], cost[0], on, share, dom, by, resamples, names)


def frontier_frame(f: Frontier) -> pd.DataFrame:
    """The frontier's columns (:data:`FRONTIER_COLUMNS`), one line per run in the order given; n/a (None)
    for a run with no graded row (no quality to place)."""
    out = pd.DataFrame(
        {
            "on_frontier": f.on_frontier,
            "frontier_prob": f.frontier_prob,
            "dominated_95": f.dominated_95,
            "dominated_by": f.dominated_by,
        }
    )
    none = np.isnan(f.quality)
    if none.any():
        out = out.astype({"on_frontier": object, "dominated_95": object})
        out.loc[none, ["on_frontier", "dominated_95", "dominated_by"]] = None
        out.loc[none, "frontier_prob"] = np.nan
    return out


@dataclass(frozen=True)
class LeaderboardCosts:
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
        if self.usage.money is not None:
            return MONEY
        return TOKENS if bool(self.usage.tokens_known.all()) else None

    def __post_init__(self) -> None:
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 1:
            raise InputError(f"frontier resamples must be a positive integer, got {self.resamples!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"frontier seed must be an integer >= 0, got {self.seed!r}")

    def note(self) -> str | None:
        """Why there is no frontier, or why no run can be called dominated at 95% (None: neither; :meth:`settings`
        says how it was drawn)."""
        if self.measure is not None:
            m = len(self.run_ids)
            least = 20 * m * (m - 1)  # the smallest bootstrap p, 1 / (1 + B), must pass Holm's first threshold
            if self.resamples + 1 >= least:
                return None
            return (
                f"{self.resamples} frontier resamples are too few to call any of {m} runs dominated at 95% "
                f"(Holm over {m * (m - 1)} ordered pairs): use --frontier-resamples {least} or more"
            )
        mute = [r for r, k in zip(self.run_ids, self.usage.tokens_known, strict=True) if not k]
        return f"no quality-cost frontier: run {mute[0]} recorded no token count and no price (cost n/a)"

    def settings(self) -> dict[str, Any]:
        return {"measure": self.measure, "seed": self.seed, "resamples": self.resamples}

    def columns(self, verdict: np.ndarray, cols: np.ndarray, order: np.ndarray, block: str = OVERALL) -> pd.DataFrame:
        """The cost, latency and frontier columns of the runs ``order`` over the rows ``cols`` (that order),
        the accounting's figures of ``block`` (:data:`~goldenkit.stats.OVERALL` or a slice)."""
        u = self.usage
        figures = [_figures_of(u.figures[i], block) for i in order]
        out = pd.DataFrame(
            {
                "tokens_per_pass": [f.get("tokens_per_passing_row") for f in figures],
                "money_per_pass": [f.get("money_per_passing_row") for f in figures],
                "money_source": [f.get("money_label") for f in figures],
                "latency_p50_ms": [f.get("latency_p50_ms") for f in figures],
            }
        )
        for c in ("tokens_per_pass", "money_per_pass", "latency_p50_ms"):
            out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
        measure = self.measure
        if measure is None:
            none = pd.DataFrame({c: [None] * len(order) for c in FRONTIER_COLUMNS})
            return pd.concat([out, none], axis=1)
        spent = u.money if measure == MONEY and u.money is not None else u.tokens
        v = verdict[np.ix_(order, cols)]
        ids = [self.run_ids[i] for i in order]
        f = frontier_bootstrap(v, spent[np.ix_(order, cols)], ids, seed=self.seed, resamples=self.resamples)
        return pd.concat([out, frontier_frame(f)], axis=1)


def _figures_of(table: pd.DataFrame, block: str) -> dict[str, Any]:
    return dict(table.loc[block]) if block in table.index else {}
