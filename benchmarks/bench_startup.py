"""``import goldenkit`` plus the first call of a run, in a fresh interpreter (issue 15).

Each round starts a fresh ``python`` that runs::

    import goldenkit
    provider = goldenkit.get_provider("callable", fn=answer)
    goldenkit.run_eval(goldenkit.read_dataset(path), provider, graders=["contract"], progress=False, ...)

on a tiny generated dataset (``--rows`` contract rows, default 3) with an
in-process callable agent. The child marks, from inside, the time of its first
line (the interpreter is up), after ``import goldenkit``, at the first call of
the agent and when ``run_eval`` returns; the parent measures the whole process
(interpreter start and exit included). **Target: import goldenkit + the first
call of a run < 1 s** (child start to the agent's first call). Prints the median
and the minimum of ``--rounds`` rounds, with the load average before and after
(wall times on a loaded machine are contention-bound; the CPU column, user +
system of the child, is the steadier figure).

    python benchmarks/bench_startup.py [--rounds 5] [--rows 3]

To see which imports cost the time: ``python -X importtime -c "import goldenkit;
goldenkit.run_eval"`` (stderr, one line per module, cumulative microseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchdata  # beside this script

CHILD = """
import time
t0 = time.perf_counter()
import json, sys
first = []
def answer(case):
    if not first:
        first.append(time.perf_counter())
    return "yes, done"
import goldenkit
t_import = time.perf_counter()
provider = goldenkit.get_provider("callable", fn=answer)
dataset = goldenkit.read_dataset(sys.argv[1])
summary = goldenkit.run_eval(dataset, provider, graders=["contract"], progress=False, results_dir=sys.argv[2])
t_end = time.perf_counter()
if summary.validity != "VALID":
    raise SystemExit(f"run not VALID: {summary.validity} {summary.invalid_reason}")
print(json.dumps({"import": t_import - t0, "first_call": first[0] - t0, "run_returned": t_end - t0}))
"""


def _round(dataset: Path, results: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(dataset), str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child failed: {err.strip() or out.strip()}")
    marks: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    marks.update(process=wall, cpu=usage.ru_utime + usage.ru_stime)
    return marks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=3)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="gk-bench-startup-") as tmp:
        cases = [
            {"prompt": f"question {i}: is it done?", "expect": {"must_contain": ["done"]}} for i in range(args.rows)
        ]
        dataset = benchdata.write_dataset(Path(tmp) / "ds", "bench-startup", cases, slices=1)
        rounds = [_round(dataset, Path(tmp) / "results") for _ in range(args.rounds)]
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; {args.rounds} fresh processes")
    print("| from the child's first line to ... | median | min |")
    print("| --- | --- | --- |")
    labels = {
        "import": "`import goldenkit` done",
        "first_call": "the agent's first call (target < 1 s)",
        "run_returned": "run_eval returned",
        "process": "whole process, interpreter start to exit (parent's clock)",
        "cpu": "CPU of the whole process (user + system)",
    }
    for key, label in labels.items():
        values = [r[key] for r in rounds]
        print(f"| {label} | {statistics.median(values):.3f} s | {min(values):.3f} s |")


if __name__ == "__main__":
    main()
