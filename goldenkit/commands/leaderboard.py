"""``goldenkit leaderboard RUN [RUN ...]``: rank comparable runs and say which differences are evidence.

RUN is a run folder or a run id under ``--results-dir``. Prints the table (pass
rate with its Wilson interval, pass@k and pass^k, the rank interval and group)
and every pair (b, c, exact McNemar p, Holm-adjusted p, paired difference with
Newcombe's interval); ``--json`` prints ``{"table": [...], "pairs": [...]}``
(numbers as JSON numbers, NaN as null). ``--slice S`` ranks on the rows of one
slice. See :mod:`goldenkit.leaderboards.ranking` for the definitions.

Exit codes: 0 ranked · 1 bad input (unknown run or slice) · 4 the runs are not
comparable (the message names the odd run and each key that differs).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from goldenkit.commands._args import ALPHA
from goldenkit.errors import InputError, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="rank comparable runs with paired tests and rank intervals",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 ranked, 1 usage or bad input, 4 comparison invalid",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders or run ids under --results-dir")
    add_options(p)
    p.set_defaults(func=leaderboard_command)


def add_options(p: Any, *, results_dir: bool = True) -> None:
    """The options `goldenkit leaderboard` and `goldenkit benchmark` share."""
    p.add_argument("--json", action="store_true", help='print {"table": [...], "pairs": [...]} as JSON')
    p.add_argument("--slice", metavar="S", help="rank on the rows of slice S only")
    p.add_argument("--alpha", type=ALPHA, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--rule", default="majority", help="collapse rule: majority, all, any, at_least:K")
    p.add_argument("--k", type=int, dest="at_k", help="k of pass@k and pass^k (default: the runs' repeats)")
    if results_dir:
        p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")


def _num(x: Any, pct: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * float(x):.1f}" if pct else f"{float(x):.3f}"


def _p(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{float(x):.4f}" if float(x) >= 1e-4 else f"{float(x):.1e}"


def _columns(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    return ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in [head, *rows]]


def _rank(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def format_leaderboard(lb: Any) -> str:
    """The leaderboard as text: the table, the pairs, the notes."""
    t = lb.table
    k = int(lb.at_k)
    rows = [
        [
            str(r["group"]),
            _rank(r["rank_low"], r["rank_high"]),
            str(r["run_id"]),
            str(r["model"]),
            f"{r['k']}/{r['n']}",
            f"{_num(r['pass_rate'])} [{_num(r['ci_low'])}, {_num(r['ci_high'])}]",
            _num(r["pass_at_k"]),
            _num(r["pass_hat_k"]),
            str(r["errors"]),
        ]
        for r in t.to_dict("records")
    ]
    head = ["group", "rank", "run", "model", "passed", "pass % [95% CI]", f"pass@{k} %", f"pass^{k} %", "error rows"]
    lines = [f"leaderboard: {len(t)} runs, rule {lb.rule}, alpha {lb.alpha}", "", *_columns(head, rows)]
    pair_rows = [
        [
            str(p["a"]),
            str(p["b"]),
            str(p["n_paired"]),
            str(p["b_count"]),
            str(p["c_count"]),
            _p(p["p_val"]),
            _p(p["p_adj"]),
            "yes" if p["significant"] else "no",
            f"{100 * p['diff']:+.1f} [{_num(p['diff_ci_low'])}, {_num(p['diff_ci_high'])}]"
            if not math.isnan(p["diff"])
            else "n/a",
        ]
        for p in lb.pairs.to_dict("records")
    ]
    if pair_rows:
        head = ["a", "b", "paired", "b", "c", "p", "p_holm", "significant", "diff pts [95% CI, unadjusted]"]
        lines += ["", "pairs (b = rows a passed and b failed, c = the reverse; exact McNemar, Holm over all pairs):"]
        lines += _columns(head, pair_rows)
        lines.append(
            f"p = exact McNemar of the pair alone (unadjusted); p_holm = Holm-adjusted over the {len(pair_rows)} "
            "pairs (decides significant); the diff interval is the pair's own, not adjusted for the pairs"
        )
    lines.append("")
    lines.append("group top = indistinguishable from the leader (rank interval contains 1)")
    lines += [f"note: {n}" for n in lb.notes]
    return "\n".join(lines)


def compute(runs: Any, args: argparse.Namespace) -> Any:
    """The leaderboard the options ask for (one slice with ``--slice``)."""
    from goldenkit.leaderboards.ranking import Leaderboard, leaderboard

    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha must be in (0, 1), got {args.alpha}")
    lb = leaderboard(
        runs, args.alpha, args.rule, k=args.at_k, by_slice=args.slice is not None, results_dir=args.results_dir
    )
    if args.slice is None:
        return lb
    known = [str(s) for s in lb.table["slice"].unique()]
    if args.slice not in known:
        raise InputError(f"--slice {args.slice!r}: no such slice (slices: {', '.join(known)})")
    t = lb.table[lb.table["slice"] == args.slice].drop(columns="slice").reset_index(drop=True)
    p = lb.pairs[lb.pairs["slice"] == args.slice].drop(columns="slice").reset_index(drop=True)
    return Leaderboard(t, p, lb.alpha, lb.rule, lb.at_k, False, [*lb.notes, f"slice {args.slice} only"])


def show(lb: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(lb.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(format_leaderboard(lb))


def report_leaderboard(args: argparse.Namespace) -> int:
    """``goldenkit report --leaderboard RUN ...``: notebooks/leaderboard.ipynb executed and rendered to HTML.

    Written to ``-o DIR``, else into the first run's folder, as ``leaderboard.html``
    (beside the executed ``leaderboard.ipynb``). Runs that are not comparable
    are exit 4 before any notebook starts.
    """
    from pathlib import Path

    from goldenkit.leaderboards.alignment import run_inputs
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


def pairwise_for_compare(base: Any, cand: Any) -> Any:
    """``goldenkit compare --pairwise-judge``: the [judge] of the dataset's goldenkit.toml (else ./goldenkit.toml)
    asked which answer is better, both orders (see :mod:`goldenkit.leaderboards.pairwise`)."""
    from goldenkit.config import load_config, section
    from goldenkit.graders.build import build_graders
    from goldenkit.leaderboards.pairwise import pairwise_compare
    from goldenkit.results import Run

    if not isinstance(base, Run) or not isinstance(cand, Run):
        raise UsageError("goldenkit compare --pairwise-judge: BASE and CAND must be runs (a baseline keeps no answers)")
    cfg = load_config(None, dataset_dir=(base.manifest.get("dataset") or {}).get("path"))
    judge = build_graders({**cfg, "graders": {**section(cfg, "graders"), "use": ["judge"]}})[0]
    return pairwise_compare(base, cand, judge)


def format_pairwise(res: Any) -> str:
    """The pairwise preferences as text: one line per slice, overall first."""
    rows = [
        [
            str(r["slice"]),
            str(r["rows"]),
            str(r["wins"]),
            str(r["losses"]),
            str(r["ties"]),
            str(r["undecided"]),
            _num(r["position_bias_rate"]),
            _p(r["p_val"]),
            _p(r["p_adj"]),
        ]
        for r in res.table.to_dict("records")
    ]
    head = ["slice", "rows", "cand wins", "base wins", "ties", "undecided", "position bias %", "p (sign)", "p_holm"]
    lines = [f"pairwise judge {res.judge_version}: which answer is better, asked in both orders", ""]
    lines += _columns(head, rows)
    lines.append("a preference counts only when both orders agree; exact sign test on wins vs losses, ties excluded")
    return "\n".join(lines)


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
