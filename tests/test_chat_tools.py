"""Multi-turn, tool-using cases over real HTTP (OpenAI-compatible and Ollama protocols).

A local fake model server (tests/fakeserver.py) answers with tool calls, then
text. goldenkit answers each call from the case's recorded tool responses (or
with a tool error when none was recorded), sends every turn with the
conversation so far, keeps the whole trajectory, and the trajectory grader
grades it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.formats import normalize_case
from goldenkit.graders._trajectory import TrajectoryGrader
from goldenkit.providers import get_provider

LOOKUP = {
    "name": "lookup_order",
    "description": "Look up an order",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
}
MISSING = 'no recorded response for tool lookup_order with args {"order_id": "B-2"}'

CONTRACT = {
    "system": "You are a support agent.",
    "turns": ["Where is order A-1?", "And order B-2?"],
    "tools": [LOOKUP],
    "tool_responses": [{"name": "lookup_order", "args": {"order_id": "A-1"}, "response": {"status": "shipped"}}],
    "expect": {
        "tools": [
            {"name": "lookup_order", "args": {"order_id": "A-1"}},
            {"name": "lookup_order", "args": {"order_id": "B-2"}},
        ],
        "tool_match": "IN_ORDER",
    },
}


def script(srv: FakeModelServer) -> None:
    srv.script(
        Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "A-1"}}], text="Checking.", tokens_in=11),
        Reply.text("Order A-1 has shipped.", tokens_in=13),
        Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "B-2"}}], tokens_in=17),
        Reply.text("I could not find order B-2.", tokens_in=19),
    )


def provider_for(protocol: str, srv: FakeModelServer, **kw: Any):
    return get_provider(protocol, model="tool-model", base_url=srv.url, **kw)


def complete(provider, case):
    async def go():
        try:
            return await provider.complete(case)
        finally:
            await provider.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("protocol", ["openai", "ollama"])
def test_multi_turn_tool_loop_over_http_and_graded_trajectory(protocol):
    case = normalize_case(CONTRACT, "contract", row_id="tools-1")
    with FakeModelServer() as srv:
        script(srv)
        r = complete(provider_for(protocol, srv), case)
        bodies = [req.json for req in srv.requests]

    assert len(bodies) == 4
    for body in bodies:  # the declared tools go with every request, in the function form
        assert body["tools"] == [{"type": "function", "function": LOOKUP}]
    # request 2 carries turn 1's call and the recorded answer to it
    m2 = bodies[1]["messages"]
    assert [m["role"] for m in m2] == ["system", "user", "assistant", "tool"]
    assert m2[2]["tool_calls"][0]["function"]["name"] == "lookup_order"
    assert json.loads(m2[3]["content"]) == {"status": "shipped"}
    if protocol == "openai":
        assert m2[3]["tool_call_id"] == m2[2]["tool_calls"][0]["id"] == "call_0"
        assert json.loads(m2[2]["tool_calls"][0]["function"]["arguments"]) == {"order_id": "A-1"}
    else:
        assert m2[3]["tool_name"] == "lookup_order"
        assert m2[2]["tool_calls"][0]["function"]["arguments"] == {"order_id": "A-1"}
    # turn 2 is sent with the whole of turn 1 (actual history)
    m3 = bodies[2]["messages"]
    assert [(m["role"], m["content"]) for m in m3][-3:] == [
        ("tool", '{"status": "shipped"}'),
        ("assistant", "Order A-1 has shipped."),
        ("user", "And order B-2?"),
    ]
    # B-2 was never recorded: the model sees a tool error
    assert json.loads(bodies[3]["messages"][-1]["content"]) == {"error": MISSING}

    first, second = r.turns
    assert first.text == "Order A-1 has shipped." and first.intermediate == [("assistant", "Checking.")]
    assert first.tool_responses == [
        {"name": "lookup_order", "args": {"order_id": "A-1"}, "response": {"status": "shipped"}}
    ]
    assert second.text == "I could not find order B-2."
    assert second.tool_responses == [
        {"name": "lookup_order", "args": {"order_id": "B-2"}, "response": {"error": MISSING}, "error": MISSING}
    ]
    assert r.tokens_in == 11 + 13 + 17 + 19

    result = TrajectoryGrader().grade(case, r)
    assert result.passed is True and result.score == 1.0
    # the same trajectory against an expectation it does not meet
    stricter = normalize_case(
        {**CONTRACT, "expect": {"tools": [*CONTRACT["expect"]["tools"], {"name": "refund", "args": {}}]}},
        "contract",
        row_id="tools-2",
    )
    failed = TrajectoryGrader().grade(stricter, r)
    assert failed.passed is False and failed.score == 0.0
    assert "refund" in failed.reason


ADK_CASE = {
    "eval_id": "adk-tools",
    "conversation": [
        {
            "user_content": {"role": "user", "parts": [{"text": "Turn off device_2 in the Bedroom."}]},
            "final_response": {"role": "model", "parts": [{"text": "I have set the device 2 status to off."}]},
            "intermediate_data": {
                "tool_uses": [
                    {
                        "name": "set_device_info",
                        "args": {"location": "Bedroom", "device_id": "device_2", "status": "OFF"},
                    }
                ],
                "tool_responses": [{"name": "set_device_info", "response": {"result": "ok"}}],
            },
        },
        {
            "user_content": {"role": "user", "parts": [{"text": "What's the status of device_2?"}]},
            "final_response": {"role": "model", "parts": [{"text": "Status of device_2 is off."}]},
            "intermediate_data": {"tool_uses": [{"name": "get_device_info", "args": {"device_id": "device_2"}}]},
        },
    ],
}


@pytest.mark.parametrize("protocol", ["openai", "ollama"])
def test_adk_case_tool_responses_answer_calls_and_expected_history(protocol):
    case = normalize_case(ADK_CASE, "adk", row_id="adk-tools")
    set_call = {"name": "set_device_info", "args": {"location": "Bedroom", "device_id": "device_2", "status": "OFF"}}
    with FakeModelServer() as srv:
        srv.script(
            Reply.tool_calls([set_call]),
            Reply.text("Done, device 2 is off."),
            # turn 2: a call with other args than expected (EXACT fails on this turn)
            Reply.tool_calls([{"name": "get_device_info", "args": {"device_id": "device_2", "location": "Bedroom"}}]),
            Reply.text("It is off."),
        )
        r = complete(provider_for(protocol, srv, history="expected"), case)
        bodies = [req.json for req in srv.requests]
    # the ADK-recorded response (a record without args) answers the call
    assert json.loads(bodies[1]["messages"][-1]["content"]) == {"result": "ok"}
    # history="expected": turn 2 is sent after the dataset's answer to turn 1, not the model's
    assert [(m["role"], m["content"]) for m in bodies[2]["messages"]] == [
        ("user", "Turn off device_2 in the Bedroom."),
        ("assistant", "I have set the device 2 status to off."),
        ("user", "What's the status of device_2?"),
    ]
    assert r.turns[1].tool_responses[0]["error"].startswith("no recorded response for tool get_device_info")
    result = TrajectoryGrader().grade(case, r)
    assert result.score == 0.5 and result.passed is False
    assert "turn 2" in result.reason


def test_conversation_settings_are_recorded(tmp_path):
    shared = tmp_path / "tools.jsonl"
    shared.write_text('{"name": "clock", "response": "12:00"}\n', encoding="utf-8")
    with FakeModelServer() as srv:
        p = provider_for("openai", srv, history="expected", max_tool_steps=3, tool_responses=str(shared))
        s = p.settings()
        asyncio.run(p.aclose())
    assert s["history"] == "expected" and s["max_tool_steps"] == 3
    assert s["tool_responses"]["path"] == str(shared) and len(s["tool_responses"]["sha256"]) == 64
    with FakeModelServer() as srv:
        q = provider_for("ollama", srv)
        assert q.settings()["history"] == "actual" and q.settings()["max_tool_steps"] == 8
        asyncio.run(q.aclose())


VERTEX_CASE = {
    "eval_case_id": "vx-1",
    "agent_data": {
        "agents": {
            "support": {
                "agent_id": "support",
                "instruction": "You answer order questions.",
                "tools": [{"function_declarations": [LOOKUP]}],
            }
        },
        "turns": [
            {
                "turn_index": 0,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "Status of A-1?"}]}},
                    {
                        "author": "support",
                        "content": {
                            "role": "model",
                            "parts": [
                                {"function_call": {"id": "f1", "name": "lookup_order", "args": {"order_id": "A-1"}}}
                            ],
                        },
                    },
                    {
                        "author": "support",
                        "content": {
                            "role": "user",
                            "parts": [
                                {
                                    "function_response": {
                                        "id": "f1",
                                        "name": "lookup_order",
                                        "response": {"status": "delayed"},
                                    }
                                }
                            ],
                        },
                    },
                    {"author": "support", "content": {"role": "model", "parts": [{"text": "A-1 is delayed."}]}},
                ],
            },
            {
                "turn_index": 1,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "Thanks!"}]}},
                    {"author": "support", "content": {"role": "model", "parts": [{"text": "You're welcome."}]}},
                ],
            },
        ],
    },
}


def test_vertex_agent_data_tools_and_recorded_events_drive_the_loop():
    case = normalize_case(VERTEX_CASE, "vertex", row_id="vx-1")
    with FakeModelServer() as srv:
        srv.script(
            Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "A-1"}}]),
            Reply.text("A-1 is delayed."),
            Reply.text("You're welcome."),
        )
        r = complete(provider_for("openai", srv), case)
        bodies = [req.json for req in srv.requests]
    assert bodies[0]["messages"][0] == {"role": "system", "content": "You answer order questions."}
    assert bodies[0]["tools"] == [{"type": "function", "function": LOOKUP}]
    assert json.loads(bodies[1]["messages"][-1]["content"]) == {"status": "delayed"}
    assert r.turns[0].tool_responses[0]["response"] == {"status": "delayed"}
    assert [t.text for t in r.turns] == ["A-1 is delayed.", "You're welcome."]
    assert TrajectoryGrader().grade(case, r).score == 1.0


def test_goldenkit_run_grades_a_multi_turn_tool_case_served_over_http(tmp_path, monkeypatch):
    """`goldenkit run --provider openai` against the fake server: the whole trajectory lands in the outcome."""
    from goldenkit.cli import main
    from goldenkit.results import read_run

    monkeypatch.chdir(tmp_path)
    write_dataset(tmp_path, [row("tools-1", CONTRACT, slice="orders")], name="tools", version="1")

    def respond(req):
        # answer by conversation state so that the concurrent repeats each get a full conversation
        msgs = req.json["messages"]
        last = msgs[-1]
        if last["role"] == "tool":
            return Reply.text("Order A-1 has shipped." if "shipped" in last["content"] else "I could not find B-2.")
        order = "A-1" if last["content"].endswith("A-1?") else "B-2"
        return Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": order}}])

    with FakeModelServer(responder=respond) as srv:
        code = main(
            [
                "run",
                "ds",
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "tool-model",
                "--repeats",
                "2",
                "--graders",
                "trajectory",
                "--run-id",
                "http-tools",
                "--max-tool-steps",
                "4",
                "--quiet",
            ]
        )
    assert code == 0
    run = read_run("http-tools")
    assert run.manifest["provider"]["settings"]["max_tool_steps"] == 4
    assert run.manifest["provider"]["settings"]["history"] == "actual"
    out = run.outcomes()
    assert len(out) == 2
    for rec in out.to_dict("records"):
        assert rec["verdict"] == "PASS" and rec["graders"]["trajectory"]["score"] == 1.0
        first, second = rec["trajectory"]
        assert first["tool_responses"][0]["response"] == {"status": "shipped"}
        assert second["tool_responses"][0]["error"] == MISSING
        assert rec["response"] == "I could not find B-2."
