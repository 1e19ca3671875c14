"""Hostile inputs are refused with one line naming where, through the CLI: thresholds that make a
verdict impossible or automatic, names that would leave their folder, slices spelled like goldenkit's
own rows, imported files whose fields have the wrong type."""

from __future__ import annotations

import json
import math
from pathlib import Path

import factories
import pytest
from run_factory import manifest, outcomes, write_run

from goldenkit._checks import check_name, unit_threshold
from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.dataset._versions import new_version_target
from goldenkit.errors import ConfigError, InputError
from goldenkit.stats._collapse import OVERALL

BAD_THRESHOLDS = [float("nan"), float("inf"), -float("inf"), 5, -1, 1.0000001, "0.8", True, None, [0.5]]
AGENT = "def answer(case):\n    return 'Order A-1 ships today.'\n"


def write_dataset(folder: Path, rows: list[dict], version: str = "1") -> Path:
    return factories.write_dataset(folder.parent, rows, folder=folder.name, version=version)


def contract_row(rid: str, slice_: str = "s") -> dict:
    return {"id": rid, "slice": slice_, "split": "dev", "case": {"prompt": "where is A-1?", "expect": {}}}


def last_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "nothing on stderr"
    assert "Traceback" not in err
    return lines[-1]


# ---------------------------------------------------------------------------- thresholds
@pytest.mark.parametrize("value", BAD_THRESHOLDS)
def test_the_threshold_rule_refuses_what_is_not_a_finite_number_in_0_1(value):
    with pytest.raises(ConfigError, match=r"^graders\.x\.threshold must be a finite number in \[0, 1\]"):
        unit_threshold(value, "graders.x.threshold")


@pytest.mark.parametrize("value", [0, 0.0, 0.5, 1, 1.0])
def test_the_threshold_rule_takes_the_interval_with_its_ends(value):
    assert unit_threshold(value, "t") == float(value) and math.isfinite(unit_threshold(value, "t"))


@pytest.mark.parametrize("grader", ["reference", "trajectory"])
@pytest.mark.parametrize("value", ["nan", "inf", "5", "-1", '"0.8"'])
def test_a_graders_threshold_out_of_range_is_one_line_naming_the_file_and_option(
    tmp_path, monkeypatch, capsys, grader, value
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hostile_agent_mod.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = write_dataset(tmp_path / "ds", [contract_row("a")])
    (ds / "goldenkit.toml").write_text(
        f'[graders]\nuse = ["contract", "{grader}"]\n[graders.{grader}]\nthreshold = {value}\n'
    )
    code = main(["run", str(ds), "--provider", "callable", "--callable", "hostile_agent_mod:answer", "--quiet"])
    line = last_error_line(capsys.readouterr().err)
    assert code == 1
    assert "goldenkit.toml" in line and f"graders.{grader}.threshold must be a finite number in [0, 1]" in line
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


@pytest.mark.parametrize("value", ["NaN", "Infinity", "5", "-1"])
def test_a_criteria_files_response_match_score_out_of_range_is_refused(tmp_path, capsys, value):
    config = tmp_path / "eval_config.json"
    config.write_text('{"criteria": {"response_match_score": ' + value + "}}")
    ds = write_dataset(tmp_path / "ds", [contract_row("a")])
    code = main(["run", str(ds), "--provider", "fixtures", "--criteria", str(config), "--quiet"])
    line = last_error_line(capsys.readouterr().err)
    assert code == 1 and "eval_config.json: criteria.response_match_score must be a finite number in [0, 1]" in line
    nested = tmp_path / "nested.json"
    nested.write_text('{"criteria": {"response_match_score": {"threshold": ' + value + "}}}")
    assert main(["run", str(ds), "--provider", "fixtures", "--criteria", str(nested), "--quiet"]) == 1
    assert "nested.json: criteria.response_match_score" in last_error_line(capsys.readouterr().err)


def test_a_case_criterion_out_of_range_is_refused_when_the_dataset_is_read(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hostile_agent_mod.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    case = {
        "eval_id": "e1",
        "conversation": [{"user_content": {"parts": [{"text": "hi"}]}, "final_response": {"parts": [{"text": "ok"}]}}],
        "criteria": {"response_match_score": {"threshold": 5}},
    }
    ds = write_dataset(tmp_path / "ds", [{"id": "e1", "slice": "s", "split": "dev", "case": case}])
    code = main(["run", str(ds), "--provider", "callable", "--callable", "hostile_agent_mod:answer", "--quiet"])
    line = last_error_line(capsys.readouterr().err)
    assert code == 1 and "e1" in line and "criteria.response_match_score must be a finite number in [0, 1]" in line


# ---------------------------------------------------------------------------- reserved slices
@pytest.mark.parametrize("slice_", [OVERALL, "(all)", " (none) ", "(untagged)", "(anything)"])
def test_a_slice_spelled_like_goldenkits_own_rows_is_refused_with_file_and_line(tmp_path, capsys, slice_):
    ds = write_dataset(tmp_path / "ds", [contract_row("a"), contract_row("b", slice_)])
    code = main(["dataset", "validate", str(ds)])
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err
    assert "dataset.jsonl:2" in out.err + out.out and "is reserved" in out.err + out.out


def test_slices_that_only_contain_parentheses_stay_allowed(tmp_path):
    ds = write_dataset(tmp_path / "ds", [contract_row("a", "refunds (EU)"), contract_row("b", "(beta) refunds")])
    assert main(["dataset", "validate", str(ds)]) == 0


# ---------------------------------------------------------------------------- names and paths
HOSTILE_NAMES = [
    "main\n",
    "../main",
    "a/b",
    "a\\b",
    "..",
    ".",
    ".hidden",
    "",
    "main\x1b[2J",
    "bidi\u202eevil",
    "x" * 200,
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_name_rule_refuses_what_is_not_one_safe_file_name(name):
    with pytest.raises(InputError, match=r"^dataset version "):
        check_name(name, "dataset version")


@pytest.mark.parametrize("name", ["main", "2026.11.0", "v1.2-rc.1", "nightly_2026-12-01", "1.0.0+build.5"])
def test_the_name_rule_takes_ordinary_names(name):
    assert check_name(name, "baseline name") == name


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_baseline_name_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / "results", manifest("a"), outcomes([("r1", "s", ["PASS"] * 3)], run_id="a"))
    code = main(["baseline", "save", "a", "--name", name])
    line = last_error_line(capsys.readouterr().err)
    assert code == 1 and "baseline name" in line
    assert not (tmp_path / "baselines").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["results"]


@pytest.mark.parametrize("version", ["../x", "v1\n", "a/b", ".."])
def test_a_dataset_version_that_is_not_a_name_is_refused_naming_the_file(tmp_path, capsys, version):
    ds = write_dataset(tmp_path / "ds", [contract_row("a")], version=version)
    assert main(["dataset", "validate", str(ds)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "dataset.json" in out.err and '"version"' in out.err


@pytest.mark.parametrize("version", ["../escaped", "2\n", "a/b"])
def test_a_new_dataset_version_that_would_leave_its_folder_is_refused(tmp_path, version):
    ds = read_dataset(write_dataset(tmp_path / "ds", [contract_row("a")]))
    with pytest.raises(InputError, match="dataset version"):
        new_version_target(ds, tmp_path / "ds", version)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pages", "-o", "afile/site"], "--output afile/site: afile is a file, not a folder"),
        (["pages", "-o", "site\n"], "--output 'site\\n' contains a control character (U+000A)"),
        (["baseline", "--baselines-dir", "afile", "list"], "--baselines-dir afile is a file; a folder is needed"),
        (["pages", "--results-dir", "afile"], "--results-dir afile is a file; a folder is needed"),
        (["report", "latest", "-o", "afile/x"], "--output afile/x: afile is a file, not a folder"),
    ],
)
def test_an_output_path_under_a_file_or_with_a_control_character_is_one_line(
    tmp_path, monkeypatch, capsys, argv, message
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("a file, not a folder\n")
    code = main(argv)
    line = last_error_line(capsys.readouterr().err)
    assert code == 1 and message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # nothing was created


# ---------------------------------------------------------------------------- imported files with a wrong type
def _inspect() -> tuple[str, str, object]:
    sample = {
        "id": 1,
        "epoch": 1,
        "input": "Capital of France?",
        "target": "Paris",
        "output": {"choices": [{"message": {"role": "assistant", "content": "Paris"}}]},
        "scores": {"match": {"value": "C"}},
        "model_usage": {"m": {"input_tokens": 5, "output_tokens": 1}},
    }
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "capitals", "model": "m", "config": {"epochs": 1}, "dataset": {"sample_ids": [1]}},
        "results": {"scores": [{"name": "match"}]},
        "stats": {},
        "samples": [sample],
    }
    return "inspect", "log.json", log


def _promptfoo() -> tuple[str, str, object]:
    row = {
        "promptIdx": 0,
        "testIdx": 0,
        "provider": {"id": "echo"},
        "prompt": {"raw": "Say hi", "label": "Say {{w}}"},
        "vars": {"w": "hi"},
        "testCase": {"vars": {"w": "hi"}, "assert": [{"type": "contains", "value": "hi"}]},
        "response": {"output": "hi there"},
        "success": True,
        "score": 1,
        "failureReason": 0,
    }
    return "promptfoo", "pf.json", {"results": {"version": 3, "results": [row]}}


def _deepeval() -> tuple[str, str, object]:
    metric = {"name": "Correctness", "score": 1.0, "success": True, "evaluationModel": "judge"}
    case = {"name": "c", "input": "q", "actualOutput": "a", "success": True, "metricsData": [metric]}
    return "deepeval", "de.json", {"testCases": [case], "conversationalTestCases": []}


def _lm_eval() -> tuple[str, str, object]:
    line = {"doc_id": 0, "doc": {"q": "x"}, "target": "1", "filter": "none", "metrics": ["acc"], "acc": 1.0}
    return "lm-eval", "samples_task_2026-01-01T00-00-00.jsonl", [line]


def _openai_evals() -> tuple[str, str, object]:
    spec = {"spec": {"eval_name": "e.dev.v0", "completion_fns": ["m"], "run_config": {"eval_spec": {"cls": "x"}}}}
    sampling = {"sample_id": "e.0", "type": "sampling", "data": {"prompt": "q", "sampled": ["a"]}}
    match = {"sample_id": "e.0", "type": "match", "data": {"correct": True, "expected": "a", "picked": "a"}}
    return "openai-evals", "log.jsonl", [spec, sampling, match, {"final_report": {"accuracy": 1.0}}]


def _adk() -> tuple[str, str, object]:
    def invocation(text: str) -> dict:
        return {"user_content": {"parts": [{"text": "ask"}]}, "final_response": {"parts": [{"text": text}]}}

    metric = {"metric_name": "response_match_score", "threshold": 0.8, "score": 1.0, "eval_status": 1}
    metric["criterion"] = {"threshold": 0.8}
    case = {
        "eval_set_id": "s",
        "eval_id": "c1",
        "final_eval_status": 1,
        "overall_eval_metric_results": [metric],
        "eval_metric_result_per_invocation": [
            {"actual_invocation": invocation("a"), "expected_invocation": invocation("a"), "eval_metric_results": []}
        ],
    }
    doc = {"eval_set_result_id": "app_s_1", "eval_set_id": "s", "eval_case_results": [case], "creation_timestamp": 1.0}
    return "adk", "app_s_1.evalset_result.json", doc


# (the file, a path to a field in it, the wrong value, the field the message names)
WRONG_FIELDS = [
    (_inspect, ("samples", 0, "scores"), "C", "samples[0].scores"),
    (_inspect, ("samples", 0, "output", "choices"), 7, "output.choices"),
    (_inspect, ("samples", 0, "model_usage", "m", "input_tokens"), "five", "model_usage.input_tokens"),
    (_inspect, ("eval", "config"), [], "eval.config"),
    (_inspect, ("eval", "config", "epochs"), "one", "eval.config.epochs"),
    (_inspect, ("results", "scores"), "match", "results.scores"),
    (_promptfoo, ("results", "results", 0, "testCase", "assert"), "contains hi", "testCase.assert"),
    (_deepeval, ("testCases", 0, "metricsData"), 3, "metricsData"),
    (_deepeval, ("testCases", 0, "additionalMetadata"), "x", "additionalMetadata"),
    (_deepeval, ("conversationalTestCases",), {"a": 1}, "conversationalTestCases"),
    (_lm_eval, (0, "metrics"), "acc", "metrics"),
    (_lm_eval, (0, "metrics", 0), ["acc"], "metrics[0]"),
    (_openai_evals, (0, "spec", "completion_fns"), 5, "spec.completion_fns"),
    (_openai_evals, (0, "spec", "run_config"), "x", "spec.run_config"),
    (_openai_evals, (2, "data"), 1, "data"),
    (_adk, ("eval_case_results", 0, "final_eval_status"), [1], "final_eval_status"),
    (_adk, ("eval_case_results", 0, "eval_metric_result_per_invocation"), 12, "eval_metric_result_per_invocation"),
    (_adk, ("eval_case_results", 0, "overall_eval_metric_results", 0, "criterion"), 0.8, "criterion"),
    (
        _adk,
        (
            "eval_case_results",
            0,
            "eval_metric_result_per_invocation",
            0,
            "actual_invocation",
            "final_response",
            "parts",
        ),
        "a",
        "parts",
    ),
]


def _write(path: Path, doc: object) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(o) + "\n" for o in doc))  # type: ignore[union-attr]
    else:
        path.write_text(json.dumps(doc))


def _put(doc: object, at: tuple, value: object) -> None:
    for key in at[:-1]:
        doc = doc[key]  # type: ignore[index]
    doc[at[-1]] = value  # type: ignore[index]


@pytest.mark.parametrize(
    ("build", "at", "value", "field"), WRONG_FIELDS, ids=[f[0].__name__[1:] + ":" + f[3] for f in WRONG_FIELDS]
)
def test_an_imported_file_with_a_field_of_the_wrong_type_is_one_line_naming_file_and_field(
    tmp_path, monkeypatch, capsys, build, at, value, field
):
    monkeypatch.chdir(tmp_path)
    fmt, name, doc = build()
    _write(tmp_path / name, doc)
    assert main(["import-run", name, "--format", fmt, "--run-id", "good"]) == 0  # the file as built is read
    capsys.readouterr()
    _put(doc, at, value)
    _write(tmp_path / name, doc)
    code = main(["import-run", name, "--format", fmt, "--run-id", "bad"])
    line = last_error_line(capsys.readouterr().err)
    assert code == 1 and name in line and f"field {field} must be" in line
    assert not (tmp_path / "results" / "bad").exists()


@pytest.mark.parametrize("build", [_inspect, _promptfoo, _deepeval, _lm_eval, _openai_evals, _adk])
@pytest.mark.parametrize("value", [12345, "text", None, [], {}, True])
def test_no_field_of_any_importer_turns_a_wrong_type_into_a_traceback(tmp_path, monkeypatch, capsys, build, value):
    """Every field of each file, in turn, given a value of another type: imported, or one line naming the file."""
    monkeypatch.chdir(tmp_path)
    fmt, name, doc = build()

    def fields(v: object, at: tuple = ()) -> list[tuple]:
        if isinstance(v, dict):
            return [p for k, x in v.items() for p in [(*at, k), *fields(x, (*at, k))]]
        if isinstance(v, list) and v:
            return [p for i, x in enumerate(v) for p in [(*at, i), *fields(x, (*at, i))]]
        return []

    for n, at in enumerate(fields(doc)):
        changed = json.loads(json.dumps(doc))
        _put(changed, at, value)
        _write(tmp_path / name, changed)
        code = main(["import-run", name, "--format", fmt, "--run-id", f"r{n}"])
        err = capsys.readouterr().err
        assert "Traceback" not in err, (at, err[-500:])
        assert code == 0 or (code == 1 and len(err.strip().splitlines()) == 1 and name in err), (at, err)


def test_a_wrong_type_no_accessor_caught_is_still_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    import goldenkit.harnesses._import as harnesses

    def reader(path: Path, **options: object) -> object:
        return len(7)  # type: ignore[arg-type]  # what a field read without its accessor would do

    monkeypatch.chdir(tmp_path)
    fmt, name, doc = _deepeval()
    _write(tmp_path / name, doc)
    monkeypatch.setattr(harnesses, "read_deepeval", reader)
    assert main(["import-run", name, "--format", fmt, "--run-id", "r"]) == 1
    line = last_error_line(capsys.readouterr().err)
    assert f"{name}: a field of this deepeval file has a type or value goldenkit cannot read" in line


def test_an_imported_slice_spelled_like_goldenkits_own_rows_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    fmt, name, doc = _deepeval()
    doc["testCases"][0]["additionalMetadata"] = {"topic": OVERALL}  # type: ignore[index]
    _write(tmp_path / name, doc)
    assert main(["import-run", name, "--format", fmt, "--run-id", "r", "--slice", "topic"]) == 1
    assert "a name goldenkit keeps for its own rows" in last_error_line(capsys.readouterr().err)
    assert not (tmp_path / "results" / "r").exists()
