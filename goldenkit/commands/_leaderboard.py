"""``goldenkit leaderboard RUN [RUN ...]``: rank comparable runs and say which differences are evidence.

RUN is a run folder or a run id under ``--results-dir``. Prints the table (pass
rate with its Wilson interval, pass@k and pass^k, the rank interval and group)
and every pair (b, c, exact McNemar p, Holm-adjusted p, paired difference with
Newcombe's interval), then what a passing row cost (tokens, and money where the
provider returned a price or ``[pricing]`` gives one -- of ``--config``, else of the
goldenkit.toml each run recorded -- labelled;
``n/a`` otherwise), the p50 latency and the quality-cost frontier with each
run's probability of being on it (a paired bootstrap over rows:
``--frontier-resamples``, ``--frontier-seed``, both recorded). ``--json`` prints
``{"table": [...], "pairs": [...], "frontier": {...}}`` (numbers as JSON numbers,
NaN as null). ``--slice S`` ranks on the rows of one slice. See
:mod:`goldenkit.leaderboards._ranking` for the definitions.

Exit codes: 0 ranked · 1 bad input (unknown run or slice) · 4 the runs are not
comparable (the message names the odd run and each key that differs).
"""

from __future__ import annotations

import argparse
from typing import Any

from goldenkit.commands._args import ALPHA, integer

# the leaderboard text, report --leaderboard and compare --pairwise-judge live in their own modules;
# their names stay importable from here
from goldenkit.commands._leaderboard_text import format_leaderboard, show
from goldenkit.commands._pairwise_judge import format_pairwise, pairwise_for_compare
from goldenkit.commands._report_leaderboard import report_leaderboard
from goldenkit.config import load_config, pricing
from goldenkit.errors import InputError, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "leaderboard",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 ranked, 1 usage or bad input, 4 comparison invalid",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders or run ids under --results-dir")
    p.add_argument(
        "--config", metavar="FILE", help="goldenkit.toml whose [pricing] prices the runs (default: each run's own)"
    )
    add_options(p)
    p.set_defaults(func=leaderboard_command)


def add_options(p: Any, *, results_dir: bool = True) -> None:
    """The options `goldenkit leaderboard` and `goldenkit benchmark` share."""
    p.add_argument("--json", action="store_true", help='print {"table": [...], "pairs": [...]} as JSON')
    p.add_argument("--slice", metavar="S", help="rank on the rows of slice S only")
    p.add_argument("--alpha", type=ALPHA, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--rule", default="majority", help="collapse rule: majority, all, any, at_least:K")
    p.add_argument("--k", type=int, dest="at_k", help="k of pass@k and pass^k (default: the runs' repeats)")
    p.add_argument(
        "--frontier-resamples",
        type=integer(at_least=1),
        default=2000,
        metavar="N",
        help="bootstrap resamples of the quality-cost frontier (default 2000)",
    )
    p.add_argument(
        "--frontier-seed",
        type=integer(at_least=0),
        default=0,
        metavar="S",
        help="seed of the frontier's bootstrap (default 0; recorded in the output)",
    )
    if results_dir:
        p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")


def compute(runs: Any, args: argparse.Namespace, cfg: dict[str, Any] | None = None) -> Any:
    """The leaderboard the options ask for (one slice with ``--slice``); ``cfg``'s ``[pricing]`` prices the
    runs (default: the goldenkit.toml of ``--config``, else each run's recorded one)."""
    from goldenkit.leaderboards import Leaderboard, leaderboard

    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha must be in (0, 1), got {args.alpha}")
    if cfg is None and getattr(args, "config", None):
        cfg = load_config(args.config)
    lb = leaderboard(
        runs,
        args.alpha,
        args.rule,
        k=args.at_k,
        by_slice=args.slice is not None,
        results_dir=args.results_dir,
        pricing=pricing(cfg) if cfg is not None else None,
        frontier_seed=args.frontier_seed,
        frontier_resamples=args.frontier_resamples,
    )
    if args.slice is None:
        return lb
    known = [str(s) for s in lb.table["slice"].unique()]
    if args.slice not in known:
        raise InputError(f"--slice {args.slice!r}: no such slice (slices: {', '.join(known)})")
    t = lb.table[lb.table["slice"] == args.slice].drop(columns="slice").reset_index(drop=True)
    p = lb.pairs[lb.pairs["slice"] == args.slice].drop(columns="slice").reset_index(drop=True)
    notes = [*lb.notes, f"slice {args.slice} only"]
    return Leaderboard(t, p, lb.alpha, lb.rule, lb.at_k, False, notes, left_out=lb.left_out, frontier=lb.frontier)


def leaderboard_command(args: argparse.Namespace) -> int:
    show(compute(args.runs, args), args.json)
    return 0


__all__ = [
    "add_options",
    "compute",
    "format_leaderboard",
    "format_pairwise",
    "leaderboard_command",
    "pairwise_for_compare",
    "register",
    "report_leaderboard",
    "show",
]
