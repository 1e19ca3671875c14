"""``goldenkit run``: fixtures and callable providers, exit codes, config, and resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from factories import tiny_dataset as make_dataset  # the name tests/test_frontier_cli.py imports from here
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.results import iter_jsonl, outcomes_df, read_run


def make_fixtures(root: Path, answers: dict[tuple[str, int], str | None]) -> Path:
    fx = root / "fx"
    fx.mkdir()
    (fx / "meta.json").write_text(
        json.dumps({"schema_version": 1, "agent": "baseline", "model_id": "sim-1", "system_prompt_sha256": "ab" * 32})
    )
    with (fx / "fixtures.jsonl").open("w") as fh:
        for (rid, rep), text in answers.items():
            rec = {"row_id": rid, "repeat": rep, "turns": [{"text": text, "tool_calls": []}], "latency_ms": 5.0}
            if text is None:
                rec.update(turns=[], error={"kind": "transient", "message": "upstream 503", "status": 503})
            fh.write(json.dumps(rec) + "\n")
    return fx


def test_fixtures_run_writes_a_complete_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 4)
    fx = make_fixtures(tmp_path, {(f"r{i:03d}", r): ("yes" if i != 1 else "no") for i in range(4) for r in range(2)})
    code = main(
        [
            "run",
            str(ds),
            "--provider",
            "fixtures",
            "--fixtures",
            str(fx),
            "--repeats",
            "2",
            "--run-id",
            "fx1",
            "--quiet",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "run fx1: VALID" in out and "PASS 6, FAIL 2, ERROR 0" in out
    run = read_run("fx1")
    assert run.complete and (run.path / "outcomes.parquet").exists()
    m = run.manifest
    assert m["mode"] == "fixtures" and m["repeats"] == 2 and m["counts"]["total"] == 8
    assert m["agent_version"] == {"git_commit": None, "model_id": "sim-1", "prompt_sha256": "ab" * 32}
    assert "contract" in m["graders"]  # the default grader list ([graders] use)
    df = outcomes_df("fx1")
    assert len(df) == 8 and df.groupby("row_id").size().eq(2).all()


def test_invalid_run_exits_3(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 4)
    fx = make_fixtures(tmp_path, {("r000", 0): "yes", ("r001", 0): None, ("r002", 0): "yes", ("r003", 0): "yes"})
    assert main(["run", str(ds), "--provider", "fixtures", "--fixtures", str(fx), "--quiet", "--run-id", "bad"]) == 3
    assert "INVALID (error rate 25.0% (1 of 4)" in capsys.readouterr().out
    assert read_run("bad").manifest["validity"] == "INVALID"
    # the same run with a tolerant threshold is valid
    assert (
        main(["run", str(ds), "--provider", "fixtures", "--fixtures", str(fx), "--quiet", "--max-error-rate", "0.5"])
        == 0
    )


def test_all_errors_exit_3_and_no_quality_figure(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 3)
    fx = make_fixtures(tmp_path, {})
    assert main(["run", str(ds), "--provider", "fixtures", "--fixtures", str(fx), "--quiet"]) == 3
    out = capsys.readouterr().out
    assert "every call errored (3 of 3)" in out and "pass rate n/a" in out and "0.0%" not in out.split("error rate")[0]


def test_callable_provider_config_and_sampling(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_agent.py").write_text(
        "import asyncio\nasync def answer(case):\n    await asyncio.sleep(0)\n    return 'yes: ' + case.prompt\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = make_dataset(tmp_path, 12, toml='[run]\nrepeats = 2\nmax_in_flight = 3\n\n[graders]\nuse = ["contract"]\n')
    code = main(
        [
            "run",
            str(ds),
            "--provider",
            "callable",
            "--callable",
            "my_agent:answer",
            "--split",
            "dev",
            "--per-slice",
            "2",
            "--sample-seed",
            "5",
            "--run-id",
            "c1",
            "--quiet",
        ]
    )
    assert code == 0
    m = read_run("c1").manifest
    assert m["repeats"] == 2 and m["config"]["max_in_flight"] == 3
    assert m["sample"] == {"split": "dev", "per_slice": 2, "seed": 5}
    df = outcomes_df("c1")
    assert len(df) == 8 and set(df["split"]) == {"dev"} and set(df["verdict"]) == {"PASS"}
    assert m["provider"]["settings"]["callable"] == "my_agent:answer"


def test_usage_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 1)
    assert main(["run", str(ds)]) == 1
    assert "--provider is required" in capsys.readouterr().err
    assert main(["run", str(ds), "--provider", "openai", "--model", "m", "--fixtures", "x"]) == 1
    assert "--fixtures does not apply to provider openai" in capsys.readouterr().err
    assert main(["run", str(ds), "--provider", "nope"]) == 1
    assert "unknown provider 'nope'" in capsys.readouterr().err


def _complete_lines(path: Path) -> list[bytes]:
    data = path.read_bytes() if path.exists() else b""
    return data.split(b"\n")[:-1]  # the part after the last newline is not (yet) a complete line


def test_resume_after_sigkill(tmp_path, monkeypatch, capsys):
    """Kill a live run with SIGKILL mid-run, resume it with the same id: exactly one outcome per pair."""
    monkeypatch.chdir(tmp_path)
    n = 60
    ds = make_dataset(tmp_path, n)
    res = tmp_path / "results"
    jsonl = res / "k1" / "outcomes.jsonl"
    with FakeModelServer(default=Reply.slow(0.1, "yes")) as srv:
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
            "4",
            "--run-id",
            "k1",
            "--results-dir",
            str(res),
            "--quiet",
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "goldenkit.cli", *args],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 90
            while len(_complete_lines(jsonl)) < 12:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "exited early"
                assert time.monotonic() < deadline, "the run never got going"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        before = _complete_lines(jsonl)
        assert 12 <= len(before) < n, "the kill should land mid-run"
        killed_calls = srv.count()
        manifest = read_run(res / "k1").manifest
        assert manifest["complete"] is False and not (res / "k1" / "outcomes.parquet").exists()

        srv.default = Reply.text("yes")
        assert main(args) == 0
        resumed_calls = srv.count() - killed_calls
    after = _complete_lines(jsonl)
    assert after[: len(before)] == before  # nothing written before the kill was lost or rewritten
    pairs = [(r["row_id"], r["repeat"]) for r in iter_jsonl(jsonl)]
    assert len(pairs) == n and len(set(pairs)) == n  # exactly one outcome per pair, no duplicate
    assert resumed_calls == n - len(before)  # only the missing pairs were called again
    run = read_run(res / "k1")
    assert run.complete and run.manifest["validity"] == "VALID" and len(run.manifest["timings"]["invocations"]) == 2
    assert len(outcomes_df(run)) == n


@pytest.mark.parametrize("flag", ["--retry-errors"])
def test_retry_errors_from_the_command_line(tmp_path, monkeypatch, capsys, flag):
    monkeypatch.chdir(tmp_path)
    ds = make_dataset(tmp_path, 3)
    with FakeModelServer(default=Reply.text("yes")) as srv:
        srv.script(Reply.status(500))
        base = [
            "run",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            srv.url,
            "--model",
            "m",
            "--max-retries",
            "0",
            "--max-in-flight",
            "1",
            "--run-id",
            "re",
            "--quiet",
        ]
        assert main(base) == 3
        assert main([*base, flag]) == 0
        assert srv.count() == 4
    df = outcomes_df("re")
    assert len(df) == 3 and set(df["verdict"]) == {"PASS"}
