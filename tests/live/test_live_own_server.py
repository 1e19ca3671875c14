"""Failures only a server of our own can show: a wrong API key, and the server going away mid-run.

These start the llama.cpp server of ``../shared/real-server/setup.sh`` on a free
port with a temporary WORKDIR (``API_KEY`` for the key test) and stop it by the
PID it recorded. They are skipped with a reason when the script is absent.
"""

from __future__ import annotations

import json
import re
import threading
import time

import pytest
from _shared import shared_fixture
from livekit import OwnServer, require_live, show, write_dataset

from goldenkit.cli import main
from goldenkit.results import iter_jsonl, outcomes_df, read_run
from goldenkit.schema import ERROR, FAIL, PASS

pytestmark = [
    pytest.mark.live,
]
require_live()
_needs_setup_sh = shared_fixture("real-server", "setup.sh")

RIGHT_KEY = "sk-live-test-right-4f1c9a"
WRONG_KEY = "sk-live-test-wrong-77b2e0"


CHECK = {"must_contain": ["e"]}


def rows(n: int) -> list[dict]:
    return [
        {
            "id": f"q{i:04d}",
            "slice": f"s{i % 3}",
            "case": {"prompt": f"Question {i}?", "expect": {"must_contain": ["e"]}},
        }
        for i in range(n)
    ]


def test_wrong_api_key_is_an_infrastructure_error_and_exit_3(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = write_dataset(tmp_path, rows(6))
    monkeypatch.setenv("LIVE_TEST_WRONG_KEY", WRONG_KEY)
    monkeypatch.setenv("LIVE_TEST_RIGHT_KEY", RIGHT_KEY)
    with OwnServer(tmp_path / "srv", api_key=RIGHT_KEY) as srv:
        common = ["run", str(ds), "--provider", "openai", "--base-url", srv.base_url, "--model", "tiny"]
        common += ["--max-tokens", "8", "--results-dir", str(tmp_path / "r"), "--quiet"]
        rc = main([*common, "--api-key-env", "LIVE_TEST_WRONG_KEY", "--run-id", "wrong"])
        out = capsys.readouterr().out
        assert rc == 3, out
        df = outcomes_df(tmp_path / "r" / "wrong")
        assert len(df) == 6
        assert (df["verdict"] == ERROR).all()
        assert (df["error_kind"] == "infrastructure").all()  # auth: nobody's answer
        assert (df["attempts"] == 1).all()  # a 401 is not retried
        # status, URL without secrets, and the server's own message
        assert (
            df["detail"]
            .str.fullmatch(r"HTTP 401 from http://127\.0\.0\.1:\d+/v1/chat/completions: Invalid API key")
            .all()
        )
        man = read_run(tmp_path / "r" / "wrong").manifest
        assert man["validity"] == "INVALID" and "every call errored" in man["invalid_reason"]
        # the control: the same run with the right key is VALID
        rc_ok = main([*common, "--api-key-env", "LIVE_TEST_RIGHT_KEY", "--run-id", "right"])
        assert rc_ok == 0, capsys.readouterr().out
        ok = outcomes_df(tmp_path / "r" / "right")
        assert set(ok["verdict"]) <= {PASS, FAIL}
    for f in (tmp_path / "r").rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert WRONG_KEY.encode() not in data and RIGHT_KEY.encode() not in data, f
    show(
        "wrong API key",
        exit_code=rc,
        outcomes=len(df),
        error_kind=df["error_kind"].iloc[0],
        detail=df["detail"].iloc[0],
        right_key_exit=rc_ok,
    )


def _server_200s(srv: OwnServer) -> int:
    """Chat completions the server answered 200 (uvicorn's access log in server.log)."""
    text = (srv.workdir / "server.log").read_text(errors="replace")
    return len(re.findall(r'"POST /v1/chat/completions HTTP/1\.1" 200', text))


def test_server_stopped_mid_run_then_resumed(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    n = 800
    ds = write_dataset(tmp_path, rows(n))
    results = tmp_path / "r"
    jsonl = results / "mid" / "outcomes.jsonl"
    srv = OwnServer(tmp_path / "srv").start()
    base_200s = _server_200s(srv)  # setup.sh's own smoke request
    args = ["run", str(ds), "--provider", "openai", "--base-url", srv.base_url, "--model", "tiny"]
    args += ["--max-tokens", "16", "--temperature", "0.8", "--results-dir", str(results), "--run-id", "mid"]
    args += ["--max-in-flight", "4", "--max-retries", "1", "--quiet"]

    killed_at: dict[str, int] = {}

    def stop_server_mid_run() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if jsonl.exists():
                with jsonl.open("rb") as fh:
                    done = sum(1 for _ in fh)
                if done >= 150:
                    killed_at["outcomes"] = done
                    srv.kill()  # SIGTERM to the PID setup.sh recorded
                    return
            time.sleep(0.005)

    try:
        killer = threading.Thread(target=stop_server_mid_run)
        killer.start()
        rc = main(args)
        killer.join()
        first_line = capsys.readouterr().out
        assert "outcomes" in killed_at, "the run finished before the server could be stopped"
        assert rc == 3, first_line
        man = read_run(results / "mid").manifest
        assert man["validity"] == "INVALID"
        assert man["complete"] is False
        recs = list(iter_jsonl(jsonl))
        graded = [r for r in recs if r["verdict"] in (PASS, FAIL)]
        errors = [r for r in recs if r["verdict"] == ERROR]
        # no outcome lost: every answer the server sent is an outcome on disk, once
        served = _server_200s(srv) - base_200s
        assert len(graded) == served, (len(graded), served)
        assert len({(r["row_id"], r["repeat"]) for r in recs}) == len(recs)
        assert man["counts"]["total"] == len(recs)
        assert man["counts"][PASS] + man["counts"][FAIL] == len(graded)
        assert errors and all(r["error_kind"] == "transient" for r in errors)
        assert len(recs) < n  # the circuit breaker stopped launching calls
        stopped = man["invalid_reason"]
        kill_numbers = dict(
            outcomes_when_stopped=killed_at["outcomes"],
            graded_on_disk=len(graded),
            server_200s=served,
            errors=len(errors),
            missing=n - len(recs),
            exit_code=rc,
            reason=stopped[:120],
            example_error=errors[0]["detail"][:120],
        )

        # the server comes back; resuming the same run id (retrying its errors) completes it
        srv.start()
        before = {(r["row_id"], r["repeat"]): r for r in graded}
        rc2 = main([*args, "--retry-errors"])
        summary = capsys.readouterr().out
        assert rc2 == 0, summary
        run = read_run(results / "mid")
        assert run.manifest["validity"] == "VALID" and run.manifest["complete"] is True
        df = run.outcomes()
        assert len(df) == n and not df.duplicated(["row_id", "repeat"]).any()
        assert set(df["verdict"]) <= {PASS, FAIL}
        inv = run.manifest["timings"]["invocations"]
        assert len(inv) == 2 and inv[1]["pending"] == len(errors) + (n - len(recs))
        assert inv[1]["calls"] == inv[1]["pending"]  # the graded outcomes were not called again
        after = df.set_index(["row_id", "repeat"])
        for key, rec in before.items():
            assert after.loc[key, "response"] == rec["response"]
            assert after.loc[key, "started_at"] == rec["started_at"]
        show("server stopped mid-run", **kill_numbers)
        show(
            "resumed",
            exit_code=rc2,
            pending=inv[1]["pending"],
            calls=inv[1]["calls"],
            total=len(df),
            counts=json.dumps(run.manifest["counts"]),
        )
    finally:
        srv.kill()
