"""``goldenkit gate RUN [--baseline REF]``: the quality gate, with exit codes for CI.

The policy is the ``[gate]`` table of goldenkit.toml, found as every command
finds it (:func:`goldenkit.config.config_for_run`: ``--config``, else the file
the run recorded, else the one beside its dataset); the output names the file
and its SHA-256. A baseline that is the candidate itself is a usage error. The baseline is
``--baseline`` or ``[gate] baseline``: a run folder, a run id or a baseline
name. Regression rules are on unless ``[gate] regression = false``; with them
on, no baseline given fails the gate, a baseline that does not resolve is a
usage error (exit 1), and a baseline of another protocol (dataset, repeats,
graders, judge, rows) exits 4.

Prints every rule with its actual value, threshold and the evidence it saw
(rows graded, paired, left out and why), the slices flagged for review, the
slices that are not evidence (warnings), and a last line naming the decision
its exit code means: "gate PASSED" (0), "gate FAILED" (2), "gate NOT
EVIDENCE" (3), "gate COMPARISON INVALID" (4). Exit codes: 0 passed
(non-inferiority shown, no rule failed) · 1 bad input · 2 a failure shown (a
regression, a new error of the candidate's own, a threshold) · 3 not enough
evidence (a side INVALID, incomplete, empty or ungraded; an error rate over its
maximum; no baseline; rows skipped or missing; non-inferiority not shown, with
the paired rows it would need; a judge of the candidate's model family as the
only evidence of green) · 4 the baseline is not comparable. Judge-graded rules
read the run's human labels (labels.jsonl) when a recorded design drew them. ``--json`` gives each rule its exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from goldenkit.commands._sequential import register_replay, replay_for
from goldenkit.config import config_for_run, describe_config, section
from goldenkit.errors import UsageError

#: GitHub Actions' job summary: a gate run there appends its Markdown summary to this file
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gate",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 passed, 1 usage or bad input, 2 gate failed, 3 not enough evidence, 4 comparison invalid",
    )
    p.add_argument("run", help="run folder, run id or baseline name")
    p.add_argument("--baseline", help="baseline: name, run folder or run id (default: [gate] baseline)")
    p.add_argument("--config", help="goldenkit.toml (default: the one the run recorded, else beside its dataset)")
    p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    p.add_argument("--baselines-dir", default="baselines", help="folder of baselines (default baselines)")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.add_argument(
        "--markdown",
        metavar="FILE",
        help="also write a Markdown summary for a pull request (- for stdout; appended to $GITHUB_STEP_SUMMARY "
        "when that is set)",
    )
    p.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="NAME=URL",
        help="a report to link from the Markdown summary (repeatable), e.g. compare.html=https://ci/artifacts/...",
    )
    register_replay(p)
    p.set_defaults(func=gate_command)


def _same_run(run: Any, base: Any) -> str | None:
    """Why ``base`` is the candidate itself (the same folder, or the same run identity), else None."""
    rp, bp = (getattr(x, "path", None) for x in (run, base))
    if rp is not None and bp is not None and Path(rp).resolve() == Path(bp).resolve():
        return f"the same folder ({rp})"
    rm, bm = (dict(getattr(x, "manifest", None) or {}) for x in (run, base))
    ident = ("run_id", "started_at")
    if rm.get("run_id") and all(rm.get(k) == bm.get(k) for k in ident):
        return f"the same run (run id {rm['run_id']}, started {rm.get('started_at')})"
    answers = [_answers_of(m) for m in (rm, bm)]
    if answers[0] and answers[0] == answers[1] and (rm.get("regraded_from") or bm.get("regraded_from")):
        return f"a regrade of the same answers (both are the answers of run {answers[0]})"
    return None


def _answers_of(man: dict[str, Any]) -> str | None:
    """The run whose answers a run holds: its own, or (a regrade, of a regrade...) the run first regraded."""
    source = man.get("regraded_from")
    if isinstance(source, dict):
        return str(source.get("answers_from") or source.get("run_id") or "") or None
    return str(man["run_id"]) if man.get("run_id") else None


def _links(pairs: list[str]) -> dict[str, str]:
    links = {}
    for pair in pairs:
        name, sep, url = pair.partition("=")
        if not sep or not name or not url:
            raise UsageError(f"goldenkit gate: --link {pair!r}: expected NAME=URL")
        links[name] = url
    return links


def _write_markdown(args: argparse.Namespace, decision: Any, cfg: dict[str, Any], links: dict[str, str]) -> None:
    """The Markdown summary (goldenkit.report._markdown) to --markdown and $GITHUB_STEP_SUMMARY."""
    from goldenkit.report import gate_markdown

    targets = [args.markdown] if args.markdown else []
    if os.environ.get(STEP_SUMMARY):
        targets.append(os.environ[STEP_SUMMARY])
    if not targets:
        return
    text = gate_markdown(decision, links=links, config=describe_config(cfg))
    for target in targets:
        if target == "-":
            sys.stdout.write(text)
            continue
        with open(target, "a" if target == os.environ.get(STEP_SUMMARY) else "w", encoding="utf-8") as fh:
            fh.write(text)


def gate_command(args: argparse.Namespace) -> int:
    from goldenkit.baselines import resolve_run_or_baseline
    from goldenkit.gate import GatePolicy, evaluate_gate

    links = _links(args.link)  # --markdown is checked with every output option (goldenkit.cli)
    run = resolve_run_or_baseline(args.run, args.results_dir, args.baselines_dir)
    cfg = config_for_run(args.config, getattr(run, "manifest", None), getattr(run, "path", None))
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where=where)
    ref = args.baseline or policy.baseline
    base = missing = None
    if policy.regression:
        if ref is None:
            missing = "no baseline given (pass --baseline or set [gate] baseline)"
        else:
            # a name that resolves to nothing is a usage error (exit 1), raised here
            base = resolve_run_or_baseline(ref, args.results_dir, args.baselines_dir)
            same = _same_run(run, base)
            if same is not None:
                raise UsageError(f"goldenkit gate: the baseline {ref!r} is the candidate itself: {same}")
    decision = evaluate_gate(
        run,
        policy=policy,
        baseline=base,
        baseline_missing_reason=missing,
        manifest=getattr(run, "manifest", None),
    )
    comparison = decision.comparison
    replay = replay_for(args, run, decision, policy)  # --replay-sequential: goldenkit.gate._replay
    if args.json:
        extra = {"replay_sequential": replay.to_dict()} if replay is not None else {}
        print(json.dumps({**decision.to_dict(), "config": describe_config(cfg), **extra}, indent=2))
    else:
        label = getattr(run, "run_id", None) or args.run
        against = f" against {comparison.base_id}" if comparison is not None else ""
        print(f"gate for {label}{against}")
        print(describe_config(cfg))
        if comparison is not None:
            print("evidence ledger (rows paired on both sides, per slice):")
            print("\n".join(f"  {line}" for line in comparison.ledger.format().splitlines()))
        print(decision.format())
        if replay is not None:
            print(replay.format())
    _write_markdown(args, decision, cfg, links)
    return decision.exit_code
