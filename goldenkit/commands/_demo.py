"""``goldenkit demo``: the whole pipeline on the bundled support-agent dataset, with no model.

Validates the dataset, runs its two recorded agent versions (``baseline`` and
``candidate``, from ``DATASET/fixtures/``) on the holdout split with 3 repeats
into ``RESULTS_DIR/demo-baseline`` and ``RESULTS_DIR/demo-candidate``,
compares them, applies the gate of the dataset's goldenkit.toml and renders
``report.html`` and ``compare.html`` into the candidate's run folder; then
prints the story the numbers tell (see :mod:`goldenkit.demo`).

The two demo runs are overwritten on every call (never resumed), so the
output always reflects the fixtures and graders as they are.

Exit codes: 0 once the story is printed, whatever the gate decided (it prints
the code ``goldenkit gate`` would give); with ``--strict``, the gate's code
(0 passed, 2 failed, 3 run not evidence, 4 not comparable). 1 bad input; 3 a
demo run is INVALID or a notebook failed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 story printed (with --strict: the gate's code), 1 bad input, 3 a run or notebook failed",
    )
    p.add_argument("--dataset", metavar="DIR", help="dataset folder (default: the bundled support-agent dataset)")
    p.add_argument("--results-dir", default="results", metavar="DIR", help="where the demo runs go (default results)")
    p.add_argument("--no-html", action="store_true", help="skip report.html and compare.html (faster)")
    p.add_argument("--strict", action="store_true", help="exit with the gate's code instead of 0")
    p.add_argument("--benchmark", action="store_true", help="three recorded agents ranked on a leaderboard instead")
    p.set_defaults(func=demo_command)


def _log(line: str) -> None:
    print(f"- {line}", flush=True)


def benchmark_demo(args: argparse.Namespace) -> int:
    """``goldenkit demo --benchmark``: the three recorded agents, their leaderboard and what it says."""
    from goldenkit.commands._leaderboard_text import format_leaderboard
    from goldenkit.demo import DEFAULT_DATASET, benchmark_story, run_benchmark

    lb = run_benchmark(args.dataset or DEFAULT_DATASET, args.results_dir, log=_log)
    print()
    print(format_leaderboard(lb))
    print()
    print(benchmark_story(lb))
    sys.stdout.flush()
    return 0


def demo_command(args: argparse.Namespace) -> int:
    from goldenkit.demo import DEFAULT_DATASET, run_demo, story

    if args.benchmark:
        return benchmark_demo(args)
    result = run_demo(args.dataset or DEFAULT_DATASET, args.results_dir, html=not args.no_html, log=_log)
    print()
    print(story(result))
    code = result.gate_exit_code
    if args.strict:
        print(f"\ngoldenkit demo --strict: exit {code} (the gate's code)")
        sys.stdout.flush()
        return code
    print(
        f"\ngoldenkit demo: exit 0 (the demo worked; the gate's verdict above is exit {code}; --strict exits with it)"
    )
    sys.stdout.flush()
    return 0


__all__ = ["demo_command", "register"]
