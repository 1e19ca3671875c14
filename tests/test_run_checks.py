"""A run checks before it acts, charges each error to its cause, and an agent cannot stop it.

Through the CLI (``goldenkit.cli.main``) and through ``run_eval``:

* every option of a run (a flag, a ``[run]`` key of goldenkit.toml, a ``RunOptions`` field) out of
  its range, a run id that would leave its folder, or a ``[gate] rule`` the run's repeats cannot
  decide is refused with one line naming it, and leaves no run folder, lock or run.json;
* an agent's own errors (``agent``, ``refused``) never make a run INVALID; a crash of goldenkit
  itself is recorded as a crash with every worker's exception;
* ``sys.exit``, ``SystemExit`` or ``KeyboardInterrupt`` raised by an agent is an ``agent`` ERROR on
  its row, and a call that never returns is abandoned at ``--timeout``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import factories
import pytest
from factories import numbered_rows

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import ConfigError, InputError
from goldenkit.providers._callable import CallableProvider
from goldenkit.runner import RunOptions, run_eval

QUIET = {"progress": False}


def write_dataset(root: Path, n: int = 3) -> Path:
    """A dataset folder of ``n`` rows asking for "done" (row ids r00, r01, ...)."""
    case = {"prompt": "done?", "expect": {"must_contain": ["done"]}}
    return factories.write_dataset(root, numbered_rows(n, lambda i: case, ids="r{:02d}"))


def answer(case: Any) -> str:
    return "done"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder holding a 3-row dataset and an agent module ``agent:answer`` (importable)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "agent.py").write_text("def answer(case):\n    return 'done'\n")
    write_dataset(tmp_path)
    return tmp_path


def cli_run(*extra: str) -> int:
    return main(["run", "ds", "--provider", "callable", "--callable", "agent:answer", "--quiet", *extra])


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# --------------------------------------------------------------------------- validate, then act


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--max-in-flight", "0"], "argument --max-in-flight: must be an integer >= 1, got '0'"),
        (["--repeats", "0"], "argument --repeats: must be an integer in [1, 1000], got '0'"),
        (["--max-retries", "-1"], "argument --max-retries: must be an integer >= 0, got '-1'"),
        (["--per-slice", "0"], "argument --per-slice: must be an integer >= 1, got '0'"),
        (["--max-tokens", "0"], "argument --max-tokens: must be an integer >= 1, got '0'"),
        (["--max-turns", "0"], "argument --max-turns: must be an integer >= 1, got '0'"),
        (["--ray-workers", "0"], "argument --ray-workers: must be an integer >= 1, got '0'"),
        (["--timeout", "inf"], "argument --timeout: must be a finite number > 0, got 'inf'"),
        (["--temperature", "2.5"], "argument --temperature: must be a finite number in [0, 2], got '2.5'"),
        (["--repeats", "2.5"], "argument --repeats: must be an integer in [1, 1000], got '2.5'"),
        (
            ["--run-id", "../elsewhere"],
            "argument --run-id: must be one folder name, but it contains a path separator ('/')",
        ),
        (["--run-id", ".."], "argument --run-id: must be one folder name, but it is not a name: use letters"),
        (
            ["--run-id", "main\n"],
            "argument --run-id: must be one folder name, but it contains a control character (U+000A), got 'main\\n'",
        ),
        (["--run-id", ""], "argument --run-id: must be one folder name, but it is empty, got ''"),
        (["--run-id", "latest"], "argument --run-id: must not be a name reserved by goldenkit ('latest')"),
    ],
)
def test_a_flag_out_of_range_is_one_line_and_nothing_is_written(
    work: Path, argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_run(*argv) == 1
    assert said in one_line(capsys.readouterr().err)
    assert not (work / "results").exists()


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("max_in_flight = 0", "[run] max_in_flight must be an integer >= 1, got 0"),
        ("repeats = -2", "[run] repeats must be an integer in [1, 1000], got -2"),
        ("max_retries = -1", "[run] max_retries must be an integer >= 0, got -1"),
        ("per_slice = 0", "[run] per_slice must be an integer >= 1, got 0"),
        ("max_tokens = 0", "[run] max_tokens must be an integer >= 1, got 0"),
        ("max_turns = 0", "[run] max_turns must be an integer >= 1, got 0"),
        ("ray_workers = 0", "[run] ray_workers must be an integer >= 1, got 0"),
        ("temperature = nan", "[run] temperature must be a finite number in [0, 2], got nan"),
        ("timeout = 0", "[run] timeout must be a finite number > 0, got 0"),
        ('repeats = "3"', "[run] repeats must be an integer in [1, 1000], got '3'"),
    ],
)
def test_a_run_key_out_of_range_in_goldenkit_toml_names_the_file_and_key(
    work: Path, setting: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "ds" / "goldenkit.toml").write_text(f"[run]\n{setting}\n")
    assert cli_run() == 1
    err = one_line(capsys.readouterr().err)
    assert err == f"goldenkit: ds/goldenkit.toml: {said}\n"
    assert not (work / "results").exists()


def test_a_collapse_rule_that_needs_more_repeats_than_the_run_has_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "ds" / "goldenkit.toml").write_text('[gate]\nrule = "at_least:5"\n')
    assert cli_run("--repeats", "3") == 1
    err = one_line(capsys.readouterr().err)
    assert "[gate] rule = 'at_least:5' needs at least 5 repeats of a row, and the run has 3" in err
    assert not (work / "results").exists()
    assert cli_run("--repeats", "5", "--run-id", "five") == 0  # enough repeats: the same rule runs
    assert (work / "results" / "five" / "run.json").exists()


def test_a_benchmark_run_prefix_is_checked_as_a_run_id(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["benchmark", "ds", "--models", "a,b", "--run-prefix", "../up", "--quiet"]) == 1
    assert "argument --run-prefix: must be one folder name, but it contains a path separator" in one_line(
        capsys.readouterr().err
    )
    assert not (work / "results").exists()


def test_the_limiter_reads_the_same_table() -> None:
    from goldenkit.runner import Limiter

    with pytest.raises(ConfigError, match=r"^Limiter max_in_flight must be an integer >= 1, got 0$"):
        Limiter(0)
    with pytest.raises(ConfigError, match=r"^Limiter rpm must be a finite number > 0, got nan$"):
        Limiter(2, math.nan)


def test_a_results_dir_that_is_a_file_is_one_line(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "results").write_text("not a folder")
    assert cli_run("--run-id", "r1") == 1
    assert "--results-dir results is a file; a folder is needed" in one_line(capsys.readouterr().err)
    assert not (work / "results" / "r1").exists()
    (work / "results").unlink()
    assert cli_run("--run-id", "r1", "--results-dir", "res\n") == 1
    assert "--results-dir 'res\\n' contains a control character (U+000A)" in one_line(capsys.readouterr().err)
    assert not (work / "res\n").exists()


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"max_in_flight": 0}, "RunOptions.max_in_flight must be an integer >= 1, got 0"),
        ({"repeats": 0}, "RunOptions.repeats must be an integer in [1, 1000], got 0"),
        ({"repeats": True}, "RunOptions.repeats must be an integer in [1, 1000], got True"),
        ({"max_retries": -1}, "RunOptions.max_retries must be an integer >= 0, got -1"),
        ({"timeout": math.nan}, "RunOptions.timeout must be a finite number > 0, got nan"),
        ({"rpm": 0}, "RunOptions.rpm must be a finite number > 0, got 0"),
        ({"backoff_base": -1.0}, "RunOptions.backoff_base must be a finite number >= 0, got -1.0"),
        ({"max_error_rate": 1.5}, "RunOptions.max_error_rate must be a finite number in [0, 1], got 1.5"),
        ({"abort_after_errors": 0}, "RunOptions.abort_after_errors must be an integer >= 1, got 0"),
        ({"max_turns": 0}, "RunOptions.max_turns must be an integer >= 1, got 0"),
        ({"max_ungradable": math.inf}, "RunOptions.max_ungradable must be a finite number in [0, 1], got inf"),
        ({"sample": {"per_slice": 0}}, "RunOptions.sample['per_slice'] must be an integer >= 1, got 0"),
        (
            {"run_id": "a/b"},
            "RunOptions.run_id must be one folder name, but it contains a path separator ('/'); "
            "a name is one file name, got 'a/b'",
        ),
        (
            {"run_id": "main\n"},
            "RunOptions.run_id must be one folder name, but it contains a control character (U+000A), got 'main\\n'",
        ),
        ({"run_id": ""}, "RunOptions.run_id must be one folder name, but it is empty, got ''"),
        (
            {"rule": "at_least:5", "repeats": 3},
            "RunOptions.rule = 'at_least:5' needs at least 5 repeats of a row, and the run has 3",
        ),
    ],
)
def test_run_eval_refuses_an_option_before_anything_is_written(
    tmp_path: Path, options: dict[str, Any], said: str
) -> None:
    ds = read_dataset(write_dataset(tmp_path))
    with pytest.raises(ConfigError) as info:
        run_eval(ds, CallableProvider(fn=answer), results_dir=tmp_path / "results", **QUIET, **options)
    assert str(info.value) == said
    assert not (tmp_path / "results").exists()
    with pytest.raises(ConfigError, match=re.escape(said.split(" got ")[0])):
        RunOptions(**options)  # the same check wherever the options are made


def test_run_eval_refuses_an_output_folder_that_is_a_file(tmp_path: Path) -> None:
    ds = read_dataset(write_dataset(tmp_path))
    (tmp_path / "taken").write_text("a file")
    for where in ("results_dir", "record_dir"):
        options: dict[str, Any] = {"results_dir": tmp_path / "results", where: tmp_path / "taken"}
        with pytest.raises(InputError, match=rf"^RunOptions.{where} .*taken is a file; a folder is needed$"):
            run_eval(ds, CallableProvider(fn=answer), run_id="f", **QUIET, **options)
        assert not (tmp_path / "results").exists()


def test_good_values_at_the_edges_of_their_ranges_run(tmp_path: Path) -> None:
    ds = read_dataset(write_dataset(tmp_path))
    summary = run_eval(
        ds,
        CallableProvider(fn=answer),
        results_dir=tmp_path / "results",
        run_id="edge.1_a-b",
        max_in_flight=1,
        max_retries=0,
        max_error_rate=0.0,
        abort_after_errors=None,
        rpm=None,
        **QUIET,
    )
    assert summary.validity == "VALID" and summary.counts["PASS"] == 3
    assert RunOptions(repeats=2.0).repeats == 2 and isinstance(RunOptions(repeats=2.0).repeats, int)  # type: ignore[arg-type]


def test_the_argparse_types_come_from_the_one_table() -> None:
    from goldenkit._constraints import RUN_OPTIONS
    from goldenkit.cli import build_parser

    parser = build_parser("run")
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    typed = {a.dest: a.type for a in run._actions if a.type is not None and a.dest in RUN_OPTIONS}
    assert set(typed) == set(RUN_OPTIONS) - {"backoff_base", "backoff_cap", "abort_after_errors"}  # not flags
    for dest, parse in typed.items():
        assert getattr(parse, "__name__", None) == RUN_OPTIONS[dest].what, dest
    fields = set(RunOptions.__dataclass_fields__)
    assert {"repeats", "max_in_flight", "timeout", "abort_after_errors", "run_id"} <= fields & set(RUN_OPTIONS)


# --------------------------------------------------------------------------- errors charged to their cause


def test_an_agent_raising_on_one_row_of_thirty_is_a_valid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "keyerror_agent.py").write_text(
        "def answer(case):\n    if case.id == 'r07':\n        return {}['order_id']\n    return 'done'\n"
    )
    write_dataset(tmp_path, 30)
    code = main(
        ["run", "ds", "--provider", "callable", "--callable", "keyerror_agent:answer", "--quiet", "--run-id", "k"]
    )
    assert code == 0  # VALID: the agent's own KeyError is evidence against it, not an outage
    man = json.loads((tmp_path / "results" / "k" / "run.json").read_text())
    assert man["validity"] == "VALID" and man["error_rate"] == 0.0 and man["invalid_reason"] is None
    assert man["counts"]["ERROR"] == 1 and man["counts"]["candidate_errors"] == 1
    errors = [json.loads(x) for x in (tmp_path / "results" / "k" / "outcomes.jsonl").read_text().splitlines()]
    errors = [r for r in errors if r["verdict"] == "ERROR"]
    assert [(r["row_id"], r["error_kind"]) for r in errors] == [("r07", "agent")]
    assert "KeyError: 'order_id'" in errors[0]["detail"]


def test_an_outage_on_one_row_of_thirty_still_makes_the_run_invalid(tmp_path: Path) -> None:
    def flaky(case: Any) -> str:
        if case.id == "r07":
            raise ConnectionResetError("reset by peer")
        return "done"

    ds = read_dataset(write_dataset(tmp_path, 30))
    summary = run_eval(ds, CallableProvider(fn=flaky), results_dir=tmp_path / "res", max_retries=0, **QUIET)
    assert summary.validity == "INVALID" and summary.exit_code == 3
    assert summary.counts["candidate_errors"] == 0 and "error rate 3.3% (1 of 30)" in str(summary.invalid_reason)


def test_an_agent_failing_every_row_is_not_stopped_as_an_outage(tmp_path: Path) -> None:
    def broken(case: Any) -> str:
        raise ValueError("my bug")

    ds = read_dataset(write_dataset(tmp_path, 8))
    summary = run_eval(ds, CallableProvider(fn=broken), results_dir=tmp_path / "res", abort_after_errors=3, **QUIET)
    assert summary.counts["total"] == 8 and summary.counts["candidate_errors"] == 8  # the breaker did not trip
    assert summary.validity == "VALID" and summary.complete
    assert summary.exit_code == 2  # nothing graded: not evidence of quality, and never green
    assert "ERROR 8 (8 the candidate's own, e.g. " in summary.line()


def test_a_crash_of_goldenkit_is_recorded_as_a_crash(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldenkit.runner._run import RunExecution

    real = RunExecution.write_graded

    def buggy(self: RunExecution, rec: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        if rec["row_id"] == "r01":
            raise RuntimeError("bug in goldenkit token=hunter2")
        real(self, rec, *args, **kwargs)

    monkeypatch.setattr(RunExecution, "write_graded", buggy)
    assert cli_run("--run-id", "c", "--max-in-flight", "1") != 0
    man = json.loads((work / "results" / "c" / "run.json").read_text())
    assert man["validity"] == "INVALID" and man["complete"] is False
    assert man["stopped_because"] == "crash"
    assert man["crash"] == [{"type": "RuntimeError", "message": man["crash"][0]["message"]}]
    assert man["crash"][0]["message"].startswith("bug in goldenkit")
    assert man["invalid_reason"].startswith("goldenkit crashed: RuntimeError: bug in goldenkit")
    assert "interrupted" not in man["invalid_reason"]


def test_every_worker_exception_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from goldenkit.runner._run import RunExecution

    async def two_failures(self: RunExecution) -> None:
        raise ExceptionGroup("workers", [RuntimeError("first"), ExceptionGroup("inner", [KeyError("second")])])

    monkeypatch.setattr(RunExecution, "_work", two_failures)
    ds = read_dataset(write_dataset(tmp_path))
    with pytest.raises(ExceptionGroup) as info:
        run_eval(ds, CallableProvider(fn=answer), results_dir=tmp_path / "res", run_id="g", **QUIET)
    assert len(info.value.exceptions) == 2
    man = json.loads((tmp_path / "res" / "g" / "run.json").read_text())
    assert [c["type"] for c in man["crash"]] == ["RuntimeError", "KeyError"]
    assert "(and 1 more worker exception: run.json crash)" in man["invalid_reason"]


# --------------------------------------------------------------------------- an agent cannot stop goldenkit


def stopping_agent(case: Any) -> str:
    if case.id == "r01":
        sys.exit(3)
    if case.id == "r02":
        raise SystemExit("bye")
    if case.id == "r03":
        raise KeyboardInterrupt
    return "done"


async def async_stopping_agent(case: Any) -> str:
    return stopping_agent(case)


@pytest.mark.parametrize(
    ("fn", "threads"),
    [(stopping_agent, None), (stopping_agent, 0), (async_stopping_agent, None)],
    ids=["in-a-thread", "inline", "async"],
)
def test_sys_exit_and_keyboard_interrupt_in_an_agent_are_its_errors(tmp_path: Path, fn: Any, threads: Any) -> None:
    ds = read_dataset(write_dataset(tmp_path, 6))
    provider = CallableProvider(fn=fn, threads=threads)
    summary = run_eval(ds, provider, results_dir=tmp_path / "res", run_id="x", **QUIET)
    assert summary.complete and summary.counts["total"] == 6  # the run went on after each
    assert summary.counts["PASS"] == 3 and summary.counts["candidate_errors"] == 3
    assert summary.validity == "VALID" and summary.exit_code == 0
    lines = [json.loads(x) for x in (tmp_path / "res" / "x" / "outcomes.jsonl").read_text().splitlines()]
    errors = {r["row_id"]: (r["error_kind"], r["detail"]) for r in lines if r["verdict"] == "ERROR"}
    assert {k: v[0] for k, v in errors.items()} == {"r01": "agent", "r02": "agent", "r03": "agent"}
    assert errors["r01"][1].endswith("raised SystemExit: 3") and errors["r03"][1].endswith("raised KeyboardInterrupt")


CLI = "import sys\nfrom goldenkit.cli import main\nsys.exit(main(sys.argv[1:]))"


def test_a_call_that_never_returns_is_abandoned_and_the_process_exits(work: Path) -> None:
    """The agent blocks forever on one row: the row is an ERROR at --timeout, the run writes its results and
    the process exits with its code (a worker thread left blocked does not keep it alive)."""
    import subprocess
    import time

    (work / "hung.py").write_text(
        "import threading\ndef answer(case):\n"
        "    if case.id == 'r01':\n        threading.Event().wait()\n    return 'done'\n"
    )
    argv = ["run", "ds", "--provider", "callable", "--callable", "hung:answer", "--timeout", "1", "--quiet"]
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CLI, *argv, "--max-retries", "1", "--run-id", "h"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,  # the old thread pool joined its blocked thread at exit: the process never ended
    )
    took = time.monotonic() - t0
    assert done.returncode == 3, done.stderr  # a row nobody answered in time: not evidence, never 0
    assert took < 90  # about 5 s on a quiet machine (start-up, 2 attempts of 1 s + 1 s grace, backoff)
    man = json.loads((work / "results" / "h" / "run.json").read_text())
    assert man["complete"] is True and man["counts"]["total"] == 3 and man["counts"]["PASS"] == 2
    lines = [json.loads(x) for x in (work / "results" / "h" / "outcomes.jsonl").read_text().splitlines()]
    hung = [r for r in lines if r["row_id"] == "r01"]
    assert [(r["verdict"], r["error_kind"], r["attempts"]) for r in hung] == [("ERROR", "infrastructure", 2)]
    assert "timed out after 2s" in hung[0]["detail"]  # the whole request's deadline: 1 s x 1 turn + 1 s
