"""``goldenkit judge estimate`` and ``goldenkit judge next``: judge-graded figures with valid intervals.

``judge estimate --run R [--baseline B]`` prints, per slice and overall, the judge-only pass rate (what the
judge thinks, marked as such) beside the prediction-powered estimate of the human pass rate when the run
holds human labels drawn by a recorded design (:func:`goldenkit.results.judge_estimates`); with
``--baseline``, the paired difference of the two runs (:func:`goldenkit.results.judge_difference`).
``--json`` prints the table as JSON.

``judge next --run R [--n 25] [--seed S] [-o FILE]`` draws the rows whose human label would narrow the
interval most (:func:`goldenkit.results.label_plan`), writes them as JSONL for ``goldenkit judge label``
(fill in each ``"human"``; the ``probability`` must stay), records the draw as a round beside the run
(``label_rounds.jsonl``: the estimate averages the rounds whose rows are all labelled), and prints the
interval's expected half-width before and after. Without ``-o`` the JSONL goes to stdout and the summary
to stderr.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any

from goldenkit._display import pct
from goldenkit.commands._args import ALPHA, POSITIVE, gate_defaults, integer


def register_evidence(jsub: Any) -> None:
    """Add ``estimate`` and ``next`` to the ``judge`` subcommands."""
    est = jsub.add_parser(
        "estimate", help="judge-only and prediction-powered pass rates (human labels + judge verdicts)"
    )
    nxt = jsub.add_parser("next", help="the rows to label next (active inference), with the expected interval")
    for p in (est, nxt):
        p.add_argument("--run", required=True, metavar="RUN", help="run folder, or run id under --results-dir")
        p.add_argument("--results-dir", default="results", metavar="DIR", help="where run ids are looked up")
        p.add_argument("--by", default="slice", help="per-row column to group by (default slice)")
        p.add_argument("--rule", default=None, help="repeat collapse rule (default: [gate] rule, else majority)")
        p.add_argument("--alpha", type=ALPHA, default=None, help="1 - confidence (default: [gate] alpha, else 0.05)")
        p.add_argument("--config", help="goldenkit.toml whose [gate] gives --rule and --alpha")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
    est.add_argument("--baseline", metavar="RUN", help="the paired difference RUN minus this run (same judge)")
    est.set_defaults(func=estimate_command)
    nxt.add_argument("--n", type=POSITIVE, default=25, help="expected number of rows to label (default 25)")
    nxt.add_argument("--seed", type=integer(at_least=0), help="the draw's seed (default: a new one, printed)")
    nxt.add_argument("-o", "--output", dest="out", metavar="FILE", help="write the JSONL here (default stdout)")
    nxt.set_defaults(func=next_command)


def _render(table: Any, by: str, title: str, diff: bool) -> str:
    judge_col = "judge_diff" if diff else "judge_rate"
    show = functools.partial(pct, unit="", signed=diff)  # points: a difference's signed
    head = f"{by:<16} {'judged':>6}  {'judge only (of the judge)':<27} {'labels':>7}  "
    head += f"{'prediction-powered (human)':<27} {'lambda':>6} {'ESS gain':>8}  method"
    lines = [title, head]
    notes = []
    for key, r in table.iterrows():
        judge = f"{show(r[judge_col])} [{show(r['judge_ci_low'])}, {show(r['judge_ci_high'])}]"
        ppi = "—"
        if r["method"] != "judge only":
            ppi = f"{show(r['estimate'])} [{show(r['ci_low'])}, {show(r['ci_high'])}]"
        labels = f"{r['n_human']}" + (f"+{r['n_hand']}h" if r["n_hand"] else "")
        lam = "—" if math.isnan(r["lam"]) else f"{r['lam']:.2f}"
        gain = "—" if math.isnan(r["ess_gain"]) else f"{r['ess_gain']:+.1f}"
        lines.append(
            f"{str(key):<16} {r['n_judged']:>6}  {judge:<27} {labels:>7}  {ppi:<27} {lam:>6} {gain:>8}  {r['method']}"
        )
        notes.append(f"  {key}: {r['reason']}")
    unit = "points (candidate minus baseline)" if diff else "%"
    lines += [f"(figures in {unit}; labels: designed labels used, +Nh picked by hand: shown, not used)", "why:"]
    return "\n".join(lines + notes)


def _records(table: Any) -> list[dict[str, Any]]:
    flat = table.reset_index().astype(object)
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        for rec in flat.to_dict(orient="records")
    ]


def estimate_command(args: argparse.Namespace) -> int:
    from goldenkit.results import judge_difference, judge_estimates, read_run

    run = read_run(args.run, args.results_dir)
    rule, alpha = gate_defaults(args, run)
    conf = f"{100 * (1 - alpha):g}%"
    if args.baseline:
        base = read_run(args.baseline, args.results_dir)
        table = judge_difference(run, base, by=args.by, alpha=alpha, rule=rule)
        title = f"run {run.run_id} minus {base.run_id}: paired difference in pass rate (rule {rule}, {conf} intervals)"
    else:
        table = judge_estimates(run, by=args.by, alpha=alpha, rule=rule)
        title = f"run {run.run_id}: judge-graded pass rate (rule {rule}, {conf} intervals)"
    if args.json:
        doc = {"schema_version": 1, "run": run.run_id, "baseline": args.baseline and base.run_id}
        doc.update(rule=rule, alpha=alpha, by=args.by, rows=_records(table))
        print(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
    else:
        print(_render(table, args.by, title, bool(args.baseline)))
    return 0


def next_command(args: argparse.Namespace) -> int:
    from goldenkit.results import add_round, judge_estimates, label_plan, read_run

    run = read_run(args.run, args.results_dir)
    rule, alpha = gate_defaults(args, run)
    plan = label_plan(run, n=args.n, seed=args.seed, by=args.by, rule=rule, alpha=alpha)
    text = plan.jsonl()
    where = args.out or ("the JSON document" if args.json else "stdout")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    add_round(run, plan.round)  # the design the labels are drawn by: recorded before anyone labels
    summary = [
        f"label these {len(plan.drawn)} rows of run {run.run_id} (expected {plan.rows['probability'].sum():.1f}, "
        f'seed {plan.seed}): written to {where}; fill in each "human" (PASS or FAIL), keep "probability", then '
        f"goldenkit judge label FILE --run {args.run}",
        *plan.width_lines(judge_estimates(run, by=args.by, alpha=alpha, rule=rule)),
    ]
    if plan.needed is not None:
        summary.append(
            f"  a draw this small is not expected to narrow the pass rate interval: draw about {plan.needed} rows "
            f"(--n {plan.needed}) for it to narrow"
        )
    if args.json:  # the drawn rows are in the document: no JSONL on stdout beside it
        print(json.dumps({**plan.to_dict(), "run": run.run_id, "output": where}, indent=2, ensure_ascii=False))
    elif args.out:
        print("\n".join(summary))
    else:
        sys.stdout.write(text)
        print("\n".join(summary), file=sys.stderr)
    return 0


__all__ = ["estimate_command", "next_command", "register_evidence"]
