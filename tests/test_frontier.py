"""The quality-cost frontier (goldenkit.leaderboards._frontier) and the leaderboard's cost columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import goldenkit
from goldenkit import leaderboards
from goldenkit._pricing import Pricing
from goldenkit.errors import InputError
from goldenkit.leaderboards import _frontier
from goldenkit.leaderboards._frontier import MONEY, TOKENS, frontier_bootstrap, frontier_mask

PASS, FAIL, ERROR, SKIPPED = 0, 1, 2, 3


def loop_bootstrap(verdict: np.ndarray, spent: np.ndarray, seed: int, resamples: int) -> tuple[list[float], ...]:
    """The plain reference: one resample at a time, every figure and every pair of runs in Python."""
    runs, rows = verdict.shape
    draws = np.random.default_rng(seed).integers(0, rows, size=(resamples, rows))
    on_count, beaten = [0] * runs, [0] * runs
    for b in range(resamples):
        picked = draws[b]
        quality, cost = [], []
        for i in range(runs):
            k = sum(1 for r in picked if verdict[i, r] == PASS)
            n = sum(1 for r in picked if verdict[i, r] in (PASS, FAIL))
            c = sum(float(spent[i, r]) for r in picked)
            quality.append(k / n if n else -np.inf)
            cost.append(c / k if k else (np.inf if c > 0 else 0.0))
        for i in range(runs):
            dominated = any(
                quality[j] >= quality[i] and cost[j] <= cost[i] and (quality[j] > quality[i] or cost[j] < cost[i])
                for j in range(runs)
                if j != i
            )
            beaten[i] += dominated
            on_count[i] += not dominated
    return [x / resamples for x in on_count], [x / resamples for x in beaten]


def random_board(seed: int, runs: int = 4, rows: int = 37) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    verdict = rng.choice([PASS, FAIL, ERROR, SKIPPED], p=[0.55, 0.35, 0.05, 0.05], size=(runs, rows))
    spent = rng.integers(50, 400, size=(runs, rows)).astype(float)
    return verdict, spent


@pytest.mark.parametrize("block", [None, 45])  # 45 cells: resamples drawn in blocks of one resample
def test_bootstrap_matches_a_plain_loop(monkeypatch: pytest.MonkeyPatch, block: int | None) -> None:
    if block is not None:
        monkeypatch.setattr(_frontier, "_CELLS", block)
    verdict, spent = random_board(3)
    f = frontier_bootstrap(verdict, spent, ["a", "b", "c", "d"], seed=11, resamples=300)
    on, beaten = loop_bootstrap(verdict, spent, seed=11, resamples=300)
    np.testing.assert_allclose(f.frontier_prob, on, rtol=0, atol=1e-12)
    np.testing.assert_allclose(f.dominated_share, beaten, rtol=0, atol=1e-12)
    assert ((f.frontier_prob > 0) & (f.frontier_prob < 1)).sum() >= 2  # the board is not trivial


def test_same_seed_same_answer_other_seed_other_draw() -> None:
    verdict, spent = random_board(5, runs=3, rows=20)
    one = frontier_bootstrap(verdict, spent, ["a", "b", "c"], seed=1, resamples=200)
    again = frontier_bootstrap(verdict, spent, ["a", "b", "c"], seed=1, resamples=200)
    other = loop_bootstrap(verdict, spent, seed=2, resamples=200)[0]
    assert one.frontier_prob.tolist() == again.frontier_prob.tolist()
    np.testing.assert_allclose(frontier_bootstrap(verdict, spent, "abc", seed=2, resamples=200).frontier_prob, other)


def test_a_planted_dominated_run_is_dominated_at_95() -> None:
    rows = 200
    rng = np.random.default_rng(0)
    good = np.where(rng.random(rows) < 0.9, PASS, FAIL)
    bad = np.where(rng.random(rows) < 0.5, PASS, FAIL)
    cheap = np.where(rng.random(rows) < 0.6, PASS, FAIL)
    verdict = np.vstack([good, bad, cheap])
    spent = np.vstack([np.full(rows, 100.0), np.full(rows, 300.0), np.full(rows, 20.0)])
    f = frontier_bootstrap(verdict, spent, ["good", "bad", "cheap"], seed=0, resamples=500)
    assert f.dominated_95.tolist() == [False, True, False]
    assert f.dominated_by == [None, "good", None]
    assert f.on_frontier.tolist() == [True, False, True]
    assert f.frontier_prob[1] <= 0.05 and f.frontier_prob[0] == 1.0


def test_frontier_of_hand_made_points_is_exact() -> None:
    quality = [0.90, 0.80, 0.70, 0.85, 0.90, 0.60, 0.95]
    cost = [100, 50, 60, 100, 100, 10, 400]
    # 0.70@60 loses to 0.80@50; 0.85@100 to 0.90@100; the twins at 0.90@100 beat each other on nothing
    assert frontier_mask(quality, cost).tolist() == [True, True, False, False, True, True, True]
    assert frontier_mask([0.5], [10]).tolist() == [True]


def test_bootstrap_point_estimates_and_settings() -> None:
    verdict = np.array([[PASS, PASS, FAIL, ERROR], [PASS, FAIL, FAIL, FAIL]])
    spent = np.array([[10.0, 20, 30, 40], [5.0, 5, 5, 5]])
    f = frontier_bootstrap(verdict, spent, ["x", "y"], seed=0, resamples=10)
    assert f.quality.tolist() == [2 / 3, 1 / 4]
    assert f.cost.tolist() == [100 / 2, 20 / 1]
    assert f.on_frontier.tolist() == [True, True]
    with pytest.raises(InputError, match="resamples"):
        frontier_bootstrap(verdict, spent, ["x", "y"], resamples=0)
    with pytest.raises(InputError, match="seed"):
        frontier_bootstrap(verdict, spent, ["x", "y"], seed=-1)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda runs: st.integers(1, 12).flatmap(
            lambda rows: st.tuples(
                st.lists(
                    st.lists(st.sampled_from([PASS, FAIL, ERROR, SKIPPED]), min_size=rows, max_size=rows),
                    min_size=runs,
                    max_size=runs,
                ),
                st.lists(st.lists(st.integers(0, 500), min_size=rows, max_size=rows), min_size=runs, max_size=runs),
                st.lists(st.integers(0, 50), min_size=rows, max_size=rows),
                st.integers(0, 2**32),
            )
        )
    )
)
def test_a_run_best_on_every_row_is_always_on_the_frontier(case: tuple) -> None:
    """Passing every row and spending no more than any other run on each: on the frontier in every resample."""
    verdicts, spends, saving, seed = case
    others = np.array(verdicts)
    other_spent = np.array(spends, dtype=float)
    best_spent = np.clip(other_spent.min(axis=0) - np.array(saving), 0, None)
    verdict = np.vstack([np.full(others.shape[1], PASS), others])
    spent = np.vstack([best_spent, other_spent])
    ids = ["best", *[f"r{i}" for i in range(len(others))]]
    f = frontier_bootstrap(verdict, spent, ids, seed=seed, resamples=40)
    assert f.frontier_prob[0] == 1.0
    assert f.dominated_share[0] == 0.0 and f.on_frontier[0] and f.dominated_by[0] is None


# ------------------------------------------------------------------ through goldenkit.leaderboard


def outcomes(verdicts: list[str], tokens: list[int | None], **extra: list) -> pd.DataFrame:
    n = len(verdicts)
    return pd.DataFrame(
        {
            "row_id": [f"r{i}" for i in range(n)],
            "repeat": 0,
            "slice": ["s1", "s2"] * (n // 2) + ["s1"] * (n % 2),
            "verdict": verdicts,
            "tokens_in": tokens,
            "tokens_out": [None if t is None else 1 for t in tokens],
            **extra,
        }
    )


def test_leaderboard_cost_columns_are_exact() -> None:
    a = outcomes(["PASS", "PASS", "FAIL", "ERROR"], [9, 19, 29, None], latency_ms=[100.0, 300.0, 200.0, 5000.0])
    b = outcomes(["PASS", "FAIL", "FAIL", "PASS"], [4, 4, 4, 4], latency_ms=[10.0, 10.0, 30.0, 30.0])
    lb = goldenkit.leaderboard({"a": a, "b": b}, frontier_resamples=50)
    t = lb.table.set_index("run_id")
    # a: (10 + 20 + 30) tokens over 2 passing rows; its ERROR row reported nothing; p50 over answered outcomes
    assert t.loc["a", "tokens_per_pass"] == 30.0 and t.loc["a", "latency_p50_ms"] == 200.0
    assert t.loc["b", "tokens_per_pass"] == 10.0 and t.loc["b", "latency_p50_ms"] == 20.0
    assert t["money_source"].tolist() == ["n/a (no prices)"] * 2 and t["money_per_pass"].isna().all()
    assert lb.frontier == {"measure": TOKENS, "seed": 0, "resamples": 50}
    assert lb.to_dict()["frontier"]["resamples"] == 50
    assert t["on_frontier"].tolist() == [True, True]  # a is better, b cheaper
    assert "50 resamples, seed 0" in leaderboards.frontier_line(lb) and not any("frontier" in n for n in lb.notes)


def test_money_from_the_provider_then_from_prices_never_guessed() -> None:
    priced = outcomes(["PASS", "PASS"], [100, 100], cost=[0.5, 0.25])
    unpriced = outcomes(["PASS", "FAIL"], [1_000_000, 1_000_000], agent_version=[{"model_id": "m-u"}] * 2)
    lb = goldenkit.leaderboard({"p": priced, "u": unpriced}, frontier_resamples=20)
    t = lb.table.set_index("run_id")
    assert t.loc["p", "money_per_pass"] == pytest.approx(0.375) and t.loc["p", "money_source"] == "provider"
    assert np.isnan(t.loc["u", "money_per_pass"]) and t.loc["u", "money_source"] == "n/a (no prices)"
    assert lb.frontier["measure"] == TOKENS  # not every run has money
    table = {"m-u": {"input": 1.0, "output": 2.0, "source": "list", "date": "2026-11-01"}}
    lb = goldenkit.leaderboard({"p": priced, "u": unpriced}, pricing=Pricing.from_config(table, "g.toml"))
    t = lb.table.set_index("run_id")
    # u: 2 calls x (1e6 in at $1 + 1 out at $2) per million, over its one passing row
    assert t.loc["u", "money_per_pass"] == pytest.approx(2 * (1.0 + 2e-6))
    assert t.loc["u", "money_source"] == "[pricing] list 2026-11-01" and lb.frontier["measure"] == MONEY


def test_a_run_without_token_counts_has_no_frontier() -> None:
    lb = goldenkit.leaderboard({"a": outcomes(["PASS", "FAIL"], [None, None]), "b": outcomes(["PASS", "PASS"], [3, 3])})
    t = lb.table.set_index("run_id")
    assert np.isnan(t.loc["a", "tokens_per_pass"]) and t.loc["b", "tokens_per_pass"] == 4.0
    assert lb.frontier["measure"] is None and t["frontier_prob"].isna().all()
    assert any(n.startswith("no quality-cost frontier: run a recorded no token count") for n in lb.notes)


def test_by_slice_blocks_have_their_own_costs() -> None:
    a = outcomes(["PASS", "PASS", "FAIL", "PASS"], [1, 3, 5, 7])
    b = outcomes(["PASS", "FAIL", "PASS", "FAIL"], [1, 1, 1, 1])
    lb = goldenkit.leaderboard({"a": a, "b": b}, by_slice=True, frontier_resamples=20)
    t = lb.table.set_index(["slice", "run_id"])["tokens_per_pass"]
    # s1 = rows r0, r2; s2 = rows r1, r3 (tokens in + 1 out each)
    assert t[("s1", "a")] == (2 + 6) / 1 and t[("s2", "a")] == (4 + 8) / 2 and t[("s1", "b")] == 4 / 2
    assert np.isnan(t[("s2", "b")])  # no passing row: per passing row is n/a
    f = lb.table.set_index(["slice", "run_id"])["on_frontier"]
    assert f[("s2", "a")] and not f[("s2", "b")]  # spent without passing: beaten by a on both


def test_the_bootstrap_resamples_the_accountings_figures() -> None:
    """Over all rows, the bootstrap's cost per run is the accounting's tokens (or money) per passing row."""
    from goldenkit.leaderboards._alignment import align_runs, run_inputs
    from goldenkit.leaderboards._frontier import row_usage
    from goldenkit.stats import OVERALL

    a = outcomes(["PASS", "PASS", "FAIL", "ERROR"], [9, 19, 29, None], cost=[0.1, 0.2, 0.3, None])
    b = outcomes(["PASS", "FAIL", "FAIL", "PASS"], [4, 4, 4, 4], cost=[0.01] * 4)
    al = align_runs(run_inputs({"a": a, "b": b}))
    usage = row_usage(al.runs, al.row_ids)
    assert usage.money is not None
    for spent, figure in ((usage.tokens, "tokens_per_passing_row"), (usage.money, "money_per_passing_row")):
        f = frontier_bootstrap(al.verdict, spent, al.run_ids, resamples=1)
        expected = [float(t.loc[OVERALL, figure]) for t in usage.figures]
        np.testing.assert_allclose(f.cost, expected, rtol=1e-12)
    assert [float(t.loc[OVERALL, "money_per_passing_row"]) for t in usage.figures] == pytest.approx([0.3, 0.02])
