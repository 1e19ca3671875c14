"""The JSON POST that skips httpx's client layer (goldenkit.providers._client.fast_route) keeps the
client's configuration and the rules of the httpx path: cookies a reply sets, headers and query
parameters changed on the client, a compressed reply capped as it is decoded, a reply that cannot be
decoded, a CA bundle replaced on disk.

The server is a few lines of asyncio on 127.0.0.1 that records each request's head and answers by
path, so each test sees exactly what was sent and controls exactly what comes back.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from testca import make_ca

from goldenkit.errors import ProviderError
from goldenkit.providers._client import fast_route, make_client, ssl_context
from goldenkit.providers._http import call_target, post_json

JSON = "Content-Type: application/json"


def _reply(status: int, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status} X", *headers, f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


REPLIES = {
    "/ok": _reply(200, b'{"a": 1}', JSON),
    "/cookie": _reply(200, b'{"a": 1}', JSON, "Set-Cookie: sid=abc; Path=/"),
    "/cookie-401": _reply(401, b'{"error": "no"}', JSON, "Set-Cookie: sid=abc; Path=/"),
    "/gzip": _reply(200, gzip.compress(b'{"a": 2}'), JSON, "Content-Encoding: gzip"),
    "/badgzip": _reply(200, b"not gzip at all", JSON, "Content-Encoding: gzip"),
}


def _answer(path: str) -> bytes:
    if path != "/bomb":
        return REPLIES[path]
    pack = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)  # gzip
    zeros = bytes(1 << 20)
    body = b"".join(pack.compress(zeros) for _ in range(256)) + pack.flush()  # 256 MiB decoded, 256 KiB sent
    return _reply(200, body, JSON, "Content-Encoding: gzip")


class Server:
    """Answers each POST by its path (``REPLIES``, ``/echo``: the request's headers as JSON)."""

    def __init__(self) -> None:
        self.heads: list[tuple[str, dict[str, str]]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                lines = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
                target = lines[0].split()[1]
                head = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                await reader.readexactly(int(head.get("content-length", 0)))
                self.heads.append((target, head))
                path = target.split("?", 1)[0]
                out = _reply(200, json.dumps(head).encode(), JSON) if path == "/echo" else _answer(path)
                writer.write(out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def serve(test: Callable[[Any, str, Server], Awaitable[None]], **client: Any) -> None:
    async def go() -> None:
        server = Server()
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        base = f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"
        http = make_client(timeout=10.0, **client)
        try:
            assert fast_route(http, call_target(base)[0]) is not None  # the shortcut is what is under test
            await test(http, base, server)
        finally:
            await http.aclose()
            listening.close()

    asyncio.run(go())


@pytest.mark.parametrize("path", ["/cookie", "/cookie-401"])
def test_a_cookie_a_reply_sets_is_kept_and_sent_with_the_next_call_as_httpx_does(path):
    async def test(http, base, server):
        with pytest.raises(ProviderError) if path.endswith("401") else _nothing():
            await post_json(http, base + path, {})
        assert dict(http.cookies) == {"sid": "abc"}
        echoed = await post_json(http, base + "/echo", {})
        assert echoed.get("cookie") == "sid=abc"

    serve(test)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_header_changed_in_place_on_the_client_is_sent_from_then_on():
    async def test(http, base, server):
        assert (await post_json(http, base + "/echo", {}))["x-team"] == "a"
        http.headers["x-team"] = "b"
        http.headers["x-more"] = "c"
        echoed = await post_json(http, base + "/echo", {})
        assert (echoed["x-team"], echoed["x-more"]) == ("b", "c")
        del http.headers["x-more"]
        assert "x-more" not in await post_json(http, base + "/echo", {})

    serve(test, headers={"x-team": "a"})


def test_query_parameters_set_on_the_client_are_sent_as_httpx_sends_them():
    async def test(http, base, server):
        http.params = {"api-version": "2024-06-01"}
        await post_json(http, base + "/echo", {})
        assert server.heads[-1][0] == "/echo?api-version=2024-06-01"

    serve(test)


def test_a_compressed_reply_is_capped_as_it_is_decoded_never_inflated_whole():
    async def test(http, base, server):
        assert await post_json(http, base + "/gzip", {}) == {"a": 2}
        tracemalloc.start()
        try:
            with pytest.raises(ProviderError, match="larger than max_reply_bytes") as err:
                await post_json(http, base + "/bomb", {}, max_reply_bytes=1 << 20)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert err.value.kind == "infrastructure"
        # httpx's decoder inflates each chunk read (16 KiB, up to ~16 MiB of zeros) before the cap sees it,
        # the same through httpx; inflating the whole body first held all 256 MiB
        assert peak < 96 * (1 << 20), f"{peak:,} bytes held for a 1 MiB cap"

    serve(test)


@pytest.mark.parametrize("shortcut", [True, False])
def test_a_reply_that_cannot_be_decoded_is_an_infrastructure_error_naming_the_url(shortcut):
    async def test(http, base, server):
        if not shortcut:
            http.cookies.set("any", "1")  # a jar with a cookie takes the httpx path
            assert fast_route(http, call_target(base)[0]) is None
        with pytest.raises(ProviderError) as err:
            await post_json(http, base + "/badgzip?key=secret", {})
        assert err.value.kind == "infrastructure"
        assert str(err.value).startswith(f"reply from {base}/badgzip cannot be decoded (gzip)")
        assert "secret" not in str(err.value)

    serve(test)


def test_a_ca_bundle_replaced_by_one_of_the_same_size_and_time_is_loaded_again(tmp_path: Path):
    one, two = make_ca(tmp_path / "one", "one"), make_ca(tmp_path / "two", "two")
    first, second = one.ca_pem.read_bytes(), two.ca_pem.read_bytes()
    size = max(len(first), len(second))
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(first.ljust(size, b"\n"))  # text outside a PEM block is ignored
    stamp = bundle.stat().st_mtime_ns
    names = [c["subject"] for c in ssl_context(bundle).get_ca_certs()]
    assert names == [((("commonName", "goldenkit one CA"),),)]
    bundle.write_bytes(second.ljust(size, b"\n"))  # in place, as an editor or `cp` would
    os.utime(bundle, ns=(stamp, stamp))
    assert bundle.stat().st_size == size and bundle.stat().st_mtime_ns == stamp
    names = [c["subject"] for c in ssl_context(bundle).get_ca_certs()]
    assert names == [((("commonName", "goldenkit two CA"),),)]
