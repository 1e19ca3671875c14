"""A hostile review of the runner's one seam for model calls (goldenkit.runner._calls.ModelCalls) and of the
budget counted through it.

Each test is a problem found by using the seam as a user would: the simulated user's tokens not charged to the
budget and its prices not checked by --max-cost, a judge call retried or failing entirely undercounted in the
outcome's usage, regrade's options built from a command line it did not parse.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError
from goldenkit.graders._judge import JudgeGrader
from goldenkit.providers._base import Provider
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.providers._simulator import get_simulator
from goldenkit.records import Case, Response
from goldenkit.results import read_run
from goldenkit.runner import run_eval

ACCEPT = '{"decision": "ACCEPT", "reasons": ["fine"]}'
FAST = {"backoff_base": 0.01, "max_retries": 2}
SIM_IN, SIM_OUT = 40, 7  # the simulated user's usage per call, as its server reports it
PRICED_AGENT = '[pricing."agent"]\ninput = 1.0\noutput = 2.0\nsource = "list"\ndate = "2026-11-01"\n'


class _Agent(Provider):
    """Answers "yes", reporting 1 token in and 1 out."""

    name = "agent"
    model = "agent"

    def settings(self) -> dict[str, Any]:
        return {"model": self.model}

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        return Response.from_text("yes", model=self.model, tokens_in=1, tokens_out=1)


def _dataset(tmp_path: Path, case: dict[str, Any]) -> Any:
    return read_dataset(write_dataset(tmp_path, [row("r1", case)], meta={"case_format": "contract"}))


def _scenario(tmp_path: Path) -> Any:
    return _dataset(tmp_path, {"scenario": {"starting_prompt": "Hi", "plan": "say hi twice", "max_turns": 2}})


def _manifest(summary: Any) -> dict[str, Any]:
    return json.loads((summary.path / "run.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _outcome(summary: Any) -> dict[str, Any]:
    return dict(read_run(summary.path).outcomes().iloc[0])


def test_the_simulated_users_tokens_count_against_the_budget(tmp_path: Path) -> None:
    with FakeModelServer(default=Reply.text("hello again", tokens_in=SIM_IN, tokens_out=SIM_OUT)) as srv:
        sim = get_simulator("openai", model="user", base_url=srv.url)
        summary = run_eval(
            _scenario(tmp_path),
            _Agent(),
            ["contract"],
            results_dir=tmp_path / "res",
            run_id="r",
            progress=False,
            user_simulator=sim,
            max_tokens_total=10_000,
            max_ungradable=None,
        )
        assert srv.count() == 1
    spent = _manifest(summary)["budget"]["spent"]
    # two agent turns of 2 tokens each, one simulator call of 47: every call the run made counts
    assert (spent["calls"], spent["tokens"], spent["uncounted"]) == (3, 2 * 2 + SIM_IN + SIM_OUT, 0)


def test_max_cost_refuses_a_simulated_user_without_prices(tmp_path: Path) -> None:
    config = tmp_path / "priced.toml"
    config.write_text(PRICED_AGENT, encoding="utf-8")  # the candidate is priced, the simulated user is not
    sim = get_simulator("openai", model="user-model", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r'no \[pricing\] for model "user-model"'):
        run_eval(
            _scenario(tmp_path),
            _Agent(),
            ["contract"],
            results_dir=tmp_path / "res",
            run_id="r",
            progress=False,
            user_simulator=sim,
            max_cost=1.0,
            config=config,
            max_ungradable=None,
        )
    assert not (tmp_path / "res" / "r").exists()  # refused before anything is written


def _judged(tmp_path: Path, srv: FakeModelServer, **kw: Any) -> Any:
    judge = JudgeGrader(OpenAIProvider(model="judge", base_url=srv.url), rubric_text="Accept yes.")
    ds = _dataset(tmp_path, {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}})
    common = {"results_dir": tmp_path / "res", "run_id": "r", "progress": False, "max_ungradable": None}
    return run_eval(ds, _Agent(), ["contract", judge], **common, **FAST, **kw)


def test_a_retried_judge_call_counts_every_attempt_in_the_outcomes_usage(tmp_path: Path) -> None:
    with FakeModelServer(default=Reply.text(ACCEPT, tokens_in=30, tokens_out=3)) as srv:
        srv.script(Reply.status(503))
        summary = _judged(tmp_path, srv, max_calls=100)
        assert srv.count() == 2
    judge = _outcome(summary)["usage"]["judge"]
    assert (judge["calls"], judge["tokens_in"], judge["tokens_out"]) == (2, 30, 3)
    assert _manifest(summary)["budget"]["spent"]["calls"] == 3  # the candidate's call and the judge's two


def test_a_judge_call_that_fails_entirely_records_its_attempts(tmp_path: Path) -> None:
    with FakeModelServer(default=Reply.status(500)) as srv:
        summary = _judged(tmp_path, srv, max_calls=100)
        assert srv.count() == 3
    out = _outcome(summary)
    assert out["verdict"] == "PASS"  # a soft judge's outage is the judge's error, never the row's quality
    judge = out["usage"]["judge"]
    assert (judge["calls"], judge["tokens_in"]) == (3, None)  # paid for nothing it can count: calls only
    assert _manifest(summary)["budget"]["spent"]["calls"] == 4


def test_regrade_reads_max_ungradable_from_its_command_line_over_the_run_table(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path, [row("r1", {"prompt": "Say anything"})])  # nothing the contract grader can check
    cfg = tmp_path / "gk.toml"
    cfg.write_text('[graders]\nuse = ["contract"]\n[run]\nmax_ungradable = 1.0\n', encoding="utf-8")
    res = tmp_path / "res"
    argv = ["run", str(ds), "--provider", "callable", "--callable", "json:dumps", "--results-dir", str(res)]
    main([*argv, "--run-id", "a", "--quiet", "--config", str(cfg)])
    regrade = ["regrade", "a", "--results-dir", str(res), "--config", str(cfg), "--quiet", "--run-id"]
    assert main([*regrade, "b"]) != 1  # [run] max_ungradable = 1.0 allows the ungradable row
    assert main([*regrade, "c", "--max-ungradable", "0"]) == 1  # the command line over [run]
    assert (res / "b" / "run.json").is_file() and not (res / "c").exists()


def test_a_simulated_user_that_hangs_is_cut_at_the_runs_timeout_not_read_when_it_answers(tmp_path: Path) -> None:
    with FakeModelServer(default=Reply.hang(2.0)) as srv:  # answers "too late" after 2 s
        sim = get_simulator("openai", model="user", base_url=srv.url)  # no seed: the client built first
        summary = run_eval(
            _scenario(tmp_path),
            _Agent(),
            ["contract"],
            results_dir=tmp_path / "res",
            run_id="r",
            progress=False,
            user_simulator=sim,
            timeout=0.5,
            max_retries=0,
            max_ungradable=None,
        )
    out = _outcome(summary)
    # before, the simulator kept the 60 s default of the client it built before the run configured it
    assert (out["verdict"], out["error_kind"]) == ("ERROR", "simulator") and "0.5" in out["detail"], out["detail"]


@pytest.mark.parametrize("status", [503, 429])
def test_a_retry_after_beyond_the_cap_is_infrastructure_at_once_whatever_the_status(
    tmp_path: Path, status: int
) -> None:
    ds = _dataset(tmp_path, {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}})
    with FakeModelServer(default=Reply.text("yes")) as srv:
        srv.script(Reply.status(status, retry_after=20))  # a 503 that asks for 20 s was waited out, uncapped
        summary = run_eval(
            ds,
            OpenAIProvider(model="m", base_url=srv.url),
            ["contract"],
            results_dir=tmp_path / "res",
            run_id="r",
            progress=False,
            max_retry_after=0.5,
            max_error_rate=1.0,
        )
        assert srv.count() == 1
    out = _outcome(summary)
    assert (out["verdict"], out["error_kind"]) == ("ERROR", "infrastructure")
    assert f"HTTP {status} from" in out["detail"] and "Retry-After 20s exceeds the cap of 0.5s" in out["detail"]


def test_a_call_past_its_whole_request_deadline_names_that_deadline(tmp_path: Path) -> None:
    async def hangs(case: Any) -> str:
        await asyncio.sleep(30)
        return "yes"

    ds = _dataset(tmp_path, {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}})
    common = {"results_dir": tmp_path / "res", "run_id": "r", "progress": False, "max_error_rate": 1.0}
    summary = run_eval(ds, CallableProvider(hangs, threads=0), ["contract"], timeout=0.25, max_retries=0, **common)
    out = _outcome(summary)
    # the deadline is --timeout x the case's turns + 1 s; before, the error said 0.25s, having waited 1.25 s
    assert (out["verdict"], out["error_kind"]) == ("ERROR", "infrastructure") and "1.25s" in out["detail"]


class _Judge(_Agent):
    name = "judge-provider"
    model = "judge-model"

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        return Response.from_text(ACCEPT, model=self.model, tokens_in=30, tokens_out=3)


def test_a_budget_set_on_resume_counts_the_judges_tokens_of_the_earlier_invocations(tmp_path: Path) -> None:
    rows = [row(f"r{i}", {"prompt": "Say yes", "expect": {"must_contain": ["yes"]}}) for i in range(2)]
    ds = read_dataset(write_dataset(tmp_path, rows, meta={"case_format": "contract"}))
    common = {"results_dir": tmp_path / "res", "run_id": "r", "progress": False}
    run_eval(ds, _Agent(), ["contract", JudgeGrader(_Judge(), rubric_text="Accept yes.")], **common)  # no budget
    again = run_eval(
        ds, _Agent(), ["contract", JudgeGrader(_Judge(), rubric_text="Accept yes.")], max_tokens_total=10_000, **common
    )
    spent = _manifest(again)["budget"]["spent"]
    # two rows: the candidate's 2 tokens and the judge's 33 each; before, the judge's were left out
    assert (spent["calls"], spent["tokens"]) == (4, 2 * (2 + 33))
