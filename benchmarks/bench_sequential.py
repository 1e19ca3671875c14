"""Calls to a verdict: the sequential gate against the fixed-size run (3 repeats, majority).

For each case a baseline and a candidate are run in full (``run_eval``, 3 repeats), the fixed-size
gate is applied (``evaluate_gate``: its exit code), and the sequential gate is replayed over
``--orders`` random design orders of the candidate's run (``goldenkit.gate._sequential.replay_sequential``,
what ``goldenkit gate --replay-sequential`` prints): per order its decision, the rows it read and
the calls it would have made, decided repeats stopped. Printed: the median calls against the
fixed-size run's, with the targets of the sequential gate.

Cases:

* **demo**: the bundled support-agent dataset with the demo's recorded baseline and candidate
  (the refunds regression), its own goldenkit.toml policy;
* **regression**: a planted 15-point regression on 400 rows (simulated callable agents);
* **no change**: identical agents, 10% flaky rows (each run draws its own coin flips);
* **gain**: the candidate fixes 5 points of rows.

Targets: the planted regression decided (exit 2) with at most 30% of the fixed-size calls; no
change decided (exit 0, margin 0.05) with at most 70%; the demo with the fixed-size gate's exit
code and fewer calls. Run: ``.venv/bin/python benchmarks/bench_sequential.py [--orders 50]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from goldenkit.compare import compare_runs
from goldenkit.config import load_config, section
from goldenkit.dataset import read_dataset
from goldenkit.demo._story import AGENTS, DEFAULT_DATASET, replay_agent
from goldenkit.gate import GatePolicy, evaluate_gate
from goldenkit.gate._replay import replay_sequential
from goldenkit.providers._callable import CallableProvider
from goldenkit.records import Case
from goldenkit.results import read_run
from goldenkit.runner import run_eval

ROWS = 400
SLICES = ("billing", "refunds", "shipping", "account")
SALT = {"run": "a"}  # each run of the flaky agents draws its own coin flips


def _u(*parts: object) -> float:
    h = hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def _base_pass(q: str, repeat: int) -> bool:
    """75% of rows always pass, 10% are coin flips per call (flaky), 15% always fail."""
    u = _u("row", q)
    if u < 0.75:
        return True
    if u < 0.85:
        return _u("coin", q, repeat, SALT["run"]) < 0.5
    return False


def base_agent(case: Case, repeat: int = 0) -> str:
    return "yes" if _base_pass(case.turns[-1].user, repeat) else "no"


def regressed_agent(case: Case, repeat: int = 0) -> str:
    """A fifth of the always-passing rows (15 points of all rows) now fail."""
    q = case.turns[-1].user
    if _u("row", q) < 0.75 and _u("broken", q) < 0.2:
        return "no"
    return base_agent(case, repeat)


def gaining_agent(case: Case, repeat: int = 0) -> str:
    """A third of the always-failing rows (5 points of all rows) now pass."""
    q = case.turns[-1].user
    if _u("row", q) >= 0.85 and _u("fixed", q) < 1 / 3:
        return "yes"
    return base_agent(case, repeat)


def _dataset(root: Path) -> Path:
    ds = root / "ds"
    ds.mkdir(parents=True, exist_ok=True)
    log = [{"version": "1.0.0", "date": "2026-01-01", "why": "bench"}]
    (ds / "dataset.json").write_text(json.dumps({"name": "bench", "version": "1.0.0", "changelog": log}))
    rows = []
    for i in range(ROWS):
        sl = SLICES[i % len(SLICES)]
        case = {"prompt": f"{sl} question {i}", "expect": {"must_contain": ["yes"]}}
        rows.append({"id": f"{sl}-{i:03d}", "slice": sl, "split": "dev", "case": case})
    (ds / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return ds


def _simulated(root: Path, cand: Callable[..., str], policy: GatePolicy) -> tuple[Any, Any]:
    ds = read_dataset(_dataset(root))
    runs = []
    for run_id, fn in (("base", base_agent), ("cand", cand)):
        SALT["run"] = run_id
        run_eval(ds, CallableProvider(fn, threads=0), ["contract"], repeats=3, run_id=run_id, results_dir=root / "r")
        runs.append(read_run(root / "r" / run_id))
    return runs[0], runs[1]


def _demo(root: Path) -> tuple[Any, Any, GatePolicy]:
    cfg = load_config(None, dataset_dir=DEFAULT_DATASET)
    policy = GatePolicy.from_config(section(cfg, "gate"))
    ds = read_dataset(DEFAULT_DATASET)
    for agent in AGENTS:
        replay_agent(ds, cfg, policy, Path(DEFAULT_DATASET), root / "r", agent, say=lambda _: None)
    base, cand = (read_run(root / "r" / f"demo-{agent}") for agent in AGENTS)
    return base, cand, policy


def measure(name: str, base: Any, cand: Any, policy: GatePolicy, orders: int) -> dict[str, Any]:
    fixed = evaluate_gate(cand, policy=policy, baseline=base)
    comparison = compare_runs(base, cand, rule=policy.rule, alpha=policy.alpha)
    outcomes = cand.outcomes(columns=["row_id", "repeat", "verdict"])
    replay = replay_sequential(comparison, outcomes, policy, orders=orders, seed=0)
    exits = [{"regression": 2, "non_inferior": 0, "undecided": 3}[d] for d in replay.decisions]
    return {
        "case": name,
        "rows": replay.rows_total,
        "fixed_calls": replay.calls_full,
        "fixed_exit": fixed.exit_code,
        "seq_exit": max(set(exits), key=exits.count),
        "exit_share": exits.count(max(set(exits), key=exits.count)) / len(exits),
        "median_calls": float(np.median(replay.calls)),
        "calls_range": (int(replay.calls.min()), int(replay.calls.max())),
        "median_rows": float(np.median(replay.rows)),
    }


TARGETS = {
    "demo": lambda r: r["seq_exit"] == r["fixed_exit"] and r["median_calls"] < r["fixed_calls"],
    "regression 15 pts": lambda r: r["seq_exit"] == 2 and r["median_calls"] <= 0.30 * r["fixed_calls"],
    "no change": lambda r: r["seq_exit"] == 0 and r["median_calls"] <= 0.70 * r["fixed_calls"],
    "gain 5 pts": lambda r: r["seq_exit"] in (0, 3),
}
TARGET_TEXT = {
    "demo": "same exit, fewer calls",
    "regression 15 pts": "exit 2, <= 30%",
    "no change": "exit 0, <= 70%",
    "gain 5 pts": "(no target)",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--orders", type=int, default=50, help="random orders per case (default 50)")
    args = ap.parse_args()
    policy = GatePolicy(non_inferiority_margin=0.05)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base, cand, demo_policy = _demo(root / "demo")
        results.append(measure("demo", base, cand, demo_policy, args.orders))
        for name, fn in (
            ("regression 15 pts", regressed_agent),
            ("no change", base_agent),
            ("gain 5 pts", gaining_agent),
        ):
            b, c = _simulated(root / name.replace(" ", "-"), fn, policy)
            results.append(measure(name, b, c, policy, args.orders))
    print("case               rows  fixed calls  fixed exit  seq exit (share)  median calls [range]   share", end="")
    print("   rows read  target")
    for r in results:
        ok = "met" if TARGETS[r["case"]](r) else "NOT MET"
        lo, hi = r["calls_range"]
        print(
            f"{r['case']:<18} {r['rows']:>4}  {r['fixed_calls']:>11}  {r['fixed_exit']:>10}  "
            f"{r['seq_exit']:>8} ({r['exit_share']:.0%})  {r['median_calls']:>7g} [{lo}-{hi}]  "
            f"{r['median_calls'] / r['fixed_calls']:>6.1%}  {r['median_rows']:>9g}  {TARGET_TEXT[r['case']]}: {ok}"
        )


if __name__ == "__main__":
    main()
