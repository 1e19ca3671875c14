"""`goldenkit pages` over 1,000 runs with their reports: cold, then after one new run.

Writes ``--runs`` run folders with bench_history's generator (``--rows`` rows x 3
repeats, 8 slices, five dataset versions over time, one run in a hundred
interrupted) and one committed baseline per dataset version (an error-free run
of that version, saved with goldenkit.baselines.save_baseline), so every run
gets report.html and every ok run compare.html against its version's baseline.
Then, timed, in a fresh process each (the command a nightly job runs):

  cold         goldenkit pages -o site (no site, no runs index cache): every
               report and comparison rendered. Target: <= 300 s on 2 cores.
  one new run  a run is added and the command runs again: its two pages and its
               dataset's page are made, the rest kept. Target: <= 10 s.

Reference check (the script fails without it): the pages made are exactly those
expected (a report per run, a comparison per ok run, the new run's two pages
the second time); no page holds NaN, <NA>, .000000 or a network reference; and
``--check`` sampled runs (first, middle, last, the new one) rendered by
``goldenkit report RUN --baseline B`` through papermill and a kernel show what
the site's pages show: the same headings, banners, tables, figures and text
(tests/report_page_content.py).

    python benchmarks/bench_pages.py [--runs 1000] [--rows 200] [--check 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import bench_history  # noqa: E402
from report_page_content import page_content  # noqa: E402

from goldenkit.baselines import save_baseline  # noqa: E402
from goldenkit.history import CACHE_FILE  # noqa: E402
from goldenkit.notebooks import remote_references  # noqa: E402
from goldenkit.results import read_run, write_parquet  # noqa: E402

COLD_S, INCREMENTAL_S = 300.0, 10.0
LINE = re.compile(r"(\d+) pages rendered, (\d+) copied, (\d+) reused")
RAW = ("NaN", "<NA>", ".000000")


def _goldenkit() -> list[str]:
    exe = Path(sys.executable).with_name("goldenkit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "goldenkit.cli"]


def _rewrite(folder: Path, run_id: str, started_at: str | None = None, *, no_errors: bool = False) -> None:
    """Give a generated run folder another run id (and start time); ``no_errors``: ERROR attempts become FAIL."""
    man = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    man["run_id"] = run_id
    if started_at:
        man["started_at"] = man["ended_at"] = started_at
    recs = [json.loads(line) for line in (folder / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in recs:
        r["run_id"] = run_id
        if no_errors and r["verdict"] == "ERROR":
            r.update(verdict="FAIL", detail=None, error_kind=None)
    (folder / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    if (folder / "outcomes.parquet").exists():
        write_parquet(recs, folder / "outcomes.parquet")
    (folder / "run.json").write_text(json.dumps(man), encoding="utf-8")


def _baselines(root: Path, rows: int) -> Path:
    """One baseline per dataset version: an error-free run of it, saved as baseline v<version>."""
    scratch, baselines = root / "baseline-runs", root / "baselines"
    bench_history.generate(scratch, len(bench_history.VERSIONS), rows, seed=1)  # run i has version i
    for i, folder in enumerate(sorted(scratch.iterdir())):
        version = bench_history.VERSIONS[i][0]
        _rewrite(folder, f"base-{version}", no_errors=True)
        save_baseline(read_run(folder), f"v{version}", baselines_dir=baselines)
    return baselines


def _pages(root: Path) -> tuple[float, float, tuple[int, int, int], str]:
    """``goldenkit pages`` in a fresh process: wall s, CPU s (with its workers), (rendered, copied, reused), out."""
    cmd = [*_goldenkit(), "pages", "-o", "site", "--results-dir", "results", "--baselines-dir", "baselines"]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"goldenkit pages failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    m = LINE.search(proc.stdout)
    if m is None:
        raise SystemExit(f"unexpected output: {proc.stdout}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, (int(m.group(1)), int(m.group(2)), int(m.group(3))), proc.stdout + proc.stderr


def _visible(page: str) -> str:
    body = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", page)
    return html.unescape(re.sub(r"(?s)<[^>]*>", " ", body))


def _expected(root: Path) -> set[str]:
    """The run pages a cold build makes: report.html of every run, compare.html of every VALID, complete one."""
    out = set()
    for folder in sorted((root / "results").iterdir()):
        if not (folder / "run.json").is_file():
            continue
        man = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        out.add(f"runs/{folder.name}/report.html")
        if man.get("validity") == "VALID" and man.get("complete"):
            out.add(f"runs/{folder.name}/compare.html")
    return out


def _same_as_report_command(root: Path, run_id: str, base: str) -> list[str]:
    """What differs between the site's pages of ``run_id`` and ``goldenkit report``'s (empty: nothing)."""
    out = root / "check" / run_id
    cmd = [*_goldenkit(), "report", f"results/{run_id}", "--baseline", f"baselines/{base}.json", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    if proc.returncode != 0:
        return [f"{run_id}: goldenkit report failed: {proc.stderr[-500:]}"]
    problems = []
    for name in ("report.html", "compare.html"):
        ours = page_content((root / "site" / "runs" / run_id / name).read_text(encoding="utf-8"))
        theirs = page_content((out / name).read_text(encoding="utf-8"))
        if ours != theirs or not ours.tables:
            problems.append(f"{run_id}/{name}: shows other content than goldenkit report's")
    return problems


def _check_pages(site: Path) -> list[str]:
    problems = []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if remote_references(text):
            problems.append(f"{page}: loads from the network")
        found = [t for t in RAW if t in _visible(text)]
        if found:
            problems.append(f"{page}: shows {', '.join(found)}")
    return problems


def _version_of(root: Path, run_id: str) -> str:
    return str(json.loads((root / "results" / run_id / "run.json").read_text(encoding="utf-8"))["dataset"]["version"])


def _run(args: argparse.Namespace, root: Path) -> int:
    results = root / "results"
    if not results.exists():
        t0 = time.perf_counter()
        n = bench_history.generate(results, args.runs, args.rows)
        _baselines(root, args.rows)
        print(f"generated {args.runs} runs ({n:,} outcomes) and 5 baselines in {time.perf_counter() - t0:.1f} s")
    new_id = f"nightly-{args.runs:04d}"
    shutil.rmtree(results / new_id, ignore_errors=True)  # a kept folder's run added by the last pass
    shutil.rmtree(root / "site", ignore_errors=True)
    shutil.rmtree(root / "check", ignore_errors=True)
    (results / CACHE_FILE).unlink(missing_ok=True)
    expected = _expected(root)
    load0 = os.getloadavg()[0]
    cold = _pages(root)
    made = {str(p.relative_to(root / "site")) for p in (root / "site" / "runs").rglob("*.html")}
    problems = [] if made == expected else [f"cold build: {len(made)} run pages, expected {len(expected)}"]
    last = sorted(p.name for p in results.iterdir() if p.name.startswith("nightly-"))[-2]  # a complete run
    shutil.copytree(results / last, results / new_id)
    _rewrite(results / new_id, new_id, bench_history._started(args.runs))
    one = _pages(root)
    if one[2][0] != 3:  # the new run's report and comparison, its dataset's history page
        problems.append(f"after one new run: {one[2][0]} pages rendered, expected 3\n{one[3]}")
    problems += _check_pages(root / "site")
    ids = sorted(p.name for p in results.iterdir() if p.name.startswith("nightly-") and p.name != new_id)
    sample = [ids[0], ids[len(ids) // 2], ids[-2]][: args.check] + [new_id]
    for run_id in sample:
        problems += _same_as_report_command(root, run_id, f"v{_version_of(root, run_id)}")
    print(f"{'step':<44} {'pages':>6} {'wall s':>8} {'CPU s':>8}  target")
    for step, (wall, cpu, counts, _), target in (
        (f"cold: {len(expected)} run pages and the dataset's", cold, COLD_S),
        ("one new run", one, INCREMENTAL_S),
    ):
        print(f"{step:<44} {counts[0]:>6} {wall:>8.1f} {cpu:>8.1f}  <= {target:.0f} s")
    print(f"pages per second, cold: {cold[2][0] / cold[0]:.1f}; CPU per page {cold[1] / max(1, cold[2][0]):.2f} s")
    print(f"load average (1 min) before {load0:.1f}, at the end {os.getloadavg()[0]:.1f}, on {os.cpu_count()} cores")
    print(
        f"reference check: {len(sample)} runs against goldenkit report, every page scanned: "
        + ("OK" if not problems else "FAILED")
    )
    for p in problems:
        print(f"  {p}")
    over = cold[0] > COLD_S or one[0] > INCREMENTAL_S
    print(f"targets: {'OVER' if over else 'OK'}")
    return 1 if problems else (2 if over else 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--check", type=int, default=3, help="runs compared with goldenkit report (plus the new one)")
    ap.add_argument("--keep", type=Path, help="write the runs and the site here and keep them")
    args = ap.parse_args()
    root: Any = args.keep or Path(tempfile.mkdtemp(prefix="gk-bench-pages-"))
    try:
        return _run(args, root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
