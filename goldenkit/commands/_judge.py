"""``goldenkit judge calibrate LABELS.jsonl``: does the LLM judge agree with humans well enough?

Reads human labels (row id, response, human decision ACCEPT/REJECT). Labels
that already carry the judge's decision or output are replayed without a
model; with ``--judge PROVIDER`` (or ``--live`` and a ``[judge]`` table in
goldenkit.toml) the judge is asked afresh, seeing the label's prompt, or the
case of ``--dataset`` the label's ``caseId`` (else its id) names. Prints the confusion matrix,
accuracy, precision, recall, specificity (Wilson 95% intervals), Cohen's kappa
with its 95% interval, n, and whether the judge may act as a hard grader
(kappa's lower bound >= --kappa-floor and n >= --min-n). ``-o/--output`` writes the
report as JSON: point ``[judge] calibration`` at it to allow ``hard = true``.
``--check`` exits 2 when the judge may not act as a hard grader.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from goldenkit.commands._args import number
from goldenkit.commands._judge_evidence import label_records, register_evidence
from goldenkit.config import load_config
from goldenkit.errors import GateFailed, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "judge",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    jsub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", parser_class=type(p))
    cal = jsub.add_parser("calibrate", help="judge vs human labels: kappa, confusion matrix", description=__doc__)
    cal.add_argument("labels", help="labels JSONL (id, response, human decision[, judge decision or output])")
    cal.add_argument("--judge", metavar="PROVIDER", help="ask this judge provider instead of replaying")
    cal.add_argument("--model", help="judge model id (with --judge)")
    cal.add_argument("--rubric", help="judge rubric file (with --judge)")
    cal.add_argument("--live", action="store_true", help="ask the judge configured in [judge] of goldenkit.toml")
    cal.add_argument("--config", help="goldenkit.toml (default: ./goldenkit.toml)")
    cal.add_argument(
        "--dataset", help="dataset whose cases (by the label's caseId, else its id) the judge sees, in live mode"
    )
    cal.add_argument("--judge-version", help="label replayed decisions with this judge version")
    cal.add_argument("--min-n", type=int, default=30, help="minimum decided pairs for a hard judge (default 30)")
    cal.add_argument(
        "--kappa-floor",
        type=number(at_least=-1, at_most=1),
        default=0.6,
        help="floor on kappa's 95%% lower bound (default 0.6)",
    )
    cal.add_argument("--max-in-flight", type=int, default=8, help="judge calls in flight (default 8)")
    cal.add_argument("-o", "--output", "--out", dest="out", metavar="FILE", help="write the report as JSON here")
    cal.add_argument("--json", action="store_true", help="print the report as JSON")
    cal.add_argument("--check", action="store_true", help="exit 2 when the judge may not act as a hard grader")
    cal.add_argument("--candidate-model", metavar="MODEL", help="the model under test (for the self-preference flag)")
    cal.add_argument("--run", metavar="RUN", help="the candidate's run folder: its model id is the candidate model")
    cal.set_defaults(func=calibrate_command)
    lab = jsub.add_parser(
        "label",
        help="store human verdicts on a run's answers (labels.jsonl beside the run; never in its outcomes)",
    )
    lab.add_argument("file", metavar="LABELS.jsonl", help='one {"id", "repeat"?, "human": PASS|FAIL} per line')
    lab.add_argument("--run", required=True, metavar="RUN", help="run folder, or run id under --results-dir")
    lab.add_argument("--results-dir", default="results", metavar="DIR", help="where run ids are looked up")
    lab.add_argument("--who", help="who labelled (recorded with each label)")
    lab.add_argument(
        "--probability",
        type=number(above=0, at_most=1),
        help="the probability with which every row of the file was drawn for labelling (a line's own "
        '"probability" wins); without one, the labels were picked by hand and are not used for inference',
    )
    lab.set_defaults(func=label_command)
    register_evidence(jsub)

    def no_subcommand(args: argparse.Namespace) -> int:
        raise UsageError("goldenkit judge: choose a subcommand (calibrate, label, estimate, next)")

    p.set_defaults(func=no_subcommand)


def _judge_from_args(args: argparse.Namespace) -> Any:
    from goldenkit.graders import build_graders

    cfg = load_config(args.config) if (args.config or args.live) else {}
    judge_cfg = dict(cfg.get("judge", {})) if isinstance(cfg.get("judge"), dict) else {}
    if args.judge:
        judge_cfg["provider"] = args.judge
    if args.model:
        judge_cfg["model"] = args.model
    if args.rubric:
        judge_cfg["rubric"] = str(Path(args.rubric).resolve())
    judge_cfg["hard"] = False  # calibrating: the judge is only being measured
    judge_cfg.pop("calibration", None)
    cfg = {**cfg, "graders": {"use": ["judge"]}, "judge": judge_cfg}
    return build_graders(cfg)[0]


def _case_lookup(path: str) -> Any:
    from goldenkit.dataset import read_dataset

    ds = read_dataset(path)
    known = set(ds.rows["id"])

    def case_for(row: Any) -> Any:
        rid = row.raw.get("caseId") or row.raw.get("case_id") or row.id
        return ds.case(rid) if rid in known else None

    return case_for


async def _ask_judge(rows: Any, judge: Any, max_in_flight: int, case_for: Any) -> list[str]:
    """The judge's decisions, its client closed on the event loop that opened it."""
    from goldenkit.graders import judge_labels
    from goldenkit.runner import CallLimits, ModelCalls

    calls = ModelCalls(CallLimits(max_in_flight=max_in_flight))
    try:
        return await judge_labels(rows, judge, call=calls.response, case_for=case_for)
    finally:
        await judge.aclose()


def _run_model(run: str | None) -> str | None:
    from goldenkit.results import read_run

    if run is None:
        return None
    model = (read_run(run).manifest.get("agent_version") or {}).get("model_id")
    return str(model) if model else None


def calibrate_command(args: argparse.Namespace) -> int:
    from goldenkit.graders import calibration_report, read_labels
    from goldenkit.results import write_json_atomic

    if args.min_n < 1:
        raise UsageError("--min-n must be at least 1")
    rows = read_labels(args.labels)
    live = bool(args.judge or args.live)
    if live:
        judge = _judge_from_args(args)
        case_for = _case_lookup(args.dataset) if args.dataset else None
        decisions = asyncio.run(_ask_judge(rows, judge, args.max_in_flight, case_for))
        version = judge.judge_version
    else:
        not_replayable = [r for r in rows if not r.replayable]
        if not_replayable:
            r = not_replayable[0]
            raise UsageError(
                f"{args.labels}:{r.line}: row {r.id} has no judge decision or output to replay; "
                "pass --judge PROVIDER (or --live) to ask a judge"
            )
        decisions = [r.replayed_decision() for r in rows]
        version = args.judge_version
    judge_model = judge.model if live else (args.model or (version or "").split("+rubric.")[0] or None)
    report = calibration_report(
        [(r.id, r.human, d) for r, d in zip(rows, decisions, strict=True)],
        min_n=args.min_n,
        kappa_floor=args.kappa_floor,
        judge_version=version,
        lengths=[None if r.response is None else len(str(r.response)) for r in rows],
        judge_model=judge_model,
        judge_provider=judge.parameters.get("provider") if live else args.judge,
        candidate_model=args.candidate_model or _run_model(args.run),
    )
    data = report.to_dict()
    data["labels"] = str(args.labels)
    data["mode"] = "live" if live else "replay"
    if args.out:
        write_json_atomic(args.out, data)  # a half-written report must never be read as a calibration
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else report.render())
    if args.check and not report.hard_allowed:
        raise GateFailed(f"judge may not act as a hard grader: {report.why}")
    return 0


def label_command(args: argparse.Namespace) -> int:
    """``goldenkit judge label FILE --run R``: every line checked, then appended to the run's labels."""
    from goldenkit.results import add_labels, labelled, read_run

    run = read_run(args.run, args.results_dir)
    records, numbers, source = label_records(args.file)  # a label file, or judge calibrate's labels
    before = labelled(run)
    added = add_labels(
        run,
        records,
        who=args.who,
        source=source,
        probability=args.probability,
        where=str(args.file),
        line_numbers=numbers,
    )
    designed = sum(lab.designed for lab in added)
    replaced = sum((lab.row_id, lab.repeat) in before for lab in added)
    print(
        f"{len(added)} human label(s) stored in {run.path}/labels.jsonl ({designed} drawn by a recorded "
        f"design, {len(added) - designed} picked by hand: shown, not used for inference)"
        + (f"; {replaced} replace(s) an earlier label of the same row (the later one counts)" if replaced else "")
    )
    return 0


__all__ = ["calibrate_command", "label_command", "register"]
