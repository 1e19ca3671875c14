"""The runner against a real local HTTP server: every failure kind, retries, repeats, resume.

Every test talks to :class:`fakeserver.FakeModelServer` over real sockets; nothing
in httpx or the transport is replaced. Backoff is shortened with ``backoff_base``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from factories import rows_of, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError, DatasetError, ResultsError
from goldenkit.graders._base import FunctionGrader, Grader, GradeResult
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._fixtures import FixturesProvider
from goldenkit.providers._ollama import OllamaProvider
from goldenkit.providers._openai import OpenAIProvider, chat_completions_url
from goldenkit.results import iter_jsonl, outcomes_df, read_run
from goldenkit.runner import Limiter, redact_settings, run_eval

FAST = {"backoff_base": 0.01, "backoff_cap": 0.05, "progress": False}


def make_dataset(root: Path, cases: dict[str, dict], *, slices: dict[str, str] | None = None) -> Path:
    """A dataset folder with one row per ``cases`` item (id -> contract case)."""
    return write_dataset(root, rows_of(cases, slices=slices))


def contains(word: str) -> dict:
    return {"prompt": f"say {word}", "expect": {"must_contain": [word]}}


def must_contain_grader() -> Grader:
    """A tiny grader of our own: PASS when every expect.must_contain word is in the final text."""

    def check(case, response):
        words = case.raw.get("expect", {}).get("must_contain", [])
        missing = [w for w in words if w not in response.text]
        return GradeResult(
            passed=not missing, score=0.0 if missing else 1.0, reason=f"missing {missing}" if missing else ""
        )

    return FunctionGrader(check, name="has_words", version="t1")


@pytest.fixture
def server():
    with FakeModelServer() as srv:
        yield srv


def openai(srv: FakeModelServer, **kw) -> OpenAIProvider:
    return OpenAIProvider(model="m1", base_url=srv.url, **kw)


def one(run_dir: Path) -> dict:
    df = outcomes_df(run_dir)
    assert len(df) == 1
    return df.iloc[0].to_dict()


# ------------------------------------------------------------------ verdicts


def test_pass_and_fail_with_what_was_sent(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": {**contains("hello"), "system": "be brief"}, "b": contains("bye")}))
    server.responder = lambda req: Reply.text("hello there", tokens_in=7, tokens_out=2)
    prov = openai(server, temperature=0.2, seed=7, max_tokens=50)
    s = run_eval(ds, prov, [must_contain_grader()], run_id="r", results_dir=tmp_path / "res", **FAST)
    assert s.validity == "VALID" and s.exit_code == 0
    assert (s.counts["PASS"], s.counts["FAIL"], s.counts["ERROR"]) == (1, 1, 0)
    assert s.pass_rate == 0.5
    df = outcomes_df(s.path).set_index("row_id")
    assert df.loc["b", "verdict"] == "FAIL" and "missing ['bye']" in df.loc["b", "detail"]
    assert df.loc["a", "tokens_in"] == 7 and df.loc["a", "tokens_out"] == 2 and df.loc["a", "attempts"] == 1
    assert df.loc["a", "response"] == "hello there"
    body = next(r.json for r in server.requests if r.json["messages"][-1]["content"] == "say hello")
    assert body["model"] == "m1" and body["temperature"] == 0.2 and body["seed"] == 7 and body["max_tokens"] == 50
    assert body["messages"][:2] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hello"}]
    assert body["stream"] is False
    assert all(r.path == "/v1/chat/completions" for r in server.requests)
    assert (s.path / "outcomes.parquet").exists()
    man = read_run(s.path).manifest
    assert man["validity"] == "VALID" and man["complete"] is True and man["mode"] == "live"
    assert man["agent_version"]["model_id"] == "m1" and len(man["agent_version"]["prompt_sha256"]) == 64
    assert man["graders"] == {"has_words": "t1"} and man["repeats"] == 1


def test_base_url_with_or_without_v1():
    assert chat_completions_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert chat_completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert chat_completions_url("http://h:1/v1") == "http://h:1/v1/chat/completions"


def test_base_url_ending_in_v1_reaches_the_server(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    s = run_eval(
        ds,
        OpenAIProvider(model="m", base_url=server.url + "/v1"),
        [must_contain_grader()],
        results_dir=tmp_path / "r",
        **FAST,
    )
    assert s.counts["PASS"] == 1 and server.requests[0].path == "/v1/chat/completions"


def test_two_repeats_of_one_row_are_two_calls(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    s = run_eval(ds, openai(server), [must_contain_grader()], repeats=2, results_dir=tmp_path / "r", **FAST)
    assert server.count() == 2
    df = outcomes_df(s.path)
    assert sorted(df["repeat"]) == [0, 1] and set(df["row_id"]) == {"a"}


def test_429_retry_after_is_honoured(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.script(Reply.status(429, retry_after=1))
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    assert s.counts["PASS"] == 1
    assert server.count() == 2
    gap = server.requests[1].at - server.requests[0].at
    assert gap >= 1.0, f"retried after {gap:.3f}s despite Retry-After: 1"
    assert one(s.path)["attempts"] == 2


def test_500_is_retried_then_error_with_status_url_and_attempts(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.default = Reply.status(500)
    s = run_eval(ds, openai(server), [must_contain_grader()], max_retries=2, results_dir=tmp_path / "r", **FAST)
    assert server.count() == 3  # 1 + 2 retries
    o = one(s.path)
    assert o["verdict"] == "ERROR" and o["error_kind"] == "transient" and o["attempts"] == 3
    assert f"HTTP 500 from {server.url}/v1/chat/completions" in o["detail"] and "after 3 attempts" in o["detail"]
    assert "\n" not in o["detail"]
    assert o["graders"] == {} and pd.isna(o["response"])


def test_every_call_errored_is_invalid_never_zero_quality(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok")}))
    server.default = Reply.status(503)
    s = run_eval(ds, openai(server), [must_contain_grader()], max_retries=0, results_dir=tmp_path / "r", **FAST)
    assert s.validity == "INVALID" and s.exit_code == 3
    assert s.pass_rate is None and "every call errored (2 of 2)" in s.invalid_reason
    assert read_run(s.path).manifest["validity"] == "INVALID"


def test_timeout_is_transient_error(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.default = Reply.hang(120)
    t0 = time.monotonic()
    s = run_eval(
        ds, openai(server), [must_contain_grader()], timeout=0.3, max_retries=1, results_dir=tmp_path / "r", **FAST
    )
    # two attempts cut at 0.3 s each, not the 240 s the server would hang (measured 1.5 s on a loaded machine)
    assert time.monotonic() - t0 < 30
    o = one(s.path)
    # retried as transient; a deadline still hit on the last attempt is recorded as infrastructure
    assert o["verdict"] == "ERROR" and o["error_kind"] == "infrastructure" and o["attempts"] == 2
    assert "timed out" in o["detail"] and server.url in o["detail"]


def test_dropped_connection_is_retried(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.script(Reply.drop())
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert o["verdict"] == "PASS" and o["attempts"] == 2 and server.count() == 2


def test_dropped_connection_every_time_names_the_cause(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.default = Reply.drop()
    s = run_eval(ds, openai(server), [must_contain_grader()], max_retries=1, results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert o["verdict"] == "ERROR" and o["error_kind"] == "transient"
    assert "Disconnected" in o["detail"] or "Connection" in o["detail"], o["detail"]


@pytest.mark.parametrize(
    ("reply", "needle"),
    [
        (Reply.malformed(), "malformed reply"),
        (Reply.malformed('{"no_choices": true}'), "malformed reply"),
        (Reply.status(404), "HTTP 404"),
        (Reply.status(403), "HTTP 403"),
        (
            Reply.status(
                400,
                body='{"error": {"message": "This model\'s maximum context length is 8 tokens",'
                ' "code": "context_length_exceeded"}}',
            ),
            "context length",
        ),
    ],
)
def test_permanent_failures_are_error_at_once(tmp_path, server, reply, needle):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.default = reply
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert server.count() == 1
    kind = "refused" if needle == "context length" else "infrastructure"
    assert o["verdict"] == "ERROR" and o["error_kind"] == kind and o["attempts"] == 1
    assert needle in o["detail"]


def test_wrong_key_is_permanent_and_no_secret_is_written(tmp_path, monkeypatch):
    secret = "sk-TOPSECRET-123456"
    monkeypatch.setenv("GK_TEST_KEY", secret)
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok")}))
    rec = tmp_path / "fx"
    with FakeModelServer(api_key="the-right-key") as srv:
        prov = OpenAIProvider(model="m", base_url=srv.url, api_key_env="GK_TEST_KEY")
        s = run_eval(ds, prov, [must_contain_grader()], results_dir=tmp_path / "res", record_dir=rec, **FAST)
        assert srv.requests[0].headers["authorization"] == f"Bearer {secret}"
        assert srv.count() == 2  # not retried
    assert s.exit_code == 3
    df = outcomes_df(s.path)
    assert set(df["error_kind"]) == {"infrastructure"} and all("HTTP 401" in d for d in df["detail"])
    assert read_run(s.path).manifest["provider"]["settings"]["api_key_env"] == "GK_TEST_KEY"
    for folder in (tmp_path / "res", rec):
        for f in folder.rglob("*"):
            if f.is_file():
                assert secret.encode() not in f.read_bytes(), f


def test_missing_key_variable_is_a_config_error(monkeypatch):
    monkeypatch.delenv("GK_NOPE", raising=False)
    with pytest.raises(ConfigError, match="GK_NOPE is not set"):
        OpenAIProvider(model="m", base_url="http://127.0.0.1:9", api_key_env="GK_NOPE")


def test_connection_refused_is_transient(tmp_path):
    with FakeModelServer() as srv:
        url = srv.url
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    s = run_eval(
        ds,
        OpenAIProvider(model="m", base_url=url),
        [must_contain_grader()],
        max_retries=1,
        results_dir=tmp_path / "r",
        **FAST,
    )
    o = one(s.path)
    assert o["verdict"] == "ERROR" and o["error_kind"] == "transient" and o["attempts"] == 2
    assert url in o["detail"]


def test_tool_calls_multi_turn_and_history(tmp_path, server):
    case = {
        "turns": ["find order A-1", "and when does it ship?"],
        "tools": [{"name": "lookup_order", "description": "d", "parameters": {"type": "object"}}],
        "expect": {"must_contain": ["ships"]},
    }
    ds = read_dataset(make_dataset(tmp_path, {"a": case}))
    server.script(
        Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "A-1"}}], text="looking"),
        Reply.text("found it"),  # after the tool answer (the tool loop sends the model back round)
        Reply.text("it ships monday"),
    )
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert o["verdict"] == "PASS"
    traj = o["trajectory"]
    assert len(traj) == 2
    assert traj[0]["tool_calls"] == [{"name": "lookup_order", "args": {"order_id": "A-1"}}]
    assert traj[0]["text"] == "found it"
    assert traj[1]["text"] == "it ships monday" and o["response"] == "it ships monday"
    assert o["tokens_in"] == 30  # summed over the three requests
    first, _, third = (r.json for r in server.requests)
    assert first["tools"][0] == {"type": "function", "function": case["tools"][0]}
    msgs = third["messages"]  # turn 2 carries the model's actual turn 1
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant", "user"]
    assert msgs[1]["tool_calls"][0]["function"] == {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'}
    assert msgs[3]["content"] == "found it" and msgs[4]["content"] == "and when does it ship?"


def test_invalid_tool_arguments_are_kept_visible_not_a_crash(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("x")}))
    server.script(Reply.tool_calls([{"name": "f", "args": '{"order_id": "A-'}]))  # cut off by max_tokens
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert o["verdict"] == "FAIL"
    assert o["trajectory"][0]["tool_calls"] == [{"name": "f", "args": {"_invalid_json": '{"order_id": "A-'}}]


# ------------------------------------------------------------------ ollama


def test_ollama_basic_auth_from_url_userinfo_stripped_from_messages(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok")}))
    with FakeModelServer(basic_auth=("alice", "pw-SECRET")) as srv:
        host = srv.url.replace("http://", "http://alice:pw-SECRET@")
        srv.script(Reply.text("ok", tokens_in=4, tokens_out=1))
        prov = OllamaProvider(model="llama3", host=host, temperature=0, seed=3, max_tokens=9)
        s = run_eval(ds, prov, [must_contain_grader()], max_in_flight=1, results_dir=tmp_path / "r", **FAST)
        assert srv.requests[0].path == "/api/chat"
        body = srv.requests[0].json
        assert body["stream"] is False and body["model"] == "llama3"
        assert body["options"] == {"temperature": 0, "seed": 3, "num_predict": 9}
    assert s.counts["PASS"] == 2
    assert outcomes_df(s.path).set_index("row_id").loc["a", "tokens_in"] == 4
    for f in s.path.rglob("*"):
        assert b"pw-SECRET" not in f.read_bytes()


def test_ollama_env_host_and_credentials(tmp_path, monkeypatch):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    with FakeModelServer(basic_auth=("bob", "pw")) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url.removeprefix("http://"))
        monkeypatch.setenv("OLLAMA_USER", "bob")
        monkeypatch.setenv("OLLAMA_PASSWORD", "pw")
        srv.script(Reply.tool_calls([{"name": "f", "args": {"k": 1}}], text="calling"), Reply.text("ok"))
        s = run_eval(ds, OllamaProvider(model="m"), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    o = one(s.path)
    assert o["verdict"] == "PASS" and o["trajectory"][0]["tool_calls"] == [{"name": "f", "args": {"k": 1}}]


def test_ollama_wrong_credentials_are_permanent(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    with FakeModelServer(basic_auth=("bob", "pw")) as srv:
        s = run_eval(
            ds, OllamaProvider(model="m", host=srv.url), [must_contain_grader()], results_dir=tmp_path / "r", **FAST
        )
        assert srv.count() == 1
    o = one(s.path)
    assert o["error_kind"] == "infrastructure" and "HTTP 401" in o["detail"] and "/api/chat" in o["detail"]


# ------------------------------------------------------------------ concurrency


def test_in_flight_bound_and_adaptive_concurrency_on_429(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {f"r{i}": contains("ok") for i in range(80)}))
    with FakeModelServer(default=Reply.slow(0.05)) as srv:
        srv.script(*[Reply.status(429) for _ in range(6)])
        s = run_eval(
            ds, openai(srv), [must_contain_grader()], max_in_flight=8, max_retries=5, results_dir=tmp_path / "r", **FAST
        )
        times = sorted(r.at for r in srv.requests)
    assert s.counts["PASS"] == 80
    inv = read_run(s.path).manifest["timings"]["invocations"][-1]
    assert inv["decreases"] >= 1 and inv["min_in_flight"] <= 4
    assert inv["increases"] >= 1  # raised again once the 429s stopped
    assert len(times) == 86  # 80 answers + 6 throttled attempts


def test_limiter_never_exceeds_its_limit():
    import asyncio

    async def main():
        lim = Limiter(3)
        now = peak = 0

        async def job():
            nonlocal now, peak
            await lim.acquire()
            now += 1
            peak = max(peak, now)
            await asyncio.sleep(0.001)
            now -= 1
            lim.release()

        await asyncio.gather(*(job() for _ in range(50)))
        lim.on_throttled(None)
        assert lim.limit == 1
        return peak

    assert asyncio.run(main()) == 3


def test_rpm_spaces_the_starts(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {f"r{i}": contains("ok") for i in range(8)}))
    t0 = time.monotonic()
    run_eval(ds, openai(server), [must_contain_grader()], rpm=600, max_in_flight=8, results_dir=tmp_path / "r", **FAST)
    elapsed = time.monotonic() - t0
    # 8 starts at 600/min are 0.1 s apart, so the last starts >= 0.7 s after the first
    # (a lower bound that a loaded machine cannot shorten; arrival times at the server can bunch).
    assert server.count() == 8 and elapsed >= 0.7


# ------------------------------------------------------------------ graders, validity, resume


def test_grader_exception_does_not_crash_the_run(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok")}))

    def boom(case, response):
        if case.id == "b":
            raise RuntimeError("grader bug")
        return True

    s = run_eval(
        ds,
        CallableProvider(lambda case: "ok"),
        [FunctionGrader(boom, name="boom")],
        results_dir=tmp_path / "r",
        max_error_rate=1.0,
        **FAST,
    )
    df = outcomes_df(s.path).set_index("row_id")
    assert df.loc["a", "verdict"] == "PASS"
    assert df.loc["b", "graders"]["boom"]["error"] is True
    assert "RuntimeError: grader bug" in df.loc["b", "graders"]["boom"]["reason"]
    assert df.loc["b", "verdict"] in ("ERROR", "SKIPPED") and "grader bug" in df.loc["b", "detail"]


def test_error_rate_above_threshold_is_invalid(tmp_path):
    cases = {f"r{i:02d}": contains("ok") for i in range(20)}
    ds = read_dataset(make_dataset(tmp_path, cases))

    def agent(case):
        if case.id == "r00":
            raise PermissionError("the agent's store is unreadable")  # an OSError: nobody's answer
        if case.id == "r01":
            raise ValueError("agent crashed")  # the agent's own error: evidence, not the run's validity
        return "ok"

    s = run_eval(
        ds, CallableProvider(agent), [must_contain_grader()], max_error_rate=0.02, results_dir=tmp_path / "r", **FAST
    )
    assert s.counts["ERROR"] == 2 and s.validity == "INVALID" and s.exit_code == 3
    assert "error rate 5.0% (1 of 20) exceeds max_error_rate 2.0%" in s.invalid_reason
    err = outcomes_df(s.path).set_index("row_id")
    assert err.loc["r00", "error_kind"] == "infrastructure"
    assert err.loc["r01", "error_kind"] == "agent" and "raised ValueError: agent crashed" in err.loc["r01", "detail"]
    s2 = run_eval(
        ds, CallableProvider(agent), [must_contain_grader()], max_error_rate=0.1, results_dir=tmp_path / "r2", **FAST
    )
    assert s2.validity == "VALID" and s2.pass_rate == 1.0  # ERROR is not in the denominator


def test_resume_runs_only_missing_pairs_and_refuses_another_key(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {f"r{i}": contains("ok") for i in range(5)}))
    res = tmp_path / "res"
    calls = []

    def agent(case, repeat):
        calls.append((case.id, repeat))
        return "ok"

    run_eval(
        ds, CallableProvider(agent, model="m"), [must_contain_grader()], repeats=2, run_id="x", results_dir=res, **FAST
    )
    jsonl = res / "x" / "outcomes.jsonl"
    lines = jsonl.read_bytes().splitlines(keepends=True)
    jsonl.write_bytes(b"".join(lines[:6]) + lines[6][:25])  # as if killed mid-write
    (res / "x" / "outcomes.parquet").unlink()
    calls.clear()
    s = run_eval(
        ds, CallableProvider(agent, model="m"), [must_contain_grader()], repeats=2, run_id="x", results_dir=res, **FAST
    )
    assert len(calls) == 4 and s.resumed == 6
    recs = list(iter_jsonl(jsonl))
    assert len(recs) == 10 and len({(r["row_id"], r["repeat"]) for r in recs}) == 10
    assert s.complete and s.validity == "VALID" and len(outcomes_df(s.path)) == 10
    with pytest.raises(ResultsError, match=r"cannot resume run x: its run key differs \(repeats differ: 2 vs 3"):
        run_eval(
            ds,
            CallableProvider(agent, model="m"),
            [must_contain_grader()],
            repeats=3,
            run_id="x",
            results_dir=res,
            **FAST,
        )
    with pytest.raises(ResultsError, match="agent_version"):
        run_eval(
            ds,
            CallableProvider(agent, model="other"),
            [must_contain_grader()],
            repeats=2,
            run_id="x",
            results_dir=res,
            **FAST,
        )


def test_retry_errors_supersedes_error_lines(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {f"r{i}": contains("ok") for i in range(4)}))
    res = tmp_path / "res"
    broken = {"on": True}

    def agent(case):
        if broken["on"] and case.id in ("r1", "r3"):
            raise ConnectionRefusedError("down")  # an outage (an agent's own error would not be INVALID)
        return "ok"

    s1 = run_eval(ds, CallableProvider(agent, model="m"), [must_contain_grader()], run_id="x", results_dir=res, **FAST)
    assert s1.counts["ERROR"] == 2 and s1.validity == "INVALID"
    broken["on"] = False
    s2 = run_eval(
        ds,
        CallableProvider(agent, model="m"),
        [must_contain_grader()],
        run_id="x",
        results_dir=res,
        retry_errors=True,
        **FAST,
    )
    assert s2.calls == 2 and s2.counts["PASS"] == 4 and s2.validity == "VALID"
    assert len(list(iter_jsonl(res / "x" / "outcomes.jsonl"))) == 6  # history kept in the JSONL
    df = outcomes_df(s2.path)
    assert len(df) == 4 and set(df["verdict"]) == {"PASS"}  # last record per pair wins
    assert len(read_run(s2.path).manifest["timings"]["invocations"]) == 2
    with pytest.raises(ResultsError, match="no run nope"):
        run_eval(
            ds,
            CallableProvider(agent, model="m"),
            [must_contain_grader()],
            run_id="nope",
            results_dir=res,
            retry_errors=True,
            **FAST,
        )


def test_record_then_replay_gives_same_verdicts_and_agent_version(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("hello"), "b": contains("bye")}))
    server.responder = lambda req: Reply.text("hello" if "hello" in req.json["messages"][-1]["content"] else "nope")
    fx = tmp_path / "fx"
    live = run_eval(
        ds,
        openai(server, temperature=0),
        [must_contain_grader()],
        repeats=2,
        record_dir=fx,
        results_dir=tmp_path / "r",
        run_id="live",
        **FAST,
    )
    replay = run_eval(
        ds,
        FixturesProvider(fixtures=fx),
        [must_contain_grader()],
        repeats=2,
        results_dir=tmp_path / "r",
        run_id="replay",
        **FAST,
    )
    a, b = outcomes_df(live.path), outcomes_df(replay.path)
    assert a["verdict"].tolist() == b["verdict"].tolist() == ["PASS", "PASS", "FAIL", "FAIL"]
    assert a["latency_ms"].tolist() == pytest.approx(b["latency_ms"].tolist())
    ma, mb = live.manifest, replay.manifest
    assert ma["agent_version"] == mb["agent_version"] and mb["mode"] == "fixtures"
    meta = json.loads((fx / "meta.json").read_text())
    assert meta["model_id"] == "m1" and meta["system_prompt_sha256"] == ma["agent_version"]["prompt_sha256"]


def test_fixture_missing_pair_and_recorded_error(tmp_path):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok"), "c": contains("ok")}))
    fx = tmp_path / "fx"
    fx.mkdir()
    (fx / "meta.json").write_text(
        json.dumps({"schema_version": 1, "agent": "x", "model_id": "mm", "system_prompt_sha256": "abc"})
    )
    (fx / "fixtures.jsonl").write_text(
        json.dumps({"row_id": "a", "repeat": 0, "turns": [{"text": "ok", "tool_calls": []}], "latency_ms": 12.5})
        + "\n"
        + json.dumps(
            {"row_id": "b", "repeat": 0, "turns": [], "error": {"kind": "transient", "message": "boom", "status": 503}}
        )
        + "\n"
    )
    s = run_eval(ds, FixturesProvider(fixtures=fx), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    df = outcomes_df(s.path).set_index("row_id")
    assert df.loc["a", "verdict"] == "PASS" and df.loc["a", "latency_ms"] == 12.5
    assert df.loc["b", "verdict"] == "ERROR" and df.loc["b", "error_kind"] == "transient"
    assert df.loc["b", "attempts"] == 1  # replay is deterministic: never retried
    assert df.loc["c", "detail"].startswith("no recorded answer for row c repeat 0")
    assert s.manifest["agent_version"] == {"git_commit": None, "model_id": "mm", "prompt_sha256": "abc"}


def test_async_callable_and_str_or_response(tmp_path):
    from goldenkit.providers._base import Response

    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("ok")}))

    async def agent(case):
        return "ok" if case.id == "a" else Response.from_text("ok", tokens_in=1)

    s = run_eval(ds, CallableProvider(agent), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    assert s.counts["PASS"] == 2


def test_redaction_and_circuit_breaker(tmp_path, server):
    assert redact_settings({"api_key": "x", "max_tokens": 5, "nested": {"token": "t"}, "api_key_env": "V"}) == {
        "api_key": "***",
        "max_tokens": 5,
        "nested": {"token": "***"},
        "api_key_env": "V",
    }
    ds = read_dataset(make_dataset(tmp_path, {f"r{i:02d}": contains("ok") for i in range(30)}))
    server.default = Reply.status(502)
    s = run_eval(
        ds,
        openai(server),
        [must_contain_grader()],
        max_retries=0,
        max_in_flight=1,
        abort_after_errors=5,
        results_dir=tmp_path / "r",
        run_id="cb",
        **FAST,
    )
    assert s.validity == "INVALID" and not s.complete
    assert s.counts["total"] == 5 and "stopped after 5 consecutive errors" in s.invalid_reason
    server.default = Reply.text("ok")
    s2 = run_eval(
        ds, openai(server), [must_contain_grader()], run_id="cb", retry_errors=True, results_dir=tmp_path / "r", **FAST
    )
    assert s2.validity == "VALID" and s2.counts["PASS"] == 30


def test_a_case_that_cannot_be_normalized_is_bad_input_before_the_first_call(tmp_path):
    """A bad row is refused before any call (DatasetError, exit 1, file:line and row id), and nothing is written."""
    cases = {"a": contains("ok"), "b": {"turns": "not a list", "expect": {}}, "c": contains("ok")}
    ds = read_dataset(make_dataset(tmp_path, cases))
    calls = []

    def agent(case):
        calls.append(case.id)
        return "ok"

    with pytest.raises(DatasetError) as info:
        run_eval(ds, CallableProvider(agent), [must_contain_grader()], run_id="x", results_dir=tmp_path / "r", **FAST)
    assert "dataset.jsonl:2:" in str(info.value) and 'row "b"' in str(info.value)
    assert info.value.exit_code == 1
    assert calls == [] and not (tmp_path / "r").exists()


def test_run_eval_works_inside_a_running_event_loop(tmp_path):
    """As in Jupyter, where a loop is already running in the caller's thread."""
    import asyncio

    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))

    async def notebook_cell():
        return run_eval(
            ds, CallableProvider(lambda case: "ok"), [must_contain_grader()], results_dir=tmp_path / "r", **FAST
        )

    assert asyncio.run(notebook_cell()).counts["PASS"] == 1


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty, self.parts = tty, []

    def write(self, s: str) -> None:
        self.parts.append(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_progress_on_a_terminal_and_in_a_log(tmp_path, tty):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok"), "b": contains("no")}))
    stream = _Stream(tty)
    run_eval(
        ds,
        CallableProvider(lambda case: "ok"),
        [must_contain_grader()],
        results_dir=tmp_path / "r",
        backoff_base=0.01,
        progress=stream,
    )
    text = "".join(stream.parts)
    assert "2/2 PASS 1 FAIL 1 ERROR 0" in text and "calls/s" in text and "ETA" in text
    if tty:
        assert "\r[" in text and "#" in text and text.endswith("\n")
    else:
        assert "\r" not in text and text.splitlines()[-1].startswith("goldenkit run: 2/2")


def test_server_error_detail_is_in_the_reason(tmp_path, server):
    ds = read_dataset(make_dataset(tmp_path, {"a": contains("ok")}))
    server.default = Reply.status(401, body='{"detail": "Invalid API key"}')
    s = run_eval(ds, openai(server), [must_contain_grader()], results_dir=tmp_path / "r", **FAST)
    assert one(s.path)["detail"] == f"HTTP 401 from {server.url}/v1/chat/completions: Invalid API key"


# ------------------------------------------------------------------ outcomes that cannot be written

WRITE_LIMITED_RUN = """
import resource, sys
from goldenkit.dataset import read_dataset
from goldenkit.errors import ResultsError
from goldenkit.providers._callable import CallableProvider
from goldenkit.runner import run_eval

sys.path.insert(0, sys.argv[3])
from write_limit_agent import answer

resource.setrlimit(resource.RLIMIT_FSIZE, (8000, 8000))  # no file may grow past 8 kB: a full disk
try:
    run_eval(read_dataset(sys.argv[1]), CallableProvider(answer), ["contract"], run_id="r", results_dir=sys.argv[2],
             max_in_flight=4, progress=False)
except ResultsError as exc:
    print(exc)
    sys.exit(3)
"""


def test_outcomes_that_cannot_be_written_stop_the_run_and_a_resume_finishes_it(tmp_path, monkeypatch):
    """A write that fails mid-run (a file-size limit in a child process: a full disk) ends the run
    with a ResultsError naming outcomes.jsonl; run.json says incomplete, no Parquet is written, the
    lines on disk stay readable, and a resume calls exactly the rows that were not written."""
    rows = {f"r{i:02d}": contains("ok") for i in range(40)}
    ds_dir = make_dataset(tmp_path, rows)
    res = tmp_path / "res"
    agent_dir = tmp_path / "agent"  # the same agent in both processes, so the resume has the same run key
    agent_dir.mkdir()
    (agent_dir / "write_limit_agent.py").write_text("async def answer(case):\n    return 'ok'\n", encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", WRITE_LIMITED_RUN, str(ds_dir), str(res), str(agent_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 3, out.stdout + out.stderr
    assert "outcomes.jsonl: outcomes could not be written" in out.stdout and "--run-id r" in out.stdout
    run_dir = res / "r"
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert manifest["complete"] is False and manifest["validity"] == "INVALID"
    assert not (run_dir / "outcomes.parquet").exists()
    written = list(iter_jsonl(run_dir / "outcomes.jsonl"))  # a line cut off by the limit is skipped
    assert 0 < len(written) < len(rows)

    monkeypatch.syspath_prepend(str(agent_dir))
    from write_limit_agent import answer  # type: ignore[import-not-found]

    s = run_eval(read_dataset(ds_dir), CallableProvider(answer), ["contract"], run_id="r", results_dir=res, **FAST)
    assert s.complete and s.counts["PASS"] == len(rows) and s.resumed == len(written)
    df = outcomes_df(s.path)
    assert sorted(df["row_id"]) == sorted(rows) and len(df) == len(rows)
