"""goldenkit.leaderboard: definitions against hand-computed cases and independent references."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from run_factory import manifest, outcomes, write_run
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from goldenkit import leaderboard
from goldenkit.errors import ComparisonInvalid, InputError
from goldenkit.leaderboards._ranking import PAIR_COLUMNS, TABLE_COLUMNS
from goldenkit.stats import OVERALL


def run(verdicts: list[str] | list[tuple[str, ...]], slices: list[str] | None = None) -> pd.DataFrame:
    """Outcomes of one run: one verdict per row (one repeat), or a tuple of verdicts per row."""
    recs = []
    for i, v in enumerate(verdicts):
        reps = (v,) if isinstance(v, str) else v
        for rep, verdict in enumerate(reps):
            recs.append(
                {
                    "row_id": f"r{i:03d}",
                    "slice": (slices or ["s"] * len(verdicts))[i],
                    "repeat": rep,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(recs)


def fails_on(n: int, failing: range) -> list[str]:
    return ["FAIL" if i in failing else "PASS" for i in range(n)]


def test_columns_and_order_ties_by_run_id() -> None:
    lb = leaderboard(
        {"zeta": run(fails_on(10, range(2))), "alpha": run(fails_on(10, range(2))), "mid": run(fails_on(10, range(5)))}
    )
    assert list(lb.table.columns) == list(TABLE_COLUMNS)
    assert list(lb.pairs.columns) == list(PAIR_COLUMNS)
    assert list(lb.table["run_id"]) == ["alpha", "zeta", "mid"]  # 80%, 80% (ties by id), 50%
    assert list(lb.table["k"]) == [8, 8, 5]
    assert list(zip(lb.pairs["a"], lb.pairs["b"], strict=True)) == [
        ("alpha", "zeta"),
        ("alpha", "mid"),
        ("zeta", "mid"),
    ]


def test_rank_intervals_hand_computed() -> None:
    # A passes all 100 rows; B fails 4, C fails 8 (each failure set inside the next).
    # A-B: 4 vs 0, p = 0.125; A-C: 8 vs 0, p = 0.0078; B-C: 4 vs 0, p = 0.125.
    # Holm: 0.0078 * 3 = 0.0234 < 0.05 (A better than C); 0.125 * 2 = 0.25; 0.25. So
    # A: 1 + 0 better, 3 - 1 worse -> [1, 2]; B: [1, 3]; C: 1 + 1 better -> [2, 3].
    lb = leaderboard(
        {"A": run(fails_on(100, range(0))), "B": run(fails_on(100, range(4))), "C": run(fails_on(100, range(8)))}
    )
    t = lb.table.set_index("run_id")
    assert (t.loc["A", "rank_low"], t.loc["A", "rank_high"]) == (1, 2)
    assert (t.loc["B", "rank_low"], t.loc["B", "rank_high"]) == (1, 3)
    assert (t.loc["C", "rank_low"], t.loc["C", "rank_high"]) == (2, 3)
    assert list(t["group"]) == ["top", "top", "A"]
    p = lb.pairs.set_index(["a", "b"])
    assert p.loc[("A", "C"), "p_adj"] == pytest.approx(3 * 2 * 0.5**8)
    assert bool(p.loc[("A", "C"), "significant"]) and not bool(p.loc[("A", "B"), "significant"])


def test_separated_runs_get_one_letter_each() -> None:
    # A-B 10 vs 0, A-C 20 vs 0, B-C 10 vs 0: all significant after Holm -> ranks 1, 2, 3
    lb = leaderboard(
        {"A": run(fails_on(100, range(0))), "B": run(fails_on(100, range(10))), "C": run(fails_on(100, range(20)))}
    )
    assert list(lb.table["rank_low"]) == [1, 2, 3]
    assert list(lb.table["rank_high"]) == [1, 2, 3]
    assert list(lb.table["group"]) == ["top", "A", "B"]


def test_pairs_against_scipy_and_statsmodels() -> None:
    rng = np.random.default_rng(7)
    runs = {
        name: run(list(rng.choice(["PASS", "FAIL"], size=60, p=[p, 1 - p])))
        for name, p in [("m1", 0.9), ("m2", 0.7), ("m3", 0.5), ("m4", 0.45)]
    }
    lb = leaderboard(runs)
    for rec in lb.pairs.to_dict("records"):
        b, c = rec["b_count"], rec["c_count"]
        # scipy's exact binomial test of min(b, c) out of b + c at 1/2 (R: binom.test(min(b, c), b + c))
        assert rec["p_val"] == pytest.approx(binomtest(min(b, c), b + c, 0.5).pvalue if b + c else 1.0)
        assert rec["diff"] == pytest.approx((b - c) / rec["n_paired"])
    expected = multipletests(lb.pairs["p_val"], method="holm")[1]
    assert np.allclose(lb.pairs["p_adj"], expected)


def test_newcombe_interval_of_a_published_table() -> None:
    # Fagerland, Lydersen & Laake (2017) ch. 8, Cavo et al. 2012: 59 both, 6 / 16 discordant, 80 neither;
    # Newcombe's interval for p1 - p2 = -0.0621 is (-0.1186, -0.0046); here "a" is the better side.
    kinds = ["both"] * 59 + ["only_b"] * 6 + ["only_a"] * 16 + ["neither"] * 80
    a = run(["PASS" if k in ("both", "only_a") else "FAIL" for k in kinds])
    b = run(["PASS" if k in ("both", "only_b") else "FAIL" for k in kinds])
    rec = leaderboard({"a": a, "b": b}).pairs.iloc[0]
    assert (rec["a"], rec["b_count"], rec["c_count"], rec["n_paired"]) == ("a", 16, 6, 161)
    assert rec["diff"] == pytest.approx(0.0621, abs=1e-4)
    assert rec["diff_ci_low"] == pytest.approx(0.0046, abs=1e-4)
    assert rec["diff_ci_high"] == pytest.approx(0.1186, abs=1e-4)


def test_error_rows_leave_the_pair_and_are_counted() -> None:
    a = run(["PASS", "PASS", "ERROR", "FAIL", "PASS"])
    b = run(["FAIL", "PASS", "PASS", "SKIPPED", "PASS"])
    c = run(["PASS"] * 5)
    lb = leaderboard({"a": a, "b": b, "c": c})
    p = lb.pairs.set_index(["a", "b"])
    assert p.loc[("c", "a"), "n_paired"] == 4 and p.loc[("c", "a"), "excluded"] == 1
    row = lb.pairs[(lb.pairs["a"].isin(["a", "b"])) & (lb.pairs["b"].isin(["a", "b"]))].iloc[0]
    assert (row["n_paired"], row["excluded"]) == (3, 2)
    t = lb.table.set_index("run_id")
    assert (t.loc["a", "errors"], t.loc["b", "skipped"], t.loc["a", "n"]) == (1, 1, 4)
    assert any("left out" in n for n in lb.notes)


def test_wilson_and_pass_at_k_columns() -> None:
    reps = [("PASS", "PASS", "PASS"), ("PASS", "FAIL", "PASS"), ("FAIL", "FAIL", "PASS"), ("ERROR", "PASS", "PASS")]
    lb = leaderboard({"x": run(reps * 100)})
    t = lb.table.iloc[0]
    assert (t["n"], t["k"], t["at_k"], t["passk_left_out"]) == (400, 300, 3, 100)
    # Wilson's closed form (Wilson 1927) for 300 of 400 at z = 1.959964
    z, ph, n = 1.959963984540054, 0.75, 400
    centre, half = (ph + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))
    half /= 1 + z * z / n
    assert (t["ci_low"], t["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-9)
    # pass@3 over rows with 3 graded repeats: 1, 1, 1 -> 1; pass^3: 1, 0, 0 -> 1/3
    assert (t["pass_at_k"], t["pass_hat_k"]) == pytest.approx((1.0, 1 / 3))
    t2 = leaderboard({"x": run(reps * 100)}, k=2).table.iloc[0]
    # k=2: pass@2 rows: 1, 1, 2/3, 1 (n=2, c=2); pass^2: 1, 1/3, 0, 1
    assert (t2["pass_at_k"], t2["pass_hat_k"], t2["passk_left_out"]) == pytest.approx(((11 / 3) / 4, (7 / 3) / 4, 0))


def test_by_slice_blocks() -> None:
    slices = ["x"] * 20 + ["y"] * 20
    a = run(fails_on(40, range(20, 40)), slices)  # passes x, fails y
    b = run(fails_on(40, range(0, 20)), slices)  # the reverse
    lb = leaderboard({"a": a, "b": b}, by_slice=True)
    assert list(lb.table["slice"].unique()) == [OVERALL, "x", "y"]
    x = lb.table[lb.table["slice"] == "x"]
    assert list(x["run_id"]) == ["a", "b"] and list(x["group"]) == ["top", "A"]
    y = lb.table[lb.table["slice"] == "y"]
    assert list(y["run_id"]) == ["b", "a"]
    overall = lb.table[lb.table["slice"] == OVERALL]
    assert list(overall["group"]) == ["top", "top"]  # 20 vs 20 overall: no evidence either way
    assert lb.pairs.groupby("slice").size().to_dict() == {OVERALL: 1, "x": 1, "y": 1}


def test_to_dict_is_json_with_null_for_nan() -> None:
    lb = leaderboard({"a": run(["ERROR"] * 3), "b": run(["PASS"] * 3)})
    text = json.dumps(lb.to_dict(), allow_nan=False)
    back = json.loads(text)
    a = next(r for r in back["table"] if r["run_id"] == "a")
    assert a["pass_rate"] is None and a["n"] == 0 and isinstance(back["pairs"][0]["n_paired"], int)


# --------------------------------------------------------------------------- comparability


def _write(tmp_path: Path, run_id: str, rows: int = 6, **man: object) -> Path:
    frame = outcomes([(f"r{i}", "s", ("PASS", "PASS", "FAIL")) for i in range(rows)], run_id=run_id)
    return write_run(tmp_path, manifest(run_id, **man), frame)  # type: ignore[arg-type]


def test_runs_from_folders(tmp_path: Path) -> None:
    paths = [_write(tmp_path, "r1", model_id="m-1"), _write(tmp_path, "r2", model_id="m-2")]
    lb = leaderboard(paths)
    assert list(lb.table["model"]) == ["m-1", "m-2"] and list(lb.table["n"]) == [6, 6]
    assert list(leaderboard(["r1", "r2"], results_dir=tmp_path).table["run_id"]) == ["r1", "r2"]


@pytest.mark.parametrize(
    ("odd", "message"),
    [
        ({"repeats": 5}, "repeats differ: 3 vs 5"),
        ({"sha256": "9" * 64}, "dataset sha256 differs"),
        ({"graders": {"contract": "2"}}, "grader versions differ: contract 1 vs 2"),
        ({"judge_version": "judge-2"}, "judge version differs"),
    ],
)
def test_the_odd_run_is_named_with_the_key(tmp_path: Path, odd: dict[str, object], message: str) -> None:
    # the odd one is given first: the reference is still the run the others agree with
    paths = [_write(tmp_path, "odd", **odd), _write(tmp_path, "r1"), _write(tmp_path, "r2")]
    with pytest.raises(ComparisonInvalid) as exc:
        leaderboard(paths)
    assert exc.value.exit_code == 4
    text = str(exc.value)
    assert "run odd vs r1" in text and message in text and "r2 vs" not in text


def test_row_set_differs(tmp_path: Path) -> None:
    paths = [_write(tmp_path, "r1"), _write(tmp_path, "r2"), _write(tmp_path, "short", rows=5)]
    with pytest.raises(ComparisonInvalid, match=r"run short vs r1: row set differs: 1 only in r1 \(r5\)"):
        leaderboard(paths)


def test_bad_arguments() -> None:
    with pytest.raises(InputError):
        leaderboard({"a": run(["PASS"])}, alpha=1.5)
    with pytest.raises(InputError):
        leaderboard({"a": run(["PASS"])}, rule="sometimes")
    with pytest.raises(InputError):
        leaderboard("just-one-run-id")


# --------------------------------------------------------------------------- properties

verdict_lists = st.lists(st.sampled_from(["PASS", "FAIL", "ERROR"]), min_size=12, max_size=12)


@settings(max_examples=40, deadline=None)
@given(st.lists(verdict_lists, min_size=2, max_size=4), st.randoms(use_true_random=False))
def test_permuting_the_runs_changes_nothing(matrix: list[list[str]], rnd: object) -> None:
    runs = {f"m{i}": run(v) for i, v in enumerate(matrix)}
    names = list(runs)
    rnd.shuffle(names)  # type: ignore[attr-defined]
    a = leaderboard(runs)
    b = leaderboard({n: runs[n] for n in names})
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)


@settings(max_examples=40, deadline=None)
@given(verdict_lists, st.lists(verdict_lists, min_size=0, max_size=2))
def test_a_model_compared_with_itself_is_in_the_top_group(me: list[str], others: list[list[str]]) -> None:
    alone = leaderboard({"me": run(me), "me-again": run(me)})
    assert list(alone.table["group"]) == ["top", "top"]
    pair = alone.pairs.iloc[0]
    assert (pair["b_count"], pair["c_count"], pair["p_val"]) == (0, 0, 1.0)
    # among others, the two copies always share their rank interval and group
    lb = leaderboard({"me": run(me), "me-again": run(me), **{f"o{i}": run(v) for i, v in enumerate(others)}})
    t = lb.table.set_index("run_id")
    assert tuple(t.loc["me", ["rank_low", "rank_high", "group"]]) == tuple(
        t.loc["me-again", ["rank_low", "rank_high", "group"]]
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(verdict_lists, min_size=2, max_size=4))
def test_rank_interval_holds_the_rank_and_tops_hold_the_leader(matrix: list[list[str]]) -> None:
    lb = leaderboard({f"m{i}": run(v) for i, v in enumerate(matrix)})
    t = lb.table
    assert (t["rank_low"] <= t["rank_high"]).all()
    assert t.iloc[0]["group"] == "top" or math.isnan(t.iloc[0]["pass_rate"]) or t.iloc[0]["rank_low"] == 1
    # every pair of runs appears once, with consistent counts
    assert len(lb.pairs) == len(list(itertools.combinations(range(len(matrix)), 2)))
    assert ((lb.pairs["n_paired"] + lb.pairs["excluded"]) == 12).all()


def test_one_outcome_frame_with_run_ids(tmp_path: Path) -> None:
    from goldenkit.results import outcomes_df

    a = write_run(tmp_path, manifest("a"), outcomes([(f"r{i}", "s", ("PASS",) * 3) for i in range(5)], run_id="a"))
    b = write_run(tmp_path, manifest("b"), outcomes([(f"r{i}", "s", ("FAIL",) * 3) for i in range(5)], run_id="b"))
    from_frame = leaderboard(outcomes_df(a, b))
    from_folders = leaderboard([a, b])
    cols = ["run_id", "n", "k", "pass_rate", "rank_low", "rank_high", "group"]
    pd.testing.assert_frame_equal(from_frame.table[cols], from_folders.table[cols])
    assert list(from_frame.table["model"]) == ["m", "m"]  # the outcomes' agent_version, not the manifest's
    with pytest.raises(ComparisonInvalid, match="dataset sha256 differs"):
        other = outcomes([("r0", "s", ("PASS",))], run_id="c").assign(dataset_sha256="f" * 64)
        leaderboard({"a": outcomes([("r0", "s", ("PASS",))], run_id="a"), "c": other})
