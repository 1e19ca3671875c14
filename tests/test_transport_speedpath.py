"""The hot path's shortcuts keep what they replace: goldenkit's transport under httpx.AsyncClient (headers,
errors, the pooled-connection signal), the cookie jar that reads only replies that set a cookie, and the
heap frozen while a run runs. Their speed is measured by benchmarks/bench_runner.py, not here."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from fakeserver import FakeModelServer

from goldenkit.errors import ProviderError
from goldenkit.providers._client import _client_class, fast_route, make_client, watch_reuse
from goldenkit.providers._http import post_json
from goldenkit.runner._calls import frozen_heap

BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false}'


def post_twice(url: str, **headers: str) -> list[tuple[int, bool]]:
    """Two POSTs on one client: (status, whether it went out on a pooled connection) each."""

    async def go() -> list[tuple[int, bool]]:
        client = make_client(max_connections=1, timeout=5, headers=headers)
        out = []
        try:
            for _ in range(2):
                reused, token = watch_reuse()
                try:
                    resp = await client.post(url, content=BODY)
                finally:
                    token.var.reset(token)
                out.append((resp.status_code, bool(reused)))
        finally:
            await client.aclose()
        return out

    return asyncio.run(go())


def test_the_clients_headers_and_body_reach_the_server_and_a_pooled_connection_is_told():
    with FakeModelServer(api_key="k3y") as srv:
        sent = post_twice(srv.url + "/v1/chat/completions", authorization="Bearer k3y")
        first = srv.requests[0]
    assert sent == [(200, False), (200, True)]  # the second request went out on the first's connection
    headers = {k.lower(): v for k, v in first.headers.items()}
    assert headers["authorization"] == "Bearer k3y"
    assert headers["content-type"] == "application/json" and headers["accept"] == "application/json"
    assert first.json["messages"][0]["content"] == "hi"


def test_a_refused_connection_is_an_httpx_transport_error_caused_by_aiohttps():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again before the request: nothing listens there

    async def go() -> None:
        client = make_client(timeout=5)
        try:
            await client.post(f"http://127.0.0.1:{port}/v1/chat/completions", content=BODY)
        finally:
            await client.aclose()

    with pytest.raises(httpx.TransportError) as info:  # mapped as httpx-aiohttp maps it (a ConnectTimeout)
        asyncio.run(go())
    assert type(info.value.__cause__).__name__ == "ClientConnectorError"
    assert f"127.0.0.1:{port}" in str(info.value)


def test_a_cookie_a_reply_sets_is_sent_back_and_a_reply_without_one_changes_nothing():
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("cookie"))
        headers = {"set-cookie": "lb=node7; Path=/"} if len(seen) == 1 else {}
        return httpx.Response(200, headers=headers, json={"ok": True})

    async def go() -> None:
        async with _client_class()(transport=httpx.MockTransport(handler)) as client:
            for _ in range(3):
                await client.post("http://model.test/v1/chat/completions", content=BODY)
            assert dict(client.cookies) == {"lb": "node7"}

    asyncio.run(go())
    assert seen == [None, "lb=node7", "lb=node7"]


def test_the_heap_is_frozen_while_a_run_runs_and_given_back_after():
    assert gc.get_freeze_count() == 0
    with frozen_heap():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
    with pytest.raises(KeyError), frozen_heap():  # given back when the run fails too
        raise KeyError("x")
    assert gc.get_freeze_count() == 0


def test_a_heap_the_program_froze_is_left_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither frozen again nor given back: the program's own freeze stays (counted by the calls made, as the
    freeze count itself drops whenever another thread frees a frozen object)."""
    calls: list[str] = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 1000)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze"))
    with frozen_heap():
        pass
    assert calls == []
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 0)
    with frozen_heap():
        assert calls == ["freeze"]
    assert calls == ["freeze", "unfreeze"]


class _Gzipped(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    reply = b""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(self.reply)))
        self.end_headers()
        self.wfile.write(self.reply)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def post_to_gzipping_server(answer: dict, **limits: int) -> dict:
    _Gzipped.reply = gzip.compress(json.dumps(answer).encode())
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Gzipped)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1/chat/completions"

    async def go() -> dict:
        client = make_client(timeout=5)
        try:
            assert fast_route(client, httpx.URL(url)) is not None  # the shortcut beneath httpx is taken
            return await post_json(client, url, {"model": "m"}, deadline=5, **limits)
        finally:
            await client.aclose()

    try:
        return asyncio.run(go())
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_compressed_reply_is_decoded_and_its_decoded_size_capped():
    answer = {"choices": [{"message": {"content": "ok " * 2000}}]}
    assert post_to_gzipping_server(answer) == answer
    with pytest.raises(ProviderError, match="larger than max_reply_bytes"):
        post_to_gzipping_server(answer, max_reply_bytes=1000)  # 6 KB decoded from about 100 bytes sent


def test_a_client_with_cookies_auth_or_a_transport_of_its_own_goes_through_httpx():
    url = httpx.URL("http://model.test/v1/chat/completions")

    async def go() -> list[bool]:
        plain = make_client(timeout=5)
        with_cookie = make_client(timeout=5)
        with_cookie.cookies.set("lb", "node7")
        with_auth = make_client(timeout=5)
        with_auth.auth = ("u", "p")
        mocked = _client_class()(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
        clients = [plain, with_cookie, with_auth, mocked]
        try:
            return [fast_route(c, url) is not None for c in clients]
        finally:
            for c in clients:
                await c.aclose()

    assert asyncio.run(go()) == [True, False, False, False]


def test_the_shortcut_sends_the_clients_current_headers_and_timeouts():
    url = httpx.URL("http://model.test/v1/chat/completions")

    async def go() -> list[tuple[dict, float | None]]:
        client = make_client(timeout=5, headers={"authorization": "Bearer a"})
        seen = []
        try:
            for _ in range(2):
                _, headers, timeout = fast_route(client, url)
                seen.append((dict(headers), timeout["read"]))
                client.headers = {**client.headers, "authorization": "Bearer b"}
                client.timeout = httpx.Timeout(1.5)
        finally:
            await client.aclose()
        return seen

    (first, t1), (second, t2) = asyncio.run(go())
    assert (first["authorization"], t1) == ("Bearer a", 5)
    assert (second["authorization"], t2) == ("Bearer b", 1.5)
    assert first["content-type"] == second["content-type"] == "application/json"
