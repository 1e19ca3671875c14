"""The real server's usage counts are recorded, streamed or not, and added up in run.json.

llama.cpp's server reports ``usage`` on every chat completion; in a stream, only
a server that honours ``stream_options.include_usage`` sends it (in the last
chunk). Each outcome keeps the counts as the server sent them (null where it
sent none, never 0); at temperature 0 with a seed a streamed run that got the
usage chunk counts what the plain run counted, row for row; run.json's
``accounting`` is their sum; money stays n/a without prices.
"""

from __future__ import annotations

import json

import pytest
from livekit import make_provider, require_live, show, write_dataset

from goldenkit.dataset import read_dataset
from goldenkit.results import read_run
from goldenkit.runner import run_eval

pytestmark = pytest.mark.live
require_live()

MAX_TOKENS = 16


def rows(n: int) -> list[dict]:
    return [
        {"id": f"u{i:03d}", "slice": "s", "case": {"prompt": f"Count to {i + 2}.", "expect": {"must_contain": ["1"]}}}
        for i in range(n)
    ]


def test_the_servers_usage_counts_are_recorded_and_added_up(live, tmp_path):
    n = 6
    ds = read_dataset(write_dataset(tmp_path, rows(n)))
    runs = {}
    for run_id, stream in (("plain", False), ("streamed", True)):
        provider = make_provider(live, temperature=0, seed=99, max_tokens=MAX_TOKENS, stream=stream)
        s = run_eval(ds, provider, ["contract"], results_dir=tmp_path / "r", run_id=run_id, progress=False)
        assert s.validity == "VALID", s.line()
        runs[run_id] = read_run(s.path)
    a, b = runs["plain"].outcomes(), runs["streamed"].outcomes()
    assert len(a) == n and (a["verdict"] != "ERROR").all()
    assert (a["tokens_in"] > 0).all()  # the prompt, counted by the server
    assert a["tokens_out"].between(1, MAX_TOKENS).all()
    merged = a.merge(b, on=["row_id", "repeat"], suffixes=("_a", "_b"))
    streamed = merged["tokens_in_b"].notna()
    # a server that sends the usage chunk counts what the plain reply counted; one that ignores
    # stream_options.include_usage (llama-cpp-python's) leaves both counts null, never 0
    assert (streamed == merged["tokens_out_b"].notna()).all()
    assert (merged.loc[streamed, "tokens_in_a"] == merged.loc[streamed, "tokens_in_b"]).all()
    assert (merged.loc[streamed, "tokens_out_a"] == merged.loc[streamed, "tokens_out_b"]).all()
    for run in runs.values():
        totals = json.loads((run.path / "run.json").read_text())["accounting"]
        outcomes = run.outcomes()
        reported = outcomes["tokens_in"].notna().any()
        expected_in = int(outcomes["tokens_in"].sum()) if reported else None
        assert totals["roles"]["candidate"]["tokens_in"] == expected_in
        assert totals["roles"]["candidate"]["calls"] == n
        assert totals["total_money"] is None and totals["total_money_label"] == "n/a (no prices)"
    show(
        "usage counts of the real server",
        rows=n,
        tokens_in=int(a["tokens_in"].sum()),
        tokens_out=int(a["tokens_out"].sum()),
        cached=a["tokens_cached"].dropna().tolist(),
    )
