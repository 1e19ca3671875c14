"""``goldenkit dataset generate``: scenarios from an agent config, written as a new dataset version.

The written files are checked exactly: the new JSONL is the old file's bytes
followed by the new rows (ids computed here from SHA-256 of the hand-normalized
prompt), the manifest's version and appended changelog entry, and the hash
(the canonical rule over the new file's lines). Model calls go to a real HTTP
server on 127.0.0.1 (tests/fakeserver.py) through the openai provider.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from factories import write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.dataset import canonical_sha256, read_dataset
from goldenkit.errors import ConfigError, InputError, ProviderError
from goldenkit.scenarios._agent_config import read_agent_config
from goldenkit.scenarios._generate import (
    GENERATION_PROMPT,
    PROMPT_SHA256,
    ModelGenerator,
    ScenarioOutputError,
    generate_scenarios,
    parse_scenarios,
)

TODAY = date(2026, 12, 1)
TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order by number.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    }
]
AGENT_TOML = """\
name = "shop-agent"
instruction = "You are the support agent of an online shop. Look orders up before answering."
slices = ["refunds", "shipping"]

[environment]
orders = [{id = "A-1", item = "duvet cover", status = "delivered"}]

[[tools]]
name = "lookup_order"
description = "Look up an order by number."
parameters = {type = "object", properties = {order_id = {type = "string"}}, required = ["order_id"]}
"""
INSTRUCTION = "You are the support agent of an online shop. Look orders up before answering."
EXISTING = [
    {"id": "r1", "slice": "refunds", "split": "holdout", "case": {"prompt": "Can I get a refund for order A-1?"}},
    {
        "id": "s1",
        "slice": "shipping",
        "split": "dev",
        "case": {"scenario": {"starting_prompt": "Where is my parcel?", "plan": "Give order A-1 when asked."}},
    },
]
SCENARIOS = [
    {"starting_prompt": "My duvet cover arrived torn.", "plan": "Ask for a refund; give A-1.", "slice": "refunds"},
    {"starting_prompt": "Can you change my address?", "plan": "Insist.", "slice": "account", "tags": ["hard"]},
]


def gen_id(normalized: str, width: int = 12) -> str:
    """The id rule, computed here from a prompt normalized by hand (casefold, one space)."""
    return "gen-" + hashlib.sha256(normalized.encode("utf-8")).hexdigest()[:width]


def make_dataset(tmp_path: Path, rows: list[dict[str, Any]] = EXISTING) -> Path:
    log = [{"version": "1.0", "date": "2026-11-01", "why": "x"}]
    # goldenkit.toml: other files are copied along
    return write_dataset(
        tmp_path, rows, folder="shop", name="shop", version="1.0", meta={"changelog": log}, toml="[run]\n"
    )


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    return make_dataset(tmp_path)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(AGENT_TOML, encoding="utf-8")
    return path


class Scripted:
    """A callable generator answering from a list, recording each call's count and seed."""

    def __init__(self, *outputs: Any) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[dict[str, Any], int, int | None]] = []

    def __call__(self, config: dict[str, Any], count: int, seed: int | None) -> Any:
        self.calls.append((config, count, seed))
        return self.outputs[min(len(self.calls), len(self.outputs)) - 1]


def expected_row(row_id: str, scenario: dict[str, Any], model: str = "scripted") -> dict[str, Any]:
    return {
        "id": row_id,
        "slice": scenario["slice"],
        "tags": scenario.get("tags", []),
        "split": "dev",
        "source": f"generated:{model}:2026-12-01",
        "added": "2026-12-01",
        "case": {
            "scenario": {"starting_prompt": scenario["starting_prompt"], "plan": scenario["plan"]},
            "system": INSTRUCTION,
            "tools": TOOLS,
        },
    }


def new_rows(dest: Path, src: Path) -> list[dict[str, Any]]:
    """The rows after the old file's bytes (which must be kept exactly)."""
    old, new = (src / "dataset.jsonl").read_bytes(), (dest / "dataset.jsonl").read_bytes()
    assert new.startswith(old)
    return [json.loads(line) for line in new[len(old) :].decode().splitlines()]


# --------------------------------------------------------------------------- the callable generator


def test_callable_generator_writes_a_new_version(ds: Path, agent: Path) -> None:
    before = {p.name: p.read_bytes() for p in ds.iterdir()}
    gen = Scripted(json.dumps(SCENARIOS))
    done = generate_scenarios(ds, agent, 2, gen, model="scripted", seed=5, today=TODAY)

    dest = ds.with_name("shop-1.1")
    assert done.path == dest and done.version == "1.1" and done.previous_version == "1.0"
    ids = [gen_id("my duvet cover arrived torn."), gen_id("can you change my address?")]
    assert done.added == ids and done.duplicates == [] and done.attempts == 1
    assert new_rows(dest, ds) == [expected_row(ids[0], SCENARIOS[0]), expected_row(ids[1], SCENARIOS[1])]
    manifest = json.loads((dest / "dataset.json").read_text())
    assert manifest["version"] == "1.1"
    assert manifest["changelog"][0] == {"version": "1.0", "date": "2026-11-01", "why": "x"}
    entry = manifest["changelog"][1]
    assert entry["version"] == "1.1" and entry["date"] == "2026-12-01"
    assert entry["why"] == (
        "generated 2 scenario(s) with callable model scripted from agent config shop-agent "
        f"(asked for 2, 0 duplicate(s) dropped, seed 5, generation prompt sha256 {PROMPT_SHA256[:12]})"
    )
    assert {k: v for k, v in entry["generated"].items() if k != "agent_config_sha256"} == {
        "provider": "callable",
        "model": "scripted",
        "requested": 2,
        "added": 2,
        "duplicates": 0,
        "seed": 5,
        "attempts": 1,
        "prompt_sha256": PROMPT_SHA256,
    }
    assert done.sha256 == canonical_sha256((dest / "dataset.jsonl").read_bytes())
    assert done.previous_sha256 == canonical_sha256(before["dataset.jsonl"])
    assert (dest / "goldenkit.toml").read_bytes() == before["goldenkit.toml"]
    assert {p.name: p.read_bytes() for p in ds.iterdir()} == before  # the old version is untouched
    assert not any(p.name.endswith(".tmp") for p in ds.parent.iterdir())
    back = read_dataset(dest)
    assert back.version == "1.1" and back.sha256 == done.sha256 and back.ids == ["r1", "s1", *ids]
    # the generator saw the config with the instruction as the default system prompt
    config, count, seed = gen.calls[0]
    assert (count, seed) == (2, 5)
    assert config["system"] == INSTRUCTION and config["tools"] == TOOLS
    assert config["environment"] == {"orders": [{"id": "A-1", "item": "duvet cover", "status": "delivered"}]}


def test_generated_rows_are_scenario_cases(ds: Path, agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The new rows normalize into Case.scenario (the shape the user simulator runs) and validate."""
    from goldenkit.records import Scenario

    done = generate_scenarios(ds, agent, 2, Scripted(json.dumps(SCENARIOS)), model="scripted", seed=5, today=TODAY)
    back = read_dataset(done.path)
    for rid, sc in zip(done.added, SCENARIOS, strict=True):
        case = back.case(rid)
        assert case.scenario == Scenario(starting_prompt=sc["starting_prompt"], plan=sc["plan"])
        assert case.system == INSTRUCTION and [t["name"] for t in case.tools] == [t["name"] for t in TOOLS]
    assert main(["dataset", "validate", str(done.path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "4 rows" in out
    # nothing the contract grader checks: validate names them (a run needs a judge or rubrics for these rows)
    assert "warning: " in out and all(rid in out.split("warning: ", 1)[1] for rid in done.added)


def test_a_list_of_dicts_is_taken_as_is_and_slice_overrides(ds: Path, agent: Path, tmp_path: Path) -> None:
    items = [{"starting_prompt": "Hello there", "plan": "Say thanks.", "slice": "ignored", "tags": ["a"]}]
    done = generate_scenarios(ds, agent, 1, Scripted(items), model="m", slice_="greetings", today=TODAY)
    (row,) = new_rows(done.path, ds)
    assert row["slice"] == "greetings" and row["tags"] == ["a"] and row["id"] == gen_id("hello there")


def test_more_scenarios_than_asked_keeps_the_first(ds: Path, agent: Path) -> None:
    three = [*SCENARIOS, {"starting_prompt": "Third", "plan": "p", "slice": "s"}]
    done = generate_scenarios(ds, agent, 2, Scripted(three), model="m", today=TODAY)
    assert [r["case"]["scenario"]["starting_prompt"] for r in new_rows(done.path, ds)] == [
        "My duvet cover arrived torn.",
        "Can you change my address?",
    ]


def test_a_config_without_tools_writes_rows_without_tools(ds: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "plain.json"
    cfg.write_text(json.dumps({"instruction": "Be helpful.", "system": "You are Bob."}), encoding="utf-8")
    done = generate_scenarios(ds, cfg, 1, Scripted(SCENARIOS[:1]), model="m", today=TODAY)
    (row,) = new_rows(done.path, ds)
    scenario = {"starting_prompt": SCENARIOS[0]["starting_prompt"], "plan": SCENARIOS[0]["plan"]}
    assert row["case"] == {"scenario": scenario, "system": "You are Bob."}


# --------------------------------------------------------------------------- duplicates


def test_duplicates_of_existing_rows_and_within_the_batch_are_dropped(ds: Path, agent: Path) -> None:
    batch = [
        {"starting_prompt": "  can I get a REFUND\tfor order A-1? ", "plan": "p", "slice": "refunds"},  # = r1's prompt
        {"starting_prompt": "where is my\nparcel?", "plan": "p", "slice": "shipping"},  # = s1's starting prompt
        {"starting_prompt": "New question", "plan": "p1", "slice": "misc"},
        {"starting_prompt": "new   QUESTION", "plan": "p2", "slice": "misc"},  # = the one before
        {"starting_prompt": "Another one", "plan": "p3", "slice": "misc"},
    ]
    done = generate_scenarios(ds, agent, 5, Scripted(batch), model="m", today=TODAY)
    assert done.added == [gen_id("new question"), gen_id("another one")]
    # the duplicates as the model wrote them (stripped of surrounding whitespace, like every prompt kept)
    assert done.duplicates == ["can I get a REFUND\tfor order A-1?", "where is my\nparcel?", "new   QUESTION"]
    rows = new_rows(done.path, ds)
    assert [(r["case"]["scenario"]["starting_prompt"], r["case"]["scenario"]["plan"]) for r in rows] == [
        ("New question", "p1"),
        ("Another one", "p3"),
    ]
    entry = json.loads((done.path / "dataset.json").read_text())["changelog"][-1]
    assert "generated 2 scenario(s)" in entry["why"] and "asked for 5, 3 duplicate(s) dropped" in entry["why"]
    assert (entry["generated"]["added"], entry["generated"]["duplicates"]) == (2, 3)


def test_all_duplicates_write_nothing(ds: Path, agent: Path) -> None:
    batch = [{"starting_prompt": "Where is my parcel?", "plan": "p", "slice": "s"}]
    with pytest.raises(InputError, match="all 1 generated scenario.s. duplicate existing rows"):
        generate_scenarios(ds, agent, 1, Scripted(batch), model="m", today=TODAY)
    assert sorted(p.name for p in ds.parent.iterdir()) == ["agent.toml", "shop"]


def test_an_id_taken_by_another_row_gets_more_digits(tmp_path: Path, agent: Path) -> None:
    taken = gen_id("hello there")
    rows = [{"id": taken, "slice": "s", "split": "dev", "case": {"prompt": "something else"}}]
    src = make_dataset(tmp_path, rows)
    items = [{"starting_prompt": "Hello there", "plan": "p", "slice": "s"}]
    done = generate_scenarios(src, agent, 1, Scripted(items), model="m", today=TODAY)
    assert done.added == [gen_id("hello there", 16)]


def test_ids_are_stable_across_runs_with_the_same_seed(ds: Path, agent: Path, tmp_path: Path) -> None:
    def seeded(config: dict[str, Any], count: int, seed: int | None) -> str:
        return json.dumps(
            [{"starting_prompt": f"Question {seed}-{i}", "plan": "p", "slice": "s"} for i in range(count)]
        )

    a = generate_scenarios(ds, agent, 3, seeded, model="m", seed=11, out=tmp_path / "a", today=TODAY)
    b = generate_scenarios(ds, agent, 3, seeded, model="m", seed=11, out=tmp_path / "b", today=TODAY)
    c = generate_scenarios(ds, agent, 3, seeded, model="m", seed=12, out=tmp_path / "c", today=TODAY)
    assert a.added == b.added == [gen_id(f"question 11-{i}") for i in range(3)]
    assert (tmp_path / "a" / "dataset.jsonl").read_bytes() == (tmp_path / "b" / "dataset.jsonl").read_bytes()
    assert a.sha256 == b.sha256 != c.sha256
    assert set(a.added).isdisjoint(c.added)


# --------------------------------------------------------------------------- malformed output


def test_malformed_output_is_retried_then_fails_with_the_raw_text(ds: Path, agent: Path) -> None:
    outputs = (
        "Sure! Here are some scenarios: none",
        json.dumps([{"starting_prompt": "Hi", "slice": "s"}]),
        json.dumps([{"starting_prompt": "Hi", "plan": "p", "slice": "s", "tags": "oops"}]),
    )
    gen = Scripted(*outputs)
    with pytest.raises(ScenarioOutputError) as info:
        generate_scenarios(ds, agent, 1, gen, model="m", seed=40, today=TODAY)
    err = info.value
    assert [seed for _, _, seed in gen.calls] == [40, 41, 42]  # attempt k sends seed + k
    assert [raw for _, raw in err.attempts] == list(outputs)
    assert err.attempts[0][0].startswith("not JSON")
    assert err.attempts[1][0] == 'scenario 1: "plan" must be a non-empty string (missing)'
    assert err.attempts[2][0] == 'scenario 1: "tags" must be a list of non-empty strings, got "oops"'
    assert err.exit_code == 3
    assert str(err) == (
        "callable model m gave no valid scenarios in 3 attempt(s); last problem: "
        'scenario 1: "tags" must be a list of non-empty strings, got "oops"; '
        f"last output ({len(outputs[2])} chars): {json.dumps(outputs[2])}"
    )
    assert "\n" not in str(err)
    assert sorted(p.name for p in ds.parent.iterdir()) == ["agent.toml", "shop"]  # nothing written, no temp folder


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ('{"scenario": []}', "expected a JSON array of scenarios, got dict"),
        ("[]", "asked for 1 scenario\\(s\\), got 0"),
        ("[1]", "scenario 1: a scenario must be a JSON object, got int"),
        ('[{"starting_prompt": " ", "plan": "p", "slice": "s"}]', 'scenario 1: "starting_prompt" must be a non-empty'),
        ('[{"starting_prompt": "a", "plan": 3, "slice": "s"}]', 'scenario 1: "plan" must be a non-empty string \\(int'),
        ('[{"starting_prompt": "a", "plan": "p"}]', 'scenario 1: "slice" must be a non-empty string \\(missing'),
    ],
)
def test_parse_scenarios_names_the_problem(output: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_scenarios(output, 1)


def test_parse_scenarios_reads_fences_wrappers_and_prose() -> None:
    item = {"starting_prompt": "a", "plan": "p", "slice": "s"}
    fenced = "```json\n" + json.dumps([item]) + "\n```"
    wrapped = json.dumps({"scenarios": [item]})
    prose = "Here you go:\n" + json.dumps([item]) + "\nEnjoy."
    for text in (fenced, wrapped, prose):
        assert [s.starting_prompt for s in parse_scenarios(text, 1)] == ["a"]


def test_a_late_valid_answer_is_used(ds: Path, agent: Path) -> None:
    done = generate_scenarios(ds, agent, 1, Scripted("nope", SCENARIOS[:1]), model="m", today=TODAY)
    assert done.attempts == 2
    assert json.loads((done.path / "dataset.json").read_text())["changelog"][-1]["generated"]["attempts"] == 2


def test_a_failing_generator_writes_nothing(ds: Path, agent: Path) -> None:
    def broken(config: dict[str, Any], count: int, seed: int | None) -> str:
        raise ProviderError("HTTP 401 from http://127.0.0.1/v1/chat/completions", transient=False)

    with pytest.raises(ProviderError, match="HTTP 401"):
        generate_scenarios(ds, agent, 1, broken, model="m", today=TODAY)
    assert sorted(p.name for p in ds.parent.iterdir()) == ["agent.toml", "shop"]


def test_an_existing_target_is_refused_before_any_call(ds: Path, agent: Path) -> None:
    ds.with_name("shop-1.1").mkdir()
    gen = Scripted(SCENARIOS)
    with pytest.raises(InputError, match="already exists; a new dataset version goes to a new folder"):
        generate_scenarios(ds, agent, 2, gen, model="m", today=TODAY)
    assert gen.calls == []
    with pytest.raises(InputError, match="version '1.0' is already in"):
        generate_scenarios(ds, agent, 2, gen, model="m", version="1.0", today=TODAY)


# --------------------------------------------------------------------------- agent configs


def test_json_and_toml_configs_read_the_same(tmp_path: Path, agent: Path) -> None:
    from_toml = read_agent_config(agent)
    as_json = tmp_path / "agent.json"
    as_json.write_text(json.dumps({k: v for k, v in from_toml.items() if k != "system"}), encoding="utf-8")
    assert read_agent_config(as_json) == from_toml
    assert from_toml["slices"] == ["refunds", "shipping"] and from_toml["name"] == "shop-agent"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('instruction = "x"\ninstructions = "y"\n', 'unknown key "instructions"'),
        ('name = "a"\n', '"instruction" must be a non-empty string'),
        ('instruction = "x"\ntools = [{description = "no name"}]\n', "tools\\[0\\] must be a table/object with"),
        ('instruction = "x"\nslices = [1]\n', '"slices" must be a list of non-empty strings'),
        ("instruction = \n", "invalid TOML"),
    ],
)
def test_a_bad_config_names_the_file(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem) as info:
        read_agent_config(path)
    assert str(path) in str(info.value)


def test_an_adk_agent_config_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "my_agent"
    folder.mkdir()
    (folder / "root_agent.yaml").write_text(
        "name: assistant_agent\nmodel: gemini-flash-latest\ndescription: Answers questions.\n"
        "instruction: You help users.\ntools:\n  - name: my_agent.tools.lookup_order\n",
        encoding="utf-8",
    )
    assert read_agent_config(folder) == {
        "name": "assistant_agent",
        "description": "Answers questions.",
        "instruction": "You help users.",
        "system": "You help users.",
        "tools": [{"name": "lookup_order"}],
    }


def test_an_adk_agent_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent)
    config = read_agent_config("adk_scripted.agent:root_agent")
    assert config["name"] == "scripted_root"
    assert config["instruction"] == "You are a helpful assistant with dice, home automation and travel tools."
    roll = next(t for t in config["tools"] if t["name"] == "roll_die")
    assert roll["parameters"]["type"] == "object"
    assert roll["parameters"]["properties"]["sides"]["type"] == "integer"
    assert roll["parameters"]["required"] == ["sides"]


# --------------------------------------------------------------------------- the command, over HTTP


def cli_args(ds: Path, agent: Path, url: str, *extra: str) -> list[str]:
    return [
        "dataset",
        "generate",
        str(ds),
        "--agent-config",
        str(agent),
        "--count",
        "2",
        "--model",
        "fake-model",
        "--base-url",
        url + "/v1",
        *extra,
    ]


def test_cli_end_to_end_through_an_openai_compatible_server(
    ds: Path, agent: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GK_GENERATE_KEY", "k-123")
    with FakeModelServer(api_key="k-123") as srv:
        srv.script(Reply.text("I cannot do that."), Reply.text("```json\n" + json.dumps(SCENARIOS) + "\n```"))
        code = main(
            [
                *cli_args(
                    ds,
                    agent,
                    srv.url,
                    "--model-seed",
                    "7",
                    "--api-key-env",
                    "GK_GENERATE_KEY",
                    "--temperature",
                    "0",
                    "--max-tokens",
                    "500",
                )
            ]
        )
        requests = list(srv.requests)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert [r.path for r in requests] == ["/v1/chat/completions"] * 2
    first, second = (r.json for r in requests)
    assert (first["seed"], second["seed"]) == (7, 8)
    assert first["model"] == "fake-model" and first["temperature"] == 0 and first["max_tokens"] == 500
    system, user = first["messages"]
    assert system == {"role": "system", "content": GENERATION_PROMPT}
    assert user["role"] == "user" and user["content"].startswith("Write exactly 2 scenarios for this agent.\n")
    assert json.loads(user["content"].split("Agent config (JSON):\n", 1)[1]) == read_agent_config(agent)
    assert "k-123" not in out.out + out.err
    dest = ds.with_name("shop-1.1")
    day = date.today().isoformat()
    ids = [gen_id("my duvet cover arrived torn."), gen_id("can you change my address?")]
    rows = new_rows(dest, ds)
    assert [r["id"] for r in rows] == ids
    assert [r["source"] for r in rows] == [f"generated:fake-model:{day}"] * 2
    sha = canonical_sha256((dest / "dataset.jsonl").read_bytes())
    assert out.out == f"generated 2 scenario(s) into {dest}: version 1.1 (was 1.0), sha256 {sha}\n"
    entry = json.loads((dest / "dataset.json").read_text())["changelog"][-1]
    assert entry["generated"]["provider"] == "openai" and entry["generated"]["attempts"] == 2
    assert "with openai model fake-model" in entry["why"]


def test_cli_ollama(ds: Path, agent: Path) -> None:
    with FakeModelServer() as srv:
        srv.script(Reply.text(json.dumps(SCENARIOS)))
        args = cli_args(ds, agent, srv.url, "--provider", "ollama", "--model-seed", "2")
        args[args.index("--base-url") + 1] = srv.url  # an Ollama host, without /v1
        assert main(args) == 0
        (request,) = srv.requests
    assert request.path == "/api/chat" and request.json["options"]["seed"] == 2
    assert request.json["messages"][0] == {"role": "system", "content": GENERATION_PROMPT}
    assert len(new_rows(ds.with_name("shop-1.1"), ds)) == 2


def test_the_model_generator_inside_a_running_event_loop(ds: Path, agent: Path) -> None:
    """From a notebook cell (an event loop already running) the generator still works."""
    with FakeModelServer() as srv:
        srv.script(Reply.text(json.dumps(SCENARIOS)))
        gen = ModelGenerator("openai", model="fake-model", base_url=srv.url)

        async def in_a_cell() -> Any:
            return generate_scenarios(ds, agent, 2, gen, model="fake-model", provider="openai", today=TODAY)

        done = asyncio.run(in_a_cell())
    assert done.added == [gen_id("my duvet cover arrived torn."), gen_id("can you change my address?")]


def test_cli_gibberish_ends_in_exit_3_with_the_raw_text(
    ds: Path, agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeModelServer(default=Reply.text("zq vlorp ]] {{ mib")) as srv:
        code = main([*cli_args(ds, agent, srv.url, "--attempts", "2")])
        calls = srv.count()
    err = capsys.readouterr().err
    assert code == 3 and calls == 2
    assert err.startswith(
        "goldenkit: openai model fake-model gave no valid scenarios in 2 attempt(s); last problem: not JSON"
    )
    assert err.endswith('last output (18 chars): "zq vlorp ]] {{ mib"\n') and err.count("\n") == 1
    assert sorted(p.name for p in ds.parent.iterdir()) == ["agent.toml", "shop"]


def test_cli_transient_errors_use_an_attempt(ds: Path, agent: Path) -> None:
    with FakeModelServer() as srv:
        srv.script(Reply.status(503, retry_after=0), Reply.text(json.dumps(SCENARIOS)))
        assert main(cli_args(ds, agent, srv.url)) == 0
        assert srv.count() == 2


def test_cli_an_unset_key_is_refused_before_any_call(
    ds: Path, agent: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GK_GENERATE_UNSET", raising=False)
    monkeypatch.setenv("GK_GENERATE_BAD", "k\n")
    with FakeModelServer() as srv:
        assert main([*cli_args(ds, agent, srv.url, "--api-key-env", "GK_GENERATE_UNSET")]) == 1
        assert "environment variable GK_GENERATE_UNSET is not set" in capsys.readouterr().err
        assert main([*cli_args(ds, agent, srv.url, "--api-key-env", "GK_GENERATE_BAD")]) == 1
        assert "GK_GENERATE_BAD contains a line feed" in capsys.readouterr().err
        assert srv.count() == 0
    assert not ds.with_name("shop-1.1").exists()


def callable_scenarios(config: dict[str, Any], count: int, seed: int | None) -> list[dict[str, Any]]:
    """The generator of the callable CLI test (``--generator-callable test_generate:callable_scenarios``)."""
    return [
        {"starting_prompt": f"{config['name']} question {seed}-{i}", "plan": "p", "slice": "s"} for i in range(count)
    ]


def test_cli_callable_generator(
    ds: Path, agent: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parent)
    args = [
        "dataset",
        "generate",
        str(ds),
        "--agent-config",
        str(agent),
        "--count",
        "2",
        "--provider",
        "callable",
        "--generator-callable",
        "test_generate:callable_scenarios",
        "--model-seed",
        "3",
        "--out",
        str(ds.parent / "v2"),
    ]
    assert main(args) == 0, capsys.readouterr().err
    rows = new_rows(ds.parent / "v2", ds)
    assert [r["id"] for r in rows] == [gen_id("shop-agent question 3-0"), gen_id("shop-agent question 3-1")]
    assert rows[0]["source"].startswith("generated:callable:")


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--provider", "callable"], "needs --generator-callable MOD:FN"),
        (["--generator-callable", "x:y"], "--generator-callable goes with --provider callable"),
        (["--count", "0"], "must be at least 1"),
        (["--slice", " "], "--slice must be a non-empty string"),
    ],
)
def test_cli_usage_errors(
    ds: Path, agent: Path, extra: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*cli_args(ds, agent, "http://127.0.0.1:9", *extra)]) == 1
    assert problem in capsys.readouterr().err


def test_the_bundled_dataset_takes_generated_scenarios(tmp_path: Path, agent: Path) -> None:
    """A real dataset with a declared case format and a non-numeric version: the version bumps, rows append."""
    src = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
    copy = tmp_path / "support-agent"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("fixtures"))
    done = generate_scenarios(copy, agent, 2, Scripted(SCENARIOS), model="m", today=TODAY)
    assert done.version == "2026.12.0"
    assert len(read_dataset(done.path)) == len(read_dataset(copy)) + 2
