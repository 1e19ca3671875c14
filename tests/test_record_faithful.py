"""The data of record is never rewritten (goldenkit._scrub's table): what is stored is what was graded.

An answer or a tool argument holding credential-shaped text that is not a secret in use (a default
password quoted by the agent, an idempotency key, a session token, a Bearer example) is stored as
received, so a live run, its recorded fixtures replayed and ``goldenkit regrade`` of its answers give
the same verdicts and the same stored text (outcomes.jsonl and outcomes.parquet). A secret value in
use (the key goldenkit read for a provider) is masked wherever it appears, and only whole: a word
that shares its first characters stays as written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Recorded, Reply
from hypothesis import HealthCheck, given, settings, strategies as st

from goldenkit._scrub import MASK, scrub, secrets_in_use
from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._fixtures import FIXTURES_FILE, FixturesProvider
from goldenkit.records import Case, Response, ToolCall, TurnOutput
from goldenkit.results import stored_json, write_json_atomic
from goldenkit.results._jsonl import stored_outcome
from goldenkit.runner import run_eval
from goldenkit.runner._regrade import regrade

PASSWORD = "The factory default password: admin1234 (change it)."
BEARER = "Send it with the header Authorization: Bearer abc123def456 as the docs show."
IDEMPOTENCY = {"idempotency_key": "ord-20240917"}
SESSION = {"session_token": "S-99887766"}
QUIET = {"progress": False}

#: what is compared between the runs: everything an outcome says about the answer and its grading
COMPARED = ("row_id", "repeat", "verdict", "detail", "error_kind", "graders", "response", "trajectory")


def _write_dataset(root: Path, rows: list[dict[str, Any]]) -> Path:
    toml = '[graders]\nuse = ["contract", "trajectory"]\n'
    return write_dataset(root, [row(r["id"], r["case"]) for r in rows], name="faithful", toml=toml)


def _stored(run: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The compared fields of every outcome of ``run``: from outcomes.jsonl, then from outcomes.parquet."""
    lines = [json.loads(line) for line in (run / "outcomes.jsonl").read_text().splitlines()]
    table = pq.read_table(run / "outcomes.parquet").to_pylist()
    for rec in table:  # JSON columns are text in Parquet; map columns are lists of pairs
        rec["trajectory"] = json.loads(rec["trajectory"])
        rec["graders"] = {
            name: {**g, "findings": json.loads(g["findings"]) if g.get("findings") else g.get("findings")}
            for name, g in (rec["graders"] or [])
        }
    for rec in lines:
        for g in (rec.get("graders") or {}).values():
            g.setdefault("findings", None)
    key = lambda r: (r["row_id"], r["repeat"])  # noqa: E731
    return (
        sorted(({k: r.get(k) for k in COMPARED} for r in lines), key=key),
        sorted(({k: r.get(k) for k in COMPARED} for r in table), key=key),
    )


# ------------------------------------------------------------------ through the CLI

_AGENT = f"""
from goldenkit.records import Response, ToolCall, TurnOutput

def agent(case):
    if case.id.startswith("pw"):
        return {PASSWORD!r}
    if case.id == "bearer":
        return {BEARER!r}
    calls = [ToolCall("place_order", {IDEMPOTENCY!r}), ToolCall("open_session", {SESSION!r})]
    return Response(turns=[TurnOutput(text="Order placed.", tool_calls=calls)])
"""

CLI_ROWS = [
    {"id": "pw", "case": {"prompt": "default password?", "expect": {"must_contain": ["password: admin1234"]}}},
    {"id": "pw-not", "case": {"prompt": "default password?", "expect": {"must_not": ["password: admin1234"]}}},
    {"id": "bearer", "case": {"prompt": "how to call?", "expect": {"must_contain": ["Bearer abc123def456"]}}},
    {
        "id": "tools",
        "case": {
            "prompt": "order it",
            "expect": {
                "tools": [{"name": "place_order", "args": IDEMPOTENCY}, {"name": "open_session", "args": SESSION}]
            },
        },
    },
]


def test_live_replay_and_regrade_store_the_same_text_and_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gk_faithful_agent.py").write_text(_AGENT)
    ds = str(_write_dataset(tmp_path, CLI_ROWS))
    common = ["--results-dir", "results", "--quiet"]
    live = ["run", ds, "--provider", "callable", "--callable", "gk_faithful_agent:agent", "--record", "fx"]
    assert main([*live, "--run-id", "live", *common]) == 0
    assert main(["run", ds, "--provider", "fixtures", "--fixtures", "fx", "--run-id", "replay", *common]) == 0
    assert main(["regrade", "live", "--run-id", "regraded", *common]) == 0

    runs = {name: _stored(tmp_path / "results" / name) for name in ("live", "replay", "regraded")}
    lines, table = runs["live"]
    assert lines == table  # the Parquet file holds what the lines hold
    assert runs["replay"] == runs["live"] and runs["regraded"] == runs["live"]
    by_id = {r["row_id"]: r for r in lines}
    assert [by_id[i]["verdict"] for i in ("pw", "pw-not", "bearer", "tools")] == ["PASS", "FAIL", "PASS", "PASS"]
    assert by_id["pw"]["response"] == PASSWORD and by_id["bearer"]["response"] == BEARER
    calls = by_id["tools"]["trajectory"][0]["tool_calls"]
    assert [c["args"] for c in calls] == [IDEMPOTENCY, SESSION]
    recorded = (tmp_path / "fx" / FIXTURES_FILE).read_text()
    assert PASSWORD in recorded and "ord-20240917" in recorded and "S-99887766" in recorded
    # text for people still loses the shapes: the FAIL's detail quotes the forbidden phrase masked
    assert (
        by_id["pw-not"]["detail"] == scrub(by_id["pw-not"]["detail"]) and "admin1234" not in by_id["pw-not"]["detail"]
    )


SERVER_KEY = "gkt-live-4f1c9a7e2b8d6035e1a4"


def _echo(rec: Recorded) -> Reply:
    key = rec.headers.get("authorization", "").removeprefix("Bearer ")
    return Reply.text(f"{PASSWORD} Your key is {key}; token={key[:12]}xyz stays.")


def test_a_secret_in_use_is_masked_in_the_outcomes_the_parquet_and_the_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GK_FAITHFUL_KEY", SERVER_KEY)
    rows = [{"id": "pw", "case": {"prompt": "default password?", "expect": {"must_contain": ["admin1234"]}}}]
    ds = str(_write_dataset(tmp_path, rows))
    with FakeModelServer(responder=_echo) as srv:
        argv = ["run", ds, "--provider", "openai", "--base-url", srv.url, "--model", "m"]
        argv += ["--api-key-env", "GK_FAITHFUL_KEY", "--record", "fx", "--run-id", "live"]
        assert main([*argv, "--results-dir", "results", "--quiet"]) == 0
    run = tmp_path / "results" / "live"
    want = f"{PASSWORD} Your key is {MASK}; token={SERVER_KEY[:12]}xyz stays."
    lines, table = _stored(run)
    assert [r["response"] for r in lines] == [want] == [r["response"] for r in table]
    recorded = (tmp_path / "fx" / FIXTURES_FILE).read_text()
    assert f"Your key is {MASK};" in recorded and PASSWORD in recorded
    for path in (run / "outcomes.jsonl", run / "outcomes.parquet", run / "run.json", tmp_path / "fx" / FIXTURES_FILE):
        data = path.read_bytes()
        if path.suffix == ".parquet":
            data += json.dumps(pq.read_table(path).to_pylist(), default=str).encode()
        assert SERVER_KEY.encode() not in data, path


# ------------------------------------------------------------------ the library path, over generated shapes

_SHAPES = st.one_of(
    st.from_regex(
        r"(password|api_key|session_token|X-Api-Key|access_token|secret)(: |=)[A-Za-z]{4,9}[0-9]{4,8}", fullmatch=True
    ),
    st.from_regex(r"[Bb]earer [A-Za-z0-9._~+/-]{6,16}[0-9]{2}", fullmatch=True),
    st.from_regex(r"(sk-[A-Za-z0-9]{20,28}|AIza[0-9A-Za-z_-]{30,34}|ghp_[A-Za-z0-9]{30,34})", fullmatch=True),
    st.from_regex(r"https://[a-z]{1,8}:[a-z0-9]{4,10}@host\.test/v1\?api_key=[a-z0-9]{8,12}", fullmatch=True),
)


def _shape_agent(shapes: dict[str, str]) -> Any:
    def answer(case: Case) -> Response:
        text = shapes[case.id]
        calls = [ToolCall("lookup", {"session_token": text})]
        return Response(turns=[TurnOutput(text=f"Here it is: {text} (as asked).", tool_calls=calls)])

    return answer


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_SHAPES, min_size=1, max_size=6))
def test_generated_credential_shapes_survive_live_replay_and_regrade(tmp_path_factory: Any, texts: list[str]) -> None:
    root = tmp_path_factory.mktemp("shapes")
    assert all(scrub(t) != t for t in texts)  # each is masked on a screen: a shape the scrubber knows
    shapes = {f"r{i}": t for i, t in enumerate(texts)}
    rows = [
        {
            "id": rid,
            "case": {
                "prompt": "p",
                "expect": {"must_contain": [t], "tools": [{"name": "lookup", "args": {"session_token": t}}]},
            },
        }
        for rid, t in shapes.items()
    ]
    ds = read_dataset(_write_dataset(root, rows))
    graders = ["contract", "trajectory"]
    res, fx = root / "results", root / "fx"
    live = run_eval(
        ds, CallableProvider(_shape_agent(shapes)), graders, results_dir=res, run_id="live", record_dir=fx, **QUIET
    )
    replay = run_eval(ds, FixturesProvider(fixtures=fx), graders, results_dir=res, run_id="replay", **QUIET)
    again = regrade(live.path, "regraded", graders, results_dir=res, progress=False)
    assert live.counts["PASS"] == len(texts)
    stored = {s.run_id: _stored(s.path) for s in (live, replay, again)}
    assert stored["live"][0] == stored["live"][1] == stored["replay"][0] == stored["regraded"][0]
    assert [r["response"] for r in stored["live"][0]] == [
        f"Here it is: {shapes[r]} (as asked)." for r in sorted(shapes)
    ]


class _KeyedAgent(CallableProvider):
    """An in-process agent whose key goldenkit holds (as a provider that read it from the environment)."""

    def secret_values(self) -> tuple[str, ...]:
        return ("abcd1234efgh",)


def test_only_the_whole_secret_is_masked_never_a_word_sharing_its_first_characters(tmp_path: Path) -> None:
    rows = [{"id": "o", "case": {"prompt": "p", "expect": {"must_contain": ["order id abcd1234xyz"]}}}]
    ds = read_dataset(_write_dataset(tmp_path, rows))
    agent = _KeyedAgent(lambda case: "Your order id abcd1234xyz; the key abcd1234efgh is not yours to see.")
    run = run_eval(ds, agent, ["contract"], results_dir=tmp_path / "res", record_dir=tmp_path / "fx", **QUIET)
    want = "Your order id abcd1234xyz; the key *** is not yours to see."
    lines, table = _stored(run.path)
    assert run.counts["PASS"] == 1 and [r["response"] for r in lines] == [want] == [r["response"] for r in table]
    recorded = (tmp_path / "fx" / FIXTURES_FILE).read_text()
    assert "order id abcd1234xyz" in recorded and "abcd1234efgh" not in recorded


def test_run_json_keeps_its_record_and_scrubs_its_text_for_people(tmp_path: Path) -> None:
    data = {
        "provider": {"settings": {"system": f"Never reveal {PASSWORD}", "user": SERVER_KEY}},
        "invalid_reason": f"every call errored; e.g. HTTP 401: Authorization: Bearer abc123def456 ({SERVER_KEY})",
        "crash": [{"type": "RuntimeError", "message": "password: hunter2hunter2"}],
    }
    with secrets_in_use(SERVER_KEY):
        write_json_atomic(tmp_path / "run.json", data)
        expected = stored_json(data)
    stored = json.loads((tmp_path / "run.json").read_text())
    assert stored == expected
    assert stored["provider"]["settings"] == {"system": f"Never reveal {PASSWORD}", "user": MASK}
    assert stored["invalid_reason"] == "every call errored; e.g. HTTP 401: Authorization: Bearer *** (***)"
    assert stored["crash"] == [{"type": "RuntimeError", "message": "password: ***"}]


def test_an_outcome_scrubs_its_detail_and_a_failed_graders_reason_only() -> None:
    said = "must_contain: missing Bearer abc123def456"
    record = {
        "detail": f"judge: HTTP 401 Authorization: Bearer abc123def456; contract: {said}",
        "graders": {
            "judge": {"passed": None, "reason": "judge call failed: Bearer abc123def456", "error": True},
            "contract": {"passed": False, "reason": said, "error": False},
        },
        "response": PASSWORD,
    }
    stored = stored_outcome(record)
    assert stored["detail"] == "judge: HTTP 401 Authorization: Bearer ***; contract: must_contain: missing Bearer ***"
    assert stored["graders"]["judge"]["reason"] == "judge call failed: Bearer ***"
    assert stored["graders"]["contract"] == record["graders"]["contract"] and stored["response"] == PASSWORD
    assert record["graders"]["judge"]["reason"].endswith("abc123def456")  # the caller's record is not changed
    plain = {"detail": "", "graders": {"contract": {"passed": True, "reason": "", "error": False}}}
    assert stored_outcome(plain) is plain
