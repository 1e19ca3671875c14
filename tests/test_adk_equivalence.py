"""goldenkit scores an ADK agent the way ADK's own AgentEvaluator does.

The agent (tests/adk_scripted) is a real ADK ``LlmAgent`` with real Python
tools and a sub-agent; its model is a scripted ``BaseLlm`` (fixed function
calls and texts, no network). Every ADK eval set in ../shared/interop that can
run offline goes through both pipelines with the same criteria:

* ADK: the steps of ``AgentEvaluator.evaluate(agent_module, file, num_runs=2)``:
  its loaders (``find_config_for_test_file``, ``_load_eval_set_from_file``, which
  also converts the legacy format, ``_get_agent_for_eval``), its inference
  (``EvaluationGenerator._generate_inferences_from_root_agent`` with the user
  simulator ``UserSimulatorProvider`` picks, once per case and run, the call its
  ``LocalEvalService`` makes) and its metric evaluators for the two criteria
  (``TrajectoryEvaluator``, and ``RougeEvaluator``, to which the registry's
  ``ResponseEvaluator`` hands ``response_match_score``). ``AgentEvaluator.evaluate``
  itself cannot be called here: its metric registry imports the Vertex AI eval
  facade, which needs the ``google-adk[eval]`` extra (google-cloud-aiplatform and
  ``agentplatform``), a large dependency goldenkit does not carry; the evaluators
  it would pick are the ones used.
* goldenkit: ``import_dataset(..., "adk")`` (criteria from test_config.json),
  ``run_eval`` with provider ``adk`` and the ``trajectory`` and ``reference``
  graders, 2 repeats; outcomes read back with ``outcomes_df``.

Each eval set is run three times, with ``tool_trajectory_avg_score`` match type
EXACT, IN_ORDER and ANY_ORDER (the scripted answers include an extra argument and
an extra call, so the match types disagree), and ``response_match_score`` 0.5.

What is compared, and found equal (to 1e-12):

* per case: ADK's mean trajectory score and mean response-match score (the mean
  of its per-invocation scores over both runs) against the mean over repeats of
  goldenkit's ``trajectory`` and ``reference`` grader scores;
* per invocation: ADK's score against ``goldenkit.graders.trajectory_score`` /
  ``rouge1_f`` on the same turn of goldenkit's recorded trajectory;
* the actual answers: ADK's final response text and tool calls (name, args) per
  invocation against goldenkit's per turn.

Differences, each asserted below rather than skipped:

1. A case whose invocations have no expected final response at all
   (live_non_blocking's ``background_task_scripted``): ADK compares each answer
   with the reference ``""`` and scores 0.0; goldenkit's reference grader does not
   apply to a case with no reference (score None, "no reference answer"), so the
   case is not counted as a response-match failure. Per turn, ``rouge1_f("", text)``
   is 0.0 as in ADK: the difference is only whether the case is graded at all.
2. ``conversation_scenario`` cases (the conversation_scenario fixture and
   live_non_blocking's ``background_task_scenario``) are driven in ADK by an
   LLM-backed user simulator, which needs a Gemini model: they cannot run offline
   in ADK and are left out of both pipelines here. goldenkit imports them as one
   turn holding the starting prompt, marked ``criteria.simulated_user``
   (checked at the end).
3. Invocation counts: this ADK version requires as many actual as expected
   invocations and raises otherwise; older ones ``zip`` and drop the extra.
   goldenkit's graders ``zip`` and name the unscored turns. Both pipelines send
   every expected user turn, so the counts are equal and this never shows here.

A turn whose expected final response has ``text: null`` (elicitation turn 1)
has reference ``""`` in both (score 0.0): not a difference.

ADK versions checked: google-adk 2.13.0 (the one installed with goldenkit's dev
extras), and 2.12.0, 2.11.0, 2.9.2, 2.8.0, 2.7.1 and 2.7.0 with the same other
packages: all pass. 2.6.3, 2.5.0, 2.0.0 and 1.39.1 fail (their inference returns
another shape). pyproject.toml pins ``google-adk>=2.7,<2.14`` accordingly; a new
ADK minor version is re-checked here before the pin moves.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _shared import shared_dir, shared_fixture

pytest.importorskip("google.adk")

from google.adk.evaluation.agent_evaluator import AgentEvaluator  # noqa: E402
from google.adk.evaluation.eval_case import get_all_tool_calls  # noqa: E402
from google.adk.evaluation.eval_config import get_eval_metrics_from_config  # noqa: E402
from google.adk.evaluation.evaluation_generator import EvaluationGenerator  # noqa: E402
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator  # noqa: E402
from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider  # noqa: E402
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator  # noqa: E402

from goldenkit.dataset import read_dataset  # noqa: E402
from goldenkit.formats import import_dataset  # noqa: E402
from goldenkit.graders._match import ReferenceMatchGrader, rouge1_f  # noqa: E402
from goldenkit.graders._trajectory import TrajectoryGrader, trajectory_score  # noqa: E402
from goldenkit.providers import get_provider  # noqa: E402
from goldenkit.results import outcomes_df  # noqa: E402
from goldenkit.runner import run_eval  # noqa: E402

INTEROP = shared_dir("interop", "google__adk-python")
_needs_adk_files = shared_fixture("interop", "google__adk-python")
AGENT = "adk_scripted"
RUNS = 2
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")
RESPONSE_THRESHOLD = 0.5
# The eval files that run offline (conversation_scenario needs ADK's LLM user simulator: difference 2).
FILES = (
    "tests__integration__fixture__hello_world_agent__roll_die.test.json",
    "tests__integration__fixture__home_automation_agent__simple_test2.test.json",
    "tests__integration__fixture__home_automation_agent__test_files__dependent_tool_calls.test.json",
    "tests__integration__fixture__home_automation_agent__test_files__simple_multi_turn_conversation.test.json",
    "tests__integration__fixture__trip_planner_agent__test_files__trip_inquiry_sub_agent.test.json",
    "tests__integration__fixture__trip_planner_agent__trip_inquiry.test.json",
    "tests__integration__fixture__elicitation_agent__elicitation_flow.test.json",
    "contributing__samples__live__live_non_blocking_tool_agent__live_non_blocking_tool_agent.evalset.json",
)
NO_REFERENCE_CASE = "background_task_scripted"
EPS = 1e-12

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),  # ADK marks its user simulators experimental
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


CHECKED = ((2, 7), (2, 14))  # the pinned range: >= 2.7, < 2.14


def test_the_installed_adk_is_a_checked_version() -> None:
    from importlib.metadata import version

    installed = version("google-adk")
    major_minor = tuple(int(p) for p in installed.split(".")[:2])
    assert CHECKED[0] <= major_minor < CHECKED[1], f"google-adk {installed} is outside the checked range"


def _copy_without_scenarios(src: Path, dst: Path) -> None:
    doc = json.loads(src.read_text(encoding="utf-8"))
    if isinstance(doc, dict):
        doc["eval_cases"] = [c for c in doc["eval_cases"] if c.get("conversation")]
    dst.write_text(json.dumps(doc), encoding="utf-8")


def _key(eval_id: str) -> str:
    """Legacy files are one case whose id is the file path (ADK) or name (goldenkit): use the name."""
    return Path(eval_id).name if eval_id.startswith("/") else eval_id


EVALUATORS = {"tool_trajectory_avg_score": TrajectoryEvaluator, "response_match_score": RougeEvaluator}


def _text(content: Any) -> str:
    return "\n".join(p.text for p in content.parts if p.text) if content and content.parts else ""


async def _adk_file(test_file: Path, agent: Any) -> dict[str, dict[str, Any]]:
    """ADK's inference and metrics for one test file: per case, per metric, per-invocation scores of every run."""
    config = AgentEvaluator.find_config_for_test_file(str(test_file))
    eval_set = AgentEvaluator._load_eval_set_from_file(str(test_file), config, {})
    # get_eval_metrics_from_config also adds ADK's informational metrics (tool call counts, ...), which never gate
    metrics = [m for m in get_eval_metrics_from_config(config) if m.metric_name in EVALUATORS]
    assert sorted(m.metric_name for m in metrics) == sorted(EVALUATORS)
    out: dict[str, dict[str, Any]] = {}
    for eval_case in eval_set.eval_cases:
        entry: dict[str, Any] = {"answers": [], **{m.metric_name: [] for m in metrics}}
        for _ in range(RUNS):
            actual = await EvaluationGenerator._generate_inferences_from_root_agent(
                agent,
                user_simulator=UserSimulatorProvider().provide(eval_case),
                initial_session=eval_case.session_input,
            )
            entry["answers"].append(
                [
                    (_text(inv.final_response), [(c.name, c.args) for c in get_all_tool_calls(inv.intermediate_data)])
                    for inv in actual
                ]
            )
            for metric in metrics:
                result = EVALUATORS[metric.metric_name](eval_metric=metric).evaluate_invocations(
                    actual, eval_case.conversation
                )
                entry[metric.metric_name].append([r.score for r in result.per_invocation_results])
        out[_key(eval_case.eval_id)] = entry
    return out


def _adk_scores(folder: Path) -> dict[str, dict[str, Any]]:
    agent, _app = asyncio.run(AgentEvaluator._get_agent_for_eval(AGENT))
    scores: dict[str, dict[str, Any]] = {}
    for test_file in sorted(folder.rglob("*.test.json")):
        scores.update(asyncio.run(_adk_file(test_file, agent)))
    return scores


def _goldenkit_outcomes(folder: Path, results: Path) -> tuple[Any, Any]:
    ds_dir = import_dataset(folder / "files", folder / "dataset", "adk", slice="adk")
    dataset = read_dataset(ds_dir)
    provider = get_provider("adk", agent=AGENT)
    summary = run_eval(
        dataset,
        provider,
        [TrajectoryGrader(), ReferenceMatchGrader()],
        repeats=RUNS,
        results_dir=results,
        progress=False,
        max_in_flight=4,
    )
    return dataset, outcomes_df(summary.path)


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    base = tmp_path_factory.mktemp("adk_equivalence")
    out: dict[str, Any] = {}
    for match in MATCH_TYPES:
        folder = base / match
        config = {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": match},
                "response_match_score": RESPONSE_THRESHOLD,
            }
        }
        for name in FILES:
            sub = folder / "files" / name.split("__")[-2]
            sub.mkdir(parents=True, exist_ok=True)
            stem = name.removesuffix(".test.json").removesuffix(".evalset.json")
            _copy_without_scenarios(INTEROP / name, sub / f"{stem}.test.json")
            (sub / "test_config.json").write_text(json.dumps(config), encoding="utf-8")
        adk = _adk_scores(folder / "files")
        dataset, outcomes = _goldenkit_outcomes(folder, base / f"results-{match}")
        out[match] = {"adk": adk, "dataset": dataset, "outcomes": outcomes}
    yield out
    shutil.rmtree(base, ignore_errors=True)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _gk_by_case(dataset: Any, outcomes: Any) -> dict[str, dict[str, Any]]:
    by_case: dict[str, dict[str, Any]] = {}
    for row in outcomes.to_dict("records"):
        raw = dataset.raw_case(row["row_id"])
        entry = by_case.setdefault(_key(raw["eval_id"]), {"row_id": row["row_id"], "outcomes": []})
        entry["outcomes"].append(row)
    return by_case


@pytest.mark.parametrize("match", MATCH_TYPES)
def test_per_case_scores_equal_adk(pipelines, match):
    adk = pipelines[match]["adk"]
    dataset = pipelines[match]["dataset"]
    gk = _gk_by_case(dataset, pipelines[match]["outcomes"])
    assert set(gk) == set(adk), "both pipelines scored the same cases"
    assert len(gk) == 8
    compared = 0
    for key, entry in gk.items():
        outs = entry["outcomes"]
        assert len(outs) == RUNS and all(o["verdict"] in ("PASS", "FAIL") for o in outs), key
        adk_traj = _mean([x for run in adk[key]["tool_trajectory_avg_score"] for x in run])
        gk_traj = _mean([o["graders"]["trajectory"]["score"] for o in outs])
        assert abs(adk_traj - gk_traj) < EPS, (key, adk_traj, gk_traj)
        adk_resp = _mean([x for run in adk[key]["response_match_score"] for x in run])
        gk_resp = [o["graders"]["reference"]["score"] for o in outs]
        if key == NO_REFERENCE_CASE:
            # Difference 1: ADK scores answers against the reference "" (0.0); goldenkit does not grade them.
            assert adk_resp == 0.0
            assert gk_resp == [None, None]
            assert all(o["graders"]["reference"]["reason"] == "no reference answer" for o in outs)
            continue
        assert abs(adk_resp - _mean(gk_resp)) < EPS, (key, adk_resp, gk_resp)
        compared += 1
    assert compared == 7


@pytest.mark.parametrize("match", MATCH_TYPES)
def test_per_invocation_scores_and_answers_equal_adk(pipelines, match):
    adk = pipelines[match]["adk"]
    dataset = pipelines[match]["dataset"]
    gk = _gk_by_case(dataset, pipelines[match]["outcomes"])
    for key, entry in gk.items():
        case = dataset.case(entry["row_id"])
        expected_tools = [[c.to_dict() for c in t.expected_tools] for t in case.turns]
        references = [t.expected_response or "" for t in case.turns]
        n = len(case.turns)
        for run, outcome in enumerate(entry["outcomes"]):
            turns = outcome["trajectory"]
            adk_traj = adk[key]["tool_trajectory_avg_score"][run]
            adk_resp = adk[key]["response_match_score"][run]
            assert len(turns) == len(adk_traj) == len(adk_resp) == n, key  # difference 3 never shows
            # the same answers: final text and tool calls per turn
            gk_answers = [(t["text"], [(c["name"], c["args"]) for c in t["tool_calls"]]) for t in turns]
            assert gk_answers == adk[key]["answers"][run], key
            for i, turn in enumerate(turns):
                gk_t = trajectory_score([expected_tools[i]], [turn["tool_calls"]], match=match)
                assert abs(adk_traj[i] - gk_t) < EPS, (key, i, adk_traj[i], gk_t)
                gk_r = rouge1_f(references[i], turn["text"])
                assert abs(adk_resp[i] - gk_r) < EPS, (key, i, adk_resp[i], gk_r)


def test_the_scores_are_spread_and_the_match_types_disagree(pipelines):
    """The comparison is not trivial: scores other than 0 and 1 occur and the match types differ."""
    per_match = {}
    for match in MATCH_TYPES:
        gk = _gk_by_case(pipelines[match]["dataset"], pipelines[match]["outcomes"])
        per_match[match] = {k: v["outcomes"][0]["graders"]["trajectory"]["score"] for k, v in gk.items()}
        refs = [v["outcomes"][0]["graders"]["reference"]["score"] for v in gk.values()]
        assert any(r is not None and 0 < r < 1 for r in refs)
    multi = "tests/integration/fixture/home_automation_agent/test_files/simple_multi_turn_conversation.test.json"
    dependent = "tests/integration/fixture/home_automation_agent/test_files/dependent_tool_calls.test.json"
    assert per_match["EXACT"][multi] == 0.5  # turn 2 has an extra call
    assert per_match["IN_ORDER"][multi] == per_match["ANY_ORDER"][multi] == 1.0
    assert per_match["EXACT"][dependent] == per_match["IN_ORDER"][dependent] == 0.5  # an extra argument


def test_scenario_cases_import_as_their_opening_turn(tmp_path):
    """Difference 2: goldenkit keeps scenario cases as one marked turn; ADK needs its LLM user simulator."""
    src = INTEROP / "tests__integration__fixture__conversation_scenario__conversation_scenario.test.json"
    ds = read_dataset(import_dataset(src, tmp_path / "ds", "adk"))
    case = ds.case(ds.rows["id"].iloc[0])
    assert [t.user for t in case.turns] == ["Hello"]
    assert "simulated_user" in case.criteria
