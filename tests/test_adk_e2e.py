"""End to end: an ADK agent module evaluated over an imported ADK eval set with repeats.

``goldenkit dataset import SRC --format adk`` turns ADK test files (with their
test_config.json criteria) into a dataset; ``goldenkit run --provider adk
--agent adk_scripted --repeats 3`` runs the scripted agent (tests/adk_scripted:
real ADK agent and tools, a scripted model, no network) and writes a run that
stats, compare and report read like any other.
"""

from __future__ import annotations

import json
import shutil

import pytest
from _shared import shared_dir, shared_fixture

pytest.importorskip("google.adk")

from goldenkit import stats  # noqa: E402
from goldenkit.cli import main  # noqa: E402
from goldenkit.compare import compare_runs  # noqa: E402
from goldenkit.report import failure_reasons, run_key_table  # noqa: E402
from goldenkit.results import outcomes_df, read_run  # noqa: E402

INTEROP = shared_dir("interop", "google__adk-python")
_needs_adk_files = shared_fixture("interop", "google__adk-python")
PREFIX = "tests__integration__fixture__"
SOURCES = {
    "home/dependent.test.json": "home_automation_agent__test_files__dependent_tool_calls.test.json",
    "home/multi.test.json": "home_automation_agent__test_files__simple_multi_turn_conversation.test.json",
    "home/simple2.test.json": "home_automation_agent__simple_test2.test.json",
    "home/test_config.json": "home_automation_agent__test_config.json",
    "hello/roll_die.test.json": "hello_world_agent__roll_die.test.json",
    "hello/test_config.json": "hello_world_agent__test_config.json",
}
REPEATS = 3

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


@pytest.fixture
def imported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for dst, src in SOURCES.items():
        (tmp_path / "src" / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(INTEROP / (PREFIX + src), tmp_path / "src" / dst)
    assert main(["dataset", "import", "src", "-o", "ds", "--format", "adk"]) == 0
    return tmp_path


def run(*extra: str) -> int:
    return main(
        [
            "run",
            "ds",
            "--provider",
            "adk",
            "--agent",
            "adk_scripted",
            "--repeats",
            str(REPEATS),
            "--graders",
            "trajectory,reference",
            "--results-dir",
            "results",
            "--quiet",
            *extra,
        ]
    )


def test_adk_agent_over_imported_eval_set_with_repeats(imported, capsys):
    assert run("--run-id", "adk-actual") == 0
    assert run("--run-id", "adk-expected", "--history", "expected") == 0

    a = read_run("adk-actual", results_dir="results")
    m = a.manifest
    assert m["validity"] == "VALID" and m["complete"] is True and m["mode"] == "live"
    assert m["provider"]["name"] == "adk"
    assert m["provider"]["settings"]["agent"] == "adk_scripted"
    assert m["provider"]["settings"]["history"] == "actual"
    assert m["agent_version"]["model_id"] == "scripted-llm"
    assert m["repeats"] == REPEATS and m["counts"]["total"] == 4 * REPEATS and m["counts"]["ERROR"] == 0
    assert read_run("adk-expected", results_dir="results").manifest["provider"]["settings"]["history"] == "expected"

    out = a.outcomes()
    assert len(out) == 4 * REPEATS
    assert sorted(out["repeat"].unique().tolist()) == list(range(REPEATS))
    assert set(out["slice"]) == {"dependent", "multi", "simple2", "roll_die"}
    by_id = {r: g for r, g in out.groupby("row_id")}
    roll = by_id["tests/integration/fixture/hello_world_agent/roll_die.test.json"]
    for rec in roll.to_dict("records"):
        turns = rec["trajectory"]
        assert len(turns) == 3  # every invocation of the ADK case is a turn
        assert [c["name"] for c in turns[2]["tool_calls"]] == ["roll_die"]
        assert turns[2]["tool_responses"][0]["response"] == {"result": 4}
        assert rec["response"] == "I rolled a 6-sided die and got 4."
        assert rec["tokens_in"] > 0 and rec["tokens_out"] > 0
        assert rec["graders"]["trajectory"]["score"] == 1.0
    # home automation's test_config asks for the trajectory only: the reference grader does not apply there
    multi = by_id["tests/integration/fixture/home_automation_agent/test_files/simple_multi_turn_conversation.test.json"]
    rec = multi.to_dict("records")[0]
    assert rec["graders"]["trajectory"]["score"] == 0.5 and rec["verdict"] == "FAIL"
    assert rec["graders"]["reference"]["passed"] is None

    # stats: repeats collapse to one verdict per row; a scripted agent is never flaky
    collapsed = stats.collapse_repeats(out)
    assert len(collapsed) == 4
    assert stats.flaky_rows(out).empty
    table = stats.slice_table(out)
    overall = table.iloc[-1]
    assert overall["slice"] == "(overall)" and overall["rows"] == 4 and overall["attempts"] == 4 * REPEATS

    # compare: the two history settings of the same agent on the same dataset are comparable
    both = outcomes_df(a, read_run("adk-expected", results_dir="results"))
    assert len(both) == 2 * 4 * REPEATS
    comparison = compare_runs(a, read_run("adk-expected", results_dir="results"))
    assert len(comparison.rows) == 4
    # the scripted agent's answers do not depend on the history it is shown, so no row flips
    assert set(comparison.rows["status"]) <= {"UNCHANGED_PASS", "UNCHANGED_FAIL"}
    capsys.readouterr()
    assert main(["compare", "adk-actual", "adk-expected", "--results-dir", "results", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["base"], doc["candidate"]) == ("adk-actual", "adk-expected")
    assert doc["status_counts"]["UNCHANGED_PASS"] + doc["status_counts"]["UNCHANGED_FAIL"] == 4

    # report helpers read the run like any other
    key = run_key_table(a)
    assert "adk" in key.to_string()
    reasons = failure_reasons(out)
    assert len(reasons) > 0


def test_an_agent_error_is_an_error_outcome_not_a_failure(imported, tmp_path):
    """A case the scripted model cannot answer cleanly (a 429 from the model) ends as ERROR after retries."""
    bad = tmp_path / "src2" / "quota.test.json"
    bad.parent.mkdir()
    bad.write_text(
        json.dumps(
            {
                "eval_set_id": "quota",
                "eval_cases": [
                    {
                        "eval_id": "quota-case",
                        "conversation": [{"user_content": {"role": "user", "parts": [{"text": "quota please"}]}}],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    agent = tmp_path / "quota_agent.py"
    agent.write_text(
        "from google.adk.agents import LlmAgent\n"
        "from adk_scripted.scripted_llm import ScriptedLlm\n"
        "root_agent = LlmAgent(name='q', model=ScriptedLlm(model='q', script={'quota please': "
        "[{'error': ('429', 'quota exhausted')}]}))\n",
        encoding="utf-8",
    )
    assert main(["dataset", "import", str(bad.parent), "-o", "ds2", "--format", "adk"]) == 0
    code = main(
        [
            "run",
            "ds2",
            "--provider",
            "adk",
            "--agent",
            f"{agent}:root_agent",
            "--results-dir",
            "results",
            "--run-id",
            "quota",
            "--max-retries",
            "1",
            "--quiet",
        ]
    )
    assert code == 3  # every attempt errored: an infrastructure failure, never 0% quality
    out = read_run("quota", results_dir="results").outcomes()
    rec = out.to_dict("records")[0]
    assert rec["verdict"] == "ERROR" and rec["error_kind"] == "transient" and rec["attempts"] == 2
    assert "429" in rec["detail"] and "quota exhausted" in rec["detail"]
