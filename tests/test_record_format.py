"""The typed, versioned records: run.json (goldenkit.schema.RunRecord, ``format_version``) and the outcome
line (goldenkit.schema.Outcome), each declared once; the Arrow schema, the outcome field list and regrade's
copied fields come from the model; a run folder of the previous format (no ``format_version``) still reads."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, NotRequired, Union, get_args, get_origin, is_typeddict

import pyarrow.parquet as pq
import pytest

from goldenkit.cli import main
from goldenkit.errors import ResultsError
from goldenkit.results import OUTCOME_SCHEMA, iter_jsonl, outcomes_df, read_run
from goldenkit.schema import (
    ANSWER_FIELDS,
    FORMAT_VERSION,
    JSON_TEXT,
    OUTCOME_FIELDS,
    RUN_FIELDS,
    Outcome,
    OutcomeAnswer,
    OutcomeRow,
    OutcomeRun,
    RunRecord,
    outcome_hints,
    required_fields,
)

DATA_RUNS = Path(__file__).parent / "data" / "runs"  # hand-made runs of an older format
FORMAT1 = Path(__file__).parent / "data" / "format1"  # a run the runner wrote before format_version
BASE = {"a": ["PASS", "PASS"], "b": ["FAIL", "FAIL"], "c": ["PASS", "ERROR"], "d": ["FAIL", "PASS"]}
CAND = {"a": ["PASS", "FAIL"], "b": ["PASS", "PASS"], "c": ["PASS", "PASS"], "d": ["FAIL", "FAIL"]}
SLICES = {"a": "refunds", "b": "refunds", "c": "billing", "d": "billing"}


def _fits(value: Any, hint: Any) -> bool:
    """Whether a value read from an outcome line has the model's type ``hint`` (an int is a float too)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Annotated, NotRequired):
        return _fits(value, args[0])
    if origin in (Union, UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None) or hint is Any:
        return value is None or hint is Any
    if is_typeddict(hint):
        hints = outcome_hints(hint)
        fits = isinstance(value, dict) and set(value) <= set(hints) and required_fields(hint) <= set(value)
        return fits and all(_fits(v, hints[k]) for k, v in value.items())
    if origin is list:
        return isinstance(value, list) and all(_fits(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _runs(root: Path, new_run: Any) -> Path:
    """A base and a candidate run of the same dataset, with PASS, FAIL and ERROR repeats; their results folder."""
    new_run(BASE, run_id="base", slices=SLICES, max_error_rate=1.0)
    new_run(CAND, run_id="cand", slices=SLICES, max_error_rate=1.0)
    return root / "results"


def _previous_format(results: Path, into: Path) -> Path:
    """A copy of ``results`` whose run.json files are written as before ``format_version`` existed."""
    shutil.copytree(results, into)
    for run_file in into.glob("*/run.json"):
        manifest = json.loads(run_file.read_text(encoding="utf-8"))
        assert manifest.pop("format_version") == FORMAT_VERSION
        run_file.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return into


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_the_outcome_field_list_the_arrow_schema_and_the_model_agree_field_by_field() -> None:
    hints = outcome_hints()
    assert tuple(hints) == OUTCOME_FIELDS == tuple(OUTCOME_SCHEMA.names)
    parts = (OutcomeRun, OutcomeRow, OutcomeAnswer)
    assert OUTCOME_FIELDS == (*(f for p in parts for f in p.__annotations__), "started_at")
    assert ANSWER_FIELDS == tuple(OutcomeAnswer.__annotations__) and set(ANSWER_FIELDS) < set(OUTCOME_FIELDS)
    json_text = {n for n, h in hints.items() if get_origin(h) is Annotated and JSON_TEXT in get_args(h)}
    assert json_text == {"trajectory"}
    for name, field in zip(OUTCOME_FIELDS, OUTCOME_SCHEMA, strict=True):
        assert field.name == name and field.nullable, name
    # a run written before the model (tests/data/format1): the derived schema is the one it was written with
    assert pq.read_schema(FORMAT1 / "outcomes.parquet").equals(OUTCOME_SCHEMA)


def test_every_line_and_parquet_row_a_run_writes_fits_the_model(tmp_path: Path, new_run: Any) -> None:
    results = _runs(tmp_path, new_run)
    hints = outcome_hints(Outcome)
    for run in ("base", "cand"):
        lines = list(iter_jsonl(results / run / "outcomes.jsonl"))
        assert len(lines) == 8
        for line in lines:
            assert set(line) == set(OUTCOME_FIELDS)
            bad = [name for name, hint in hints.items() if not _fits(line[name], hint)]
            assert bad == [], (run, line["row_id"], bad)
        table = pq.read_table(results / run / "outcomes.parquet")
        assert table.schema.equals(OUTCOME_SCHEMA)
        got = {(r["row_id"], r["repeat"]): r for r in table.to_pylist()}
        for line in lines:
            row = got[(line["row_id"], line["repeat"])]
            for name in ("verdict", "slice", "tags", "error_kind", "attempts", "tokens_in", "response", "started_at"):
                assert row[name] == line[name], (run, name)
            assert json.loads(row["trajectory"]) == line["trajectory"]


def test_run_json_is_the_typed_record_with_its_format_version(tmp_path: Path, new_run: Any) -> None:
    results = _runs(tmp_path, new_run)
    manifest = json.loads((results / "cand" / "run.json").read_text(encoding="utf-8"))
    assert manifest["format_version"] == FORMAT_VERSION == 2
    assert list(manifest)[:2] == ["schema_version", "format_version"]
    assert set(manifest) <= set(RUN_FIELDS), set(manifest) - set(RUN_FIELDS)
    assert required_fields(RunRecord) <= set(manifest), required_fields(RunRecord) - set(manifest)
    assert [k for k in RUN_FIELDS if k in manifest] == list(manifest)  # the model's order
    assert read_run(results / "cand").manifest == manifest


def test_a_run_folder_of_the_previous_format_reads_every_figure(tmp_path: Path, new_run: Any) -> None:
    results = _runs(tmp_path, new_run)
    before = _previous_format(results, tmp_path / "previous")
    for run in ("base", "cand"):
        now, old = read_run(results / run), read_run(before / run)
        assert "format_version" not in json.loads((before / run / "run.json").read_text(encoding="utf-8"))
        assert old.manifest["format_version"] == 1
        assert {**old.manifest, "format_version": FORMAT_VERSION} == now.manifest
        assert list(old.manifest) == list(now.manifest)
        assert outcomes_df(old).equals(outcomes_df(now))
    counts = read_run(before / "base").manifest["counts"]
    assert (counts["PASS"], counts["FAIL"], counts["ERROR"], counts["total"]) == (4, 3, 1, 8)
    assert read_run(before / "cand").manifest["counts"]["PASS"] == 5
    # every figure the comparison shows (pass rates, intervals, b and c, p-values, flips) is the same
    code_now, shown_now = _cli("compare", "base", "cand", "--results-dir", str(results), "--json")
    code_old, shown_old = _cli("compare", "base", "cand", "--results-dir", str(before), "--json")
    assert code_old == code_now
    assert json.loads(shown_old.replace(str(before), str(results))) == json.loads(shown_now)


def test_the_committed_run_of_format_1_reads_every_figure() -> None:
    run = read_run(FORMAT1)
    assert "format_version" not in json.loads((FORMAT1 / "run.json").read_text(encoding="utf-8"))
    assert run.manifest["format_version"] == 1 and run.complete and run.validity == "VALID"
    counts = run.manifest["counts"]
    assert {k: counts[k] for k in ("PASS", "FAIL", "ERROR", "SKIPPED", "total", "candidate_errors")} == {
        "PASS": 2,
        "FAIL": 3,
        "ERROR": 1,
        "SKIPPED": 0,
        "total": 6,
        "candidate_errors": 1,
    }
    df = outcomes_df(run).sort_values(["row_id", "repeat"])
    got = list(zip(df["row_id"], df["repeat"], df["slice"], df["verdict"], strict=True))
    assert got == [
        ("a", 0, "refunds", "PASS"),
        ("a", 1, "refunds", "FAIL"),
        ("b", 0, "refunds", "FAIL"),
        ("b", 1, "refunds", "FAIL"),
        ("c", 0, "billing", "PASS"),
        ("c", 1, "billing", "ERROR"),
    ]
    assert df.loc[df["verdict"] == "ERROR", "error_kind"].tolist() == ["agent"]
    lines = {(r["row_id"], r["repeat"]): r for r in iter_jsonl(FORMAT1 / "outcomes.jsonl")}
    for rec in df.to_dict("records"):
        line = lines[(rec["row_id"], rec["repeat"])]
        assert (rec["verdict"], rec["attempts"], rec["latency_ms"]) == (
            line["verdict"],
            line["attempts"],
            line["latency_ms"],
        )
    # the summary a later goldenkit prints of it (accounting: outcomes, rows; the rows that passed)
    acc = run.manifest["accounting"]
    assert (acc["outcomes"], acc["rows"], acc["passing_rows"]) == (6, 3, 0)


def test_the_committed_runs_of_an_older_format_read_with_their_counts() -> None:
    for run in ("base", "cand"):
        got = read_run(DATA_RUNS / run)
        assert got.manifest["format_version"] == 1
        verdicts = outcomes_df(got)["verdict"].value_counts().to_dict()
        counts = got.manifest["counts"]
        for verdict in ("PASS", "FAIL", "ERROR", "SKIPPED"):
            assert counts[verdict] == verdicts.get(verdict, 0), (run, verdict)
        assert counts["total"] == sum(verdicts.values())


@pytest.mark.parametrize(
    ("version", "says"), [(3, "newer than this goldenkit reads (2)"), ("2", "is not a format"), (0, "is not a format")]
)
def test_a_format_it_cannot_read_is_one_line_naming_the_file(
    tmp_path: Path, new_run: Any, version: object, says: str
) -> None:
    folder = new_run({"a": "PASS"}, run_id="r")
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    (folder / "run.json").write_text(json.dumps({**manifest, "format_version": version}), encoding="utf-8")
    with pytest.raises(ResultsError) as err:
        read_run(folder)
    assert str(err.value).startswith(f"{folder / 'run.json'}: format_version ") and says in str(err.value)
    assert "\n" not in str(err.value)


def test_a_run_of_the_previous_format_resumes_and_is_written_in_the_current_one(tmp_path: Path, new_run: Any) -> None:
    folder = new_run({"a": ["PASS", "FAIL"], "b": ["PASS", "PASS"]}, run_id="r")
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    del manifest["format_version"]
    (folder / "run.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (folder / "outcomes.parquet").unlink()  # the end of the run is written again
    again = new_run({"a": ["PASS", "FAIL"], "b": ["PASS", "PASS"]}, run_id="r")
    resumed = json.loads((again / "run.json").read_text(encoding="utf-8"))
    assert again == folder and resumed["format_version"] == FORMAT_VERSION
    assert resumed["counts"]["PASS"] == 3 and resumed["counts"]["FAIL"] == 1
    assert len(resumed["timings"]["invocations"]) == 2


def test_a_run_of_a_newer_format_is_not_resumed(tmp_path: Path, new_run: Any) -> None:
    folder = new_run({"a": "PASS"}, run_id="r")
    manifest = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    (folder / "run.json").write_text(json.dumps({**manifest, "format_version": 3}), encoding="utf-8")
    with pytest.raises(ResultsError, match=r"run\.json: format_version 3 is newer than this goldenkit reads"):
        new_run({"a": "PASS"}, run_id="r")
    assert json.loads((folder / "run.json").read_text(encoding="utf-8"))["format_version"] == 3
