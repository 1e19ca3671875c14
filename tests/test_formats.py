"""normalize_case on every case shape: the interop files written by other projects, and hand-made edge cases.

Expected values are computed from the files themselves (counts, texts, tool calls), and, for
ADK, cross-checked against ADK's own pydantic models when google-adk is installed.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _shared import needs_shared, shared_dir
from hypothesis import HealthCheck, given, settings, strategies as st

from goldenkit.errors import DatasetError
from goldenkit.formats import detect_shape, normalize_case
from goldenkit.formats._common import camel
from goldenkit.formats._vertex import read_vertex
from goldenkit.records import Case

INTEROP = shared_dir("interop")
ADK_DIR = INTEROP / "google__adk-python"
needs_interop = needs_shared("interop")


def _adk_evalset_files() -> list[Path]:
    if not ADK_DIR.is_dir():
        return []
    out = []
    for p in sorted(ADK_DIR.glob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "eval_cases" in doc:
            out.append(p)
    return out


def _text(content: dict | None) -> str | None:
    """ADK's final-response text, computed directly from a Content dict."""
    if content is None:
        return None
    return "\n".join(p["text"] for p in content["parts"] if p.get("text") is not None)


# Keys whose values are user data (tool args, session state, tool responses): never re-cased.
_DATA_KEYS = {"args", "state", "response"}


def to_camel(value: Any) -> Any:
    """The camelCase spelling of an ADK EvalCase dump (what the adk web API returns)."""
    if isinstance(value, list):
        return [to_camel(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out[camel(k)] = v if k in _DATA_KEYS else to_camel(v)
        return out
    return value


def _turn_view(case: Case) -> list[tuple]:
    return [
        (t.user, t.expected_response, [c.to_dict() for c in t.expected_tools], t.intermediate_responses)
        for t in case.turns
    ]


# --------------------------------------------------------------------------------------- ADK


@needs_interop
@pytest.mark.parametrize("path", _adk_evalset_files() or [ADK_DIR], ids=lambda p: p.name.rsplit("__", 1)[-1])
def test_adk_interop_cases_match_the_file(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["eval_cases"], "fixture has cases"
    for raw in doc["eval_cases"]:
        case = normalize_case(raw)
        assert case.shape == "adk" and case.id == raw["eval_id"]
        assert case.raw == raw
        assert case.session == raw.get("session_input")
        if raw.get("conversation") is None:
            scenario = raw["conversation_scenario"]
            assert [t.user for t in case.turns] == [scenario["starting_prompt"]]
            assert case.turns[0].expected_response is None and not case.turns[0].expected_tools
            sim = case.criteria["simulated_user"]
            assert sim["conversation_plan"] == scenario["conversation_plan"]
            assert sim["user_persona"] == scenario.get("user_persona")
            assert "simulated" in sim["note"]
            continue
        conv = raw["conversation"]
        assert len(case.turns) == len(conv)
        for turn, inv in zip(case.turns, conv, strict=True):
            assert turn.user == _text(inv["user_content"])
            assert turn.expected_response == _text(inv.get("final_response"))
            uses = (inv.get("intermediate_data") or {}).get("tool_uses", [])
            assert [c.to_dict() for c in turn.expected_tools] == [{"name": u["name"], "args": u["args"]} for u in uses]
        assert case.reference == case.turns[-1].expected_response


@needs_interop
def test_adk_explicit_null_parts_and_null_text() -> None:
    raw = json.loads((ADK_DIR / "tests__integration__fixture__hello_world_agent__roll_die.test.json").read_text())
    case = normalize_case(raw["eval_cases"][0])
    assert [t.user for t in case.turns] == ["Hi who are you?", "What can you do?", "Can you roll a die with 6 sides"]
    # the last final_response's only part has "text": null -> an empty expected text, not None
    assert case.turns[2].expected_response == ""
    assert [c.to_dict() for c in case.turns[2].expected_tools] == [{"name": "roll_die", "args": {"sides": 6}}]
    assert case.turns[0].expected_response.startswith("I am a data processing agent.")
    assert case.session is None


@needs_interop
def test_adk_invocations_with_only_user_content() -> None:
    name = "contributing__samples__live__live_non_blocking_tool_agent__live_non_blocking_tool_agent.evalset.json"
    doc = json.loads((ADK_DIR / name).read_text())
    scripted = normalize_case(doc["eval_cases"][1])
    assert scripted.id == "background_task_scripted"
    assert [t.expected_response for t in scripted.turns] == [None, None]
    assert scripted.reference is None
    assert scripted.session == {"app_name": "live_non_blocking_tool_agent", "user_id": "test_user_id", "state": {}}
    scenario = normalize_case(doc["eval_cases"][0])
    assert scenario.criteria["simulated_user"]["user_persona"] == "NOVICE"


@needs_interop
@pytest.mark.parametrize("path", _adk_evalset_files() or [ADK_DIR], ids=lambda p: p.name.rsplit("__", 1)[-1])
def test_adk_camel_case_variant_normalizes_the_same(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for raw in doc["eval_cases"]:
        camel = to_camel(raw)
        assert "evalId" in camel and "eval_id" not in camel
        a, b = normalize_case(raw), normalize_case(camel)
        assert _turn_view(a) == _turn_view(b)
        assert (a.id, a.session, a.criteria, a.reference) == (b.id, b.session, b.criteria, b.reference)


@needs_interop
@pytest.mark.parametrize("path", _adk_evalset_files() or [ADK_DIR], ids=lambda p: p.name.rsplit("__", 1)[-1])
def test_adk_tool_calls_agree_with_adk_itself(path: Path) -> None:
    """ADK's own models (snake and camel input) find the same tool calls and texts."""
    eval_case_mod = pytest.importorskip("google.adk.evaluation.eval_case")
    doc = json.loads(path.read_text(encoding="utf-8"))
    for raw in doc["eval_cases"]:
        if raw.get("conversation") is None:
            continue
        ours = normalize_case(raw)
        for variant in (raw, to_camel(raw)):
            theirs = eval_case_mod.EvalCase.model_validate(variant)
            assert len(theirs.conversation) == len(ours.turns)
            for inv, turn in zip(theirs.conversation, ours.turns, strict=True):
                calls = eval_case_mod.get_all_tool_calls(inv.intermediate_data)
                assert [{"name": c.name, "args": c.args or {}} for c in calls] == [
                    c.to_dict() for c in turn.expected_tools
                ]
                assert turn.user == "\n".join(p.text for p in inv.user_content.parts if p.text is not None)


def test_adk_invocation_events_are_scanned_for_calls_responses_and_texts() -> None:
    raw = {
        "evalId": "events-1",
        "conversation": [
            {
                "userContent": {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
                "finalResponse": {"role": "model", "parts": [{"text": "Sunny, 21 C."}]},
                "intermediateData": {
                    "invocationEvents": [
                        {"author": "router", "content": {"parts": [{"text": "Routing to weather."}]}},
                        {
                            "author": "weather",
                            "content": {
                                "parts": [
                                    {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}}
                                ]
                            },
                        },
                        {
                            "author": "weather",
                            "content": {
                                "parts": [
                                    {"functionResponse": {"id": "c1", "name": "get_weather", "response": {"t": 21}}}
                                ]
                            },
                        },
                        {"author": "weather", "content": {"parts": [{"function_call": {"name": "log", "args": None}}]}},
                    ]
                },
            }
        ],
    }
    case = normalize_case(raw)
    (turn,) = case.turns
    assert [c.to_dict() for c in turn.expected_tools] == [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "log", "args": {}},
    ]
    assert turn.expected_tools[0].id == "c1"
    assert len(turn.tool_responses) == 1
    resp = turn.tool_responses[0]
    assert (resp.name, resp.args, resp.response) == ("get_weather", {"city": "Paris"}, {"t": 21})
    assert turn.intermediate_responses == (("router", "Routing to weather."),)
    assert turn.expected_response == "Sunny, 21 C."


def test_adk_intermediate_data_responses_and_sub_agent_texts() -> None:
    raw = {
        "eval_id": "x",
        "conversation": [
            {
                "user_content": {"parts": [{"text": "a"}, {"text": None}, {"text": "b"}], "role": "user"},
                "final_response": {"parts": [{"text": "one"}, {"function_call": {"name": "f"}}, {"text": "two"}]},
                "intermediate_data": {
                    "tool_uses": [{"id": "7", "name": "f", "args": {"k": 1}}],
                    "tool_responses": [{"id": "7", "name": "f", "response": {"ok": True}}],
                    "intermediate_responses": [["helper", [{"text": "working"}]]],
                },
            }
        ],
        "session_input": {"appName": "app", "userId": "u", "state": {"someKey": 1}},
    }
    case = normalize_case(raw)
    turn = case.turns[0]
    assert turn.user == "a\nb" and turn.expected_response == "one\ntwo"
    assert turn.tool_responses[0].args == {"k": 1}
    assert turn.intermediate_responses == (("helper", "working"),)
    # session keys are snake_case; the user's state is left alone
    assert case.session == {"app_name": "app", "user_id": "u", "state": {"someKey": 1}}


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (
            {"eval_id": "e1", "conversation": [{"final_response": {"parts": [{"text": "x"}]}}]},
            "conversation[0] has no user_content",
        ),
        ({"eval_id": "e2", "conversation": []}, "non-empty list"),
        (
            {
                "eval_id": "e3",
                "conversation": [{"user_content": {"parts": []}}],
                "conversation_scenario": {"starting_prompt": "a"},
            },
            "not both",
        ),
        ({"eval_id": "e4", "conversation_scenario": {"conversation_plan": "p"}}, "no starting_prompt"),
        (
            {
                "eval_id": "e5",
                "conversation": [
                    {"user_content": {"parts": [{"text": "x"}]}, "intermediate_data": {"tool_uses": [{"args": {}}]}}
                ],
            },
            "tool_uses[0] has no 'name'",
        ),
        (
            {
                "eval_id": "e6",
                "conversation": [
                    {
                        "user_content": {"parts": [{"text": "x"}]},
                        "intermediate_data": {"tool_uses": [{"name": "f", "args": [1]}]},
                    }
                ],
            },
            "args must be an object",
        ),
        ({"eval_id": "e7", "conversation": [{"user_content": {"parts": [{"text": 3}]}}]}, "text must be a string"),
    ],
)
def test_adk_malformed_cases_raise_dataset_error_naming_the_case(raw: dict, needle: str) -> None:
    with pytest.raises(DatasetError) as err:
        normalize_case(raw, "adk")
    assert needle in str(err.value)
    assert f'case "{raw["eval_id"]}"' in str(err.value)


# ------------------------------------------------------------------------------------- Vertex


@needs_interop
def test_vertex_lab_column_frame() -> None:
    path = INTEROP / "vladkol__agent-evaluation-lab" / "evaluator__eval_data_researcher.json"
    frame = json.loads(path.read_text(encoding="utf-8"))
    records = read_vertex(path, path.read_bytes())
    assert [r[0] for r in records] == [f"eval_case_{i}" for i in sorted(map(int, frame["prompt"]))]
    for rid, rec, _ in records:
        key = rid.removeprefix("eval_case_")
        case = normalize_case(rec, row_id=rid)
        assert case.shape == "vertex" and case.id == rid
        assert case.prompt == frame["prompt"][key]
        assert case.reference == frame["reference"][key] and case.turns[0].expected_response == case.reference
        expected = [{"name": t["tool_name"], "args": t["tool_input"]} for t in frame["reference_trajectory"][key]]
        assert [c.to_dict() for c in case.turns[0].expected_tools] == expected
    assert any(ord(ch) > 127 for _, rec, _ in records for ch in rec["reference"]), "non-ASCII text survives"


def test_vertex_content_dicts_history_and_candidate_reference() -> None:
    raw = {
        "eval_case_id": "v-1",
        "prompt": {"role": "user", "parts": [{"text": "And in Rome?"}]},
        "reference": {"response": {"role": "model", "parts": [{"text": "Also sunny."}]}},
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "conversation_history": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {"role": "model", "parts": [{"text": "Sunny."}]},
            {"turn_id": "3", "author": "planner", "content": {"parts": [{"text": "noted"}]}},
        ],
        "responses": [{"response": {"parts": [{"text": "recorded by someone else"}]}}],
    }
    case = normalize_case(raw)
    assert case.shape == "vertex" and case.id == "v-1"
    assert case.prompt == "And in Rome?" and case.reference == "Also sunny." and case.system == "Be brief."
    assert [(m.role, m.content) for m in case.history] == [
        ("user", "Weather in Paris?"),
        ("assistant", "Sunny."),
        ("assistant", "noted"),
    ]
    assert case.history[2].name == "planner"
    # a recorded response is not an expectation
    assert all(t.expected_response != "recorded by someone else" for t in case.turns)


def test_vertex_flat_strings_instruction_and_string_history_ignored() -> None:
    case = normalize_case({"prompt": "Hi", "response": "Hello", "instruction": "sys", "history": "not a list"})
    assert (case.shape, case.prompt, case.system, case.history, case.reference) == ("vertex", "Hi", "sys", (), None)


def _agent_data() -> dict:
    return {
        "agents": {
            "root": {
                "agent_id": "root",
                "instruction": "You are a travel agent.",
                "tools": [{"function_declarations": [{"name": "find_flights", "description": "search"}]}],
            }
        },
        "turns": [
            {
                "turn_index": 0,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "Flights to Oslo?"}]}},
                    {
                        "author": "root",
                        "content": {"parts": [{"function_call": {"name": "find_flights", "args": {"to": "OSL"}}}]},
                    },
                    {
                        "author": "root",
                        "content": {"parts": [{"function_response": {"name": "find_flights", "response": {"n": 2}}}]},
                    },
                    {"author": "root", "content": {"parts": [{"text": "Checking."}]}},
                    {"author": "root", "content": {"parts": [{"text": "Two flights."}]}},
                ],
            },
            {
                "turn_index": 1,
                "events": [
                    {"author": "user", "content": {"parts": [{"text": "Book the first."}]}},
                    {"author": "root", "content": {"parts": [{"text": "Booked."}]}},
                ],
            },
        ],
    }


@pytest.mark.parametrize("as_string", [False, True])
def test_vertex_agent_data_turns(as_string: bool) -> None:
    data = _agent_data()
    raw = {"agent_data": json.dumps(data) if as_string else data, "reference": "Booked."}
    case = normalize_case(raw, row_id="ad-1")
    assert case.shape == "vertex" and case.id == "ad-1"
    assert [t.user for t in case.turns] == ["Flights to Oslo?", "Book the first."]
    first, second = case.turns
    assert [c.to_dict() for c in first.expected_tools] == [{"name": "find_flights", "args": {"to": "OSL"}}]
    assert first.tool_responses[0].response == {"n": 2}
    assert first.expected_response == "Two flights." and first.intermediate_responses == (("root", "Checking."),)
    assert second.expected_response == "Booked." and not second.expected_tools
    assert case.system == "You are a travel agent."
    assert [t["name"] for t in case.tools] == ["find_flights"]


def test_vertex_gemini_request_rows() -> None:
    row = {
        "request": {
            "system_instruction": {"parts": [{"text": "sys"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "q1"}]},
                {"role": "model", "parts": [{"text": "a1"}]},
                {"role": "user", "parts": [{"text": "q2"}]},
                {"role": "model", "parts": [{"text": "a2"}]},
            ],
        },
        "response": {"candidates": [{"content": {"parts": [{"text": "whatever"}]}}]},
    }
    case = normalize_case(row)
    assert (case.prompt, case.reference, case.system) == ("q2", "a2", "sys")
    assert [(m.role, m.content) for m in case.history] == [("user", "q1"), ("assistant", "a1")]
    row["request"]["contents"].pop()
    assert normalize_case(row).reference is None and normalize_case(row).prompt == "q2"


def test_vertex_openai_request_rows() -> None:
    row = {
        "request": {
            "messages": [
                {"role": "developer", "content": "be nice"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
            ]
        },
        "response": {"choices": [{"message": {"content": "x"}}]},
    }
    case = normalize_case(row)
    assert (case.system, case.prompt, case.reference, case.history) == ("be nice", "hi", "hello", ())


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"eval_case_id": "v1", "response": "x"}, "has no prompt"),
        ({"eval_case_id": "v2", "prompt": "p", "reference_trajectory": {"tool_name": "f"}}, "must be a list"),
        ({"eval_case_id": "v3", "prompt": "p", "reference_trajectory": [{"tool_input": {}}]}, "no 'tool_name'"),
        ({"eval_case_id": "v4", "agent_data": "{not json"}, "does not parse"),
        (
            {
                "eval_case_id": "v5",
                "agent_data": {"turns": [{"events": [{"author": "a", "content": {"parts": [{"text": "x"}]}}]}]},
            },
            "no user event",
        ),
        ({"eval_case_id": "v6", "prompt": {"role": "user"}}, "neither 'parts' nor 'text'"),
    ],
)
def test_vertex_malformed_cases(raw: dict, needle: str) -> None:
    with pytest.raises(DatasetError) as err:
        normalize_case(raw, "vertex")
    assert needle in str(err.value) and f'case "{raw["eval_case_id"]}"' in str(err.value)


# ----------------------------------------------------------------------------------- contract

GOLDEN_FILES = [
    "src__main__resources__eval__generation__golden-generation.jsonl",
    "src__test__java__eval__generation__golden-generation.jsonl",
    "src__test__java__eval__generation__holdout__golden-holdout.jsonl",
]


@needs_interop
@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden_rows_normalize_with_aliases_folded(name: str) -> None:
    lines = (INTEROP / "qa-guru__java-ai-golden" / name).read_text(encoding="utf-8").split("\n")
    rows = [json.loads(line) for line in lines if line.strip() and not line.startswith("#")]
    assert len(rows) == 8
    for row in rows:
        case = normalize_case(row)
        exp = row.get("expect", {})
        assert case.shape == "contract" and case.id == row["id"] and case.prompt == row["prompt"]
        assert case.expect.get("must_contain", []) == exp.get("contains", [])
        assert case.expect.get("must_not", []) == row.get("must_not", [])
        assert case.expect.get("refusal") == exp.get("refuse")
        assert case.expect.get("red") == (exp.get("red") or exp.get("adversarial"))
        for key in ("layer", "class", "status", "rag"):
            assert case.expect.get(key) == exp.get(key)
        assert "contains" not in case.expect and "refuse" not in case.expect and "adversarial" not in case.expect
        assert case.raw == row


def test_contract_full_shape() -> None:
    raw = {
        "turns": [
            "Where is order A-1?",
            {"user": "Can I return it?", "reference": "Yes, within 30 days.", "tools": [{"name": "policy"}]},
        ],
        "system": "You are support.",
        "history": [{"role": "user", "content": "hi"}, {"role": "model", "content": "hello"}],
        "tools": [{"name": "lookup_order", "description": "d", "parameters": {"type": "object"}}],
        "tool_responses": [{"name": "lookup_order", "args": {"order_id": "A-1"}, "response": {"status": "shipped"}}],
        "expect": {
            "contains": ["30 days"],
            "must_contain": ["return"],
            "refuse": False,
            "tools": [{"name": "lookup_order", "args": {"order_id": "A-1"}}],
            "tool_match": "in-order",
            "tool_args": "subset",
            "must_not": ["sorry"],
        },
        "must_not": ["sorry", "refund denied"],
        "criteria": {"threshold": 1},
    }
    case = normalize_case(raw, row_id="c-1")
    assert case.shape == "contract" and case.id == "c-1"
    assert [t.user for t in case.turns] == ["Where is order A-1?", "Can I return it?"]
    assert case.reference == "Yes, within 30 days."
    assert case.turns[1].expected_tools[0].name == "policy"
    assert case.turns[0].expected_tools == ()  # a multi-turn case keeps expect.tools case-level
    assert case.expect["tools"] == [{"name": "lookup_order", "args": {"order_id": "A-1"}}]
    assert case.expect["must_contain"] == ["30 days", "return"]
    assert case.expect["must_not"] == ["sorry", "refund denied"]
    assert case.expect["refusal"] is False and case.expect["tool_match"] == "IN_ORDER"
    assert all(t.tool_responses[0].response == {"status": "shipped"} for t in case.turns)
    assert [(m.role, m.content) for m in case.history] == [("user", "hi"), ("assistant", "hello")]
    assert case.system == "You are support." and case.tools[0]["name"] == "lookup_order"
    assert case.criteria == {"threshold": 1}


def test_contract_single_turn_expect_tools_and_reference_in_expect() -> None:
    case = normalize_case({"prompt": "p", "expect": {"tools": [{"name": "t", "args": {"a": 1}}], "reference": "r"}})
    assert [c.to_dict() for c in case.turns[0].expected_tools] == [{"name": "t", "args": {"a": 1}}]
    assert case.reference == "r" == case.turns[0].expected_response


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"id": "k1", "expect": {}}, "no prompt"),
        ({"id": "k2", "prompt": 5}, "prompt must be a string"),
        ({"id": "k3", "prompt": "p", "expect": {"refuse": "yes"}}, "expect.refuse must be true or false"),
        ({"id": "k4", "prompt": "p", "expect": {"regex": ["("]}}, "does not compile"),
        ({"id": "k5", "prompt": "p", "expect": ["x"]}, "expect must be an object"),
        ({"id": "k6", "prompt": "p", "history": [{"role": "robot", "content": "x"}]}, "unknown role"),
        ({"id": "k7", "prompt": "p", "expect": {"refuse": True, "refusal": False}}, "contradicts"),
        ({"id": "k8", "prompt": "p", "must_not": [1]}, "must_not must be a list of strings"),
        ({"id": "k9", "prompt": "p", "turns": ["a"]}, "either prompt or turns"),
        ({"id": "k10", "prompt": "p", "expect": {"tool_match": "SOMETIMES"}}, "tool_match must be one of"),
        ({"id": "k11", "prompt": "p", "tool_responses": [{"name": "x"}]}, "needs a name and a response"),
    ],
)
def test_contract_malformed_cases(raw: dict, needle: str) -> None:
    with pytest.raises(DatasetError) as err:
        normalize_case(raw, "contract")
    assert needle in str(err.value) and f'case "{raw["id"]}"' in str(err.value)


# ---------------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("raw", "shape"),
    [
        ({"eval_id": "a", "conversation": []}, "adk"),
        ({"evalId": "a", "conversationScenario": {}}, "adk"),
        ({"eval_id": "a", "conversation": [], "original": []}, "adk"),  # converted legacy ADK record
        ({"prompt": "p", "expect": {}}, "contract"),
        ({"prompt": "p", "must_not": ["x"]}, "contract"),
        ({"prompt": "p", "reference": "r"}, "contract"),
        ({"prompt": "p", "response": "r"}, "vertex"),
        ({"prompt": {"parts": [{"text": "p"}]}}, "vertex"),
        ({"agent_data": {}}, "vertex"),
        ({"request": {"contents": []}, "response": {}}, "vertex"),
    ],
)
def test_detect_shape(raw: dict, shape: str) -> None:
    assert detect_shape(raw) == shape


def test_unknown_shape_and_bad_declared_shape() -> None:
    with pytest.raises(DatasetError, match=r'case "r1": unrecognized case shape \(keys: foo\)'):
        normalize_case({"foo": 1}, row_id="r1")
    with pytest.raises(DatasetError, match="unknown case shape 'golden'"):
        normalize_case({"prompt": "p"}, "golden", row_id="r2")
    with pytest.raises(DatasetError, match="must be a JSON object"):
        normalize_case(["prompt"], row_id="r3")  # type: ignore[arg-type]


def test_normalize_never_mutates_the_raw_case() -> None:
    raw = {"prompt": "p", "expect": {"contains": ["a"], "refuse": False}, "must_not": ["b"]}
    before = copy.deepcopy(raw)
    case = normalize_case(raw)
    assert raw == before and case.raw == before


# ------------------------------------------------------------------------------- robustness


_KEYS = [
    "eval_id",
    "conversation",
    "conversation_scenario",
    "user_content",
    "final_response",
    "intermediate_data",
    "tool_uses",
    "tool_responses",
    "intermediate_responses",
    "invocation_events",
    "parts",
    "text",
    "role",
    "name",
    "args",
    "response",
    "session_input",
    "prompt",
    "reference",
    "reference_trajectory",
    "tool_name",
    "tool_input",
    "agent_data",
    "agents",
    "turns",
    "events",
    "author",
    "content",
    "function_call",
    "request",
    "contents",
    "messages",
    "conversation_history",
    "system_instruction",
    "expect",
    "must_not",
    "contains",
    "refuse",
    "regex",
    "tools",
    "history",
    "system",
    "starting_prompt",
    "criteria",
    "user",
    "tool_match",
]
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "user", "model", "{", "[1]", "("]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=st.dictionaries(st.sampled_from(_KEYS), _json, max_size=5),
    shape=st.sampled_from([None, "adk", "vertex", "contract"]),
)
def test_malformed_input_raises_dataset_error_and_nothing_else(raw: dict, shape: str | None) -> None:
    """Whatever JSON a dataset holds, normalizing gives a Case or a DatasetError: never a TypeError or KeyError."""
    try:
        case = normalize_case(raw, shape, row_id="fuzz")
    except DatasetError as exc:
        assert str(exc).startswith('case "fuzz": ') and "\n" not in str(exc)
    else:
        assert case.turns and all(isinstance(t.user, str) for t in case.turns) and case.raw == raw


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def test_mutated_valid_cases_fail_cleanly() -> None:
    """One leaf of a valid case replaced by a wrong type (or removed): a Case or a one-line DatasetError."""
    import random

    seeds: list[dict] = [
        {"agent_data": _agent_data(), "reference": "x"},
        {"request": {"contents": [{"role": "user", "parts": [{"text": "q"}]}]}, "response": "r"},
        {"request": {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]}},
        {
            "turns": ["a", {"user": "b", "tools": [{"name": "t"}]}],
            "tool_responses": [{"name": "t", "response": 1}],
            "history": [{"role": "user", "content": "h"}],
            "expect": {"tools": [{"name": "t", "args": {}}], "regex": ["a"], "contains": ["x"]},
            "must_not": ["y"],
        },
    ]
    for path in _adk_evalset_files():
        seeds += json.loads(path.read_text(encoding="utf-8"))["eval_cases"]
    wrong = [None, 1, "x", [], {}, [1], [{}], {"parts": None}, {"parts": [None]}, True, 1.5, [[1]], {"text": 3}]
    rng = random.Random(20260115)
    outcomes = {"case": 0, "error": 0}
    for _ in range(1500):
        raw = copy.deepcopy(rng.choice(seeds))
        path = rng.choice(_paths(raw)[1:])
        parent = raw
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(wrong))
        for shape in (None, "adk", "vertex", "contract"):
            try:
                normalize_case(raw, shape, row_id="m")
                outcomes["case"] += 1
            except DatasetError as exc:
                assert "\n" not in str(exc) and str(exc).startswith('case "m": ')
                outcomes["error"] += 1
    assert outcomes["case"] > 100 and outcomes["error"] > 100  # both paths were exercised


def test_contract_per_turn_expectations_line_up_with_turns() -> None:
    raw = {
        "turns": ["a", {"user": "b", "tools": [{"name": "t2", "args": {"x": 1}}]}, "c"],
        "expect": {
            "tools": [{"name": "whole"}],
            "turns": [{"tools": [{"name": "t1"}], "contains": ["A"], "reference": "ra"}, None],
        },
    }
    case = normalize_case(raw, row_id="pt")
    assert [[c.name for c in t.expected_tools] for t in case.turns] == [["t1"], ["t2"], []]
    assert case.turns[0].expected_response == "ra"
    assert case.expect["tools"] == [{"name": "whole", "args": {}}]  # case-level trajectory stays as it is
    assert case.expect["turns"] == [
        {"tools": [{"name": "t1", "args": {}}], "must_contain": ["A"], "reference": "ra"},
        {"tools": [{"name": "t2", "args": {"x": 1}}]},
    ]
    single = normalize_case({"prompt": "p", "expect": {"tools": [{"name": "t"}]}})
    assert "turns" not in single.expect  # a single-turn case's expect.tools is not duplicated per turn
    with pytest.raises(DatasetError, match=r'case "x": expect.turns has 2 entries but the case has 1 turns'):
        normalize_case({"prompt": "p", "expect": {"turns": [{}, {}]}}, row_id="x")
    with pytest.raises(DatasetError, match=r'case "y": expect.turns\[0\]: expect.refuse must be true or false'):
        normalize_case({"prompt": "p", "expect": {"turns": [{"refuse": 1}]}}, row_id="y")
