"""Simulated conversations against a real model server: the model is both the agent and the
simulated user. With the CI server's random-weight model nobody ever says stop, so every
conversation runs to max_turns; the recording then replays with the same transcripts and
verdicts, without any model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from livekit import make_provider, require_live, show, write_dataset

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.providers._fixtures import FixturesProvider
from goldenkit.providers._simulator import ChatSimulator
from goldenkit.results import read_run
from goldenkit.runner import run_eval

pytestmark = pytest.mark.live
require_live()

TOOLS = [{"name": "lookup_order", "description": "Look up an order", "parameters": {"type": "object"}}]
ROWS = [
    {
        "id": f"scn-{i}",
        "case": {
            "scenario": {
                "starting_prompt": f"Hi, where is order A-10{i}?",
                "plan": "Ask where the order is; then thank.",
            },
            "tools": TOOLS,
            "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
            "expect": {"every_turn": {"must_not": ["zzzz-never"]}, "must_contain_any": ["a", "e"]},
        },
    }
    for i in range(3)
]


def simulator(live, seed: int = 11) -> ChatSimulator:
    return ChatSimulator(
        live.provider,
        model=live.model,
        base_url=live.base_url,
        api_key_env=live.api_key_env,
        temperature=0.7,
        seed=seed,
    )


def test_conversations_run_to_max_turns_are_recorded_and_replay_identically(live, tmp_path):
    ds = read_dataset(write_dataset(tmp_path, ROWS))
    rec = tmp_path / "recording"
    agent = make_provider(live, temperature=0.7, seed=3, max_tokens=48)
    summary = run_eval(
        ds,
        agent,
        ["contract"],
        results_dir=tmp_path / "res",
        run_id="live",
        record_dir=rec,
        user_simulator=simulator(live),
        max_turns=3,
        repeats=2,
        progress=False,
    )
    out = read_run(summary.path).outcomes().sort_values(["row_id", "repeat"]).reset_index(drop=True)
    show("simulated conversations", outcomes=len(out), verdicts=dict(out["verdict"].value_counts()))
    assert summary.validity == "VALID", summary.invalid_reason
    if live.random_model:  # gibberish never contains the stop token: every conversation runs to max_turns
        assert [len(t) for t in out["trajectory"]] == [3] * 6
    for traj in out["trajectory"]:
        assert traj[0]["user"].startswith("Hi, where is order A-10")
        assert all(isinstance(t["user"], str) and t["user"] for t in traj)
    lines = [json.loads(x) for x in (rec / "fixtures.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and all(x["conversation"]["turns"] == len(x["turns"]) for x in lines)
    sim = summary.manifest["simulator_version"]
    assert sim["provider"] == live.provider and sim["model"] == live.model and sim["settings"]["seed"] == 11

    replay = run_eval(
        ds,
        FixturesProvider(fixtures=rec),
        ["contract"],
        results_dir=tmp_path / "res",
        run_id="replay",
        repeats=2,
        progress=False,
    )
    again = read_run(replay.path).outcomes().sort_values(["row_id", "repeat"]).reset_index(drop=True)
    cols = ["row_id", "repeat", "verdict", "response", "trajectory"]
    assert again[cols].to_dict("records") == out[cols].to_dict("records")
    assert main(["compare", str(summary.path), str(replay.path)]) == 0


def test_the_cli_runs_a_live_simulator_and_another_seed_is_not_comparable(live, tmp_path, capsys):
    ds = write_dataset(tmp_path, ROWS[:1])
    args = [
        "run",
        str(ds),
        "--provider",
        live.provider,
        "--base-url",
        live.base_url,
        "--model",
        live.model,
        "--max-tokens",
        "32",
        "--user-simulator",
        live.provider,
        "--user-model",
        live.model,
        "--user-base-url",
        live.base_url,
        "--max-turns",
        "2",
        "--results-dir",
        str(tmp_path / "res"),
        "--quiet",
    ]
    if live.api_key_env:
        args += ["--api-key-env", live.api_key_env, "--user-api-key-env", live.api_key_env]
    assert main([*args, "--run-id", "a", "--user-seed", "1"]) == 0
    assert main([*args, "--run-id", "b", "--user-seed", "2"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "res" / "a"), str(tmp_path / "res" / "b")]) == 4
    assert "user simulator differs" in capsys.readouterr().err
    assert Path(tmp_path / "res" / "a" / "run.json").exists()
