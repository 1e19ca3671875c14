"""goldenkit.history: the runs index, SQL over every outcome, trends; and `goldenkit query`.

Numbers are checked against hand counts of the runs in history_runs.py and
Wilson intervals from R: ``prop.test(2, 3, correct = FALSE)$conf.int`` =
0.2076596 0.9385081; ``prop.test(3, 4, correct = FALSE)$conf.int`` = 0.3006418 0.9544127.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from history_runs import EXPECTED, SHA_C, build
from run_factory import SHA_A, SHA_B

import goldenkit
from goldenkit.cli import main as cli_main
from goldenkit.errors import InputError
from goldenkit.history import CACHE_FILE, _run_index as index_mod, connect, failure_counts, query, runs_df, trend


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build(tmp_path_factory.mktemp("history"))


def _by_id(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["kind"] == "run"].set_index("run_id")


def test_runs_df_lists_every_kind_of_run_with_its_state(dirs: tuple[Path, Path]) -> None:
    df = runs_df(*dirs)
    runs = _by_id(df)
    assert runs.loc["night-1", "state"] == "ok" and runs.loc["live-1", "mode"] == "live"
    assert runs.loc["live-1", "model_id"] == "gpt-x"
    assert runs.loc["invalid-1", "state"] == "invalid" and "exceeds" in runs.loc["invalid-1", "problem"]
    assert runs.loc["partial-1", "source"] == "jsonl" and runs.loc["partial-1", "outcomes"] == 6
    assert runs.loc["partial-1", "expected"] == 15
    corrupt = [
        ("bad-json", "invalid JSON"),
        ("orphan", "without a run.json"),
        ("bad-line", "outcomes.jsonl:2"),
        ("truncated", "outcomes.parquet: unreadable"),
        ("odd-verdict", "unknown verdict 'MAYBE'"),
    ]
    for rid, words in corrupt:
        assert runs.loc[rid, "state"] == "corrupt", rid
        assert words in runs.loc[rid, "problem"], (rid, runs.loc[rid, "problem"])
    assert set(df["kind"]) == {"run", "baseline"}
    assert list(df.columns) == list(index_mod.RUN_COLUMNS)
    assert len(runs) == 18


def test_counts_pass_rate_and_wilson_interval_are_hand_computed(dirs: tuple[Path, Path]) -> None:
    night = _by_id(runs_df(*dirs)).loc["night-1"]
    assert (night["n"], night["k"], night["rows"]) == (EXPECTED["n"], EXPECTED["k"], 5)
    assert (night["error"], night["outcomes"]) == (EXPECTED["errors"], EXPECTED["outcomes"])
    assert night["pass_rate"] == pytest.approx(0.75)
    assert (night["ci_low"], night["ci_high"]) == pytest.approx((0.3006418, 0.9544127), abs=1e-6)
    assert night["error_rate"] == pytest.approx(3 / 15)
    assert night["dataset_sha256"] == SHA_A and night["dataset_version"] == "1.0.0"
    assert night["started_at"] == pd.Timestamp("2026-11-01T02:00:00Z")


def test_the_fixture_runs_agree_with_slice_table(dirs: tuple[Path, Path]) -> None:
    results, baselines = dirs
    runs = _by_id(runs_df(results, baselines))
    for rid in ("base", "cand"):
        overall = goldenkit.slice_table(goldenkit.outcomes_df(results / rid)).iloc[-1]
        assert (runs.loc[rid, "n"], runs.loc[rid, "k"]) == (overall["n"], overall["k"])
        assert runs.loc[rid, "ci_low"] == pytest.approx(overall["ci_low"])


def test_a_resumed_run_counts_the_last_record_of_each_pair(dirs: tuple[Path, Path]) -> None:
    r = _by_id(runs_df(*dirs)).loc["resumed-1"]
    # the JSONL has 3 ERROR lines for r1 superseded by 3 PASS lines: 6 outcomes, none an ERROR
    assert (r["outcomes"], r["error"], r["n"], r["k"], r["invocations"]) == (6, 0, 2, 2, 2)


def test_the_baseline_is_a_row_with_its_saved_numbers(dirs: tuple[Path, Path]) -> None:
    b = runs_df(*dirs).query("kind == 'baseline'").iloc[0]
    assert (b["name"], b["run_id"], b["n"], b["k"], b["state"]) == ("main", "clean-4", 5, 4, "ok")
    assert b["dataset_sha256"] == SHA_B and pd.notna(b["saved_at"])


def test_the_index_cache_rereads_only_changed_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, baselines = build(tmp_path)
    first = runs_df(results, baselines)
    assert (results / CACHE_FILE).is_file()
    reads: list[str] = []
    real = index_mod._read_folder
    monkeypatch.setattr(index_mod, "_read_folder", lambda folder: reads.append(folder.name) or real(folder))
    again = runs_df(results, baselines)
    assert reads == []
    pd.testing.assert_frame_equal(first, again)
    line = json.loads((results / "partial-1" / "outcomes.jsonl").read_text().splitlines()[0])
    line.update(row_id="r9", verdict="FAIL")
    with (results / "partial-1" / "outcomes.jsonl").open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    third = _by_id(runs_df(results, baselines))
    assert reads == ["partial-1"]
    assert third.loc["partial-1", "outcomes"] == 7


def test_an_unwritable_cache_is_no_error(tmp_path: Path) -> None:
    results, baselines = build(tmp_path)
    (results / CACHE_FILE).mkdir()  # a folder where the cache file would go: writing fails
    assert len(runs_df(results, baselines)) == 19


def test_query_reads_every_outcome_with_the_last_record_winning(dirs: tuple[Path, Path]) -> None:
    df = query(
        "SELECT run_id, count(*) AS n, count(*) FILTER (WHERE verdict = 'ERROR') AS errors "
        "FROM outcomes GROUP BY run_id ORDER BY run_id",
        *dirs,
    ).set_index("run_id")
    assert df.loc["night-3", "n"] == 15 and df.loc["night-3", "errors"] == 3
    assert df.loc["resumed-1", "n"] == 6 and df.loc["resumed-1", "errors"] == 0  # from its JSONL
    assert df.loc["partial-1", "n"] == 6
    assert not {"bad-json", "orphan", "bad-line", "truncated", "odd-verdict"} & set(df.index)  # corrupt: left out
    assert len(df) == 13  # every other run, INVALID and incomplete ones included (filter on runs.state)


def test_query_joins_runs_outcomes_and_history(dirs: tuple[Path, Path]) -> None:
    df = query(
        "SELECT r.dataset_version, count(*) AS fails FROM outcomes o JOIN runs r USING (run_id) "
        "WHERE r.state = 'ok' AND r.kind = 'run' AND o.verdict = 'FAIL' AND r.run_id LIKE 'night-%' "
        "GROUP BY 1 ORDER BY 1",
        *dirs,
    )
    assert df.to_dict("list") == {"dataset_version": ["1.0.0", "1.1.0", "2.0.0"], "fails": [8, 8, 4]}
    hist = query("SELECT name, run_id, n, k, note FROM baseline_history", *dirs)
    assert hist.to_dict("records") == [
        {"name": "main", "run_id": "clean-4", "n": 5, "k": 4, "note": "release <b>1</b>"}
    ]
    nested = query(
        "SELECT graders['contract'].passed AS ok, agent_version.model_id AS m FROM outcomes "
        "WHERE run_id = 'night-1' AND row_id = 'r1' AND repeat = 0",
        *dirs,
    )
    assert nested.to_dict("records") == [{"ok": True, "m": "m"}]


def test_outcomes_are_read_in_place_at_query_time(tmp_path: Path) -> None:
    results, baselines = build(tmp_path)
    con = connect(results, baselines)
    try:
        sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'outcomes'").fetchone()
        assert sql is not None and "read_parquet" in sql[0]
        assert str(results / "night-1" / "outcomes.parquet") in sql[0]
        before = con.execute("SELECT count(*) FROM outcomes WHERE run_id = 'night-1'").fetchone()
        (results / "night-1" / "outcomes.parquet").write_bytes((results / "night-2" / "outcomes.parquet").read_bytes())
        after = con.execute("SELECT count(DISTINCT run_id) FROM outcomes WHERE run_id = 'night-1'").fetchone()
    finally:
        con.close()
    assert before == (15,) and after == (0,)  # the file was read again: it now holds night-2's outcomes


def test_an_empty_results_folder_still_has_the_views(tmp_path: Path) -> None:
    df = query("SELECT count(*) AS n FROM outcomes", tmp_path / "none", tmp_path / "none")
    assert df["n"].tolist() == [0]
    assert query("SELECT * FROM runs", tmp_path / "none", tmp_path / "none").empty


def test_a_bad_statement_is_an_input_error(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(InputError, match="query: .*Parser Error"):
        query("SELEC 1", *dirs)
    with pytest.raises(InputError, match="empty SQL"):
        query("  ", *dirs)


def test_trend_segments_by_dataset_version_and_keeps_one_protocol(dirs: tuple[Path, Path]) -> None:
    results, _ = dirs
    night = [f"night-{i}" for i in range(1, 6)]
    t = trend("support", runs=night, results_dir=results)
    overall = t[t["slice"] == "(overall)"]
    assert overall["run_id"].tolist() == night
    assert overall["segment"].tolist() == [0, 0, 1, 1, 2]
    assert overall["version_change"].tolist() == [False, False, True, False, True]
    assert overall["dataset_sha256"].tolist()[-1] == SHA_C
    refunds = t[(t["slice"] == "refunds") & (t["run_id"] == "night-1")].iloc[0]
    assert (refunds["n"], refunds["k"]) == EXPECTED["refunds"]
    assert (refunds["ci_low"], refunds["ci_high"]) == pytest.approx((0.2076596, 0.9385081), abs=1e-6)
    every = trend("support", results_dir=results)
    assert "five-reps" not in set(every["run_id"]) and every.attrs["excluded"] == 1
    assert not {"invalid-1", "partial-1", "resumed-1"} & set(every["run_id"])  # not evidence (incomplete/INVALID)
    both = trend("support", results_dir=results, protocol="all", by=None)
    assert "five-reps" in set(both["run_id"]) and set(both["group"]) == {"(overall)"}


def test_trend_names_the_agent_of_each_run(dirs: tuple[Path, Path]) -> None:
    results, _ = dirs
    t = trend("support", runs=["night-4", "night-5", "live-1"], results_dir=results, by=None)
    agents = dict(zip(t["run_id"], t["agent"], strict=True))
    model_a = "model-a · prompt pppppppp"
    assert agents == {"night-4": model_a, "night-5": model_a, "live-1": "gpt-x · prompt pppppppp"}
    assert set(t["prompt_sha256"]) == {"p" * 64}
    frame = runs_df(*dirs).drop(columns=["prompt_sha256"])  # a frame without the prompt column: the model alone
    assert set(trend("support", runs=frame, by=None)["agent"]) == {"model-a", "gpt-x"}


def test_trend_error_rate_and_bad_metric(dirs: tuple[Path, Path]) -> None:
    t = trend("support", metric="error_rate", runs=["night-1"], results_dir=dirs[0])
    ship = t[t["slice"] == "shipping"].iloc[0]
    assert (ship["n"], ship["k"], ship["error_rate"]) == (6, 3, 0.5)
    with pytest.raises(InputError, match="unknown metric"):
        trend("support", metric="speed", results_dir=dirs[0])


def test_failing_rows_counts_runs_where_a_row_failed(dirs: tuple[Path, Path]) -> None:
    runs = runs_df(*dirs).query("kind == 'run' and run_id.str.startswith('night-')", engine="python")
    f = failure_counts(runs, min_share=0.5).set_index("row_id")
    assert f.index.tolist() == ["r3"] and (f.loc["r3", "failed"], f.loc["r3", "runs"]) == (5, 5)
    assert f.loc["r3", "last_failed_run"] == "night-5" and "<script>" in f.loc["r3", "last_response"]


def test_cli_query_prints_a_table_json_and_csv(dirs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--results-dir", str(dirs[0]), "--baselines-dir", str(dirs[1])]
    sql = "SELECT run_id, pass_rate FROM runs WHERE run_id IN ('night-1', 'resumed-1') AND kind = 'run' ORDER BY 1"
    assert cli_main(["query", sql, *base]) == 0
    text = capsys.readouterr().out
    assert "night-1" in text and "0.75" in text
    assert cli_main(["query", sql, "--json", *base]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"run_id": "night-1", "pass_rate": 0.75},
        {"run_id": "resumed-1", "pass_rate": 1.0},
    ]
    assert cli_main(["query", sql, "--csv", *base]) == 0
    assert capsys.readouterr().out.splitlines() == ["run_id,pass_rate", "night-1,0.75", "resumed-1,1.0"]
    assert cli_main(["query", "SELECT nope FROM runs", *base]) == 1
    assert "query: Binder Error" in capsys.readouterr().err


def test_import_goldenkit_does_not_load_duckdb() -> None:
    import subprocess
    import sys

    code = "import sys, goldenkit; goldenkit.history.runs_df; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}, check=True)
    assert out.stdout.strip() == "False"


def test_the_documented_failing_rows_query_agrees_with_failing_rows(dirs: tuple[Path, Path]) -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "history.md").read_text(encoding="utf-8")
    sql = next(block for block in doc.split("```sql")[1:] if "WITH per_run" in block).split("```")[0]
    sql = sql.replace("r.started_at >= now() - INTERVAL 30 DAY", "r.dataset_name = 'support'")
    got = query(sql, *dirs)
    runs = runs_df(*dirs)
    ok = runs[(runs["kind"] == "run") & (runs["state"] == "ok") & (runs["dataset_name"] == "support")]
    expected = failure_counts(ok, min_share=0.5)
    assert got["row_id"].tolist() == expected["row_id"].tolist() == ["r3"]
    assert got[["failed_runs", "runs"]].values.tolist() == expected[["failed", "runs"]].values.tolist()


@pytest.mark.parametrize("metric", ["pass_rate", "error_rate"])
def test_trend_lines_equal_slice_table_run_by_run(dirs: tuple[Path, Path], metric: str) -> None:
    results = dirs[0]
    t = trend("fixture-support", metric=metric, runs=["base", "cand"], results_dir=results)
    for rid in ("base", "cand"):
        table = goldenkit.slice_table(goldenkit.outcomes_df(results / rid))
        mine = t[t["run_id"] == rid]
        assert mine["slice"].tolist() == table["slice"].tolist()  # the slices, sorted, then (overall)
        n, k = ("n", "k") if metric == "pass_rate" else ("attempts", "error")
        assert mine["n"].tolist() == table[n].tolist() and mine["k"].tolist() == table[k].tolist()
        if metric == "pass_rate":
            assert mine["ci_low"].tolist() == pytest.approx(table["ci_low"].tolist(), nan_ok=True)


def test_the_latest_pointer_is_not_a_run_of_its_own(tmp_path: Path) -> None:
    from goldenkit.results import update_latest

    results, baselines = build(tmp_path)
    before = runs_df(results, baselines, cache=False)
    update_latest(results, "night-1")  # what every run does when it ends
    assert (results / "latest").exists()
    after = runs_df(results, baselines, cache=False)
    assert len(after) == len(before)
    assert "latest" not in set(after["run_id"]) and not after["path"].astype(str).str.endswith("latest").any()
