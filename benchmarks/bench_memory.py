"""Peak memory of a run against the number of its outcomes (issue 20, item 8).

Each run is ``goldenkit run`` in a fresh process: a generated dataset of
``--rows`` contract rows (ids q00000..., 10 slices) through an instant async
callable provider (it answers ``"yes, done"`` at once) with the ``contract``
grader, ``--repeats`` calls per row, 64 in flight. The child's peak resident
set size is read from the kernel when it exits (``os.wait4`` -> ``ru_maxrss``),
so every page the run touched counts: the dataset, the cases, the outcomes,
the Parquet file being written. The table prints, per run: outcomes, wall
time, wall and CPU microseconds per outcome (CPU: the child's user + system
time, the figure that does not depend on the machine's load) and peak RSS,
with the load average at the start.

Targets: 200,000 outcomes (100,000 rows x 2) peak under 400 MB, 2,000,000
(100,000 x 20) under 600 MB, with the same wall time per outcome. The dataset
is the same in both, so the difference between the two peaks is what the run
keeps per outcome. The first row is the floor: a child that only imports the
run command, reads the dataset and normalizes its cases (what any run of these
rows holds, whatever its number of outcomes).

    python benchmarks/bench_memory.py [--rows 100000] [--repeats 2,20] [--src DIR]

``--src DIR`` runs the goldenkit package found in DIR instead of this checkout
(for a before/after figure: ``git archive REV | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchdata  # beside this script

AGENT = """
async def answer(case):
    return "yes, done"
"""


def _cases(n: int) -> list[dict[str, object]]:
    return [{"prompt": f"question {i}: is it done?", "expect": {"must_contain": ["done"]}} for i in range(n)]


def _run(dataset: Path, work: Path, repeats: int, src: Path | None) -> tuple[float, float, int, str]:
    """One ``goldenkit run`` in a child: (wall seconds, CPU seconds, peak RSS in bytes, its summary line)."""
    env = dict(os.environ)
    paths = [str(work)] + ([str(src)] if src is not None else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [
        sys.executable,
        "-m",
        "goldenkit.cli",
        "run",
        str(dataset),
        "--provider",
        "callable",
        "--callable",
        "benchagent:answer",
        "--graders",
        "contract",
        "--repeats",
        str(repeats),
        "--max-in-flight",
        "64",
        "--quiet",
        "--results-dir",
        str(work / "results"),
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_fh, err_fh = proc.stdout, proc.stderr
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = out_fh.read() if out_fh else ""
    err = err_fh.read() if err_fh else ""
    if proc.returncode != 0:
        raise SystemExit(f"goldenkit run exited {proc.returncode}: {err.strip() or out.strip()}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss * 1024, out.strip()  # ru_maxrss is in KiB on Linux


FLOOR = """
import sys
from goldenkit.commands._agent import grader_list
from goldenkit.providers import build_provider
from goldenkit.dataset import read_dataset
from goldenkit.runner import run_eval
from goldenkit.runner._evaluate import normalize_cases
ds = read_dataset(sys.argv[1])
cases = normalize_cases(ds, ds.ids)
"""


def _floor(dataset: Path, work: Path, src: Path | None) -> int:
    """Peak RSS of a child that only imports the run command, reads the dataset and normalizes its cases."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(work)] + ([str(src)] if src is not None else []))
    proc = subprocess.Popen([sys.executable, "-c", FLOOR, str(dataset)], env=env, cwd=work)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the floor child exited {proc.returncode}")
    return usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeats", default="2,20", help="comma-separated repeats, one run each")
    ap.add_argument("--src", type=Path, help="run the goldenkit package in this folder instead")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; src: {args.src or 'this checkout'}")
    print("| rows | repeats | outcomes | wall | wall us per outcome | CPU us per outcome | peak RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="gk-bench-memory-") as tmp:
        work = Path(tmp)
        (work / "benchagent.py").write_text(AGENT)
        dataset = benchdata.write_dataset(work / "ds", "bench-memory", _cases(args.rows), slices=10)
        floor = _floor(dataset, work, args.src)
        print(f"| {args.rows:,} | - | 0 (imports, dataset and cases only) | | | | {floor / 1e6:.0f} MB |", flush=True)
        for repeats in (int(r) for r in args.repeats.split(",")):
            wall, cpu, rss, line = _run(dataset, work, repeats, args.src)
            n = args.rows * repeats
            per = f"{wall / n * 1e6:.0f} | {cpu / n * 1e6:.0f}"
            print(f"| {args.rows:,} | {repeats} | {n:,} | {wall:.1f} s | {per} | {rss / 1e6:.0f} MB |", flush=True)
            if "VALID" not in line or "INVALID" in line:
                print(f"  (run: {line})")


if __name__ == "__main__":
    main()
