"""Trajectory partial credit (F1, ALIGN) and argument policies, against values computed by hand."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from goldenkit.errors import ConfigError, InputError
from goldenkit.graders import TrajectoryGrader, build_graders, trajectory_score
from goldenkit.graders._args import args_match, parse_arg_rules
from goldenkit.graders._partial import align_partial, f1_partial
from goldenkit.graders._trajectory import calls_match, unit_score
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.providers._chat import parse_arguments
from goldenkit.records import Case, ToolCall, Turn


def c(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


A, B, C, D = c("a"), c("b"), c("c"), c("d")


# ---------------------------------------------------------------------------- F1 and ALIGN by hand
@pytest.mark.parametrize(
    ("expected", "actual", "p", "r", "f1"),
    [
        ([A, B, C, D], [A, B, C], 1.0, 3 / 4, 6 / 7),  # 3 of 4 calls: 2*1*.75/1.75
        ([A, B], [A, c("x"), B, c("y")], 2 / 4, 1.0, 2 / 3),  # two extra calls
        ([A, A, B], [A, B, B], 2 / 3, 2 / 3, 2 / 3),  # multisets: one a and one b pair up
        ([A, A], [A], 1.0, 1 / 2, 2 / 3),  # a duplicate expected call is needed twice
        ([C, A, B], [A, B, C], 1.0, 1.0, 1.0),  # F1 ignores order
        ([], [], 1.0, 1.0, 1.0),
        ([], [A], 0.0, 1.0, 0.0),
        ([A], [], 1.0, 0.0, 0.0),
    ],
)
def test_f1_by_hand(expected: list[Any], actual: list[Any], p: float, r: float, f1: float) -> None:
    part = unit_score(expected, actual, "F1")
    assert part.score == pytest.approx(f1)
    assert (part.precision, part.recall) == (pytest.approx(p), pytest.approx(r))
    assert part.score == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)


@pytest.mark.parametrize(
    ("expected", "actual", "lcs"),
    [
        ([A, B, C], [C, A, B], 2),  # a, b in order; c out of place
        ([A, B, C, D], [A, C, B, D], 3),  # a, b, d (or a, c, d)
        ([A, B, C, D], [A, B, C], 3),
        ([A, B], [B, A], 1),
        ([A, B], [A, B], 2),
    ],
)
def test_align_is_twice_lcs_over_lengths(expected: list[Any], actual: list[Any], lcs: int) -> None:
    part = unit_score(expected, actual, "ALIGN")
    assert part.matched == lcs
    assert part.score == pytest.approx(2 * lcs / (len(expected) + len(actual)))
    assert len(part.missing) == len(expected) - lcs and len(part.extra) == len(actual) - lcs


def test_align_names_what_is_out_of_order() -> None:
    part = align_partial(["a", "b", "c"], ["c", "a", "b"], lambda e, a: e == a)
    assert (part.missing, part.extra) == (("c",), ("c",))
    part = f1_partial(["a", "b", "c"], ["c", "a", "b"], lambda e, a: e == a)
    assert (part.score, part.missing, part.extra) == (1.0, (), ())


def test_partial_turns_average() -> None:
    # turn 1: F1 1.0; turn 2: expected [a, b], got [a] -> P 1, R .5, F1 2/3; mean 5/6
    assert trajectory_score([[A], [A, B]], [[A], [A]], match="F1") == pytest.approx((1 + 2 / 3) / 2)
    # a wrong argument is a miss and an extra at once: F1 of [f(x=1), g] vs [f(x=2), g] = 1/2
    assert trajectory_score([[c("f", x=1), B]], [[c("f", x=2), B]], match="f1") == pytest.approx(0.5)
    assert trajectory_score([[c("f", x=1), B]], [[c("f", x=2), B]], match="f1", args="ignore") == 1.0


def response(*turns: list[dict[str, Any]]) -> Response:
    return Response(
        turns=[TurnOutput(text="", tool_calls=[ToolCall(x["name"], x["args"]) for x in calls]) for calls in turns]
    )


def adk_case(expected: list[list[dict[str, Any]]], criteria: dict[str, Any] | None = None) -> Case:
    return Case(
        id="adk-1",
        shape="adk",
        turns=tuple(Turn(user="q", expected_tools=tuple(ToolCall(x["name"], x["args"]) for x in t)) for t in expected),
        criteria=criteria or {},
    )


def test_grader_f1_default_threshold_keeps_strictness() -> None:
    case = adk_case([[A, B, C, D]], {"tool_trajectory_avg_score": {"match_type": "F1"}})
    r = TrajectoryGrader().grade(case, response([A, B, C]))
    assert r.passed is False and r.score == pytest.approx(6 / 7)
    assert r.reason == "F1 score 0.857 < 1; turn 1: F1 0.857 (precision 1, recall 0.75); missing [d()]"
    case = adk_case([[A, B, C, D]], {"tool_trajectory_avg_score": {"match_type": "F1", "threshold": 0.8}})
    r = TrajectoryGrader().grade(case, response([A, B, C, c("x", q=1)]))
    # P 3/4, R 3/4 -> F1 0.75 < 0.8
    assert r.passed is False and r.score == pytest.approx(0.75)
    assert "missing [d()]; extra [x(q=1)]" in r.reason


def test_grader_align_configured_for_contract_cases() -> None:
    g = TrajectoryGrader(contract_match="ALIGN", threshold=0.6)
    case = Case(id="c", shape="contract", turns=(Turn(user="q"),), expect={"tools": [A, B, C]})
    r = g.grade(case, response([C, A, B]))
    assert r.passed is True and r.score == pytest.approx(2 / 3)
    assert r.reason == "tools (ALIGN): ALIGN 0.667 (precision 0.667, recall 0.667); missing [c()]; extra [c()]"
    assert g.version != TrajectoryGrader().version


# ---------------------------------------------------------------------------- argument policies
def test_each_policy() -> None:
    rules = parse_arg_rules(
        {
            "t": {
                "city": "regex:(?i)par.s",
                "ts": "ignore",
                "req": "present",
                "temp": "number:0.5",
                "filter": "subset",
            }
        }
    )
    want = {"city": "Paris", "ts": 1, "req": "r1", "temp": 20.0, "filter": {"lang": "fr", "opts": {"a": 1}}}
    good = {
        "city": "PARIS",
        "ts": 99,
        "req": None,
        "temp": 20.5,
        "filter": {"lang": "fr", "opts": {"a": 1, "b": 2}, "n": 3},
    }
    assert args_match("t", want, good, rules)
    for key, bad in [
        ("city", "Parisian"),  # fullmatch: the whole value
        ("temp", 20.51),
        ("temp", True),  # a boolean is not a number
        ("temp", "20"),
        ("filter", {"lang": "fr", "opts": {"a": 2}}),  # nested values are compared
        ("filter", "fr"),
    ]:
        assert not args_match("t", want, {**good, key: bad}, rules), key
    assert not args_match("t", want, {k: v for k, v in good.items() if k != "req"}, rules)  # present
    assert args_match("t", want, {k: v for k, v in good.items() if k != "ts"}, rules)  # ignore: may be missing
    # keys no policy names follow the mode: exact refuses an extra key, subset accepts it
    assert not args_match("t", want, {**good, "extra": 1}, rules)
    assert args_match("t", want, {**good, "extra": 1}, parse_arg_rules({"*": "subset", "t": rules.tools["t"].policies}))
    # a regex against a non-string value reads its JSON text
    assert args_match("n", {"k": 1}, {"k": 12}, parse_arg_rules({"n": {"k": "regex:1[0-9]"}}))


def test_tool_modes_and_default() -> None:
    rules = parse_arg_rules({"*": "subset", "search": "ignore", "get": {"*": "exact", "id": "present"}})
    assert calls_match(c("search", q="a"), c("search", q="b", n=2), rules)
    assert calls_match(c("other", q="a"), c("other", q="a", n=2), rules)  # the default mode: subset
    assert not calls_match(c("other", q="a"), c("other", q="b"), rules)
    assert calls_match(c("get", id=1, v=2), c("get", id=7, v=2), rules)
    assert not calls_match(c("get", id=1, v=2), c("get", id=7, v=2, w=3), rules)  # the tool's mode: exact
    assert not calls_match(c("search", q="a"), c("find", q="a"), rules)  # names always count


def test_invalid_json_arguments_never_match() -> None:
    broken = {"name": "search", "args": parse_arguments('{"q": "weather')}
    non_object = {"name": "search", "args": parse_arguments("[1, 2]")}
    for bad in (broken, non_object):
        for rules in ("ignore", "subset", "exact", {"search": {"q": "ignore"}}, {"search": "ignore"}):
            assert not calls_match(c("search"), bad, parse_arg_rules(rules)), (bad, rules)
    r = TrajectoryGrader(args="ignore").grade(
        Case(id="c", shape="contract", turns=(Turn(user="q"),), expect={"tools": [c("search")]}),
        Response(turns=[TurnOutput(text="", tool_calls=[ToolCall("search", broken["args"])])]),
    )
    assert r.passed is False
    assert 'called with arguments that are not a JSON object [search(_invalid_json=\'{"q": "weather\')]' in r.reason


def test_per_case_policies_override_the_config() -> None:
    g = TrajectoryGrader(args={"get": {"ts": "ignore"}})
    case = Case(id="c", shape="contract", turns=(Turn(user="q"),), expect={"tools": [c("get", id=1, ts=0)]})
    assert g.grade(case, response([c("get", id=1, ts=5)])).passed is True
    assert g.grade(case, response([c("get", id=2, ts=5)])).passed is False
    own = {**case.expect, "tool_args": {"get": {"id": "number:1"}}}  # the case's table for this tool wins
    case2 = Case(id="c", shape="contract", turns=(Turn(user="q"),), expect=own)
    assert g.grade(case2, response([c("get", id=2, ts=0)])).passed is True
    assert g.grade(case2, response([c("get", id=2, ts=5)])).passed is False
    bad = Case(
        id="c9",
        shape="contract",
        turns=(Turn(user="q"),),
        expect={**case.expect, "tool_args": {"get": {"id": "fuzzy"}}},
    )
    with pytest.raises(InputError, match=r"case c9: expect: tool_args.get.id: unknown argument policy 'fuzzy'"):
        g.grade(bad, response([]))


def test_policies_from_toml_and_bad_config() -> None:
    cfg = tomllib.loads(
        """
[graders]
use = ["trajectory"]
[graders.trajectory]
match = "F1"
[graders.trajectory.args]
"*" = "subset"
[graders.trajectory.args.get_weather]
city = "regex:(?i)paris"
"""
    )
    (g,) = build_graders(cfg)
    case = adk_case([[c("get_weather", city="Paris"), c("log", msg="x")]])
    r = g.grade(case, response([c("get_weather", city="paris", unit="C"), c("log", msg="x", level=1)]))
    assert r.passed is True and r.score == 1.0
    assert g.version.startswith("1+")
    with pytest.raises(ConfigError, match=r"graders.trajectory: args.get.x: number:<tolerance> needs"):
        TrajectoryGrader(args={"get": {"x": "number:-1"}})
    with pytest.raises(ConfigError, match="invalid pattern"):
        TrajectoryGrader(args={"get": {"x": "regex:("}})
    with pytest.raises(ConfigError, match="unknown tool args mode 'loose'"):
        TrajectoryGrader(args={"*": "loose"})
