"""How long grading takes per row, for each built-in grader, on the bundled support-agent dataset.

Each row's response is its reference answer with the expected tool calls, so
every check runs on realistic text. Prints milliseconds per row (median of
``--rounds`` passes) for each grader alone and for the three together.

    python benchmarks/bench_graders.py [--dataset datasets/support-agent] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from goldenkit.dataset import read_dataset
from goldenkit.graders import build_graders, grade_case
from goldenkit.providers._base import Response, TurnOutput


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default=str(Path(__file__).resolve().parents[1] / "datasets" / "support-agent"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    ds = read_dataset(args.dataset)
    items = []
    for rid in ds.rows["id"]:
        case = ds.case(rid)
        turns = [
            TurnOutput(text=t.expected_response or case.reference or "", tool_calls=list(t.expected_tools))
            for t in case.turns
        ]
        items.append((case, Response(turns=turns)))

    print(f"{len(items)} rows of {ds.name} {ds.version}, median of {args.rounds} rounds")
    print(f"{'graders':<34} {'ms/row':>8} {'rows/s':>9}")
    for use in (["contract"], ["trajectory"], ["reference"], ["contract", "trajectory", "reference"]):
        graders = build_graders({"graders": {"use": use}})
        times = []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for case, response in items:
                grade_case(graders, case, response)
            times.append(time.perf_counter() - t0)
        per_row = statistics.median(times) / len(items)
        print(f"{' + '.join(use):<34} {per_row * 1e3:>8.3f} {1 / per_row:>9.0f}")


if __name__ == "__main__":
    main()
