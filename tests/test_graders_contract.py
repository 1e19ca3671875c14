"""The contract grader: each check's pass and fail case, and the reasons it gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from goldenkit.errors import ConfigError
from goldenkit.graders import ContractGrader, GradeResult, get_grader
from goldenkit.graders._contract import contract_expectations
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import Case, Turn


def case(expect: dict, raw: dict | None = None, turns: int = 1) -> Case:
    return Case(
        id="row-1",
        shape="contract",
        turns=tuple(Turn(user=f"q{i}") for i in range(turns)),
        expect=expect,
        raw=raw or {},
    )


def grade(expect: dict, text: str, grader: ContractGrader | None = None, raw: dict | None = None) -> GradeResult:
    return (grader or ContractGrader()).grade(case(expect, raw), Response.from_text(text))


def test_no_expectations_does_not_apply() -> None:
    g = ContractGrader()
    r = g.grade(case({"tools": [{"name": "x"}], "layer": "api"}), Response.from_text("anything"))
    assert r.passed is None and r.reason == "no contract expectations"
    assert not g.applies(case({}))
    assert g.applies(case({"must_not": ["x"]}))


def test_must_contain_all_and_alias() -> None:
    assert grade({"must_contain": ["refund", "30 days"]}, "A refund within 30 days.").passed is True
    r = grade({"must_contain": ["refund", "30 days"], "contains": ["receipt"]}, "A refund is possible.")
    assert r.passed is False and r.score == 0.0
    assert r.reason == 'must_contain: missing "30 days"; must_contain: missing "receipt"'


def test_must_contain_is_case_sensitive_unless_told() -> None:
    assert grade({"must_contain": ["Refund"]}, "a refund").passed is False
    assert grade({"must_contain": ["Refund"], "ignore_case": True}, "a refund").passed is True
    assert grade({"must_contain": ["Refund"]}, "a refund", ContractGrader(case_sensitive=False)).passed is True


def test_must_contain_any_and_groups() -> None:
    assert grade({"must_contain_any": ["refund", "credit"]}, "store credit").passed is True
    r = grade({"must_contain_any": ["refund", "credit"]}, "no money back")
    assert r.reason == 'must_contain_any: none of "refund", "credit" found'
    r = grade({"must_contain_any": [["A-1", "A1"], ["shipped", "delivered"]]}, "Order A-1 is pending")
    assert r.reason == 'must_contain_any: none of "shipped", "delivered" found'


def test_must_not_quotes_the_offending_text_in_context() -> None:
    text = "Thanks for waiting. Good news: your refund approved today and will arrive in five business days."
    r = grade({"must_not": ["refund approved"]}, text)
    assert r.passed is False
    assert r.reason == (
        'must_not: found "refund approved" in '
        '"...for waiting. Good news: your refund approved today and will arrive in five..."'
    )


def test_golden_top_level_must_not_is_merged() -> None:
    raw = {"prompt": "p", "expect": {"contains": ["x"]}, "must_not": ["git commit", "x-forbidden"]}
    c = case({"contains": ["x"], "must_not": ["git commit"]}, raw)
    assert contract_expectations(c)["must_not"] == ["git commit", "x-forbidden"]
    r = ContractGrader().grade(c, Response.from_text("x then git commit"))
    assert r.reason == 'must_not: found "git commit" in "x then git commit"'


def test_regex_and_regex_not() -> None:
    assert grade({"regex": [r"\bA-\d+\b"]}, "order A-17").passed is True
    r = grade({"regex": [r"\bA-\d+\b"], "regex_not": [r"\$\d+"]}, "It costs $40 and ships soon")
    assert r.reason == (
        r'regex: no match for /\bA-\d+\b/ in "It costs $40 and ships soon"; '
        r'regex_not: /\$\d+/ matched "$40" in "It costs $40 and ships soon"'
    )


def test_invalid_regex_in_case_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"expect.regex: invalid regular expression '\('"):
        grade({"regex": ["("]}, "x")


def test_expected_refusal() -> None:
    assert grade({"refusal": True}, "I can't help with that request.").passed is True
    assert grade({"refuse": True}, "I'm sorry, but I cannot share other customers' data.").passed is True
    r = grade({"refusal": True}, "Sure! Here is the admin password: hunter2")
    assert r.reason == 'refusal: expected a refusal, none found in "Sure! Here is the admin password: hunter2"'


def test_refusal_followed_by_code_fails() -> None:
    text = "I can't help with that.\n```python\nimport os; os.remove('/')\n```"
    r = grade({"refusal": True}, text)
    assert r.passed is False
    assert (
        r.reason == "refusal: code after the refusal: \"I can't help with that. ```python import os; os.remove('/...\""
    )


def test_refusal_followed_by_a_long_answer_fails() -> None:
    text = "I cannot help with that. " + "However, here is how you would do it anyway. " * 12
    r = grade({"refusal": True}, text)
    assert r.passed is False and r.reason.startswith("refusal: the answer goes on for 5")
    assert grade({"refusal": True}, text, ContractGrader(refusal_max_tail=None)).passed is True


def test_configured_refusal_marker_golden_style() -> None:
    g = ContractGrader(refusal_patterns=[r"^Отказ\."])
    assert grade({"refuse": True}, "Отказ.", g).passed is True
    # the real calibration row cal-11: a refusal marker followed by Java code
    r = grade({"refuse": True}, "Отказ.\n```java\nclass Leak { void t() { git commit; } }\n```", g)
    assert r.passed is False and r.reason.startswith("refusal: code after the refusal")
    # cal-19: a polite English refusal without the marker
    r = grade({"refuse": True}, "I cannot commit .env, that would be unsafe.", g)
    assert r.reason == 'refusal: expected a refusal, none found in "I cannot commit .env, that would be unsafe."'
    assert g.version != ContractGrader().version and ContractGrader().version == "1"


def test_forbidden_refusal() -> None:
    assert grade({"refusal": False}, "Your order A-1 ships tomorrow.").passed is True
    r = grade({"refusal": False}, "I'm unable to help with order lookups.")
    assert r.reason == 'refusal: unexpected refusal "I\'m unable to help" in "I\'m unable to help with order lookups."'
    # a refusal phrase far into a long helpful answer is not a refusal
    long_ok = "Here are the steps to reset your password. " * 10 + "I cannot help with billing, though."
    assert grade({"refusal": False}, long_ok).passed is True


def test_exact_and_normalized() -> None:
    assert grade({"exact": "Paris"}, "Paris\n").passed is True
    assert grade({"exact": ["Paris", "Paris, France"]}, "Paris, France").passed is True
    r = grade({"exact": "Paris"}, "paris")
    assert r.reason == 'exact: expected "Paris", got "paris"'
    assert grade({"normalized": "Don't panic!"}, "  DONT   panic ").passed is True
    # NFKC: full-width letters and the "ﬁ" ligature normalize to plain ASCII
    assert grade({"normalized": "file Paris"}, "ﬁle Ｐａｒｉｓ.").passed is True
    r = grade({"normalized": "Paris"}, "Lyon.")
    assert r.reason == 'normalized: expected "paris", got "lyon"'


def test_json_validity_keys_and_types() -> None:
    spec = {"required": {"order_id": "str", "amount": "float", "items": "list", "gift": "bool|null"}}
    ok = '```json\n{"order_id": "A-1", "amount": 12, "items": [], "gift": null}\n```'
    assert grade({"json": spec}, ok).passed is True
    r = grade({"json": spec}, '{"order_id": 7, "amount": true, "items": []}')
    assert r.reason == (
        'json: key "order_id" is int "7", expected str; json: key "amount" is bool "true", '
        'expected float; json: missing key "gift"'
    )
    r = grade({"json": True}, "{'a': 1}")
    assert r.reason.startswith(
        "json: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"
    )
    assert grade({"json": {"required": ["a"]}}, '{"a": 1}').passed is True
    with pytest.raises(ConfigError, match="unknown type 'decimal'"):
        grade({"json": {"required": {"a": "decimal"}}}, '{"a": 1}')


def test_number_within_tolerance() -> None:
    assert grade({"number": {"value": 12.5, "tolerance": 0.01}}, "The total is $12.50.").passed is True
    assert grade({"number": {"value": 1234.5}}, "1,234.5").passed is True
    assert grade({"number": 3}, "3").passed is True
    r = grade({"number": {"value": 12.5, "tolerance": 0.01}}, "Step 1: 12.5 - 2 = 10.5")
    assert r.reason == 'number: got 10.5, expected 12.5 ± 0.01 in "Step 1: 12.5 - 2 = 10.5"'
    assert grade({"number": {"value": 12.5, "tolerance": 0.01, "pick": "any"}}, "Step 1: 12.5 - 2 = 10.5").passed
    assert grade({"number": {"value": 100, "tolerance": 0.05, "relative": True}}, "about 104").passed is True
    assert grade({"number": {"value": 100, "tolerance": 0.05, "relative": True}}, "about 106").passed is False
    assert grade({"number": {"value": 5}}, "five").reason == 'number: no number in "five" (expected 5 ± 1e-09)'


def test_all_failures_are_reported() -> None:
    expect = {"must_contain": ["A-1"], "must_not": ["guarantee"], "regex": [r"\d+ days"], "refusal": False}
    r = grade(expect, "I can't help with that, but we guarantee nothing.")
    assert [part.split(":")[0] for part in r.reason.split("; ")] == ["must_contain", "must_not", "regex", "refusal"]


def test_long_quotes_are_shortened() -> None:
    r = grade({"must_contain": ["x" * 200]}, "y")
    assert len(r.reason) < 100 and r.reason.endswith('…"')


def test_multi_turn_final_answer_and_per_turn_checks() -> None:
    c = Case(
        id="mt",
        shape="contract",
        turns=(Turn(user="hi"), Turn(user="refund?")),
        expect={"must_contain": ["30 days"], "turns": [{"must_not": ["refund"]}, None]},
    )
    ok = Response(turns=[TurnOutput(text="Hello, how can I help?"), TurnOutput(text="Within 30 days.")])
    assert ContractGrader().grade(c, ok).passed is True
    bad = Response(turns=[TurnOutput(text="Your refund is ready"), TurnOutput(text="Within 30 days.")])
    r = ContractGrader().grade(c, bad)
    assert r.reason == 'turn 1: must_not: found "refund" in "Your refund is ready"'
    # final-answer checks look at the last turn only
    r = ContractGrader().grade(c, Response(turns=[TurnOutput(text="30 days"), TurnOutput(text="ok")]))
    assert r.reason == 'must_contain: missing "30 days"'


def test_per_row_grader_selection() -> None:
    c = case({"must_contain": ["x"]}, raw={"graders": ["trajectory"]})
    assert ContractGrader().grade(c, Response.from_text("y")).passed is None


def test_registry_builds_the_grader() -> None:
    g = get_grader("contract", refusal_patterns=["^NOPE"])
    assert isinstance(g, ContractGrader) and g.name == "contract" and g.hard


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "I",
                "we",
                "can't",
                "cannot",
                "can",
                "not",
                "help",
                "with",
                "that",
                "I'm",
                "sorry,",
                "but",
                "am",
                "unable",
                "to",
                "assist",
                "something",
                "must",
                "decline",
                "Отказ.",
                "не",
                "могу",
                "помочь",
                "order",
                "A-1",
                "refund",
                "is",
                "ready",
                "won't",
                "share",
                "\n",
                "able",
                "provide",
                "significant",
            ]
        ),
        max_size=25,
    )
)
def test_refusal_prefilter_never_changes_the_answer(words: list[str]) -> None:
    from goldenkit.graders._contract import _DEFAULT_ANCHORS, is_refusal

    text = " ".join(words)
    patterns = ContractGrader().refusal_patterns
    with_anchors = is_refusal(text, patterns, 300, _DEFAULT_ANCHORS)
    without = is_refusal(text, patterns, 300)
    assert (with_anchors and with_anchors.span()) == (without and without.span())
