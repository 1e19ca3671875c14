"""``results/latest`` follows the newest run that did something: a resume with every outcome already there
leaves it where it was; the last line a resume prints says how many outcomes it reused and how many calls
it made. A same-day ``goldenkit benchmark`` with a new setting names ``--run-prefix`` as the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.results import read_run


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeModelServer(default=Reply.text("ok")) as srv:
        yield srv


@pytest.fixture
def ds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    rows = numbered_rows(3, lambda i: {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}})
    return write_dataset(tmp_path, rows, toml='[graders]\nuse = ["contract"]\n')


def _run(ds: Path, server: Any, run_id: str, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    """``goldenkit run`` (3 rows x 2 repeats) and the lines it printed."""
    argv = ["run", str(ds), "--provider", "openai", "--base-url", server.url, "--model", "tiny", "--repeats", "2"]
    assert main([*argv, *extra, "--run-id", run_id, "--quiet"]) == 0
    return capsys.readouterr().out.splitlines()


def _latest() -> str:
    return read_run("latest").run_id


def test_a_resume_with_nothing_to_do_leaves_latest_and_says_what_it_reused(
    ds: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run(ds, server, "one", capsys)
    assert not any(line.startswith("resumed:") for line in first)  # a new run reuses nothing and says nothing of it
    _run(ds, server, "two", capsys)
    assert _latest() == "two"
    calls = server.count()
    lines = _run(ds, server, "one", capsys)  # every outcome of "one" is there already
    assert lines[-1] == "resumed: 6 of 6 outcomes reused, 0 new calls"
    assert server.count() == calls and _latest() == "two"  # nothing called, latest where it was
    assert len(read_run("one").manifest["timings"]["invocations"]) == 2  # the invocation is still recorded

    lines = _run(ds, server, "one", capsys, "--retry-errors")  # no ERROR to retry: nothing to do either
    assert lines[-1] == "resumed: 6 of 6 outcomes reused, 0 new calls" and _latest() == "two"


def test_a_resume_that_calls_moves_latest_and_counts_what_it_reused(
    ds: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(ds, server, "one", capsys)
    _run(ds, server, "two", capsys)
    jsonl = Path("results") / "one" / "outcomes.jsonl"
    kept = jsonl.read_text(encoding="utf-8").splitlines(keepends=True)[:4]  # as if it crashed after four outcomes
    jsonl.write_text("".join(kept), encoding="utf-8")
    calls = server.count()
    lines = _run(ds, server, "one", capsys)
    assert lines[-1] == "resumed: 4 of 6 outcomes reused, 2 new calls"
    assert server.count() == calls + 2 and _latest() == "one" and read_run("one").complete


def test_a_same_day_benchmark_with_a_new_setting_suggests_a_new_run_prefix(
    ds: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["benchmark", str(ds), "--provider", "openai", "--base-url", server.url, "--models", "tiny", "--quiet"]
    assert main([*argv, "--run-prefix", "day"]) == 0
    capsys.readouterr()
    assert main([*argv, "--run-prefix", "day", "--repeats", "2"]) == 1  # another protocol under the same prefix
    err = capsys.readouterr().err.strip()
    assert "cannot resume run day-tiny: its run key differs (repeats" in err
    assert err.endswith("use another --run-prefix (e.g. --run-prefix day-2)") and "--run-id" not in err
    assert main([*argv, "--run-prefix", "day-2", "--repeats", "2"]) == 0  # and the suggestion works
