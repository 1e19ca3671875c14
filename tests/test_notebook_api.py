"""The notebook API: runs named the way the command line names them, stacked outcomes, tables grouped by
tags, short reprs and escaped Jupyter summaries.

The two runs below have six rows (one repeat each), numbers worked out by hand:

=====  ==========  ==================  ====  ====  ==============
row    slice       tags                base  cand  status
=====  ==========  ==================  ====  ====  ==============
r0     <script>    x                   PASS  FAIL  NEW_FAILURE (b)
r1     <script>    x, y, x (x twice)   PASS  PASS  UNCHANGED_PASS
r2     <script>    y                   FAIL  PASS  RECOVERED (c)
r3     plain       (none)              PASS  FAIL  NEW_FAILURE (b)
r4     plain       x                   FAIL  FAIL  UNCHANGED_FAIL
r5     plain       (none)              PASS  PASS  UNCHANGED_PASS
=====  ==========  ==================  ====  ====  ==============

By tag (a row once per tag): x = r0 r1 r4 (base 2 of 3 pass; b 1, c 0), y = r1 r2
(base 1 of 2; b 0, c 1), (untagged) = r3 r5 (base 2 of 2; b 1, c 0); the tag lines
hold 7 rows, the overall line 6 (base 4 of 6; b 2, c 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from run_factory import manifest, outcomes, write_run

import goldenkit
from goldenkit.errors import ConfigError, InputError, ResultsError
from goldenkit.gate import GatePolicy
from goldenkit.stats import OVERALL, UNTAGGED

HOSTILE = "<script>alert(1)</script>"
TAGS = {"r0": ["x"], "r1": ["x", "y", "x"], "r2": ["y"], "r3": [], "r4": ["x"], "r5": []}
BASE = {"r0": "PASS", "r1": "PASS", "r2": "FAIL", "r3": "PASS", "r4": "FAIL", "r5": "PASS"}
CAND = {"r0": "FAIL", "r1": "PASS", "r2": "PASS", "r3": "FAIL", "r4": "FAIL", "r5": "PASS"}


def _write(root: Path, run_id: str, verdicts: dict[str, str], model: str) -> Path:
    rows = [(r, HOSTILE if int(r[1]) < 3 else "plain", (v,)) for r, v in verdicts.items()]
    return write_run(root, manifest(run_id, repeats=1, model_id=model), outcomes(rows, run_id=run_id, tags=TAGS))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    _write(root, "base", BASE, "model-a")
    _write(root, "cand", CAND, "model-b")
    return root


def _by(table: pd.DataFrame, col: str) -> dict[str, dict[str, Any]]:
    return {str(r[col]): r for r in table.to_dict("records")}


# ---------------------------------------------------------------- runs named as the command line names them


def test_compare_runs_takes_run_ids_folders_and_runs_alike(results: Path, tmp_path: Path) -> None:
    by_id = goldenkit.compare_runs("base", "cand", results_dir=results)
    by_folder = goldenkit.compare_runs(results / "base", str(results / "cand"))
    runs = goldenkit.compare_runs(goldenkit.read_run(results / "base"), goldenkit.read_run(results / "cand"))
    for cmp in (by_id, by_folder, runs):
        assert (cmp.base_id, cmp.cand_id, cmp.b, cmp.c) == ("base", "cand", 2, 1)
        pd.testing.assert_frame_equal(cmp.table, by_id.table)
    # a baseline by name, in its own folder, the same way
    goldenkit.save_baseline(goldenkit.read_run(results / "base"), "main", baselines_dir=tmp_path / "b")
    snap = goldenkit.compare_runs("main", "cand", results_dir=results, baselines_dir=tmp_path / "b")
    assert (snap.base_id, snap.b, snap.c) == ("main", 2, 1)


def test_a_name_that_is_no_run_is_one_line_naming_it(results: Path) -> None:
    with pytest.raises(ResultsError, match="'nope': no run") as err:
        goldenkit.compare_runs("nope", "cand", results_dir=results)
    assert "\n" not in str(err.value)


def test_evaluate_gate_and_leaderboard_take_run_ids(results: Path) -> None:
    policy = GatePolicy.from_config({})
    named = goldenkit.evaluate_gate("cand", policy=policy, baseline="base", results_dir=results)
    opened = goldenkit.evaluate_gate(
        goldenkit.read_run(results / "cand"), policy=policy, baseline=goldenkit.read_run(results / "base")
    )
    assert named.exit_code == opened.exit_code
    assert [(r.name, r.passed) for r in named.rules] == [(r.name, r.passed) for r in opened.rules]
    assert named.comparison is not None and (named.comparison.b, named.comparison.c) == (2, 1)
    lb = goldenkit.leaderboard(["base", results / "cand"], results_dir=results)
    assert lb.run_ids == ["base", "cand"] and lb.pairs[["b_count", "c_count"]].values.tolist() == [[2, 1]]


# ---------------------------------------------------------------- outcomes of several runs


def test_outcomes_df_stacks_a_list_of_runs_with_their_run_id(results: Path) -> None:
    listed = goldenkit.outcomes_df(["base", "cand"], results_dir=results)
    spread = goldenkit.outcomes_df("base", results / "cand", results_dir=results)
    pd.testing.assert_frame_equal(listed, spread)
    assert listed["run_id"].tolist() == ["base"] * 6 + ["cand"] * 6
    assert dict(zip(listed["row_id"][6:], listed["verdict"][6:], strict=True)) == CAND
    few = goldenkit.outcomes_df([results / "base", goldenkit.read_run(results / "cand")], columns=["row_id", "verdict"])
    assert list(few.columns) == ["run_id", "row_id", "verdict"] and few["run_id"].nunique() == 2
    one = goldenkit.outcomes_df("base", columns=["row_id"], results_dir=results)
    assert list(one.columns) == ["row_id"]  # one run: exactly the columns asked for
    with pytest.raises(ResultsError, match="outcomes_df: int is not a run"):
        goldenkit.outcomes_df([3])  # type: ignore[list-item]


def test_outcomes_df_flat_gives_one_column_per_grader_field(results: Path) -> None:
    df = goldenkit.outcomes_df(["base", "cand"], results_dir=results, flat=True)
    assert "graders" not in df.columns and "agent_version" not in df.columns
    fields = [c for c in df.columns if c.startswith("graders.")]
    assert fields == [f"graders.contract.{f}" for f in ("passed", "score", "reason", "error")]
    assert df["graders.contract.passed"].dtype == "boolean"
    assert df["graders.contract.passed"].tolist() == (df["verdict"] == "PASS").tolist()
    assert df["graders.contract.score"].tolist() == [1.0 if v == "PASS" else 0.0 for v in df["verdict"]]
    assert df.loc[0, "graders.contract.reason"] == "r0/0: ok"
    assert df["agent_version.model_id"].tolist() == ["m"] * 12  # what each outcome recorded
    # the columns stay where the nested one was
    cols = list(df.columns)
    assert cols.index("graders.contract.passed") == cols.index("error_kind") + 1


# ---------------------------------------------------------------- grouped by tags, the overall line apart


def test_slice_table_by_tags_counts_a_row_once_per_tag(results: Path) -> None:
    t = goldenkit.slice_table(goldenkit.outcomes_df("base", results_dir=results), by="tags")
    assert t["tags"].tolist() == [UNTAGGED, "x", "y", OVERALL]
    lines = _by(t, "tags")
    assert [(lines[g]["rows"], lines[g]["n"], lines[g]["k"]) for g in ("x", "y", UNTAGGED)] == [
        (3, 3, 2),  # r1 lists x twice and is counted once
        (2, 2, 1),
        (2, 2, 2),
    ]
    assert (lines[OVERALL]["rows"], lines[OVERALL]["k"]) == (6, 4)  # every row once: not the lines' sum (7)
    assert lines["x"]["p_hat"] == pytest.approx(2 / 3)


def test_slice_table_keeps_the_overall_line_apart_on_request(results: Path) -> None:
    df = goldenkit.outcomes_df("base", results_dir=results)
    whole = goldenkit.slice_table(df)
    groups = goldenkit.slice_table(df, overall=False)
    assert whole["slice"].iloc[-1] == OVERALL  # every existing caller: the overall line last
    assert OVERALL not in groups["slice"].tolist() and len(groups) == len(whole) - 1
    assert groups.attrs["overall"] == whole.iloc[-1].to_dict()
    pd.testing.assert_frame_equal(groups, whole.iloc[:-1])


def test_slice_table_reads_a_run_or_a_baseline_itself(results: Path, tmp_path: Path) -> None:
    run = goldenkit.read_run(results / "base")
    expected = goldenkit.slice_table(goldenkit.outcomes_df(run), by="tags")
    pd.testing.assert_frame_equal(goldenkit.slice_table(run, by="tags"), expected)
    snap = goldenkit.save_baseline(run, "main", baselines_dir=tmp_path / "b")
    assert goldenkit.slice_table(snap, by="tags")[["tags", "rows", "n", "k"]].equals(
        expected[["tags", "rows", "n", "k"]]
    )
    with pytest.raises(InputError, match=r"not str 'base' \(a run id or folder: slice_table\(goldenkit.outcomes_df"):
        goldenkit.slice_table("base")


def test_slice_table_by_an_unknown_column_is_one_line(results: Path) -> None:
    with pytest.raises(InputError, match=r"cannot group by 'tag': no such column \(try slice, split, tags\)"):
        goldenkit.slice_table(goldenkit.outcomes_df("base", results_dir=results), by="tag")


def test_compare_runs_by_tags_and_by_split(results: Path, tmp_path: Path) -> None:
    cmp = goldenkit.compare_runs("base", "cand", results_dir=results, by="tags")
    assert cmp.by == "tags" and cmp.table["tags"].tolist() == [UNTAGGED, "x", "y", OVERALL]
    lines = _by(cmp.table, "tags")
    assert [(lines[g]["rows"], lines[g]["b"], lines[g]["c"]) for g in ("x", "y", UNTAGGED)] == [
        (3, 1, 0),
        (2, 0, 1),
        (2, 1, 0),
    ]
    by_slice = goldenkit.compare_runs("base", "cand", results_dir=results)
    ours, theirs = cmp.overall.drop("tags"), by_slice.overall.drop("slice")
    pd.testing.assert_series_equal(ours, theirs, check_names=False)  # the overall line counts each row once
    assert np.isnan(cmp.overall["p_adj"]) and cmp.slices["p_adj"].notna().all()
    split = goldenkit.compare_runs("base", "cand", results_dir=results, by="split")
    assert split.table["split"].tolist() == ["holdout", OVERALL]
    # a saved baseline groups by the tags it kept
    goldenkit.save_baseline(goldenkit.read_run(results / "base"), "main", baselines_dir=tmp_path / "b")
    snap = goldenkit.compare_runs("main", "cand", results_dir=results, baselines_dir=tmp_path / "b", by="tags")
    pd.testing.assert_frame_equal(snap.table, cmp.table)
    with pytest.raises(InputError, match="cannot group by 'colour'"):
        goldenkit.compare_runs("base", "cand", results_dir=results, by="colour")
    with pytest.raises(ConfigError, match="the comparison's lines are by tags"):
        goldenkit.evaluate_gate("cand", policy=GatePolicy.from_config({}), comparison=cmp, results_dir=results)


# ---------------------------------------------------------------- reprs and summaries


#: Six rows cannot show non-inferiority: the margin off; every slice in the family, so each has a rule (escaped)
POLICY = GatePolicy.from_config({"non_inferiority_margin": False, "fail_on_slices": True})


def test_reprs_are_one_or_two_lines_never_a_table(results: Path) -> None:
    run = goldenkit.read_run(results / "cand")
    cmp = goldenkit.compare_runs("base", "cand", results_dir=results)
    decision = goldenkit.evaluate_gate("cand", policy=POLICY, baseline="base", results_dir=results)
    lb = goldenkit.leaderboard(["base", "cand"], results_dir=results)
    shown = {type(x).__name__: repr(x) for x in (run, cmp, decision, lb)}
    # the run's label first (derived: its model), then its id
    assert shown["Run"].startswith(
        "Run('model-b', 'cand', VALID, complete, 6/6 outcomes (PASS 3 FAIL 3 ERROR 0 SKIPPED 0)"
    )
    lo, hi = (100 * float(cmp.overall[c]) for c in ("diff_ci_low", "diff_ci_high"))  # Newcombe's, as the table says
    assert shown["Comparison"].splitlines() == [
        "Comparison('base' -> 'cand', rule majority, alpha 0.05)",
        f"  6 rows, 6 paired: b=2 broke, c=1 fixed, p=1.0000; diff -16.7 pts [{lo:+.1f}, {hi:+.1f}]; "
        "2 slice line(s), 3 flip(s), 1 note(s)",  # the note: the agent version differs (what is compared)
    ]
    assert shown["GateDecision"] == f"GateDecision(PASSED, exit 0: {len(decision.rules)} rules, 1 warning(s))"
    short = goldenkit.evaluate_gate("cand", policy=GatePolicy(), baseline="base", results_dir=results)  # margin 0.05
    assert repr(short).startswith("GateDecision(NOT EVIDENCE, exit 3: 1 of ")
    assert shown["Leaderboard"] == (
        "Leaderboard(2 runs, rule majority, alpha 0.05: top model-a (base), model-b (cand); "
        "0 of 1 pairs significant after Holm)"
    )
    for text in shown.values():
        assert len(text.splitlines()) <= 2 and "row_id" not in text and "dtype" not in text


def test_jupyter_summaries_escape_what_they_show(results: Path) -> None:
    cmp = goldenkit.compare_runs("base", "cand", results_dir=results)
    decision = goldenkit.evaluate_gate("cand", policy=POLICY, baseline="base", results_dir=results)
    lb = goldenkit.leaderboard(["base", "cand"], results_dir=results)
    run = goldenkit.read_run(results / "cand")
    pages = {"cmp": cmp._repr_html_(), "gate": decision._repr_html_(), "lb": lb._repr_html_(), "run": run._repr_html_()}
    for page in (pages["cmp"], pages["gate"]):
        assert HOSTILE not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    lo, hi = (100 * float(cmp.overall[c]) for c in ("diff_ci_low", "diff_ci_high"))
    assert f"<td>-16.7 [{lo:+.1f}, {hi:+.1f}]</td>" in pages["cmp"] and "note: agent version differs" in pages["cmp"]
    assert "p = two-sided exact McNemar, unadjusted" in pages["cmp"]
    tone = "ok" if decision.passed else "bad"  # the banner element itself (the stylesheet names both classes)
    assert f'<div class="gk-banner gk-banner-{tone}">' in pages["gate"] and "regression.overall" in pages["gate"]
    assert f'<div class="gk-banner gk-banner-{"bad" if decision.passed else "ok"}">' not in pages["gate"]
    assert "p (unadjusted)" in pages["lb"] and "diff pts [95% CI, unadjusted]" in pages["lb"]
    assert "run model-b (cand): VALID" in pages["run"] and "model model-b" in pages["run"]
