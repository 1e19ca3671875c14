"""Clustering the flips of the 2 x 1M-outcome comparison of bench_stats (goldenkit.why).

The two runs of bench_stats.py (333,334 rows x 3 repeats, 12 slices), with a
contract reason per failing row that plants one of three causes, each with a
value that varies per row (an order id):

  row % 3 == 0   must_contain: missing "A-<row>"          -> must_contain "<value>"
  row % 3 == 1   must_not: found "guaranteed refund" ...  -> must_not "guaranteed refund"
  row % 3 == 2   must_contain_any: none of ... found      -> must_contain_any ...

No findings are stored (the worst case: every finding is read from its reason
text, as for a run written before findings). Timed: reading both sides'
findings of every flip from their reasons (what the flip list does for such a
run, :func:`goldenkit._findings.findings_in`), plus ``why(comparison)``
grouping them per slice and overall. Target: <= 2 s. The flip list's texts
(Comparison.flips, the second line of bench_stats, findings included) are read
once before, and timed on their own line.

Reference check: per slice, the NEW_FAILURE rows of each cause counted by a
plain loop over the comparison's rows and the row index, equal to why()'s.

    python benchmarks/bench_clusters.py [--rows 333334] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_stats import SLICES, make_run  # noqa: E402

from goldenkit import compare_runs, read_run, why  # noqa: E402
from goldenkit._findings import findings_in  # noqa: E402

CAUSES = ("must_contain", "must_not", "must_contain_any")


def reasons(rows: int) -> np.ndarray:
    """The failing reason of each row (see the module doc)."""
    idx = np.arange(rows)
    miss = np.char.add(np.char.add('must_contain: missing "A-', idx.astype(str)), '"')
    said = np.char.add(
        np.char.add('must_not: found "guaranteed refund" in "...order A-', idx.astype(str)),
        ' has a guaranteed refund..."',
    )
    none = np.full(rows, 'must_contain_any: none of "outside", "past the" found', dtype=object)
    return np.where(idx % 3 == 0, miss, np.where(idx % 3 == 1, said, none)).astype(object)


def reference(cmp: object) -> Counter[tuple[str, str]]:
    """(slice, cause) -> NEW_FAILURE rows, by a plain loop over the rows."""
    out: Counter[tuple[str, str]] = Counter()
    rows = cmp.rows  # type: ignore[attr-defined]
    for rid, sl, st in zip(rows["row_id"], rows["slice"].astype(str), rows["status"].astype(str), strict=True):
        if st == "NEW_FAILURE":
            out[(sl, CAUSES[int(rid.split("-")[1]) % 3])] += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=333_334, help="rows per run (x 3 repeats)")
    ap.add_argument("--flip-share", type=float, default=0.03, help="share of rows whose pass probability changes")
    ap.add_argument("--repeat", type=int, default=5, help="timed repetitions of why()")
    ap.add_argument("--keep", help="write the runs here and keep them (reused when already there)")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_clusters_"))
    results = tmp / "results"
    try:
        t0 = time.perf_counter()
        rng = np.random.default_rng(1)
        p_base = np.where(rng.random(args.rows) < 0.85, 0.97, 0.05)
        p_cand = p_base.copy()
        change = rng.random(args.rows) < args.flip_share
        p_cand[change] = 1.0 - p_cand[change]
        if not (args.keep and (results / "cand" / "run.json").is_file()):
            why_failed = reasons(args.rows)
            make_run(results, "base", args.rows, p_base, seed=2, fail_reasons=why_failed)
            make_run(results, "cand", args.rows, p_cand, seed=3, fail_reasons=why_failed)
        print(f"wrote 2 runs x {3 * args.rows:,} outcomes in {time.perf_counter() - t0:.1f} s")

        cmp = compare_runs(read_run(results / "base"), read_run(results / "cand"))
        t = time.perf_counter()
        flips = cmp.flips
        t_flips = time.perf_counter() - t
        sides = [
            (r, v == "FAIL")
            for side in ("base", "cand")
            for r, v in zip(flips[f"{side}_reasons"], flips[f"{side}_verdict"], strict=True)
        ]
        walls, cpus, reads = [], [], []
        table = why(cmp)
        for _ in range(args.repeat):
            w, c = time.perf_counter(), time.process_time()
            found = [findings_in(r, failed=failed) for r, failed in sides]
            reads.append(time.perf_counter() - w)
            table = why(cmp)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        assert sum(map(bool, found)) >= int(
            flips["status"].isin(["NEW_FAILURE", "RECOVERED"]).sum()
        )  # the failing side

        want = reference(cmp)
        per_slice = table[table["slice"].isin(SLICES)]
        got = Counter({(r["slice"], r["check"]): int(r["rows"]) for r in per_slice.to_dict("records")})
        assert got == want, (got, want)
        assert len(per_slice) == len(want)  # one subject per cause: the order ids are left out
        b = int((flips["status"] == "NEW_FAILURE").sum())
        print(f"flips {len(flips):,} (NEW_FAILURE {b:,}); cluster lines {len(table)}; reference check OK")
        print(f"{'reading the flip list (responses, reasons, findings)':<56} {t_flips:>9.3f} s")
        print(f"{'  of which the findings read from both sides reasons':<56} {statistics.median(reads):>9.3f} s median")
        print(
            f"{'clustering: findings read + why(comparison)':<56} {statistics.median(walls):>9.3f} s median, "
            f"{min(walls):.3f} s best, cpu {statistics.median(cpus):.3f} s ({len(walls)} runs)"
        )
        target = 2.0
        verdict = "OK" if min(walls) <= target else "OVER"
        print(f"target <= {target:.1f} s: {verdict}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
