"""No secret reaches a file or a screen: the one scrubber (goldenkit._scrub) at every write boundary.

The end-to-end tests run ``goldenkit run``, ``goldenkit report`` and ``goldenkit pages`` as
processes against a model server on 127.0.0.1 that echoes the key it was sent (in a 401's
body and in an answer), and against a callable agent whose tool raises
``httpx.HTTPStatusError`` for a URL with ``?api_key=...`` and which raises with a key in its
message; then every byte under the working folder (outcomes.parquet decoded too) and
everything the commands printed is searched for the keys. The one key found is the one goldenkit
never read (the agent's own, quoted in an answer): data of record, stored as received in that
run's outcomes (tests/test_record_faithful.py) and masked everywhere else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq
import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Recorded, Reply
from hypothesis import example, given, settings, strategies as st

from goldenkit import _scrub as scrubber
from goldenkit._checks import check_env_name, looks_like_key
from goldenkit._scrub import (
    MASK,
    current_scope,
    header_secrets,
    mask_secrets,
    mask_secrets_value,
    note_secrets,
    scrub,
    secrets_in_use,
)
from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.providers._callable import CallableProvider
from goldenkit.results import OutcomeWriter, write_json_atomic, write_parquet
from goldenkit.runner import _runkey as runkey, run_eval

# The keys of the end-to-end tests: one only the scope knows (no shape matches it), one in
# OpenAI's format, one in a URL's query string.
SERVER_KEY = "gkt-live-4f1c9a7e2b8d6035e1a4"
AGENT_KEY = "sk-proj-Q7xk2LmN9pRt4VwZ8aBc1DeF5gHj3KqS"
TOOL_KEY = "u8Vd2kQp4sXzR1"
KEYS = (SERVER_KEY, AGENT_KEY, TOOL_KEY)


# ------------------------------------------------------------------ the scrubber itself


def test_a_value_in_use_is_masked_in_every_spelling_and_only_inside_its_scope() -> None:
    key = 'k3y"with\\quote'
    with secrets_in_use(key, None, "", "short"):
        assert scrub(f"sent {key} twice: {key}") == "sent *** twice: ***"
        assert scrub(json.dumps({"msg": f"bad {key}"})) == '{"msg": "bad ***"}'  # JSON-escaped
        assert scrub("?k=k3y%22with%5Cquote&x=1") == "?k=***&x=1"  # URL-encoded
        assert scrub("a short word stays") == "a short word stays"  # shorter than MIN_SECRET: not held
    assert current_scope() is None
    assert scrub(f"sent {key}") == f"sent {key}"


def test_nested_scopes_join_the_outer_one_until_it_ends() -> None:
    with secrets_in_use("outer-7f3a9c") as outer:
        with secrets_in_use("inner-2b8d60") as inner:
            assert inner is outer
        note_secrets("noted-1e4a7c")
        assert scrub("outer-7f3a9c inner-2b8d60 noted-1e4a7c") == "*** *** ***"
    assert current_scope() is None
    note_secrets("nowhere-9f8e7d")  # no scope open: nothing is kept anywhere
    assert current_scope() is None


def test_only_whole_values_are_masked_and_excerpts_are_scrubbed_before_they_are_cut() -> None:
    from goldenkit._text import one_line
    from goldenkit.providers._failures import error_text

    with secrets_in_use(SERVER_KEY):
        # a key's first characters in ordinary text are ordinary text (no prefix rule)
        assert scrub(f"order id {SERVER_KEY[:9]}xyz") == f"order id {SERVER_KEY[:9]}xyz"
        assert mask_secrets(f"{SERVER_KEY[:12]} and more text") == f"{SERVER_KEY[:12]} and more text"
        # an excerpt cut inside the key: masked whole first, then cut
        cut = one_line(f"body: {SERVER_KEY} trailing", 15)
        assert cut == "body: *** tr..." and SERVER_KEY[:5] not in cut
        body = json.dumps({"error": {"message": "x" * 190 + f" {SERVER_KEY}"}}).encode()
        assert SERVER_KEY[:5] not in error_text(body) and error_text(body).endswith("***")


def test_data_of_record_keeps_credential_shapes_and_loses_the_values_in_use() -> None:
    text = f"password: admin1234, Bearer abc123def456, key {AGENT_KEY}, https://u:pw@h/?api_key=z9z9z9z9z9"
    with secrets_in_use(SERVER_KEY):
        assert mask_secrets(text) is text
        assert mask_secrets(f"{text} {SERVER_KEY}") == f"{text} ***"
        value = {"args": [{"session_token": "S-99887766", "key": SERVER_KEY}], "n": 3}
        assert mask_secrets_value(value) == {"args": [{"session_token": "S-99887766", "key": "***"}], "n": 3}
    assert mask_secrets(SERVER_KEY) == SERVER_KEY  # outside every scope nothing is known
    assert scrub(text) == "password: ***, Bearer ***, key ***, https://***@h/?api_key=***"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc123def456ghi", "Authorization: Bearer ***"),
        ("authorization: Basic dXNlcjpwYXNzd29yZDE=", "authorization: Basic ***"),
        ("got 401 for bearer eyJhbGciOi.J9x1.sig2", "got 401 for bearer ***"),
        (f"key {AGENT_KEY} refused", "key *** refused"),
        ("google key AIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567 expired", "google key *** expired"),
        ("token ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x", "token ***"),
        ("api_key=zz81aa92bb&q=1", "api_key=***&q=1"),
        ('{"api_key": "abc123456789"}', '{"api_key": "***"}'),
        ('{\\"X-Api-Key\\": \\"abc123456789\\"}', '{\\"X-Api-Key\\": \\"***\\"}'),
        ("password: hunter2hunter2", "password: ***"),
        ("GET https://user:pw@host/v1?api-key=abc&x=1 failed", "GET https://***@host/v1?api-key=***&x=1 failed"),
        ("https://h/s?sig=AbC%2F12&expires=3", "https://h/s?sig=***&expires=3"),
    ],
)
def test_credential_shapes_are_masked(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens: 1024, tokens_in: 345",
        "Primary key: user_id; foreign key: order_id",
        "the bearer of bad news",
        "a task-management-system-20240918 and a risk-assessment-v2",
        "sk-learn-compatible-estimators-everywhere",
        '{"verdict":"PASS","graders":{"contract":{"passed":true,"reason":"all 3 checks passed"}}}',
        "key: value, token: abc, secret: none",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567AAAsk-abcdefghijklmnop12345",
        "see https://docs.example.com/guide?page=2#keys",
        "monkey=banana123456",
        '{"datasets": {"keys": "7051726f64040815"}}',
        "invalid key: 12345678",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub(text) is text


_FRAGMENTS = st.sampled_from(
    [
        "api_key",
        "X-Api-Key",
        "token",
        "Authorization",
        "password",
        "Bearer",
        "bearer",
        "Basic",
        ": ",
        "=",
        '"',
        '\\"',
        " ",
        "abc",
        "12345678",
        "a1b2c3d4e5",
        "sk-",
        "AIza",
        "ghp_",
        "github_pat_",
        "hf_",
        "https://",
        "u:p@",
        "host/x?",
        "&",
        "...",
        "tokens_in",
        "monkey",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=12).map("".join))
@example("api_key: 12345678https://X-Api-Keyhttps://api_key")  # a URL with nothing to mask keeps its case
def test_scrubbing_twice_changes_nothing_more(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once


def test_header_secrets_name_the_key_and_the_basic_password() -> None:
    assert header_secrets({"authorization": "Bearer k-123456", "content-type": "application/json"}) == [
        "Bearer k-123456",
        "k-123456",
    ]
    basic = header_secrets({"Authorization": "Basic dXNlcjpzM2NyZXQ="})  # user:s3cret
    assert "user:s3cret" in basic and "s3cret" in basic
    assert header_secrets({"X-Api-Key": "xyz-98765"}) == ["xyz-98765"]


def test_redaction_lives_in_scrub_and_runkey_re_exports_it() -> None:
    for name in ("redact_settings", "redact_text", "is_secret_key", "key_words", "SECRET_WORDS"):
        assert getattr(runkey, name) is getattr(scrubber, name)
    with secrets_in_use("a-secret-in-a-prompt"):  # settings are redacted by key, whatever the scope holds
        assert runkey.redact_settings({"system": "a-secret-in-a-prompt", "api_key": "x"}) == {
            "system": "a-secret-in-a-prompt",
            "api_key": "***",
        }


@pytest.mark.parametrize(
    ("name", "key_like"),
    [
        ("OPENAI_API_KEY", False),
        ("AZURE_OPENAI_API_KEY_FOR_PRODUCTION", False),
        ("OPENAI_API_KEY_20260918_BACKUP", False),
        ("_judge_key", False),
        ("sk-proj-abc", True),
        ("my key", True),
        ("9LIVES", True),
        ("AIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567", True),
        ("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3x", True),
        ("0123456789abcdef0123456789abcdef", True),
    ],
)
def test_a_key_is_told_from_a_variable_name(name: str, key_like: bool) -> None:
    assert looks_like_key(name) is key_like
    if key_like:
        with pytest.raises(Exception) as info:
            check_env_name(name, "--api-key-env")
        assert name not in str(info.value) and "--api-key-env" in str(info.value)


# ------------------------------------------------------------------ the writers


def _record(detail: str, response: str) -> dict[str, Any]:
    return {
        "run_id": "r",
        "row_id": "a",
        "slice": "s",
        "split": "dev",
        "tags": [f"t-{TOOL_KEY}"],
        "repeat": 0,
        "verdict": "ERROR",
        "detail": detail,
        "graders": {"judge": {"passed": None, "score": None, "reason": f"judge said {SERVER_KEY}", "error": True}},
        "response": response,
        "trajectory": [{"tool_calls": [{"name": "search", "args": {"key": SERVER_KEY}}]}],
    }


def test_outcome_writer_masks_each_line_and_its_span_is_the_written_line(tmp_path: Path) -> None:
    path = tmp_path / "outcomes.jsonl"
    with secrets_in_use(SERVER_KEY, TOOL_KEY), OutcomeWriter(path) as writer:
        first = writer.write(_record(f"HTTP 401: {SERVER_KEY}", "fine"))
        second = writer.write(_record(f"Authorization: Bearer {AGENT_KEY}", f"Authorization: Bearer {AGENT_KEY}"))
    data = path.read_bytes()
    assert SERVER_KEY.encode() not in data and TOOL_KEY.encode() not in data
    offset, length = second
    assert first == (0, offset) and offset + length == len(data)
    rec = orjson.loads(data[offset : offset + length])
    # the detail and the failed grader's reason are text for people: every shape masked
    assert rec["detail"] == "Authorization: Bearer ***" and rec["graders"]["judge"]["reason"] == "judge said ***"
    # the answer and the tool arguments are data of record: only the values in use are masked
    assert rec["response"] == f"Authorization: Bearer {AGENT_KEY}"
    assert rec["trajectory"][0]["tool_calls"][0]["args"]["key"] == MASK and rec["tags"] == ["t-***"]


def test_run_json_and_parquet_are_masked(tmp_path: Path) -> None:
    with secrets_in_use(SERVER_KEY, TOOL_KEY):
        write_json_atomic(tmp_path / "run.json", {"invalid_reason": f"every call errored; e.g. {SERVER_KEY}"})
        write_parquet([_record(f"401 {SERVER_KEY}", f"see https://h/?api_key={TOOL_KEY}")], tmp_path / "o.parquet")
    assert SERVER_KEY not in (tmp_path / "run.json").read_text()
    values = json.dumps(pq.read_table(tmp_path / "o.parquet").to_pylist(), default=str)
    assert all(k not in values for k in KEYS) and values.count(MASK) >= 5


def test_a_run_holds_its_providers_secrets_only_while_it_runs(tmp_path: Path) -> None:
    ds = _dataset(tmp_path, ["fine"])

    class KeyedProvider(CallableProvider):
        def secret_values(self) -> tuple[str, ...]:
            return (SERVER_KEY,)

    summary = run_eval(
        read_dataset(ds), KeyedProvider(lambda case: f"ok {SERVER_KEY}"), results_dir=tmp_path / "res", progress=False
    )
    assert current_scope() is None  # nothing left behind once the call returned
    assert SERVER_KEY not in (summary.path / "outcomes.jsonl").read_text()
    assert "ok ***" in (summary.path / "outcomes.jsonl").read_text()


# ------------------------------------------------------------------ through the CLI


def _dataset(root: Path, prompts: list[str]) -> Path:
    rows = [row(p, {"prompt": p, "expect": {"must_contain": ["ok"]}}) for p in prompts]
    return write_dataset(root, rows, name="keys")


_AGENT = """
import os
import httpx

def search(query):
    key = os.environ["GK_TOOL_KEY"]
    request = httpx.Request("GET", f"https://search.example.test/v1/find?api_key={key}&q={query}")
    response = httpx.Response(403, request=request)
    raise httpx.HTTPStatusError(f"Client error '403 Forbidden' for url '{request.url}'", request=request,
                                response=response)

def agent(case):
    if case.prompt == "tool":
        return search("refund")
    if case.prompt == "raise":
        raise RuntimeError(f"upstream rejected the credentials {os.environ['GK_AGENT_KEY']}")
    if case.prompt == "caught":
        try:
            search("refund")
        except httpx.HTTPStatusError as exc:
            return f"ok, but the search failed: {exc}"
    return "ok"
"""


OUTCOME_FILES = ("outcomes.jsonl", "outcomes.parquet")


def _forbidden(query: str) -> str:
    """The message of the HTTPStatusError the agent's search tool raises."""
    url = f"https://search.example.test/v1/find?api_key={TOOL_KEY}&q={query}"
    return f"Client error '403 Forbidden' for url '{url}'"


def _echo_key(rec: Recorded) -> Reply:
    """The model server's answer: a 401 that quotes the key sent, an answer that repeats it, or ok."""
    auth = rec.headers.get("authorization", "")
    key = auth.removeprefix("Bearer ")
    prompt = json.dumps((rec.json or {}).get("messages", []))
    if "leak401" in prompt:
        body = {"error": {"message": f"Incorrect API key provided: {key}. Header: {auth}", "type": "invalid_key"}}
        return Reply.status(401, body=json.dumps(body))
    if "echo" in prompt:
        return Reply.text(f"ok, your key is {key}")
    return Reply.text("ok")


def _cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goldenkit.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _leaks(folder: Path) -> list[str]:
    """``file: key`` for every key (or its first 8 characters) in any file under ``folder``."""
    found = []
    needles = [k.encode() for k in KEYS] + [k[:8].encode() for k in KEYS]
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".parquet":  # its pages are compressed: search the decoded values too
            data += json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
        found += [f"{path}: {n.decode()}" for n in needles if n in data]
    return found


@pytest.mark.timeout(600)
def test_no_key_reaches_any_file_or_output_of_run_report_and_pages(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "agentmod").mkdir()
    (tmp_path / "agentmod" / "gk_secret_agent.py").write_text(_AGENT)
    env = {
        **os.environ,
        "GK_SERVER_KEY": SERVER_KEY,
        "GK_AGENT_KEY": AGENT_KEY,
        "GK_TOOL_KEY": TOOL_KEY,
        "PYTHONPATH": os.pathsep.join([str(tmp_path / "agentmod"), os.environ.get("PYTHONPATH", "")]),
    }
    ds = _dataset(work, ["leak401", "echo", "fine", "tool", "raise", "caught"])
    common = ["--results-dir", "results", "--max-error-rate", "1", "--max-retries", "0"]
    outputs = []
    with FakeModelServer(responder=_echo_key) as srv:
        live = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m"]
        live += ["--api-key-env", "GK_SERVER_KEY", "--run-id", "live", "--record", "recorded", *common]
        proc = _cli(live, work, env)
        outputs.append(proc)
        assert proc.returncode == 0, proc.stderr
        assert all(r.headers.get("authorization") == f"Bearer {SERVER_KEY}" for r in srv.requests)
    proc = _cli(
        ["run", str(ds), "--provider", "callable", "--callable", "gk_secret_agent:agent"]
        + ["--run-id", "agent", *common],
        work,
        env,
    )
    outputs.append(proc)
    assert proc.returncode == 0, proc.stderr
    outputs.append(_cli(["report", "live", "--results-dir", "results"], work, env))
    outputs.append(_cli(["pages", "-o", "site", "--results-dir", "results", "--no-render"], work, env))
    outputs.append(_cli(["compare", "live", "agent", "--results-dir", "results"], work, env))
    assert [p.returncode for p in outputs[2:4]] == [0, 0], [p.stderr for p in outputs]

    # the evidence is there, masked: the 401's body, the echoed answer, the tool's URL, the raise
    live_lines = (work / "results" / "live" / "outcomes.jsonl").read_text()
    assert "Incorrect API key provided: ***" in live_lines and "ok, your key is ***" in live_lines
    agent_lines = (work / "results" / "agent" / "outcomes.jsonl").read_text()
    assert "for url '<url>" in agent_lines and "upstream rejected the credentials ***" in agent_lines
    assert (work / "results" / "live" / "report.html").is_file() and (work / "site" / "index.html").is_file()
    # an answer quoting a key goldenkit never read (the agent's own) is data of record: stored as
    # received in the run's outcomes, and masked in everything for people (report, pages, output)
    caught = [json.loads(line) for line in agent_lines.splitlines() if '"row_id":"caught"' in line]
    assert [r["response"] for r in caught] == [f"ok, but the search failed: {_forbidden('refund')}"]
    answers = {
        str(work / "results" / "agent" / name) + f": {n}" for name in OUTCOME_FILES for n in (TOOL_KEY, TOOL_KEY[:8])
    }
    assert set(_leaks(work)) == answers
    printed = "".join(p.stdout + p.stderr for p in outputs)
    assert not [k for k in KEYS if k in printed or k[:8] in printed], printed


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--api-key-env", "sk-proj-Q7xk2LmN9pRt4VwZ8aBc1DeF5gHj3KqS"),
        ("--api-key-env", "AIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567"),
        ("--api-key-env", "0123456789abcdef0123456789abcdef"),
        ("--user-api-key-env", "gkt live 4f1c9a7e"),
    ],
)
def test_a_key_given_for_api_key_env_is_refused_unechoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    ds = _dataset(tmp_path, ["fine"])
    argv = ["run", str(ds), "--provider", "openai", "--base-url", "http://127.0.0.1:9", "--model", "m"]
    assert main([*argv, option, value, "--results-dir", str(tmp_path / "res")]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"goldenkit: {option} takes the NAME of an environment variable") and err.count("\n") == 1
    assert value not in out + err and value[:8] not in out + err
    assert not (tmp_path / "res").exists()


def test_a_key_given_as_api_key_env_in_goldenkit_toml_is_refused_unechoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, ["fine"])
    (ds / "goldenkit.toml").write_text(f'[run]\napi_key_env = "{AGENT_KEY}"\n')
    argv = ["run", str(ds), "--provider", "openai", "--base-url", "http://127.0.0.1:9", "--model", "m"]
    for named in ([], ["--config", str(ds / "goldenkit.toml")]):  # found beside the dataset, then named
        assert main([*argv, "--results-dir", str(tmp_path / "res"), *named]) == 1
        out, err = capsys.readouterr()
        said = "api_key_env takes the NAME of an environment variable" if named else "[run] api_key_env: a goldenkit"
        assert said in err and err.count("\n") == 1
        assert AGENT_KEY not in out + err and AGENT_KEY[:8] not in out + err


def test_a_provider_key_after_an_equals_sign_is_masked() -> None:
    from goldenkit._scrub import scrub

    for text in (
        "API key not valid. key=sk-live-SECRETSECRET1234567890",
        "auth=sk-proj-abcdef0123456789abcdefXYZ",
        "key=AIzaSyA1234567890abcdefghijklmnopqrstuv",
    ):
        assert "SECRET" not in scrub(text) and "abcdef0123456789" not in scrub(text) and "AIzaSy" not in scrub(text)


def test_more_key_shapes_are_masked_and_an_image_is_not() -> None:
    from goldenkit._scrub import scrub
    from goldenkit.providers._failures import describe

    for text, key in (
        ("Invalid API Key: gsk_AbCdEf1234567890abcdefGH", "gsk_AbCdEf"),
        ("Incorrect API key provided: xai-AbCdEf1234567890abcdefGH", "xai-AbCdEf"),
        ("POST /v1/keys/sk-proj-abcdefghijkl0123456789xyz", "sk-proj"),
        ("token%3Dsk-proj-abcdefghijkl0123456789xyz", "sk-proj"),
    ):
        assert key not in scrub(text), text
    image = '<img src="data:image/png;base64,iVBO/sk-abcdef1234567890abcdefg">'
    assert scrub(image) == image  # a data URI's bytes are not a key
    long = describe(RuntimeError("x" * 140 + " key AIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567"))
    assert "AIzaSy" not in long  # masked before the message is cut short
