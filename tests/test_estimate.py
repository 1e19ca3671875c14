"""``goldenkit run ... --estimate [--like RUN]``: the calls a run would make, and from a previous run of the
same dataset its tokens, time and money, without calling the model or writing anything."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import numbered_rows, row, write_dataset
from fakeserver import FakeModelServer, Reply
from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main

PRICING = '[pricing."m"]\ninput = 1.0\noutput = 2.0\nsource = "test list"\ndate = "2026-11-01"\n'


@pytest.fixture
def server():
    with FakeModelServer(default=Reply.text("yes")) as srv:
        yield srv


def _estimate(root: Path, srv: FakeModelServer, ds: Path, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
    return main([*argv, "--results-dir", str(root / "res"), "--estimate", *extra])


def _yes(i: int) -> dict[str, object]:
    return {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}}


def test_the_estimate_calls_nothing_and_writes_nothing(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = write_dataset(tmp_path, numbered_rows(4, _yes, split=lambda i: "holdout" if i else "dev"))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert _estimate(tmp_path, server, ds, "--repeats", "2") == 0
    out = capsys.readouterr().out
    assert "estimate: dataset t 1.0.0: 4 rows x 2 repeats x 1 turn = 8 calls;" in out
    assert "nothing called, nothing written" in out
    assert _estimate(tmp_path, server, ds, "--repeats", "2", "--split", "holdout") == 0  # the rows the run picks
    assert "3 rows x 2 repeats x 1 turn = 6 calls" in capsys.readouterr().out
    assert server.count() == 0
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # no results folder, no lock


def test_decided_repeats_and_conversations_give_the_range(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        row("one", _yes(0)),
        row("three", {"turns": ["hi", "and?", "bye"], "expect": {"must_contain": ["yes"]}}),
        row("sim", {"scenario": {"starting_prompt": "hi", "plan": "ask", "max_turns": 4}}),
    ]
    ds = write_dataset(tmp_path, rows)
    assert _estimate(tmp_path, server, ds, "--repeats", "3") == 0
    # turns: 1 + 3 + (1..4) = 5..8 per repeat; 3 repeats
    assert "3 rows x 3 repeats x 5..8 turns in all = 15..24 calls;" in capsys.readouterr().out
    assert _estimate(tmp_path, server, ds, "--repeats", "3", "--stop-decided-repeats") == 0
    # majority of 3 is decided after 2 agreeing repeats: 2/3 of the outcomes at the least
    assert "= 10..24 calls (--stop-decided-repeats stops once decided)" in capsys.readouterr().out
    assert server.count() == 0


def _like_run(root: Path) -> Path:
    frame = outcomes([(f"r{i:03d}", "s", ["PASS", "FAIL"]) for i in range(3)], run_id="prev")
    frame["tokens_in"] = [100, 200, 100, 200, 100, 200]  # mean 150
    frame["tokens_out"] = [20, 40, 20, 40, 20, 40]  # mean 30
    frame["latency_ms"] = [1000.0, 3000.0, 1000.0, 3000.0, 1000.0, 3000.0]  # mean 2000 ms
    return write_run(root / "res", manifest("prev", repeats=2), frame)


def test_like_a_previous_run_gives_tokens_time_and_money(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = write_dataset(tmp_path, numbered_rows(4, _yes), name="support")
    _like_run(tmp_path)
    flags = ["--repeats", "2", "--max-in-flight", "2", "--like", "prev"]
    assert _estimate(tmp_path, server, ds, *flags) == 0
    out = capsys.readouterr().out
    # 8 outcomes x (150 in + 30 out) tokens; 8 x 2 s over 2 in flight; no [pricing], no provider price
    assert "like run prev (6 outcomes): tokens ~1,440 (in ~1,200, out ~240);" in out
    assert "time ~8.0s at 2 in flight (mean latency 2,000 ms); money n/a" in out
    (tmp_path / "priced.toml").write_text('[graders]\nuse = ["contract"]\n' + PRICING)
    assert _estimate(tmp_path, server, ds, *flags, "--config", str(tmp_path / "priced.toml"), "--rpm", "6") == 0
    out = capsys.readouterr().out
    # (1200 x 1 + 240 x 2) / 1e6 USD; 6 rpm: 7 waits of 10 s between 8 calls is slower than the latencies
    assert "money ~$0.0017 ([pricing] test list 2026-11-01)" in out
    assert "time ~70.0s at 2 in flight, 6 rpm" in out
    assert server.count() == 0


def test_like_refuses_a_run_of_another_dataset_and_needs_estimate(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = write_dataset(tmp_path, numbered_rows(2, _yes), name="other")
    _like_run(tmp_path)
    assert _estimate(tmp_path, server, ds, "--like", "prev") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["goldenkit: goldenkit run --like prev: that run is of dataset 'support', not 'other'"]
    argv = ["run", str(ds), "--provider", "openai", "--base-url", server.url, "--model", "m", "--like", "prev"]
    assert main([*argv, "--results-dir", str(tmp_path / "res")]) == 1
    assert "--like RUN needs --estimate" in capsys.readouterr().err
    assert server.count() == 0 and sorted(p.name for p in (tmp_path / "res").iterdir()) == ["prev"]
