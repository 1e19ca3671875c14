"""Simulated conversations with a real ADK agent (scripted model, a real stateful tool): one
fresh runner and session per row x repeat, kept across the conversation's turns."""

from __future__ import annotations

from typing import Any

import pytest
from factories import row, write_dataset

pytest.importorskip("google.adk")

from adk_scripted.scripted_llm import ScriptedLlm  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.tools.tool_context import ToolContext  # noqa: E402

from goldenkit.dataset import read_dataset  # noqa: E402
from goldenkit.providers._adk import AdkProvider  # noqa: E402
from goldenkit.providers._simulator import CallableSimulator  # noqa: E402
from goldenkit.records import Message, Scenario  # noqa: E402
from goldenkit.results import read_run  # noqa: E402
from goldenkit.runner import run_eval  # noqa: E402


def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Increment the session's counter."""
    tool_context.state["count"] = tool_context.state.get("count", 0) + 1
    return {"count": tool_context.state["count"]}


SCRIPT = {"count": [{"text": "counting", "calls": [("bump", {})]}, {"text": "counted"}], "hello": [{"text": "hi"}]}
AGENT = LlmAgent(name="sim_agent", model=ScriptedLlm(model="unit-llm", script=SCRIPT), instruction="t", tools=[bump])


def count_twice(scenario: Scenario, transcript: list[Message]) -> str | None:
    asked = sum(1 for m in transcript if m.role == "user")
    return "count" if asked < 3 else None


def test_an_adk_agent_keeps_one_session_per_conversation_and_a_fresh_one_per_repeat(tmp_path):
    scenario = {"starting_prompt": "hello", "conversation_plan": "count twice"}
    log = [{"version": "1", "date": "2026-12-01", "why": "t"}]
    case = {"eval_id": "a", "conversation_scenario": scenario}
    ds = write_dataset(tmp_path, [row("a", case)], name="adk", version="1", meta={"changelog": log})
    user = CallableSimulator(count_twice)
    # the row has no expectation (max_ungradable=None lets it run): only its sessions are checked here
    summary = run_eval(
        read_dataset(ds),
        AdkProvider(AGENT),
        ["contract"],
        results_dir=tmp_path / "res",
        run_id="r",
        repeats=2,
        progress=False,
        user_simulator=user,
        max_ungradable=None,
    )
    out = read_run(summary.path).outcomes().sort_values("repeat")
    for traj in out["trajectory"]:
        assert [t["user"] for t in traj] == ["hello", "count", "count"]
        assert [t["text"] for t in traj] == ["hi", "counted", "counted"]
        # the session's state carries over between turns; each repeat starts from a fresh session
        assert [r["response"]["count"] for t in traj for r in t["tool_responses"]] == [1, 2]
