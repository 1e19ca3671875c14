"""``goldenkit report --leaderboard RUN [RUN ...]``: the leaderboard notebook of comparable runs as HTML."""

from __future__ import annotations

import argparse
from pathlib import Path

from goldenkit.errors import UsageError

__all__ = ["report_leaderboard"]


def report_leaderboard(args: argparse.Namespace) -> int:
    """``goldenkit report --leaderboard RUN ...``: notebooks/leaderboard.ipynb executed and rendered to HTML.

    Written to ``-o DIR``, else into the first run's folder, as ``leaderboard.html``
    (beside the executed ``leaderboard.ipynb``). Runs that are not comparable
    are exit 4 before any notebook starts.
    """

    from goldenkit.leaderboards import run_inputs
    from goldenkit.notebooks import execute_notebook, notebook_path
    from goldenkit.results import read_run

    runs = ([args.run] if args.run else []) + list(args.leaderboard or [])
    if not runs:
        raise UsageError("goldenkit report: give RUN, or --leaderboard RUN [RUN ...]")
    opened = [read_run(r, args.results_dir) for r in runs]
    run_inputs(opened, args.results_dir, args.rule)  # the protocol keys: exit 4 before the kernel starts
    out_dir = Path(args.output) if args.output else opened[0].path
    params = {
        "runs": [str(r.path.resolve()) for r in opened],
        "results_dir": str(args.results_dir),
        "alpha": args.alpha,
        "rule": args.rule,
    }
    title = "goldenkit leaderboard: " + ", ".join(r.run_id for r in opened)
    result = execute_notebook(notebook_path("leaderboard"), params, out_dir, timeout=args.timeout, title=title)
    print(f"wrote {result.html}")
    return 0
