"""Retrieval (ids against an oracle), the session's final state, and checks written on contract turns."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from _shared import shared_dir, shared_path

from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.formats import import_dataset
from goldenkit.formats._normalize import normalize_case
from goldenkit.graders import ContractGrader, RetrievalGrader, StateGrader, TrajectoryGrader, build_graders
from goldenkit.graders._base import grade_case
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.providers._callable import CallableProvider
from goldenkit.records import Case, Turn

INTEROP = shared_dir("interop")
GOLDEN = INTEROP / "qa-guru__java-ai-golden" / "src__test__java__eval__generation__golden-generation.jsonl"


def _case(**expect: Any) -> Case:
    return Case(id="c1", shape="contract", turns=(Turn(user="q"),), expect=dict(expect))


def _got(*ids: str) -> Response:
    return Response(turns=[TurnOutput(text="a")], retrieved=list(ids))


# ---------------------------------------------------------------------------- retrieval
def test_exact_set_by_default_and_the_reason_keeps_what_was_retrieved() -> None:
    g = RetrievalGrader()
    case = _case(rag=["a", "b"])
    r = g.grade(case, _got("b", "a"))
    assert (r.passed, r.score, r.reason) == (True, 1.0, "retrieved [b, a]")
    r = g.grade(case, _got("a", "c", "a"))
    assert r.passed is False and r.reason == "retrieved [a, c]; missing [b]; unexpected [c]"
    assert g.grade(_case(retrieval=[]), _got()).passed is True
    assert g.grade(_case(), _got("a")).passed is None and not g.applies(_case())


def test_precision_and_recall_at_k_by_hand() -> None:
    g = RetrievalGrader(mode="at_k", k=3, min_precision=0.6, min_recall=1.0)
    case = _case(retrieval=["a", "b"])
    # top 3 = a, x, b: precision 2/3 >= .6, recall 2/2
    r = g.grade(case, _got("a", "x", "b", "y"))
    assert r.passed is True and r.score == 1.0
    assert r.reason == "retrieved [a, x, b, y]; precision@3 0.667 (min 0.6), recall@3 1 (min 1); unexpected [x]"
    # top 3 = x, y, a: precision 1/3, recall 1/2
    r = g.grade(case, _got("x", "y", "a", "b"))
    assert r.passed is False and r.score == 0.5 and "missing [b]" in r.reason
    # a case sets its own k and thresholds: top 1 = a -> precision 1, recall 1/2 >= .5
    own = _case(retrieval={"ids": ["a", "b"], "k": 1, "min_recall": 0.5})
    assert RetrievalGrader().grade(own, _got("a", "x")).passed is True
    with pytest.raises(ConfigError, match="k must be a positive integer"):
        RetrievalGrader(k=0)
    with pytest.raises(ConfigError, match="min_recall must be a finite number in"):
        RetrievalGrader(min_recall=2)


def test_nothing_reported_is_an_error_not_a_fail() -> None:
    r = RetrievalGrader().grade(_case(rag=["a"]), Response.from_text("a"))
    assert r.passed is None and r.error and "reports no retrieved ids" in r.reason


def test_ids_from_the_named_tools_responses() -> None:
    turn = TurnOutput(
        text="a",
        tool_responses=[
            {"name": "search", "args": {"q": "x"}, "response": {"results": [{"id": "d1", "t": "..."}, {"id": "d7"}]}},
            {"name": "other", "args": {}, "response": {"id": "zzz"}},
            {"name": "lookup", "args": {}, "response": ["d9"]},
        ],
    )
    g = RetrievalGrader(tools=["search", "lookup"])
    r = g.grade(_case(rag=["d1", "d7", "d9"]), Response(turns=[turn]))
    assert r.passed is True and r.reason == "retrieved [d1, d7, d9]"
    # the named tools were never called: the agent retrieved nothing (a FAIL, not an error)
    r = g.grade(_case(rag=["d1"]), Response.from_text("a"))
    assert r.passed is False and r.reason == "retrieved []; missing [d1]"


def test_golden_rag_oracle_through_a_run(tmp_path: Path) -> None:
    shared_path("interop", "qa-guru__java-ai-golden", GOLDEN.name)
    from goldenkit.results import outcomes_df
    from goldenkit.runner import run_eval

    ds = read_dataset(import_dataset(GOLDEN, tmp_path / "ds", "golden"))
    oracle = {rid: ds.case(rid).expect.get("rag") for rid in ds.rows["id"]}

    def agent(case: Case) -> dict[str, Any]:
        rag = list(case.expect.get("rag") or [])
        return {"text": "answer", "retrieved": rag[:-1] if case.id == "login-valid-e2e" else rag}

    graders = build_graders({"graders": {"use": ["retrieval"]}})
    s = run_eval(
        ds,
        CallableProvider(agent),
        graders,
        run_id="r",
        results_dir=tmp_path / "res",
        progress=False,
        include_red=True,
        max_ungradable=0.5,  # refusal rows: nothing for retrieval to check (SKIPPED)
    )
    df = outcomes_df(s.path).set_index("row_id")
    for rid, rag in oracle.items():
        got = df.loc[rid, "graders"]["retrieval"]
        if rag is None:  # refusal rows have no retrieval oracle
            assert got["passed"] is None and df.loc[rid, "verdict"] == "SKIPPED"
        elif rid == "login-valid-e2e":
            assert got["passed"] is False and got["reason"] == "retrieved [po-fluent]; missing [testdata-user]"
        else:
            assert got["passed"] is True and got["reason"] == f"retrieved [{', '.join(rag)}]"


def test_callable_dict_is_checked() -> None:
    from goldenkit.errors import ProviderError

    def run(out: Any) -> Response:
        return asyncio.run(CallableProvider(lambda case: out, threads=0).complete(_case()))

    r = run({"text": "hi", "retrieved": ["a", 2], "final_state": {"k": 1}})
    assert (r.text, r.retrieved, r.raw) == ("hi", ["a", "2"], {"final_state": {"k": 1}})
    with pytest.raises(ProviderError, match="'retrieved' must be a list of ids"):
        run({"text": "hi", "retrieved": "a"})


# ---------------------------------------------------------------------------- final state
def test_final_state_subset_and_not_applicable() -> None:
    case = normalize_case(
        {
            "eval_id": "e",
            "conversation": [{"user_content": {"parts": [{"text": "buy"}]}}],
            "final_session_state": {"cart": {"items": 2}, "user": "ann"},
        }
    )
    assert case.final_state == {"cart": {"items": 2}, "user": "ann"}
    g = StateGrader()
    ok = Response(
        turns=[TurnOutput(text="")], raw={"final_state": {"cart": {"items": 2, "sum": 5}, "user": "ann", "x": 1}}
    )
    assert g.grade(case, ok).passed is True
    bad = Response(turns=[TurnOutput(text="")], raw={"final_state": {"cart": {"items": 3}}})
    r = g.grade(case, bad)
    assert r.passed is False
    assert r.reason == 'final state (2 expected keys): cart.items: expected 2, got 3; user: missing (expected "ann")'
    r = g.grade(case, Response.from_text(""))
    assert r.passed is None and not r.error and r.reason.startswith("not applicable")
    # ADK's default {} expects nothing
    assert (
        normalize_case(
            {"eval_id": "e", "conversation": [{"user_content": {"parts": [{"text": "x"}]}}], "final_session_state": {}}
        ).final_state
        is None
    )


def test_adk_provider_reports_state_and_tool_responses() -> None:
    pytest.importorskip("google.adk")
    from adk_scripted.scripted_llm import ScriptedLlm
    from google.adk.agents import LlmAgent
    from google.adk.tools.tool_context import ToolContext

    from goldenkit.providers._adk import AdkProvider

    def search_docs(query: str) -> dict[str, Any]:
        """Search the docs."""
        return {"results": [{"id": "faq-3", "text": "..."}, {"id": "faq-9", "text": "..."}]}

    def add_to_cart(item: str, tool_context: ToolContext) -> dict[str, Any]:
        """Put an item in the cart."""
        cart = list(tool_context.state.get("cart", []))
        tool_context.state["cart"] = [*cart, item]
        return {"ok": True}

    script = {
        "find": [{"calls": [("search_docs", {"query": "refund"})]}, {"text": "found"}],
        "buy": [{"calls": [("add_to_cart", {"item": "tea"})]}, {"text": "added"}],
    }
    agent = LlmAgent(
        name="shop", model=ScriptedLlm(model="s", script=script), instruction="x", tools=[search_docs, add_to_cart]
    )
    raw = {
        "eval_id": "shop-1",
        "conversation": [
            {"user_content": {"parts": [{"text": "find"}]}},
            {"user_content": {"parts": [{"text": "buy"}]}},
        ],
        "session_input": {"app_name": "shop", "user_id": "u", "state": {"tier": "gold"}},
        "final_session_state": {"cart": ["tea"], "tier": "gold"},
    }
    case = normalize_case(raw)
    response = asyncio.run(AdkProvider(agent).complete(case))
    assert response.raw["final_state"]["cart"] == ["tea"]
    graders = [StateGrader(), RetrievalGrader(tools=["search_docs"])]
    with_rag = dataclasses.replace(case, expect={"rag": ["faq-3", "faq-9"]})
    results = grade_case(graders, with_rag, response)
    assert results["state"].passed is True
    assert results["retrieval"].passed is True and results["retrieval"].reason == "retrieved [faq-3, faq-9]"
    # the "expected" history mode runs fresh sessions: no final state, not applicable
    fresh = asyncio.run(AdkProvider(agent, history="expected").complete(case))
    assert StateGrader().grade(case, fresh).passed is None


# ---------------------------------------------------------------------------- checks on contract turns
def test_checks_on_turn_objects_are_graded_turn_by_turn() -> None:
    raw = {
        "id": "t1",
        "turns": [
            {"user": "hi", "must_contain": ["Hello"], "tools": [{"name": "greet", "args": {}}]},
            {"user": "bye", "expect": {"must_not": ["hate"]}, "regex": ["(?i)bye"]},
            "thanks",
        ],
        "expect": {"turns": [{"must_not": ["no"]}]},
    }
    case = normalize_case(raw)
    assert case.expect["turns"][0] == {
        "must_not": ["no"],
        "must_contain": ["Hello"],
        "tools": [{"name": "greet", "args": {}}],
    }
    assert case.expect["turns"][1] == {"must_not": ["hate"], "regex": ["(?i)bye"]}
    good = Response(
        turns=[
            TurnOutput(text="Hello!", tool_calls=[_call("greet")]),
            TurnOutput(text="Bye now"),
            TurnOutput(text="ok"),
        ]
    )
    res = grade_case([ContractGrader(), TrajectoryGrader()], case, good)
    assert res["contract"].passed is True and res["trajectory"].passed is True
    bad = Response(turns=[TurnOutput(text="hi"), TurnOutput(text="I hate you"), TurnOutput(text="ok")])
    res = grade_case([ContractGrader(), TrajectoryGrader()], case, bad)
    assert res["contract"].passed is False
    assert "turn 1: must_contain: missing" in res["contract"].reason and "turn 2: " in res["contract"].reason
    assert res["trajectory"].passed is False and res["trajectory"].reason.startswith(
        "turn 1 (IN_ORDER): missing [greet()]"
    )
    with pytest.raises(DatasetError, match=r"turns\[0\].must_not contradicts expect.turns\[0\].must_not"):
        normalize_case(
            {**raw, "turns": [{"user": "hi", "must_not": ["x"]}], "expect": {"turns": [{"must_not": ["y"]}]}}
        )
    with pytest.raises(DatasetError, match=r"turns\[0\]: expect.regex pattern"):
        normalize_case({"id": "t", "turns": [{"user": "hi", "regex": ["("]}]})


def _call(name: str) -> Any:
    from goldenkit.records import ToolCall

    return ToolCall(name, {})


def test_an_unknown_dataset_json_is_untouched(tmp_path: Path) -> None:
    # rows without turn checks keep their expect exactly (no empty per-turn entries appear)
    case = normalize_case({"id": "p", "turns": ["a", {"user": "b", "reference": "B"}]})
    assert "turns" not in case.expect
    assert json.dumps(case.expect) == "{}"
