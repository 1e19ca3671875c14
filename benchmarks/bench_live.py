"""goldenkit against the real llama.cpp server, beside a bare httpx loop making the same calls (issues 8 and 14).

The server (llama-cpp-python around llama.cpp, a tiny random-weight model) answers
one request at a time, so it, not the client, sets the pace: a client can only
lose throughput, by adding latency between one answer and the next request.
This measures how much goldenkit loses.

Both clients make the same ``--calls`` chat requests (distinct prompts, ``max_tokens``
8, temperature 0 and a fixed seed, so the server generates the same tokens for
both; the token totals are printed as a check), ``--inflight`` at a time (default 4):

* **bare httpx**: an ``httpx.AsyncClient`` posting the request bodies goldenkit
  would send (built by ``OpenAIProvider.payload``) and parsing the JSON reply;
* **goldenkit run_eval**: the whole runner on a dataset of the same prompts:
  case normalization, the provider's HTTP layer, the contract grader, each
  outcome appended to outcomes.jsonl, Parquet and run.json at the end.

Short rounds alternate between the two (``--rounds``, default 12, of ``--calls``
200 each; the first client of a round alternates too) after a warm-up. The
table shows every round with the client's CPU time per call, then the medians.
The figure judged is the **median over rounds of goldenkit's calls/s divided by
the bare loop's in the same round**: on a machine shared with other work single
rounds swing by 2x, and pairing each round's two clients on the same prompts,
adjacent in time, cancels most of that. Each goldenkit round is a whole
``run_eval`` including its fixed costs (run folder, git commit lookup, Parquet
and run.json at the end). Target: goldenkit >= 95% of the bare loop's calls/s (issue 14).

Server: ``--base-url``, else ``$GOLDENKIT_LIVE_BASE_URL``; with neither, the
script starts one with ``../shared/real-server/setup.sh`` (beside the checkout)
on a free port and stops it at the end.

    python benchmarks/bench_live.py [--calls 200] [--inflight 4] [--rounds 12] [--base-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import benchdata  # beside this script

ROOT = Path(__file__).resolve().parents[1]
SETUP_SH = ROOT.parent / "shared" / "real-server" / "setup.sh"
SETTINGS: dict[str, Any] = {"model": "tiny", "temperature": 0.0, "seed": 7, "max_tokens": 8}


def prompt(i: int) -> str:
    return f"Question {i}: what is the status of order {i:05d}?"


# ---------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(workdir: Path) -> tuple[str, Path]:
    """Start the llama.cpp server with setup.sh on a free port; (base URL, pid file)."""
    if not SETUP_SH.exists():
        sys.exit(f"no server: give --base-url or set GOLDENKIT_LIVE_BASE_URL ({SETUP_SH} is absent)")
    port = free_port()
    env = dict(os.environ, PORT=str(port), WORKDIR=str(workdir))
    print(f"starting the llama.cpp server with {SETUP_SH.name} on port {port} ...", file=sys.stderr)
    subprocess.run(["bash", str(SETUP_SH)], env=env, check=True, stdout=sys.stderr)
    return f"http://127.0.0.1:{port}/v1", workdir / "server.pid"


def stop_server(pidfile: Path) -> None:
    try:
        pid = int(pidfile.read_text())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- clients


def bodies(base_url: str, n: int, offset: int) -> list[bytes]:
    """The exact request bodies goldenkit's OpenAI provider sends for these prompts."""
    from goldenkit.providers._openai import OpenAIProvider
    from goldenkit.records import Message

    prov = OpenAIProvider(base_url=base_url, **SETTINGS)
    return [
        json.dumps(
            prov.payload([Message(role="user", content=prompt(offset + i))], []),
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()
        for i in range(n)
    ]


async def bare_httpx(url: str, payloads: list[bytes], inflight: int) -> dict[str, float]:
    import httpx

    limits = httpx.Limits(max_connections=inflight, max_keepalive_connections=inflight)
    headers = {"content-type": "application/json", "accept": "application/json"}
    tokens_out = 0
    queue = iter(payloads)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:

        async def worker() -> None:
            nonlocal tokens_out
            for body in queue:
                r = await client.post(url, content=body, headers=headers)
                r.raise_for_status()
                tokens_out += json.loads(r.content)["usage"]["completion_tokens"]

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(inflight)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "calls": len(payloads), "tokens_out": tokens_out, "errors": 0}


def write_dataset(root: Path, n: int, offset: int) -> Path:
    cases = ({"prompt": prompt(offset + i), "expect": {"must_contain_any": ["e", "a"]}} for i in range(n))
    return benchdata.write_dataset(root / f"ds-{offset}", "bench-live", cases, slices=4)


def goldenkit_run(base_url: str, ds_dir: Path, inflight: int, results: Path) -> dict[str, float]:
    from goldenkit.dataset import read_dataset
    from goldenkit.providers._openai import OpenAIProvider
    from goldenkit.results import outcomes_df
    from goldenkit.runner import run_eval

    ds = read_dataset(ds_dir)
    prov = OpenAIProvider(base_url=base_url, **SETTINGS)
    t0, c0 = time.perf_counter(), time.process_time()
    s = run_eval(ds, prov, ["contract"], max_in_flight=inflight, timeout=120, results_dir=results, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    df = outcomes_df(s.path, columns=["tokens_out"])
    return {
        "wall": wall,
        "cpu": cpu,
        "calls": s.calls,
        "tokens_out": int(df["tokens_out"].sum()),
        "errors": s.counts["ERROR"],
    }


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--inflight", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--base-url", default=os.environ.get("GOLDENKIT_LIVE_BASE_URL"))
    a = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmpd:
        tmp = Path(tmpd)
        pidfile = None
        base_url = a.base_url
        if not base_url:
            base_url, pidfile = start_server(tmp / "server")
        from goldenkit.providers._openai import chat_completions_url

        url = chat_completions_url(base_url)
        try:
            # warm-up: the model's pages, the server's code paths, both clients' imports
            asyncio.run(bare_httpx(url, bodies(base_url, 50, 10**6), a.inflight))
            goldenkit_run(base_url, write_dataset(tmp, 50, 10**6 + 50), a.inflight, tmp / "results")
            rows: list[tuple[str, int, dict[str, float]]] = []
            for r in range(a.rounds):
                # the same prompts for both clients in a round, new prompts each round
                offset = r * a.calls
                payloads = bodies(base_url, a.calls, offset)
                ds_dir = write_dataset(tmp, a.calls, offset)
                order = ("bare", "goldenkit") if r % 2 == 0 else ("goldenkit", "bare")
                for who in order:
                    if who == "bare":
                        res = asyncio.run(bare_httpx(url, payloads, a.inflight))
                    else:
                        res = goldenkit_run(base_url, ds_dir, a.inflight, tmp / "results")
                    rows.append((who, r + 1, res))
        finally:
            if pidfile is not None:
                stop_server(pidfile)

    print(f"\nbench_live: {a.calls} calls x {a.rounds} rounds, {a.inflight} in flight, server {base_url}")
    print(f"settings: {json.dumps(SETTINGS)}\n")
    print("| client | round | calls | errors | tokens out | wall s | client CPU ms/call | calls/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rates: dict[str, list[float]] = {"bare": [], "goldenkit": []}
    names = {"bare": "bare httpx loop", "goldenkit": "goldenkit run_eval"}
    for who, r, res in rows:
        rate = res["calls"] / res["wall"]
        rates[who].append(rate)
        print(
            f"| {names[who]} | {r} | {int(res['calls'])} | {int(res['errors'])} | {int(res['tokens_out'])} "
            f"| {res['wall']:.2f} | {1000 * res['cpu'] / res['calls']:.2f} | {rate:.0f} |"
        )
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratio = med["goldenkit"] / med["bare"]
    print(f"| **median bare httpx** | | | | | | | **{med['bare']:.0f}** |")
    print(f"| **median goldenkit** | | | | | | | **{med['goldenkit']:.0f}** |")
    per_round = [g / b for g, b in zip(rates["goldenkit"], rates["bare"], strict=True)]
    paired = statistics.median(per_round)
    verdict = "OK" if paired >= 0.95 else "BELOW TARGET"
    print(f"\nper round goldenkit / bare: {', '.join(f'{x:.0%}' for x in per_round)}")
    print(f"goldenkit / bare = {paired:.1%}, median of the rounds (target >= 95%): {verdict}")
    print(f"(ratio of the two medians: {ratio:.1%})")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
