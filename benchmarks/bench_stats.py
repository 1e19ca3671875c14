"""Statistics and paired comparison at scale (issue 5, item 7).

Two runs of 1,000,000 outcomes each (333,334 rows x 3 repeats, 12 slices) are
written as results folders (run.json + outcomes.parquet in the results-store
schema, with responses and grader results). Then, timed end to end:

  goldenkit: read_run x 2 -> compare_runs (reads row_id, slice, repeat, verdict
  and error_kind of both runs with results.light_outcomes, collapses repeats,
  joins the two collapsed tables on row_id with a pandas index, per-slice
  Wilson intervals, exact McNemar, Holm, Newcombe paired intervals, the flip
  list's rows) -> slice_table of each side. Target: <= 2 s.
  A second line adds the flip list's texts (``Comparison.flips``: both
  responses and grader reasons of every flipped row, read from Parquet).

  naive: the same answer from a straightforward per-row Python implementation
  (records from Parquet, dict-based collapse and join, per-slice loops with
  scipy's binomial CDF, flip list by lookups), in the same process, checked to
  give the same b, c and p per slice.

    python benchmarks/bench_stats.py [--rows 333334] [--flip-share 0.03] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldenkit.compare import compare_runs  # noqa: E402
from goldenkit.results import OUTCOME_SCHEMA, read_run  # noqa: E402
from goldenkit.stats import holm, mcnemar_exact, slice_table, wilson_ci  # noqa: E402

SLICES = [f"slice_{i:02d}" for i in range(12)]
SHA = "ab" * 32


def make_run(
    folder: Path, run_id: str, rows: int, pass_prob: np.ndarray, seed: int, fail_reasons: np.ndarray | None = None
) -> None:
    """Write results/<run_id>/ with run.json and a 3-repeat outcomes.parquet (``fail_reasons``: the
    contract reason of each row's failing repeats, default one text for all; no findings stored)."""
    rng = np.random.default_rng(seed)
    reps = 3
    n = rows * reps
    row_idx = np.repeat(np.arange(rows), reps)
    row_ids = np.char.add("row-", np.arange(rows).astype(str))
    slice_of_row = np.arange(rows) % len(SLICES)
    passed = rng.random(n) < pass_prob[row_idx]
    err = rng.random(n) < 0.002
    verdict = np.where(err, "ERROR", np.where(passed, "PASS", "FAIL"))
    failing = "missing required phrase" if fail_reasons is None else fail_reasons[row_idx]
    resp = [f"{run_id} answer for row {r} repeat {k}" for r, k in zip(row_idx.tolist(), [0, 1, 2] * rows, strict=True)]
    grade = pa.StructArray.from_arrays(
        [
            pa.array(passed),
            pa.array(passed.astype(float)),
            pa.array(np.where(passed, "all checks passed", failing).tolist()),
            pa.array(np.zeros(n, dtype=bool)),
            pa.nulls(n, pa.string()),  # findings: none stored, as in a run written before them
        ],
        fields=list(OUTCOME_SCHEMA.field("graders").type.item_type),
    )
    offsets = pa.array(np.arange(n + 1, dtype=np.int32))
    graders = pa.MapArray.from_arrays(offsets, pa.array(["contract"] * n), grade)
    null_str = pa.nulls(n, pa.string())
    cols = {
        "schema_version": pa.array(np.ones(n, dtype=np.int64)),
        "run_id": pa.array([run_id] * n),
        "dataset_name": pa.array(["bench"] * n),
        "dataset_version": pa.array(["1"] * n),
        "dataset_sha256": pa.array([SHA] * n),
        "agent_version": pa.nulls(n, OUTCOME_SCHEMA.field("agent_version").type),
        "judge_version": null_str,
        "row_id": pa.array(row_ids[row_idx]),
        "slice": pa.array(np.array(SLICES)[slice_of_row[row_idx]]),
        "split": pa.array(["holdout"] * n),
        "tags": pa.array([["bench"]] * n, type=pa.list_(pa.string())),
        "repeat": pa.array(np.tile(np.arange(reps, dtype=np.int64), rows)),
        "verdict": pa.array(verdict),
        "detail": pa.array(np.where(err, "timeout", None).tolist(), type=pa.string()),
        "error_kind": pa.array(np.where(err, "transient", None).tolist(), type=pa.string()),
        "graders": graders,
        "response": pa.array(resp),
        "trajectory": null_str,
        "latency_ms": pa.array(rng.random(n) * 1000),
        "ttft_ms": pa.nulls(n, pa.float64()),
        "attempts": pa.array(np.ones(n, dtype=np.int64)),
        "tokens_in": pa.array(np.full(n, 100, dtype=np.int64)),
        "tokens_out": pa.array(np.full(n, 20, dtype=np.int64)),
        "cost": pa.nulls(n, pa.float64()),
        "started_at": pa.array(["2026-11-30T10:00:00Z"] * n),
    }
    table = pa.table({k: cols[k].cast(OUTCOME_SCHEMA.field(k).type) for k in OUTCOME_SCHEMA.names})
    # outcomes land in completion order, which differs between runs: shuffle each run
    # independently (the worst case: the two runs share no order, so rows must be joined by id)
    table = table.take(pa.array(rng.permutation(n)))
    d = folder / run_id
    d.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, d / "outcomes.parquet", compression="zstd", row_group_size=256 * 1024)
    counts = {v: int((verdict == v).sum()) for v in ("PASS", "FAIL", "ERROR", "SKIPPED")}
    counts.update(total=n, expected=n)
    man = {
        "schema_version": 1,
        "run_id": run_id,
        "dataset": {"name": "bench", "version": "1", "sha256": SHA, "path": "bench"},
        "agent_version": {"git_commit": run_id, "model_id": "bench", "prompt_sha256": "0" * 64},
        "judge_version": None,
        "graders": {"contract": "1"},
        "repeats": reps,
        "sample": {"split": None, "per_slice": None, "seed": 0},
        "mode": "fixtures",
        "provider": {"name": "fixtures", "settings": {}},
        "counts": counts,
        "error_rate": counts["ERROR"] / n,
        "max_error_rate": 0.02,
        "validity": "VALID",
        "invalid_reason": None,
        "complete": True,
        "timings": {},
    }
    (d / "run.json").write_text(json.dumps(man), encoding="utf-8")


def goldenkit_pipeline(results: Path, texts: bool = False) -> dict[str, Any]:
    base = read_run(results / "base")
    cand = read_run(results / "cand")
    cmp = compare_runs(base, cand)
    base_table = slice_table(cmp.base_collapsed)
    cand_table = slice_table(cmp.cand_collapsed)
    flips = cmp.flips if texts else cmp.flip_rows
    return {"cmp": cmp, "base_table": base_table, "cand_table": cand_table, "flips": flips}


def goldenkit_with_texts(results: Path) -> dict[str, Any]:
    return goldenkit_pipeline(results, texts=True)


def side_by_side(results: Path, path: Path, repeat: int) -> list[tuple[list[float], list[float]]]:
    """The current compare_runs and the one in ``path``, alternating which goes first, in this process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_against", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compare_against"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)

    def run(fn: Any) -> None:
        cmp = fn(read_run(results / "base"), read_run(results / "cand"))
        slice_table(cmp.base_collapsed)
        slice_table(cmp.cand_collapsed)

    times: list[tuple[list[float], list[float]]] = [([], []), ([], [])]
    for i in range(repeat):
        order = [(0, compare_runs), (1, mod.compare_runs)]
        for k, fn in order if i % 2 == 0 else order[::-1]:
            w, c = time.perf_counter(), time.process_time()
            run(fn)
            times[k][0].append(time.perf_counter() - w)
            times[k][1].append(time.process_time() - c)
    return times


def naive_majority(verdicts: list[str]) -> str:
    """A row's verdict under majority, by trying every PASS/FAIL its errored repeats could have had."""
    graded = [v for v in verdicts if v in ("PASS", "FAIL")]
    errors = verdicts.count("ERROR")
    if not graded:
        return "ERROR" if errors else "SKIPPED"
    seen = set()
    for fill in itertools.product(("PASS", "FAIL"), repeat=errors):
        every = graded + list(fill)
        seen.add("PASS" if every.count("PASS") > len(every) / 2 else "FAIL")
    return seen.pop() if len(seen) == 1 else "ERROR"  # undecided: an error row


def naive_pipeline(results: Path) -> dict[str, Any]:
    """Per-row Python: records, dicts and loops (what one writes without vectorizing)."""
    sides = {}
    for name in ("base", "cand"):
        recs = pq.read_table(results / name / "outcomes.parquet", columns=["row_id", "slice", "verdict"]).to_pylist()
        votes: dict[str, list[str]] = defaultdict(list)
        slice_of: dict[str, str] = {}
        for r in recs:
            votes[r["row_id"]].append(r["verdict"])
            slice_of[r["row_id"]] = r["slice"]
        collapsed = {rid: naive_majority(vs) for rid, vs in votes.items()}
        per_slice: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for rid, v in collapsed.items():
            if v in ("PASS", "FAIL"):
                per_slice[slice_of[rid]][0] += 1
                per_slice[slice_of[rid]][1] += v == "PASS"
        table = {s: (n, k, *wilson_ci(k, n)) for s, (n, k) in per_slice.items()}
        sides[name] = (collapsed, slice_of, table)
    (bcol, slice_of, _), (ccol, _, _) = sides["base"], sides["cand"]
    bc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    flips = []
    for rid, bv in bcol.items():
        cv = ccol[rid]
        if bv == "PASS" and cv == "FAIL":
            bc[slice_of[rid]][0] += 1
            flips.append((rid, "NEW_FAILURE"))
        elif bv == "FAIL" and cv == "PASS":
            bc[slice_of[rid]][1] += 1
            flips.append((rid, "RECOVERED"))
    names = sorted(bc)
    p = [mcnemar_exact(*bc[s]) for s in names]
    p_adj = holm(p)
    flip_ids = {rid for rid, _ in flips}
    details = {}
    for name in ("base", "cand"):
        t = pq.read_table(results / name / "outcomes.parquet", columns=["row_id", "repeat", "response", "graders"])
        for r in t.to_pylist():
            if r["row_id"] in flip_ids and r["repeat"] == 0:
                details[(name, r["row_id"])] = (r["response"], r["graders"])
    return {
        "bc": {s: tuple(bc[s]) for s in names},
        "p": dict(zip(names, p, strict=True)),
        "p_adj": dict(zip(names, p_adj, strict=True)),
        "flips": len(flips),
        "details": len(details),
    }


def timed(fn: Any, *args: Any, repeat: int = 5) -> tuple[list[float], list[float], Any]:
    """Wall-clock and CPU seconds of each call (CPU time is what a busy machine inflates least)."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=333_334, help="rows per run (x 3 repeats)")
    ap.add_argument("--flip-share", type=float, default=0.03, help="share of rows whose pass probability changes")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions of the goldenkit pipeline")
    ap.add_argument("--keep", help="write the runs here and keep them (reused when already there)")
    ap.add_argument(
        "--against",
        help="another compare.py (e.g. an earlier version from git show) timed in the same process, "
        "alternating with the current one",
    )
    args = ap.parse_args()

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_stats_"))
    results = tmp / "results"
    try:
        t0 = time.perf_counter()
        rng = np.random.default_rng(1)
        p_base = np.where(rng.random(args.rows) < 0.85, 0.97, 0.05)
        p_cand = p_base.copy()
        change = rng.random(args.rows) < args.flip_share
        p_cand[change] = 1.0 - p_cand[change]
        if not (args.keep and (results / "cand" / "run.json").is_file()):  # --keep DIR reuses its runs
            make_run(results, "base", args.rows, p_base, seed=2)
            make_run(results, "cand", args.rows, p_cand, seed=3)
        size = sum(f.stat().st_size for f in results.rglob("outcomes.parquet")) / 2**20
        print(f"wrote 2 runs x {3 * args.rows:,} outcomes ({size:.0f} MiB Parquet) in {time.perf_counter() - t0:.1f} s")

        load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
        other: list[tuple[list[float], list[float]]] = []
        if args.against:
            other = side_by_side(results, Path(args.against), args.repeat)
        gk_times, gk_cpu, gk = timed(goldenkit_pipeline, results, repeat=args.repeat)
        tx_times, tx_cpu, tx = timed(goldenkit_with_texts, results, repeat=args.repeat)
        nv_times, nv_cpu, nv = timed(naive_pipeline, results, repeat=1)
        cmp = gk["cmp"]
        sl = cmp.slices.set_index("slice")
        for s, (b, c) in nv["bc"].items():
            assert (int(sl.at[s, "b"]), int(sl.at[s, "c"])) == (b, c), s
            assert np.isclose(sl.at[s, "p_val"], nv["p"][s]) and np.isclose(sl.at[s, "p_adj"], nv["p_adj"][s]), s
        assert len(cmp.flips[cmp.flips["status"].isin(["NEW_FAILURE", "RECOVERED"])]) == nv["flips"]
        assert tx["flips"]["base_response"].notna().all() and tx["flips"]["cand_reasons"].map(bool).all()

        ov = cmp.overall
        print(
            f"rows {int(ov['rows']):,}  flips {len(cmp.flips):,} (b={int(ov['b']):,} c={int(ov['c']):,}, "
            f"{int(ov['new_error'] + ov['error_cleared'])} error changes)  slices {len(cmp.slices)}"
        )
        try:
            la = os.getloadavg()
            before = f"{load_before[0]:.1f} before, " if load_before else ""
            load = f" (1-min load average {before}{la[0]:.1f} after; {la[2]:.1f} over 15 min; {os.cpu_count()} cores)"
        except OSError:
            load = ""
        print()
        print(f"{'pipeline':<56} {'wall med':>9} {'wall min':>9} {'cpu med':>8} {'runs':>5}")
        print(
            f"{'goldenkit: read 2 runs, collapse, slice tables, compare':<56} "
            f"{statistics.median(gk_times):>9.3f} {min(gk_times):>9.3f} {statistics.median(gk_cpu):>8.3f} "
            f"{len(gk_times):>5}"
        )
        print(
            f"{'  + flip texts (responses, reasons) of every flip':<56} "
            f"{statistics.median(tx_times):>9.3f} {min(tx_times):>9.3f} {statistics.median(tx_cpu):>8.3f} "
            f"{len(tx_times):>5}"
        )
        labels = ("side by side: current", f"side by side: {args.against}")
        for label, (walls, cpus) in zip(labels, other, strict=False):
            print(
                f"{label[:56]:<56} {statistics.median(walls):>9.3f} {min(walls):>9.3f} "
                f"{statistics.median(cpus):>8.3f} {len(walls):>5}"
            )
        print(
            f"{'naive per-row Python (same answer, checked)':<56} "
            f"{nv_times[0]:>9.3f} {nv_times[0]:>9.3f} {nv_cpu[0]:>8.3f} {1:>5}"
        )
        print()
        target = 2.0
        best = min(gk_times)
        verdict = "OK" if best <= target else "OVER"
        print(
            f"target <= {target:.1f} s: {verdict} (best wall {best:.3f} s, median {statistics.median(gk_times):.3f} s; "
            f"naive is {nv_times[0] / statistics.median(gk_times):.0f}x slower){load}"
        )
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
