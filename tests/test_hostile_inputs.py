"""Hostile inputs are refused with one line naming where, through the CLI: thresholds that make a
verdict impossible or automatic, names that would leave their folder, slices spelled like goldenkit's
own rows, imported files whose fields have the wrong type."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
    folder.mkdir(parents=True, exist_ok=True)
    log = [{"version": version, "date": "2026-01-01", "why": "t"}]
    (folder / "dataset.json").write_text(json.dumps({"name": "t", "version": version, "changelog": log}))
    (folder / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


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
    (tmp_path / "agent_mod.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = write_dataset(tmp_path / "ds", [contract_row("a")])
    (ds / "goldenkit.toml").write_text(
        f'[graders]\nuse = ["contract", "{grader}"]\n[graders.{grader}]\nthreshold = {value}\n'
    )
    code = main(["run", str(ds), "--provider", "callable", "--callable", "agent_mod:answer", "--quiet"])
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
    (tmp_path / "agent_mod.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    case = {
        "eval_id": "e1",
        "conversation": [{"user_content": {"parts": [{"text": "hi"}]}, "final_response": {"parts": [{"text": "ok"}]}}],
        "criteria": {"response_match_score": {"threshold": 5}},
    }
    ds = write_dataset(tmp_path / "ds", [{"id": "e1", "slice": "s", "split": "dev", "case": case}])
    code = main(["run", str(ds), "--provider", "callable", "--callable", "agent_mod:answer", "--quiet"])
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
