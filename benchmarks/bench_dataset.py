"""Benchmark: read + validate + hash a large dataset.

Generates a dataset folder of ``--rows`` (default 100,000) contract-shape rows of
about 1 KB each in a temporary directory, then times, over ``--repeat`` runs:

* raw ``hashlib.sha256`` over the file's bytes (the yardstick),
* ``canonical_sha256`` over the same bytes (LF file, and the same rows with CRLF),
* the whole ``read_dataset`` (file read, parse, validation, hash), and the same
  followed by its ``.rows`` DataFrame (built on first access),
* and the phases (line split, JSON parse + row checks, sort + hash, the DataFrame).

Prints one table with the best and median time, rows/s, MB/s and throughput as
a percentage of raw SHA-256. Usage::

    python benchmarks/bench_dataset.py [--rows 100000] [--repeat 5] [--shape tools|golden]

To compare with an earlier version, run the script under both, one after the
other, with that version first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from goldenkit.dataset import Dataset, canonical_sha256, read_dataset
from goldenkit.dataset._lines import sha256_of_lines, split_lines
from goldenkit.dataset._problems import Problems
from goldenkit.dataset._rows import check_rows, rows_frame

SLICES = [
    "refunds",
    "order_status",
    "shipping",
    "returns",
    "billing",
    "account",
    "cancellations",
    "product_info",
    "warranty",
    "complaints",
    "escalation",
    "policy_safety",
]
WORDS = (
    "order refund window days policy shipping tracking parcel invoice account password warranty "
    "replace exchange customer agent please thanks delayed damaged missing item store credit card"
).split()


def make_rows(n: int, seed: int = 1, shape: str = "tools") -> list[bytes]:
    """n JSONL lines of about 1 KB, in one of two case shapes.

    ``tools``: a contract case with a system prompt, a tool declaration, a recorded
    tool response, a reference and expectations including the expected tool call
    (16 JSON objects and arrays per row). ``golden``: a golden-style case, a longer
    prompt and reference with must_contain / must_not / regex lists (7 per row).
    Parsing cost follows the number of objects more than the number of bytes.
    """
    rnd = random.Random(seed)
    lines = []
    for i in range(n):
        name = SLICES[i % len(SLICES)]
        if shape == "golden":
            prompt = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(40, 60)))
            reference = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(45, 65)))
            case: dict[str, object] = {
                "prompt": prompt.capitalize() + "?",
                "reference": reference,
                "expect": {
                    "must_contain": [rnd.choice(WORDS), rnd.choice(WORDS)],
                    "must_not": ["guarantee", "lawyer", "100% sure"],
                    "regex": [r"\b(order|refund)\b"],
                },
            }
        else:
            prompt = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(18, 34)))
            reference = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(22, 38)))
            case = {
                "prompt": prompt.capitalize() + "?",
                "system": "You are the support agent of an online shop. Use the tools; never guess order data.",
                "tools": [
                    {"name": "lookup_order", "description": "Look up an order", "parameters": {"type": "object"}}
                ],
                "tool_responses": [
                    {"name": "lookup_order", "args": {"order_id": f"A-{i}"}, "response": {"status": "delivered"}}
                ],
                "reference": reference,
                "expect": {
                    "must_contain_any": ["refund", "order"],
                    "must_not": ["guarantee", "lawyer"],
                    "tools": [{"name": "lookup_order", "args": {"order_id": f"A-{i}"}}],
                },
            }
        row = {
            "id": f"{name}-{i:06d}",
            "slice": name,
            "tags": rnd.sample(["multi_turn", "tool_error", "adversarial", "long_context"], k=rnd.randint(0, 2)),
            "split": "holdout" if rnd.random() < 0.2 else "dev",
            "source": rnd.choice(["prod-2026-09", "prod-2026-10", "synthetic"]),
            "added": "2026-09-18",
            "case": case,
        }
        lines.append(json.dumps(row, ensure_ascii=False).encode())
    rnd.shuffle(lines)
    return lines


def timed(fn: Callable[[], object], repeat: int) -> list[tuple[float, float]]:
    """(wall seconds, CPU seconds of all threads) of each run.

    The result is freed after the clock stops: freeing 100,000 parsed rows takes a
    while, and it is not part of reading them.
    """
    times = []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        times.append((time.perf_counter() - w0, time.process_time() - c0))
        del result
    return times


def every_raw_case(ds: Dataset) -> list[dict[str, object]]:
    """Every row's case, parsed from its line (what a run's normalization asks for)."""
    return [ds.raw_case(row_id) for row_id in ds.ids]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shape", choices=("tools", "golden"), default="tools", help="case shape of the rows")
    args = parser.parse_args(argv)

    lines = make_rows(args.rows, shape=args.shape)
    data = b"\n".join(lines) + b"\n"
    crlf = b"\r\n".join(lines) + b"\r\n"
    del lines
    n, mb = args.rows, len(data) / 1e6
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bench"
        folder.mkdir()
        (folder / "dataset.jsonl").write_bytes(data)
        manifest = {"name": "bench", "version": "1", "changelog": [{"version": "1", "date": "2026-11-30", "why": "x"}]}
        (folder / "dataset.json").write_text(json.dumps(manifest))

        expected = canonical_sha256(data)
        assert canonical_sha256(crlf) == expected, "CRLF must hash like LF"
        assert read_dataset(folder).sha256 == expected

        steps: list[tuple[str, list[tuple[float, float]], float]] = []
        # Interleave raw and canonical runs so both see the same machine load.
        raw_t: list[tuple[float, float]] = []
        canon_t: list[tuple[float, float]] = []
        for _ in range(args.repeat):
            raw_t += timed(lambda: hashlib.sha256(data).hexdigest(), 1)
            canon_t += timed(lambda: canonical_sha256(data), 1)
        steps.append(("raw hashlib.sha256", raw_t, mb))
        steps.append(("canonical_sha256 (LF)", canon_t, mb))
        steps.append(("canonical_sha256 (CRLF)", timed(lambda: canonical_sha256(crlf), args.repeat), len(crlf) / 1e6))
        steps.append(("read_dataset (whole)", timed(lambda: read_dataset(folder), args.repeat), mb))
        import pandas  # noqa: F401  # once, before the clock: `.rows` pays the DataFrame, not the import

        steps.append(("read_dataset + .rows", timed(lambda: read_dataset(folder).rows, args.repeat), mb))
        # What the cyclic garbage collector costs while the rows are built: the same call with the
        # collector disabled by the caller (read_dataset never changes it; an application may).
        gc.disable()
        try:
            steps.append(("  (caller disabled gc)", timed(lambda: read_dataset(folder), args.repeat), mb))
        finally:
            gc.enable()

        # What holding the rows costs the cyclic garbage collector: one full pass.
        kept = read_dataset(folder)
        steps.append(("  full gc.collect(), rows held", timed(gc.collect, 1), mb))
        # The cases are parsed from their lines when asked for: every row's, once.
        steps.append(("after: raw_case of every row", timed(partial(every_raw_case, kept), 1), mb))
        del kept

        # read_dataset's phases, one at a time.
        lines = split_lines(data)
        steps.append(("  phase: line split + strip", timed(partial(split_lines, data), args.repeat), mb))
        problems = Problems("bench", lines.numbers)
        steps.append(
            ("  phase: parse + check rows", timed(partial(check_rows, lines, problems, None), args.repeat), mb)
        )
        columns = check_rows(lines, problems, None)
        steps.append(("  phase: DataFrame (.rows)", timed(partial(rows_frame, columns), args.repeat), mb))
        del columns
        steps.append(("  phase: sort + hash", timed(partial(sha256_of_lines, lines.texts), args.repeat), mb))

    raw_wall = min(w for w, _ in raw_t)
    raw_cpu = min(c for _, c in raw_t)
    print(
        f"{n:,} rows of the {args.shape!r} shape, {mb:.1f} MB ({len(data) / n:.0f} bytes/row);"
        f" best and median of {args.repeat} runs"
    )
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after"
    )
    print("wall = elapsed time; cpu = CPU time of all the process's threads (less sensitive to other load)")
    print()
    header = (
        f"{'step':<26} {'wall best':>9} {'wall med':>9} {'cpu best':>9} {'rows/s':>10} {'MB/s':>7}"
        f" {'%raw wall':>9} {'%raw cpu':>9}"
    )
    print(header)
    print("-" * len(header))
    for label, times, size in steps:
        walls = [w for w, _ in times]
        best, median, cpu = min(walls), statistics.median(walls), min(c for _, c in times)
        print(
            f"{label:<26} {best:>9.3f} {median:>9.3f} {cpu:>9.3f} {n / best:>10,.0f} {size / best:>7.0f}"
            f" {100 * raw_wall / best:>8.0f}% {100 * raw_cpu / max(cpu, 1e-9):>8.0f}%"
        )
    ratio = [r[0] / c[0] for r, c in zip(raw_t, canon_t, strict=True)]
    print()
    print(f"canonical/raw wall throughput, paired runs: best {max(ratio):.0%}, median {statistics.median(ratio):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
