"""Baselines: save with its refusals, append-only history, read, list, resolve, compare."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from run_factory import FakeRun, manifest, outcomes, worked_example, write_run

from goldenkit.baselines import (
    Baseline,
    list_baselines,
    read_baseline,
    resolve_run_or_baseline,
    save_baseline,
)
from goldenkit.compare import compare_runs
from goldenkit.errors import InputError, ResultsError
from goldenkit.gate import GatePolicy, evaluate_gate


def clean_example() -> tuple[FakeRun, FakeRun]:
    """The worked example without errored repeats (a baseline refuses ERRORs)."""
    b, c = worked_example()
    b = b.assign(verdict=b["verdict"].replace({"ERROR": "FAIL"}), response=b["response"].fillna("re-run answer"))
    return FakeRun(manifest("base"), b), FakeRun(manifest("cand"), c)


def test_save_writes_json_parquet_and_history(tmp_path: Path) -> None:
    base, _ = clean_example()
    b = save_baseline(base, "main", baselines_dir=tmp_path, note="release 1.2")
    assert (tmp_path / "main.json").is_file() and (tmp_path / "main.parquet").is_file()
    info = json.loads((tmp_path / "main.json").read_text())
    assert info["kind"] == "goldenkit.baseline" and info["rule"] == "majority"
    assert info["run"]["dataset"]["sha256"] == base.manifest["dataset"]["sha256"]
    assert info["run"]["run_id"] == "base" and info["run"]["repeats"] == 3
    assert info["summary"]["rows"] == 400 and {s["slice"] for s in info["summary"]["slices"]} == {"other", "refunds"}
    hist = (tmp_path / "history.jsonl").read_text().splitlines()
    assert len(hist) == 1
    h = json.loads(hist[0])
    assert h["name"] == "main" and h["run_id"] == "base" and h["replaced"] is False and h["note"] == "release 1.2"
    assert b.rows["response"].notna().all()


def test_read_back_equals_the_run_for_comparison(tmp_path: Path) -> None:
    base, cand = clean_example()
    save_baseline(base, "main", baselines_dir=tmp_path)
    saved = read_baseline("main", baselines_dir=tmp_path)
    assert isinstance(saved, Baseline) and saved.run_id == "base" and saved.rule == "majority"
    via_baseline = compare_runs(saved, cand)
    via_run = compare_runs(base, cand)
    cols = ["slice", "k_base", "n_base", "b", "c", "p_val", "p_adj", "diff_ci_low"]
    assert via_baseline.table[cols].equals(via_run.table[cols])
    assert via_baseline.flips["row_id"].tolist() == via_run.flips["row_id"].tolist()
    assert via_baseline.flips["base_response"].tolist() == via_run.flips["base_response"].tolist()
    assert via_baseline.flips["base_reasons"].tolist() == via_run.flips["base_reasons"].tolist()
    assert via_baseline.base_id == "main"
    # by path too
    assert read_baseline(tmp_path / "main.json").name == "main"


def test_refuses_overwrite_without_force_and_history_only_grows(tmp_path: Path) -> None:
    base, _ = clean_example()
    save_baseline(base, "main", baselines_dir=tmp_path)
    first = (tmp_path / "history.jsonl").read_bytes()
    with pytest.raises(InputError, match="already exists.*--force"):
        save_baseline(base, "main", baselines_dir=tmp_path)
    assert (tmp_path / "history.jsonl").read_bytes() == first
    save_baseline(base, "main", baselines_dir=tmp_path, force=True)
    after = (tmp_path / "history.jsonl").read_bytes()
    assert after.startswith(first) and len(after.splitlines()) == 2
    assert json.loads(after.splitlines()[1])["replaced"] is True


def test_refuses_runs_with_errors_invalid_incomplete_or_empty(tmp_path: Path) -> None:
    holes = outcomes([("r0", "s", ["PASS", "PASS", "ERROR"]), ("r1", "s", ["PASS", "ERROR", "FAIL"])])
    hole = r"1 row\(s\) its 2 ERROR outcome\(s\) leave without a verdict \(first: row r1"
    with pytest.raises(InputError, match=hole):
        save_baseline(FakeRun(manifest("base"), holes), "x", baselines_dir=tmp_path)
    b, _ = worked_example()  # errored repeats that decide no row (P, P, E is PASS whatever E was): no hole
    saved = save_baseline(FakeRun(manifest("base"), b), "ok", baselines_dir=tmp_path / "saved")
    assert int(saved.rows["n_error"].sum()) > 0 and set(saved.rows["verdict"]) <= {"PASS", "FAIL"}
    rows = outcomes([("r1", "s", ["PASS"])])
    with pytest.raises(InputError, match="is INVALID"):
        save_baseline(FakeRun(manifest("r", validity="INVALID"), rows), "x", baselines_dir=tmp_path)
    man = manifest("r")
    man["complete"] = False
    with pytest.raises(InputError, match="not complete"):
        save_baseline(FakeRun(man, rows), "x", baselines_dir=tmp_path)
    with pytest.raises(InputError, match="no outcomes"):
        save_baseline(FakeRun(manifest("r"), rows.iloc[:0]), "x", baselines_dir=tmp_path)
    with pytest.raises(InputError, match="baseline name '../evil' contains a path separator"):
        save_baseline(FakeRun(manifest("r"), rows), "../evil", baselines_dir=tmp_path)
    assert not (tmp_path / "history.jsonl").exists()


def test_refuses_a_sequential_run_until_resumed_to_a_full_run(tmp_path: Path) -> None:
    """A run stopped by the sequential gate read only the rows it needed: as a baseline it would take the
    others out of every later comparison, so it is refused, as the gate refuses it as a baseline."""
    b, _ = clean_example()
    man = dict(b.manifest)
    man["sequential"] = {"rows": ["r0"], "rows_run": 1, "rows_total": 400, "stopped_because": "regression shown"}
    with pytest.raises(InputError) as err:
        save_baseline(FakeRun(man, b.frame), "seq", baselines_dir=tmp_path)
    assert str(err.value) == (
        "cannot save baseline 'seq': run base is a sequential run (stopped after 1 of 400 rows: regression shown), "
        "not a full run: resume it without --sequential to a full run first (goldenkit run DATASET ... --run-id base)"
    )
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    assert save_baseline(b, "full", baselines_dir=tmp_path).run_id == "base"  # the same run, full: saved


def test_list_and_read_errors(tmp_path: Path) -> None:
    base, _ = clean_example()
    assert list_baselines(tmp_path).empty
    save_baseline(base, "b-two", baselines_dir=tmp_path)
    save_baseline(base, "a-one", baselines_dir=tmp_path, rule="all")
    df = list_baselines(tmp_path)
    assert df["name"].tolist() == ["a-one", "b-two"] and df["rule"].tolist() == ["all", "majority"]
    assert df["rows"].tolist() == [400, 400]
    with pytest.raises(ResultsError, match="no baseline 'nope'"):
        read_baseline("nope", tmp_path)
    (tmp_path / "a-one.parquet").unlink()
    with pytest.raises(ResultsError, match="missing"):
        read_baseline("a-one", tmp_path)


def test_a_corrupt_baseline_table_is_refused_naming_the_file_and_row(tmp_path: Path) -> None:
    base, _ = clean_example()
    save_baseline(base, "b", baselines_dir=tmp_path)
    table_path = tmp_path / "b.parquet"
    table = pq.read_table(table_path)
    good = table.to_pandas()

    def write(df: pd.DataFrame) -> None:
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), table_path)

    first = str(good["row_id"].iloc[0])
    write(pd.concat([good, good.iloc[[0]]]))
    with pytest.raises(ResultsError, match=f'b.parquet: row "{first}" appears 2 times'):
        read_baseline("b", tmp_path)
    edited = good.copy()
    edited["verdict"] = edited["verdict"].astype(str)
    edited.loc[0, "verdict"] = "MAYBE"
    write(edited)
    with pytest.raises(ResultsError, match=f"row \"{first}\": verdict 'MAYBE' is not one of PASS, FAIL, ERROR"):
        read_baseline("b", tmp_path)
    write(good.drop(columns=["row_id"]))
    with pytest.raises(ResultsError, match="b.parquet: no row_id column"):
        read_baseline("b", tmp_path)
    table_path.write_bytes(b"PAR1 not a table")
    with pytest.raises(ResultsError, match="b.parquet: not a readable baseline table"):
        read_baseline("b", tmp_path)
    pq.write_table(table, table_path)
    assert len(read_baseline("b", tmp_path).rows) == len(good)  # the saved table reads back


def test_baseline_collapse_rule_must_match(tmp_path: Path) -> None:
    base, cand = clean_example()
    save_baseline(base, "strict", baselines_dir=tmp_path, rule="all")
    from goldenkit.errors import ComparisonInvalid

    with pytest.raises(ComparisonInvalid, match="collapse rule differs: all vs majority"):
        compare_runs(read_baseline("strict", tmp_path), cand)
    assert compare_runs(read_baseline("strict", tmp_path), cand, rule="all").rule == "all"


def test_gate_accepts_a_baseline_as_the_run(tmp_path: Path) -> None:
    base, _ = clean_example()
    save_baseline(base, "main", baselines_dir=tmp_path)
    d = evaluate_gate(read_baseline("main", tmp_path), policy=GatePolicy(regression=False, min_pass_rate=0.85))
    assert d.passed


def test_resolve_run_or_baseline(tmp_path: Path) -> None:
    base, _ = clean_example()
    results, baselines = tmp_path / "results", tmp_path / "baselines"
    write_run(results, base.manifest, base.frame)
    save_baseline(base, "main", baselines_dir=baselines)
    assert resolve_run_or_baseline("base", results, baselines).run_id == "base"
    assert isinstance(resolve_run_or_baseline("main", results, baselines), Baseline)
    assert resolve_run_or_baseline(results / "base", results, baselines).run_id == "base"
    assert isinstance(resolve_run_or_baseline(baselines / "main.json", results, baselines), Baseline)
    save_baseline(base, "base", baselines_dir=baselines)
    with pytest.raises(InputError, match="both a run"):
        resolve_run_or_baseline("base", results, baselines)
    with pytest.raises(ResultsError, match="no run"):
        resolve_run_or_baseline("ghost", results, baselines)
