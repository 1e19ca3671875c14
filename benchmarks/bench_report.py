"""`goldenkit report` on a 400-row x 3-repeat run with a baseline (issue 6, item 7; issue 40, item 7).

Writes a 400-row dataset and two runs of it (1,200 outcomes each, in the
results-store format, with errors, skips, flaky rows and flips) with
scripts/make_fixture_runs.py, then times the command a CI job runs:

    goldenkit report CAND --baseline BASE -o OUT

in a fresh process, end to end (report.html and compare.html). Target: <= 5 s
on 2 quiet cores. It prints where the time goes, per notebook: kernel start,
cell execution, HTML export (the command runs the two notebooks side by side,
each in its own kernel, so the wall time is about the slower of the two plus
the command's own start), the wall and CPU time of the command with its
kernels, and the load average before and after.

``--before REF`` times the tree of a git commit too, in the same sitting,
alternating with the working tree (its goldenkit/ and notebooks/ extracted
with ``git archive``, imported through PYTHONPATH): on a shared machine only
figures taken side by side compare.

    python benchmarks/bench_report.py [--rows 400] [--repeats 3] [--runs 3] [--before REF] [--keep DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 5.0
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


def _tree_of(ref: str, into: Path) -> Path:
    """goldenkit/ and notebooks/ of a commit, extracted into ``into`` (a folder to put on PYTHONPATH)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "goldenkit", "notebooks"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _time_once(
    tree: Path, paths: dict[str, Path], out: Path
) -> tuple[float, float, list[tuple[str, float, float, float]]]:
    """One `goldenkit report --baseline` of ``tree``'s goldenkit: (wall s, CPU s, per-notebook timings)."""
    cmd = [sys.executable, "-m", "goldenkit.cli", "report", str(paths["cand"]), "--baseline", str(paths["base"])]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True, cwd=out.parent, env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    for name in ("report.html", "compare.html"):
        if not (out / name).is_file():
            raise SystemExit(f"missing {out / name}")
    parts = [
        (Path(m.group("path")).name, float(m.group("kernel")), float(m.group("exec")), float(m.group("html")))
        for m in LINE.finditer(proc.stdout)
    ]
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), parts


def _print_tree(
    label: str, walls: list[float], cpus: list[float], parts: list[tuple[str, float, float, float]]
) -> float:
    print(f"\n{label}")
    print(f"  {'notebook':<14} {'kernel start':>13} {'execution':>10} {'HTML export':>12}   (median, s)")
    for name in ("report.html", "compare.html"):
        rows = [p[1:] for p in parts if p[0] == name]
        if rows:
            k, e, h = (statistics.median(x[j] for x in rows) for j in range(3))
            print(f"  {name:<14} {k:>13.2f} {e:>10.2f} {h:>12.2f}")
    wall = statistics.median(walls)
    print(f"  {'wall':<38} {wall:>6.2f}   runs: {', '.join(f'{w:.2f}' for w in walls)}")
    print(f"  {'CPU of the command and its kernels':<38} {statistics.median(cpus):>6.2f}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="timed repetitions of each tree (the median is reported)")
    parser.add_argument("--before", metavar="REF", help="also time this commit's tree, alternating with this one")
    parser.add_argument("--keep", type=Path, help="write the runs and reports here and keep them")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        t0 = time.perf_counter()
        paths = _fixture_module().make_all(root, rows=args.rows, repeats=args.repeats)
        print(f"fixture: {args.rows} rows x {args.repeats} repeats, 2 runs written in {time.perf_counter() - t0:.1f} s")
        trees = {"working tree": ROOT}
        if args.before:
            trees = {f"before ({args.before})": _tree_of(args.before, root / "before"), **trees}

        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import goldenkit, goldenkit.report"], check=True)
        import_s = time.perf_counter() - t0

        load_before = os.getloadavg()[0]
        timed: dict[str, tuple[list[float], list[float], list[tuple[str, float, float, float]]]] = {
            t: ([], [], []) for t in trees
        }
        for i in range(args.runs):
            for j, (label, tree) in enumerate(trees.items()):
                wall, cpu, parts = _time_once(tree, paths, root / f"out{i}-{j}")
                timed[label][0].append(wall)
                timed[label][1].append(cpu)
                timed[label][2].extend(parts)
        load_after = os.getloadavg()[0]

        print(f"\ngoldenkit report --baseline, {args.runs} runs of each tree, alternating")
        walls = {label: _print_tree(label, *timed[label]) for label in trees}
        print(f"\n{'import goldenkit, goldenkit.report (fresh interpreter)':<56} {import_s:>6.2f}")
        print(f"load average (1 min): {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} cores")
        wall = walls["working tree"]
        verdict = "OK" if wall <= TARGET_S else "OVER TARGET"
        print(f"target <= {TARGET_S:.0f} s on 2 quiet cores: {verdict} ({wall:.2f} s)")
        return 0 if wall <= TARGET_S else 2
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
