"""Tool trajectories: equal to ADK's own TrajectoryEvaluator, plus goldenkit's args modes and ordering rules."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from _shared import shared_dir, shared_path
from hypothesis import given, settings, strategies as st

from goldenkit.errors import InputError
from goldenkit.graders import TrajectoryGrader, trajectory_score
from goldenkit.graders._trajectory import normalize_match, turn_matches
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import Case, ToolCall, Turn

INTEROP = shared_dir("interop")
ADK_DIR = INTEROP / "google__adk-python"

adk_eval = pytest.importorskip("google.adk.evaluation.trajectory_evaluator")
from google.adk.evaluation.eval_case import IntermediateData, Invocation  # noqa: E402
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion  # noqa: E402
from google.genai import types  # noqa: E402


def _inv(calls: list[dict[str, Any]]) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="q")]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=c["name"], args=c.get("args") or {}) for c in calls]
        ),
    )


def adk_score(expected: list[list[dict]], actual: list[list[dict]], match: str, ignore_args: bool = False) -> float:
    """ADK's own score for the same turns (same number of turns on both sides, as newer ADK requires)."""
    metric = EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=ToolTrajectoryCriterion(threshold=1.0, match_type=match, ignore_args=ignore_args),
    )
    ev = adk_eval.TrajectoryEvaluator(eval_metric=metric)
    result = ev.evaluate_invocations([_inv(t) for t in actual], [_inv(t) for t in expected])
    return result.overall_score


def c(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


# ---------------------------------------------------------------------------- hand-made pairs
A, B, C = c("a", x=1), c("b"), c("c", y="z")
PAIRS = [
    ([[A, B]], [[A, B]]),
    ([[A, B]], [[B, A]]),
    ([[A, B]], [[A, C, B]]),
    ([[A, B]], [[A]]),
    ([[]], [[A]]),
    ([[]], [[]]),
    ([[A]], [[]]),
    ([[A, A]], [[A]]),
    ([[A, A]], [[A, C, A]]),
    ([[A]], [[c("a", x=2)]]),
    ([[A]], [[c("a", x=1, extra=True)]]),
    ([[A], [B]], [[A], [C]]),
    ([[A], [B], [C]], [[A], [B], [C, A]]),
    ([[B, A]], [[A, B, A]]),
]


@pytest.mark.parametrize("match", ["EXACT", "IN_ORDER", "ANY_ORDER"])
@pytest.mark.parametrize("ignore", [False, True])
@pytest.mark.parametrize("expected, actual", PAIRS)
def test_hand_made_pairs_equal_adk(expected, actual, match, ignore) -> None:
    ours = trajectory_score(expected, actual, match=match, args="ignore" if ignore else "exact")
    assert ours == adk_score(expected, actual, match, ignore)


def test_hand_made_values() -> None:
    # worked by hand: turn 1 matches, turn 2 has C instead of B -> (1 + 0) / 2
    assert trajectory_score([[A], [B]], [[A], [C]]) == 0.5
    assert trajectory_score([[A, B]], [[A, C, B]], match="EXACT") == 0.0
    assert trajectory_score([[A, B]], [[A, C, B]], match="in-order") == 1.0
    assert trajectory_score([[B, A]], [[A, B]], match="any order") == 1.0
    assert trajectory_score([[B, A]], [[A, B]], match="IN_ORDER") == 0.0


calls_st = st.lists(
    st.builds(
        lambda n, v: {"name": n, "args": {} if v is None else {"k": v}},
        st.sampled_from("abc"),
        st.one_of(st.none(), st.integers(0, 2)),
    ),
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(st.tuples(calls_st, calls_st), min_size=1, max_size=3),
    match=st.sampled_from(["EXACT", "IN_ORDER", "ANY_ORDER"]),
    ignore=st.booleans(),
)
def test_random_trajectories_equal_adk(pairs, match, ignore) -> None:
    expected = [e for e, _ in pairs]
    actual = [a for _, a in pairs]
    assert trajectory_score(expected, actual, match, "ignore" if ignore else "exact") == adk_score(
        expected, actual, match, ignore
    )


# ---------------------------------------------------------------------------- ADK interop files
def _adk_files_turns() -> list[tuple[str, list[list[dict]]]]:
    if not ADK_DIR.is_dir():
        return []
    out = []
    for path in sorted(ADK_DIR.glob("*.test.json")) + sorted(ADK_DIR.glob("*.evalset.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, list):  # legacy format A: the whole file is one case
            turns = [
                [{"name": t["tool_name"], "args": t["tool_input"]} for t in row.get("expected_tool_use", [])]
                for row in data
            ]
            out.append((path.name, turns))
            continue
        for case in data.get("eval_cases", []):
            conv = case.get("conversation") or []
            if conv:
                turns = [
                    [
                        {"name": u["name"], "args": u.get("args") or {}}
                        for u in ((inv.get("intermediate_data") or {}).get("tool_uses") or [])
                    ]
                    for inv in conv
                ]
                out.append((f"{path.name}:{case['eval_id']}", turns))
    return out


def _variants(turns: list[list[dict]]) -> list[list[list[dict]]]:
    """Plausible agent trajectories for an expected one: right, reordered, missing, extra, wrong args."""
    extra = {"name": "get_weather", "args": {"city": "Paris"}}
    return [
        turns,
        [list(reversed(t)) for t in turns],
        [t[:-1] for t in turns],
        [t + [extra] for t in turns],
        [[extra] + t for t in turns],
        [[{"name": x["name"], "args": {**x["args"], "extra": 1}} for x in t] for t in turns],
        [[{"name": x["name"], "args": {}} for x in t] for t in turns],
        [t * 2 for t in turns],
    ]


def test_adk_interop_files_found() -> None:
    shared_path("interop", "google__adk-python")
    assert len(_adk_files_turns()) >= 8


@pytest.mark.parametrize("name, expected", _adk_files_turns() or [pytest.param("absent", [])])
def test_adk_interop_files_equal_adk(name, expected) -> None:
    shared_path("interop", "google__adk-python")
    for actual in _variants(expected):
        for match in ("EXACT", "IN_ORDER", "ANY_ORDER"):
            for ignore in (False, True):
                ours = trajectory_score(expected, actual, match, "ignore" if ignore else "exact")
                assert ours == adk_score(expected, actual, match, ignore), (name, actual, match, ignore)


# ---------------------------------------------------------------------------- goldenkit additions
def test_zip_shorter_wins_and_empty_is_nan() -> None:
    assert trajectory_score([[A], [B]], [[A]]) == 1.0
    assert trajectory_score([[A]], [[A], [B], [C]]) == 1.0
    assert math.isnan(trajectory_score([], [[A]]))


def test_accepts_toolcalls_and_rejects_flat_lists() -> None:
    assert trajectory_score([[ToolCall("a", {"x": 1})]], [[A]]) == 1.0
    with pytest.raises(InputError, match="list of turns"):
        trajectory_score([A], [A])


def test_match_type_normalization() -> None:
    assert normalize_match("in-order") == "IN_ORDER"
    assert normalize_match(" Any Order ") == "ANY_ORDER"
    assert normalize_match(0) == "EXACT"
    with pytest.raises(InputError, match="unknown trajectory match type 'fuzzy'"):
        normalize_match("fuzzy")


def test_args_subset() -> None:
    expected = [[c("lookup_order", order_id="A-1")]]
    actual = [[c("lookup_order", order_id="A-1", include_items=True)]]
    assert trajectory_score(expected, actual, args="exact") == 0.0
    assert trajectory_score(expected, actual, args="subset") == 1.0
    assert not turn_matches(actual[0], expected[0], args="subset")  # subset is one-way


def test_any_order_subset_finds_a_matching_first_fit_misses() -> None:
    # the loose expectation f() also accepts f(x=1), the only call f(x=1) accepts;
    # pairing f() with f(x=2) instead satisfies both
    expected = [c("f"), c("f", x=1)]
    actual = [c("f", x=1), c("f", x=2)]
    assert turn_matches(expected, actual, "ANY_ORDER", "subset")
    assert not turn_matches(expected, [c("f", x=1)], "ANY_ORDER", "subset")
    assert not turn_matches(expected, [c("f", x=2), c("f", x=3)], "ANY_ORDER", "subset")


# ---------------------------------------------------------------------------- the grader
def response(*turns: tuple[str, list[dict]]) -> Response:
    return Response(
        turns=[TurnOutput(text=t, tool_calls=[ToolCall(x["name"], x["args"]) for x in calls]) for t, calls in turns]
    )


def adk_case(expected: list[list[dict]], criteria: dict | None = None) -> Case:
    return Case(
        id="adk-1",
        shape="adk",
        turns=tuple(Turn(user="q", expected_tools=tuple(ToolCall(x["name"], x["args"]) for x in t)) for t in expected),
        criteria=criteria or {},
    )


def test_grader_adk_default_exact_threshold_one() -> None:
    g = TrajectoryGrader()
    case = adk_case([[], [c("roll_die", sides=6)]])
    r = g.grade(case, response(("hi", []), ("rolled", [c("roll_die", sides=6)])))
    assert (r.passed, r.score, r.reason) == (True, 1.0, "")
    r = g.grade(case, response(("hi", [c("roll_die", sides=6)]), ("rolled", [c("roll_die", sides=20)])))
    assert r.passed is False and r.score == 0.0
    assert r.reason == (
        "EXACT score 0 < 1; turn 1: extra [roll_die(sides=6)]; "
        "turn 2: missing [roll_die(sides=6)]; called with other args [roll_die(sides=20)]; "
        "extra [roll_die(sides=20)]"
    )


def test_grader_adk_criteria_threshold_and_match_type() -> None:
    crit = {"tool_trajectory_avg_score": {"threshold": 0.5, "match_type": "in-order"}}
    case = adk_case([[c("a")], [c("b")]], crit)
    r = TrajectoryGrader().grade(case, response(("", [c("x"), c("a")]), ("", [c("c")])))
    assert (r.passed, r.score) == (True, 0.5)
    assert r.reason == "IN_ORDER score 0.5 >= 0.5; turn 2: missing [b()]"
    # criteria that do not name the metric: not applicable (ADK would not evaluate it)
    r = TrajectoryGrader().grade(adk_case([[c("a")]], {"response_match_score": 0.8}), response(("", [])))
    assert r.passed is None


def test_grader_reports_unscored_extra_turns() -> None:
    r = TrajectoryGrader().grade(adk_case([[c("a")]]), response(("", [c("a")]), ("", [c("b")])))
    assert r.passed is True
    assert r.reason == "EXACT score 1 >= 1; 1 expected turns, 2 actual; turns beyond 1 are not scored"


def contract_case(expect: dict, turns: int = 1) -> Case:
    return Case(id="c-1", shape="contract", turns=tuple(Turn(user="q") for _ in range(turns)), expect=expect)


def test_grader_contract_tools_default_in_order_over_whole_trajectory() -> None:
    case = contract_case({"tools": [c("lookup_order", order_id="A-1"), c("issue_refund", order_id="A-1")]}, 2)
    ok = response(("", [c("lookup_order", order_id="A-1")]), ("done", [c("log"), c("issue_refund", order_id="A-1")]))
    assert TrajectoryGrader().grade(case, ok).passed is True
    bad = response(("", [c("issue_refund", order_id="A-1")]), ("done", [c("lookup_order", order_id="A-2")]))
    r = TrajectoryGrader().grade(case, bad)
    assert r.passed is False
    assert r.reason == (
        "tools (IN_ORDER): missing [lookup_order(order_id='A-1')]; "
        "called with other args [lookup_order(order_id='A-2')]"
    )


def test_grader_contract_options_in_case() -> None:
    case = contract_case({"tools": [c("lookup_order", order_id="A-1")], "tool_match": "EXACT", "tool_args": "subset"})
    assert TrajectoryGrader().grade(case, response(("", [c("lookup_order", order_id="A-1", x=1)]))).passed is True
    r = TrajectoryGrader().grade(case, response(("", [c("lookup_order", order_id="A-1"), c("faq")])))
    assert r.reason == "tools (EXACT): extra [faq()]"


def test_grader_contract_per_turn_tools() -> None:
    case = contract_case(
        {"turns": [{"tools": []}, {"tools": [c("lookup_order")]}], "tool_match": "EXACT", "tool_args": "ignore"}, 2
    )
    r = TrajectoryGrader().grade(case, response(("", [c("lookup_order")]), ("", [c("lookup_order", id=1)])))
    assert (r.passed, r.score) == (False, 0.5)
    assert r.reason == "turn 1 (EXACT): extra [lookup_order()]"


RULE = {"tool": "lookup_order", "pattern": r"\b\d+[- ]day\b"}


def test_tool_before_text_rule() -> None:
    case = contract_case({"tool_before_text": [RULE]}, 2)
    # called in an earlier turn, quoted later: fine
    ok = response(("Let me check.", [c("lookup_order", order_id="A-1")]), ("You have a 30-day window.", []))
    assert TrajectoryGrader().grade(case, ok).passed is True
    # called in the same turn as the answer: the call comes before the final text
    same = response(("Hi", []), ("You have a 30-day window.", [c("lookup_order", order_id="A-1")]))
    assert TrajectoryGrader().grade(case, same).passed is True
    # quoted before the call: fails, naming the text and the tool
    bad = response(("Refunds have a 30-day window.", []), ("Checking now.", [c("lookup_order", order_id="A-1")]))
    r = TrajectoryGrader().grade(case, bad)
    assert r.passed is False
    assert r.reason == (
        'tool_before_text: turn 1 says "30-day" in "Refunds have a 30-day window." before any call to lookup_order'
    )
    # never quoting a window needs no call
    assert TrajectoryGrader().grade(case, response(("Hello", []), ("Bye", []))).passed is True


def test_tool_before_text_with_args_and_intermediate_text() -> None:
    rule = {**RULE, "args": {"order_id": "A-1"}}
    case = contract_case({"tool_before_text": [rule]})
    wrong = response(("30 day window", [c("lookup_order", order_id="B-2")]))
    r = TrajectoryGrader().grade(case, wrong)
    assert r.reason.endswith("before any call to lookup_order(order_id='A-1')")
    inter = Response(turns=[TurnOutput(text="ok", intermediate=[("sub", "a 14 day window")])])
    assert TrajectoryGrader().grade(case, inter).passed is False


def test_grader_not_applicable_without_expectations() -> None:
    g = TrajectoryGrader()
    case = contract_case({"must_contain": ["x"]})
    assert not g.applies(case)
    assert g.grade(case, response(("x", []))).passed is None
