"""Streamed and unstreamed calls to the real server give the same answers and verdicts.

At temperature 0 with a seed the server's answer is deterministic, so a run with
``stream=True`` (server-sent events put back together) must match an unstreamed
run row for row: the same text, the same verdicts, and a comparison with no
flips. Only the streamed run records ``ttft_ms``, and it is never more than the
call's latency.
"""

from __future__ import annotations

import json

import pytest
from livekit import make_provider, require_live, show, write_dataset

from goldenkit.cli import main
from goldenkit.compare import compare_runs
from goldenkit.dataset import read_dataset
from goldenkit.results import read_run
from goldenkit.runner import run_eval

pytestmark = pytest.mark.live
require_live()


def rows(n: int) -> list[dict]:
    return [
        {
            "id": f"r{i:03d}",
            "slice": f"s{i % 2}",
            "case": {
                "prompt": f"Question {i}: say something with the letter h.",
                "expect": {"must_contain_any": ["h"]},
            },
        }
        for i in range(n)
    ]


def test_streamed_and_unstreamed_runs_are_identical(live, tmp_path):
    n = 16
    ds = read_dataset(write_dataset(tmp_path, rows(n)))
    runs = {}
    for run_id, stream in (("plain", False), ("streamed", True)):
        provider = make_provider(live, temperature=0, seed=1234, max_tokens=24, stream=stream)
        s = run_eval(ds, provider, ["contract"], results_dir=tmp_path / "r", run_id=run_id, progress=False)
        assert s.validity == "VALID", s.line()
        runs[run_id] = read_run(s.path)
    a, b = runs["plain"].outcomes(), runs["streamed"].outcomes()
    merged = a.merge(b, on=["row_id", "repeat"], suffixes=("_a", "_b"))
    assert len(merged) == n
    assert (merged["response_a"] == merged["response_b"]).all()
    assert (merged["verdict_a"] == merged["verdict_b"]).all()
    assert merged["response_a"].nunique() > 1
    assert merged["ttft_ms_a"].isna().all()
    assert merged["ttft_ms_b"].notna().all()
    assert (merged["ttft_ms_b"] <= merged["latency_ms_b"]).all()
    cmp = compare_runs(runs["plain"], runs["streamed"])
    assert cmp.b == 0 and cmp.c == 0 and len(cmp.flips) == 0
    show(
        "streamed vs unstreamed, temperature 0, seed 1234",
        rows=n,
        verdicts=dict(merged["verdict_b"].value_counts()),
        median_ttft_ms=round(float(merged["ttft_ms_b"].median()), 1),
        median_latency_ms=round(float(merged["latency_ms_b"].median()), 1),
    )


def test_run_stream_flag_against_the_real_server(live, tmp_path):
    ds = write_dataset(tmp_path, rows(4))
    code = main(
        [
            "run",
            str(ds),
            *live.cli_args(),
            "--temperature",
            "0",
            "--model-seed",
            "7",
            "--max-tokens",
            "16",
            "--stream",
            "--graders",
            "contract",
            "--results-dir",
            str(tmp_path / "r"),
            "--run-id",
            "s",
            "--quiet",
        ]
    )
    assert code == 0
    out = read_run(tmp_path / "r" / "s").outcomes()
    assert out["ttft_ms"].notna().all() and (out["response"].str.len() > 0).all()


def _trajectories(run_dir) -> dict[str, list[tuple[str, str]]]:
    out = read_run(run_dir).outcomes()
    return {
        row: [
            (c["name"], json.dumps(c.get("args"), sort_keys=True, default=str))
            for turn in traj
            for c in turn["tool_calls"]
        ]
        for row, traj in zip(out["row_id"], out["trajectory"], strict=True)
    }


def test_a_streamed_tool_loop_records_the_unstreamed_trajectory(live, tmp_path):
    """A named tool choice over two turns (the call, then the tool's result): llama.cpp's server repeats
    the tool's name in every streamed delta; the streamed run must record the same calls as the unstreamed
    one, each named once, and stay VALID."""
    if live.provider != "openai":
        pytest.skip("tool choice is an OpenAI protocol setting")
    tool = {"name": "lookup_order", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}
    cases = [
        {
            "id": f"order-{i}",
            "case": {
                "prompt": f"Where is order A-{i}?",
                "tools": [tool],
                "tool_responses": [{"name": "lookup_order", "response": {"status": "shipped"}}],
                "expect": {"tools": [{"name": "lookup_order"}], "tool_args": "ignore"},
            },
        }
        for i in range(6)
    ]
    ds = write_dataset(tmp_path, cases)
    base = ["run", str(ds), *live.cli_args(), "--temperature", "0", "--model-seed", "11", "--max-tokens", "48"]
    base += ["--tool-choice", "lookup_order", "--results-dir", str(tmp_path / "r"), "--quiet"]
    for run_id, extra in (("plain", []), ("streamed", ["--stream"])):
        assert main([*base, "--run-id", run_id, *extra]) in (0, 2)
        man = read_run(tmp_path / "r" / run_id).manifest
        assert man["validity"] == "VALID" and man["counts"]["ERROR"] == 0, man.get("invalid_reason")
    plain, streamed = (_trajectories(tmp_path / "r" / run_id) for run_id in ("plain", "streamed"))
    assert streamed == plain
    names = {name for calls in streamed.values() for name, _ in calls}
    assert names == {"lookup_order"}
    show("streamed tool loop", rows=len(streamed), calls=sum(len(c) for c in streamed.values()))


def test_a_streamed_prompt_over_the_context_is_the_candidates_refused_request(live, tmp_path):
    """The real server answers a streamed prompt over its context with 200 and nothing; goldenkit asks
    once more unstreamed and records the server's reason: refused, the candidate's own, not an outage."""
    if live.provider != "openai":
        pytest.skip("the OpenAI protocol's streaming")
    words = "word " * (2 * live.context_tokens)
    ds = write_dataset(tmp_path, [{"id": "long", "case": {"prompt": words, "expect": {"must_contain": ["x"]}}}])
    argv = ["run", str(ds), *live.cli_args(), "--stream", "--max-tokens", "8", "--max-retries", "0"]
    main([*argv, "--results-dir", str(tmp_path / "r"), "--run-id", "long", "--quiet"])
    run = read_run(tmp_path / "r" / "long")
    out = run.outcomes()
    assert out["verdict"].tolist() == ["ERROR"] and out["error_kind"].tolist() == ["refused"]
    assert "context length" in out["detail"].iloc[0]
    assert run.manifest["validity"] == "VALID"  # the candidate's own error never makes the run INVALID
