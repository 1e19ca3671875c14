"""compare_runs: comparability, per-row statuses, the published worked example, flips."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from run_factory import SHA_B, FakeRun, manifest, outcomes, worked_example, write_run

from goldenkit.compare import STATUSES, compare_runs
from goldenkit.errors import ComparisonInvalid
from goldenkit.stats import OVERALL, mcnemar_exact


def runs(**cand_kw: object) -> tuple[FakeRun, FakeRun]:
    b, c = worked_example()
    return FakeRun(manifest("base"), b), FakeRun(manifest("cand", **cand_kw), c)  # type: ignore[arg-type]


def test_worked_example_numbers_come_out_of_compare_runs() -> None:
    base, cand = runs(model_id="model-b", mode="live")
    cmp = compare_runs(base, cand)
    t = cmp.table.set_index("slice")
    ov = t.loc[OVERALL]
    assert (ov["k_base"], ov["n_base"], ov["k_cand"], ov["n_cand"]) == (352, 400, 356, 400)
    assert [round(100 * ov[c], 2) for c in ("base_ci_low", "base_ci_high")] == [84.45, 90.83]
    assert [round(100 * ov[c], 2) for c in ("cand_ci_low", "cand_ci_high")] == [85.55, 91.70]
    assert (ov["b"], ov["c"]) == (10, 14) and round(ov["p_val"], 4) == 0.5413
    assert len(cmp.flips[cmp.flips["status"].isin(["NEW_FAILURE", "RECOVERED"])]) == 24
    r = t.loc["refunds"]
    assert (r["rows"], r["b"], r["c"], round(r["p_val"], 4)) == (60, 8, 1, 0.0391)
    o = t.loc["other"]
    assert (o["rows"], o["b"], o["c"], round(o["p_val"], 5)) == (340, 2, 13, 0.00739)
    # Holm over the two slices: 0.0391 and 0.0148
    assert round(r["p_adj"], 4) == 0.0391 and round(o["p_adj"], 4) == 0.0148
    assert np.isnan(ov["p_adj"])
    # the overall paired difference: +1 point, its interval spans 0
    assert ov["diff"] == pytest.approx(0.01) and ov["diff_ci_low"] < 0 < ov["diff_ci_high"]
    assert cmp.b == 10 and cmp.c == 14 and cmp.p_value == pytest.approx(mcnemar_exact(10, 14))
    assert any("mode differs" in n for n in cmp.notes)
    assert any("model_id model-a vs model-b" in n for n in cmp.notes)


def test_worked_example_table_equals_independent_references() -> None:
    # every number of every line of the comparison table against the hand-coded references of
    # test_stats (50-digit closed forms, exact Fraction sums, a hand step-down), at 1e-9 relative:
    # R: prop.test(k, n, correct = FALSE)$conf.int; binom.test(min(b, c), b + c)$p.value;
    #    p.adjust(p, "holm") over the slice lines
    from test_stats import REL, binom_two_sided_ref, holm_ref, newcombe10_ref, rel_close, wilson_ref

    t = compare_runs(*runs()).table
    p_refs = []
    for _, line in t.iterrows():
        for side in ("base", "cand"):
            lo, hi = wilson_ref(int(line[f"k_{side}"]), int(line[f"n_{side}"]))
            assert rel_close(line[f"{side}_ci_low"], lo, REL) and rel_close(line[f"{side}_ci_high"], hi, REL)
        b, c = int(line["b"]), int(line["c"])
        p_ref = binom_two_sided_ref(b, c)
        assert rel_close(line["p_val"], p_ref, REL)
        p_refs.append(p_ref)
        both_pass = int(line["k_base"]) - b  # no ERROR rows in the worked example
        both_fail = int(line["n_paired"]) - both_pass - b - c
        est, lo, hi = newcombe10_ref(both_pass, c, b, both_fail)
        assert rel_close(line["diff"], est, REL)
        assert rel_close(line["diff_ci_low"], lo, REL) and rel_close(line["diff_ci_high"], hi, REL)
    adj = holm_ref(p_refs[:-1])  # the slices form one family; the overall line is not adjusted
    assert all(rel_close(a, r, REL) for a, r in zip(t["p_adj"].iloc[:-1], adj, strict=True))
    assert [round(x, 4) for x in adj] == [0.0148, 0.0391]  # "other" sorts before "refunds"


def test_flip_list_has_both_sides() -> None:
    cmp = compare_runs(*runs())
    f = cmp.flips
    assert list(f.columns) == [
        "row_id",
        "slice",
        "tags",
        "status",
        "base_verdict",
        "cand_verdict",
        "base_response",
        "cand_response",
        "base_reasons",
        "cand_reasons",
        "base_findings",
        "cand_findings",
    ]
    assert f["status"].tolist()[:10] == ["NEW_FAILURE"] * 10
    row = f[f["row_id"] == "refunds-0001"].iloc[0]
    assert row["status"] == "NEW_FAILURE" and row["slice"] == "refunds" and row["tags"] == ["multi_turn"]
    # representative repeat: the first whose verdict equals the row's collapsed verdict
    assert row["base_response"].startswith("base says refunds-0001") and row["base_response"].endswith("PASS")
    assert row["cand_response"].startswith("cand says refunds-0001") and row["cand_response"].endswith("FAIL")
    assert "missing phrase" in row["cand_reasons"]["contract"]
    assert row["base_reasons"]["contract"].endswith("ok")


def test_swap_swaps_b_and_c_and_keeps_p() -> None:
    base, cand = runs()
    ab = compare_runs(base, cand).table
    ba = compare_runs(cand, base).table
    assert ab["b"].tolist() == ba["c"].tolist() and ab["c"].tolist() == ba["b"].tolist()
    assert np.allclose(ab["p_val"], ba["p_val"]) and np.allclose(ab["diff"], -ba["diff"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["PASS", "FAIL", "ERROR"]),
            st.sampled_from(["PASS", "FAIL", "ERROR"]),
        ),
        min_size=1,
        max_size=60,
    )
)
@settings(max_examples=25, deadline=None)
def test_swap_property(rows: list[tuple[str, str, str]]) -> None:
    b = outcomes([(f"r{i}", s, [v]) for i, (s, v, _) in enumerate(rows)], run_id="x")
    c = outcomes([(f"r{i}", s, [v]) for i, (s, _, v) in enumerate(rows)], run_id="y")
    x, y = FakeRun(manifest("x", repeats=1), b), FakeRun(manifest("y", repeats=1), c)
    xy, yx = compare_runs(x, y), compare_runs(y, x)
    assert xy.table["b"].tolist() == yx.table["c"].tolist()
    assert xy.table["c"].tolist() == yx.table["b"].tolist()
    assert np.allclose(xy.table["p_val"], yx.table["p_val"])
    assert (xy.table["p_adj"].fillna(-1) >= xy.table["p_val"].where(xy.table["p_adj"].notna(), -1) - 1e-15).all()
    counts = xy.status_counts()
    assert counts["NEW_ERROR"] == yx.status_counts()["ERROR_CLEARED"]
    assert sum(counts.values()) == len(rows)


def test_each_differing_key_is_named() -> None:
    b, c = worked_example()
    base = FakeRun(manifest("base"), b)
    cand = FakeRun(
        manifest("cand", sha256=SHA_B, repeats=5, graders={"contract": "2", "judge": "1"}, judge_version="j2"), c
    )
    with pytest.raises(ComparisonInvalid) as err:
        compare_runs(base, cand)
    msg = str(err.value)
    assert "dataset sha256 differs: 3f2a00000000... vs 9b1c11111111..." in msg
    assert "repeats differ: 3 vs 5" in msg
    assert "grader versions differ: contract 1 vs 2; judge only in candidate" in msg
    assert "judge version differs: None vs j2" in msg
    assert len(err.value.differences) == 4 and err.value.exit_code == 4


def test_row_set_and_rule_must_agree() -> None:
    b, c = worked_example()
    base = FakeRun(manifest("base"), b)
    fewer = FakeRun(manifest("cand"), c[~c["row_id"].isin(["other-0100", "refunds-0003"])])
    # the same protocol with rows the candidate lost: they are MISSING in the ledger, never dropped
    cmp = compare_runs(base, fewer)
    led = cmp.ledger.rows.set_index("row_id")
    assert list(led.loc[["other-0100", "refunds-0003"], "cand_status"]) == ["MISSING", "MISSING"]
    assert not led.loc[["other-0100", "refunds-0003"], "paired"].any()
    assert cmp.status_counts()["MISSING"] == 2 and int(cmp.overall["missing"]) == 2
    refunds = cmp.ledger.account("refunds")
    assert refunds.rows - refunds.paired >= 1 and refunds.causes["absent"] >= 1
    assert "MISSING on the candidate" in refunds.line()
    more = FakeRun(manifest("cand"), c)
    assert compare_runs(FakeRun(manifest("base"), b[b["row_id"] != "other-0100"]), more).ledger.out_of_scope == [
        "other-0100"
    ]

    class Saved(FakeRun):
        rule = "all"

    with pytest.raises(ComparisonInvalid, match="collapse rule differs: majority vs all"):
        compare_runs(base, Saved(manifest("cand"), c))


def test_error_rows_are_out_of_b_and_c_and_stated() -> None:
    rows_b = [
        ("x1", "s", ["PASS"]),
        ("x2", "s", ["FAIL"]),
        ("x3", "s", ["ERROR"]),
        ("x4", "s", ["PASS"]),
        ("x5", "s", ["ERROR"]),
        ("x6", "s", ["SKIPPED"]),
    ]
    rows_c = [
        ("x1", "s", ["ERROR"]),
        ("x2", "s", ["PASS"]),
        ("x3", "s", ["FAIL"]),
        ("x4", "s", ["FAIL"]),
        ("x5", "s", ["ERROR"]),
        ("x6", "s", ["PASS"]),
    ]
    base = FakeRun(manifest("b", repeats=1), outcomes(rows_b))
    cand = FakeRun(manifest("c", repeats=1), outcomes(rows_c))
    cmp = compare_runs(base, cand)
    st_ = dict(zip(cmp.rows["row_id"], cmp.rows["status"].astype(str), strict=True))
    assert st_ == {
        "x1": "NEW_ERROR",
        "x2": "RECOVERED",
        "x3": "ERROR_CLEARED",
        "x4": "NEW_FAILURE",
        "x5": "UNCHANGED_ERROR",
        "x6": "SKIPPED",
    }
    ov = cmp.overall
    assert (ov["b"], ov["c"], ov["n_paired"], ov["new_error"], ov["error_cleared"]) == (1, 1, 2, 1, 1)
    assert (ov["n_base"], ov["n_cand"]) == (3, 4)  # each side over its own graded rows
    assert any("ERROR in the candidate only" in n for n in cmp.notes)
    assert any("the error cleared" in n for n in cmp.notes)
    assert set(cmp.flips["status"]) == {"NEW_FAILURE", "RECOVERED", "NEW_ERROR", "ERROR_CLEARED"}
    err = cmp.flips.set_index("row_id").loc["x1"]
    assert err["cand_reasons"] == {"error": "provider timeout"} and err["cand_response"] is None
    assert set(cmp.status_counts()) == set(STATUSES)


def test_to_dict_is_json() -> None:
    cmp = compare_runs(*runs())
    doc = json.loads(json.dumps(cmp.to_dict()))
    assert doc["table"][-1]["slice"] == OVERALL and doc["table"][-1]["p_adj"] is None
    assert len(doc["flips"]) == 24 and doc["status_counts"]["NEW_FAILURE"] == 10


def test_compare_reads_run_folders_parquet_and_jsonl(tmp_path: pytest.TempPathFactory) -> None:
    from goldenkit.results import read_run

    b, c = worked_example()
    write_run(tmp_path, manifest("base"), b, parquet=True)
    write_run(tmp_path, manifest("cand"), c, parquet=False)
    cmp = compare_runs(read_run(tmp_path / "base"), read_run(tmp_path / "cand"))
    in_memory = compare_runs(*runs())
    cols = ["slice", "b", "c", "p_val", "p_adj", "k_base", "k_cand"]
    pd.testing.assert_frame_equal(cmp.table[cols], in_memory.table[cols])
    assert cmp.flips["row_id"].tolist() == in_memory.flips["row_id"].tolist()
    assert cmp.flips["cand_response"].tolist() == in_memory.flips["cand_response"].tolist()
    assert cmp.base_id == "base" and cmp.cand_id == "cand"


def test_row_set_differences_between_run_folders(tmp_path: pytest.TempPathFactory) -> None:
    from goldenkit.results import read_run

    b, c = worked_example()
    write_run(tmp_path, manifest("base"), b)
    write_run(tmp_path, manifest("fewer"), c[c["row_id"] != "other-0100"])
    extra = pd.concat([c, outcomes([("new-row", "other", ["PASS", "PASS", "PASS"])])], ignore_index=True)
    write_run(tmp_path, manifest("more"), extra)
    bad = c.assign(verdict=c["verdict"].where(c["row_id"] != "other-0107", "MAYBE"))
    write_run(tmp_path, manifest("bad"), bad, parquet=False)
    base = read_run(tmp_path / "base")
    fewer = compare_runs(base, read_run(tmp_path / "fewer")).ledger
    assert fewer.rows.set_index("row_id").at["other-0100", "why"] == "MISSING on the candidate"
    more = compare_runs(base, read_run(tmp_path / "more"))
    assert more.ledger.out_of_scope == ["new-row"] and any("1 row(s) only in the candidate" in n for n in more.notes)
    from goldenkit.errors import ResultsError

    with pytest.raises(ResultsError, match="unknown verdict 'MAYBE' \\(row other-0107\\)"):
        compare_runs(base, read_run(tmp_path / "bad"))


# ----------------------------------------------------------------- the row-id encoder of the Arrow path


def test_shuffled_parquet_runs_give_the_in_memory_answer(tmp_path: pytest.TempPathFactory) -> None:
    # both runs stored in different orders (completion order differs): read from Parquet and joined
    # on row_id they give the in-memory answer, and a differing row set is still named
    from goldenkit.results import read_run

    b, c = worked_example()
    rng = np.random.default_rng(5)
    write_run(tmp_path, manifest("base"), b.iloc[rng.permutation(len(b))].reset_index(drop=True))
    write_run(tmp_path, manifest("cand"), c.iloc[rng.permutation(len(c))].reset_index(drop=True))
    write_run(tmp_path, manifest("fewer"), c[c["row_id"] != "refunds-0002"])
    got = compare_runs(read_run(tmp_path / "base"), read_run(tmp_path / "cand"))
    lost = compare_runs(read_run(tmp_path / "base"), read_run(tmp_path / "fewer")).ledger.rows
    assert lost.loc[lost["cand_status"] == "MISSING", "row_id"].tolist() == ["refunds-0002"]
    ref = compare_runs(*runs())
    cols = ["slice", "rows", "b", "c", "p_val", "p_adj", "k_base", "n_base", "k_cand", "n_cand", "diff"]
    pd.testing.assert_frame_equal(got.table[cols], ref.table[cols])
    assert got.flips["row_id"].tolist() == ref.flips["row_id"].tolist()
    assert got.flips["base_response"].tolist() == ref.flips["base_response"].tolist()
    assert got.flips["cand_reasons"].tolist() == ref.flips["cand_reasons"].tolist()
    merged = got.rows.merge(ref.rows, on="row_id", suffixes=("", "_ref"))
    assert len(merged) == len(ref.rows) == 400
    assert (merged["status"].astype(str) == merged["status_ref"].astype(str)).all()


def test_skipped_to_error_and_error_to_skipped_have_their_own_names() -> None:
    rows_b = [("s1", "s", ["SKIPPED"]), ("e1", "s", ["ERROR"]), ("p1", "s", ["PASS"]), ("k1", "s", ["SKIPPED"])]
    rows_c = [("s1", "s", ["ERROR"]), ("e1", "s", ["SKIPPED"]), ("p1", "s", ["PASS"]), ("k1", "s", ["SKIPPED"])]
    cmp = compare_runs(
        FakeRun(manifest("b", repeats=1), outcomes(rows_b)), FakeRun(manifest("c", repeats=1), outcomes(rows_c))
    )
    st_ = dict(zip(cmp.rows["row_id"], cmp.rows["status"].astype(str), strict=True))
    assert st_ == {"s1": "SKIPPED_TO_ERROR", "e1": "ERROR_TO_SKIPPED", "p1": "UNCHANGED_PASS", "k1": "SKIPPED"}
    ov = cmp.overall
    assert (ov["skipped_to_error"], ov["error_to_skipped"], ov["new_error"], ov["error_cleared"]) == (1, 1, 0, 0)
    assert any("SKIPPED in the base, ERROR in the candidate" in n for n in cmp.notes)
    assert set(cmp.flips["status"]) == {"SKIPPED_TO_ERROR", "ERROR_TO_SKIPPED"}


def test_undecided_rows_and_permanent_errors_in_the_comparison() -> None:
    # cand: u ties only because a repeat errored (undecided -> ERROR, not FAIL); q is a permanent ERROR
    rows_b = [("u", "s", ["PASS", "PASS", "PASS"]), ("q", "s", ["PASS", "PASS", "PASS"])]
    rows_c = [("u", "s", ["PASS", "ERROR", "FAIL"]), ("q", "s", ["ERROR", "ERROR", "ERROR"])]
    cand_frame = outcomes(rows_c)
    cand_frame.loc[cand_frame["row_id"] == "q", "error_kind"] = "permanent"
    cmp = compare_runs(FakeRun(manifest("b"), outcomes(rows_b)), FakeRun(manifest("c"), cand_frame))
    r = cmp.rows.set_index("row_id")
    assert r.loc["u", "status"] == "NEW_ERROR" and r.loc["u", "cand_error_kind"] == "transient"
    assert r.loc["q", "status"] == "NEW_ERROR" and r.loc["q", "cand_error_kind"] == "refused"
    assert (cmp.b, cmp.c, int(cmp.overall["n_paired"])) == (0, 0, 0)
    assert bool(cmp.cand_collapsed.set_index("row_id").loc["u", "undecided"])


def test_compare_cli_names_the_holm_family(
    tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from goldenkit.cli import main

    b, c = worked_example()
    write_run(tmp_path, manifest("base"), b)
    write_run(tmp_path, manifest("cand"), c)
    assert main(["compare", "base", "cand", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "p_holm_all" in out and "p_holm_all = Holm-adjusted over all slices (2)" in out
    assert main(["compare", "base", "cand", "--results-dir", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["holm_family"] == "all slices"
