"""The hot path's shortcuts keep what they replace: goldenkit's transport under httpx.AsyncClient (headers,
errors, the pooled-connection signal), the cookie jar that reads only replies that set a cookie, and the
heap frozen while a run runs. Their speed is measured by benchmarks/bench_runner.py, not here."""

from __future__ import annotations

import asyncio
import gc
import socket

import httpx
import pytest
from fakeserver import FakeModelServer

from goldenkit.providers._client import _client_class, make_client, watch_reuse
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


def test_a_heap_the_program_froze_is_left_frozen():
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with frozen_heap():
            pass
        assert gc.get_freeze_count() == before
    finally:
        gc.unfreeze()
