"""The third recorded agent (budget) and ``goldenkit demo --benchmark``: a three-way leaderboard."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.demo._benchmark import run_benchmark
from goldenkit.graders._base import combine, get_grader, grade_case
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.stats import collapse_repeats

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "datasets" / "support-agent"


def _collapsed(agent: str) -> pd.Series:
    """Regrade an agent's recording with the dataset's graders; one verdict per row (majority of 3)."""
    ds = read_dataset(DATASET)
    cfg = tomllib.loads((DATASET / "goldenkit.toml").read_text(encoding="utf-8"))
    graders = [get_grader(name) for name in cfg["graders"]["use"]]
    hard = {g.name: g.hard for g in graders}
    recs = []
    for text in (DATASET / "fixtures" / agent / "fixtures.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        verdict = "ERROR"
        if not line.get("error"):
            resp = Response(turns=[TurnOutput.from_dict(t) for t in line["turns"]])
            verdict = combine(grade_case(graders, ds.case(line["row_id"]), resp), hard)[0]
        recs.append({"row_id": line["row_id"], "repeat": line["repeat"], "verdict": verdict})
    c = collapse_repeats(pd.DataFrame(recs))
    return pd.Series(c["verdict"].astype(str).to_numpy(), index=c["row_id"])


def test_budget_is_the_baseline_plus_thirty_refusals() -> None:
    base, budget = _collapsed("baseline"), _collapsed("budget")
    assert (budget == "PASS").sum() == 322 and (base == "PASS").sum() == 352
    assert not ((budget == "PASS") & (base != "PASS")).any()  # never ahead of the baseline
    behind = budget.index[(base == "PASS") & (budget == "FAIL")]
    assert len(behind) == 30
    meta = json.loads((DATASET / "fixtures" / "budget" / "meta.json").read_text(encoding="utf-8"))
    assert meta["model_id"] == "support-sim-mini" and meta["agent"] == "budget"
    lines = [json.loads(t) for t in (DATASET / "fixtures" / "budget" / "fixtures.jsonl").read_text().splitlines()]
    refusals = {ln["row_id"] for ln in lines if ln["turns"] and "can't help" in ln["turns"][-1]["text"]}
    assert set(behind) <= refusals


def test_three_way_leaderboard(tmp_path: Path) -> None:
    lb = run_benchmark(DATASET, tmp_path)
    t = lb.table.set_index("run_id")
    assert list(lb.table["run_id"]) == ["demo-candidate", "demo-baseline", "demo-budget"]
    assert list(lb.table["group"]) == ["top", "top", "A"]
    assert (t.loc["demo-budget", "rank_low"], t.loc["demo-budget", "rank_high"]) == (3, 3)
    p = lb.pairs.set_index(["a", "b"])
    top = p.loc[("demo-candidate", "demo-baseline")]
    assert (top["b_count"], top["c_count"], bool(top["significant"])) == (14, 10, False)
    assert top["p_val"] == pytest.approx(0.5413, abs=1e-4)
    assert bool(p.loc[("demo-baseline", "demo-budget"), "significant"])
    assert bool(p.loc[("demo-candidate", "demo-budget"), "significant"])


def test_demo_benchmark_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--benchmark", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # each run's label (the recorded agent's name), then its run id
    assert "top    1-2   candidate (demo-candidate)  support-sim-1     356/400" in out
    assert "A      3     budget (demo-budget)        support-sim-mini  322/400" in out
    assert "statistically tied" in out and "significantly behind both" in out
    # the runs are ordinary runs: the leaderboard command reads them the same way
    runs = [str(tmp_path / f"demo-{a}") for a in ("baseline", "candidate", "budget")]
    assert main(["leaderboard", *runs, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["group"] for r in doc["table"]] == ["top", "top", "A"]
