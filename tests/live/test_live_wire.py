"""The live path end to end, asserted on the wire: what the real model server received, and the outcome.

Every test puts :class:`wiretap.Wiretap` (a recording reverse proxy of its own) in front of the
server named by ``GOLDENKIT_LIVE_BASE_URL``, so it checks the requests the server got as well
as the outcomes: a tool loop with a named ``tool_choice`` (the tool's result sent back, the
loop ending), the same streamed, a simulated conversation of several turns, and calls through
a real forward proxy (tinyproxy), streamed and not, with no retries allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from livekit import require_live, show, write_dataset
from wiretap import Wiretap

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.providers._simulator import ChatSimulator
from goldenkit.results import outcomes_df, read_run
from goldenkit.runner import run_eval

pytestmark = pytest.mark.live
require_live()

SUPPORT = Path(__file__).resolve().parents[2] / "datasets" / "support-agent"
NAMED = {"type": "function", "function": {"name": "lookup_order"}}


@pytest.fixture
def tap(live):
    if live.provider != "openai":
        pytest.skip("these wire checks speak the OpenAI protocol")
    with Wiretap(live.base_url) as t:
        yield t


def run_support(tmp_path: Path, tap: Wiretap, live: Any, *extra: str) -> Path:
    args = [
        "run",
        str(SUPPORT),
        "--provider",
        "openai",
        "--base-url",
        tap.base_url,
        "--model",
        live.model,
        "--tool-choice",
        "lookup_order",
        "--per-slice",
        "1",
        "--results-dir",
        str(tmp_path / "r"),
        "--run-id",
        "wire",
        *extra,
    ]
    code = main(args)
    assert code in (0, 2), code  # a decision, never an infrastructure failure
    return tmp_path / "r" / "wire"


def check_tool_loop(run_dir: Path, bodies: list[dict[str, Any]]) -> None:
    man = read_run(run_dir).manifest
    assert man["validity"] == "VALID" and man["counts"]["ERROR"] == 0, man.get("invalid_reason")
    # no message ever carries "content": null (llama.cpp's server answers one with a 500)
    assert all(m.get("content", "") is not None for b in bodies for m in b["messages"])
    forced = [b for b in bodies if b.get("tool_choice") == NAMED]
    answered = [b for b in bodies if b["messages"][-1]["role"] == "tool"]
    assert forced and answered, "no tool loop reached the server"
    for b in answered:  # the tool's result goes back with auto: the model may now answer in text
        assert b["tool_choice"] == "auto"
        call, result = b["messages"][-2], b["messages"][-1]
        assert call["role"] == "assistant" and result["tool_call_id"] == call["tool_calls"][-1]["id"]
    # the loops ended: one request per turn plus one per tool round, far below max_tool_steps
    df = outcomes_df(run_dir)
    expected = sum(1 + len(t["tool_calls"]) for traj in df["trajectory"] for t in traj)
    assert len(bodies) == expected
    show("tool loop", rows=len(df), requests=len(bodies), forced=len(forced), tool_results_sent=len(answered))


def test_a_named_tool_choice_runs_a_tool_loop_that_ends_and_the_run_is_valid(tmp_path, tap, live):
    run_dir = run_support(tmp_path, tap, live)
    bodies = tap.chat_bodies()
    assert not any(b["stream"] for b in bodies)
    check_tool_loop(run_dir, bodies)


def test_a_streamed_tool_loop(tmp_path, tap, live):
    # short prompts and a bound on the reply: llama.cpp's server streams a forced tool call's arguments
    # on past the end of their JSON until max_tokens, and a stream that would overflow the context is
    # cut without its end marker (which goldenkit rightly records as an infrastructure ERROR)
    tool = {"name": "lookup_order", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
    rows = [
        {
            "id": f"order-{i}",
            "case": {
                "prompt": f"Where is order A-{i}?",
                "tools": [tool],
                "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
                "expect": {"tools": [{"name": "lookup_order"}], "tool_args": "ignore"},
            },
        }
        for i in range(6)
    ]
    ds = write_dataset(tmp_path, rows)
    args = ["run", str(ds), "--provider", "openai", "--base-url", tap.base_url, "--model", live.model, "--stream"]
    args += ["--tool-choice", "lookup_order", "--max-tokens", "48", "--results-dir", str(tmp_path / "r")]
    assert main([*args, "--run-id", "wire"]) in (0, 2)
    bodies = tap.chat_bodies()
    assert all(b["stream"] is True for b in bodies)
    check_tool_loop(tmp_path / "r" / "wire", bodies)


def test_a_simulated_conversation_of_several_turns(tmp_path, tap, live):
    rows = [
        {
            "id": f"sim-{i}",
            "case": {
                "scenario": {"starting_prompt": f"Where is order A-{i}?", "plan": "ask twice", "max_turns": 3},
                "expect": {"must_not": ["zzzz-never"]},
            },
        }
        for i in range(2)
    ]
    ds = read_dataset(write_dataset(tmp_path, rows))
    sim = ChatSimulator("openai", model=live.model, base_url=tap.base_url, seed=7)
    agent = OpenAIProvider(model=live.model, base_url=tap.base_url, max_tokens=16, seed=3)
    s = run_eval(ds, agent, ["contract"], user_simulator=sim, results_dir=tmp_path / "r", progress=False)
    assert s.validity == "VALID" and s.counts["ERROR"] == 0
    df = outcomes_df(s.path)
    users: dict[str, list[str]] = {}
    for _, row in df.iterrows():
        traj = row["trajectory"]
        assert len(traj) == 3 and traj[0]["user"] == f"Where is order A-{row['row_id'][-1]}?"
        users[row["row_id"]] = [t["user"] for t in traj]
    bodies = tap.chat_bodies()
    sim_bodies = [b for b in bodies if b["messages"][0]["content"].startswith("You play the USER")]
    agent_bodies = [b for b in bodies if b not in sim_bodies]
    assert len(sim_bodies) == 4 and len(agent_bodies) == 6  # 2 rows x (3 agent turns, 2 simulated users)
    for b in agent_bodies:  # each agent turn carries the whole conversation so far
        sent = [m["content"] for m in b["messages"] if m["role"] == "user"]
        assert any(sent == u[: len(sent)] for u in users.values()), sent
    assert sorted(len([m for m in b["messages"] if m["role"] == "user"]) for b in agent_bodies) == [1, 1, 2, 2, 3, 3]


def test_calls_through_a_forward_proxy_pass_on_their_first_attempt(tmp_path, tap, live, monkeypatch):
    from test_proxy_tls import TINYPROXY, Tinyproxy

    if TINYPROXY is None:
        pytest.skip("tinyproxy is not installed (apt-get install tinyproxy; .ci/run installs it)")
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    rows = [{"id": f"p{i:02d}", "case": {"prompt": f"say hi {i}", "expect": {"must_not": ["zzzz"]}}} for i in range(30)]
    ds = read_dataset(write_dataset(tmp_path, rows))
    proxy = Tinyproxy(tmp_path)
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url())
        figures = {}
        for stream in (False, True):
            for in_flight in (1, 8):
                before, logged = len(tap.chat_bodies()), proxy.log().count("chat/completions")
                agent = OpenAIProvider(model=live.model, base_url=tap.base_url, stream=stream, max_tokens=32)
                s = run_eval(
                    ds,
                    agent,
                    ["contract"],
                    max_retries=0,
                    max_in_flight=in_flight,
                    progress=False,
                    results_dir=tmp_path / "r",
                    run_id=f"proxy-{stream}-{in_flight}",
                )
                df = outcomes_df(s.path)
                first = int(((df["verdict"] != "ERROR") & (df["attempts"] == 1)).sum())
                figures[f"stream={stream} in_flight={in_flight}"] = f"{first}/30"
                assert first == 30, json.dumps(df[df["verdict"] == "ERROR"]["detail"].tolist()[:3])
                assert len(tap.chat_bodies()) - before == 30  # the server got each request once
                assert proxy.log().count("chat/completions") - logged == 30  # and each went through the proxy
        show("through tinyproxy, --max-retries 0", **figures)
    finally:
        proxy.stop()
