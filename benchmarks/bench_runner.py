"""Runner throughput and overhead, side by side in one run (issues 3 and 14).

Three comparisons, every figure measured in this run:

1. **Instant server**, 5,000 calls, 64 in flight: client CPU per call and calls/s of
   bare loops (``httpx.AsyncClient`` on httpx's own transport with its pool sized to
   the in-flight limit, aiohttp, and ``httpx.AsyncClient`` on each candidate
   transport: httpx-aiohttp's ``AiohttpTransport``, pyreqwest's ``HttpxTransport``
   when pyreqwest is installed), goldenkit's HTTP layer (``OpenAIProvider.complete``)
   and a whole ``goldenkit.run_eval`` (case normalization, grading and writing each
   outcome included). Target (a quiet machine): run_eval's CPU per call <= 0.45 ms.
   Two more rows split the cost: httpx's client layer on a transport that does no
   I/O (what ``AsyncClient`` costs before any byte is sent), and ``run_eval`` on an
   in-process provider that answers at once (the runner's own work, no HTTP).
2. **200 ms server**, 5,000 calls, 256 in flight: calls/s against the ideal
   256 / 0.2 s = 1,280/s. Target: goldenkit's run_eval >= 95% of the calls/s of the
   bare aiohttp loop measured in the same run. (The bare
   httpx loop makes 1,000 calls here: at ~30 calls/s 5,000 would take minutes.)
3. **Peer**: the same 2,000 rows through inspect_ai (``inspect eval`` with its
   ``mockllm/model``) beside ``goldenkit run`` with an instant in-process callable
   provider, each in a fresh process. Start-up = process start to the first model
   call; per-row overhead = the marginal cost of a row: ((exit - first call) with
   2,000 rows - the same with 1 row) / 1,999, so every call, grade and outcome
   written counts and the fixed end-of-run costs (final log or Parquet, interpreter
   exit) do not. Both are marked from inside: the goldenkit callable and an inspect
   solver wrapping ``generate()`` write the time of the first call to a file.
   Targets: goldenkit's per-row overhead at least 20x lower than inspect's;
   start-up to the first call under 1 s.
   inspect_ai is not a goldenkit dependency: give ``--inspect-venv DIR`` (a venv with
   inspect-ai installed; ``--install-inspect`` creates it). Offline, the task file
   replaces inspect's tiktoken token estimate (which would download an encoding)
   with len(text) // 4, which only makes inspect faster. Without a venv the
   published figure from the issue is printed and marked as not measured here.

``--before REF`` measures the goldenkit rows (run_eval, graded and written) of a commit's
tree too, in the same sitting, interleaved with this tree's within each round, each
run_eval in a fresh process of its own (``PYTHONPATH`` set to the tree): before/after
side by side on the same load, ratios against the bare aiohttp loop of the same run.

The model servers (a minimal asyncio + httptools keep-alive server answering an
OpenAI chat.completions reply, see :func:`serve`) run in a separate process on
127.0.0.1, so the client's CPU time (``time.process_time``) is the client's alone;
the server's own CPU per call is printed beside each row. Parts 1 and 2 measure
every client ``--rounds`` times, interleaved, and print medians with the range.

    python benchmarks/bench_runner.py [--calls 5000] [--parts 1,2,3] [--rounds 3] [--before REF]
        [--inspect-venv DIR [--install-inspect]]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import benchdata  # beside this script

REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "yes, done"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
).encode()
BODY = json.dumps({"model": "bench", "messages": [{"role": "user", "content": "question"}], "stream": False}).encode()
HEADERS = {"content-type": "application/json"}
PUBLISHED_INSPECT = {"per_sample_ms": 7.6, "start_s": "3.6-4.0"}


# ---------------------------------------------------------------- servers (child process)


def serve(delays: list[float]) -> None:
    """Serve chat.completions on one port per delay; print the ports; run until killed.

    A minimal HTTP/1.1 keep-alive server (asyncio protocol, httptools request parser,
    one canned reply), so that the server's own CPU per request is small and every
    client is measured against the same cheap peer: aiohttp.web spent about as much
    CPU per request as the clients measured here, and with 256 requests arriving in
    one wave its queue, not the client, set the pace of the 200 ms comparison.
    """
    import httptools

    reply = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(REPLY) + REPLY

    class Handler(asyncio.Protocol):
        def __init__(self, delay: float) -> None:
            self.delay = delay
            self.parser = httptools.HttpRequestParser(self)
            self.transport: asyncio.Transport | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]

        def data_received(self, data: bytes) -> None:
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                assert self.transport is not None
                self.transport.close()

        def on_message_complete(self) -> None:
            if self.delay:
                asyncio.get_running_loop().call_later(self.delay, self.answer)
            else:
                self.answer()

        def answer(self) -> None:
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(reply)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for delay in delays:
            server = await loop.create_server(lambda d=delay: Handler(d), "127.0.0.1", 0, backlog=4096)
            print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    if os.environ.get("BENCH_SERVER_LOOP") == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())


def server_cpu(proc: subprocess.Popen[str]) -> float | None:
    """CPU seconds the server process has used so far (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_servers(delays: list[float]) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve", *map(str, delays)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    ports = [proc.stdout.readline().strip() for _ in delays]
    return proc, [f"http://127.0.0.1:{p}/v1/chat/completions" for p in ports]


# ---------------------------------------------------------------- clients


def measure(make: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) of one asyncio run, after collecting what earlier rows left."""
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    asyncio.run(make())  # type: ignore[arg-type]
    return time.perf_counter() - t0, time.process_time() - c0


async def bare_httpx(url: str, n: int, inflight: int) -> None:
    import httpx

    limits = httpx.Limits(max_connections=inflight, max_keepalive_connections=inflight)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        sem = asyncio.Semaphore(inflight)

        async def one() -> None:
            async with sem:
                r = await client.post(url, content=BODY, headers=HEADERS)
                r.raise_for_status()
                json.loads(r.content)

        await asyncio.gather(*(one() for _ in range(n)))


async def bare_aiohttp(url: str, n: int, inflight: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=inflight)) as session:
        sem = asyncio.Semaphore(inflight)

        async def one() -> None:
            async with sem:
                async with session.post(url, data=BODY, headers=HEADERS) as r:
                    r.raise_for_status()
                    json.loads(await r.read())

        await asyncio.gather(*(one() for _ in range(n)))


async def _client_loop(client: Any, url: str, n: int, inflight: int) -> None:
    async with client:
        sem = asyncio.Semaphore(inflight)

        async def one() -> None:
            async with sem:
                r = await client.post(url, content=BODY, headers=HEADERS)
                r.raise_for_status()
                json.loads(r.content)

        await asyncio.gather(*(one() for _ in range(n)))


async def httpx_on_aiohttp(url: str, n: int, inflight: int) -> None:
    """Candidate: ``httpx.AsyncClient`` on httpx-aiohttp's transport, as is (goldenkit's pool builds on it and
    sends a JSON POST beneath httpx's client layer: the "goldenkit HTTP layer" row)."""
    import httpx
    from httpx_aiohttp import HttpxAiohttpClient

    limits = httpx.Limits(max_connections=inflight, max_keepalive_connections=inflight)
    await _client_loop(HttpxAiohttpClient(limits=limits, timeout=120), url, n, inflight)


async def httpx_on_pyreqwest(url: str, n: int, inflight: int) -> None:
    """Candidate: ``httpx.AsyncClient`` on pyreqwest's transport (Rust reqwest underneath)."""
    import httpx
    from pyreqwest.client import ClientBuilder
    from pyreqwest.compatibility.httpx import HttpxTransport

    transport = HttpxTransport(ClientBuilder().max_connections(inflight).build())
    await _client_loop(httpx.AsyncClient(transport=transport, timeout=120), url, n, inflight)


async def httpx_on_nothing(url: str, n: int, inflight: int) -> None:
    """httpx's client layer alone: ``httpx.AsyncClient`` on a transport that does no I/O
    (each request answered at once with the canned reply). The floor under every
    transport: what ``AsyncClient`` costs per call before any byte is sent."""
    import httpx

    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(REPLY)).encode())]

    class NoIO(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, headers=headers, content=REPLY, request=request)

    await _client_loop(httpx.AsyncClient(transport=NoIO(), timeout=120), url, n, inflight)


def goldenkit_runner_alone(url: str, n: int, inflight: int, tmp: Path) -> tuple[float, float]:
    """(wall, client CPU) of a whole run_eval on an in-process provider that answers at once
    (one await, no HTTP): the runner's own work per call (normalize, grade, write) and its fixed costs."""
    from goldenkit.dataset import read_dataset
    from goldenkit.providers._callable import CallableProvider
    from goldenkit.runner import run_eval

    async def answer(case: Any) -> str:
        await asyncio.sleep(0)
        return "yes, done"

    ds = read_dataset(write_dataset(tmp, n))
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    s = run_eval(
        ds, CallableProvider(answer), ["contract"], max_in_flight=inflight, results_dir=tmp / "results", progress=False
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if s.counts["PASS"] != n:
        raise RuntimeError(f"run_eval on an in-process provider: expected {n} PASS, got {s.counts}")
    return wall, cpu


def candidates() -> list[tuple[str, Any]]:
    """The candidate transports installed here (pyreqwest is not a goldenkit dependency)."""
    out: list[tuple[str, Any]] = [("httpx + AiohttpTransport", httpx_on_aiohttp)]
    try:
        import pyreqwest  # noqa: F401
    except ImportError:
        print("(pyreqwest not installed: its candidate row is left out; pip install pyreqwest to measure it)")
    else:
        out.append(("httpx + pyreqwest HttpxTransport", httpx_on_pyreqwest))
    return out


async def goldenkit_provider(url: str, n: int, inflight: int) -> None:
    from goldenkit.providers._openai import OpenAIProvider
    from goldenkit.records import Case, Turn

    prov = OpenAIProvider(model="bench", base_url=url.removesuffix("/chat/completions"))
    prov.configure(timeout=120, max_in_flight=inflight)
    case = Case(id="q", shape="contract", turns=(Turn(user="question"),))
    sem = asyncio.Semaphore(inflight)

    async def one() -> None:
        async with sem:
            await prov.complete(case)

    try:
        await asyncio.gather(*(one() for _ in range(n)))
    finally:
        await prov.aclose()


def write_dataset(root: Path, n: int) -> Path:
    case = {"expect": {"must_contain": ["yes"], "must_not": ["no way"]}}
    cases = ({"prompt": f"question {i}", **case} for i in range(n))
    return benchdata.write_dataset(root / f"ds{n}", "bench", cases, slices=5)


def goldenkit_run(url: str, n: int, inflight: int, tmp: Path) -> tuple[float, float]:
    """(wall, client CPU) of a whole run_eval; every call must have been answered and graded PASS."""
    from goldenkit.dataset import read_dataset
    from goldenkit.providers._openai import OpenAIProvider
    from goldenkit.runner import run_eval

    ds = read_dataset(write_dataset(tmp, n))
    prov = OpenAIProvider(model="bench", base_url=url.removesuffix("/chat/completions"))
    gc.collect()
    c0, t0 = time.process_time(), time.perf_counter()
    s = run_eval(
        ds, prov, ["contract"], max_in_flight=inflight, timeout=120, results_dir=tmp / "results", progress=False
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if s.counts["PASS"] != n:
        raise RuntimeError(f"run_eval against {url}: expected {n} PASS, got {s.counts}")
    return wall, cpu


def tree_of(ref: str, into: Path) -> Path:
    """goldenkit/ of a commit, extracted into ``into`` (a folder to put on PYTHONPATH)."""
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", ref, "goldenkit"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_eval_in(tree: Path) -> Callable[[str, int, int, Path], tuple[float, float]]:
    """:func:`goldenkit_run` of ``tree``'s goldenkit, in a fresh process: (wall, client CPU) as it measured them."""

    def run(url: str, n: int, inflight: int, tmp: Path) -> tuple[float, float]:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        cmd = [sys.executable, __file__, "--child-run-eval", url, str(n), str(inflight), str(tmp)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"run_eval of {tree}: exit {done.returncode}\n{done.stderr[-2000:]}")
        wall, cpu = json.loads(done.stdout.strip().splitlines()[-1])
        return float(wall), float(cpu)

    return run


# ---------------------------------------------------------------- peer


INSPECT_TASK = """
import os
import time

import inspect_ai.model._model as _model
import inspect_ai.model._tokens as _tokens
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import solver


def _estimate(text: str) -> int:  # offline: inspect's tiktoken estimate would download an encoding
    return max(1, len(text) // 4)


_tokens.count_text_tokens = _estimate
_model.count_text_tokens = _estimate
_first = [True]


@solver
def generate_marking_first_call():
    async def solve(state, generate):
        if _first[0]:
            _first[0] = False
            with open(os.environ["BENCH_FIRST_CALL"], "w") as fh:
                fh.write(repr(time.time()))
        return await generate(state)

    return solve


@task
def bench(n: int = 2000):
    samples = [Sample(input=f"question {i}", target="Default", id=i) for i in range(int(n))]
    return Task(dataset=MemoryDataset(samples), solver=[generate_marking_first_call()], scorer=includes())
"""

AGENT = """
import os, time
_first = [True]
async def answer(case):
    if _first[0]:
        _first[0] = False
        with open(os.environ["BENCH_FIRST_CALL"], "w") as fh:
            fh.write(repr(time.time()))
    return "Default output from the agent"
"""


def run_inspect(venv: Path, tmp: Path, n: int) -> tuple[float, float]:
    """(wall of the whole ``inspect eval`` process, seconds from its start to the first model call)."""
    task = tmp / "inspect_task.py"
    task.write_text(INSPECT_TASK)
    marker = tmp / f"first-call-{n}"
    cmd = [
        str(venv / "bin" / "inspect"),
        "eval",
        task.name,
        "--model",
        "mockllm/model",
        "-T",
        f"n={n}",
        "--log-dir",
        str(tmp / f"inspect-logs-{n}"),
        "--display",
        "none",
    ]
    t_start = time.time()
    t0 = time.perf_counter()
    env = {**os.environ, "BENCH_FIRST_CALL": str(marker)}
    out = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"inspect eval failed: {out.stderr[-800:]}")
    return wall, float(marker.read_text()) - t_start


def run_goldenkit_cli(tmp: Path, n: int) -> tuple[float, float]:
    """(wall of the whole process, seconds from process start to the first model call)."""
    ds = write_dataset(tmp, n)
    (tmp / "bench_agent.py").write_text(AGENT)
    marker = tmp / f"first-call-{n}"
    env = {**os.environ, "BENCH_FIRST_CALL": str(marker), "PYTHONPATH": str(tmp)}
    cmd = [
        sys.executable,
        "-m",
        "goldenkit.cli",
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "bench_agent:answer",
        "--graders",
        "contract",
        "--max-in-flight",
        "64",
        "--results-dir",
        str(tmp / "gk-results"),
        "--quiet",
    ]
    t_start = time.time()
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"goldenkit run failed ({out.returncode}): {out.stderr[-800:]}")
    first = float(marker.read_text()) - t_start
    return wall, first


def ensure_inspect(venv: Path, install: bool) -> bool:
    if (venv / "bin" / "inspect").exists():
        return True
    if not install:
        return False
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "inspect-ai"], check=True)
    return (venv / "bin" / "inspect").exists()


# ---------------------------------------------------------------- main


def row(*cells: Any) -> str:
    widths = (35, 6, 6, 9, 11, 11, 28)
    return "  ".join(
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--serve", nargs="*", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--httpx-slow-calls", type=int, default=1000, help="bare httpx calls against the 200 ms server")
    ap.add_argument("--peer-rows", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of parts 1 and 2; the median is printed")
    ap.add_argument("--inspect-venv", type=Path, default=os.environ.get("GOLDENKIT_BENCH_INSPECT_VENV"))
    ap.add_argument("--install-inspect", action="store_true")
    ap.add_argument("--parts", default="1,2,3", help="which comparisons to run (default 1,2,3)")
    ap.add_argument("--before", metavar="REF", help="also measure run_eval of this commit's tree, side by side")
    ap.add_argument("--child-run-eval", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    if args.child_run_eval is not None:  # one run_eval of the goldenkit on PYTHONPATH (--before)
        url, n, inflight, folder = args.child_run_eval
        # a short run first: what a run imports on the way (the accounting's statistics at its end) is loaded
        # before the clock starts, as it is for the in-process rows after their first round
        goldenkit_run(url, 50, int(inflight), Path(folder) / "warm")
        print(json.dumps(goldenkit_run(url, int(n), int(inflight), Path(folder))))
        return

    parts = {p.strip() for p in args.parts.split(",")}
    proc, (fast, slow) = start_servers([0.0, 0.2])
    tmp = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    try:
        run_http_parts(args, parts, fast, slow, tmp, proc)
    finally:
        proc.kill()
        proc.wait()
    if "3" in parts:
        run_peer(args, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    print()
    print(f"load average after: {os.getloadavg()[0]:.2f} (figures are inflated when other work shares the 2 cores)")


def run_http_parts(
    args: argparse.Namespace, parts: set[str], fast: str, slow: str, tmp: Path, server: subprocess.Popen[str]
) -> None:
    n, rounds = args.calls, args.rounds
    print(f"bench_runner: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; servers in a separate process")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(
        f"each figure: the median of {rounds} rounds, the clients interleaved within each round "
        "(the bare httpx loop: 1 round); [min-max] of the rounds in the note"
    )

    def timed(fn: Callable[[], tuple[float, float]], calls: int) -> tuple[float, float, float | None]:
        """(wall, client CPU, server CPU) of one measurement."""
        s0 = server_cpu(server)
        wall, cpu = fn()
        s1 = server_cpu(server)
        return wall, cpu, (s1 - s0 if s0 is not None and s1 is not None else None)

    runs: list[tuple[str, Any, int]] = [("goldenkit run_eval (graded+written)", None, n)]
    if args.before:  # both trees' run_eval each in a fresh process, interleaved
        here = Path(__file__).resolve().parents[1]
        before = tree_of(args.before, tmp / "before-tree")
        runs = [
            (f"run_eval, before ({args.before[:10]})", run_eval_in(before), n),
            ("run_eval, this tree", run_eval_in(here), n),
        ]

    def measure_all(url: str, inflight: int, clients: list[tuple[str, Any, int]], key: str) -> dict[str, Stats]:
        """Every client ``rounds`` times, interleaved; per client the figures of each round."""
        out: dict[str, Stats] = {name: Stats(calls) for name, _, calls in clients}
        for r in range(rounds):
            for name, fn, calls in clients:
                if fn is bare_httpx and r:
                    continue
                if fn is None or fn is goldenkit_runner_alone or name.startswith("run_eval"):
                    folder = tmp / f"{key}{name[:16].replace(' ', '').replace('(', '')}{r}"
                    run = goldenkit_run if fn is None else fn
                    wall, cpu, srv = timed(lambda c=calls, d=folder, f=run: f(url, c, inflight, d), calls)
                else:
                    wall, cpu, srv = timed(lambda f=fn, c=calls: measure(lambda: f(url, c, inflight)), calls)
                out[name].add(wall, cpu, srv)
        return out

    if "1" in parts:
        print()
        print(f"1. instant server, {n} calls, 64 in flight (target on a quiet machine: run_eval CPU/call <= 0.45 ms)")
        asyncio.run(bare_aiohttp(fast, 200, 64))  # warm up the server
        clients = [
            ("bare httpx.AsyncClient", bare_httpx, n),
            ("bare aiohttp", bare_aiohttp, n),
            ("httpx client layer, no I/O", httpx_on_nothing, n),
            *[(name, fn, n) for name, fn in candidates()],
            ("goldenkit HTTP layer (provider)", goldenkit_provider, n),
            ("goldenkit runner alone (no HTTP)", goldenkit_runner_alone, n),
            *runs,
        ]
        stats = measure_all(fast, 64, clients, "r1-")
        base = stats["bare aiohttp"].cpu_ms()
        print(row("client", "calls", "flight", "calls/s", "CPU ms/call", "vs aiohttp", "note"))
        for name, st in stats.items():
            note = st.range("cpu_ms") + st.server_note()
            if "run_eval" in name:
                note += f"; target {'PASS' if st.cpu_ms() <= 0.45 else 'MISS'} (<= 0.45 ms)"
            rel = f"{st.cpu_ms() / base:.1f}x"
            print(row(name, st.calls, 64, f"{st.rate():,.0f}", f"{st.cpu_ms():.3f}", rel, note))
    if "2" in parts:
        print()
        ideal = 256 / 0.2
        print(
            f"2. 200 ms server, {n} calls, 256 in flight, ideal {ideal:,.0f} calls/s "
            "(target: goldenkit run_eval >= 95% of bare aiohttp's calls/s)"
        )
        clients = [
            ("bare httpx.AsyncClient", bare_httpx, args.httpx_slow_calls),
            ("bare aiohttp", bare_aiohttp, n),
            *[(name, fn, n) for name, fn in candidates()],
            ("goldenkit HTTP layer (provider)", goldenkit_provider, n),
            *runs,
        ]
        stats = measure_all(slow, 256, clients, "r2-")
        print(row("client", "calls", "flight", "calls/s", "% of ideal", "CPU ms/call", "note"))
        for name, st in stats.items():
            pct = 100 * st.rate() / ideal
            note = st.range("pct", ideal) + st.server_note()
            if "run_eval" in name:
                share = 100 * st.rate() / stats["bare aiohttp"].rate()
                note += f"; {share:.0f}% of bare aiohttp's calls/s, target {'PASS' if share >= 95 else 'MISS'}"
            print(row(name, st.calls, 256, f"{st.rate():,.0f}", f"{pct:.1f}%", f"{st.cpu_ms():.3f}", note))


class Stats:
    """The rounds of one client: medians and ranges of calls/s and CPU per call."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.walls: list[float] = []
        self.cpus: list[float] = []
        self.servers: list[float] = []

    def add(self, wall: float, cpu: float, server: float | None) -> None:
        self.walls.append(wall)
        self.cpus.append(cpu)
        if server is not None:
            self.servers.append(server)

    def rate(self) -> float:
        return self.calls / statistics.median(self.walls)

    def cpu_ms(self) -> float:
        return 1000 * statistics.median(self.cpus) / self.calls

    def range(self, what: str, ideal: float = 1.0) -> str:
        """``[min-max]; `` of the rounds (empty for a single round)."""
        if len(self.walls) < 2:
            return ""
        if what == "cpu_ms":
            lo, hi = (1000 * min(self.cpus) / self.calls, 1000 * max(self.cpus) / self.calls)
            return f"[{lo:.3f}-{hi:.3f}] ms; "
        lo, hi = (100 * self.calls / max(self.walls) / ideal, 100 * self.calls / min(self.walls) / ideal)
        return f"[{lo:.1f}-{hi:.1f}%]; "

    def server_note(self) -> str:
        if not self.servers:
            return ""
        return f"server {1000 * statistics.median(self.servers) / self.calls:.3f} ms/call"


def run_peer(args: argparse.Namespace, tmp: Path) -> None:
    print()
    rows = args.peer_rows
    print(
        f"3. peer: {rows} rows, instant model, fresh process each (target: goldenkit >= 20x lower per-row "
        "overhead, start-up to first call < 1 s)"
    )
    print(row("system", "rows", "", "wall s", "per-row ms", "start-up s", "note"))
    (tmp / "p1").mkdir()
    (tmp / "pn").mkdir()
    g1, g1_first = run_goldenkit_cli(tmp / "p1", 1)
    gn, g_first = run_goldenkit_cli(tmp / "pn", rows)
    g_per = 1000 * ((gn - g_first) - (g1 - g1_first)) / (rows - 1)
    print(
        row(
            "goldenkit run (callable provider)",
            rows,
            "",
            f"{gn:.2f}",
            f"{g_per:.3f}",
            f"{g_first:.2f}",
            f"first call {'PASS' if g_first < 1 else 'MISS'} (<1 s)",
        )
    )
    venv = args.inspect_venv
    if venv is not None and ensure_inspect(Path(venv), args.install_inspect):
        (tmp / "insp").mkdir()
        i1, i1_first = run_inspect(Path(venv), tmp / "insp", 1)
        i_n, i_first = run_inspect(Path(venv), tmp / "insp", rows)
        i_per = 1000 * ((i_n - i_first) - (i1 - i1_first)) / (rows - 1)
        print(row("inspect_ai eval (mockllm/model)", rows, "", f"{i_n:.2f}", f"{i_per:.3f}", f"{i_first:.2f}", ""))
        ratio = i_per / g_per if g_per > 0 else float("inf")
        print(
            f"   per-row overhead ratio inspect / goldenkit: {ratio:.1f}x (target >= 20x: "
            f"{'PASS' if ratio >= 20 else 'MISS'})"
        )
    else:
        print(
            row(
                "inspect_ai (NOT measured here)",
                rows,
                "",
                "-",
                f"{PUBLISHED_INSPECT['per_sample_ms']}",
                PUBLISHED_INSPECT["start_s"],
                "published figure from issue 3",
            )
        )
        print(
            f"   per-row overhead ratio vs the published figure: {PUBLISHED_INSPECT['per_sample_ms'] / g_per:.1f}x "
            "(inspect_ai not installed; pass --inspect-venv DIR [--install-inspect] to measure it)"
        )


if __name__ == "__main__":
    main()
