"""The history of many runs: index 1,000 run folders, one SQL query over all their outcomes.

A generator writes ``--runs`` synthetic run folders (run.json + outcomes.jsonl +
outcomes.parquet in the results-store schema, ``--rows`` rows x 3 repeats each,
8 slices, responses and grader results, five dataset versions over time, a
few incomplete runs read from their JSONL). Then, timed:

  index, cold   runs_df() with no cache: every run.json and the row_id/repeat/verdict
                columns of every outcomes file read, repeats collapsed, Wilson
                intervals. Target: <= 5 s for 1,000 runs.
  index, warm   runs_df() again: the fingerprint cache says nothing changed.
  index, 1 new  one run appended to: only that folder is read again.
  query         query() of one statement over every outcome (the connection, its
                views and the statement; index warm). Target: <= 1 s.
  pages         build_site(render=False) cold and again (reused pages).

Each figure is the median of ``--repeat`` runs, and the machine's load
(``os.getloadavg``) is printed beside it.

    python benchmarks/bench_history.py [--runs 1000] [--rows 200] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldenkit.history import CACHE_FILE, query, runs_df  # noqa: E402
from goldenkit.pages import build_site  # noqa: E402
from goldenkit.results import write_parquet  # noqa: E402

SLICES = [f"slice-{i}" for i in range(8)]
VERSIONS = [("1.0.0", "a" * 64), ("1.1.0", "b" * 64), ("1.2.0", "c" * 64), ("2.0.0", "d" * 64), ("2.1.0", "e" * 64)]


def _outcome(run_id: str, row: int, rep: int, verdict: str, version: tuple[str, str]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "run_id": run_id,
        "dataset_name": "support",
        "dataset_version": version[0],
        "dataset_sha256": version[1],
        "agent_version": {"git_commit": "c0ffee", "model_id": "m", "prompt_sha256": "p"},
        "judge_version": None,
        "row_id": f"row-{row:05d}",
        "slice": SLICES[row % len(SLICES)],
        "split": "holdout",
        "tags": ["multi_turn"] if row % 3 == 0 else [],
        "repeat": rep,
        "verdict": verdict,
        "detail": "timeout" if verdict == "ERROR" else None,
        "error_kind": "transient" if verdict == "ERROR" else None,
        "graders": {
            "contract": {
                "passed": verdict == "PASS",
                "score": float(verdict == "PASS"),
                "reason": "ok" if verdict == "PASS" else "missing phrase",
                "error": False,
            }
        },
        "response": f"Answer to row {row}: your refund is on its way.",
        "trajectory": [],
        "latency_ms": 120.0,
        "attempts": 1,
        "tokens_in": 50,
        "tokens_out": 20,
        "cost": None,
        "started_at": "2026-11-01T00:00:00Z",
    }


def _started(i: int) -> str:
    """Run i started 8 hours after run i - 1 (time order is run order, as nightly runs are)."""
    return (datetime(2026, 1, 1, 2, tzinfo=UTC) + timedelta(hours=8 * i)).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate(results: Path, runs: int, rows: int, seed: int = 0) -> int:
    """Write ``runs`` run folders; returns the number of outcomes written."""
    rng = random.Random(seed)
    total = 0
    for i in range(runs):
        run_id = f"nightly-{i:04d}"
        version = VERSIONS[min(len(VERSIONS) - 1, i * len(VERSIONS) // runs)]
        complete = i % 100 != 99  # one run in a hundred was interrupted: read from its JSONL
        recs = []
        for row in range(rows if complete else rows // 2):
            for rep in range(3):
                u = rng.random()
                verdict = "PASS" if u < 0.8 else "FAIL" if u < 0.995 else "ERROR"
                recs.append(_outcome(run_id, row, rep, verdict, version))
        d = results / run_id
        d.mkdir(parents=True)
        with (d / "outcomes.jsonl").open("w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs)
        if complete:
            write_parquet(recs, d / "outcomes.parquet")
        day = _started(i)
        manifest = {
            "schema_version": 1,
            "run_id": run_id,
            "dataset": {"name": "support", "version": version[0], "sha256": version[1], "path": "datasets/support"},
            "agent_version": {"git_commit": "c0ffee", "model_id": "m", "prompt_sha256": "p"},
            "judge_version": None,
            "graders": {"contract": "1"},
            "repeats": 3,
            "sample": {"split": "holdout", "per_slice": None, "seed": 0},
            "mode": "fixtures",
            "started_at": day,
            "ended_at": day,
            "validity": "VALID" if complete else "INVALID",
            "invalid_reason": None if complete else "interrupted",
            "complete": complete,
            "counts": {"expected": rows * 3, "total": len(recs)},
            "timings": {"invocations": [{}]},
        }
        (d / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
        total += len(recs)
    return total


def _median(fn: Callable[[], Any], repeat: int, before: Callable[[], None] | None = None) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="write the runs here and keep them")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="gk-bench-history-"))
    results, baselines = root / "results", root / "baselines"
    try:
        if not results.exists():
            t0 = time.perf_counter()
            n = generate(results, args.runs, args.rows)
            print(f"generated {args.runs} runs, {n:,} outcomes in {time.perf_counter() - t0:.1f} s")
        n_out = int(query("SELECT count(*) AS n FROM outcomes", results, baselines)["n"].iloc[0])
        drop = lambda: (results / CACHE_FILE).unlink(missing_ok=True)  # noqa: E731
        rows: list[tuple[str, float, str]] = []
        cold, df = _median(lambda: runs_df(results, baselines), args.repeat, drop)
        rows.append(("index, cold (runs_df, no cache)", cold, "<= 5 s"))
        runs_df(results, baselines)
        warm, _ = _median(lambda: runs_df(results, baselines), args.repeat)
        rows.append(("index, warm (cache up to date)", warm, ""))
        victim = results / "nightly-0099" / "outcomes.jsonl"  # an interrupted run goes on
        line = victim.read_text().splitlines()[-1]

        def append() -> None:
            with victim.open("a") as fh:
                fh.write(line + "\n")  # the same pair again: the last record wins

        one, _ = _median(lambda: runs_df(results, baselines), args.repeat, append)
        rows.append(("index, one run changed", one, ""))
        sql = (
            "SELECT slice, count(*) FILTER (WHERE verdict = 'FAIL') AS fails, count(*) AS outcomes "
            "FROM outcomes GROUP BY slice ORDER BY slice"
        )
        q, res = _median(lambda: query(sql, results, baselines), args.repeat)
        rows.append((f"query: fails per slice over all {n_out:,} outcomes", q, "<= 1 s"))
        sql2 = (
            "SELECT row_id, count(*) AS fails FROM outcomes WHERE verdict = 'FAIL' GROUP BY row_id "
            "ORDER BY fails DESC LIMIT 10"
        )
        q2, _ = _median(lambda: query(sql2, results, baselines), args.repeat)
        rows.append(("query: the 10 rows failing most often", q2, "<= 1 s"))
        site = root / "site"
        build = lambda: build_site(site, results, baselines, render=False)  # noqa: E731
        p1, _ = _median(build, 1, lambda: shutil.rmtree(site, True))
        rows.append(("pages --no-render, cold", p1, ""))
        p2, _ = _median(build, args.repeat)
        rows.append(("pages --no-render, nothing changed", p2, ""))
        print(f"{len(df)} runs indexed ({int((df['state'] == 'ok').sum())} ok); load {os.getloadavg()[0]:.1f}")
        print(f"{'step':<58} {'median s':>9}  target")
        for name, secs, target in rows:
            print(f"{name:<58} {secs:>9.3f}  {target}")
        print(res.to_string(index=False))
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
