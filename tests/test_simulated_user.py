"""Simulated conversations: scenarios in every shape, the conversation driver with scripted
(callable) users, grading of the transcript, the simulator in the run key, record and replay."""

from __future__ import annotations

import json
from pathlib import Path

import factories
import pytest
import sim_scripts
from _shared import shared_dir, shared_path

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.formats import normalize_case
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._fixtures import FixturesProvider
from goldenkit.providers._simulator import CallableSimulator, get_simulator, render_transcript
from goldenkit.records import Scenario, grader_results
from goldenkit.results import read_run
from goldenkit.runner import run_eval

INTEROP = shared_dir("interop", "google__adk-python")
ORDER = {"name": "lookup_order", "args": {"order_id": "A-1"}, "response": {"status": "shipped"}}


def scenario_row(rid: str, plan: str = "ask twice", **case: object) -> dict[str, object]:
    c: dict[str, object] = {"scenario": {"starting_prompt": f"hello from {rid}", "plan": plan}}
    c.update(case)
    return {"id": rid, "slice": "s", "split": "dev", "case": c}


def write_dataset(root: Path, rows: list[dict[str, object]]) -> Path:
    log = [{"version": "1", "date": "2026-12-01", "why": "t"}]
    meta = {"case_format": "contract", "changelog": log}
    return factories.write_dataset(root.parent, rows, folder=root.name, name="sim", version="1", meta=meta)


def run(tmp_path: Path, rows, user=sim_scripts.user_three, *, run_id="r", provider=None, **kw):
    ds = read_dataset(write_dataset(tmp_path / "ds", rows))
    sim = CallableSimulator(user) if user is not None else None
    agent = provider if provider is not None else CallableProvider(sim_scripts.agent, threads=0)
    kw.setdefault("max_ungradable", None)  # most rows here test the conversation, not its grading
    summary = run_eval(
        ds,
        agent,
        kw.pop("graders", ["contract"]),
        results_dir=tmp_path / "results",
        run_id=run_id,
        progress=False,
        user_simulator=sim,
        **kw,
    )
    out = read_run(summary.path).outcomes().sort_values(["row_id", "repeat"]).reset_index(drop=True)
    return summary, out


def users_of(outcome_row) -> list[str]:
    return [t.get("user") for t in outcome_row["trajectory"]]


# ------------------------------------------------------------------------ scenarios in every shape


def test_contract_scenario_normalizes_with_its_limits():
    case = normalize_case(
        {"scenario": {"starting_prompt": "Hi", "plan": "Ask for a refund", "max_turns": 3, "stop": "bye"}}, None
    )
    assert case.scenario == Scenario("Hi", "Ask for a refund", 3, "bye")
    assert [t.user for t in case.turns] == ["Hi"]


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ({"plan": "p"}, "scenario has no starting_prompt"),
        ({"starting_prompt": "Hi", "max_turns": 0}, "scenario.max_turns must be a positive integer"),
        ({"starting_prompt": "Hi", "plan": 3}, "scenario.plan must be a string"),
        ({"starting_prompt": "Hi", "stop": ""}, "scenario.stop must be a non-empty string"),
        ("Hi", "scenario must be an object"),
    ],
)
def test_bad_contract_scenarios_name_the_field(scenario, message):
    with pytest.raises(DatasetError, match=message):
        normalize_case({"scenario": scenario}, None, row_id="x")


def test_a_scenario_with_a_prompt_is_refused():
    with pytest.raises(DatasetError, match="give no prompt or turns"):
        normalize_case({"scenario": {"starting_prompt": "Hi", "plan": ""}, "prompt": "Hi"}, None, row_id="x")


def read_adk(path: Path):
    return [normalize_case(c, "adk") for c in json.loads(path.read_text())["eval_cases"]]


def test_adk_interop_scenarios_normalize_to_scenario():
    fixture = (
        shared_path("interop", "google__adk-python")
        / "tests__integration__fixture__conversation_scenario__conversation_scenario.test.json"
    )
    (case,) = read_adk(fixture)
    assert case.scenario == Scenario("Hello", "Ask the agent to do something")
    assert [t.user for t in case.turns] == ["Hello"]
    evalset = (
        INTEROP / "contributing__samples__live__live_non_blocking_tool_agent__live_non_blocking_tool_agent.evalset.json"
    )
    scen = [c for c in read_adk(evalset) if c.scenario is not None]
    assert [c.id for c in scen] == ["background_task_scenario"]
    assert scen[0].scenario.starting_prompt == "Hi, can you kick off a long background task for me?"
    assert scen[0].scenario.plan.startswith("Ask the agent to start a slow background task")
    assert scen[0].criteria["simulated_user"]["user_persona"] == "NOVICE"


def test_vertex_user_scenario_normalizes_to_scenario_also_from_a_csv_cell():
    raw = {"user_scenario": {"starting_prompt": "Where is my parcel?", "conversation_plan": "Give order A-1."}}
    assert normalize_case(raw, "vertex").scenario == Scenario("Where is my parcel?", "Give order A-1.")
    cell = {"user_scenario": json.dumps(raw["user_scenario"]), "eval_case_id": "v1"}
    case = normalize_case(cell, "vertex")
    assert case.scenario == Scenario("Where is my parcel?", "Give order A-1.")
    assert case.prompt == "Where is my parcel?"


# ------------------------------------------------------------------------ the driver


def test_turn_order_transcript_and_stop(tmp_path):
    sim_scripts.SEEN.clear()
    rows = [scenario_row("a", tool_responses=[ORDER], expect={"must_contain": ["status shipped"]})]
    summary, out = run(tmp_path, rows)
    assert summary.exit_code == 0
    row = out.iloc[0]
    assert users_of(row) == ["hello from a", "and then?", "where is my order?"]
    assert [t["text"] for t in row["trajectory"]] == [
        "reply 1 to: hello from a",
        "reply 2 to: and then?",
        "reply 3 to: where is my order? (status shipped)",
    ]
    assert row["verdict"] == "PASS" and row["response"].endswith("(status shipped)")
    # the user saw the plan and the whole transcript, the tool call and its result included
    plan, last = sim_scripts.SEEN[-1]
    assert plan == "ask twice"
    assert [(m.role, m.content) for m in last] == [
        ("user", "hello from a"),
        ("assistant", "reply 1 to: hello from a"),
        ("user", "and then?"),
        ("assistant", "reply 2 to: and then?"),
        ("user", "where is my order?"),
        ("assistant", ""),
        ("tool", '{"status": "shipped"}'),
        ("assistant", "reply 3 to: where is my order? (status shipped)"),
    ]
    assert last[5].tool_calls[0].name == "lookup_order" and last[6].name == "lookup_order"
    assert "ASSISTANT CALLS TOOL lookup_order" in render_transcript(last)
    assert row["tokens_in"] == 9  # three agent turns of 3


def test_max_turns_the_case_limit_wins(tmp_path):
    rows = [scenario_row("a"), scenario_row("b")]
    rows[1]["case"]["scenario"]["max_turns"] = 2  # type: ignore[index]
    _, out = run(tmp_path, rows, sim_scripts.user_chatty, max_turns=4)
    assert [len(t) for t in out["trajectory"]] == [4, 2]
    assert users_of(out.iloc[0])[1:] == [f"more please (repeat 0, turn {k})" for k in (2, 3, 4)]


def test_a_conversation_that_runs_to_its_limit_is_recorded_as_stopped_by_max_turns(tmp_path):
    rec = tmp_path / "fixtures"
    run(tmp_path, [scenario_row("a")], sim_scripts.user_chatty, max_turns=3, record_dir=rec)
    line = json.loads((rec / "fixtures.jsonl").read_text().splitlines()[0])
    assert line["conversation"] == {"turns": 3, "stopped": "max_turns"}


def test_the_stop_phrase_ends_the_conversation(tmp_path):
    rows = [scenario_row("a")]
    rows[0]["case"]["scenario"]["stop"] = "bye"  # type: ignore[index]
    _, out = run(tmp_path, rows, sim_scripts.user_says_bye)
    assert users_of(out.iloc[0]) == ["hello from a"]


def test_each_repeat_is_its_own_conversation(tmp_path):
    _, out = run(tmp_path, [scenario_row("a")], sim_scripts.user_chatty, repeats=2, max_turns=2)
    assert [users_of(r)[1] for _, r in out.iterrows()] == [
        "more please (repeat 0, turn 2)",
        "more please (repeat 1, turn 2)",
    ]


@pytest.mark.parametrize(
    ("user", "why"),
    [
        (sim_scripts.user_broken, "simulator before turn 2: callable sim_scripts:user_broken raised RuntimeError"),
        (sim_scripts.user_wrong_type, "returned int, expected str or None"),
    ],
)
def test_a_simulator_failure_is_an_error_of_its_own_kind(tmp_path, user, why):
    summary, out = run(tmp_path, [scenario_row("a", expect={"must_contain": ["reply"]})], user)
    row = out.iloc[0]
    assert row["verdict"] == "ERROR" and row["error_kind"] == "simulator"
    assert why in row["detail"]
    assert summary.exit_code == 3  # every outcome errored: no evidence


def test_a_transient_simulator_failure_is_retried(tmp_path):
    sim_scripts.FLAKY["calls"] = 0
    _, out = run(
        tmp_path, [scenario_row("a", expect={"must_contain": ["reply"]})], sim_scripts.user_flaky, backoff_base=0.0
    )
    row = out.iloc[0]
    assert row["verdict"] == "PASS" and sim_scripts.FLAKY["calls"] == 2
    assert row["attempts"] == 3  # turn 1, the failed simulator call, its retry


def test_an_agent_failure_names_its_turn(tmp_path):
    def agent(case):
        if case.history:
            raise ValueError("agent down")
        return "first"

    _, out = run(
        tmp_path, [scenario_row("a", expect={"must_contain": ["x"]})], provider=CallableProvider(agent, threads=0)
    )
    row = out.iloc[0]
    assert row["verdict"] == "ERROR" and row["error_kind"] == "agent"  # its own code raised
    assert row["detail"].startswith("turn 2: callable")


def test_live_scenario_rows_without_a_simulator_are_refused_before_any_call(tmp_path):
    rows = [scenario_row("a"), {"id": "p", "slice": "s", "split": "dev", "case": {"prompt": "hi"}}, scenario_row("b")]
    with pytest.raises(ConfigError, match=r'2 row\(s\) are simulated-user scenarios \("a", "b"\)'):
        run(tmp_path, rows, None)
    assert not (tmp_path / "results" / "r").exists()


# ------------------------------------------------------------------------ grading the transcript


def test_every_turn_and_trajectory_over_the_whole_conversation(tmp_path):
    expect = {
        "every_turn": {"must_contain": ["reply"], "must_not": ["then"]},
        "tools": [{"name": "lookup_order", "args": {"order_id": "A-1"}}],
    }
    _, out = run(
        tmp_path, [scenario_row("a", tool_responses=[ORDER], expect=expect)], graders=["contract", "trajectory"]
    )
    row = out.iloc[0]
    assert row["verdict"] == "FAIL"
    assert "turn 2: must_not" in grader_results(row["graders"])["contract"]["reason"]
    assert grader_results(row["graders"])["trajectory"]["passed"] is True  # the call was made in turn 3


# ------------------------------------------------------------------------ the run key


def test_simulator_version_is_in_the_run_key_and_different_simulators_do_not_compare(tmp_path, capsys):
    rows = [scenario_row("a", expect={"must_contain": ["reply"]})]
    s1, _ = run(tmp_path, rows, sim_scripts.user_three, run_id="one")
    s2, _ = run(tmp_path, rows, sim_scripts.user_chatty, run_id="two")
    v1 = s1.manifest["simulator_version"]
    assert v1 == {
        "provider": "callable",
        "model": None,
        "prompt_sha256": None,
        "settings": {"callable": "sim_scripts:user_three"},
        "max_turns": 5,
    }
    code = main(["compare", str(s1.path), str(s2.path)])
    assert code == 4
    said = capsys.readouterr().err
    assert "user simulator differs: " in said
    assert '"settings": {"callable": "sim_scripts:user_three"}} vs {' in said and "sim_scripts:user_chatty" in said


# ------------------------------------------------------------------------ record and replay


def test_record_then_replay_gives_the_same_conversation_and_verdicts(tmp_path):
    rows = [
        scenario_row("a", tool_responses=[ORDER], expect={"must_contain": ["status shipped"]}),
        scenario_row("b", expect={"must_contain": ["never said"]}),
        {"id": "p", "slice": "s", "split": "dev", "case": {"prompt": "hi", "expect": {"must_contain": ["reply"]}}},
    ]
    rec = tmp_path / "fixtures"
    live, live_out = run(tmp_path, rows, run_id="live", record_dir=rec)
    meta = json.loads((rec / "meta.json").read_text())
    assert meta["simulator_version"] == live.manifest["simulator_version"]
    line = json.loads((rec / "fixtures.jsonl").read_text().splitlines()[0])
    assert line["conversation"]["stopped"] == "simulator" and line["turns"][1]["user"] == "and then?"
    assert line["turns"][2]["tool_responses"][0]["response"] == {"status": "shipped"}
    replay, replay_out = run(tmp_path, rows, None, run_id="replay", provider=FixturesProvider(fixtures=rec))
    assert replay.manifest["simulator_version"] == live.manifest["simulator_version"]
    cols = ["row_id", "verdict", "response", "trajectory"]
    assert replay_out[cols].to_dict("records") == live_out[cols].to_dict("records")
    assert list(replay_out["verdict"]) == ["PASS", "FAIL", "PASS"]
    assert main(["compare", str(live.path), str(replay.path)]) == 0


def test_a_live_simulator_with_a_fixtures_agent_reuses_the_recorded_user_turns(tmp_path):
    rows = [scenario_row("a", expect={"must_contain": ["reply"]})]
    rec = tmp_path / "fixtures"
    run(tmp_path, rows, run_id="live", record_dir=rec)
    # the broken user is never asked: every user turn comes from the recording
    _, out = run(tmp_path, rows, sim_scripts.user_broken, run_id="again", provider=FixturesProvider(fixtures=rec))
    assert out.iloc[0]["verdict"] == "PASS" and len(out.iloc[0]["trajectory"]) == 3


def test_a_replay_that_departs_from_its_recording_is_an_error_naming_the_turn(tmp_path):
    rows = [scenario_row("a", expect={"must_contain": ["reply"]})]
    rec = tmp_path / "fixtures"
    run(tmp_path, rows, run_id="live", record_dir=rec)
    rows[0]["case"]["scenario"]["starting_prompt"] = "an edited opening"  # type: ignore[index]
    summary, out = run(tmp_path, rows, None, run_id="replay", provider=FixturesProvider(fixtures=rec))
    row = out.iloc[0]
    assert row["verdict"] == "ERROR" and row["error_kind"] == "infrastructure"  # the recording has no answer
    assert "row a repeat 0 turn 1: the user message differs from the recording" in row["detail"]
    assert summary.exit_code == 3


def test_a_recorded_error_replays_as_that_error(tmp_path):
    rows = [scenario_row("a", expect={"must_contain": ["reply"]})]
    rec = tmp_path / "fixtures"
    run(tmp_path, rows, sim_scripts.user_broken, run_id="live", record_dir=rec)
    _, out = run(tmp_path, rows, None, run_id="replay", provider=FixturesProvider(fixtures=rec))
    assert out.iloc[0]["verdict"] == "ERROR" and "the script broke" in out.iloc[0]["detail"]


# ------------------------------------------------------------------------ the command line


def test_cli_runs_a_scripted_user_and_refuses_stray_user_options(tmp_path, capsys):
    ds = write_dataset(tmp_path / "ds", [scenario_row("a", expect={"must_contain": ["reply"]})])
    base = [
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "sim_scripts:agent",
        "--results-dir",
        str(tmp_path / "res"),
        "--quiet",
    ]
    assert (
        main(
            [
                *base,
                "--run-id",
                "x",
                "--user-simulator",
                "callable",
                "--user-callable",
                "sim_scripts:user_chatty",
                "--max-turns",
                "2",
            ]
        )
        == 0
    )
    man = json.loads((tmp_path / "res" / "x" / "run.json").read_text())
    assert man["simulator_version"]["max_turns"] == 2
    assert main([*base, "--run-id", "y", "--user-model", "m"]) == 1
    assert "--user-model needs --user-simulator" in capsys.readouterr().err
    assert main([*base, "--run-id", "z"]) == 1
    assert 'simulated-user scenarios ("a")' in capsys.readouterr().err


# ------------------------------------------------------------------------ what people read


def test_the_flip_list_and_the_audit_show_the_transcript_turn_by_turn(tmp_path):
    from goldenkit.audit._failures import failing_rows
    from goldenkit.compare import compare_runs

    rows = [scenario_row("a", tool_responses=[ORDER], expect={"every_turn": {"must_not": ["then"]}})]
    plain = CallableProvider(lambda case: "ok", threads=0)
    base, _ = run(tmp_path, rows, run_id="base", provider=plain)  # never says "then": passes
    cand, out = run(tmp_path, rows, sim_scripts.user_three, run_id="cand")  # turn 2 says "then": fails
    flips = compare_runs(read_run(base.path), read_run(cand.path)).flips
    assert list(flips["status"]) == ["NEW_FAILURE"]
    shown = flips["cand_response"].iloc[0]
    assert shown.splitlines() == [
        "[turn 1] user: hello from a",
        "[turn 1] agent: reply 1 to: hello from a",
        "[turn 2] user: and then?",
        "[turn 2] agent: reply 2 to: and then?",
        "[turn 3] user: where is my order?",
        '[turn 3] agent calls lookup_order {"order_id": "A-1"} -> {"status": "shipped"}',
        "[turn 3] agent: reply 3 to: where is my order? (status shipped)",
    ]
    ds = read_dataset(tmp_path / "ds")
    audit = failing_rows(out, ds)
    assert audit["response"].iloc[0] == shown
    assert audit["prompt"].iloc[0] == "hello from a\n[plan of the simulated user] ask twice"


# ------------------------------------------------------------------------ a model as the user (local server)


def test_a_model_simulator_gets_the_pinned_prompt_a_seed_per_repeat_and_its_retries(tmp_path):
    from fakeserver import FakeModelServer, Reply

    from goldenkit.providers._simulator import PROMPT_SHA256, SIMULATOR_SYSTEM_PROMPT

    def responder(rec):
        return Reply.text("<STOP>" if "USER: more" in rec.json["messages"][1]["content"] else "more please")

    with FakeModelServer() as srv:
        srv.responder = responder
        srv.script(Reply.status(503))  # the first simulator call fails once: retried
        ds = read_dataset(write_dataset(tmp_path / "ds", [scenario_row("a", expect={"must_contain": ["reply"]})]))
        sim = get_simulator("openai", model="sim-m", base_url=srv.url, temperature=0.5, seed=7)
        summary = run_eval(
            ds,
            CallableProvider(sim_scripts.agent, threads=0),
            ["contract"],
            repeats=2,
            results_dir=tmp_path / "res",
            run_id="m",
            progress=False,
            user_simulator=sim,
            backoff_base=0.0,
            max_in_flight=1,
        )
        bodies = [r.json for r in srv.requests]
    out = read_run(summary.path).outcomes().sort_values("repeat")
    assert [users_of(r) for _, r in out.iterrows()] == [["hello from a", "more please"]] * 2
    assert sorted(b["seed"] for b in bodies) == [7, 7, 7, 8, 8]  # 503 + retry + stop for repeat 0; repeat 1: 2 calls
    assert all(b["model"] == "sim-m" and b["temperature"] == 0.5 for b in bodies)
    first = bodies[1]["messages"]
    assert first[0] == {"role": "system", "content": SIMULATOR_SYSTEM_PROMPT.format(plan="ask twice")}
    assert "USER: hello from a\nASSISTANT: reply 1 to: hello from a" in first[1]["content"]
    version = summary.manifest["simulator_version"]
    assert version["prompt_sha256"] == PROMPT_SHA256 and version["settings"]["seed"] == 7
    assert version["model"] == "sim-m" and version["provider"] == "openai"
    assert out["verdict"].tolist() == ["PASS", "PASS"]


def test_the_simulator_is_closed_when_the_run_folder_cannot_be_opened(tmp_path):
    """A resume refused (another run key) still closes the user simulator (its HTTP clients)."""

    class Tracked(CallableSimulator):
        closed = 0

        async def aclose(self) -> None:
            type(self).closed += 1
            await super().aclose()

    rows = [scenario_row("a")]
    run(tmp_path, rows, sim_scripts.user_three)  # run "r" exists now
    ds = read_dataset(tmp_path / "ds")
    agent = CallableProvider(sim_scripts.agent, threads=0)
    with pytest.raises(Exception, match="repeats"):
        run_eval(
            ds,
            agent,
            ["contract"],
            results_dir=tmp_path / "results",
            run_id="r",
            repeats=2,
            progress=False,
            user_simulator=Tracked(sim_scripts.user_three),
            max_ungradable=None,
        )
    assert Tracked.closed == 1


def test_a_replay_with_a_smaller_turn_limit_says_so_in_its_key(tmp_path):
    """A replay goes as far as its recording's limit by default (same key as the live run); a smaller
    --max-turns cuts the conversations short and the key says so (not comparable: exit 4)."""
    rows = [scenario_row("a", expect={"must_contain": ["reply"]})]
    rec = tmp_path / "fixtures"
    live, _ = run(tmp_path, rows, sim_scripts.user_chatty, run_id="live", record_dir=rec, max_turns=3)
    same, out = run(tmp_path, rows, None, run_id="same", provider=FixturesProvider(fixtures=rec))
    assert same.manifest["simulator_version"] == live.manifest["simulator_version"]
    assert len(out.iloc[0]["trajectory"]) == 3
    short, out = run(tmp_path, rows, None, run_id="short", provider=FixturesProvider(fixtures=rec), max_turns=2)
    assert len(out.iloc[0]["trajectory"]) == 2
    assert short.manifest["simulator_version"] == {**live.manifest["simulator_version"], "max_turns": 2}
