"""``goldenkit judge estimate`` and ``goldenkit judge next``: judge-graded figures with valid intervals.

``judge estimate --run R [--baseline B]`` prints, per slice and overall, the judge-only pass rate (what the
judge thinks, marked as such) beside the prediction-powered estimate of the human pass rate when the run
holds human labels drawn by a recorded design (:func:`goldenkit.results.judge_estimates`); with
``--baseline``, the paired difference of the two runs (:func:`goldenkit.results.judge_difference`).
``--json`` prints the table as JSON.

``judge label FILE`` reads a label file (``{id, repeat?, human: PASS|FAIL}``) or a ``goldenkit judge calibrate``
labels file (:func:`label_records`); ``judge next`` warns in one line when an earlier round is still
unlabelled (an estimate averages complete rounds only).

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
from goldenkit.errors import UsageError

#: The keys under which only a ``goldenkit judge calibrate`` labels file holds the human decision.
_CALIBRATION_KEYS = ("human_decision", "humanDecision", "humanExpectedDecision", "label")
#: What a calibrate labels file says where a label file says PASS / FAIL.
_CALIBRATION_WORDS = ("ACCEPT", "ACCEPTED", "REJECT", "REJECTED")


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


def label_records(path: str) -> tuple[list[dict[str, Any]], list[int], str]:
    """The labels of ``path`` for :func:`goldenkit.results.add_labels`, their line numbers and their source.

    A label file (``{id, repeat?, human: PASS|FAIL}``) is read as it is (``import``). A ``goldenkit judge
    calibrate`` labels file (a line with a human decision under calibrate's own keys, or ACCEPT / REJECT) is
    read by calibrate's reader (:func:`goldenkit.graders.read_labels`: every line checked, file:line named)
    and each decision mapped as calibrate maps it (ACCEPT = PASS, REJECT = FAIL; ``calibration``); a line's
    ``repeat``, ``probability``, ``who`` and ``at`` are kept, so its labels are hand-picked unless the file
    records the probability with which its rows were drawn."""
    from goldenkit.results import scan_jsonl

    try:
        lines = list(scan_jsonl(path))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    if not any(_calibration_line(line.record) for line in lines):
        return [line.record for line in lines], [line.number for line in lines], "import"
    from goldenkit.graders import read_labels

    rows = read_labels(path)
    kept = ("repeat", "probability", "who", "at")
    records = [
        {"id": r.id, "human": "PASS" if r.human == "ACCEPT" else "FAIL", **{k: r.raw[k] for k in kept if k in r.raw}}
        for r in rows
    ]
    return records, [r.line for r in rows], "calibration"


def _calibration_line(record: dict[str, Any]) -> bool:
    human = record.get("human")
    return any(k in record for k in _CALIBRATION_KEYS) or (
        isinstance(human, str) and human.strip().upper() in _CALIBRATION_WORDS
    )


def next_command(args: argparse.Namespace) -> int:
    from goldenkit.results import (
        add_round,
        complete_rounds,
        judge_estimates,
        judge_rows,
        label_plan,
        read_rounds,
        read_run,
    )

    run = read_run(args.run, args.results_dir)
    rule, alpha = gate_defaults(args, run)
    _, unlabelled = complete_rounds(read_rounds(run), judge_rows(run, by=args.by, rule=rule))
    if unlabelled:
        print(
            f"goldenkit judge next: warning: {unlabelled} earlier round{'s' if unlabelled > 1 else ''} of run "
            f"{run.run_id} still unlabelled (an estimate uses complete rounds only): label "
            f"{'them' if unlabelled > 1 else 'it'} with goldenkit judge label FILE --run {args.run}",
            file=sys.stderr,
        )
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


__all__ = ["estimate_command", "label_records", "next_command", "register_evidence"]
