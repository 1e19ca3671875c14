"""Every writer of run.json and every reader agree on one typed record (goldenkit.schema.RunRecord).

A run, a run whose budget stopped it, a run whose decided repeats stopped, a regrade, a merge of shards
and an import each write a run folder; each run.json reads back through goldenkit.results.read_manifest
as a RunRecord whose every required field is present, every field has the model's type (nested records
too), in the model's order; its outcome lines carry the run fields goldenkit.schema.outcome_run builds
from the record's run key. The committed run of format 1 reads as the same record, marked format 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, NotRequired, Union, get_args, get_origin, is_typeddict

import pytest
from _shared import shared_path
from factories import graded_run

from goldenkit.harnesses import import_run
from goldenkit.history import runs_df
from goldenkit.results import iter_jsonl, read_manifest, run_key_of, run_totals_of
from goldenkit.runner import RunInterrupted, merge_shards, regrade, run_eval, shard_of
from goldenkit.schema import (
    FORMAT_VERSION,
    OUTCOME_FIELDS,
    RUN_FIELDS,
    OutcomeRun,
    RunRecord,
    outcome_hints,
    outcome_run,
    required_fields,
)

FORMAT1 = Path(__file__).parent / "data" / "format1"
VERDICTS = {"a": ["PASS", "PASS"], "b": ["FAIL", "PASS"], "c": ["PASS", "ERROR"], "d": ["FAIL", "FAIL"]}
SLICES = {"a": "refunds", "b": "refunds", "c": "billing", "d": "billing"}


def type_problems(value: Any, hint: Any, where: str) -> list[str]:
    """Where ``value`` is not of the model's type ``hint`` (an int is a float too), one line each."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Annotated, NotRequired):
        return type_problems(value, args[0], where)
    if origin in (Union, UnionType):
        tried = [type_problems(value, a, where) for a in args]
        return [] if any(not t for t in tried) else [f"{where}: {value!r} is not {hint}"]
    if hint is Any:
        return []
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not a {hint.__name__}"]
        hints = outcome_hints(hint)
        out = [f"{where}.{k}: not a field of {hint.__name__}" for k in value if k not in hints]
        out += [f"{where}.{k}: missing" for k in sorted(required_fields(hint) - set(value))]
        return out + [p for k, v in value.items() if k in hints for p in type_problems(v, hints[k], f"{where}.{k}")]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        return [p for i, v in enumerate(value) for p in type_problems(v, args[0], f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not a dict"]
        return [
            p for k, v in value.items() for p in type_problems(k, args[0], where) + type_problems(v, args[1], where)
        ]
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, hint)
    return [] if ok else [f"{where}: {value!r} is not {hint.__name__}"]


def test_the_checker_names_what_does_not_fit() -> None:
    """The checker itself: a wrong type, a missing field and a stray field are each named."""
    good = {"invocations": [{"calls": 1}]}
    assert type_problems(good, outcome_hints(RunRecord)["timings"], "timings") == []
    assert type_problems({"invocations": "x"}, outcome_hints(RunRecord)["timings"], "t") == [
        "t.invocations: 'x' is not a list"
    ]
    bad = {"run_id": "r", "path": "p"}
    assert type_problems(bad, outcome_hints(RunRecord)["regraded_from"], "rf") == ["rf.answers_from: missing"]
    assert type_problems({**bad, "answers_from": 1, "x": 0}, outcome_hints(RunRecord)["regraded_from"], "rf") == [
        "rf.x: not a field of RegradedFrom",
        "rf.answers_from: 1 is not str",
    ]
    assert type_problems(True, int, "n") == ["n: True is not int"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One run folder per writer of run.json."""
    root = tmp_path_factory.mktemp("records")
    results = root / "results"
    run = graded_run(root, VERDICTS, run_id="run", slices=SLICES, max_error_rate=1.0)
    dataset = root / "ds"
    out = {"run": run}
    regrade(run, "regraded", results_dir=results, dataset=dataset)
    out["regrade"] = results / "regraded"
    for k in (1, 2):
        part = {rid: v for rid, v in VERDICTS.items() if shard_of(rid, 2) == k}  # both shards hold rows
        graded_run(root, part, run_id=f"shard{k}", dataset=dataset, shard=(k, 2), max_error_rate=1.0)
    merge_shards("merged", ["shard1", "shard2"], results_dir=results)
    out["merge"], out["shard"] = results / "merged", results / "shard1"
    decided = {"a": ["PASS"] * 3, "b": ["FAIL"] * 3, "c": ["PASS"] * 3, "d": ["FAIL"] * 3}
    kw: dict[str, Any] = {"progress": False, "results_dir": results, "repeats": 3}
    run_eval(dataset, _agent(decided), run_id="decided", stop_decided_repeats=True, **kw)
    out["decided repeats"] = results / "decided"
    run_eval(dataset, _agent(decided), run_id="budget", max_calls=2, max_in_flight=1, **kw)
    out["budget"] = results / "budget"
    return out


def _agent(verdicts: dict[str, list[str]]) -> Any:
    from factories import PASS_WORD

    from goldenkit.records import Response, TurnOutput

    def agent(case: Any) -> Response:
        passed = verdicts[case.id][0] == "PASS"
        return Response(turns=[TurnOutput(text=f"{PASS_WORD}, done" if passed else "no")])

    return agent


def _check_record(folder: Path) -> RunRecord:
    written = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    record = read_manifest(folder)
    assert record == written and written["format_version"] == FORMAT_VERSION, folder
    assert list(written) == [k for k in RUN_FIELDS if k in written], f"{folder}: not in the model's order"
    assert type_problems(written, RunRecord, folder.name) == []
    return record


def _run_fields(rec: Any) -> dict[str, Any]:
    """An outcome's run fields, its agent version's unset fields left out (a merge's lines come from the
    shards' Parquet, whose agent version struct holds ``artifacts_sha256: null`` for a run without artifacts)."""
    out = {k: rec[k] for k in OutcomeRun.__annotations__}
    out["agent_version"] = {k: v for k, v in (out["agent_version"] or {}).items() if v is not None}
    return out


def _check_outcomes(folder: Path, record: RunRecord) -> None:
    """Each outcome line carries the run fields outcome_run builds from the record's run key."""
    base = _run_fields(outcome_run(record["run_id"], run_key_of(record)))
    lines = list(iter_jsonl(folder / "outcomes.jsonl"))
    assert lines, folder
    for line in lines:
        assert set(line) <= set(OUTCOME_FIELDS), set(line) - set(OUTCOME_FIELDS)
        assert _run_fields(line) == base, (folder.name, line["row_id"])


@pytest.mark.parametrize("writer", ["run", "shard", "regrade", "merge", "decided repeats", "budget"])
def test_each_writer_writes_the_typed_record_and_it_reads_back(folders: dict[str, Path], writer: str) -> None:
    record = _check_record(folders[writer])
    _check_outcomes(folders[writer], record)
    assert record["protocol_sha256"] and record["provider"] is not None
    wanted = {
        "run": set(),
        "shard": {"shard"},
        "regrade": {"regraded_from"},
        "merge": {"merged_from"},
        "decided repeats": {"stop_decided_repeats", "decided_repeats"},
        "budget": {"budget", "stopped_because"},
    }[writer]
    assert wanted <= set(record), wanted - set(record)  # each writer's own fields are there, typed above
    assert record["mode"] == ("regrade" if writer == "regrade" else "live")


def test_the_writers_agree_on_the_run_key_and_the_protocol(folders: dict[str, Path]) -> None:
    run, merged, regraded = (read_manifest(folders[w]) for w in ("run", "merge", "regrade"))
    assert merged["protocol"] == run["protocol"] and merged["protocol_sha256"] == run["protocol_sha256"]
    assert "shard" not in merged and [m["shard"] for m in merged["merged_from"]] == [{"k": 1, "n": 2}, {"k": 2, "n": 2}]
    assert regraded["regraded_from"] == {"run_id": "run", "path": str(folders["run"]), "answers_from": "run"}
    assert regraded["provider"] == run["provider"]  # the provider that made the answers
    assert {k: regraded[k] for k in ("dataset", "repeats", "sample")} == {
        k: run[k] for k in ("dataset", "repeats", "sample")
    }
    budget = read_manifest(folders["budget"])
    assert (budget["stopped_because"], budget["validity"], budget["complete"]) == ("budget", "INVALID", False)


def test_an_import_writes_the_typed_record(tmp_path: Path) -> None:
    log = shared_path(
        "interop",
        "results",
        "UKGovernmentBEIS__inspect_ai",
        "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval",
    )
    (run,) = import_run(log, format="inspect", run_id="imported", results_dir=tmp_path)
    record = _check_record(run.path)
    _check_outcomes(run.path, record)
    assert record["mode"] == "imported" and record["source"]["format"] == "inspect"
    assert record["grader_hard"] == {} and record["vision"] is True and record["sample"] is None


def test_the_committed_run_of_format_1_reads_as_the_record() -> None:
    written = json.loads((FORMAT1 / "run.json").read_text(encoding="utf-8"))
    record = read_manifest(FORMAT1)
    assert "format_version" not in written and record["format_version"] == 1
    assert {k: v for k, v in record.items() if k != "format_version"} == written
    assert type_problems(dict(record), RunRecord, "format1") == []
    _check_outcomes(FORMAT1, record)


def test_readers_of_a_run_json_they_cannot_read_keep_their_own_answer(folders: dict[str, Path], tmp_path: Path) -> None:
    """Every reader goes through read_manifest and says what it says of a run.json it cannot read: the runs
    index a corrupt run naming the file and why, the accounting no totals, an interrupted run no counts."""
    results = tmp_path / "results"
    for name in ("ok", "newer", "broken"):
        shutil.copytree(folders["run"], results / name)
        manifest = {**json.loads((results / name / "run.json").read_text(encoding="utf-8")), "run_id": name}
        if name == "newer":
            manifest["format_version"] = 3
        (results / name / "run.json").write_text("{" if name == "broken" else json.dumps(manifest), encoding="utf-8")
    runs = runs_df(results, None, cache=False).set_index("run_id")
    assert runs.loc["ok", "state"] == "ok"
    assert runs.loc["newer", "state"] == "corrupt" and runs.loc["newer", "problem"] == (
        f"{results / 'newer' / 'run.json'}: format_version 3 is newer than this goldenkit reads (2): upgrade goldenkit"
    )
    assert runs.loc["broken", "state"] == "corrupt"
    assert runs.loc["broken", "problem"].startswith(f"{results / 'broken' / 'run.json'}: invalid JSON")
    assert run_totals_of(results / "ok") == read_manifest(folders["run"])["accounting"]
    assert run_totals_of(results / "newer") is None and run_totals_of(results / "broken") is None
    assert RunInterrupted.read(results, "ok").kept == 8
    assert RunInterrupted.read(results, "broken").kept is None
