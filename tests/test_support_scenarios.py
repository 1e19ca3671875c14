"""The bundled support-scenarios dataset: generated from support-agent, and its recorded
simulated run replays with no model, the same conversations and the same verdicts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from goldenkit.dataset import read_dataset
from goldenkit.providers._fixtures import FixturesProvider
from goldenkit.results import read_run
from goldenkit.runner import run_eval

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "datasets" / "support-scenarios"
FIXTURES = DATASET / "fixtures" / "scripted"


def test_every_row_is_a_scenario_over_the_support_tools():
    ds = read_dataset(DATASET)
    assert ds.name == "support-scenarios" and 12 <= len(ds.rows) <= 20
    source = {json.loads(x)["id"] for x in (ROOT / "datasets" / "support-agent" / "dataset.jsonl").open()}
    for rid in ds.rows["id"]:
        case = ds.case(rid)
        assert case.scenario is not None and case.scenario.plan and case.scenario.max_turns == 4
        assert case.tools and case.expect
        assert rid.removeprefix("sim-") in source


def test_the_recorded_run_replays_with_the_recorded_conversations(tmp_path):
    summary = run_eval(
        read_dataset(DATASET),
        FixturesProvider(fixtures=FIXTURES),
        ["contract", "trajectory"],
        results_dir=tmp_path,
        run_id="replay",
        progress=False,
    )
    assert summary.validity == "VALID" and summary.counts["ERROR"] == 0
    assert summary.counts["PASS"] == 13 and summary.counts["FAIL"] == 3
    out = read_run(summary.path).outcomes().set_index("row_id")
    recorded = {json.loads(x)["row_id"]: json.loads(x) for x in (FIXTURES / "fixtures.jsonl").open()}
    for rid, rec in recorded.items():
        assert [t["user"] for t in out.loc[rid, "trajectory"]] == [t["user"] for t in rec["turns"]]
    assert (
        summary.manifest["simulator_version"]["settings"]["callable"] == "scripts.make_support_scenarios:scripted_user"
    )


def test_the_generator_reproduces_the_dataset_and_the_recording(tmp_path):
    out = tmp_path / "again"
    script = [sys.executable, "scripts/make_support_scenarios.py", str(out)]
    subprocess.run(script, cwd=ROOT, check=True, capture_output=True)
    assert (out / "dataset.jsonl").read_bytes() == (DATASET / "dataset.jsonl").read_bytes()

    def lines(path: Path) -> list[dict[str, object]]:
        return [{k: v for k, v in json.loads(x).items() if k != "latency_ms"} for x in path.open()]

    assert lines(out / "fixtures" / "scripted" / "fixtures.jsonl") == lines(FIXTURES / "fixtures.jsonl")
