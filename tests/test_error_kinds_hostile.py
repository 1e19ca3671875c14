"""Classifying an error never breaks the run, and an outage is an outage whatever raised it.

Real network libraries an agent may use (requests, urllib3, websockets, grpc, google-genai's status
errors) fail against real local sockets: a closed port, a server that accepts and never answers, a
server that cuts the reply, a WebSocket server that drops the connection, a gateway's 503 page. The
exceptions they raise inside an agent are ``transient`` or ``infrastructure``, never ``agent``, also
when the agent wraps them (``raise ... from``). The classifier never raises: not while a module is
half imported in another thread, not on an exception whose attributes raise when read.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
import requests
import urllib3
import websockets.sync.client
import websockets.sync.server
from factories import row, write_dataset
from google.genai import errors as genai_errors

from goldenkit.cli import main
from goldenkit.errors import ProviderError
from goldenkit.providers import _failures
from goldenkit.providers._failures import exception_error

OUTAGES = ("transient", "infrastructure")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def tcp_server(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on a free port whose connections ``handle`` serves (each on its own thread)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield int(srv.getsockname()[1])
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


def silent(conn: socket.socket) -> None:
    """Accept and never answer."""
    conn.recv(65536)


def cut(conn: socket.socket) -> None:
    """Start an HTTP reply and close the connection in the middle of its body."""
    conn.recv(65536)
    conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: application/json\r\n\r\n{"par')
    conn.close()


def status_page(code: int) -> Callable[[socket.socket], None]:
    def handle(conn: socket.socket) -> None:
        conn.recv(65536)
        body = b"<html><body>upstream unavailable</body></html>"
        head = f"HTTP/1.1 {code} Oops\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
        conn.sendall(head.encode() + body)
        conn.close()

    return handle


@contextmanager
def ws_dropping() -> Iterator[str]:
    """A real WebSocket server that drops each connection after the handshake (close code 1011)."""

    def handler(ws: websockets.sync.server.ServerConnection) -> None:
        ws.close(1011, "the upstream model went away")

    with websockets.sync.server.serve(handler, "127.0.0.1", 0) as server:
        t = threading.Thread(target=server.serve_forever, daemon=True)
        t.start()
        yield f"ws://127.0.0.1:{server.socket.getsockname()[1]}"
        server.shutdown()


def raised(fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001 - the failure under test
        return exc
    raise AssertionError("the call did not fail")


def failures() -> Iterator[tuple[str, BaseException]]:
    """(what, the real exception a real library raised) for each kind of outage."""
    port = closed_port()
    yield "requests, connection refused", raised(lambda: requests.get(f"http://127.0.0.1:{port}/", timeout=2))
    pool = urllib3.PoolManager(retries=False)
    yield "urllib3, connection refused", raised(lambda: pool.request("GET", f"http://127.0.0.1:{port}/"))
    yield (
        "urllib3, retries spent",
        raised(
            lambda: urllib3.PoolManager(retries=urllib3.Retry(1, backoff_factor=0)).request(
                "GET", f"http://127.0.0.1:{port}/"
            )
        ),
    )
    with tcp_server(silent) as p:
        yield "requests, read timeout", raised(lambda: requests.get(f"http://127.0.0.1:{p}/", timeout=0.3))
        yield "urllib3, read timeout", raised(lambda: pool.request("GET", f"http://127.0.0.1:{p}/", timeout=0.3))
    with tcp_server(cut) as p:
        yield "requests, reply cut", raised(lambda: requests.get(f"http://127.0.0.1:{p}/", timeout=2).json())
        yield "urllib3, reply cut", raised(lambda: pool.request("GET", f"http://127.0.0.1:{p}/", timeout=2))
    with tcp_server(status_page(503)) as p:
        yield "websockets, gateway 503", raised(lambda: websockets.sync.client.connect(f"ws://127.0.0.1:{p}/"))
    with tcp_server(status_page(401)) as p:
        yield "websockets, gateway 401", raised(lambda: websockets.sync.client.connect(f"ws://127.0.0.1:{p}/"))
    with ws_dropping() as url:

        def talk() -> None:
            with websockets.sync.client.connect(url, open_timeout=2) as ws:
                ws.recv(timeout=2)

        yield "websockets, connection dropped", raised(talk)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield "grpc, unavailable", raised(lambda: channel.unary_unary("/golden.Model/Answer")(b"", timeout=2))
    channel.close()
    overloaded = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    yield "google-genai, 503", genai_errors.ServerError(503, overloaded)


FAILURES = list(failures())


@pytest.mark.parametrize(("what", "exc"), FAILURES, ids=[w for w, _ in FAILURES])
def test_an_outage_raised_inside_an_agent_is_never_the_agents(what, exc):
    err = exception_error(exc, "callable agent:answer raised")
    assert err.kind in OUTAGES, (what, type(exc).__mro__, err)
    try:
        raise RuntimeError("the tool call failed") from exc  # an agent that wraps what its library raised
    except RuntimeError as wrapped:
        assert exception_error(wrapped, "callable agent:answer raised").kind == err.kind
    group = ExceptionGroup("the agent's tasks", [ValueError("parsed nothing"), exc])
    assert exception_error(group, "callable agent:answer raised").kind == err.kind


def test_the_kind_follows_the_status_an_outage_carries():
    kinds = {what: exception_error(exc, "w").kind for what, exc in FAILURES}
    assert kinds["websockets, gateway 503"] == "transient" and kinds["websockets, gateway 401"] == "infrastructure"
    assert kinds["google-genai, 503"] == "transient" and kinds["grpc, unavailable"] == "transient"


def test_the_agents_own_errors_stay_the_agents():
    for exc in (KeyError("order_id"), ValueError("bad date"), ZeroDivisionError(), AssertionError("tool")):
        assert exception_error(exc, "w").kind == "agent"


def test_a_half_imported_http_client_in_sys_modules_never_breaks_the_classifier(monkeypatch):
    # what another thread's `import httpx` (or aiohttp, requests) looks like halfway: a module without its names
    for name in ("httpx", "aiohttp", "requests", "urllib3", "grpc", "websockets"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    assert exception_error(KeyError("x"), "w").kind == "agent"
    assert exception_error(TimeoutError("read timed out"), "w").kind == "transient"
    for what, exc in FAILURES:
        assert exception_error(exc, "w").kind in OUTAGES, what


class Hostile(Exception):  # noqa: N818 - an agent's exception as written
    """An exception every attribute and the text of which raise when read."""

    def __str__(self) -> str:
        raise RuntimeError("no text")

    def __getattribute__(self, name: str) -> object:
        if name in ("status_code", "status", "code", "response", "exceptions"):
            raise RuntimeError(f"{name} is a property that fails")
        return super().__getattribute__(name)


class HostileStatusError(Hostile):
    """Named like an SDK's status error, with a status that raises when read."""


def test_an_exception_whose_attributes_raise_is_classified_not_raised():
    assert exception_error(Hostile(), "w").kind == "agent"
    assert exception_error(HostileStatusError(), "w").kind == "agent"
    assert "Hostile" in str(exception_error(Hostile(), "callable a:b raised"))


def test_a_classifier_bug_gives_a_safe_kind_never_an_exception(monkeypatch):
    def broken(exc: BaseException) -> ProviderError | None:
        raise AttributeError("module 'httpx' has no attribute 'TransportError'")

    monkeypatch.setattr(_failures, "_outage", broken)
    err = exception_error(KeyError("x"), "callable a:b raised")
    assert isinstance(err, ProviderError) and err.kind == "infrastructure"
    assert "its kind could not be told (AttributeError)" in str(err)


# ---------------------------------------------------------------------------- through the CLI
AGENT = """
import json, os

def answer(case):
    kind = case.id.split("-")[0]
    if kind == "ok":
        return "Order A-1 ships today."
    if kind == "keyerror":
        return {}["order_id"]
    port = int(os.environ["GK_CLOSED_PORT"])
    silent = int(os.environ["GK_SILENT_PORT"])
    if kind == "requests":
        import requests  # imported lazily, while other rows fail on other threads
        return requests.get(f"http://127.0.0.1:{port}/", timeout=2).text
    if kind == "urllib3":
        import urllib3
        return urllib3.PoolManager(retries=False).request("GET", f"http://127.0.0.1:{silent}/", timeout=0.3).data
    if kind == "websockets":
        import websockets.sync.client
        with websockets.sync.client.connect(f"ws://127.0.0.1:{port}/", open_timeout=2) as ws:
            return ws.recv()
    if kind == "grpc":
        import grpc
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            return channel.unary_unary("/golden.Model/Answer")(b"", timeout=2)
    raise AssertionError(kind)
"""
KINDS = {
    "ok": None,
    "keyerror": "agent",
    "requests": OUTAGES,
    "urllib3": OUTAGES,
    "websockets": OUTAGES,
    "grpc": OUTAGES,
}


def test_an_agent_importing_its_client_lazily_while_rows_fail_gets_outages_not_agent_errors(
    tmp_path: Path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net_agent.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    case = {"prompt": "where is A-1?", "expect": {"must_contain": ["A-1"]}}
    rows = [row(f"{k}-{i}", case, slice=k) for k in KINDS for i in range(3)]
    ds = write_dataset(tmp_path, rows, version="1")
    monkeypatch.setenv("GK_CLOSED_PORT", str(closed_port()))
    with tcp_server(silent) as p:
        monkeypatch.setenv("GK_SILENT_PORT", str(p))
        argv = ["run", str(ds), "--provider", "callable", "--callable", "net_agent:answer", "--run-id", "r"]
        code = main([*argv, "--max-retries", "0", "--max-in-flight", "8", "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and code != 0
    outcomes = [json.loads(line) for line in (tmp_path / "results" / "r" / "outcomes.jsonl").read_text().splitlines()]
    assert len(outcomes) == len(rows)
    for o in outcomes:
        want = KINDS[o["row_id"].split("-")[0]]
        if want is None:
            assert o["verdict"] == "PASS", o
        elif want == "agent":
            assert (o["verdict"], o["error_kind"]) == ("ERROR", "agent"), o
        else:
            assert o["verdict"] == "ERROR" and o["error_kind"] in want, (o["row_id"], o["error_kind"], o["detail"])


def test_a_dropped_connection_is_told_while_aiohttp_is_half_imported(monkeypatch):
    import aiohttp

    from goldenkit.providers._http import _closed_by_peer

    dropped, refused = (
        aiohttp.ServerDisconnectedError(),
        aiohttp.ClientConnectorError.__new__(aiohttp.ClientConnectorError),
    )
    monkeypatch.setitem(sys.modules, "aiohttp", types.ModuleType("aiohttp"))  # another thread's import, halfway
    assert _closed_by_peer(dropped) is True and _closed_by_peer(refused) is False
    assert _closed_by_peer(KeyError("x")) is False
