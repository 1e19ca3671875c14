"""The compare, gate, baseline and stats commands, through goldenkit.cli.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_factory import SHA_B, manifest, outcomes, worked_example, write_run

from goldenkit.cli import main


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """results/base, results/cand (the worked example), results/other (another dataset), results/clean."""
    b, c = worked_example()
    write_run(tmp_path / "results", manifest("base"), b)
    write_run(tmp_path / "results", manifest("cand", model_id="model-b"), c)
    write_run(tmp_path / "results", manifest("other", sha256=SHA_B), c)
    clean = b.assign(verdict=b["verdict"].replace({"ERROR": "FAIL"}), response=b["response"].fillna("x"))
    write_run(tmp_path / "results", manifest("clean"), clean)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_compare_prints_slice_table_and_flips(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "base", "cand"]) == 0
    out = capsys.readouterr().out
    assert "refunds    60    91.7 [81.9, 96.4]  80.0 [68.2, 88.2]  8   1   0.0391  0.0391" in out
    assert "(overall)  400   88.0 [84.4, 90.8]  89.0 [85.6, 91.7]  10  14  0.5413" in out
    assert "flips (24):" in out and "NEW_FAILURE    refunds-0000  [refunds]" in out


def test_compare_json(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "base", "cand", "--json", "--alpha", "0.01"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["alpha"] == 0.01 and doc["table"][-1]["b"] == 10 and len(doc["flips"]) == 24


def test_compare_different_dataset_hash_exits_4_naming_it(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "base", "other"]) == 4
    err = capsys.readouterr().err
    assert "dataset sha256 differs: 3f2a00000000... vs 9b1c11111111..." in err
    assert err.count("\n") == 1  # one line, no traceback


def test_compare_bad_input_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "base", "ghost"]) == 1
    assert "ghost" in capsys.readouterr().err
    assert main(["compare", "base", "cand", "--rule", "most"]) == 1


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_gate_fails_on_critical_refunds(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(workdir / "goldenkit.toml", '[gate]\ncritical = ["refunds"]\nmin_pass_rate = 0.85\n')
    assert main(["gate", "cand", "--baseline", "base"]) == 2
    out = capsys.readouterr().out
    assert "[PASS] pass_rate: pass rate 0.8900 >= 0.8500" in out
    assert "[FAIL] regression.critical[refunds]" in out and "gate FAILED" in out


def test_gate_exit_codes(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(workdir / "g.toml", "[gate]\nalpha = 0.01\n")
    assert main(["gate", "cand", "--baseline", "base", "--config", str(cfg)]) == 0
    assert main(["gate", "cand", "--config", str(cfg)]) == 3  # no baseline: no regression rule could be checked
    assert "no baseline" in capsys.readouterr().out
    # a --baseline that resolves to nothing is a usage error, not "gate failed"
    assert main(["gate", "cand", "--baseline", "nothing-here", "--config", str(cfg)]) == 1
    assert "'nothing-here': no run" in capsys.readouterr().err
    assert main(["gate", "other", "--baseline", "base", "--config", str(cfg)]) == 4
    assert "dataset sha256 differs" in capsys.readouterr().out
    strict = write_config(workdir / "s.toml", "[gate]\nregression = false\nmax_error_rate = 0.001\n")
    assert main(["gate", "cand", "--config", str(strict)]) == 3
    capsys.readouterr()
    assert main(["gate", "cand", "--config", str(strict), "--json"]) == 3
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 3 and any(r["name"] == "error_rate" and not r["passed"] for r in doc["rules"])
    bad = write_config(workdir / "b.toml", "[gate]\nmin_pass = 0.9\n")
    assert main(["gate", "cand", "--config", str(bad)]) == 1
    assert "b.toml [gate]: unknown key(s) min_pass" in capsys.readouterr().err


def test_gate_on_invalid_and_on_skipped_runs(workdir: Path) -> None:
    rows = [(f"r{i}", "s", ["SKIPPED"]) for i in range(3)]
    write_run(workdir / "results", manifest("skipped", repeats=1), outcomes(rows))
    write_run(workdir / "results", manifest("bad", repeats=1, validity="INVALID"), outcomes([("r", "s", ["PASS"])]))
    cfg = write_config(workdir / "n.toml", "[gate]\nregression = false\n")
    assert main(["gate", "skipped", "--config", str(cfg)]) == 2  # nothing graded, every row SKIPPED: failed
    assert main(["gate", "bad", "--config", str(cfg)]) == 3


def test_baseline_commands_and_gate_against_a_baseline(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # its errored repeats decide no row (each is PASS or FAIL whatever they were): no hole, it saves
    assert main(["baseline", "save", "base", "--name", "errs"]) == 0
    capsys.readouterr()
    assert main(["baseline", "save", "clean", "--name", "main"]) == 0
    assert "saved baseline main from run clean" in capsys.readouterr().out
    assert main(["baseline", "save", "clean", "--name", "main"]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["baseline", "save", "clean", "--name", "main", "--force"]) == 0
    assert len((workdir / "baselines" / "history.jsonl").read_text().splitlines()) == 3  # errs, main, main again
    capsys.readouterr()
    assert main(["baseline", "list"]) == 0
    assert "main" in capsys.readouterr().out
    assert main(["baseline", "show", "main"]) == 0
    out = capsys.readouterr().out
    assert "baseline main" in out and "refunds" in out and "(overall)" in out
    cfg = write_config(workdir / "g.toml", '[gate]\nbaseline = "main"\ncritical = ["refunds"]\n')
    assert main(["gate", "cand", "--config", str(cfg)]) == 2
    assert "against main" in capsys.readouterr().out
    assert main(["compare", "main", "cand"]) == 0


def test_stats_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "plan", "--delta", "0.02", "--discordance", "0.06"]) == 0
    out = capsys.readouterr().out
    assert "rows needed: 1244   (exact McNemar test" in out
    assert "approximate: 1175 rows (Connor 1987" in out
    assert main(["stats", "plan", "--delta", "0.1", "--discordance", "0.3", "--power", "0.9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "exact" and doc["exact_power_at_rows_needed"] >= 0.9
    assert doc["rows_needed"] > 0 and doc["rows_needed_connor_approximate"] > 0
    # an absurd change to detect: refused at once (a one-line error), never a scan that runs out of memory
    assert main(["stats", "plan", "--delta", "0.00001", "--discordance", "0.5"]) == 1
    assert "more than 10,000,000: the plan is not practical" in capsys.readouterr().err
    assert main(["stats", "plan", "--delta", "0.0005", "--discordance", "0.01", "--json"]) == 0  # 317,781 rows
    assert json.loads(capsys.readouterr().out)["rows_needed"] == 317781
    assert main(["stats", "plan", "--delta", "0.2", "--discordance", "0.1"]) == 1
    assert main(["stats"]) == 1
