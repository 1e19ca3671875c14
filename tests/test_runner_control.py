"""Runs that stop when asked, have one writer, cap Retry-After, route the judge's calls, and record
no secret: a real SIGINT of a thread-mode run, a second process on a locked run folder, 429s from a
local server, a judge that shares the run's limiter, redaction, resume across commits, results/latest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Recorded, Reply

import goldenkit.runner._evaluate as evaluate_mod
import goldenkit.runner._versions as versions_mod
from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ProviderError, ResultsError
from goldenkit.graders._judge import JudgeGrader
from goldenkit.providers._base import Provider, Response
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._http import classify_status
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.results import iter_jsonl, outcomes_df, read_run
from goldenkit.runner import Limiter, redact_settings, run_eval
from goldenkit.runner._folder import RunLock

FAST = {"backoff_base": 0.01, "backoff_cap": 0.05, "progress": False}
ROOT = Path(__file__).resolve().parents[1]


def make_dataset(root: Path, n: int, bad: set[int] = frozenset()) -> Path:  # type: ignore[assignment]
    def case(i: int) -> dict[str, Any]:
        return {"turns": "not a list"} if i in bad else {"prompt": f"row r{i:02d}", "expect": {"must_contain": ["ok"]}}

    return write_dataset(root, numbered_rows(n, case, ids="r{:02d}"))


def _row(rec: Recorded) -> int:
    return int(rec.json["messages"][-1]["content"].split("r")[-1])


# ------------------------------------------------------------------ interrupt (item 10)

CELL = """
import asyncio, sys
from goldenkit.dataset import read_dataset
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.runner import run_eval

async def cell():  # a notebook cell: a loop is running in this thread, so run_eval uses a helper thread
    return run_eval(read_dataset(sys.argv[1]), OpenAIProvider(model="m1", base_url=sys.argv[2]), ["contract"],
                    run_id="nb", results_dir=sys.argv[3], max_in_flight=4, progress=False)

loop = asyncio.new_event_loop()  # no signal handler of asyncio's: SIGINT raises KeyboardInterrupt, as in a kernel
try:
    loop.run_until_complete(cell())
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_interrupting_a_thread_mode_run_cancels_it_writes_what_finished_and_resumes(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path, 30)
    res = tmp_path / "res"
    jsonl = res / "nb" / "outcomes.jsonl"
    # rows r00-r09 answer at once; the others would take 120 s, so the 4 in flight are cut off by the interrupt
    with FakeModelServer(responder=lambda r: Reply.text("ok") if _row(r) < 10 else Reply.slow(120.0, "ok")) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-c", CELL, str(ds), srv.url, str(res)], cwd=ROOT, stdout=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while _complete_lines(jsonl) < 10 or srv.count() < 14:
                assert proc.poll() is None and time.monotonic() < deadline, "the run never got going"
                time.sleep(0.02)
            t_kill, t_kill_mono = time.time(), time.monotonic()
            os.kill(proc.pid, signal.SIGINT)
            # exits well before the 120 s of its calls in flight (measured 0.8 s), else TimeoutExpired
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130 and "interrupted" in out
        time.sleep(0.3)
        assert srv.count() == 14  # no call started after the interrupt
        assert all(r.at <= t_kill_mono for r in srv.requests)  # the server's clock is time.monotonic()
        manifest = read_run(res / "nb").manifest
        ended = datetime.fromisoformat(manifest["ended_at"].replace("Z", "+00:00")).timestamp()
        # the calls in flight cancelled, not waited for: far below their 120 s (measured 0.01 s and 0.8 s)
        assert ended - t_kill < 60.0, f"in-flight calls cancelled and run.json written {ended - t_kill:.2f}s after"
        assert manifest["complete"] is False and "interrupted with 10 of 30" in manifest["invalid_reason"]
        assert [r["verdict"] for r in iter_jsonl(jsonl)] == ["PASS"] * 10
        assert (res / "nb" / ".lock").read_text() == ""  # released, not left for a takeover

        srv.responder = lambda r: Reply.text("ok")
        before = srv.count()
        s = run_eval(
            read_dataset(ds),
            OpenAIProvider(model="m1", base_url=srv.url),
            ["contract"],
            run_id="nb",
            results_dir=res,
            **FAST,
        )
        assert s.complete and s.validity == "VALID" and s.resumed == 10 and srv.count() - before == 20
        assert "lock_taken_over_from_pid" not in s.manifest["timings"]["invocations"][-1]
    assert len(outcomes_df(s.path)) == 30


# ------------------------------------------------------------------ one writer (item 11)


def test_a_second_process_on_a_live_run_is_refused_and_a_dead_holders_lock_is_taken_over(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 20)
    res = tmp_path / "results"
    with FakeModelServer(default=Reply.slow(0.5, "ok")) as srv:
        args = [
            "run",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            srv.url,
            "--model",
            "m",
            "--max-in-flight",
            "1",
            "--run-id",
            "w1",
            "--results-dir",
            str(res),
            "--quiet",
        ]
        proc = subprocess.Popen([sys.executable, "-m", "goldenkit.cli", *args], cwd=ROOT, stdout=subprocess.DEVNULL)
        try:
            lock = res / "w1" / ".lock"
            deadline = time.monotonic() + 60
            while not (lock.exists() and lock.read_text().strip() == str(proc.pid) and srv.count() > 0):
                assert proc.poll() is None and time.monotonic() < deadline, "the first run never started"
                time.sleep(0.02)
            assert main(args) == 1
            err = capsys.readouterr().err
            assert f"run w1 is being written by process {proc.pid}" in err and "--run-id" in err
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        srv.default = Reply.text("ok")
        with caplog.at_level("WARNING", logger="goldenkit.runner"):
            assert main(args) == 0
    assert f"took over the lock of process {proc.pid}" in caplog.text
    run = read_run(res / "w1")
    assert run.complete and run.manifest["timings"]["invocations"][-1]["lock_taken_over_from_pid"] == proc.pid


def test_a_second_run_in_the_same_process_is_refused(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path, 2))
    (tmp_path / "r" / "same").mkdir(parents=True)
    held = RunLock(tmp_path / "r" / "same", "same")
    assert held.acquire() is None
    try:
        with pytest.raises(ResultsError, match=rf"process {os.getpid()} \(this process"):
            run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="same", results_dir=tmp_path / "r")
    finally:
        held.release()
    assert run_eval(
        ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="same", results_dir=tmp_path / "r", **FAST
    ).complete


# ------------------------------------------------------------------ bad cases (item 8)


def test_goldenkit_run_refuses_a_case_that_cannot_be_normalized_before_the_first_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = make_dataset(tmp_path, 5, bad={3})
    with FakeModelServer() as srv:
        code = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--results-dir",
                str(tmp_path / "res"),
                "--quiet",
            ]
        )
        assert srv.count() == 0
    err = capsys.readouterr().err
    assert code == 1 and "dataset.jsonl:4:" in err and 'row "r03"' in err and "Traceback" not in err
    assert not (tmp_path / "res").exists()


# ------------------------------------------------------------------ Retry-After cap and quota (item 9)


def test_a_429_asking_to_wait_longer_than_the_cap_is_a_permanent_error(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path, 1))
    with FakeModelServer() as srv:
        srv.script(Reply.status(429, retry_after=3600))
        t0 = time.monotonic()
        s = run_eval(
            ds,
            OpenAIProvider(model="m1", base_url=srv.url),
            ["contract"],
            results_dir=tmp_path / "r",
            max_retry_after=120,
            max_error_rate=1.0,
            **FAST,
        )
        assert time.monotonic() - t0 < 10 and srv.count() == 1
    row = outcomes_df(s.path).iloc[0]
    assert row["verdict"] == "ERROR" and row["error_kind"] == "infrastructure" and row["attempts"] == 1
    assert "Retry-After 3600s exceeds the cap of 120s (--max-retry-after)" in row["detail"]
    assert s.manifest["config"]["max_retry_after"] == 120


def test_a_retry_after_under_the_cap_is_honoured(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path, 1))
    with FakeModelServer() as srv:
        srv.script(Reply.status(429, retry_after=0.4), Reply.text("ok"))
        s = run_eval(
            ds,
            OpenAIProvider(model="m1", base_url=srv.url),
            ["contract"],
            results_dir=tmp_path / "r",
            max_retry_after=1,
            **FAST,
        )
        assert srv.requests[1].at - srv.requests[0].at >= 0.4
    assert s.counts["PASS"] == 1


def test_one_throttled_call_never_pauses_the_run_longer_than_the_cap() -> None:
    lim = Limiter(4, max_pause=2.0)
    before = time.monotonic()
    lim.on_throttled(3600.0)
    assert lim.pause_until - before <= 2.0 + 0.1


QUOTA = '{"error": {"message": "You exceeded your current quota, please check your plan and billing details.", '
QUOTA += '"type": "insufficient_quota", "code": "insufficient_quota"}}'


def test_quota_exhausted_is_permanent_and_named(tmp_path: Path) -> None:
    err = classify_status(429, QUOTA.encode(), "http://h/v1/chat/completions")
    assert not err.transient and "quota or credit exhausted" in str(err)
    assert classify_status(429, b'{"error": {"message": "Rate limit reached"}}', "http://h").transient
    ds = read_dataset(make_dataset(tmp_path, 1))
    with FakeModelServer(default=Reply.status(429, body=QUOTA)) as srv:
        s = run_eval(
            ds,
            OpenAIProvider(model="m1", base_url=srv.url),
            ["contract"],
            results_dir=tmp_path / "r",
            max_error_rate=1.0,
            **FAST,
        )
        assert srv.count() == 1  # not retried
    row = outcomes_df(s.path).iloc[0]
    assert row["error_kind"] == "infrastructure" and "quota or credit exhausted" in row["detail"]


# ------------------------------------------------------------------ the judge inside a run (items 6, 19)


class _Shared:
    in_flight = 0
    peak = 0


class _Counted(Provider):
    """A provider that counts how many calls (model and judge together) are in flight."""

    name = "counted"

    def __init__(self, text: str, shared: type[_Shared], fail_first: int = 0, model: str = "m") -> None:
        self.text, self.shared, self.fail_first, self.model = text, shared, fail_first, model
        self.calls = 0
        self.closed = False

    def settings(self) -> dict[str, object]:
        return {"model": self.model}

    async def complete(self, case: object, *, repeat: int = 0) -> Response:
        import asyncio

        self.calls += 1
        self.shared.in_flight += 1
        self.shared.peak = max(self.shared.peak, self.shared.in_flight)
        try:
            await asyncio.sleep(0.01)
            if self.calls <= self.fail_first:
                raise ProviderError("HTTP 429 from judge", transient=True, status=429, retry_after=0.05)
            return Response.from_text(self.text)
        finally:
            self.shared.in_flight -= 1

    async def aclose(self) -> None:
        self.closed = True


def _judge(provider: Provider) -> JudgeGrader:
    return JudgeGrader(provider, rubric_text="Be strict.", model="judge-1")


def test_judge_calls_share_the_limiter_and_retries_and_the_judge_is_closed(tmp_path: Path) -> None:
    class S(_Shared):
        pass

    ds = read_dataset(make_dataset(tmp_path, 6))
    judge_provider = _Counted('{"decision": "ACCEPT", "score": 1, "reasons": ["fine"]}', S, fail_first=2, model="j")
    s = run_eval(
        ds, _Counted("ok", S), ["contract", _judge(judge_provider)], results_dir=tmp_path / "r", max_in_flight=2, **FAST
    )
    assert S.peak <= 2  # the model's and the judge's calls together never exceed max_in_flight
    assert judge_provider.calls == 6 + 2 and judge_provider.closed  # two 429s retried; closed at the end
    graders = outcomes_df(s.path)["graders"]
    assert all(g["judge"]["passed"] is True for g in graders) and s.validity == "VALID"


def test_a_failed_judge_call_counts_toward_the_error_rate(tmp_path: Path) -> None:
    class S(_Shared):
        pass

    ds = read_dataset(make_dataset(tmp_path, 4))
    judge_provider = _Counted("{}", S, fail_first=10**6, model="j")
    s = run_eval(
        ds, _Counted("ok", S), ["contract", _judge(judge_provider)], results_dir=tmp_path / "r", max_retries=1, **FAST
    )
    assert s.counts["PASS"] == 4 and s.counts["grader_errors"] == 4  # a soft judge does not decide the row
    assert s.validity == "INVALID" and "soft grader that could not grade" in (s.invalid_reason or "")
    reason = outcomes_df(s.path)["graders"][0]["judge"]["reason"]
    assert reason.startswith("judge call failed: HTTP 429 from judge") and "after 2 attempts" in reason


def test_the_judge_version_leaves_out_transport_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_KEY_A", "a")
    monkeypatch.setenv("JUDGE_KEY_B", "b")

    def version(**options: object) -> str:
        return JudgeGrader("openai", model="judge-1", rubric_text="Be strict.", options=options).judge_version

    a = version(base_url="http://one:8000/v1", timeout=10, api_key_env="JUDGE_KEY_A", temperature=0)
    b = version(base_url="http://two:9000/v1", timeout=99, api_key_env="JUDGE_KEY_B", temperature=0)
    assert a == b
    assert version(base_url="http://one:8000/v1", temperature=0.7) != a  # sampling settings still count


# ------------------------------------------------------------------ resume across commits (item 12)


def test_a_new_git_commit_does_not_refuse_a_resume_and_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = read_dataset(make_dataset(tmp_path, 3))
    commits = iter(["a" * 40, "b" * 40, "c" * 40])
    monkeypatch.setattr(versions_mod, "git_commit", lambda cwd=None: next(commits))
    fail = {"r01"}

    def agent(case: object) -> str:
        if getattr(case, "id", "") in fail:
            raise ValueError("down")
        return "ok"

    kw = {"run_id": "c", "results_dir": tmp_path / "r", "max_error_rate": 1.0, **FAST}
    run_eval(ds, CallableProvider(agent), ["contract"], **kw)
    fail.clear()
    s = run_eval(ds, CallableProvider(agent), ["contract"], retry_errors=True, **kw)
    assert s.complete and s.counts["PASS"] == 3 and s.git_commits == ["a" * 40, "b" * 40]
    assert "resumed across git commits aaaaaaaaaaaa, bbbbbbbbbbbb" in s.line()
    assert s.manifest["agent_version"]["git_commit"] == "a" * 40  # the run's key keeps its first commit
    assert {r["agent_version"]["git_commit"] for r in iter_jsonl(s.path / "outcomes.jsonl")} == {"a" * 40}
    with pytest.raises(ResultsError, match="model_id"):  # another model still refuses a resume
        run_eval(ds, CallableProvider(agent, model="m2"), ["contract"], **kw)


# ------------------------------------------------------------------ redaction (item 17)


def test_redaction_normalizes_key_spellings_and_scrubs_urls_in_values(tmp_path: Path) -> None:
    settings = {
        "X-Api-Key": "k1",
        "api-key": "k2",
        "accessToken": "k3",
        "bearer": "k4",
        "pwd": "k5",
        "secrets": ["k6"],
        "APIKEY": "k7",
        "client_secret": "k8",
        "headers": {"Authorization": "Bearer k9"},
        "max_tokens": 5,
        "api_key_env": "OPENAI_API_KEY",
        "keep": "",
        "base_url": "https://user:k10@example.com/v1?api-key=k11&model=x&sig=k12",
        "notes": ["see http://u:k13@host:8080/path?accessToken=k14 for details"],
    }
    out = redact_settings(settings)
    blob = json.dumps(out)
    assert not any(f"k{i}" in blob.replace("keep", "") for i in range(1, 15)), blob
    assert out["max_tokens"] == 5 and out["api_key_env"] == "OPENAI_API_KEY" and out["keep"] == ""
    assert out["base_url"] == "https://***@example.com/v1?api-key=***&model=x&sig=***"
    assert out["notes"] == ["see http://***@host:8080/path?accessToken=*** for details"]
    ds = read_dataset(make_dataset(tmp_path, 1))
    s = run_eval(
        ds,
        CallableProvider(lambda c: "ok"),
        ["contract"],
        results_dir=tmp_path / "r",
        config={"proxy": "http://me:hunter2@proxy:3128", "X-Auth-Token": "hunter3"},
        **FAST,
    )
    text = (s.path / "run.json").read_text()
    assert "hunter2" not in text and "hunter3" not in text and "proxy:3128" in text


# ------------------------------------------------------------------ results/latest and ttft_ms


def test_every_run_points_results_latest_at_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = read_dataset(make_dataset(tmp_path, 1))
    res = tmp_path / "results"
    s1 = run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="one", results_dir=res, **FAST)
    assert (res / "latest").is_symlink() and read_run("latest", res).run_id == "one"
    run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="two", results_dir=res, **FAST)
    assert read_run(res / "latest").run_id == "two" and read_run(res / "latest").path == res / "two"

    def no_links(*a: object, **k: object) -> None:
        raise OSError("symbolic links are not allowed here")

    monkeypatch.setattr(os, "symlink", no_links)
    run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="three", results_dir=res, **FAST)
    assert (res / "latest").read_text().strip() == "three" and not (res / "latest").is_symlink()
    assert read_run("latest", res).run_id == "three" and len(read_run(res / "latest").outcomes()) == 1
    assert s1.path == res / "one"
    with pytest.raises(Exception, match="latest"):
        run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], run_id="latest", results_dir=res, **FAST)


def test_ttft_ms_is_written_from_the_response_and_null_when_not_streamed(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path, 2))
    s = run_eval(
        ds,
        CallableProvider(lambda c: Response.from_text("ok", ttft_ms=12.5) if c.id == "r00" else "ok"),
        ["contract"],
        results_dir=tmp_path / "r",
        **FAST,
    )
    df = outcomes_df(s.path).set_index("row_id")
    assert df.loc["r00", "ttft_ms"] == 12.5 and pd.isna(df.loc["r01", "ttft_ms"])
    old = outcomes_df(ROOT / "tests" / "data" / "runs" / "base")  # written before the column existed
    assert "ttft_ms" in old.columns and old["ttft_ms"].isna().all()


def test_progress_is_quiet_when_stderr_is_not_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = read_dataset(make_dataset(tmp_path, 2))
    run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], results_dir=tmp_path / "r", progress=None)
    assert capsys.readouterr().err == ""


def test_no_process_wide_gc_change(tmp_path: Path) -> None:
    import gc

    ds = read_dataset(make_dataset(tmp_path, 3))
    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    run_eval(ds, CallableProvider(lambda c: "ok"), ["contract"], results_dir=tmp_path / "r", **FAST)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
    assert not hasattr(evaluate_mod, "gc")


def _kernel_manager() -> object:
    """A blocking KernelManager whose kernel is this interpreter's ipykernel (no kernel spec lookup)."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import KernelManager

    class ThisInterpreter(KernelManager):  # type: ignore[misc]
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)
            self._kernel_spec = KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="goldenkit test",
                language="python",
            )

    return ThisInterpreter()


@pytest.mark.slow
def test_interrupting_a_jupyter_cell_cancels_the_run_and_the_bar_is_a_widget(tmp_path: Path) -> None:
    """A real kernel: the cell runs run_eval (thread mode, tqdm widget), the kernel is interrupted."""
    ds = make_dataset(tmp_path, 30)
    res = tmp_path / "res"
    jsonl = res / "jk" / "outcomes.jsonl"
    with FakeModelServer(responder=lambda r: Reply.text("ok") if _row(r) < 10 else Reply.slow(120.0, "ok")) as srv:
        km: Any = _kernel_manager()
        km.start_kernel(cwd=str(ROOT))
        try:
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=120)
            cell = (
                "from goldenkit.dataset import read_dataset\n"
                "from goldenkit.providers._openai import OpenAIProvider\n"
                "from goldenkit.runner import run_eval\n"
                f"run_eval(read_dataset({str(ds)!r}), OpenAIProvider(model='m1', base_url={srv.url!r}), "
                f"['contract'], run_id='jk', results_dir={str(res)!r}, max_in_flight=4)\n"
            )
            msg_id = kc.execute(cell)
            deadline = time.monotonic() + 120
            while _complete_lines(jsonl) < 10 or srv.count() < 14:
                assert time.monotonic() < deadline, "the cell's run never got going"
                time.sleep(0.05)
            t_kill = time.time()
            km.interrupt_kernel()
            reply = kc.get_shell_msg(timeout=60)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = kc.get_shell_msg(timeout=60)
            iopub = []
            while True:
                try:
                    iopub.append(kc.get_iopub_msg(timeout=1))
                except Exception:  # queue.Empty: every message of the cell read
                    break
            kc.stop_channels()
        finally:
            km.shutdown_kernel(now=True)
        # a KeyboardInterrupt that says what was kept and what resumes it
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "RunInterrupted"
        assert "interrupted: 10 of 30 outcomes kept in" in reply["content"]["evalue"]
        assert "run_id='jk'" in reply["content"]["evalue"]
        time.sleep(0.3)
        assert srv.count() == 14  # nothing called after the interrupt
    manifest = read_run(res / "jk").manifest
    ended = datetime.fromisoformat(manifest["ended_at"].replace("Z", "+00:00")).timestamp()
    # the calls in flight cancelled, not waited for: far below their 120 s (measured 0.002 s)
    assert ended - t_kill < 60.0 and "interrupted with 10 of 30" in manifest["invalid_reason"]
    assert [r["verdict"] for r in iter_jsonl(jsonl)] == ["PASS"] * 10
    widgets = [m for m in iopub if "application/vnd.jupyter.widget-view+json" in m["content"].get("data", {})]
    assert widgets, "the progress bar in Jupyter is a tqdm widget"


def test_in_a_run_a_hard_grader_error_makes_the_row_error_unless_another_hard_grader_failed(tmp_path: Path) -> None:
    from goldenkit.graders._base import FunctionGrader

    ds = read_dataset(make_dataset(tmp_path, 3))

    def flaky_checker(case: Any, response: Any) -> bool:
        if case.id != "r00":
            raise TimeoutError("classifier timed out")
        return True

    answers = {"r00": "ok", "r01": "ok", "r02": "no"}  # r02 fails the contract (must_contain "ok")
    s = run_eval(
        ds,
        CallableProvider(lambda c: answers[c.id]),
        ["contract", FunctionGrader(flaky_checker, name="cls")],
        results_dir=tmp_path / "r",
        max_error_rate=1.0,
        **FAST,
    )
    df = outcomes_df(s.path).set_index("row_id")
    assert list(df["verdict"]) == ["PASS", "ERROR", "FAIL"]
    assert (
        df.loc["r01", "error_kind"] == "grader"
        and "cls error: TimeoutError: classifier timed out" in df.loc["r01", "detail"]
    )
    assert s.counts["ERROR"] == 1 and s.pass_rate == 0.5  # the ERROR row is out of the denominator


def test_max_retry_after_from_the_run_table_of_goldenkit_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = make_dataset(tmp_path, 1)
    (ds / "goldenkit.toml").write_text("[run]\nmax_retry_after = 5\n", encoding="utf-8")
    with FakeModelServer(default=Reply.status(429, retry_after=30)) as srv:
        code = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--results-dir",
                str(tmp_path / "res"),
                "--run-id",
                "cap",
                "--quiet",
            ]
        )
        assert srv.count() == 1
    assert code == 3 and "Retry-After 30s exceeds the cap of 5s" in capsys.readouterr().out
    assert read_run(tmp_path / "res" / "cap").manifest["config"]["max_retry_after"] == 5
