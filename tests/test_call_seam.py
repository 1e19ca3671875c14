"""One seam for every model call (goldenkit.runner._calls.ModelCalls): each caller -- the runner, the judge, the
simulated user, explain, pairwise judging, calibration, scenario generation -- retries a 429 after its Retry-After
through it and succeeds; a 500 storm ends as an error of its kind (pairwise: an error row, never undecided); two
runs sharing one judge object each count their judge's calls against their own limiter."""

from __future__ import annotations

import asyncio
import json
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import row, tiny_dataset, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ProviderError
from goldenkit.graders._calibration import judge_labels, read_labels
from goldenkit.graders._judge import JudgeGrader
from goldenkit.leaderboards._pairwise import pairwise_compare
from goldenkit.providers._base import Provider
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.providers._simulator import get_simulator
from goldenkit.records import Case, Response, Turn
from goldenkit.results import read_run
from goldenkit.runner import arun_eval, run_eval
from goldenkit.runner._calls import CallLimits, ModelCalls
from goldenkit.runner._explain import JudgeSettings, _ask_all
from goldenkit.runner._ray_executor import SpecSetup
from goldenkit.scenarios._generate import ModelGenerator

WAIT = 0.3  # the Retry-After of the scripted 429, in seconds
ACCEPT = '{"decision": "ACCEPT", "reasons": ["fine"]}'
FAST = {"backoff_base": 0.01, "max_retries": 2}


def _throttled_then(server: FakeModelServer, reply: Reply) -> None:
    server.script(Reply.status(429, retry_after=WAIT), reply)


def _waited(server: FakeModelServer) -> None:
    """Two requests, the second at least Retry-After after the first."""
    assert server.count() == 2
    first, second = server.requests[0].at, server.requests[1].at
    assert second - first >= WAIT


def _one_row(tmp_path: Path, case: dict[str, Any] | None = None) -> Any:
    rows = [row("r1", case or {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}})]
    return read_dataset(write_dataset(tmp_path, rows, meta={"case_format": "contract"}))


def _outcome(summary: Any) -> dict[str, Any]:
    return dict(read_run(summary.path).outcomes().iloc[0])


def _run(tmp_path: Path, provider: Any, graders: list[Any], **kw: Any) -> dict[str, Any]:
    kw.setdefault("max_ungradable", None)
    common = {"results_dir": tmp_path / "res", "run_id": "r", "progress": False, **FAST}
    return _outcome(run_eval(_one_row(tmp_path, kw.pop("case", None)), provider, graders, **common, **kw))


def _yes(case: Any) -> str:
    return "yes"


def test_the_runner_retries_a_429_after_its_retry_after(tmp_path: Path) -> None:
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text("yes"))
        out = _run(tmp_path, OpenAIProvider(model="m", base_url=srv.url), ["contract"])
        _waited(srv)
    assert (out["verdict"], out["attempts"]) == ("PASS", 2)


def test_the_judge_retries_through_its_runs_seam(tmp_path: Path) -> None:
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text(ACCEPT))
        judge = JudgeGrader(OpenAIProvider(model="judge", base_url=srv.url), rubric_text="Accept yes.")
        out = _run(tmp_path, CallableProvider(_yes, threads=0), ["contract", judge])
        _waited(srv)
    assert out["verdict"] == "PASS" and "ACCEPT" in json.dumps(out["graders"], default=str)


def test_the_simulated_user_retries_through_the_seam(tmp_path: Path) -> None:
    scenario = {"scenario": {"starting_prompt": "Hi", "plan": "say hi twice", "max_turns": 2}}
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text("hello again"))
        sim = get_simulator("openai", model="user", base_url=srv.url)
        out = _run(tmp_path, CallableProvider(_yes, threads=0), ["contract"], case=scenario, user_simulator=sim)
        _waited(srv)
    assert out["verdict"] != "ERROR", out["detail"]
    assert out["attempts"] == 4  # two agent turns, the simulator's call twice


def _judge_case() -> Case:
    return Case(id="q", shape="contract", turns=(Turn(user="Which is better?"),))


def test_explain_retries_through_the_seam() -> None:
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text("The candidate stopped answering refunds."))
        settings = JudgeSettings("openai", "judge", {"base_url": srv.url})
        said = asyncio.run(_ask_all(settings, [("c1", _judge_case(), [])], {"config": FAST}))
        _waited(srv)
    assert said == {"c1": "The candidate stopped answering refunds."}


def test_calibration_retries_through_the_seam(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "1", "human": "ACCEPT", "response": "yes"}) + "\n", encoding="utf-8")
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text(ACCEPT))
        judge = JudgeGrader(OpenAIProvider(model="judge", base_url=srv.url), rubric_text="Accept yes.")
        calls = ModelCalls(CallLimits(**FAST))
        decisions = asyncio.run(judge_labels(read_labels(labels), judge, call=calls.response))
        _waited(srv)
    assert decisions == ["ACCEPT"] and calls.calls == 2


def test_scenario_generation_retries_through_the_seam() -> None:
    scenarios = [{"starting_prompt": "Where is my order?", "plan": "ask about order A-1", "slice": "orders"}]
    with FakeModelServer() as srv:
        _throttled_then(srv, Reply.text(json.dumps(scenarios)))
        text = ModelGenerator("openai", model="gen", base_url=srv.url)({"instruction": "help"}, 1, None)
        _waited(srv)
    assert json.loads(text) == scenarios


def _pair_of_runs(tmp_path: Path, n: int = 2) -> tuple[Path, Path]:
    """Two fixture runs of the same ``n`` rows, answering differently."""
    ds, results = tiny_dataset(tmp_path, n), tmp_path / "results"
    for run_id, text in (("base", "yes."), ("cand", "yes, explained")):
        fx = tmp_path / f"fx-{run_id}"
        fx.mkdir()
        (fx / "meta.json").write_text(json.dumps({"schema_version": 1, "agent": run_id, "model_id": f"m-{run_id}"}))
        lines = [{"row_id": f"r{i:03d}", "repeat": 0, "turns": [{"text": text, "tool_calls": []}]} for i in range(n)]
        (fx / "fixtures.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        args = ["run", str(ds), "--provider", "fixtures", "--fixtures", str(fx), "--run-id", run_id]
        assert main([*args, "--results-dir", str(results), "--quiet"]) == 0
    return results / "base", results / "cand"


def _pairwise_judge(url: str) -> JudgeGrader:
    return JudgeGrader("openai", model="judge", rubric_text="Prefer the longer answer.", options={"base_url": url})


def test_pairwise_judging_retries_a_429_through_the_seam(tmp_path: Path) -> None:
    base, cand = _pair_of_runs(tmp_path, 1)
    with FakeModelServer(default=Reply.text('{"preference": "TIE"}')) as srv:
        srv.script(Reply.status(429, retry_after=WAIT))
        res = pairwise_compare(base, cand, _pairwise_judge(srv.url), max_in_flight=1)
        assert srv.count() == 3  # both orders, one of them twice
    ov = res.overall
    assert (ov["ties"], ov["undecided"], ov["errors"]) == (1, 0, 0)


def test_a_500_storm_is_an_error_of_its_kind_for_every_caller(tmp_path: Path) -> None:
    base, cand = _pair_of_runs(tmp_path)
    with FakeModelServer(default=Reply.status(500)) as srv:
        res = pairwise_compare(base, cand, _pairwise_judge(srv.url))
        pairwise_requests = srv.count()
        out = _run(tmp_path / "run", OpenAIProvider(model="m", base_url=srv.url), ["contract"])
        judge = JudgeGrader(OpenAIProvider(model="judge", base_url=srv.url), rubric_text="Accept yes.")
        judged = _run(tmp_path / "judged", CallableProvider(_yes, threads=0), ["contract", judge])
    assert pairwise_requests == 4 * (CallLimits.max_retries + 1)  # 2 rows x 2 orders, each retried to the end
    # a 5xx that never recovered keeps its kind (transient), the same for the run's outcome and the pairwise row
    assert (out["verdict"], out["error_kind"], out["attempts"]) == ("ERROR", "transient", 3)
    assert list(res.rows["outcome"]) == ["error", "error"] and set(res.rows["error_kind"]) == {out["error_kind"]}
    assert (res.overall["errors"], res.overall["undecided"]) == (2, 0)
    assert judged["verdict"] == "PASS"  # a soft judge's failure is its own error, never the row's verdict
    assert "judge call failed" in json.dumps(judged["graders"], default=str) and "after 3 attempts" in json.dumps(
        judged["graders"], default=str
    )


class _SlowAgent(Provider):
    """Answers "yes" after yielding to the loop, so two runs' calls interleave."""

    name = "slow"
    model = "agent"

    def settings(self) -> dict[str, Any]:
        return {"model": self.model}

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        await asyncio.sleep(0.005)
        return Response.from_text("yes", model=self.model, tokens_in=1, tokens_out=1)


class _CountingJudge(_SlowAgent):
    name = "counting-judge"
    model = "judge-model"
    calls = 0

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        self.calls += 1
        await asyncio.sleep(0.005)
        return Response.from_text(ACCEPT, model=self.model, tokens_in=1, tokens_out=1)


def test_two_runs_sharing_one_judge_count_its_calls_each_on_their_own_limiter(tmp_path: Path) -> None:
    rows = [row(f"r{i}", {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}}) for i in range(12)]
    ds = read_dataset(write_dataset(tmp_path, rows, meta={"case_format": "contract"}))
    provider = _CountingJudge()
    judge = JudgeGrader(provider, rubric_text="Accept yes.")  # one grader object, both runs
    sizes = {"a": 4, "b": 12}

    async def both() -> list[Any]:
        runs = [
            arun_eval(
                ds,
                _SlowAgent(),
                ["contract", judge],
                results_dir=tmp_path / "res",
                run_id=run_id,
                progress=False,
                sample=None if n == 12 else {"per_slice": n, "seed": 1},
                max_calls=1000,
                max_in_flight=3,
            )
            for run_id, n in sizes.items()
        ]
        return list(await asyncio.gather(*runs))

    summaries = asyncio.run(both())
    spent = {}
    for summary in summaries:
        manifest = json.loads((summary.path / "run.json").read_text(encoding="utf-8"))
        rows_run = len(read_run(summary.path).outcomes())
        spent[summary.run_id] = (rows_run, manifest["budget"]["spent"]["calls"])
    assert spent == {"a": (4, 8), "b": (12, 24)}  # each row: its candidate call and its judge call, in its run
    assert provider.calls == 16
    assert {s.calls for s in summaries} == {8, 24}


def test_the_seam_raises_what_still_fails_with_its_attempts() -> None:
    class Down(_SlowAgent):
        name = "down"

        async def complete(self, case: Case, *, repeat: int = 0) -> Response:
            raise ProviderError("HTTP 503 from http://h/v1", transient=True, status=503)

    calls = ModelCalls(CallLimits(**FAST))
    with pytest.raises(ProviderError, match=r"after 3 attempts") as caught:
        asyncio.run(calls.response(Down(), _judge_case()))
    assert caught.value.kind == caught.value.final_kind and calls.calls == 3 and calls.limiter.in_flight == 0


def test_a_ray_workers_setup_builds_from_the_spec_importing_no_command_module(tmp_path: Path) -> None:
    """What ``goldenkit run --executor ray`` ships (a SpecSetup of the run's options), unpickled and called in a
    fresh interpreter as a worker does: the provider and graders are built, and no goldenkit.commands module is
    imported."""
    setup = SpecSetup({"provider": "callable", "callable": "json:dumps", "model": "m"}, {}, ["contract"])
    blob = tmp_path / "setup.pickle"
    blob.write_bytes(pickle.dumps(setup))
    worker = (
        "import pickle, sys\n"
        f"provider, graders = pickle.loads(open({str(blob)!r}, 'rb').read())()\n"
        "print(provider.name, [g.name for g in graders])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('goldenkit.commands', 'goldenkit.cli'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["callable ['contract']", "[]"]
