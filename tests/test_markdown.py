"""Markdown for a pull request (goldenkit.report.gate_markdown / compare_markdown): parsed back, the
table says what the comparison says, the decision line says the exit code, and a model's text in a cell
cannot break the table or inject HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from run_factory import FakeRun, manifest, worked_example, write_run

from goldenkit.cli import main
from goldenkit.compare import compare_runs
from goldenkit.gate import GatePolicy, evaluate_gate
from goldenkit.report._markdown import compare_markdown, gate_markdown, markdown_table


def parse_tables(text: str) -> list[pd.DataFrame]:
    """Every Markdown table of ``text`` as a DataFrame of strings (escaped pipes kept as ``|``)."""
    tables, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in block]
            assert set(block[1].replace("|", "")) == {"-"}, block[1]
            tables.append(pd.DataFrame(cells[2:], columns=cells[0]))
        block = []
    return tables


def _runs() -> tuple[FakeRun, FakeRun]:
    base, cand = worked_example()
    return FakeRun(manifest("base"), base), FakeRun(manifest("cand"), cand)


def test_the_gate_summary_states_the_decision_and_the_slice_table() -> None:
    base, cand = _runs()
    policy = GatePolicy(critical=("refunds",))
    decision = evaluate_gate(cand, policy=policy, baseline=base)
    text = gate_markdown(decision, links={"compare.html": "reports/compare.html"})
    assert text.startswith(f"### goldenkit gate: exit {decision.exit_code}\n")
    assert decision.exit_code == 2 and "gate FAILED" in text and "`regression.critical[refunds]`" in text
    by_slice = parse_tables(text)[0].set_index("slice")
    assert by_slice.loc["refunds", "b (broke)"] == "8" and by_slice.loc["refunds", "c (fixed)"] == "1"
    assert by_slice.loc["other", "b (broke)"] == "2" and by_slice.loc["other", "c (fixed)"] == "13"
    assert by_slice.loc["refunds", "base pass rate"].startswith("91.7% (55/60)")
    assert "[compare.html](reports/compare.html)" in text
    rules = parse_tables(text)[-1].set_index("rule")
    assert rules.loc["regression.critical[refunds]", "result"] == "FAIL"


def test_compare_markdown_has_the_overall_line_and_the_clusters() -> None:
    base, cand = _runs()
    text = compare_markdown(compare_runs(base, cand))
    assert text.startswith("### goldenkit compare: 10 broke, 14 fixed")
    tables = parse_tables(text)
    assert "(overall)" in set(tables[0]["slice"]) and len(tables) == 2


def test_a_cell_cannot_break_the_table_or_inject_html() -> None:
    df = pd.DataFrame({"answer": ["a | b\nc", "<script>alert(1)</script>"]}, index=pd.Index(["r1", "r2"], name="id"))
    text = markdown_table(df)
    assert len(text.splitlines()) == 4 and "<script>" not in text and "&lt;script&gt;" in text
    back = parse_tables(text)[0]
    assert back["answer"].tolist() == ["a | b c", "&lt;script&gt;alert(1)&lt;/script&gt;"]


def test_gate_writes_the_summary_to_a_file_stdout_and_the_job_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    b, c = worked_example()
    write_run(tmp_path / "results", manifest("base"), b)
    write_run(tmp_path / "results", manifest("cand", model_id="model-b"), c)
    (tmp_path / "g.toml").write_text('[gate]\ncritical = ["refunds"]\n', encoding="utf-8")
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    argv = ["gate", "cand", "--baseline", "base", "--config", "g.toml", "--markdown", "pr.md"]
    assert main([*argv, "--link", "compare.html=https://ci.example/compare.html"]) == 2
    written = (tmp_path / "pr.md").read_text(encoding="utf-8")
    assert (
        written.startswith("### goldenkit gate: exit 2")
        and "[compare.html](https://ci.example/compare.html)" in written
    )
    assert summary.read_text(encoding="utf-8") == "earlier step\n" + written  # appended, never replaced
    assert parse_tables(written)[0].set_index("slice").loc["refunds", "b (broke)"] == "8"
    capsys.readouterr()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert main(["gate", "cand", "--baseline", "base", "--config", "g.toml", "--markdown", "-"]) == 2
    assert "### goldenkit gate: exit 2" in capsys.readouterr().out
    assert main([*argv[:-1], "bad\nname.md"]) == 1  # an output path is checked before anything is written
    assert main(["gate", "cand", "--baseline", "base", "--link", "nourl"]) == 1


def test_compare_writes_markdown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    b, c = worked_example()
    write_run(tmp_path / "results", manifest("base"), b)
    write_run(tmp_path / "results", manifest("cand", model_id="model-b"), c)
    assert main(["compare", "base", "cand", "--markdown", "cmp.md"]) == 0
    text = (tmp_path / "cmp.md").read_text(encoding="utf-8")
    assert text.startswith("### goldenkit compare: 10 broke, 14 fixed") and len(parse_tables(text)) == 2
