"""ROUGE-1 reference match: equal to ADK's own response_match_score on the same pairs."""

from __future__ import annotations

import json

import pytest
from _shared import shared_dir, shared_path
from hypothesis import given, settings, strategies as st

from goldenkit.errors import ConfigError, InputError
from goldenkit.graders._match import ReferenceMatchGrader, UnicodeTokenizer, rouge1_f
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import Case, ToolCall, Turn

INTEROP = shared_dir("interop")
ADK_DIR = INTEROP / "google__adk-python"

adk_match = pytest.importorskip("google.adk.evaluation.final_response_match_v1")
from google.adk.evaluation.eval_case import Invocation  # noqa: E402
from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric  # noqa: E402
from google.genai import types  # noqa: E402


def _content(parts: list[str | None], role: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=p) for p in parts])


def adk_overall(references: list[list[str | None]], responses: list[list[str | None]], threshold: float = 0.8):
    """ADK's RougeEvaluator on invocations whose final responses have the given parts."""
    ev = adk_match.RougeEvaluator(
        EvalMetric(metric_name="response_match_score", criterion=BaseCriterion(threshold=threshold))
    )
    q = _content(["q"], "user")
    actual = [Invocation(user_content=q, final_response=_content(p, "model")) for p in responses]
    expected = [Invocation(user_content=q, final_response=_content(p, "model")) for p in references]
    return ev.evaluate_invocations(actual, expected)


def adk_f(reference: str, response: str) -> float:
    return adk_overall([[reference]], [[response]]).overall_score


PAIRS = [
    ("I have set the device_3 status to off.", "Device 3 is now off."),
    ("I have set the device_3 status to off.", "I have set the device_3 status to off."),
    ("The running dogs ran quickly", "a dog runs quick"),
    ("", "anything"),
    ("something", ""),
    ("", ""),
    ("Refunds are accepted within 30 days of delivery.", "You can return it within thirty days of delivery!"),
    ("Привет, мир! Как дела?", "привет мир, как дела"),
    ("東京は日本の首都です", "東京は首都"),
    ("สวัสดีครับ ยินดีต้อนรับ", "สวัสดีค่ะ"),
    ("Ｆｕｌｌｗｉｄｔｈ text and ﬁne ligatures", "fullwidth text and fine ligatures"),
    ("café naïve résumé", "cafe naive resume"),
    ("नमस्ते दुनिया", "नमस्ते"),
    ("mixed Русский and English words", "English and русский words mixed"),
]


@pytest.mark.parametrize("reference, response", PAIRS)
def test_hand_made_pairs_equal_adk(reference: str, response: str) -> None:
    assert rouge1_f(reference, response) == adk_f(reference, response)


def test_hand_computed_value() -> None:
    # reference tokens: i have set the devic 3 statu to off (9; "device"->"devic", "status"->"statu")
    # response tokens: devic 3 is now off (5); overlap {devic, 3, off} = 3
    # P = 3/5, R = 3/9, F = 2PR/(P+R) = 2*(1/5)/(3/5+1/3) = (2/5)/(14/15) = 3/7
    assert rouge1_f("I have set the device_3 status to off.", "Device 3 is now off.") == pytest.approx(3 / 7)


def test_default_tokenizer_drops_non_latin_text() -> None:
    assert rouge1_f("Привет мир", "привет, мир!") == 1.0
    assert rouge1_f("Привет мир", "привет, мир!", tokenizer="default") == 0.0
    # ASCII text: both tokenizers agree
    a, b = PAIRS[0]
    assert rouge1_f(a, b, tokenizer="default") == rouge1_f(a, b)
    with pytest.raises(InputError, match="unknown ROUGE tokenizer 'bleu'"):
        rouge1_f("a", "b", tokenizer="bleu")


def test_tokenizer_words() -> None:
    assert UnicodeTokenizer.words("東京 is big, ok?") == ["東", "京", "is", "big", "ok"]
    assert UnicodeTokenizer().tokenize("Running dogs") == ["run", "dog"]


text_st = st.text(
    alphabet=st.sampled_from(
        list("abcXYZ019 .,!?-_'\n\t")
        + list("éñüß")
        + list("приветМИР")
        + list("東京日本")
        + list("ひカ한")
        + list("สวัดีค่ะ")
        + list("ກຂ")
        + list("ကခ")
        + list("កខ")
        + ["\u0301", "\u093f", "न", "म"]
        + list("ＡＢﬁ²")
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(reference=text_st, response=text_st)
def test_random_texts_equal_adk(reference: str, response: str) -> None:
    ours = rouge1_f(reference, response)
    theirs = adk_match._calculate_rouge_1_scores(response, reference).fmeasure
    assert ours == theirs


# ---------------------------------------------------------------------------- ADK interop files
def _final_texts(inv: dict) -> list[str | None] | None:
    fr = inv.get("final_response")
    if fr is None:
        return None
    return [p.get("text") for p in fr.get("parts") or []]


def _adk_references() -> list[list[list[str | None]]]:
    """Per file case: the final_response parts of each invocation (legacy files: the reference)."""
    if not ADK_DIR.is_dir():
        return []
    out = []
    for path in sorted(ADK_DIR.glob("*.test.json")) + sorted(ADK_DIR.glob("*.evalset.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, list):
            out.append([[row.get("reference", "")] for row in data])
            continue
        for case in data.get("eval_cases", []):
            conv = case.get("conversation") or []
            turns = [_final_texts(inv) for inv in conv]
            if turns:
                out.append([t if t is not None else [] for t in turns])
    return out


def test_interop_references_found() -> None:
    shared_path("interop", "google__adk-python")
    refs = _adk_references()
    assert len(refs) >= 8 and any(any(t) for case in refs for t in case)


def test_interop_references_equal_adk() -> None:
    shared_path("interop", "google__adk-python")
    cases = _adk_references()
    flat = [" ".join(p for p in t if p) for case in cases for t in case]
    checked = 0
    for case in cases:
        for parts in case:
            ref = "\n".join(p for p in parts if p)
            # candidates: itself, a truncation, a reworded one, and every other reference in the files
            candidates = [ref, ref[: len(ref) // 2], ref.upper().replace(".", " indeed."), *flat]
            for cand in candidates:
                assert rouge1_f(ref, cand) == adk_f(ref, cand), (ref, cand)
                checked += 1
        # the grader over the whole case equals ADK's overall score on the same invocations
        grader_case = Case(
            id="adk",
            shape="adk",
            turns=tuple(Turn(user="q", expected_response="\n".join(p for p in t if p) or None) for t in case),
        )
        responses = [flat[(j * 7) % len(flat)] for j in range(len(case))]
        ours = ReferenceMatchGrader().grade(grader_case, Response(turns=[TurnOutput(text=r) for r in responses]))
        theirs = adk_overall([t or [None] for t in case], [[r] for r in responses])
        if any(t for t in case):
            assert ours.score == theirs.overall_score
            assert ours.passed == (theirs.overall_eval_status.name == "PASSED")
    assert checked > 100


def test_multi_part_text_is_joined_with_newlines_like_adk() -> None:
    parts = ["I have set", None, "the device_3 status", "to off."]
    joined = "\n".join(p for p in parts if p)
    assert rouge1_f(joined, "device 3 off") == adk_overall([parts], [["device 3 off"]]).overall_score


# ---------------------------------------------------------------------------- the grader
def test_grader_contract_reference_default_threshold() -> None:
    case = Case(id="c", shape="contract", turns=(Turn(user="q"),), reference="Refunds take 5 to 10 business days.")
    g = ReferenceMatchGrader()
    ok = g.grade(case, Response.from_text("Refunds take 5 to 10 business days."))
    assert (ok.passed, ok.score, ok.reason) == (True, 1.0, "")
    bad = g.grade(case, Response.from_text("We will call you."))
    assert bad.passed is False and bad.reason == f"ROUGE-1 F {bad.score:.3f} < 0.8"
    assert g.version == "1" and ReferenceMatchGrader(threshold=0.5).version != "1"


def test_grader_uses_case_criteria_threshold() -> None:
    turns = (Turn(user="q", expected_response="the die shows 4"), Turn(user="q2", expected_response="yes it is prime"))
    case = Case(id="a", shape="adk", turns=turns, criteria={"response_match_score": 0.5})
    resp = Response(turns=[TurnOutput(text="the die shows 4"), TurnOutput(text="no")])
    r = ReferenceMatchGrader().grade(case, resp)
    assert (r.passed, r.score) == (True, 0.5)
    r = ReferenceMatchGrader().grade(
        Case(id="a", shape="adk", turns=turns, criteria={"response_match_score": {"threshold": 0.9}}), resp
    )
    assert r.passed is False and r.reason == "ROUGE-1 F 0.500 < 0.9; low turns: 2 (0.00)"


def test_grader_not_applicable() -> None:
    g = ReferenceMatchGrader()
    no_ref = Case(id="c", shape="contract", turns=(Turn(user="q"),))
    assert not g.applies(no_ref) and g.grade(no_ref, Response.from_text("x")).passed is None
    other = Case(
        id="a", shape="adk", turns=(Turn(user="q", expected_response="x"),), criteria={"tool_trajectory_avg_score": 1}
    )
    assert g.grade(other, Response.from_text("x")).passed is None
    with pytest.raises(ConfigError):
        ReferenceMatchGrader(tokenizer="nltk")


@pytest.mark.parametrize(
    "metric",
    [
        "rubric_based_multi_turn_trajectory_quality_v1",
        "tool_call_count_v1",
        "multi_turn_task_success_v1",
        "hallucinations_v1",
    ],
)
def test_criteria_naming_only_other_adk_metrics_leave_rouge_and_trajectory_out(metric: str) -> None:
    """ADK grades only the metrics a config names: one naming none of theirs is no trajectory or ROUGE check."""
    from goldenkit.graders._trajectory import TrajectoryGrader

    turn = Turn(user="q", expected_response="x", expected_tools=(ToolCall(name="lookup", args={}),))
    case = Case(id="a", shape="adk", turns=(turn,), criteria={metric: {"threshold": 0.5}})
    for grader in (ReferenceMatchGrader(), TrajectoryGrader()):
        assert not grader.applies(case), grader.name
        result = grader.grade(case, Response.from_text("y"))
        assert result.passed is None and "criteria do not ask for" in result.reason, grader.name
    plain = Case(id="a", shape="adk", turns=(turn,))  # no criteria at all: both grade by default
    assert ReferenceMatchGrader().applies(plain) and TrajectoryGrader().applies(plain)


ascii_st = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789.,;:'-_/\n")), max_size=80
)


@settings(max_examples=200, deadline=None)
@given(reference=ascii_st, response=ascii_st)
def test_random_ascii_texts_equal_adk_and_default_tokenizer(reference: str, response: str) -> None:
    theirs = adk_match._calculate_rouge_1_scores(response, reference).fmeasure
    assert rouge1_f(reference, response) == theirs
    # on ASCII text rouge-score's own DefaultTokenizer(use_stemmer=True) agrees as well
    from rouge_score import rouge_scorer

    plain = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(reference, response)["rouge1"].fmeasure
    assert rouge1_f(reference, response, tokenizer="default") == plain == theirs


def test_case_level_reference_is_the_final_turns() -> None:
    case = Case(id="v", shape="vertex", turns=(Turn(user="q"),), reference="Paris is the capital of France.")
    r = ReferenceMatchGrader().grade(case, Response.from_text("Paris is the capital of France."))
    assert (r.passed, r.score) == (True, 1.0)
