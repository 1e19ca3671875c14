"""Benchmark groups for the site's leaderboard tests: small runs whose numbers are computed by hand.

``hostile_group`` writes two runs recorded under one hostile benchmark prefix
(markup in the prefix, a run id and a model name), 20 rows, 1 repeat:
``ok`` passes all 20, the other passes r0..r11 and fails r12..r19, so b = 8, c = 0.
Hand computation: exact McNemar p = 2 * 0.5**8 = 0.0078 (significant at 0.05, one
pair, so Holm leaves it); Wilson 95% for 20/20 is [83.9%, 100%] (lower bound
20 / (20 + 1.96**2)), for 12/20 [38.7%, 78.1%].
``mismatched_group`` writes two runs of one prefix with 3 and 1 repeats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from run_factory import manifest, outcomes, write_run

HOSTILE_PREFIX = 'x<i>"&'
HOSTILE_RUN = "h<img src=x onerror=alert(1)>"
HOSTILE_MODEL = "m<script>alert(1)</script>"


def benchmark_run(
    root: Path,
    run_id: str,
    prefix: str,
    passed: int,
    rows: int = 10,
    *,
    repeats: int = 1,
    model: str = "m-plain",
    **kw: Any,
) -> Path:
    """A run recorded by ``goldenkit benchmark --run-prefix PREFIX``: rows r0.. pass while i < ``passed``."""
    man = manifest(run_id, model_id=model, repeats=repeats, **kw)
    man["config"] = {"max_in_flight": 8, "extra": {"config_file": None, "benchmark": prefix}}
    data = [
        (f"r{i}", "refunds" if i % 2 else "billing", ("PASS" if i < passed else "FAIL",) * repeats) for i in range(rows)
    ]
    return write_run(root, man, outcomes(data, run_id=run_id))


def hostile_group(root: Path) -> list[Path]:
    """The two runs of :data:`HOSTILE_PREFIX` (see the module docstring) and an INVALID third, left out."""
    return [
        benchmark_run(root, "ok", HOSTILE_PREFIX, 20, 20),
        benchmark_run(root, HOSTILE_RUN, HOSTILE_PREFIX, 12, 20, model=HOSTILE_MODEL),
        benchmark_run(root, "broken", HOSTILE_PREFIX, 2, 20, validity="INVALID"),
    ]


def mismatched_group(root: Path) -> list[Path]:
    """Two runs of prefix ``odd`` that are not comparable: 3 repeats against 1."""
    return [benchmark_run(root, "odd-a", "odd", 8, repeats=3), benchmark_run(root, "odd-b", "odd", 7, repeats=1)]
