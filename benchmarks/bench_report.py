"""`goldenkit report` on a 400-row x 3-repeat run with a baseline (issue 6, item 7).

Writes a 400-row dataset and two runs of it (1,200 outcomes each, in the
results-store format, with errors, skips, flaky rows and flips) with
scripts/make_fixture_runs.py, then times the command a CI job runs:

    goldenkit report CAND --baseline BASE -o OUT

in a fresh process, end to end (report.html and compare.html). Target: <= 30 s.
It prints where the time goes, per notebook: kernel start, cell execution,
HTML export (the command runs the two notebooks side by side, each in its own
kernel, so the wall time is about the slower of the two plus process start).
For scale it also prints the cost of `import goldenkit` in a fresh
interpreter, which every kernel pays inside "execution".

    python benchmarks/bench_report.py [--rows 400] [--repeats 3] [--runs 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 30.0
LINE = re.compile(
    r"wrote (?P<path>\S+) \(kernel start (?P<kernel>[\d.]+) s, execution (?P<exec>[\d.]+) s, "
    r"HTML export (?P<html>[\d.]+) s\)"
)


def _fixture_module() -> Any:
    spec = importlib.util.spec_from_file_location("make_fixture_runs", ROOT / "scripts" / "make_fixture_runs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _goldenkit() -> list[str]:
    exe = Path(sys.executable).with_name("goldenkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "goldenkit.cli"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="timed repetitions (the median is reported)")
    parser.add_argument("--keep", type=Path, help="write the runs and reports here and keep them")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        t0 = time.perf_counter()
        paths = _fixture_module().make_all(root, rows=args.rows, repeats=args.repeats)
        print(f"fixture: {args.rows} rows x {args.repeats} repeats, 2 runs written in {time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import goldenkit, goldenkit.report"], check=True)
        import_s = time.perf_counter() - t0

        walls: list[float] = []
        cpus: list[float] = []
        parts: dict[str, list[tuple[float, float, float]]] = {"report.html": [], "compare.html": []}
        for i in range(args.runs):
            out = root / f"out{i}"
            cmd = [*_goldenkit(), "report", str(paths["cand"]), "--baseline", str(paths["base"]), "-o", str(out)]
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
            if proc.returncode != 0:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                return 1
            walls.append(wall)
            for m in LINE.finditer(proc.stdout):
                parts[Path(m.group("path")).name].append(
                    (float(m.group("kernel")), float(m.group("exec")), float(m.group("html")))
                )
            for name in parts:
                if not (out / name).is_file():
                    print(f"missing {out / name}", file=sys.stderr)
                    return 1

        print()
        print(
            f"{'notebook':<14} {'kernel start':>13} {'execution':>10} {'HTML export':>12}   (median of {args.runs}, s)"
        )
        for name, rows in parts.items():
            k, e, h = (statistics.median(x[j] for x in rows) for j in range(3))
            print(f"{name:<14} {k:>13.2f} {e:>10.2f} {h:>12.2f}")
        print(f"{'import goldenkit (fresh interpreter)':<40} {import_s:>6.2f}")
        wall = statistics.median(walls)
        print(f"{'goldenkit report --baseline, wall':<40} {wall:>6.2f}   runs: {', '.join(f'{w:.2f}' for w in walls)}")
        print(f"{'CPU time of the command and its kernels':<40} {statistics.median(cpus):>6.2f}")
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        verdict = "OK" if wall <= TARGET_S else "OVER TARGET"
        print(f"target <= {TARGET_S:.0f} s: {verdict}")
        return 0 if wall <= TARGET_S else 2
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
