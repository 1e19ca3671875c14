"""A hostile review of the core promises (issue 37), one test per way found around them.

Each test goes through the command line (or the public Python API) the way a user would, and fails
on the code before its fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Recorded, Reply

from goldenkit.cli import main

KEY = "Ab+cd/Ef==12345678Zq"  # a base64-style key, as Azure and others issue them


def _dataset(root: Path, prompts: list[str], toml: str | None = None) -> Path:
    rows = [row(f"r{i}", {"prompt": p, "expect": {"must_contain": ["x"]}}) for i, p in enumerate(prompts)]
    return write_dataset(root, rows, name="review", toml=toml)


def _files_holding(root: Path, needles: dict[str, str]) -> list[str]:
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        data = f.read_bytes()
        found += [f"{f.relative_to(root)}: {name}" for name, s in needles.items() if s.encode() in data]
    return found


# ------------------------------------------------------------------ a secret in use, in every spelling

#: the key as an answer or an error may carry it: urllib's default quote keeps "/", a form body
#: writes "+" for a space, many servers write lowercase hex, some JSON writers escape "/" as "\/"
SPELLINGS = {
    "quote": urllib.parse.quote(KEY),
    "quote_plus": urllib.parse.quote_plus(KEY),
    "lower hex": urllib.parse.quote(KEY, safe="").replace("%2B", "%2b").replace("%2F", "%2f").replace("%3D", "%3d"),
    "json slash": KEY.replace("/", "\\/"),
}


def test_a_key_in_use_reaches_no_file_and_no_screen_in_any_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def answer(req: Recorded) -> Reply:
        prompt = req.json["messages"][-1]["content"]
        if prompt == "error":
            return Reply.status(400, body=json.dumps({"error": {"message": "bad key " + SPELLINGS["quote"]}}))
        return Reply.text("x " + SPELLINGS[prompt])

    ds = _dataset(tmp_path, [*SPELLINGS, "error"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REVIEW_KEY", KEY)
    with FakeModelServer(responder=answer) as srv:
        args = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m"]
        code = main([*args, "--api-key-env", "REVIEW_KEY", "--run-id", "k", "--record", "fx", "--max-retries", "0"])
    out = capsys.readouterr()
    assert code == 3  # the 400 is an error nobody's answer caused: the run is INVALID, as intended
    needles = {**SPELLINGS, "the key's tail": KEY[-10:]}
    assert _files_holding(tmp_path, needles) == []
    assert [n for n, s in needles.items() if s in out.out + out.err] == []


# ------------------------------------------------------------------ a value that passes the checks but breaks the run

_AGENT = "def agent(case):\n    return 'x'\n"


@pytest.mark.parametrize("repeats", ["100000000000", "10000000000000000000000000000"])
def test_a_huge_repeats_is_refused_before_the_run_folder_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], repeats: str
) -> None:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "review_agent.py").write_text(_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["run", str(ds), "--provider", "callable", "--callable", "review_agent:agent", "--repeats", repeats])
    err = capsys.readouterr().err
    assert code == 1
    assert err.strip().splitlines() == [
        f"goldenkit: goldenkit run: argument --repeats: must be an integer in [1, 1000], got '{repeats}'"
    ]
    assert not (tmp_path / "results").exists()


# ------------------------------------------------------------------ an agent cannot stop goldenkit

_ASYNC_AGENTS = """
import asyncio, time

async def blocks(case):
    if case.prompt == "a":
        time.sleep(3600)  # a blocking call inside a coroutine: the loop it runs on stops
    return "x"

async def swallows(case):
    if case.prompt == "a":
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass  # never lets its timeout end it
    return "x"

async def cancels_itself(case):
    raise asyncio.CancelledError()

async def task_group_exits(case):
    async def quits():
        raise SystemExit(2)
    async with asyncio.TaskGroup() as tg:  # the task's SystemExit leaves the event loop it runs on
        tg.create_task(quits())

def group_of_exits(case):
    raise BaseExceptionGroup("tools", [SystemExit(1), KeyboardInterrupt()])
"""


def _run_async_agent(tmp_path: Path, fn: str) -> tuple[int, list[dict[str, Any]]]:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "async_agent.py").write_text(_ASYNC_AGENTS)
    cmd = [str(Path(sys.executable).parent / "goldenkit"), "run", str(ds), "--provider", "callable", "--callable"]
    cmd += [f"async_agent:{fn}", "--timeout", "1", "--max-retries", "0", "--run-id", "r", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    lines = (tmp_path / "results" / "r" / "outcomes.jsonl").read_text().splitlines()
    return done.returncode, sorted((json.loads(line) for line in lines), key=lambda o: o["row_id"])


@pytest.mark.parametrize("fn", ["blocks", "swallows"])
def test_a_coroutine_agent_that_never_ends_is_abandoned_at_its_timeout(tmp_path: Path, fn: str) -> None:
    code, outcomes = _run_async_agent(tmp_path, fn)  # before: goldenkit hung for good
    assert code == 3  # a row nobody answered in time: the run is not evidence
    assert outcomes[0]["verdict"] == "ERROR" and "timed out" in outcomes[0]["detail"]
    if fn == "swallows":  # the other row's call went on (a blocked loop holds every call of that agent)
        assert outcomes[1]["verdict"] == "PASS"


def test_a_coroutine_agent_raising_cancelled_error_is_its_own_error(tmp_path: Path) -> None:
    code, outcomes = _run_async_agent(tmp_path, "cancels_itself")
    assert [(o["verdict"], o["error_kind"]) for o in outcomes] == [("ERROR", "agent"), ("ERROR", "agent")]
    assert "CancelledError" in outcomes[0]["detail"]


# ------------------------------------------------------------------ Python grades as the command line does


def test_run_eval_takes_a_plain_function_and_keys_the_run_as_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    import goldenkit as gk

    ds = _dataset(tmp_path, ["a", "b"], toml='[graders]\nuse = ["contract"]\n')
    (tmp_path / "review_plain.py").write_text(_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = importlib.import_module("review_plain").agent
    gk.run_eval(str(ds), agent, run_id="py", progress=False)  # before: AttributeError on the function
    assert main(["run", str(ds), "--provider", "callable", "--callable", "review_plain:agent", "--run-id", "cli"]) == 0
    py, cli = (json.loads((tmp_path / "results" / r / "run.json").read_text()) for r in ("py", "cli"))
    assert py["counts"] == cli["counts"] and py["counts"]["PASS"] == 2
    assert (py["protocol_sha256"], py["agent_version"]) == (cli["protocol_sha256"], cli["agent_version"])
    with pytest.raises(gk.errors.ConfigError, match="the agent must be a Provider or a function fn\\(case\\), got int"):
        gk.run_eval(str(ds), 42, run_id="bad")  # type: ignore[arg-type]
    assert not (tmp_path / "results" / "bad").exists()


# ------------------------------------------------------------------ names and paths


@pytest.mark.parametrize("leaderboard", [False, True])
def test_a_report_written_where_a_file_stands_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], leaderboard: bool
) -> None:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "review_plain.py").write_text(_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for run_id in ("r1", "r2"):
        assert (
            main(["run", str(ds), "--provider", "callable", "--callable", "review_plain:agent", "--run-id", run_id])
            == 0
        )
    (tmp_path / "taken").write_text("a file, not a folder")
    capsys.readouterr()
    which = ["--leaderboard", "r1", "r2"] if leaderboard else ["r1"]
    code = main(["report", *which, "--output", "taken"])  # before: mkdir's FileExistsError, a traceback
    assert (code, capsys.readouterr().err.strip()) == (
        1,
        "goldenkit: output folder taken is a file; a folder is needed",
    )
    assert (tmp_path / "taken").read_text() == "a file, not a folder"


@pytest.mark.parametrize("fn", ["task_group_exits", "group_of_exits"])
def test_an_agent_exit_inside_a_group_is_its_own_error(tmp_path: Path, fn: str) -> None:
    code, outcomes = _run_async_agent(tmp_path, fn)  # before: a traceback (exit 1), or a hang until --timeout
    assert code == 2  # VALID, nothing graded: every row is the candidate's own ERROR
    assert [(o["verdict"], o["error_kind"]) for o in outcomes] == [("ERROR", "agent"), ("ERROR", "agent")]


# ------------------------------------------------------------------ what is graded is the dataset's case

_CHEAT = """
def agent(case):
    if case.prompt == "a":
        case.expect.clear()  # no expectation left: the wrong answer would not be graded at all
        return "wrong"
    return "x"
"""


def test_an_agent_cannot_change_what_its_answer_is_graded_against(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "review_cheat.py").write_text(_CHEAT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    main(["run", str(ds), "--provider", "callable", "--callable", "review_cheat:agent", "--run-id", "c", "--quiet"])
    lines = (tmp_path / "results" / "c" / "outcomes.jsonl").read_text().splitlines()
    verdicts = sorted((o["row_id"], o["verdict"]) for o in map(json.loads, lines))
    assert verdicts == [("r0", "FAIL"), ("r1", "PASS")]  # before: r0 SKIPPED ("no hard grader applied")
    assert main(["regrade", "c", "--run-id", "c2", "--quiet"]) == 0
    relines = (tmp_path / "results" / "c2" / "outcomes.jsonl").read_text().splitlines()
    assert sorted((o["row_id"], o["verdict"]) for o in map(json.loads, relines)) == verdicts


_SNEAKY = """
from goldenkit.records import Response, ToolCall, TurnOutput

class Always(str):  # a text that contains everything and matches every pattern
    def __contains__(self, part):
        return True

    def lower(self):
        return Always(str.lower(self))

    def casefold(self):
        return Always(str.casefold(self))

def text(case):
    return Always("wrong")

def response(case):
    return Response(turns=[TurnOutput(text=Always("wrong"), tool_calls=[ToolCall("lookup", {"id": 1})])])
"""


@pytest.mark.parametrize("fn", ["text", "response"])
def test_what_is_graded_is_the_plain_text_that_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fn: str
) -> None:
    ds = _dataset(tmp_path, ["a", "b"])
    (tmp_path / "review_sneaky.py").write_text(_SNEAKY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    main(["run", str(ds), "--provider", "callable", "--callable", f"review_sneaky:{fn}", "--run-id", "s", "--quiet"])
    lines = [json.loads(line) for line in (tmp_path / "results" / "s" / "outcomes.jsonl").read_text().splitlines()]
    assert [(o["verdict"], o["response"]) for o in lines] == [("FAIL", "wrong")] * 2  # before: PASS


@pytest.mark.parametrize("option", ["--max-tokens", "--model-seed", "--sample-seed", "--max-reply-bytes"])
def test_an_integer_no_server_can_hold_is_refused_before_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    ds = _dataset(tmp_path, ["a"])
    monkeypatch.chdir(tmp_path)
    big = str(2**64)  # before: every call an ERROR ("Integer exceeds 64-bit range"), an INVALID run left behind
    args = ["run", str(ds), "--provider", "openai", "--base-url", "http://127.0.0.1:9", "--model", "m"]
    assert main([*args, option, big]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"goldenkit: goldenkit run: argument {option}: must be an integer")
    assert err.endswith(f"that fits in 64 bits, got '{big}'")
    assert not (tmp_path / "results").exists()


def test_an_integer_no_server_can_hold_is_refused_in_goldenkit_toml_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, ["a"], toml=f"[run]\nmax_tokens = {2**63}\n")
    monkeypatch.chdir(tmp_path)
    args = ["run", str(ds), "--provider", "openai", "--base-url", "http://127.0.0.1:9", "--model", "m"]
    assert main(args) == 1
    assert "max_tokens must be an integer >= 1 that fits in 64 bits, got 9223372036854775808" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


# ------------------------------------------------------------------ imported files with a field of the wrong type

_PLAIN_ROWS = """
def agent(case):
    return "x " + case.prompt
"""


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("text", 5, "field turns[0].text must be a text or null, got int 5"),
        ("tokens_in", "many", 'field tokens_in must be an integer or null, got str "many"'),
        ("latency_ms", "slow", 'field latency_ms must be a number or null, got str "slow"'),
        (
            "tool_calls",
            [{"name": "n", "args": "x"}],
            'field turns[0].tool_calls[0].args must be an object or null, got str "x"',
        ),
    ],
)
def test_a_recorded_fixture_with_a_field_of_the_wrong_type_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: Any,
    says: str,
) -> None:
    ds = _dataset(tmp_path, ["a"])
    (tmp_path / "review_rows.py").write_text(_PLAIN_ROWS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    rec = [
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "review_rows:agent",
        "--record",
        "fx",
        "--run-id",
        "a",
    ]
    assert main([*rec, "--quiet"]) == 0
    line = json.loads((tmp_path / "fx" / "fixtures.jsonl").read_text())
    if field in line:
        line[field] = value
    else:
        line["turns"][0][field] = value
    (tmp_path / "fx" / "fixtures.jsonl").write_text(json.dumps(line) + "\n")
    capsys.readouterr()
    code = main(["run", str(ds), "--provider", "fixtures", "--fixtures", "fx", "--run-id", "b", "--quiet"])
    assert (code, capsys.readouterr().err.strip()) == (1, f"goldenkit: fx/fixtures.jsonl:1: {says}")
    assert not (tmp_path / "results" / "b").exists()  # before: pyarrow's traceback after the run was written


_BAD_RESPONSES = """
from goldenkit.records import Response, ToolCall, TurnOutput

def tokens(case):
    return Response(turns=[TurnOutput(text="x")], tokens_in="many")

def cost(case):
    return Response(turns=[TurnOutput(text="x")], cost=float("nan"))

def text(case):
    return Response(turns=[TurnOutput(text=5)])

def turns(case):
    return Response(turns="x")
"""


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        ("tokens", "tokens_in must be a number >= 0 or None, got 'many'"),
        ("cost", "cost must be a number >= 0 or None, got nan"),
        ("text", "turns[0].text (and user) must be a str, got int"),
        ("turns", "turns must be a list of TurnOutput"),
    ],
)
def test_an_agents_response_of_the_wrong_type_is_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fn: str, says: str
) -> None:
    ds = _dataset(tmp_path, ["a"])
    (tmp_path / "review_bad.py").write_text(_BAD_RESPONSES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(
        ["run", str(ds), "--provider", "callable", "--callable", f"review_bad:{fn}", "--run-id", "b", "--quiet"]
    )
    assert code == 2  # before: pyarrow's traceback (exit 1) or an outage (INVALID, exit 3)
    (out,) = [json.loads(line) for line in (tmp_path / "results" / "b" / "outcomes.jsonl").read_text().splitlines()]
    assert (out["verdict"], out["error_kind"]) == ("ERROR", "agent")
    assert out["detail"] == f"callable review_bad:{fn} returned a Response whose {says}"
