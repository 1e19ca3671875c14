"""What goldenkit's HTTP layer adds on top of httpx + aiohttp, against real local servers.

The client is ``httpx.AsyncClient`` on httpx-aiohttp's transport; the protocol is
theirs. What is ours, tested here: header values checked before anything is sent,
redirect policy (307/308 followed, credentials dropped across origins, 301/302/303
to a POST refused), the reply-size cap, streamed replies put back together (same
text, tool calls and verdicts as unstreamed, plus ``ttft_ms``), TLS certificate
failures as permanent errors, and the ``goldenkit run`` flags. Proxies and CA
settings through a real forward proxy are in test_proxy_tls.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fakeserver import FakeModelServer, Reply
from testca import make_ca

from goldenkit.cli import main
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._client import check_header_value, make_client, ssl_context
from goldenkit.providers._ollama import OllamaProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.providers._streaming import OpenAIStream
from goldenkit.records import Case, Turn
from goldenkit.results import iter_jsonl

CASE = Case(id="q", shape="contract", turns=(Turn(user="question"),))


def complete(provider, case: Case = CASE):
    async def go():
        try:
            return await provider.complete(case)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def error_of(provider, case: Case = CASE) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        complete(provider, case)
    return info.value


@pytest.fixture
def server():
    with FakeModelServer() as srv:
        yield srv


# ---------------------------------------------------------------- header values


@pytest.mark.parametrize("bad", ["sk-abc\n", "sk-abc\r\nX-Evil: 1", "sk-\x01abc", "sk-\tabc", "sk-\x7fabc", "sk-é"])
def test_a_key_with_control_or_non_ascii_characters_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv("MY_KEY", bad)
    with pytest.raises(ConfigError) as info:
        OpenAIProvider(model="m", base_url="http://127.0.0.1:9", api_key_env="MY_KEY")
    msg = str(info.value)
    assert "MY_KEY" in msg and "sk-" not in msg and "\n" not in msg


def test_check_header_value_names_cr_and_lf():
    with pytest.raises(ConfigError, match="carriage return"):
        check_header_value("a\rb", "environment variable K")
    with pytest.raises(ConfigError, match="line feed"):
        check_header_value("a\nb", "environment variable K")
    assert check_header_value("Bearer sk-1", "K") == "Bearer sk-1"


def test_ollama_credentials_with_a_newline_are_refused(monkeypatch):
    monkeypatch.setenv("OLLAMA_USER", "me")
    monkeypatch.setenv("OLLAMA_PASSWORD", "pw\n")
    with pytest.raises(ConfigError, match="OLLAMA_USER or OLLAMA_PASSWORD"):
        OllamaProvider(model="m", host="http://127.0.0.1:9")


def write_dataset(root: Path, n: int = 2) -> Path:
    d = root / "ds"
    d.mkdir(parents=True)
    changelog = [{"version": "1.0.0", "date": "2026-01-01", "why": "t"}]
    (d / "dataset.json").write_text(json.dumps({"name": "t", "version": "1.0.0", "changelog": changelog}))
    rows = [
        {"id": f"r{i}", "slice": "s", "split": "dev", "case": {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}}}
        for i in range(n)
    ]
    (d / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def test_cli_refuses_a_key_with_crlf_before_any_request(tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("GK_TEST_KEY", "sk-secret-value\r\n")
    code = main(
        [
            "run",
            str(write_dataset(tmp_path)),
            "--provider",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--api-key-env",
            "GK_TEST_KEY",
            "--graders",
            "contract",
            "--results-dir",
            str(tmp_path / "res"),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "GK_TEST_KEY" in err and "carriage return" in err and "sk-secret-value" not in err
    assert server.count() == 0  # no request left the machine
    assert "Traceback" not in err


# ---------------------------------------------------------------- redirects


@pytest.mark.parametrize("code", [307, 308])
def test_307_308_are_followed_with_method_and_body(server, code):
    server.script(Reply.redirect(code, "/v1/chat/completions?moved=1"), Reply.text("after the move"))
    resp = complete(OpenAIProvider(model="m", base_url=server.url))
    assert resp.text == "after the move"
    assert server.count() == 2
    assert server.requests[1].json == server.requests[0].json  # same POST body


def test_a_redirect_to_another_origin_drops_the_key(monkeypatch):
    monkeypatch.setenv("GK_TEST_KEY", "sk-1")
    with FakeModelServer() as first, FakeModelServer() as second:
        first.script(Reply.redirect(307, second.url + "/v1/chat/completions"))
        resp = complete(OpenAIProvider(model="m", base_url=first.url, api_key_env="GK_TEST_KEY"))
        assert resp.text == "ok"
        assert first.requests[0].headers["authorization"] == "Bearer sk-1"
        assert "authorization" not in second.requests[0].headers


def test_a_redirect_within_the_origin_keeps_the_key(monkeypatch, server):
    monkeypatch.setenv("GK_TEST_KEY", "sk-1")
    server.api_key = "sk-1"
    server.script(Reply.redirect(308, "/chat/completions"))
    assert complete(OpenAIProvider(model="m", base_url=server.url, api_key_env="GK_TEST_KEY")).text == "ok"
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/chat/completions"]


def test_more_than_three_redirects_is_permanent(server):
    server.script(*[Reply.redirect(307, "/v1/chat/completions")] * 4)
    err = error_of(OpenAIProvider(model="m", base_url=server.url))
    assert not err.transient and "more than 3 redirects" in str(err)
    assert server.count() == 4


@pytest.mark.parametrize("code", [301, 302, 303])
def test_301_302_303_to_a_post_is_permanent_naming_the_location_without_secrets(server, code):
    server.script(Reply.redirect(code, "http://user:pw@elsewhere.example:8080/v2/chat?key=sk-123"))
    err = error_of(OpenAIProvider(model="m", base_url=server.url))
    msg = str(err)
    assert not err.transient and err.status == code
    assert "http://elsewhere.example:8080/v2/chat" in msg
    assert "pw" not in msg and "sk-123" not in msg and "user" not in msg
    assert server.count() == 1


# ---------------------------------------------------------------- reply size


def test_a_reply_over_max_reply_bytes_is_permanent(server):
    server.script(Reply.text("x" * 5000))
    err = error_of(OpenAIProvider(model="m", base_url=server.url, max_reply_bytes=1000))
    assert not err.transient and "max_reply_bytes" in str(err)


def test_a_streamed_reply_over_max_reply_bytes_is_permanent(server):
    server.script(Reply.text("x" * 5000))  # chunked, no Content-Length
    err = error_of(OpenAIProvider(model="m", base_url=server.url, stream=True, max_reply_bytes=1000))
    assert not err.transient and "max_reply_bytes" in str(err)


def test_a_reply_under_the_cap_is_read_whole(server):
    server.script(Reply.text("y" * 5000))
    assert complete(OpenAIProvider(model="m", base_url=server.url, max_reply_bytes=100_000)).text == "y" * 5000


def test_max_reply_bytes_must_be_positive():
    with pytest.raises(ConfigError, match="max_reply_bytes"):
        OpenAIProvider(model="m", base_url="http://127.0.0.1:9", max_reply_bytes=0)


# ---------------------------------------------------------------- streaming


TOOL_CASE = Case(
    id="t",
    shape="contract",
    turns=(Turn(user="weather?"),),
    tools=({"name": "get_weather", "parameters": {"type": "object"}},),
)


@pytest.mark.parametrize("make", [OpenAIProvider, OllamaProvider], ids=["openai", "ollama"])
def test_streamed_and_unstreamed_replies_are_identical(server, make):
    kw = {"base_url": server.url} if make is OpenAIProvider else {"host": server.url}
    replies = [Reply.text("the answer is forty-two, in full", tokens_in=7, tokens_out=9)] * 2
    server.script(*replies)
    plain = complete(make(model="m", **kw))
    streamed = complete(make(model="m", stream=True, **kw))
    assert server.requests[0].json["stream"] is False and server.requests[1].json["stream"] is True
    assert streamed.text == plain.text == "the answer is forty-two, in full"
    assert (streamed.tokens_in, streamed.tokens_out) == (plain.tokens_in, plain.tokens_out) == (7, 9)
    assert plain.ttft_ms is None and streamed.ttft_ms is not None and streamed.ttft_ms > 0


@pytest.mark.parametrize("make", [OpenAIProvider, OllamaProvider], ids=["openai", "ollama"])
def test_streamed_tool_calls_are_put_back_together(server, make):
    kw = {"base_url": server.url} if make is OpenAIProvider else {"host": server.url}
    call = [{"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}}]
    server.script(Reply.tool_calls(call), Reply.text("sunny"), Reply.tool_calls(call), Reply.text("sunny"))
    plain = complete(make(model="m", **kw), TOOL_CASE)
    streamed = complete(make(model="m", stream=True, **kw), TOOL_CASE)
    assert streamed.trajectory() == plain.trajectory()
    assert streamed.tool_calls[0][0].args == {"city": "Paris", "unit": "celsius"}


def test_an_error_event_in_a_stream_is_a_permanent_error_reply():
    s = OpenAIStream("http://h/v1/chat/completions")
    assert not s.feed(b'data: {"error": {"message": "model overloaded"}}')
    assert s.result() == {"error": {"message": "model overloaded"}}


def test_a_stream_chunk_that_is_not_json_is_malformed():
    with pytest.raises(ProviderError, match="streamed chunk is not JSON"):
        OpenAIStream("http://h").feed(b"data: {not json")


def test_streamed_http_errors_are_classified_as_unstreamed(server):
    server.script(Reply.status(429, retry_after=2), Reply.status(401))
    err = error_of(OpenAIProvider(model="m", base_url=server.url, stream=True))
    assert err.transient and err.status == 429 and err.retry_after == 2
    err = error_of(OpenAIProvider(model="m", base_url=server.url, stream=True))
    assert not err.transient and err.status == 401


def test_run_stream_records_ttft_beside_latency(tmp_path, server):
    code = main(
        [
            "run",
            str(write_dataset(tmp_path)),
            "--provider",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--graders",
            "contract",
            "--results-dir",
            str(tmp_path / "res"),
            "--run-id",
            "s",
            "--stream",
            "--quiet",
        ]
    )
    assert code == 0
    recs = list(iter_jsonl(tmp_path / "res" / "s" / "outcomes.jsonl"))
    assert len(recs) == 2 and all(r["ttft_ms"] is not None and r["ttft_ms"] <= r["latency_ms"] for r in recs)
    assert all(r.json["stream"] is True for r in server.requests)


def test_run_stream_from_goldenkit_toml(tmp_path, server):
    ds = write_dataset(tmp_path)
    (ds / "goldenkit.toml").write_text("[run]\nstream = true\nmax_reply_bytes = 100000\nno_proxy = true\n")
    code = main(
        [
            "run",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "m",
            "--graders",
            "contract",
            "--results-dir",
            str(tmp_path / "res"),
            "--quiet",
            "--config",  # no_proxy says where requests go: the user's own file, named
            str(ds / "goldenkit.toml"),
        ]
    )
    assert code == 0 and all(r.json["stream"] is True for r in server.requests)


def test_a_non_bool_stream_in_goldenkit_toml_is_a_config_error(tmp_path, capsys):
    ds = write_dataset(tmp_path)
    (ds / "goldenkit.toml").write_text('[run]\nstream = "yes"\n')
    code = main(["run", str(ds), "--provider", "openai", "--model", "m", "--graders", "contract", "--quiet"])
    assert code == 1 and "stream" in capsys.readouterr().err


# ---------------------------------------------------------------- TLS


def test_https_with_the_ca_given_as_ca_bundle(tmp_path):
    ca = make_ca(tmp_path, "good")
    with FakeModelServer(tls=ca.server_context()) as srv:
        resp = complete(OpenAIProvider(model="m", base_url=srv.url, ca_bundle=str(ca.ca_pem)))
        assert resp.text == "ok" and srv.url.startswith("https://")


def test_an_untrusted_certificate_is_a_permanent_error_naming_the_problem(tmp_path):
    ca, other = make_ca(tmp_path, "good"), make_ca(tmp_path, "other")
    with FakeModelServer(tls=ca.server_context()) as srv:
        err = error_of(OpenAIProvider(model="m", base_url=srv.url, ca_bundle=str(other.ca_pem)))
        assert not err.transient
        assert "TLS certificate verification failed" in str(err) and "issuer" in str(err)
        assert srv.count() == 0


def test_an_unreadable_ca_bundle_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot load CA certificates"):
        OpenAIProvider(model="m", base_url="https://127.0.0.1:9", ca_bundle=str(tmp_path / "missing.pem"))
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(ConfigError, match="junk.pem"):
        ssl_context(tmp_path / "junk.pem")


def test_ssl_cert_file_is_honoured(tmp_path, monkeypatch):
    ca = make_ca(tmp_path, "env")
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_pem))
    with FakeModelServer(tls=ca.server_context()) as srv:
        assert complete(OpenAIProvider(model="m", base_url=srv.url)).text == "ok"


def test_cli_ca_bundle_that_does_not_exist_exits_1(tmp_path, capsys):
    code = main(
        [
            "run",
            str(write_dataset(tmp_path)),
            "--provider",
            "openai",
            "--base-url",
            "https://127.0.0.1:9",
            "--model",
            "m",
            "--graders",
            "contract",
            "--ca-bundle",
            str(tmp_path / "nope.pem"),
            "--quiet",
        ]
    )
    assert code == 1 and "nope.pem" in capsys.readouterr().err


# ---------------------------------------------------------------- the client


def test_one_client_per_event_loop_and_closed_after(server):
    prov = OpenAIProvider(model="m", base_url=server.url)
    for _ in range(2):  # a provider reused by a later asyncio.run gets a fresh client
        assert complete(prov).text == "ok"
    assert server.count() == 2


def test_make_client_is_a_plain_httpx_async_client():
    import httpx

    async def go():
        client = make_client(max_connections=4, timeout=5)
        try:
            assert isinstance(client, httpx.AsyncClient) and not client.follow_redirects
        finally:
            await client.aclose()

    asyncio.run(go())


# ---------------------------------------------------------------- reports


def test_the_run_report_shows_ttft_only_where_it_was_recorded():
    import pandas as pd

    from goldenkit import report

    df = pd.DataFrame(
        {
            "row_id": ["a", "b", "c", "d"],
            "slice": ["s", "s", "s", "t"],
            "verdict": ["PASS", "FAIL", "PASS", "ERROR"],
            "latency_ms": [100.0, 200.0, 300.0, None],
            "tokens_in": [1, 1, 1, None],
            "tokens_out": [1, 1, 1, None],
            "cost": [None] * 4,
            "ttft_ms": [10.0, 20.0, 40.0, None],
        }
    )
    t = report.latency_summary(df)
    assert t.loc["s", "ttft p50 ms"] == 20.0  # of the answered outcomes: 10, 20, 40
    assert "ttft p50 ms" not in report.latency_summary(df.assign(ttft_ms=None)).columns
    assert "ttft p50 ms" not in report.latency_summary(df.drop(columns="ttft_ms")).columns  # runs from before


def test_the_runs_ca_bundle_also_applies_to_the_judge(tmp_path):
    ca = make_ca(tmp_path / "ca", "judge")
    ds = write_dataset(tmp_path)
    (tmp_path / "rubric.md").write_text("Accept any answer.\n")
    with FakeModelServer() as model, FakeModelServer(tls=ca.server_context()) as judge:
        judge.default = Reply.text('{"decision": "ACCEPT", "reason": "fine"}')
        (ds / "goldenkit.toml").write_text(
            f'[graders]\nuse = ["judge"]\n[judge]\nprovider = "openai"\nmodel = "judge-m"\n'
            f'rubric = "{tmp_path / "rubric.md"}"\n[judge.options]\nbase_url = "{judge.url}"\n'
        )
        args = [
            "run",
            str(ds),
            "--provider",
            "openai",
            "--base-url",
            model.url,
            "--model",
            "m",
            "--results-dir",
            str(tmp_path / "res"),
            "--quiet",
            "--max-retries",
            "0",
            "--config",  # it names the judge's URL: the user's own file, named
            str(ds / "goldenkit.toml"),
        ]
        main([*args, "--run-id", "without"])  # the judge's certificate is not trusted: no judge call lands
        assert judge.count() == 0
        # an uncalibrated judge is soft: its grades are recorded, no row is PASS or FAIL, so the run exits 2
        assert main([*args, "--run-id", "with", "--ca-bundle", str(ca.ca_pem)]) == 2
        assert judge.count() == 2
    graded = list(iter_jsonl(tmp_path / "res" / "with" / "outcomes.jsonl"))
    assert not any("TLS" in json.dumps(r["graders"]) for r in graded)
    without = list(iter_jsonl(tmp_path / "res" / "without" / "outcomes.jsonl"))
    assert all("TLS certificate verification failed" in json.dumps(r["graders"]) for r in without), without[0]


def _stream_of(deltas: list[dict]) -> dict:
    s = OpenAIStream("http://h/v1/chat/completions")
    for delta in deltas:
        chunk = {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        s.feed(b"data: " + json.dumps(chunk).encode())
    s.feed(b'data: {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}')
    s.feed(b"data: [DONE]")
    return s.result()["choices"][0]["message"]["tool_calls"]


def test_a_streamed_tool_call_is_the_same_whether_the_server_repeats_its_name_or_sends_it_once():
    """llama.cpp's server repeats id, type and function.name in every delta; OpenAI sends them once."""
    pieces = ['{"order', '_id": ', '"A-1"}']
    head = {"index": 0, "id": "call_1", "type": "function"}
    once = [{"tool_calls": [{**head, "function": {"name": "lookup_order", "arguments": ""}}]}] + [
        {"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces
    ]
    repeated = [{"tool_calls": [{**head, "function": {"name": "lookup_order", "arguments": p}}]} for p in pieces]
    expected = [
        {"id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "A-1"}'}}
    ]
    assert _stream_of(once) == _stream_of(repeated) == expected
    # two calls, interleaved by index, each keeps its own name
    two = [
        {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]},
        {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{"}}]},
        {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "}"}}]},
    ]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in _stream_of(two)] == [
        ("a", "f", "{}"),
        ("b", "g", "{}"),
    ]


CONTEXT_OVERFLOW = json.dumps(
    {
        "error": {
            "message": "This model's maximum context length is 2048 tokens. However, you requested 12024 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    }
)


def test_a_stream_that_ends_before_its_first_chunk_asks_once_more_unstreamed(server):
    """llama.cpp's server answers a streamed prompt over its context with 200 and nothing: the same request
    unstreamed gets the server's own reason, a context length, which is the candidate's refused request."""
    server.script(Reply.page(200, body="", content_type="text/event-stream"), Reply.status(400, body=CONTEXT_OVERFLOW))
    err = error_of(OpenAIProvider(model="m", base_url=server.url, stream=True))
    assert err.kind == "refused" and "context length" in str(err)
    assert [r.json["stream"] for r in server.requests] == [True, False]
    # a server that answers the unstreamed request: its answer is graded, in the same attempt
    server.script(Reply.page(200, body="", content_type="text/event-stream"), Reply.text("the answer"))
    assert complete(OpenAIProvider(model="m", base_url=server.url, stream=True)).text == "the answer"
    # a stream cut after its first chunk stays an outage (never asked again, never graded)
    before = len(server.requests)
    server.script(Reply.text("half an answer", cut=True))
    assert error_of(OpenAIProvider(model="m", base_url=server.url, stream=True)).kind == "infrastructure"
    assert len(server.requests) == before + 1
