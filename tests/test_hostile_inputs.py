"""Hostile inputs are refused with one line naming where, through the CLI: thresholds that make a
verdict impossible or automatic, names that would leave their folder, slices spelled like goldenkit's
own rows, imported files whose fields have the wrong type."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from goldenkit._checks import unit_threshold
from goldenkit.cli import main
from goldenkit.errors import ConfigError
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
