"""Messages that say what to do, through the command line.

* Ctrl-C during ``goldenkit run`` (a real process, a real SIGINT) names how many
  outcomes were kept and the exact command that resumes, and that command resumes.
* A refused resume names each setting that changed (``max_tokens 256 -> 512``), not hashes.
* Comparing or gating a shard says to merge its shards first, before anything else.
* The leaderboard says which p-value and which interval are adjusted, in its text, its
  JSON and its pages.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import factories
import pytest
from factories import numbered_rows
from fakeserver import FakeModelServer, Reply
from leaderboard_site import benchmark_run

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.history import runs_df
from goldenkit.pages._leaderboards import leaderboard_sections
from goldenkit.providers._callable import CallableProvider
from goldenkit.runner import merge_shards, run_eval

# Runs `goldenkit` with Ctrl-C wired to KeyboardInterrupt even when this test was started with SIGINT ignored
# (a shell's background job): what an interactive terminal gives the command.
CLI = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from goldenkit.cli import console_main\n"
    "console_main()\n"
)
SLOW_AGENT = (
    "import os, time\n\n\n"
    "def answer(case, repeat=0):\n"
    "    time.sleep(float(os.environ.get('SLOW_SECONDS', '0.2')))\n"
    "    return 'done'\n"
)


def write_dataset(root: Path, rows: int) -> Path:
    made = numbered_rows(
        rows, lambda i: {"prompt": "q", "n": i, "expect": {"must_contain": ["done"]}}, slice=lambda i: f"s{i % 3}"
    )
    return factories.write_dataset(root, made)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _interrupt(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``goldenkit run`` of 40 slow rows, SIGINT once some outcomes are written; its result and results folder."""
    ds, res = write_dataset(tmp_path, 40), tmp_path / "results"
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    argv = [
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "slow_agent:answer",
        "--max-in-flight",
        "2",
        "--results-dir",
        str(res),
        "--quiet",
        *extra,
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv],
        env=env,
        cwd=tmp_path,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(_lines(p / "outcomes.jsonl") >= 6 for p in res.glob("*")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never got going"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), res


def _resume(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the command a message printed (``goldenkit ...``) as this interpreter's goldenkit, the agent fast."""
    words = shlex.split(command)
    assert words[0] == "goldenkit"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]), "SLOW_SECONDS": "0"}
    return subprocess.run(
        [sys.executable, "-m", "goldenkit.cli", *words[1:]],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


# ---------------------------------------------------------------- Ctrl-C


def test_ctrl_c_names_what_was_kept_and_the_command_that_resumes(tmp_path: Path) -> None:
    done, res = _interrupt(tmp_path, "--run-id", "slow-2")
    assert done.returncode == 130, done.stderr
    kept = _lines(res / "slow-2" / "outcomes.jsonl")
    assert 6 <= kept < 40
    found = re.fullmatch(
        r"goldenkit: interrupted: (\d+) of 40 outcomes kept in (\S+); resume with: (.+)\n", done.stderr
    )
    assert found, done.stderr
    assert int(found.group(1)) == kept and found.group(2) == str(res / "slow-2")
    command = found.group(3)
    assert command.startswith("goldenkit run ") and command.endswith(" --run-id slow-2")
    assert command.count("--run-id") == 1 and "--callable slow_agent:answer" in command
    again = _resume(command, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "run slow-2: VALID; 40/40 outcomes" in again.stdout and f"; {40 - kept} calls in" in again.stdout


def test_ctrl_c_of_a_run_without_a_run_id_names_the_id_it_was_given(tmp_path: Path) -> None:
    done, res = _interrupt(tmp_path)
    assert done.returncode == 130
    found = re.search(r"kept in (\S+); resume with: goldenkit run .* --run-id (\S+)$", done.stderr.strip())
    assert found, done.stderr
    folder, run_id = Path(found.group(1)), found.group(2)
    assert folder == res / run_id and (folder / "run.json").is_file()
    assert json.loads((folder / "run.json").read_text())["complete"] is False


# ---------------------------------------------------------------- a refused resume


def test_a_refused_resume_names_each_changed_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds, res = write_dataset(tmp_path, 6), tmp_path / "results"
    with FakeModelServer(default=Reply.text("done")) as srv:
        base = [
            "run",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            srv.url,
            "--model",
            "m1",
            "--run-id",
            "r",
            "--results-dir",
            str(res),
            "--quiet",
        ]
        assert main([*base, "--max-tokens", "256"]) == 0
        capsys.readouterr()
        code = main([*base, "--max-tokens", "512", "--temperature", "0.5", "--system", "You are a careful agent."])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip() == (
        "goldenkit: cannot resume run r: its run key differs (agent_version: max_tokens 256 -> 512, "
        'system unset -> "You are a careful agent.", temperature unset -> 0.5); use a new --run-id'
    )
    assert not re.search(r"[0-9a-f]{32}", err)  # no hash left to decode


# ---------------------------------------------------------------- a shard compared or gated


def answer(case, repeat=0):  # type: ignore[no-untyped-def]
    return "done" if int(case.raw["n"]) % 2 == 0 else "nope"


@pytest.fixture
def sharded(tmp_path: Path) -> tuple[Path, Path]:
    ds, res = read_dataset(write_dataset(tmp_path, 12)), tmp_path / "results"
    for run_id, shard in (("whole", None), ("s1", (1, 2)), ("s2", (2, 2))):
        run_eval(ds, CallableProvider(fn=answer), run_id=run_id, results_dir=res, shard=shard, progress=False)
    merge_shards("merged", ["s1", "s2"], results_dir=res)
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text("[gate]\nregression = true\nnon_inferiority_margin = false\n")  # 12 rows: about the shard
    return res, cfg


def test_comparing_a_shard_says_to_merge_first(sharded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    res, _ = sharded
    assert main(["compare", "whole", "s1", "--results-dir", str(res)]) == 3
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == (
        "goldenkit compare: not evidence: candidate s1: shard 1/2 of a sharded run: merge its shards first "
        "(goldenkit merge RUN_ID SHARD ...), then compare"
    )
    assert "note: the candidate is shard 1/2 of a sharded run: merge its shards first (goldenkit merge)" in out
    assert main(["compare", "whole", "merged", "--results-dir", str(res)]) == 0
    assert "shard" not in capsys.readouterr().err


def test_gating_a_shard_fails_saying_to_merge_first(
    sharded: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    res, cfg = sharded
    gate = ["--baseline", "whole", "--results-dir", str(res), "--config", str(cfg)]
    assert main(["gate", "s2", *gate]) == 3
    out = capsys.readouterr().out
    why = "the run is shard 2/2 of a sharded run: merge its shards first (goldenkit merge), then gate the merge"
    assert f"[FAIL] run.shard: {why}" in out
    assert out.splitlines()[-1].startswith(f"gate NOT EVIDENCE: run.shard: {why}")  # the decision, then its reason
    assert main(["gate", "merged", *gate]) == 0
    assert "run.shard" not in capsys.readouterr().out


# ---------------------------------------------------------------- the leaderboard's adjusted values


def test_the_leaderboard_says_which_values_are_adjusted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results"
    for run_id, passed in (("lb-a", 18), ("lb-b", 12), ("lb-c", 9)):
        benchmark_run(res, run_id, "lb", passed, 20)
    assert main(["leaderboard", "lb-a", "lb-b", "lb-c", "--results-dir", str(res)]) == 0
    text = capsys.readouterr().out
    assert "diff pts [95% CI, unadjusted]" in text
    assert (
        "p = exact McNemar of the pair alone (unadjusted); p_holm = Holm-adjusted over the 3 pairs "
        "(decides significant); the diff interval is the pair's own, not adjusted for the pairs"
    ) in text
    assert main(["leaderboard", "lb-a", "lb-b", "lb-c", "--results-dir", str(res), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["adjustment"]
    assert set(said) == {"p_val", "p_adj", "diff_ci"}
    assert said["p_val"].startswith("unadjusted") and said["diff_ci"].startswith("unadjusted")
    assert said["p_adj"].startswith("Holm-adjusted over all pairs")
    site = tmp_path / "site"
    pages = leaderboard_sections(runs_df(res, None), site, site_title="t")
    html = (site / pages.rendered[0]).read_text(encoding="utf-8")
    assert "p (exact McNemar, unadjusted)" in html and "[95% Newcombe, unadjusted]" in html
    assert "Only p (Holm) is adjusted for the number of pairs" in html
