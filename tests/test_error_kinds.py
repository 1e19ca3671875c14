"""The error taxonomy, as each failure is recorded: every kind through a real local HTTP server.

Each test runs a real run (or a real provider call) against :class:`fakeserver.FakeModelServer`
over real sockets and checks the outcome's ``error_kind``, how often the server was called
(whether the failure was retried) and the one-line detail. The kinds are those of
:mod:`goldenkit.schema`: transient (retried), infrastructure (nobody's answer), refused (the
candidate's own request refused), agent (an in-process agent's own code raised).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from factories import rows_of, write_dataset
from fakeserver import FakeModelServer, Recorded, Reply
from testca import make_ca

from goldenkit import errors, schema
from goldenkit.dataset import read_dataset
from goldenkit.errors import ProviderError
from goldenkit.providers._adk_events import error_from_exception
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._ollama import OllamaProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.records import Case, Turn
from goldenkit.results import outcomes_df
from goldenkit.runner import run_eval

FAST: dict[str, Any] = {"backoff_base": 0.01, "backoff_cap": 0.05, "progress": False, "max_error_rate": 1.0}
CONTEXT = (
    '{"error": {"message": "This model\'s maximum context length is 8 tokens", "code": "context_length_exceeded"}}'
)


def dataset(root: Path, cases: dict[str, dict[str, Any]]) -> Path:
    return write_dataset(root, rows_of(cases))


def run_one(tmp_path: Path, provider: Any, case: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    ds = read_dataset(dataset(tmp_path, {"a": case or {"prompt": "say ok", "expect": {"must_contain": ["ok"]}}}))
    s = run_eval(ds, provider, ["contract"], results_dir=tmp_path / "r", **{**FAST, **kw})
    df = outcomes_df(s.path)
    assert len(df) == 1
    out: dict[str, Any] = df.iloc[0].to_dict()
    out["exit_code"] = s.exit_code
    return out


@pytest.fixture
def server():
    with FakeModelServer() as srv:
        yield srv


def test_the_kinds_are_the_schemas() -> None:
    assert errors.ERROR_KINDS == schema.ERROR_KINDS
    with pytest.raises(ValueError, match="unknown error kind"):
        ProviderError("x", kind="permanent")
    assert ProviderError("x", transient=True).kind == "transient"
    assert ProviderError("x", transient=False).kind == "infrastructure"  # never the candidate's by default


@pytest.mark.parametrize(
    ("reply", "kind", "needle"),
    [
        (Reply.status(401), "infrastructure", "HTTP 401"),
        (Reply.status(403), "infrastructure", "HTTP 403"),
        (
            Reply.status(
                429, body='{"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}'
            ),
            "infrastructure",
            "quota or credit exhausted",
        ),
        (Reply.status(429, retry_after=3600), "infrastructure", "exceeds the cap"),
        (Reply.page(200), "infrastructure", "is text/html, not the JSON"),
        (Reply.page(404), "infrastructure", "a gateway or proxy?"),
        (Reply.status(404), "infrastructure", "HTTP 404"),
        (Reply.status(400, body=CONTEXT), "refused", "context length"),
        (
            Reply.status(400, body='{"error": {"message": "blocked", "code": "content_filter"}}'),
            "refused",
            "content filter",
        ),
        (
            Reply.status(400, body='{"error": {"message": "Invalid schema for function \'f\': bad type"}}'),
            "refused",
            "tool's schema is invalid",
        ),
        (
            # llama.cpp's server answers a request it cannot validate with a 500: the same every time
            Reply.status(
                500, body='{"error": {"message": "1 validation error: content Input should be a valid string"}}'
            ),
            "infrastructure",
            "calls the request invalid",
        ),
    ],
)
def test_failures_that_are_not_retried(tmp_path, server, reply, kind, needle):
    server.default = reply
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url))
    assert server.count() == 1  # not retried
    assert (o["verdict"], o["error_kind"], o["attempts"]) == ("ERROR", kind, 1)
    assert needle in o["detail"] and "attempts)" not in o["detail"]
    # never green: the candidate's own error is evidence against it (a VALID run, nothing graded: exit 2),
    # any other error is missing evidence (INVALID: exit 3)
    assert o["exit_code"] == (2 if kind in ("agent", "refused") else 3)


@pytest.mark.parametrize(
    "reply", [Reply.status(503), Reply.status(408), Reply.status(429, retry_after=0), Reply.drop()]
)
def test_transient_failures_are_retried_and_pass_when_the_server_recovers(tmp_path, server, reply):
    server.script(reply, reply)
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url))
    assert (o["verdict"], o["attempts"], server.count()) == ("PASS", 3, 3)


def test_a_transient_failure_that_lasts_is_recorded_transient_after_its_attempts(tmp_path, server):
    server.default = Reply.status(503)
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url), max_retries=2)
    assert (o["error_kind"], o["attempts"], server.count()) == ("transient", 3, 3)
    assert o["detail"].endswith("(after 3 attempts)")


def test_an_untrusted_certificate_is_infrastructure(tmp_path):
    ca = make_ca(tmp_path, "untrusted")  # the client trusts certifi's bundle, not this CA
    with FakeModelServer(tls=ca.server_context()) as srv:
        o = run_one(tmp_path, OpenAIProvider(model="m", base_url=srv.url))
    assert (o["error_kind"], o["attempts"]) == ("infrastructure", 1)
    assert "TLS certificate verification failed" in o["detail"]


@pytest.mark.parametrize("make", [OpenAIProvider, OllamaProvider])
def test_a_stream_cut_before_its_end_marker_is_infrastructure_and_never_graded(tmp_path, server, make):
    server.default = Reply.text("ok, a cut answer", cut=True)
    provider = make(model="m", base_url=server.url, stream=True)
    o = run_one(tmp_path, provider)
    assert (o["verdict"], o["error_kind"], o["attempts"], server.count()) == ("ERROR", "infrastructure", 1, 1)
    assert "ended before its end marker" in o["detail"] and o["graders"] == {}
    server.default = Reply.text("ok, a whole answer")  # the same stream with its end: graded
    o = run_one(tmp_path / "whole", make(model="m", base_url=server.url, stream=True))
    assert o["verdict"] == "PASS"


@pytest.mark.parametrize("stream", [False, True])
def test_the_deadline_bounds_the_whole_request_even_when_bytes_keep_coming(tmp_path, server, stream):
    # one byte every 0.2 s keeps every read inside its own timeout; only the whole-request deadline ends it
    # (the answer is long enough that the drip would take over 400 s an attempt)
    server.default = Reply.dripping(0.2, text="ok" + " " * 2000)
    t0 = time.monotonic()
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url, stream=stream), timeout=1.0, max_retries=1)
    elapsed = time.monotonic() - t0
    # two attempts of 1 s each, not the 800 s the drip would take (measured 2.4 s, 4.8 s on a loaded machine)
    assert 2.0 <= elapsed < 60.0, elapsed
    assert (o["verdict"], o["attempts"], server.count()) == ("ERROR", 2, 2)  # retried: a deadline is transient
    assert o["error_kind"] == "infrastructure"  # still hit on the last attempt: nobody answered in time
    assert "1s deadline" in o["detail"] and server.url in o["detail"]


def test_a_deadline_hit_once_is_retried_and_passes(tmp_path, server):
    server.script(Reply.dripping(0.2))
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url), timeout=1.0)
    assert (o["verdict"], o["attempts"]) == ("PASS", 2)


@pytest.mark.parametrize("stream", [False, True])
def test_a_connection_the_server_closed_while_idle_is_sent_again_without_an_attempt(tmp_path, stream):
    # the server closes each connection after its reply without saying so (as tinyproxy does)
    with FakeModelServer(close_after_reply=True) as srv:
        cases = {f"r{i}": {"prompt": "say ok", "expect": {"must_contain": ["ok"]}} for i in range(12)}
        ds = read_dataset(dataset(tmp_path, cases))
        provider = OpenAIProvider(model="m", base_url=srv.url, stream=stream)
        s = run_eval(ds, provider, ["contract"], results_dir=tmp_path / "r", max_in_flight=1, max_retries=0, **FAST)
        df = outcomes_df(s.path)
        assert list(df["verdict"]) == ["PASS"] * 12 and set(df["attempts"]) == {1}
        assert srv.count() == 12  # a request never reached the server twice


def test_a_dropped_fresh_connection_is_still_an_attempt(tmp_path, server):
    server.script(Reply.drop())
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url), max_retries=0)
    assert (o["error_kind"], o["attempts"], server.count()) == ("transient", 1, 1)


# ------------------------------------------------------------------ in-process agents


def agent_calling(url: str, exc_of: Any) -> Any:
    def agent(case: Case) -> str:
        raise exc_of(url)

    return agent


def _http_status(url: str) -> Exception:
    resp = httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": []}, timeout=5)
    resp.raise_for_status()
    return AssertionError("the server did not fail")


@pytest.mark.parametrize(
    ("exc_of", "kind", "attempts"),
    [
        (lambda url: KeyError("order_id"), "agent", 1),
        (lambda url: ValueError("bad plan"), "agent", 1),
        (lambda url: ConnectionError("connection refused"), "transient", 3),
        (lambda url: TimeoutError("slow tool"), "transient", 3),
        (lambda url: FileNotFoundError("/no/such/index"), "infrastructure", 1),
        (_http_status, "infrastructure", 1),  # the server answers 401: httpx.HTTPStatusError
    ],
)
def test_what_a_callable_raised_is_classified_by_whose_fault_it_is(tmp_path, exc_of, kind, attempts):
    with FakeModelServer(api_key="k") as srv:
        provider = CallableProvider(agent_calling(srv.url, exc_of), threads=0)
        o = run_one(tmp_path, provider, max_retries=2)
    assert (o["verdict"], o["error_kind"], o["attempts"]) == ("ERROR", kind, attempts)
    assert o["exit_code"] == (2 if kind in ("agent", "refused") else 3)  # never green; an outage is 3


def test_a_callable_calling_a_server_that_is_down_is_transient_not_its_fault(tmp_path, server):
    url = server.url
    server.stop()

    def agent(case: Case) -> str:
        return httpx.post(url + "/v1/chat/completions", json={}, timeout=2).text

    o = run_one(tmp_path, CallableProvider(agent, threads=0), max_retries=1)
    assert (o["error_kind"], o["attempts"]) == ("transient", 2) and "ConnectError" in o["detail"]


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (KeyError("order_id"), "agent"),
        (ConnectionResetError("reset"), "transient"),
        (PermissionError("/etc/secret"), "infrastructure"),
        (httpx.ReadTimeout("slow"), "transient"),
    ],
)
def test_an_adk_agents_exceptions_are_classified_the_same_way(exc, kind):
    assert error_from_exception(exc, "tool").kind == kind


# ------------------------------------------------------------------ conversations keep their transcript


def test_an_error_in_turn_two_keeps_turn_one_and_a_refusal_is_not_retried(tmp_path, server):
    def responder(rec: Recorded) -> Reply:
        users = [m for m in rec.json["messages"] if m["role"] == "user"]
        return Reply.status(400, body=CONTEXT) if len(users) == 2 else Reply.text("first answer")

    server.responder = responder
    o = run_one(
        tmp_path,
        OpenAIProvider(model="m", base_url=server.url),
        {"turns": ["one", "two"], "expect": {"must_contain": ["x"]}},
    )
    assert (o["verdict"], o["error_kind"], o["attempts"], server.count()) == ("ERROR", "refused", 1, 2)
    assert o["detail"].startswith("turn 2: HTTP 400") and "attempts" not in o["detail"]
    assert [t["text"] for t in o["trajectory"]] == ["first answer"]


def test_a_failure_inside_a_tool_loop_keeps_the_calls_made_before_it(tmp_path, server):
    server.script(Reply.tool_calls([{"name": "lookup", "args": {"id": "A1"}}]))
    server.default = Reply.status(502)
    case = {
        "prompt": "where is A1?",
        "tools": [{"name": "lookup", "parameters": {"type": "object"}}],
        "tool_responses": [{"name": "lookup", "args": {"id": "A1"}, "response": {"status": "shipped"}}],
        "expect": {"must_contain": ["shipped"]},
    }
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url), case, max_retries=0)
    assert (o["error_kind"], o["attempts"]) == ("transient", 1)
    [turn] = o["trajectory"]
    assert turn["tool_calls"] == [{"name": "lookup", "args": {"id": "A1"}}]
    assert turn["tool_responses"][0]["response"] == {"status": "shipped"}
    assert "the turn failed: HTTP 502" in json.dumps(turn["intermediate"])


def test_a_simulated_conversation_keeps_its_turns_and_says_how_often_the_failing_turn_was_tried(tmp_path, server):
    from goldenkit.providers._simulator import CallableSimulator

    def responder(rec: Recorded) -> Reply:
        users = [m for m in rec.json["messages"] if m["role"] == "user"]
        return Reply.status(400, body=CONTEXT) if len(users) >= 3 else Reply.text(f"answer {len(users)}")

    server.responder = responder
    sim = CallableSimulator(lambda scenario, transcript: f"follow-up {len(transcript)}")
    case = {
        "scenario": {"starting_prompt": "hello", "plan": "ask three", "max_turns": 5},
        "expect": {"must_contain": ["x"]},
    }
    o = run_one(tmp_path, OpenAIProvider(model="m", base_url=server.url), case, user_simulator=sim)
    assert (o["verdict"], o["error_kind"]) == ("ERROR", "refused")
    assert o["detail"].startswith("turn 3: HTTP 400") and "attempts" not in o["detail"]
    assert [t["text"] for t in o["trajectory"]] == ["answer 1", "answer 2"]
    assert [t["user"] for t in o["trajectory"]][0] == "hello"
    assert server.count() == 3  # the refused turn was sent once


# ------------------------------------------------------------------ what the provider sends


def test_an_assistant_tool_call_without_text_is_sent_without_content_and_text_requests_are_unchanged(server):
    case = Case(id="t", shape="contract", turns=(Turn(user="where?"),), tools=({"name": "lookup"},))
    for stream in (False, True):
        server.reset()
        server.script(Reply.tool_calls([{"name": "lookup", "args": {"id": "A1"}}]), Reply.text("shipped"))
        provider = OpenAIProvider(model="m", base_url=server.url, stream=stream)
        asyncio.run(provider.complete(case))
        sent = server.requests[1].json["messages"][1]
        assert sent["role"] == "assistant" and "content" not in sent and sent["tool_calls"][0]["id"] == "call_0"
    for stream in (False, True):
        server.reset()
        server.script(Reply.tool_calls([{"name": "lookup", "args": {"id": "A1"}}]), Reply.text("shipped"))
        asyncio.run(OllamaProvider(model="m", host=server.url, stream=stream).complete(case))
        sent = server.requests[1].json["messages"][1]
        assert sent["role"] == "assistant" and sent["content"] == "" and sent["tool_calls"]
    from goldenkit.providers._openai import encode_messages
    from goldenkit.records import Message

    text_only = encode_messages([Message("system", "be brief"), Message("user", "hi"), Message("assistant", "")])
    assert json.dumps(text_only) == (
        '[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}, '
        '{"role": "assistant", "content": ""}]'
    )


class _APIError(Exception):
    """An SDK's base error class (the openai and google-genai SDKs name theirs APIError)."""


class AuthenticationError(_APIError):
    status_code = 401


class RateLimitError(_APIError):
    status_code = 429

    def __str__(self) -> str:
        return "Error code: 429 - {'error': {'code': 'insufficient_quota'}}"


class GenaiClientError(_APIError):
    def __init__(self, code: int) -> None:
        self.code = code
        super().__init__(f"{code} UNAUTHENTICATED")


def _caused() -> BaseException:
    try:
        try:
            raise ConnectionRefusedError("connect")
        except ConnectionRefusedError as inner:
            raise RuntimeError("tool lookup_order failed") from inner
    except RuntimeError as exc:
        return exc


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (AuthenticationError("bad key"), "infrastructure"),
        (RateLimitError(), "infrastructure"),
        (GenaiClientError(401), "infrastructure"),
        (GenaiClientError(503), "transient"),
        (__import__("http.client").client.IncompleteRead(b"partial"), "transient"),
        (ExceptionGroup("tasks", [ConnectionResetError("reset")]), "transient"),
        (_caused(), "transient"),
        (KeyError("order_id"), "agent"),
        (ExceptionGroup("tasks", [KeyError("order_id")]), "agent"),
    ],
    ids=["sdk-401", "sdk-quota", "genai-401", "genai-503", "cut-reply", "group", "raised-from", "own", "own-group"],
)
def test_an_outage_inside_an_agent_is_never_its_fault(exc: BaseException, kind: str) -> None:
    from goldenkit.providers._failures import exception_error

    assert exception_error(exc, "callable m:f raised").kind == kind


def test_a_proxy_page_that_mentions_a_content_filter_is_not_the_candidates_refusal() -> None:
    import httpx

    from goldenkit.providers._failures import classify_status

    page = b"<html><body>Blocked by web application firewall (content filter)</body></html>"
    got = classify_status(400, page, "http://gw/v1", httpx.Headers({"content-type": "text/html"}))
    assert got.kind == "infrastructure"
    own = b'{"error": {"message": "This request exceeds the model\'s maximum context length"}}'
    assert (
        classify_status(400, own, "http://m/v1", httpx.Headers({"content-type": "application/json"})).kind == "refused"
    )


class ApiError(Exception):  # Cohere's spelling
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code
        super().__init__(f"status {status_code}")


class SDKError(Exception):  # Mistral's
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code
        super().__init__("API error occurred")


class BotoClientError(Exception):
    def __init__(self, status: int) -> None:
        self.response = {"Error": {"Code": "ThrottlingException"}, "ResponseMetadata": {"HTTPStatusCode": status}}
        super().__init__("An error occurred (ThrottlingException)")


BotoClientError.__name__ = "ClientError"


class _Status:
    name = "UNAVAILABLE"


class AioRpcError(Exception):
    def code(self) -> _Status:
        return _Status()


class StrServerError(Exception):
    code = "503"


StrServerError.__name__ = "ServerError"


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ApiError(429), "transient"),
        (ApiError(401), "infrastructure"),
        (SDKError(503), "transient"),
        (BotoClientError(429), "transient"),
        (AioRpcError(), "transient"),
        (StrServerError(), "transient"),
    ],
    ids=["cohere-429", "cohere-401", "mistral-503", "botocore-429", "grpc-unavailable", "string-code"],
)
def test_other_sdks_outages_inside_an_agent_are_not_its_fault(exc: BaseException, kind: str) -> None:
    from goldenkit.providers._failures import exception_error

    assert exception_error(exc, "callable m:f raised").kind == kind
