"""Scripted agents and users for the simulated-conversation tests (importable as ``sim_scripts:NAME``)."""

from __future__ import annotations

from typing import Any

from goldenkit.errors import ProviderError
from goldenkit.records import Case, Message, Response, Scenario, ToolCall, TurnOutput

SEEN: list[tuple[str, list[Message]]] = []  # what the scripted user was shown: (plan, transcript)


def agent(case: Case) -> Response:
    """Answers ``reply N to: <user>`` (N counts the user messages so far); on a message with
    ``order`` it first calls lookup_order and reports the recorded status."""
    n = sum(1 for m in case.history if m.role == "user") + 1
    user = case.turns[-1].user
    if "order" in user:
        call = ToolCall("lookup_order", {"order_id": "A-1"}, "c1")
        recorded = next((r.response for r in case.turns[-1].tool_responses if r.name == "lookup_order"), None)
        out = TurnOutput(
            text=f"reply {n} to: {user} (status {recorded['status'] if recorded else '?'})",
            tool_calls=[call],
            tool_responses=[{"name": "lookup_order", "args": {"order_id": "A-1"}, "response": recorded}],
        )
        return Response(turns=[out], tokens_in=3, tokens_out=2, model="scripted")
    return Response(turns=[TurnOutput(text=f"reply {n} to: {user}")], tokens_in=3, tokens_out=2, model="scripted")


def user_three(scenario: Scenario, transcript: list[Message]) -> str | None:
    """Two follow-ups (the second asks about the order), then stop."""
    SEEN.append((scenario.plan, list(transcript)))
    asked = sum(1 for m in transcript if m.role == "user")
    return {1: "and then?", 2: "where is my order?"}.get(asked)


def user_chatty(scenario: Scenario, transcript: list[Message], repeat: int = 0) -> str | None:
    """Never stops; the message names the repeat and the turn."""
    asked = sum(1 for m in transcript if m.role == "user")
    return f"more please (repeat {repeat}, turn {asked + 1})"


def user_says_bye(scenario: Scenario, transcript: list[Message]) -> str | None:
    return "thanks, bye"


def user_broken(scenario: Scenario, transcript: list[Message]) -> str | None:
    raise RuntimeError("the script broke")


FLAKY: dict[str, int] = {"calls": 0}


def user_flaky(scenario: Scenario, transcript: list[Message]) -> str | None:
    """A transient failure on the first call, then stop."""
    FLAKY["calls"] += 1
    if FLAKY["calls"] == 1:
        raise ProviderError("HTTP 503 from the simulator", transient=True, status=503)
    return None


def user_wrong_type(scenario: Scenario, transcript: list[Message]) -> Any:
    return 42
