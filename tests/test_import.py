"""import_dataset on every interop file (in its original folder layout) and on hand-made edge cases.

Each imported folder is read back with goldenkit.read_dataset; counts, ids and fields are checked
against the source files themselves.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _shared import needs_shared, shared_dir, shared_path
from test_formats import to_camel

from goldenkit import read_dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.formats import import_dataset, normalize_case
from goldenkit.formats._adk import DEFAULT_CRITERIA
from goldenkit.formats._inspect import MCQ_INSTRUCTION

INTEROP = shared_dir("interop")
needs_interop = needs_shared("interop")
ADDED = "2026-01-15"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interop files put back at their original paths (``a__b__c.json`` -> ``<repo>/a/b/c.json``)."""
    shared_path("interop")
    root = tmp_path_factory.mktemp("interop")
    # results/ holds other harnesses' result files, not datasets: not part of this tree
    for repo in sorted(p for p in INTEROP.iterdir() if p.is_dir() and p.name != "results"):
        for f in repo.iterdir():
            target = root / repo.name / Path(*f.name.split("__"))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
    return root


def _import(src: Path, out: Path, fmt: str, **kw: Any):
    path = import_dataset(src, out, fmt, added=ADDED, **kw)
    assert path == out
    return read_dataset(out)


def _rows(ds) -> list[dict]:
    """The dataset's rows as written: the DataFrame's columns plus each row's case."""
    return [dict(r, case=ds.raw_case(r["id"])) for r in ds.rows.to_dict("records")]


# ---------------------------------------------------------------------------------------- ADK

ADK = "google__adk-python"
# (path under the repo, criteria expected from the test_config.json beside it, or None for ADK's default)
ADK_FILES = [
    (
        "tests/integration/fixture/hello_world_agent/roll_die.test.json",
        {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5},
    ),
    ("tests/integration/fixture/home_automation_agent/simple_test2.test.json", {"tool_trajectory_avg_score": 1.0}),
    ("tests/integration/fixture/home_automation_agent/test_files/dependent_tool_calls.test.json", None),
    ("tests/integration/fixture/home_automation_agent/test_files/simple_multi_turn_conversation.test.json", None),
    ("tests/integration/fixture/trip_planner_agent/test_files/trip_inquiry_sub_agent.test.json", None),
    ("tests/integration/fixture/trip_planner_agent/trip_inquiry.test.json", {"response_match_score": 0.5}),
    ("tests/integration/fixture/conversation_scenario/conversation_scenario.test.json", None),
    ("tests/integration/fixture/elicitation_agent/elicitation_flow.test.json", None),
    ("contributing/samples/live/live_non_blocking_tool_agent/live_non_blocking_tool_agent.evalset.json", None),
]


@needs_interop
def test_every_adk_interop_file_is_listed() -> None:
    names = {f.name for f in (INTEROP / ADK).iterdir() if f.name.endswith((".test.json", ".evalset.json"))}
    assert names == {p.replace("/", "__") for p, _ in ADK_FILES}


@needs_interop
@pytest.mark.parametrize(("rel", "criteria"), ADK_FILES, ids=[p.rsplit("/", 1)[-1] for p, _ in ADK_FILES])
def test_import_adk_file(tree: Path, tmp_path: Path, rel: str, criteria: dict | None) -> None:
    src = tree / ADK / rel
    doc = json.loads(src.read_text(encoding="utf-8"))
    ds = _import(src, tmp_path / "out", "adk")
    rows = _rows(ds)
    assert ds.case_format == "adk" and ds.version == "1"
    info = ds.manifest["imported_from"]["files"][0]
    assert info["criteria_source"] == ("default" if criteria is None else "test_config.json")
    want_criteria = DEFAULT_CRITERIA if criteria is None else criteria
    stem = src.name.removesuffix(".test.json").removesuffix(".evalset.json")
    for row in rows:
        assert (row["split"], row["source"], row["added"], row["slice"]) == ("dev", src.name, ADDED, stem)
        assert row["case"]["criteria"] == want_criteria
    if isinstance(doc, list):  # legacy format A: the whole file is one case, one invocation per row
        assert info["kind"] == "legacy-a"
        (row,) = rows
        assert row["id"] == src.name
        assert row["case"]["original"] == doc
        case = ds.case(row["id"])
        assert [t.user for t in case.turns] == [t["query"] for t in doc]
        assert [t.expected_response for t in case.turns] == [t.get("reference", "") for t in doc]
        assert [[c.to_dict() for c in t.expected_tools] for t in case.turns] == [
            [{"name": u["tool_name"], "args": u["tool_input"]} for u in t["expected_tool_use"]] for t in doc
        ]
        return
    assert info["kind"] == "evalset"
    assert info["eval_set"] == {k: v for k, v in doc.items() if k != "eval_cases"}  # the set's own fields are kept
    assert [r["id"] for r in rows] == [c["eval_id"] for c in doc["eval_cases"]]
    for row, raw in zip(rows, doc["eval_cases"], strict=True):
        # lossless: the EvalCase is stored as written, plus the criteria keys
        stored = dict(row["case"])
        assert stored.pop("criteria") == want_criteria and stored.pop("criteria_source") in (
            "default",
            "test_config.json",
        )
        assert stored == raw
        case = ds.case(row["id"])
        conv = raw.get("conversation") or []
        assert len(case.turns) == max(1, len(conv))
        n_tools = sum(len((inv.get("intermediate_data") or {}).get("tool_uses", [])) for inv in conv)
        assert sum(len(t.expected_tools) for t in case.turns) == n_tools
        assert ("multi_turn" in row["tags"]) == (len(conv) > 1)
        assert ("tool_use" in row["tags"]) == (n_tools > 0)
        assert ("simulated_user" in row["tags"]) == ("conversation_scenario" in raw)
        assert case.criteria["tool_trajectory_avg_score"] == want_criteria.get("tool_trajectory_avg_score")


@needs_interop
def test_import_adk_folder_recursively(tree: Path, tmp_path: Path) -> None:
    ds = _import(tree / ADK, tmp_path / "out", "adk")
    expected = 0
    for rel, _ in ADK_FILES:
        doc = json.loads((tree / ADK / rel).read_text(encoding="utf-8"))
        expected += 1 if isinstance(doc, list) else len(doc["eval_cases"])
    assert len(ds.rows) == expected == 10
    files = {f["file"] for f in ds.manifest["imported_from"]["files"]}
    assert files == {rel for rel, _ in ADK_FILES}
    # each file keeps the criteria of its own folder
    by_source = {r["source"]: r["case"]["criteria"] for r in _rows(ds)}
    assert by_source["roll_die.test.json"]["response_match_score"] == 0.5
    assert by_source["dependent_tool_calls.test.json"] == DEFAULT_CRITERIA


@needs_interop
def test_import_adk_camel_case_evalset(tree: Path, tmp_path: Path) -> None:
    """An EvalSet whose cases use camelCase keys (adk web API style) imports to the same cases."""
    src = tree / ADK / "tests/integration/fixture/home_automation_agent/test_files/dependent_tool_calls.test.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    camel = dict(doc, eval_cases=[to_camel(c) for c in doc["eval_cases"]])
    assert "userContent" in camel["eval_cases"][0]["conversation"][0]
    camel_src = tmp_path / "camel" / "dependent_tool_calls.test.json"
    camel_src.parent.mkdir()
    camel_src.write_text(json.dumps(camel), encoding="utf-8")
    a = _import(src, tmp_path / "snake_out", "adk")
    b = _import(camel_src, tmp_path / "camel_out", "adk")
    (rid,) = list(a.rows["id"])
    assert list(b.rows["id"]) == [rid]
    ca, cb = a.case(rid), b.case(rid)
    assert [(t.user, t.expected_response, t.expected_tools) for t in ca.turns] == [
        (t.user, t.expected_response, t.expected_tools) for t in cb.turns
    ]
    assert sum(len(t.expected_tools) for t in cb.turns) == 2


@needs_interop
def test_import_adk_legacy_format_b(tree: Path, tmp_path: Path) -> None:
    """Legacy format B (a list of {name, data, initial_session}) built from the two legacy-A fixtures."""
    fixture = tree / ADK / "tests/integration/fixture"
    a = json.loads((fixture / "home_automation_agent/simple_test2.test.json").read_text())
    b = json.loads((fixture / "trip_planner_agent/trip_inquiry.test.json").read_text())
    session = {"app_name": "trip_planner_agent", "user_id": "u1", "state": {"origin": "SF"}}
    legacy = [{"name": "home", "data": a}, {"name": "trip", "data": b, "initial_session": session}]
    src = tmp_path / "legacy.test.json"
    src.write_text(json.dumps(legacy), encoding="utf-8")
    ds = _import(src, tmp_path / "out", "adk")
    assert list(ds.rows["id"]) == ["home", "trip"]
    assert ds.manifest["imported_from"]["files"][0]["kind"] == "legacy-b"
    home, trip = ds.case("home"), ds.case("trip")
    assert len(home.turns) == len(a) and len(trip.turns) == len(b) == 2
    assert trip.session == session and home.session is None
    assert trip.turns[1].expected_tools[0].to_dict() == {
        "name": "transfer_to_agent",
        "args": {"agent_name": "indentify_agent"},
    }
    assert trip.turns[0].expected_tools == ()
    assert ds.raw_case("trip")["original"] == legacy[1]
    # ADK's own converter reads the same tool calls and texts
    lesm = pytest.importorskip("google.adk.evaluation.local_eval_sets_manager")
    theirs = lesm.convert_eval_set_to_pydantic_schema("x", legacy)
    for ours, their_case in zip((home, trip), theirs.eval_cases, strict=True):
        for turn, inv in zip(ours.turns, their_case.conversation, strict=True):
            assert [c.to_dict() for c in turn.expected_tools] == [
                {"name": c.name, "args": c.args} for c in inv.intermediate_data.tool_uses
            ]
            assert turn.expected_response == "\n".join(p.text for p in inv.final_response.parts if p.text is not None)


def test_import_adk_legacy_mock_outputs_become_tool_responses(tmp_path: Path) -> None:
    src = tmp_path / "mock.test.json"
    rows = [
        {
            "query": "q",
            "expected_tool_use": [{"tool_name": "t", "tool_input": {"x": 1}, "mock_tool_output": {"y": 2}}],
            "expected_intermediate_agent_responses": [{"author": "sub", "text": "hm"}],
        }
    ]
    src.write_text(json.dumps(rows), encoding="utf-8")
    case = _import(src, tmp_path / "out", "adk").case("mock.test.json")
    (turn,) = case.turns
    assert (turn.tool_responses[0].name, turn.tool_responses[0].args, turn.tool_responses[0].response) == (
        "t",
        {"x": 1},
        {"y": 2},
    )
    assert turn.intermediate_responses == (("sub", "hm"),)
    assert turn.expected_response == ""  # ADK's legacy default reference is ""


def test_import_adk_refuses_security_agent_schema(tmp_path: Path) -> None:
    src = tmp_path / "security.evalset.json"
    doc = {
        "name": "s",
        "version": "1",
        "test_cases": [{"id": "t1", "input": "x", "expected_output": {"contains": ["y"]}}],
    }
    src.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(
        DatasetError, match=r"security\.evalset\.json: not an ADK EvalSet: this file uses a custom schema"
    ):
        import_dataset(src, tmp_path / "out", "adk")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ({"eval_set_id": "s", "eval_cases": [{"conversation": []}]}, "eval_cases[0] has no eval_id"),
        (
            {"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [{"final_response": None}]}]},
            'eval_cases[0]: case "a": conversation[0] has no user_content',
        ),
        (
            {
                "eval_set_id": "s",
                "eval_cases": [
                    {"eval_id": "a", "conversation_scenario": {"starting_prompt": "x"}},
                    {"eval_id": "a", "conversation_scenario": {"starting_prompt": "y"}},
                ],
            },
            'eval_cases[1]: duplicate id "a" (first at bad.test.json eval_cases[0])',
        ),
        ([{"reference": "no query"}], "legacy turn [0] has no query"),
        ("just a string", "top level is str"),
    ],
)
def test_import_adk_malformed(tmp_path: Path, doc: Any, needle: str) -> None:
    src = tmp_path / "bad.test.json"
    src.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", "adk")
    assert needle in str(err.value) and str(err.value).startswith("bad.test.json")


# ------------------------------------------------------------------------------------- Vertex


@needs_interop
def test_import_vertex_lab_frame(tree: Path, tmp_path: Path) -> None:
    src = tree / "vladkol__agent-evaluation-lab" / "evaluator" / "eval_data_researcher.json"
    frame = json.loads(src.read_text(encoding="utf-8"))
    ds = _import(src, tmp_path / "out", "vertex")
    assert ds.case_format == "vertex"
    assert list(ds.rows["id"]) == ["eval_case_0", "eval_case_1"]
    for row in _rows(ds):
        key = row["id"].removeprefix("eval_case_")
        assert row["case"] == {col: frame[col][key] for col in frame}  # lossless
        case = ds.case(row["id"])
        assert case.prompt == frame["prompt"][key] and case.reference == frame["reference"][key]
        assert len(case.turns[0].expected_tools) == len(frame["reference_trajectory"][key])
        assert row["tags"] == ["tool_use"] and row["slice"] == "eval_data_researcher"


def test_import_vertex_jsonl_csv_and_json_records(tmp_path: Path) -> None:
    records = [
        {"prompt": "p0", "reference": "r0", "category": "a"},
        {"eval_case_id": "named", "prompt": {"parts": [{"text": "p1"}]}, "response": "x", "category": "b"},
        {"request": {"contents": [{"role": "user", "parts": [{"text": "p2"}]}]}, "response": "y", "category": "a"},
    ]
    jl = tmp_path / "cases.jsonl"
    jl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ds = _import(jl, tmp_path / "jl", "vertex", slice="category")
    assert list(ds.rows["id"]) == ["eval_case_0", "named", "eval_case_2"]
    assert list(ds.rows["slice"]) == ["a", "b", "a"]
    assert [ds.case(i).prompt for i in ds.rows["id"]] == ["p0", "p1", "p2"]

    js = tmp_path / "cases.json"
    js.write_text(json.dumps({"eval_cases": records}), encoding="utf-8")
    assert list(_import(js, tmp_path / "js", "vertex").rows["id"]) == ["eval_case_0", "named", "eval_case_2"]

    cs = tmp_path / "cases.csv"
    with cs.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["prompt", "reference", "reference_trajectory", "conversation_history"])
        w.writerow(["q0", "", json.dumps([{"tool_name": "f", "tool_input": {"a": 1}}]), ""])
        w.writerow(["q1", "r1", "", json.dumps([{"role": "user", "parts": [{"text": "h"}]}])])
    ds = _import(cs, tmp_path / "cs", "vertex")
    c0, c1 = ds.case("eval_case_0"), ds.case("eval_case_1")
    assert c0.reference is None and "reference" not in ds.raw_case(ds.ids[0])  # empty cell = missing
    assert c0.turns[0].expected_tools[0].to_dict() == {"name": "f", "args": {"a": 1}}
    assert ds.raw_case(ds.ids[0])["reference_trajectory"] == [{"tool_name": "f", "tool_input": {"a": 1}}]
    assert c1.reference == "r1" and [m.content for m in c1.history] == ["h"]


def test_import_vertex_errors_name_the_line(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text('{"prompt": "ok"}\n{"response": "no prompt"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r'^bad\.jsonl:2: case "eval_case_1": Vertex eval case has no prompt'):
        import_dataset(src, tmp_path / "out", "vertex")
    src.write_text('{"prompt": "ok"}\n{"prompt": \n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"^bad\.jsonl:2: invalid JSON"):
        import_dataset(src, tmp_path / "out", "vertex")
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"eval_case_id": "a", "prompt": "x"}\n{"eval_case_id": "a", "prompt": "y"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r'^dup\.jsonl:2: duplicate id "a" \(first at dup\.jsonl:1\)'):
        import_dataset(dup, tmp_path / "out", "vertex")


# ------------------------------------------------------------------------------------- golden

GOLDEN = "qa-guru__java-ai-golden"
GOLDEN_FILES = {
    "src/main/resources/eval/generation/golden-generation.jsonl": None,
    "src/test/java/eval/generation/golden-generation.jsonl": "src/test/java/eval/generation/dataset.json",
    "src/test/java/eval/generation/holdout/golden-holdout.jsonl": "src/test/java/eval/generation/holdout/dataset.json",
}


@needs_interop
@pytest.mark.parametrize(("rel", "manifest_rel"), GOLDEN_FILES.items(), ids=lambda v: str(v).rsplit("/", 1)[-1])
def test_import_golden_file(tree: Path, tmp_path: Path, rel: str, manifest_rel: str | None) -> None:
    src = tree / GOLDEN / rel
    lines = src.read_text(encoding="utf-8").split("\n")
    data_lines = [
        (i, json.loads(line)) for i, line in enumerate(lines, start=1) if line.strip() and not line.startswith("#")
    ]
    comments = [i for i, line in enumerate(lines, start=1) if line.startswith("#")]
    split = "holdout" if "holdout" in rel else "dev"
    ds = _import(src, tmp_path / "out", "golden", split=split)
    rows = _rows(ds)
    assert [r["id"] for r in rows] == [row["id"] for _, row in data_lines]
    assert len(rows) == 8 and len(rows) == len(lines) - len(comments) - lines.count("")
    kept = ds.manifest["imported_from"]["files"][0].get("comments", [])
    assert kept == [{"line": i, "text": lines[i - 1]} for i in comments]  # comment lines are not rows, but kept
    if "main/resources" in rel or "holdout" in rel:
        assert comments == [1]
    for row, (_, raw) in zip(rows, data_lines, strict=True):
        assert row["case"] == raw and row["split"] == split  # stored as written
        case = ds.case(row["id"])
        assert case.expect.get("must_contain", []) == raw.get("expect", {}).get("contains", [])
        assert set(case.expect.get("must_not", [])) == set(raw["must_not"])
        assert ("refusal" in row["tags"]) == bool(raw["expect"].get("refuse"))
        assert ("red" in row["tags"]) == bool(raw["expect"].get("red") or raw["expect"].get("adversarial"))
    manifest = ds.manifest
    if manifest_rel is None:
        assert ds.version == "1" and manifest["name"] == "golden-generation"
    else:
        source_manifest = json.loads((tree / GOLDEN / manifest_rel).read_text(encoding="utf-8"))
        assert ds.name == source_manifest["name"] and ds.version == source_manifest["version"]
        assert [e["version"] for e in manifest["changelog"]] == [source_manifest["version"]]
        assert manifest["changelog"][0]["why"] == source_manifest["changelog"][0].split(": ", 1)[1]
        assert manifest["description"] == source_manifest["description"]
        assert manifest["imported_from"]["files"][0]["manifest"] == source_manifest


@needs_interop
def test_import_golden_red_and_adversarial_alias(tree: Path, tmp_path: Path) -> None:
    new = _import(
        tree / GOLDEN / "src/main/resources/eval/generation/golden-generation.jsonl", tmp_path / "a", "golden"
    )
    old = _import(tree / GOLDEN / "src/test/java/eval/generation/golden-generation.jsonl", tmp_path / "b", "golden")
    red_new = sorted(i for i, t in zip(new.rows["id"], new.rows["tags"], strict=True) if "red" in t)
    red_old = sorted(i for i, t in zip(old.rows["id"], old.rows["tags"], strict=True) if "red" in t)
    assert red_new == ["hallucinate-error", "hallucinate-locator", "mixed-layer"]
    assert red_old == ["hallucinate-error", "hallucinate-locator"]  # the older file spells it "adversarial"
    assert old.case("login-401-ui").expect["layer"] == "e2e"


@needs_interop
def test_import_golden_slice_from_a_nested_field(tree: Path, tmp_path: Path) -> None:
    src = tree / GOLDEN / "src/test/java/eval/generation/holdout/golden-holdout.jsonl"
    with pytest.raises(
        DatasetError,
        match=r'golden-holdout\.jsonl:7: case "holdout-refuse-api-key" has no value for the slice field '
        r'"expect\.layer"',
    ):
        import_dataset(src, tmp_path / "x", "golden", slice="expect.layer")
    layered = tmp_path / "layered.jsonl"
    lines = [line for line in src.read_text(encoding="utf-8").split("\n") if '"layer"' in line]
    layered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = _import(layered, tmp_path / "y", "golden", slice="expect.layer")
    assert list(ds.rows["slice"]) == [json.loads(line)["expect"]["layer"] for line in lines] and len(lines) == 5
    ds = _import(src, tmp_path / "z", "golden", slice="auth-holdout", source="qa-guru")
    assert set(ds.rows["slice"]) == {"auth-holdout"} and set(ds.rows["source"]) == {"qa-guru"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"id":"a","prompt":"x"}\n# c\n{"id":"a","prompt":"y"}\n', 'g.jsonl:3: duplicate id "a" (first on line 1)'),
        ('{"prompt":"x"}\n', "g.jsonl:1: golden row has no id"),
        ('{"id":"  ","prompt":"x"}\n', "g.jsonl:1: golden row has no id"),
        ("# only a comment\n\n", "g.jsonl: no golden rows"),
        (
            '{"id":"a","prompt":"x","expect":{"refuse":"yes"}}\n',
            'g.jsonl:1: case "a": expect.refuse must be true or false',
        ),
        ('{"id":"a"}\n', 'g.jsonl:1: case "a": contract case has no prompt'),
        ('{"id":"a","prompt":"x"}\n{"id":\n', "g.jsonl:2: invalid JSON"),
    ],
)
def test_import_golden_malformed(tmp_path: Path, text: str, needle: str) -> None:
    src = tmp_path / "g.jsonl"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", "golden")
    assert str(err.value).startswith(needle)


# ------------------------------------------------------------------------------- openai/evals

EVALS = "openai__evals"
EVALS_FILES = ["test_match", "test_fuzzy_match", "logic"]


@needs_interop
@pytest.mark.parametrize("name", EVALS_FILES)
def test_import_openai_evals_samples(tree: Path, tmp_path: Path, name: str) -> None:
    src = tree / EVALS / "evals/registry/data" / name / "samples.jsonl"
    raw = src.read_bytes()
    samples = [json.loads(line) for line in raw.decode().split("\n") if line]
    ds = _import(src, tmp_path / "out", "openai-evals")
    rows = _rows(ds)
    width = len(str(len(samples)))
    assert [r["id"] for r in rows] == [f"{name}-{i:0{width}d}" for i in range(1, len(samples) + 1)]
    assert {r["slice"] for r in rows} == {name}
    assert ds.case_format == "contract"
    short = ds.manifest["imported_from"]["files"][0]["answer_mapping"] == "must_contain_any"
    for row, sample in zip(rows, samples, strict=True):
        assert row["case"]["original"] == sample  # lossless
        case = ds.case(row["id"])
        ideal = sample["ideal"] if isinstance(sample["ideal"], list) else [sample["ideal"]]
        assert case.reference == ideal[0] and row["case"]["answers"] == ideal
        assert case.expect.get("must_contain_any") == (ideal if short else None)
        chat = sample["input"]
        assert case.prompt == chat[-1]["content"]
        shots = [m for m in chat if m.get("name")]
        assert [(m.role, m.content) for m in case.history] == [
            ({"example_user": "user", "example_assistant": "assistant"}[m["name"]], m["content"]) for m in shots
        ]
    if name == "logic":  # long model-graded answers: reference only; system-only input is sent as the user turn
        assert not short
        assert ds.case(rows[0]["id"]).system is None and "note" in rows[0]["case"]
    else:
        assert short
        assert ds.case(rows[0]["id"]).system == samples[0]["input"][0]["content"]
    if name == "test_match":
        assert not raw.endswith(b"\n")  # no trailing newline, imported all the same
        assert [ds.case(r["id"]).expect["must_contain_any"] for r in rows] == [["time"], ["George Washington"], ["15"]]


@needs_interop
def test_import_openai_evals_folder(tree: Path, tmp_path: Path) -> None:
    """A registry data folder: every samples.jsonl below it, each named after its own folder."""
    ds = _import(tree / EVALS / "evals/registry/data", tmp_path / "out", "openai-evals")
    assert len(ds.rows) == 3 + 3 + 10
    assert sorted(set(ds.rows["slice"])) == ["logic", "test_fuzzy_match", "test_match"]
    assert {f["file"] for f in ds.manifest["imported_from"]["files"]} == {f"{n}/samples.jsonl" for n in EVALS_FILES}
    assert "logic-01" in set(ds.rows["id"]) and "test_match-3" in set(ds.rows["id"])


def test_import_openai_evals_refuses_git_lfs_pointer(tmp_path: Path) -> None:
    pointer = (
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:f23408d8d2d7f5a6b1c7e0f1a0e4e9a2b1e8c3d0f5a6b7c8d9e0f1a2b3c4d5e6\n"
        "size 499\n"
    )
    src = tmp_path / "samples.jsonl"
    src.write_text(pointer, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", "openai-evals")
    msg = str(err.value)
    assert msg.startswith("samples.jsonl: is a Git LFS pointer file") and "git lfs pull" in msg and "499 bytes" in msg
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"input": "a", "ideal": "b"}\n\n{"input": "c", "ideal": "d"}\n', "s.jsonl:2: blank line"),
        ('{"input": "a", "ideal": "b"}\n\n', "s.jsonl:2: blank line"),
        ('{"input": "a", "ideal": 3}\n', 's.jsonl:1: "ideal" must be a string or a list of strings'),
        ('{"ideal": "b"}\n', 's.jsonl:1: sample has no "input"'),
        ('{"sample": [{"role": "user", "content": "x"}]}\n', "few-shot file"),
        ('{"input": [], "ideal": "b"}\n', "s.jsonl:1: input must be a non-empty"),
        ('{"input": [{"role": "wizard", "content": "x"}]}\n', "s.jsonl:1: input[0] has unknown role"),
        ("", "s.jsonl: empty samples file"),
    ],
)
def test_import_openai_evals_malformed(tmp_path: Path, text: str, needle: str) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", "openai-evals")
    assert needle in str(err.value)


def test_import_openai_evals_gzip_and_string_input(tmp_path: Path) -> None:
    src = tmp_path / "arith.jsonl.gz"
    src.write_bytes(gzip.compress(b'{"input": "2+2=", "ideal": ["4", "four"]}'))
    ds = _import(src, tmp_path / "out", "openai-evals", slice="maths")
    assert list(ds.rows["id"]) == ["arith-1"] and list(ds.rows["slice"]) == ["maths"]
    case = ds.case("arith-1")
    assert case.prompt == "2+2=" and case.expect["must_contain_any"] == ["4", "four"] and case.reference == "4"
    assert ds.manifest["imported_from"]["files"][0]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------- inspect

INSPECT = "UKGovernmentBEIS__inspect_ai"
INSPECT_FILES = [
    "tests/dataset/test_dataset/samples.jsonl",
    "tests/dataset/test_dataset/samples.csv",
    "tests/dataset/test_dataset/samples-mcq.jsonl",
    "tests/dataset/test_dataset/samples-mcq.csv",
    "tests/dataset/test_dataset/samples-md.jsonl",
    "tests/dataset/test_dataset/samples-md.csv",
    "tests/dataset/test_dataset/dataset.jsonl",
    "src/inspect_ai/dataset/_examples/security_guide.jsonl",
    "src/inspect_ai/dataset/_examples/biology_qa.jsonl",
]


def _inspect_records(path: Path) -> list[dict]:
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh, dialect="unix"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@needs_interop
def test_every_inspect_interop_file_is_listed() -> None:
    assert {f.name for f in (INTEROP / INSPECT).iterdir()} == {p.replace("/", "__") for p in INSPECT_FILES}


@needs_interop
@pytest.mark.parametrize("rel", INSPECT_FILES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_import_inspect_file(tree: Path, tmp_path: Path, rel: str) -> None:
    src = tree / INSPECT / rel
    records = _inspect_records(src)
    ds = _import(src, tmp_path / "out", "inspect")
    rows = _rows(ds)
    assert len(rows) == len(records) and ds.case_format == "contract"
    stem = src.name.rsplit(".", 1)[0]
    prefix = src.parent.name if stem == "samples" else stem  # a file named samples.* takes its folder's name
    assert {r["slice"] for r in rows} == {prefix}
    width = len(str(len(records)))
    for n, (row, rec) in enumerate(zip(rows, records, strict=True), start=1):
        assert row["case"]["original"] == rec  # every column, as written
        assert row["id"] == (str(rec["id"]) if "id" in rec else f"{prefix}-{n:0{width}d}")
        case = ds.case(row["id"])
        text_in = rec.get("input", rec.get("question"))
        if isinstance(text_in, list):
            assert case.prompt == text_in[-1]["content"]
        elif "choices" in rec:
            assert case.prompt.startswith(text_in + "\n\nA) 1\nB) 2\n") and case.prompt.endswith(MCQ_INSTRUCTION)
        else:
            assert case.prompt == text_in
        target = rec.get("target", rec.get("answer"))
        if "choices" in rec:
            assert row["case"]["choices"] == [str(i) for i in range(1, 11)]
            assert case.reference == "1" and case.expect["regex"] == [r"ANSWER\s*:[^\n]*\bA\b"]
        else:
            assert case.reference == target and row["case"]["answers"] == [target]
        if "metadata" in rec:
            assert row["case"]["metadata"] == {"name": "jim", "age": 42, "foo": "bar"}
    if "biology" in rel:
        assert [r["id"] for r in rows] == [f"q{i}" for i in range(1, 21)]
        notes = ds.manifest["imported_from"]["files"][0]
        assert (notes["input_field"], notes["target_field"], notes["answer_mapping"]) == (
            "question",
            "answer",
            "must_contain_any",
        )
    if "security_guide" in rel:  # long free-text targets are references for a model-graded scorer
        assert all("expect" not in r["case"] for r in rows)
    if rel.endswith("samples.csv"):
        assert rows[0]["case"]["original"]["sandbox"] == '["docker","compose.yaml"]'
        assert rows[0]["case"]["original"]["extra"] == "data"


@needs_interop
def test_import_inspect_jsonl_and_csv_agree(tree: Path, tmp_path: Path) -> None:
    base = tree / INSPECT / "tests/dataset/test_dataset"
    for stem in ("samples", "samples-mcq", "samples-md"):
        a = _import(base / f"{stem}.jsonl", tmp_path / f"{stem}-j", "inspect")
        b = _import(base / f"{stem}.csv", tmp_path / f"{stem}-c", "inspect")
        ca, cb = a.case(a.rows["id"][0]), b.case(b.rows["id"][0])
        assert (ca.prompt, ca.reference, ca.expect) == (cb.prompt, cb.reference, cb.expect)
        assert {k: v for k, v in a.raw_case(a.ids[0]).items() if k != "original"} == {
            k: v for k, v in b.raw_case(b.ids[0]).items() if k != "original"
        }


@needs_interop
def test_import_inspect_slice_from_metadata(tree: Path, tmp_path: Path) -> None:
    src = tree / INSPECT / "tests/dataset/test_dataset/samples-md.csv"
    ds = _import(src, tmp_path / "out", "inspect", slice="metadata.name")
    assert list(ds.rows["slice"]) == ["jim"]
    ds = _import(src, tmp_path / "out2", "inspect", slice="label")
    assert list(ds.rows["slice"]) == ["Hello, World"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"input": "", "target": "x"}\n', "s.jsonl:1: input is empty"),
        ('{"target": "x"}\n', "no input column"),
        ('{"input": "q", "target": "x"}\n{"target": "y"}\n', "s.jsonl:2: sample has no input"),
        ('{"input": [{"content": "x"}]}\n', "s.jsonl:1: input[0] has no role"),
        ('{"input": "q", "choices": ["a", "b"], "target": "C"}\n', "neither a choice letter (A-B)"),
        ('{"input": "q", "metadata": "[1, 2]"}\n', "metadata must be an object"),
        ('{"id": "a", "input": "q"}\n{"id": "a", "input": "r"}\n', 's.jsonl:2: duplicate id "a" (first at s.jsonl:1)'),
    ],
)
def test_import_inspect_malformed(tmp_path: Path, text: str, needle: str) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", "inspect")
    assert needle in str(err.value)


def test_import_inspect_chat_with_tool_calls_and_json_list(tmp_path: Path) -> None:
    sample = {
        "id": 7,
        "input": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "1", "function": "get_weather", "arguments": {"city": "Oslo"}}],
            },
            {"role": "tool", "content": "rain", "tool_call_id": "1"},
            {"role": "user", "content": "umbrella?"},
        ],
        "target": ["yes", "Yes"],
    }
    src = tmp_path / "chat.json"
    src.write_text(json.dumps([sample]), encoding="utf-8")
    ds = _import(src, tmp_path / "out", "inspect")
    case = ds.case("7")
    assert (case.system, case.prompt) == ("sys", "umbrella?")
    assert [m.role for m in case.history] == ["user", "assistant", "tool"]
    assert case.history[1].tool_calls[0].to_dict() == {"name": "get_weather", "args": {"city": "Oslo"}}
    assert case.expect["must_contain_any"] == ["yes", "Yes"]


# ------------------------------------------------------------------------------------ general


def test_output_is_deterministic_and_refuses_to_overwrite(tmp_path: Path) -> None:
    src = tmp_path / "g.jsonl"
    src.write_text(
        '{"id":"b","prompt":"ß","must_not":["x"]}\n{"id":"a","prompt":"y","expect":{"refuse":true}}\n', encoding="utf-8"
    )
    import_dataset(src, tmp_path / "one", "golden", added=ADDED)
    import_dataset(src, tmp_path / "two", "golden", added=ADDED)
    for name in ("dataset.jsonl", "dataset.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert "ß" in (tmp_path / "one" / "dataset.jsonl").read_text(encoding="utf-8")  # UTF-8, not \\u escapes
    assert [json.loads(line)["id"] for line in (tmp_path / "one" / "dataset.jsonl").read_text().splitlines()] == [
        "b",
        "a",
    ]
    with pytest.raises(InputError, match="already holds a dataset"):
        import_dataset(src, tmp_path / "one", "golden")
    import_dataset(src, tmp_path / "one", "golden", overwrite=True, split="holdout")
    assert set(read_dataset(tmp_path / "one").rows["split"]) == {"holdout"}


def test_bad_arguments(tmp_path: Path) -> None:
    src = tmp_path / "g.jsonl"
    src.write_text('{"id":"a","prompt":"x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="unknown import format 'csv'"):
        import_dataset(src, tmp_path / "o", "csv")
    with pytest.raises(InputError, match="split must be dev or holdout"):
        import_dataset(src, tmp_path / "o", "golden", split="test")
    with pytest.raises(InputError, match="no such file"):
        import_dataset(tmp_path / "missing.jsonl", tmp_path / "o", "golden")
    with pytest.raises(InputError, match="reads one file"):
        import_dataset(tmp_path, tmp_path / "o", "golden")
    with pytest.raises(InputError, match="added must be a date YYYY-MM-DD"):
        import_dataset(src, tmp_path / "o", "golden", added="15/01/2026")
    zst = tmp_path / "samples.jsonl.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(DatasetError, match=r"samples\.jsonl\.zst: is lz4/zstd-compressed"):
        import_dataset(zst, tmp_path / "o", "openai-evals")
    # format aliases
    assert import_dataset(src, tmp_path / "o", "java-ai-golden") == tmp_path / "o"


def test_imported_cases_read_back_identically(tmp_path: Path) -> None:
    """Dataset.case() gives the same normalized case as normalize_case on the stored dict."""
    src = tmp_path / "g.jsonl"
    src.write_text(
        '{"id":"a","prompt":"x","expect":{"contains":["y"],"adversarial":true},"must_not":["z"]}\n', encoding="utf-8"
    )
    ds = _import(src, tmp_path / "out", "golden")
    assert ds.case("a") == normalize_case(ds.raw_case(ds.ids[0]), "contract", row_id="a")
    assert list(ds.rows["tags"][0]) == ["red"]


def test_text_cells_that_look_like_json_stay_text(tmp_path: Path) -> None:
    """Only nested-JSON columns (and Content-shaped cells) are parsed; a JSON answer or a bracketed prompt is text."""
    vcsv = tmp_path / "v.csv"
    with vcsv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["prompt", "reference", "history", "system_instruction"])
        w.writerow(
            ["[URGENT] where is my order?", '{"status": "ok"}', "free text, not JSON", '{"parts": [{"text": "sys"}]}']
        )
    ds = _import(vcsv, tmp_path / "v", "vertex")
    case = ds.case("eval_case_0")
    assert (case.prompt, case.reference, case.history, case.system) == (
        "[URGENT] where is my order?",
        '{"status": "ok"}',
        (),
        "sys",
    )
    vjsonl = tmp_path / "v.jsonl"
    vjsonl.write_text(json.dumps({"prompt": "p", "reference": '{"a": [1, 2]}'}) + "\n", encoding="utf-8")
    assert _import(vjsonl, tmp_path / "vj", "vertex").case("eval_case_0").reference == '{"a": [1, 2]}'

    icsv = tmp_path / "i.csv"
    with icsv.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["input", "target"])
        w.writerow(["[1, 2] sum these", "3"])
        w.writerow(['[{"role": "user", "content": "hi"}]', "hello"])
    ds = _import(icsv, tmp_path / "i", "inspect")
    assert [ds.case(i).prompt for i in ds.rows["id"]] == ["[1, 2] sum these", "hi"]


@pytest.mark.parametrize(
    ("fmt", "name", "body"),
    [
        ("golden", "g.jsonl", b'# c\r\n{"id":"a","prompt":"x"}\r\n{"id":"b","prompt":"y"}\r\n'),
        ("openai-evals", "o.jsonl", b'{"input":"x","ideal":"1"}\r\n{"input":"y","ideal":"2"}'),
        ("inspect", "i.jsonl", b'{"input":"x","target":"1"}\r\n{"input":"y","target":"2"}\r\n'),
        ("vertex", "v.jsonl", b'{"prompt":"x"}\r\n{"prompt":"y"}\r\n'),
        ("inspect", "i.csv", b"input,target\r\nx,1\r\ny,2\r\n"),
    ],
)
def test_foreign_files_with_crlf_and_bom_import_cleanly(tmp_path: Path, fmt: str, name: str, body: bytes) -> None:
    """Other tools write CRLF and a UTF-8 BOM; the imported dataset is plain LF UTF-8 either way."""
    for variant, data in (("lf", body.replace(b"\r\n", b"\n")), ("crlf", body), ("bom", b"\xef\xbb\xbf" + body)):
        src = tmp_path / variant / name
        src.parent.mkdir()
        src.write_bytes(data)
        ds = _import(src, tmp_path / f"out-{variant}", fmt)
        assert [ds.case(i).prompt for i in ds.rows["id"]] == ["x", "y"]
        out = (tmp_path / f"out-{variant}" / "dataset.jsonl").read_bytes()
        assert b"\r" not in out and not out.startswith(b"\xef\xbb\xbf")
    hashes = {read_dataset(tmp_path / f"out-{v}").sha256 for v in ("lf", "crlf", "bom")}
    assert len(hashes) == 1  # the same rows whatever the source's line ends


@pytest.mark.parametrize("fmt", ["golden", "openai-evals", "inspect", "vertex", "adk"])
def test_non_utf8_source_is_refused_with_its_line(tmp_path: Path, fmt: str) -> None:
    src = tmp_path / ("s.test.json" if fmt == "adk" else "s.jsonl")
    src.write_bytes(b'{"id": "a", "prompt": "x", "input": "x"}\n{"id": "b", "prompt": "caf\xe9"}\n')
    with pytest.raises(DatasetError) as err:
        import_dataset(src, tmp_path / "out", fmt)
    assert "not UTF-8" in str(err.value)
    if fmt != "adk":
        assert str(err.value).startswith(f"{src.name}:2: ")
