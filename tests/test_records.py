"""The shared records: one definition, re-exported where a layer offers it; the graders-cell decoder."""

from __future__ import annotations

import json
import math

import pytest

from goldenkit import metrics, records
from goldenkit.graders._contract import contract_expectations
from goldenkit.providers import _base as base


def test_the_records_are_one_definition_wherever_they_are_offered() -> None:
    assert base.Response is records.Response
    assert base.TurnOutput is records.TurnOutput
    assert metrics.grader_results is records.grader_results


def test_a_response_round_trips_its_turns() -> None:
    turn = records.TurnOutput("done", tool_calls=[records.ToolCall("lookup", {"q": "x"})])
    resp = records.Response(turns=[records.TurnOutput("first"), turn], tokens_in=3)
    assert resp.text == "done"
    assert resp.tool_calls == [[], [records.ToolCall("lookup", {"q": "x"})]]
    assert [records.TurnOutput.from_dict(d) for d in resp.trajectory()] == resp.turns


CELL = {"contract": {"passed": False, "reason": "missing 'refund'"}, "judge": None}
WANT = {"contract": {"passed": False, "reason": "missing 'refund'"}}


@pytest.mark.parametrize(
    "cell",
    [CELL, json.dumps(CELL), list(CELL.items())],  # a dict, JSON text, a Parquet map (list of pairs)
    ids=["dict", "json", "pairs"],
)
def test_the_graders_cell_decodes_every_stored_form(cell: object) -> None:
    assert records.grader_results(cell) == WANT


@pytest.mark.parametrize("cell", [None, math.nan, "", "  "])
def test_an_empty_graders_cell_is_no_result(cell: object) -> None:
    assert records.grader_results(cell) == {}


@pytest.mark.parametrize(
    "expect",
    [
        {},
        {"refusal": True},
        {"refuse": True},
        {"refusal": False},
        {"refuse": "yes"},
        {"refusal": True, "refuse": False},
        {"refuse": False, "refusal": True},
        {"must_contain": ["x"]},
    ],
)
def test_the_refusal_flag_agrees_with_the_contract_grader(expect: dict[str, object]) -> None:
    case = records.Case(id="r", shape="contract", turns=(records.Turn("hi"),), expect=dict(expect))
    assert records.expects_refusal(case.expect) == (contract_expectations(case).get("refusal") is True)
