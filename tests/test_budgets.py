"""A run's budget (--max-calls, --max-tokens-total, --max-cost) against a real local server.

A call is admitted only while the budget remains and a returned call's tokens and money are
added, so a budget is overshot by at most the calls in flight (checked at 64 in flight); the run
stops "stopped: budget" (INVALID, its spend in run.json), the gate says it is not evidence (exit 3)
with what was spent, and the same run id with a larger budget finishes it with a full run's outcomes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply
from ray_cluster import ray_cluster  # noqa: F401 - the session's cluster fixture

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.graders._judge import JudgeGrader
from goldenkit.providers._base import Provider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.records import Case, Response
from goldenkit.results import outcomes_df
from goldenkit.runner import Limiter, run_eval
from goldenkit.runner._budget import Budget, BudgetSpent
from goldenkit.runner._ray_executor import RaySettings

TOKENS_IN, TOKENS_OUT = 10, 5  # every reply's usage: 15 tokens a call
PRICING = """
[graders]
use = ["contract"]
[pricing."m"]
input = 1.0
output = 2.0
source = "test list"
date = "2026-11-01"
"""  # a call costs (10 x 1 + 5 x 2) / 1e6 = 2e-5 USD


def _dataset(root: Path, n: int) -> Path:
    return write_dataset(
        root, numbered_rows(n, lambda i: {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}})
    )


@pytest.fixture
def server():
    with FakeModelServer(default=Reply.slow(0.02, "yes", tokens_in=TOKENS_IN, tokens_out=TOKENS_OUT)) as srv:
        yield srv


def _run(root: Path, srv: FakeModelServer, ds: Path, run_id: str, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
    argv += ["--results-dir", str(root / "res"), "--run-id", run_id, *extra]
    return main(argv)


def _manifest(root: Path, run_id: str) -> dict[str, Any]:
    return json.loads((root / "res" / run_id / "run.json").read_text())  # type: ignore[no-any-return]


def _verdicts(root: Path, run_id: str) -> list[tuple[str, int, str]]:
    df = outcomes_df(root / "res" / run_id)
    return sorted(zip(df["row_id"], df["repeat"], df["verdict"], strict=True))


def test_a_budget_at_64_in_flight_stops_within_the_calls_in_flight_and_resumes_to_a_full_run(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, 300)
    budget = 100 * (TOKENS_IN + TOKENS_OUT)  # 100 calls' tokens
    code = _run(tmp_path, server, ds, "b", "--max-in-flight", "64", "--max-tokens-total", str(budget))
    out = capsys.readouterr().out
    assert code == 3 and "stopped: budget: --max-tokens-total 1500 reached" in out
    calls = server.count()
    assert 100 <= calls <= 100 + 64  # admitted while the tokens remained: at most the calls in flight beyond
    man = _manifest(tmp_path, "b")
    assert man["validity"] == "INVALID" and man["stopped_because"] == "budget" and man["complete"] is False
    rec = man["budget"]
    assert rec["stopped"] is True and rec["max_tokens_total"] == budget
    assert rec["spent"]["calls"] == calls and rec["spent"]["tokens"] == calls * (TOKENS_IN + TOKENS_OUT)
    assert rec["remaining"] == {"tokens": 0}
    written = _verdicts(tmp_path, "b")
    assert len(written) == calls and {v for _, _, v in written} == {"PASS"}  # no outcome for a row not run

    assert main(["gate", str(tmp_path / "res" / "b")]) == 3
    gate = capsys.readouterr().out
    assert f"spent {calls} calls, {calls * 15} tokens" in gate and "remaining 0 tokens" in gate

    code = _run(tmp_path, server, ds, "b", "--max-in-flight", "64", "--max-tokens-total", str(300 * 15))
    capsys.readouterr()
    assert code == 0 and server.count() == 300  # the rows not run, once each
    man = _manifest(tmp_path, "b")
    assert man["validity"] == "VALID" and man["budget"]["spent"]["tokens"] == 300 * 15  # the run's total
    assert man["budget"]["stopped"] is False and "stopped_because" not in man
    assert _run(tmp_path, server, ds, "full", "--max-in-flight", "64") == 0
    assert _verdicts(tmp_path, "b") == _verdicts(tmp_path, "full")
    assert man["protocol_sha256"] == _manifest(tmp_path, "full")["protocol_sha256"]  # a budget is no protocol


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        (["--max-calls", "3"], "--max-calls 3 reached"),
        (["--max-tokens-total", "45"], "--max-tokens-total 45 reached"),
        (["--max-cost", "0.00005"], "--max-cost 5e-05 reached"),
    ],
)
def test_each_budget_stops_the_run_where_it_is_reached(
    tmp_path: Path, server: FakeModelServer, flags: list[str], refused: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, 12)
    (tmp_path / "priced.toml").write_text(PRICING)
    config = ["--config", str(tmp_path / "priced.toml"), "--max-in-flight", "1"]
    assert _run(tmp_path, server, ds, "b", *config, *flags) == 3
    assert refused in capsys.readouterr().out
    assert server.count() == 3  # one call at a time: the budget holds exactly (3 calls: 45 tokens, 6e-5 USD)
    rec = _manifest(tmp_path, "b")["budget"]
    assert rec["spent"] == {"calls": 3, "tokens": 45, "cost": 6e-05, "unpriced": 0, "uncounted": 0}
    assert len(_verdicts(tmp_path, "b")) == 3
    assert _run(tmp_path, server, ds, "full", *config) == 0
    assert _manifest(tmp_path, "b")["protocol_sha256"] == _manifest(tmp_path, "full")["protocol_sha256"]


def test_max_cost_without_prices_is_refused_before_anything_is_written(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, 3)
    (tmp_path / "plain.toml").write_text('[graders]\nuse = ["contract"]\n')
    assert _run(tmp_path, server, ds, "b", "--config", str(tmp_path / "plain.toml"), "--max-cost", "1") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs prices: " in err[0] and 'no [pricing] for model "m"' in err[0]
    assert server.count() == 0 and not (tmp_path / "res").exists()


def test_a_tiny_rpm_is_refused_before_anything_is_written(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, 3)
    assert _run(tmp_path, server, ds, "b", "--rpm", "0.0001") == 1
    err = capsys.readouterr().err
    assert "rpm 0.0001 waits 600000s between two calls" in err and "give --rpm 0.5 or more" in err
    assert server.count() == 0 and not (tmp_path / "res").exists()
    assert _run(tmp_path, server, ds, "ok", "--rpm", "6000") == 0  # pacing that waits 0.01 s runs


def test_the_limiter_refuses_a_call_over_budget_and_gives_its_slot_back() -> None:
    async def go() -> tuple[int, int]:
        lim = Limiter(4, budget=Budget(max_calls=2))
        for _ in range(2):
            await lim.acquire()
        with pytest.raises(BudgetSpent, match="--max-calls 2 reached"):
            await lim.acquire()
        in_flight = lim.in_flight
        lim.release()
        lim.release()
        assert lim.budget is not None
        return in_flight, lim.budget.spent.calls

    assert asyncio.run(go()) == (2, 2)  # the refused call holds no slot and is not counted


@pytest.mark.usefixtures("ray_cluster")
def test_a_budget_holds_for_the_whole_ray_cluster(tmp_path: Path, server: FakeModelServer) -> None:
    """Two workers ask the one limiter actor: the calls stop at the budget for the cluster, not per worker."""
    ds = read_dataset(_dataset(tmp_path, 60))
    provider = OpenAIProvider(model="m", base_url=server.url)
    common: dict[str, Any] = {"run_id": "b", "results_dir": tmp_path / "res", "progress": False, "max_in_flight": 8}
    summary = run_eval(ds, provider, ["contract"], executor=RaySettings(workers=2), max_calls=20, **common)
    assert summary.validity == "INVALID" and summary.invalid_reason is not None
    assert summary.invalid_reason.startswith("stopped: budget: --max-calls 20 reached; spent 20 calls")
    assert server.count() == 20  # admitted at the actor: never one more, whichever worker asked
    man = _manifest(tmp_path, "b")
    assert man["budget"]["spent"]["calls"] == 20 and man["budget"]["spent"]["tokens"] == 20 * 15
    assert len(_verdicts(tmp_path, "b")) == 20  # every call that returned is written, no other row
    resumed = run_eval(ds, provider, ["contract"], max_calls=100, **common)  # resumed here: the same run
    assert resumed.validity == "VALID" and server.count() == 60
    assert _manifest(tmp_path, "b")["budget"]["spent"]["calls"] == 60  # the run's total over both invocations


class _Judge(Provider):
    """A judge that accepts every answer, counting its calls."""

    name = "budget-judge"
    model = "judge-model"
    calls = 0

    def settings(self) -> dict[str, Any]:
        return {"model": self.model}

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        self.calls += 1
        return Response.from_text('{"decision": "ACCEPT"}', model=self.model, tokens_in=1, tokens_out=1)


def test_a_judge_call_the_budget_refuses_leaves_its_row_unwritten_not_a_grader_error(
    tmp_path: Path, server: FakeModelServer
) -> None:
    """One call at a time: candidate, judge, candidate, judge, candidate (the 5th call), then the judge of
    row 3 is refused: rows 1 and 2 are written, row 3 is not (no grader ERROR in its place)."""
    ds = read_dataset(_dataset(tmp_path, 6))
    judge = _Judge()
    graders = ["contract", JudgeGrader(judge, rubric_text="Accept any answer.")]
    provider = OpenAIProvider(model="m", base_url=server.url)
    where: dict[str, Any] = {"run_id": "j", "results_dir": tmp_path / "res", "progress": False}
    summary = run_eval(ds, provider, graders, max_in_flight=1, max_calls=5, **where)
    assert summary.invalid_reason is not None and "--max-calls 5 reached; spent 5 calls" in summary.invalid_reason
    assert (server.count(), judge.calls) == (3, 2)
    df = outcomes_df(tmp_path / "res" / "j")
    assert sorted(df["row_id"]) == ["r000", "r001"] and set(df["verdict"]) == {"PASS"}
    assert _manifest(tmp_path, "j")["budget"]["spent"]["tokens"] == 3 * 15 + 2 * 2  # the judge's tokens count
