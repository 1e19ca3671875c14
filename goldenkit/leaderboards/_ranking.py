"""A leaderboard of many comparable runs that says which differences are evidence.

(The module is named ``ranking`` so that ``goldenkit.leaderboard`` stays the function.)

:func:`leaderboard` takes the runs of several models (or prompts, or agents) on
the same dataset and protocol and returns a :class:`Leaderboard`:

``table`` -- one line per run, best first (pass rate descending, ties by run id):
``label`` (what people read first, :func:`goldenkit._run_label.run_label`),
``run_id, model, rows`` (rows of the dataset), ``n`` (rows graded after
collapsing repeats), ``k`` (of them PASS), ``pass_rate = k/n``, ``ci_low,
ci_high`` (Wilson interval over the collapsed rows, :func:`goldenkit.stats.wilson_ci`),
``pass_at_k, pass_hat_k`` (:mod:`goldenkit.leaderboards._passk`: Chen et al. 2021's unbiased
pass@k and Yao et al. 2024's pass^k, averaged over rows), ``at_k`` (the k
of those two; by default the runs' repeats), ``passk_left_out`` (rows with
fewer than ``at_k`` graded repeats, outside both means), ``rank_low,
rank_high, group`` (below), ``errors`` and ``skipped`` (rows whose collapsed
verdict is ERROR / SKIPPED: no evidence, outside ``n``).

``pairs`` -- one line per pair of runs ``a`` above ``b`` in the table:
``n_paired`` rows graded in both, ``excluded`` rows left out of the pair because
they are ERROR or SKIPPED in either run, ``b_count`` rows ``a`` passed and
``b`` failed, ``c_count`` rows ``b`` passed and ``a`` failed, ``p_val`` exact
McNemar (:func:`goldenkit.stats.mcnemar_exact`), ``p_adj`` Holm-adjusted over
all pairs (:func:`goldenkit.stats.holm`), ``diff = (b_count - c_count) /
n_paired`` (pass rate of ``a`` minus ``b`` on the paired rows) with
Newcombe's paired interval ``diff_ci_low, diff_ci_high``
(:func:`goldenkit.stats.paired_diff_ci`), and ``significant`` (``p_adj < alpha``).
Only ``p_adj`` is adjusted for the number of pairs; ``p_val`` and the interval
are each pair's own, and every display labels them so (:data:`PAIR_ADJUSTMENT`).
Rows are paired by id.

Rank intervals. ``a`` is *significantly better* than ``b`` when their pair's
``p_adj < alpha`` and ``a`` passed more of the discordant rows
(``b_count > c_count``). Then ``rank_low = 1 +`` (runs significantly better)
and ``rank_high =`` (number of runs) ``-`` (runs significantly worse): every
rank the data cannot rule out. ``group`` is ``top`` for every run whose
interval contains 1 -- indistinguishable from the leader -- and otherwise a
letter (``A``, ``B``, ...) per distinct interval, in table order.

Comparability comes first: every run must agree with the others on the
dataset sha256, the repeats, every grader's version, the judge version and
the set of row ids (the keys of :func:`goldenkit.comparability.comparability_differences`).
Otherwise :class:`goldenkit.errors.ComparisonInvalid` names the odd run and
each key that differs, and no number is computed. The odd run is the one that
disagrees with the run most others agree with.

With ``by_slice=True`` both tables get a leading ``slice`` column: the
overall block (:data:`goldenkit.stats.OVERALL`) and then one block per slice,
each ranked on its own rows with Holm over that block's pairs.

Cost, latency and the quality-cost frontier (:mod:`goldenkit.leaderboards._frontier`) are
columns of ``table`` too, each from the one accounting of a run's cost
(:func:`goldenkit.results._accounting.accounting`, per run and per slice): ``tokens_per_pass``
(the candidate's tokens in and out over every outcome, per passing row; null when the run reported no
token count), ``money_per_pass`` with ``money_source`` (its label: ``provider``, ``[pricing] SOURCE
DATE`` or ``n/a ...``: then null, never a guess), ``latency_p50_ms`` (answered outcomes), and
``on_frontier``, ``frontier_prob``, ``dominated_95``, ``dominated_by``. ``Leaderboard.frontier`` says
which cost measure the frontier used (money when every run has a price, else tokens), its seed and
resamples.
"""

from __future__ import annotations

import os
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._jsonable import json_records
from goldenkit._registry import publish
from goldenkit._reprs import leaderboard_html, leaderboard_repr
from goldenkit._run_label import run_label
from goldenkit.compare import side_problems
from goldenkit.errors import InfrastructureError, InputError
from goldenkit.leaderboards._alignment import Aligned, RunInput, align_runs, run_inputs
from goldenkit.leaderboards._frontier import FRONTIER_COLUMNS, LeaderboardCosts, row_usage
from goldenkit.leaderboards._passk import pass_at_k
from goldenkit.results import judge_notes
from goldenkit.stats import OVERALL, holm, mcnemar_exact, paired_diff_ci, parse_rule, wilson_ci

__all__ = ["PAIR_ADJUSTMENT", "PAIR_COLUMNS", "TABLE_COLUMNS", "Leaderboard", "leaderboard"]

TABLE_COLUMNS = (
    "label",
    "run_id",
    "model",
    "rows",
    "n",
    "k",
    "pass_rate",
    "ci_low",
    "ci_high",
    "pass_at_k",
    "pass_hat_k",
    "at_k",
    "passk_left_out",
    "rank_low",
    "rank_high",
    "group",
    "errors",
    "skipped",
    "tokens_per_pass",
    "money_per_pass",
    "money_source",
    "latency_p50_ms",
    *FRONTIER_COLUMNS,
)
PAIR_COLUMNS = (
    "a",
    "b",
    "n_paired",
    "excluded",
    "b_count",
    "c_count",
    "p_val",
    "p_adj",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "significant",
)

#: Which of a pair's values are adjusted for the many pairs (``Leaderboard.to_dict()["adjustment"]``).
PAIR_ADJUSTMENT = {
    "p_val": "unadjusted: the exact McNemar p of the pair alone",
    "p_adj": "Holm-adjusted over all pairs of the table (per slice block with by_slice); decides significant",
    "diff_ci": "unadjusted: Newcombe's 95% interval of the pair alone (not widened for the number of pairs)",
}


@dataclass
class Leaderboard:
    """What :func:`leaderboard` returns (see the module docstring for the columns)."""

    table: pd.DataFrame
    pairs: pd.DataFrame
    alpha: float
    rule: str
    at_k: int
    by_slice: bool = False
    notes: list[str] = field(default_factory=list)
    pairwise: pd.DataFrame | None = (
        None  # per pair, with pairwise_judge (goldenkit.leaderboards._pairwise.pairwise_leaderboard)
    )
    #: runs left out of ranks and groups because they are not evidence: ``{"run_id", "why"}`` each
    left_out: list[dict[str, str]] = field(default_factory=list)
    #: the frontier's settings: ``{"measure", "seed", "resamples"}`` (measure None: no frontier, see notes)
    frontier: dict[str, Any] = field(default_factory=dict)

    @property
    def run_ids(self) -> list[str]:
        return [str(r) for r in self.table["run_id"].drop_duplicates()]

    def __repr__(self) -> str:

        return leaderboard_repr(self)

    def _repr_html_(self) -> str:

        return leaderboard_html(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"table": [...], "pairs": [...]}`` plus the settings; NaN becomes None (JSON null)."""
        out: dict[str, Any] = {
            "table": json_records(self.table),
            "pairs": json_records(self.pairs),
            "alpha": self.alpha,
            "rule": self.rule,
            "at_k": self.at_k,
            "notes": list(self.notes),
            "left_out": [dict(x) for x in self.left_out],
            "adjustment": dict(PAIR_ADJUSTMENT),
            "frontier": dict(self.frontier),
        }
        if isinstance(self.pairwise, pd.DataFrame):
            out["pairwise"] = json_records(self.pairwise)
        return out


# --------------------------------------------------------------------------- the statistics


def _run_table(al: Aligned, cols: np.ndarray, at_k: int) -> pd.DataFrame:
    """The per-run columns of one block (rows ``cols``), sorted best first; ranks filled in by :func:`_rank`.
    The Wilson intervals are 95% ones whatever the leaderboard's ``alpha`` (which is the pairs' test level)."""
    v = al.verdict[:, cols]
    n = (v <= 1).sum(axis=1)
    k = (v == 0).sum(axis=1)
    lo, hi = wilson_ci(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    pk = [pass_at_k(al.n_graded[i, cols], al.n_pass[i, cols], at_k) for i in range(len(al.run_ids))]
    t = pd.DataFrame(
        {
            "label": [run_label({"run_id": r.run_id, **r.manifest}) for r in al.runs],  # a DataFrame's: its name
            "run_id": al.run_ids,
            "model": al.models,
            "rows": len(cols),
            "n": n,
            "k": k,
            "pass_rate": rate,
            "ci_low": lo,
            "ci_high": hi,
            "pass_at_k": [p.pass_at_k for p in pk],
            "pass_hat_k": [p.pass_hat_k for p in pk],
            "at_k": at_k,
            "passk_left_out": [p.left_out for p in pk],
            "errors": (v == 2).sum(axis=1),
            "skipped": (v == 3).sum(axis=1),
            "_i": np.arange(len(al.run_ids)),
        }
    )
    t["_r"] = t["pass_rate"].fillna(-1.0)
    return t.sort_values(["_r", "run_id"], ascending=[False, True], kind="stable").drop(columns="_r")


def _pair_counts(al: Aligned, cols: np.ndarray, order: np.ndarray) -> dict[str, np.ndarray]:
    """(runs x runs) counts in table order: n11 both passed, n10 row-run passed only, n01, n00; graded in both."""
    v = al.verdict[np.ix_(order, cols)]
    passed = (v == 0).astype(np.float64)
    failed = (v == 1).astype(np.float64)
    # exact as float64 (counts far below 2**53); one matrix product per cell of the 2x2 table
    return {
        "n11": np.rint(passed @ passed.T).astype(np.int64),
        "n10": np.rint(passed @ failed.T).astype(np.int64),
        "n01": np.rint(failed @ passed.T).astype(np.int64),
        "n00": np.rint(failed @ failed.T).astype(np.int64),
    }


def _pairs_table(ids: list[str], counts: dict[str, np.ndarray], rows: int, alpha: float) -> pd.DataFrame:
    ia, ib = np.triu_indices(len(ids), k=1)
    n11, n10, n01, n00 = (counts[c][ia, ib] for c in ("n11", "n10", "n01", "n00"))
    n_paired = n11 + n10 + n01 + n00
    p = np.asarray(mcnemar_exact(n10, n01), dtype=float) if len(ia) else np.zeros(0)
    diff, lo, hi = paired_diff_ci(n11, n10, n01, n00) if len(ia) else (np.zeros(0),) * 3
    p_adj = holm(p) if len(ia) else np.zeros(0)
    return pd.DataFrame(
        {
            "a": [ids[i] for i in ia],
            "b": [ids[j] for j in ib],
            "n_paired": n_paired,
            "excluded": rows - n_paired,
            "b_count": n10,
            "c_count": n01,
            "p_val": p,
            "p_adj": p_adj,
            "diff": np.asarray(diff, dtype=float),
            "diff_ci_low": np.asarray(lo, dtype=float),
            "diff_ci_high": np.asarray(hi, dtype=float),
            "significant": p_adj < alpha,
        },
        columns=list(PAIR_COLUMNS),
    )


def _rank(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """rank_low, rank_high and group from the significant pairs (see the module docstring)."""
    ids = list(table["run_id"])
    better = dict.fromkeys(ids, 0)  # runs significantly better than this one
    worse = dict.fromkeys(ids, 0)  # runs significantly worse
    sig = pairs[pairs["significant"]]
    for a, b, bc, cc in zip(sig["a"], sig["b"], sig["b_count"], sig["c_count"], strict=True):
        if bc > cc:
            better[b] += 1
            worse[a] += 1
        elif cc > bc:
            better[a] += 1
            worse[b] += 1
    m = len(ids)
    out = table.copy()
    out["rank_low"] = [1 + better[r] for r in ids]
    out["rank_high"] = [m - worse[r] for r in ids]
    letters: dict[tuple[int, int], str] = {}
    groups = []
    for lo, hi in zip(out["rank_low"], out["rank_high"], strict=True):
        if lo == 1:
            groups.append("top")
            continue
        if (lo, hi) not in letters:
            letters[(lo, hi)] = _letter(len(letters))
        groups.append(letters[(lo, hi)])
    out["group"] = groups
    return out


def _letter(i: int) -> str:
    """A, B, ..., Z, AA, AB, ..."""
    letters = string.ascii_uppercase
    return letters[i] if i < 26 else _letter(i // 26 - 1) + letters[i % 26]


def _block(
    al: Aligned, cols: np.ndarray, at_k: int, alpha: float, costs: LeaderboardCosts, name: str = OVERALL
) -> tuple[pd.DataFrame, pd.DataFrame]:
    table = _run_table(al, cols, at_k)
    order = table["_i"].to_numpy()
    pairs = _pairs_table(list(table["run_id"]), _pair_counts(al, cols, order), len(cols), alpha)
    table = _rank(table.drop(columns="_i"), pairs)
    table = pd.concat([table.reset_index(drop=True), costs.columns(al.verdict, cols, order, name)], axis=1)
    return table[list(TABLE_COLUMNS)].reset_index(drop=True), pairs


def _evidence(inputs: Sequence[RunInput]) -> tuple[list[RunInput], list[dict[str, str]]]:
    """The runs that are evidence, and the others with why (INVALID or incomplete: never ranked)."""
    keep, out = [], []
    for s in inputs:
        why = side_problems(s.manifest)
        if why:
            out.append({"run_id": s.run_id, "why": "; ".join(why)})
        else:
            keep.append(s)
    if not keep:
        shown = "; ".join(f"{x['run_id']}: {x['why']}" for x in out)
        raise InfrastructureError(f"leaderboard: no run is evidence ({shown})")
    return keep, out


def _notes(left_out: Sequence[Mapping[str, str]], table: pd.DataFrame, pairs: pd.DataFrame) -> list[str]:
    notes = [f"run {x['run_id']} is left out of ranks and groups: {x['why']}" for x in left_out]
    excluded = int(pairs["excluded"].max()) if len(pairs) else 0
    if excluded:
        notes.append(f"up to {excluded} rows per pair are left out: ERROR or SKIPPED in at least one run of the pair")
    left = int(table["passk_left_out"].max()) if len(table) else 0
    if left:
        notes.append(
            f"up to {left} rows per run have fewer than {int(table['at_k'].iloc[0])} graded repeats "
            "and are outside pass@k and pass^k"
        )
    return notes


def leaderboard(
    runs: Any,
    alpha: float = 0.05,
    rule: str = "majority",
    *,
    k: int | None = None,
    by_slice: bool = False,
    results_dir: str | os.PathLike[str] = "results",
    pairwise_judge: Any = None,
    pricing: Any = None,
    frontier_seed: int = 0,
    frontier_resamples: int = 2000,
) -> Leaderboard:
    """Rank comparable runs with Wilson intervals, paired exact McNemar tests and rank intervals.

    ``runs``: see :func:`goldenkit.leaderboards._alignment.run_inputs`. ``k``: the k of pass@k and pass^k
    (default: the runs' repeats). ``pairwise_judge``: a judge for open-ended
    rows (see :mod:`goldenkit.leaderboards._pairwise`); its result is ``Leaderboard.pairwise``.
    ``pricing``: a :class:`goldenkit._pricing.Pricing` for runs whose provider returned no price;
    ``frontier_seed`` and ``frontier_resamples``: the frontier's bootstrap (:mod:`goldenkit.leaderboards._frontier`).
    Raises :class:`~goldenkit.errors.ComparisonInvalid` when the runs are not
    comparable (the message names the odd run and each key that differs).

    >>> import pandas as pd
    >>> def run(verdicts):
    ...     return pd.DataFrame({"row_id": [f"r{i}" for i in range(len(verdicts))], "repeat": 0,
    ...                          "slice": "s", "verdict": verdicts})
    >>> lb = leaderboard({"a": run(["PASS"] * 9 + ["FAIL"]), "b": run(["FAIL"] * 9 + ["PASS"])})
    >>> lb.table[["run_id", "k", "rank_low", "rank_high", "group"]].to_dict("list")
    {'run_id': ['a', 'b'], 'k': [9, 1], 'rank_low': [1, 2], 'rank_high': [1, 2], 'group': ['top', 'A']}
    """
    parse_rule(rule)
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InputError(f"k must be a positive integer, got {k!r}")
    evidence, left_out = _evidence(run_inputs(runs, results_dir, rule))
    al = align_runs(evidence, rule)
    sides = al.runs
    at_k = int(k) if k is not None else sides[0].repeats
    everything = np.arange(al.verdict.shape[1])
    costs = LeaderboardCosts(row_usage(sides, al.row_ids, pricing, rule), al.run_ids, frontier_seed, frontier_resamples)
    table, pairs = _block(al, everything, at_k, alpha, costs)
    notes = [*_notes(left_out, table, pairs), *filter(None, [costs.note()])]

    notes += judge_notes(runs, results_dir, only={r.run_id for r in evidence}, rule=rule, alpha=alpha)
    if by_slice:
        tables, pair_tables = [table.assign(slice=OVERALL)], [pairs.assign(slice=OVERALL)]
        for code, name in enumerate(al.slice_names):
            t, p = _block(al, np.flatnonzero(al.slices == code), at_k, alpha, costs, name)
            tables.append(t.assign(slice=name))
            pair_tables.append(p.assign(slice=name))
        table = _slice_first(pd.concat(tables, ignore_index=True))
        pairs = _slice_first(pd.concat(pair_tables, ignore_index=True))
    result = Leaderboard(table, pairs, alpha, rule, at_k, by_slice, notes, left_out=left_out)
    result.frontier = costs.settings()
    if pairwise_judge is not None:
        from goldenkit.leaderboards._pairwise import pairwise_leaderboard

        result.pairwise = pairwise_leaderboard(list(runs), pairwise_judge, results_dir=str(results_dir))
    return result


def _slice_first(df: pd.DataFrame) -> pd.DataFrame:
    return df[["slice", *[c for c in df.columns if c != "slice"]]]


publish(globals())
