"""``goldenkit report RUN [--baseline B] [-o DIR]``: the run report (and the comparison) as offline HTML.

Executes the bundled ``report.ipynb`` (package data of :mod:`goldenkit.notebooks`)
with papermill for RUN, and ``compare.ipynb`` when a baseline is given (a run
folder, run id, baseline name or baseline .json), into the run's folder or ``-o DIR``; each
executed notebook is rendered as self-contained HTML with code hidden:
``report.html`` and ``compare.html`` (beside ``report.ipynb`` / ``compare.ipynb``).

Exit 0 once the pages are written -- including when the comparison is
invalid: compare.html then states why, and ``goldenkit gate`` is the command
whose exit code decides. A missing RUN or baseline is exit 1 before any
notebook starts; a notebook cell that raises (an unknown ``--rule``, a
malformed outcome file, a bug) is exit 1 naming the notebook and the cell;
exit 3 is only for an infrastructure failure: the notebook's kernel does not
start, dies, or a cell runs past ``--timeout``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldenkit.commands._args import ALPHA, SECONDS, gate_defaults
from goldenkit.schema import RUN_FILE

if TYPE_CHECKING:
    from goldenkit.notebooks import NotebookRun


def register(subparsers: Any) -> None:
    """Add the ``report`` command."""
    p = subparsers.add_parser("report")
    p.add_argument("run", metavar="RUN", nargs="?", help="run folder, or run id under --results-dir")
    p.add_argument("--leaderboard", nargs="+", metavar="RUN", help="render leaderboard.html of these runs instead")
    p.add_argument("--baseline", metavar="B", help="compare against this run or baseline (writes compare.html)")
    p.add_argument("-o", "--output", metavar="DIR", help="write here instead of the run's folder")
    p.add_argument("--results-dir", default="results", help="where run ids are looked up (default: results)")
    p.add_argument("--baselines-dir", default="baselines", help="where baseline names are looked up")
    p.add_argument("--config", metavar="TOML", help="goldenkit.toml with the [gate] policy shown in compare.html")
    p.add_argument("--rule", default=None, help="repeat collapse rule (default: [gate] rule, else majority)")
    p.add_argument("--alpha", type=ALPHA, default=None, help="significance level (default: [gate] alpha, else 0.05)")
    p.add_argument("--timeout", type=SECONDS, default=600, help="seconds a notebook cell may run (default 600)")
    p.set_defaults(func=cmd_report)


def _ref(obj: Any) -> str:
    """An absolute reference the notebook can open whatever its working directory."""
    path = Path(obj.path)
    return str(path.resolve())


def _timing_text(run: NotebookRun) -> str:
    t = run.timings
    return (
        f"kernel start {t.get('kernel_start', 0):.1f} s, execution {t.get('execute', 0):.1f} s, "
        f"HTML export {t.get('html_export', 0):.1f} s"
    )


def _resolve(ref: str, results_dir: str, baselines_dir: str) -> Any:
    """A run folder directly; anything else (run id, baseline name or .json) as every command resolves it.

    The command process stays free of the statistics stack (the notebooks load
    it in their kernel), which saves its import time before the kernel starts.
    """
    from goldenkit.results import read_run

    if (Path(ref) / RUN_FILE).is_file():
        return read_run(ref, results_dir)
    from goldenkit.baselines import resolve_run_or_baseline

    return resolve_run_or_baseline(ref, results_dir, baselines_dir)


def _stop_notes(run_id: str, manifest: Mapping[str, Any]) -> None:
    """Print what a sequential run or one whose decided repeats stopped counts (the ledger's notes).

    The ledger (and the statistics stack it imports, about 1 s) is loaded only for such a run."""
    if not (manifest.get("sequential") or manifest.get("stop_decided_repeats")):
        return
    from goldenkit.compare import decided_repeats_note
    from goldenkit.results import sequential_line

    for said in (sequential_line(manifest), decided_repeats_note(manifest)):  # goldenkit.gate._sequential
        if said is not None:
            print(f"{run_id}: {said}")


def cmd_report(args: argparse.Namespace) -> int:
    if args.leaderboard or args.run is None:
        from goldenkit.commands._report_leaderboard import report_leaderboard

        gate_defaults(args)  # --rule / --alpha, else [gate] of --config or the current folder's goldenkit.toml

        return report_leaderboard(args)
    from goldenkit._run_label import labelled, run_label
    from goldenkit.notebooks import execute_notebooks
    from goldenkit.results import read_run

    run = read_run(args.run, args.results_dir)
    gate_defaults(args, run)
    _stop_notes(run.run_id, run.manifest)
    out_dir = Path(args.output) if args.output else run.path
    jobs: list[tuple[str | Path, Mapping[str, Any], str | None]] = [
        (
            "report",
            {
                "run": _ref(run),
                "results_dir": str(args.results_dir),
                "rule": args.rule,
                "config": str(Path(args.config).resolve()) if args.config else None,  # its [metrics] weights
            },
            f"goldenkit report: {labelled(run_label(run.manifest), run.run_id)}",  # the run's label first
        ),
    ]
    if args.baseline:
        base = _resolve(args.baseline, args.results_dir, args.baselines_dir)
        jobs.append(
            (
                "compare",
                {
                    "base": _ref(base),
                    "cand": _ref(run),
                    "results_dir": str(args.results_dir),
                    "baselines_dir": str(args.baselines_dir),
                    "rule": args.rule,
                    "alpha": args.alpha,
                    "config": str(Path(args.config).resolve()) if args.config else None,
                },
                f"goldenkit compare: {getattr(base, 'name', None) or base.run_id} vs {run.run_id}",
            )
        )
    for result in execute_notebooks(jobs, out_dir, timeout=args.timeout):
        print(f"wrote {result.html} ({_timing_text(result)})")
    sys.stdout.flush()
    return 0
