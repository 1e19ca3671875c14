"""The graders on ADK interop files imported through goldenkit's own importer, against ADK's evaluators."""

from __future__ import annotations

import pytest
from _shared import shared_dir, shared_path

from goldenkit.graders import ReferenceMatchGrader, TrajectoryGrader
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import Case, ToolCall

INTEROP = shared_dir("interop")
ADK_DIR = INTEROP / "google__adk-python"

traj_eval = pytest.importorskip("google.adk.evaluation.trajectory_evaluator")
match_eval = pytest.importorskip("google.adk.evaluation.final_response_match_v1")
from google.adk.evaluation.eval_case import IntermediateData, Invocation  # noqa: E402
from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric  # noqa: E402
from google.genai import types  # noqa: E402


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> list[Case]:
    shared_path("interop", "google__adk-python")
    from goldenkit.dataset import read_dataset
    from goldenkit.formats import import_dataset

    out = import_dataset(ADK_DIR, tmp_path_factory.mktemp("adk") / "ds", "adk")
    ds = read_dataset(out)
    return [ds.case(rid) for rid in ds.rows["id"]]


def _inv(text: str | None, calls: list[ToolCall]) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="q")]),
        final_response=types.Content(role="model", parts=[types.Part(text=text)]),
        intermediate_data=IntermediateData(tool_uses=[types.FunctionCall(name=c.name, args=c.args) for c in calls]),
    )


def _actual_variants(case: Case) -> list[list[TurnOutput]]:
    """The expected answers themselves, then answers with the last turn's tools and text dropped."""
    exact = [TurnOutput(text=t.expected_response or "", tool_calls=list(t.expected_tools)) for t in case.turns]
    broken = [TurnOutput(text=o.text, tool_calls=list(o.tool_calls)) for o in exact]
    broken[-1] = TurnOutput(text="Sorry, something else.", tool_calls=[ToolCall("unexpected_tool", {"x": 1})])
    return [exact, broken]


def test_imported_adk_cases_graded_like_adk(cases: list[Case]) -> None:
    traj, ref = TrajectoryGrader(), ReferenceMatchGrader()
    scenario = [c for c in cases if "simulated_user" in c.criteria]
    assert scenario and all(traj.grade(c, Response.from_text("x")).passed is None for c in scenario)
    graded = 0
    for case in cases:
        if case in scenario:
            continue
        threshold = float(case.criteria["tool_trajectory_avg_score"])
        adk_traj = traj_eval.TrajectoryEvaluator(threshold=threshold)
        adk_match = match_eval.RougeEvaluator(
            EvalMetric(
                metric_name="response_match_score",
                criterion=BaseCriterion(threshold=float(case.criteria["response_match_score"])),
            )
        )
        expected = [_inv(t.expected_response, list(t.expected_tools)) for t in case.turns]
        for i, turns in enumerate(_actual_variants(case)):
            response = Response(turns=turns)
            actual = [_inv(o.text, o.tool_calls) for o in turns]
            ours = traj.grade(case, response)
            theirs = adk_traj.evaluate_invocations(actual, expected)
            assert ours.score == theirs.overall_score, case.id
            assert ours.passed == (theirs.overall_eval_status.name == "PASSED")
            if i == 0:
                assert ours.passed is True
            r = ref.grade(case, response)
            if any(t.expected_response for t in case.turns):
                m = adk_match.evaluate_invocations(actual, expected)
                assert r.score == m.overall_score, case.id
                assert r.passed == (m.overall_eval_status.name == "PASSED"), case.id
            graded += 1
    assert graded >= 14
