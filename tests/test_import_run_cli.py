"""``goldenkit import-run`` end to end: imported runs through compare, gate and report, unchanged.

The inspect eval set in ../shared/interop/results/ is one set of 10 samples run by
two models with 5 epochs each: a real paired comparison. The README's per-harness
sections run these same commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _shared import shared_dir, shared_fixture

from goldenkit import compare_runs, outcomes_df, read_run, report as report_lib
from goldenkit.cli import main

RESULTS = shared_dir("interop", "results")
_needs_results = shared_fixture("interop", "results")
INSPECT = RESULTS / "UKGovernmentBEIS__inspect_ai"
GPT5 = INSPECT / "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval"
SONNET = INSPECT / "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval"
STREAMING = INSPECT / "tests__log__test_eval_log__log_streaming.eval"
LM = RESULTS / "EleutherAI__lm-evaluation-harness"
PF_EXPORT = RESULTS / "promptfoo__promptfoo" / "test____fixtures____sample-export.json"
OPENAI_EVALS = next(iter(sorted((RESULTS / "openai__evals").glob("*.jsonl"))), Path("missing"))


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_cli(*args: str) -> int:
    return main([str(a) for a in args])


def test_import_compare_and_gate_the_inspect_eval_set(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import-run", GPT5, "--format", "inspect", "--run-id", "gpt5") == 0
    assert run_cli("import-run", SONNET, "--format", "inspect", "--run-id", "sonnet") == 0
    out = capsys.readouterr().out
    assert "gpt5: 50 outcomes (PASS 30, FAIL 20, ERROR 0), model openai/gpt-5, VALID -> results/gpt5" in out
    assert "sonnet: 50 outcomes (PASS 33, FAIL 17, ERROR 0)" in out

    assert run_cli("compare", "gpt5", "sonnet", "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    overall = doc["table"][-1]
    assert overall["slice"] == "(overall)" and doc["status_counts"]["UNCHANGED_PASS"] == 6
    # collapsed by majority of 5 epochs: gpt-5 6/10, sonnet 7/10 (sample 5: IIIII -> CCIIC)
    assert (overall["rows"], overall["b"], overall["c"]) == (10, 0, 1)
    assert overall["p_base"] == pytest.approx(0.6) and overall["p_cand"] == pytest.approx(0.7)
    assert overall["p_val"] == pytest.approx(1.0)  # exact McNemar, b + c = 1: p = 2 * 0.5 = 1
    assert [(f["row_id"], f["status"]) for f in doc["flips"]] == [("5", "RECOVERED")]

    # 10 rows cannot show non-inferiority: the threshold alone, the margin off (the green says what it missed)
    (workdir / "goldenkit.toml").write_text(
        "[gate]\nmin_pass_rate = 0.65\nnon_inferiority_margin = false\n", encoding="utf-8"
    )
    assert run_cli("gate", "sonnet", "--baseline", "gpt5") == 0
    assert "gate PASSED" in capsys.readouterr().out
    assert run_cli("gate", "gpt5", "--baseline", "sonnet") == 2  # 60% < 65%
    assert "pass_rate" in capsys.readouterr().out
    # an imported run is a baseline like any other
    assert run_cli("baseline", "save", "gpt5", "--name", "inspect-gpt5") == 0
    assert "6/10 rows pass" in capsys.readouterr().out
    assert run_cli("gate", "sonnet", "--baseline", "inspect-gpt5") == 0


def test_different_sample_sets_are_not_comparable(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import-run", GPT5, "--format", "inspect", "--run-id", "gpt5") == 0
    assert run_cli("import-run", STREAMING, "--format", "inspect", "--run-id", "llama") == 0
    capsys.readouterr()
    assert run_cli("compare", "gpt5", "llama") == 4
    err = capsys.readouterr().err
    assert "dataset sha256 differs" in err
    assert "8 row(s) only in base: 3, 4, 5, 6, 7, 8, 9, 10" in err  # compare names the rows that differ
    from goldenkit.harnesses import sample_differences

    # the 2024 log ran samples 1 and 2 of the same task: the rows that differ are 3..10
    assert sample_differences("results/gpt5", "results/llama") == ["8 row(s) only in base: 3, 4, 5, 6, 7, 8, 9, 10"]
    assert sample_differences("results/gpt5", "results/gpt5") == []


def test_incomplete_import_fails_the_gate_as_not_evidence(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import-run", OPENAI_EVALS, "--format", "openai-evals", "--run-id", "oe") == 0
    assert "INVALID: incomplete: the openai-evals log has no final_report" in capsys.readouterr().out
    (workdir / "goldenkit.toml").write_text("[gate]\nregression = false\n", encoding="utf-8")
    assert run_cli("gate", "oe") == 3
    assert "run is INVALID: incomplete" in capsys.readouterr().out


def test_promptfoo_providers_compare_and_lm_eval_tasks_gate(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import-run", PF_EXPORT, "--format", "promptfoo", "--run-id", "pf") == 0
    assert run_cli("compare", "pf-openai-gpt-5", "pf-openai-gpt-5-mini") == 0
    assert (
        "agent version differs (what is compared): model_id openai:gpt-5 vs openai:gpt-5-mini"
        in capsys.readouterr().out
    )
    belief = next(LM.glob("*samples_negotiationtom_belief_*.jsonl"))
    assert run_cli("import-run", belief, "--format", "lm-eval", "--run-id", "belief", "--slice", "slot") == 0
    (workdir / "goldenkit.toml").write_text("[gate]\nregression = false\nmin_pass_rate = 0.4\n", encoding="utf-8")
    capsys.readouterr()
    assert run_cli("gate", "belief") == 0
    out = capsys.readouterr().out
    assert "[PASS] pass_rate" in out and "20 rows graded" in out


def test_report_functions_on_imported_runs(workdir: Path) -> None:
    assert run_cli("import-run", GPT5, "--format", "inspect", "--run-id", "gpt5") == 0
    assert run_cli("import-run", SONNET, "--format", "inspect", "--run-id", "sonnet") == 0
    assert run_cli("import-run", OPENAI_EVALS, "--format", "openai-evals", "--run-id", "oe") == 0
    gpt5, sonnet, oe = (read_run(f"results/{r}") for r in ("gpt5", "sonnet", "oe"))
    key = report_lib.run_key_table(gpt5)["value"].to_dict()
    assert key["mode"] == "imported" and key["model"] == "openai/gpt-5"
    assert report_lib.validity_statement(oe).startswith("INVALID: incomplete")
    errors = report_lib.errors_and_skips(outcomes_df(oe))
    assert int(errors["outcomes"].sum()) == 9
    flaky = report_lib.flaky_table(outcomes_df(sonnet))
    assert list(flaky.index) == ["5"]  # CCIIC: the only sample that passes some epochs, not all
    table = report_lib.format_compare_table(compare_runs(gpt5, sonnet))
    assert len(table) == 2


@pytest.mark.slow
def test_report_command_on_imported_runs(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("import-run", GPT5, "--format", "inspect", "--run-id", "gpt5") == 0
    assert run_cli("import-run", SONNET, "--format", "inspect", "--run-id", "sonnet") == 0
    code = run_cli("report", "sonnet", "--baseline", "gpt5")
    assert code == 0, capsys.readouterr().err  # the notebook's error, should a kernel fail on a loaded machine
    page = (workdir / "results" / "sonnet" / "compare.html").read_text(encoding="utf-8")
    assert "RECOVERED" in page and "anthropic/claude-sonnet-4-20250514" in (
        workdir / "results" / "sonnet" / "report.html"
    ).read_text(encoding="utf-8")
