"""A leaderboard of 10 runs x 100,000 rows x 3 repeats (3,000,000 outcomes), issue 16 item 9.

Ten run folders (run.json + outcomes.parquet in the results-store schema, with
responses and grader results; each run's outcomes in its own shuffled order)
are written by ``bench_stats.make_run``, the ten models differing in pass
probability by a few points. Then, timed end to end in one process:

  goldenkit: ``goldenkit.leaderboard(paths)`` -- reads row_id, slice, repeat and
  verdict of every run, checks comparability (manifests and row sets),
  collapses repeats, aligns the rows by id, Wilson intervals, pass@3 and
  pass^3, the 45 pairs' 2x2 tables (four matrix products), exact McNemar,
  Holm, Newcombe intervals, rank intervals and groups. **Target: <= 5 s.**

  naive: the same table from a straightforward per-pair loop (records from
  Parquet, dict-based collapse trying every PASS/FAIL an errored repeat could
  have had (``bench_stats.naive_majority``), a Python loop over the rows of every pair,
  scipy's binomial test per pair, statsmodels' Holm), checked to give the
  same b, c and p for every pair.

    python benchmarks/bench_leaderboard.py [--runs 10] [--rows 100000] [--repeat 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stats import make_run, naive_majority, timed  # noqa: E402

from goldenkit import leaderboard  # noqa: E402


def write_runs(folder: Path, runs: int, rows: int) -> list[Path]:
    rng = np.random.default_rng(16)
    difficulty = rng.beta(4.0, 1.5, size=rows)  # per-row pass probability of the best model
    paths = []
    for i in range(runs):
        p = np.clip(difficulty - 0.01 * i, 0.0, 1.0)  # each model a point behind the one before
        run_id = f"model-{i:02d}"
        make_run(folder, run_id, rows, p, seed=100 + i)
        paths.append(folder / run_id)
    return paths


def naive(paths: list[Path]) -> dict[tuple[str, str], tuple[int, int, float]]:
    """Per-pair Python loop: collapse by dict, count discordant rows pair by pair."""
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    collapsed: dict[str, dict[str, str]] = {}
    for path in paths:
        t = pq.read_table(path / "outcomes.parquet", columns=["row_id", "verdict"])
        votes: dict[str, list[str]] = defaultdict(list)
        for rid, v in zip(t.column("row_id").to_pylist(), t.column("verdict").to_pylist(), strict=True):
            votes[rid].append(v)
        collapsed[path.name] = {rid: naive_majority(vs) for rid, vs in votes.items()}
    rates = {
        r: sum(v == "PASS" for v in c.values()) / sum(v in ("PASS", "FAIL") for v in c.values())
        for r, c in collapsed.items()
    }
    order = sorted(collapsed, key=lambda r: (-rates[r], r))
    counts = {}
    for a, b in itertools.combinations(order, 2):
        ca, cb = collapsed[a], collapsed[b]
        b_n = c_n = 0
        for rid, va in ca.items():
            vb = cb[rid]
            if va == "PASS" and vb == "FAIL":
                b_n += 1
            elif va == "FAIL" and vb == "PASS":
                c_n += 1
        p = binomtest(min(b_n, c_n), b_n + c_n, 0.5).pvalue if b_n + c_n else 1.0
        counts[(a, b)] = (b_n, c_n, float(p))
    adj = multipletests([v[2] for v in counts.values()], method="holm")[1]
    return {k: (v[0], v[1], float(q)) for (k, v), q in zip(counts.items(), adj, strict=True)}


def goldenkit_board(paths: list[Path]) -> Any:
    return leaderboard(paths)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="timed calls of each implementation")
    ap.add_argument("--keep", type=Path, help="write the runs here and keep them")
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    try:
        paths = write_runs(folder, args.runs, args.rows)
        print(
            f"{args.runs} runs x {args.rows:,} rows x 3 repeats = {args.runs * args.rows * 3:,} outcomes; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        walls, cpus, lb = timed(goldenkit_board, paths, repeat=args.repeat)
        n_walls, n_cpus, ref = timed(naive, paths, repeat=1)
        for rec in lb.pairs.to_dict("records"):
            b, c, p_adj = ref[(rec["a"], rec["b"])]
            if (rec["b_count"], rec["c_count"]) != (b, c) or abs(rec["p_adj"] - p_adj) > 1e-9 * max(p_adj, 1e-300):
                print(f"MISMATCH {rec['a']} vs {rec['b']}: {rec} vs naive {(b, c, p_adj)}", file=sys.stderr)
                return 1
        print("| implementation | wall (median) | CPU (median) |")
        print("| --- | --- | --- |")
        print(f"| goldenkit.leaderboard | {statistics.median(walls):.2f} s | {statistics.median(cpus):.2f} s |")
        print(f"| naive per-pair loop | {n_walls[0]:.2f} s | {n_cpus[0]:.2f} s |")
        print(
            f"ratio naive / goldenkit (wall): {n_walls[0] / statistics.median(walls):.1f}x; "
            f"{len(lb.pairs)} pairs agree on b, c, Holm p; groups: {' '.join(lb.table['group'])}"
        )
        print(lb.table[["run_id", "pass_rate", "rank_low", "rank_high", "group"]].to_string(index=False))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
