"""The chat conversation loop: history per turn (actual or expected) and tool calls
answered from recorded tool responses, against an in-process scripted backend."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from goldenkit.errors import ConfigError
from goldenkit.providers._conversation import (
    LOOP_AUTHOR,
    RecordedTools,
    read_tool_responses,
    run_conversation,
)
from goldenkit.records import Case, Message, ToolCall, ToolResponse, Turn

TOOLS = ({"name": "lookup_order", "description": "Find an order", "parameters": {"type": "object"}},)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens_in: int | None = 10
    tokens_out: int | None = 2
    model: str | None = "fake-model"
    raw: Any = None


class Backend:
    """Returns scripted replies in order and records every request."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[tuple[list[Message], tuple[dict[str, Any], ...]]] = []

    async def send(self, messages, tools):
        self.requests.append((list(messages), tuple(tools)))
        return self.replies.pop(0)


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name, args)


def converse(case: Case, replies: Sequence[Reply], **kw: Any):
    backend = Backend(replies)
    return asyncio.run(run_conversation(case, backend, **kw)), backend


def roles(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


def test_each_turn_is_sent_with_the_actual_conversation_so_far():
    case = Case(
        id="m",
        shape="contract",
        system="be brief",
        history=(Message("user", "earlier q"), Message("assistant", "earlier a")),
        turns=(Turn("first", expected_response="GOLD 1"), Turn("second")),
    )
    r, b = converse(case, [Reply("answer 1"), Reply("answer 2")])
    assert [t.text for t in r.turns] == ["answer 1", "answer 2"]
    assert roles(b.requests[0][0]) == [
        ("system", "be brief"),
        ("user", "earlier q"),
        ("assistant", "earlier a"),
        ("user", "first"),
    ]
    assert roles(b.requests[1][0])[-3:] == [("user", "first"), ("assistant", "answer 1"), ("user", "second")]
    assert r.tokens_in == 20 and r.tokens_out == 4 and r.model == "fake-model"
    # the provider's system prompt overrides the case's
    _, b2 = converse(case, [Reply("x"), Reply("y")], system="override")
    assert b2.requests[0][0][0] == Message("system", "override")


def test_expected_history_replaces_earlier_exchanges_with_the_dataset_answers():
    case = Case(
        id="m",
        shape="adk",
        tools=TOOLS,
        turns=(
            Turn(
                "where is A-1?",
                expected_response="GOLD: shipped",
                tool_responses=(ToolResponse("lookup_order", {"id": "A-1"}, {"status": "shipped"}),),
            ),
            Turn("and then?"),  # no expected answer: the actual one stands in
            Turn("thanks"),
        ),
    )
    replies = [Reply("", [call("lookup_order", id="A-1")]), Reply("it shipped"), Reply("then it arrives"), Reply("bye")]
    r, b = converse(case, replies, history="expected")
    assert [t.text for t in r.turns] == ["it shipped", "then it arrives", "bye"]
    assert roles(b.requests[2][0]) == [("user", "where is A-1?"), ("assistant", "GOLD: shipped"), ("user", "and then?")]
    assert roles(b.requests[3][0]) == [
        ("user", "where is A-1?"),
        ("assistant", "GOLD: shipped"),
        ("user", "and then?"),
        ("assistant", "then it arrives"),
        ("user", "thanks"),
    ]
    # with actual history the tool exchange of turn 1 stays in the context
    r2, b2 = converse(case, replies)
    assert [m.role for m in b2.requests[2][0]] == ["user", "assistant", "tool", "assistant", "user"]
    with pytest.raises(ConfigError, match="history must be one of"):
        converse(case, replies, history="gold")


def test_tool_calls_are_answered_from_recorded_responses_until_the_model_answers_in_text():
    case = Case(
        id="t",
        shape="contract",
        tools=TOOLS,
        turns=(
            Turn(
                "where is A-1?",
                tool_responses=(
                    ToolResponse("lookup_order", {"order_id": "A-1"}, {"status": "shipped", "eta": "2 days"}),
                ),
            ),
        ),
    )
    replies = [
        Reply("let me check", [ToolCall("lookup_order", {"order_id": "A-1"}, "c1")], tokens_in=5, tokens_out=1),
        Reply("A-1 shipped, arriving in 2 days", tokens_in=9, tokens_out=8),
    ]
    r, b = converse(case, replies)
    turn = r.turns[0]
    assert turn.text == "A-1 shipped, arriving in 2 days"
    assert [(c.name, c.args) for c in turn.tool_calls] == [("lookup_order", {"order_id": "A-1"})]
    assert turn.tool_responses == [
        {"name": "lookup_order", "args": {"order_id": "A-1"}, "response": {"status": "shipped", "eta": "2 days"}}
    ]
    assert turn.intermediate == [("assistant", "let me check")]
    assert r.tokens_in == 14 and r.tokens_out == 9
    # tools go with every request; the second request carries the call and its answer
    assert all(tools == TOOLS for _, tools in b.requests)
    second = b.requests[1][0]
    assert second[-2].role == "assistant" and second[-2].tool_calls[0].id == "c1"
    assert second[-1].role == "tool" and second[-1].tool_call_id == "c1" and second[-1].name == "lookup_order"
    assert json.loads(second[-1].content) == {"eta": "2 days", "status": "shipped"}
    assert r.trajectory()[0]["tool_calls"] == [{"name": "lookup_order", "args": {"order_id": "A-1"}}]


def test_a_call_without_a_recorded_response_gets_a_visible_tool_error():
    case = Case(id="u", shape="contract", tools=TOOLS, turns=(Turn("where is B-2?"),))
    r, b = converse(case, [Reply("", [call("lookup_order", order_id="B-2")]), Reply("sorry, lookup failed")])
    entry = r.turns[0].tool_responses[0]
    assert entry["error"] == 'no recorded response for tool lookup_order with args {"order_id": "B-2"}'
    assert entry["response"] == {"error": entry["error"]}
    sent = b.requests[1][0][-1]
    assert sent.role == "tool" and json.loads(sent.content) == {"error": entry["error"]}
    assert r.turns[0].text == "sorry, lookup failed"
    # calls without ids get stable synthetic ones, used by the tool message too
    assert r.turns[0].tool_calls[0].id == "call_0_0_0" and sent.tool_call_id == "call_0_0_0"


def test_the_step_limit_ends_a_turn_that_keeps_calling_tools():
    case = Case(id="s", shape="contract", tools=TOOLS, turns=(Turn("loop"), Turn("next")), expect={}, raw={})
    looping = [Reply("", [call("lookup_order", order_id=str(k))]) for k in range(3)]
    r, b = converse(case, [*looping, Reply("fine")], max_tool_steps=3)
    first = r.turns[0]
    assert first.text == ""
    assert len(first.tool_calls) == 3 and len(first.tool_responses) == 3
    assert first.intermediate == [(LOOP_AUTHOR, "stopped after 3 tool steps without a text answer")]
    assert r.turns[1].text == "fine"
    assert len(b.requests) == 4
    with pytest.raises(ConfigError, match="max_tool_steps"):
        converse(case, looping, max_tool_steps=0)


def test_recorded_tools_lookup_order_repeats_and_wildcards():
    case = Case(
        id="r",
        shape="adk",
        turns=(
            Turn(
                "a",
                tool_responses=(
                    ToolResponse("status", {"id": 1}, "pending"),
                    ToolResponse("status", {"id": 1}, "done"),
                ),
            ),
            Turn(
                "b",
                tool_responses=(ToolResponse("status", {"id": 1}, "turn-b"), ToolResponse("weather", None, "sunny")),
            ),
        ),
    )
    tools = RecordedTools(case, extra=[ToolResponse("clock", {}, "12:00")])
    assert tools.answer(call("status", id=1), 0).response == "pending"
    assert tools.answer(call("status", id=1.0), 0).response == "done"  # 1 == 1.0, as ADK's dict equality
    assert tools.answer(call("status", id=1), 0).response == "done"  # then the last record again
    assert tools.answer(call("status", id=1), 1).response == "turn-b"  # the turn's own record first
    assert tools.answer(call("weather", city="Oslo"), 0).response == "sunny"  # any turn, any args
    assert tools.answer(call("clock"), 1).response == "12:00"  # the shared extra records
    missing = tools.answer(call("status", id=2), 0)
    assert missing.error is not None and "status" in missing.error


def test_tool_responses_file(tmp_path):
    lines = tmp_path / "tools.jsonl"
    lines.write_text(
        '{"name": "a", "args": {"x": 1}, "response": {"ok": true}}\n\n{"name": "b", "response": 3}\n', encoding="utf-8"
    )
    recs = read_tool_responses(lines)
    assert recs == [ToolResponse("a", {"x": 1}, {"ok": True}), ToolResponse("b", None, 3)]
    lst = tmp_path / "tools.json"
    lst.write_text('[{"name": "a", "args": {}, "response": "r"}]', encoding="utf-8")
    assert read_tool_responses(lst) == [ToolResponse("a", {}, "r")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "a", "response": 1}\n{"args": {}}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: a tool response needs"):
        read_tool_responses(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"name": "a", "response": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken.jsonl:2: invalid JSON"):
        read_tool_responses(broken)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"name": "a", "response": 1}\n{"name": "caf\xe9", "response": 2}\n')
    with pytest.raises(ConfigError, match=r"latin.jsonl:2: tool responses are not UTF-8 text"):
        read_tool_responses(latin)
