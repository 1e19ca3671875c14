"""The Ray executor against one local process, side by side in one run (issue 20).

Two comparisons, every figure measured in this run:

1. **CPU-bound agent**: an in-process callable doing about 5 ms of pure-Python work
   per call (calibrated here), ``--calls`` calls (default 2,000): ``run_eval`` in this
   process vs ``executor=RaySettings(workers=2)`` on a local cluster of 2 CPUs.
   Target: Ray >= 1.7x the local calls/s. The local process runs the agent in a
   thread pool, so the GIL holds it to one core; each Ray worker is a process of its own.
   Before each pair, the same work with nothing else (500 calls' worth in one process,
   then in two at once) says what two processes can reach on the machine at that
   moment: the ceiling of any 2-worker run.
2. **API-bound**: an OpenAI-compatible server answering after 200 ms (the minimal
   server of bench_runner.py, in a separate process), ``--api-calls`` calls (default
   200), 16 in flight, local vs Ray with 2 workers. Target: Ray no slower than local.

Calls/s count from the run's first call to its end (the summary's ``elapsed_s``):
the cluster's start (``ray.init``) and the workers' start (each builds its provider)
are reported on their own rows, since a long run pays them once.

Local and Ray runs alternate (``--rounds`` pairs, default 3) and the medians
are compared: the speed of a shared virtual machine drifts by tens of percent
within minutes, so one local run followed by one Ray run compares two machines.

    python benchmarks/bench_ray.py [--calls 2000] [--api-calls 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import benchdata  # beside this script
from bench_runner import start_servers

from goldenkit.dataset import read_dataset
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._openai import OpenAIProvider
from goldenkit.runner import run_eval
from goldenkit.runner._ray_executor import RaySettings

WORK = {"n": 20_000}  # loop length of one call; calibrated to about 5 ms below


def busy(n: int) -> int:
    """Pure-Python work: no I/O, no C extension releasing the GIL."""
    acc = 0
    for i in range(n):
        acc = (acc * 31 + i) % 1_000_003
    return acc


def cpu_agent(case: Any) -> str:
    busy(int(case.raw["work"]))
    return "done"


def calibrate(target_ms: float = 5.0) -> int:
    n = 20_000
    t0 = time.perf_counter()
    for _ in range(20):
        busy(n)
    per_call = (time.perf_counter() - t0) / 20
    return max(1000, int(n * target_ms / 1000.0 / per_call))


def dataset(root: Path, calls: int, case: dict[str, Any]) -> Any:
    folder = benchdata.write_dataset(root, "ray-bench", ({**case, "i": i} for i in range(calls)), slices=4)
    return read_dataset(folder)


def timed(ds: Any, provider: Any, res: Path, run_id: str, **kw: Any) -> tuple[float, float, str]:
    """(wall seconds, seconds from the first call to the end, validity)."""
    t0 = time.perf_counter()
    summary = run_eval(ds, provider, run_id=run_id, results_dir=res, progress=False, **kw)
    wall = time.perf_counter() - t0
    if summary.counts["total"] != summary.counts["expected"] or summary.counts["ERROR"]:
        raise SystemExit(f"{run_id}: {summary.line()}")
    return wall, summary.elapsed_s, summary.validity


def bare_work(work: int, calls: int) -> float:
    """Seconds for ``calls`` calls' worth of the agent's work, nothing else (one process)."""
    t0 = time.perf_counter()
    for _ in range(calls):
        busy(work)
    return time.perf_counter() - t0


def machine_ceiling(work: int, calls: int) -> float:
    """What two processes of bare work give against one, now: the most any 2-worker run can reach."""
    one = bare_work(work, calls // 2)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.starmap(bare_work, [(work, 1)] * 2)  # both children started and imported
        t0 = time.perf_counter()
        pool.starmap(bare_work, [(work, calls // 2)] * 2)
        two = time.perf_counter() - t0
    return 2 * one / two


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--api-calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="local/Ray pairs, alternated; medians are reported")
    args = ap.parse_args()
    import ray

    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = calibrate()
        t0 = time.perf_counter()
        busy(work)
        one = (time.perf_counter() - t0) * 1000
        cpu = dataset(root / "cpu", args.calls, {"prompt": "q", "work": work, "expect": {"must_contain": ["done"]}})
        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        rows.append(("cluster start (ray.init, 2 CPUs)", f"{time.perf_counter() - t0:.1f} s", ""))
        try:
            # local and Ray runs alternate, so both see the same machine (a shared VM's speed drifts)
            n, local_s, ray_s, starts, ceilings = args.calls, [], [], [], []
            for i in range(args.rounds):
                ceilings.append(machine_ceiling(work, n // 4))
                _, le, _ = timed(cpu, CallableProvider(fn=cpu_agent), root / "r", f"cpu-local-{i}", max_in_flight=8)
                rw, re_, _ = timed(
                    cpu,
                    CallableProvider(fn=cpu_agent),
                    root / "r",
                    f"cpu-ray-{i}",
                    max_in_flight=8,
                    executor=RaySettings(workers=2),
                )
                local_s.append(le)
                ray_s.append(re_)
                starts.append(rw - re_)
            le, re_ = statistics.median(local_s), statistics.median(ray_s)
            pairs = ", ".join(f"{a / b:.2f}" for a, b in zip(local_s, ray_s, strict=True))
            rows.append((f"CPU agent ({one:.1f} ms/call): local, 1 process", f"{n / le:.0f} calls/s", f"{le:.1f} s"))
            rows.append(("CPU agent: Ray, 2 workers", f"{n / re_:.0f} calls/s", f"{re_:.1f} s"))
            rows.append(("  Ray workers' start (in the Ray run's wall time)", f"{statistics.median(starts):.1f} s", ""))
            rows.append(("  ratio Ray / local, medians (target >= 1.7)", f"{le / re_:.2f}x", ""))
            rows.append(("  ratio of each round", pairs, ""))
            rows.append(
                (
                    "  the machine's ceiling: 2 bare processes / 1, each round",
                    ", ".join(f"{c:.2f}" for c in ceilings),
                    "",
                )
            )
            proc, urls = start_servers([0.2])
            try:
                base = urls[0].rsplit("/chat/completions", 1)[0]
                api = dataset(root / "api", args.api_calls, {"prompt": "q", "expect": {"must_contain": ["done"]}})
                api_local, api_ray = [], []
                for i in range(args.rounds):
                    _, la, _ = timed(
                        api, OpenAIProvider(model="m", base_url=base), root / "r", f"api-local-{i}", max_in_flight=16
                    )
                    _, ra, _ = timed(
                        api,
                        OpenAIProvider(model="m", base_url=base),
                        root / "r",
                        f"api-ray-{i}",
                        max_in_flight=16,
                        executor=RaySettings(workers=2),
                    )
                    api_local.append(la)
                    api_ray.append(ra)
            finally:
                proc.kill()
                proc.wait()
            m, la, ra = args.api_calls, statistics.median(api_local), statistics.median(api_ray)
            rows.append(("API 200 ms, 16 in flight: local", f"{m / la:.1f} calls/s", f"{la:.1f} s"))
            rows.append(("API 200 ms, 16 in flight: Ray, 2 workers", f"{m / ra:.1f} calls/s", f"{ra:.1f} s"))
            rows.append(("  ratio Ray / local, medians (target >= 1.0; ideal 80/s)", f"{la / ra:.2f}x", ""))
            each = ", ".join(f"{a / b:.2f}" for a, b in zip(api_local, api_ray, strict=True))
            rows.append(("  ratio of each round", each, ""))
        finally:
            ray.shutdown()
    load = os.getloadavg()
    print(
        f"bench_ray: {args.calls} CPU-bound calls, {args.api_calls} API calls; "
        f"load average before the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs"
    )
    width = max(len(r[0]) for r in rows)
    for name, value, extra in rows:
        print(f"{name:<{width}}  {value:>14}  {extra:>8}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
