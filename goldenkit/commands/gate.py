"""``goldenkit gate RUN [--baseline REF]``: the quality gate, with exit codes for CI.

The policy is the ``[gate]`` table of goldenkit.toml (``--config``, else the
current folder; see :mod:`goldenkit.gate` for every key). The baseline is
``--baseline`` or ``[gate] baseline``: a run folder, a run id or a baseline
name. Regression rules are on unless ``[gate] regression = false``; with them
on, no baseline given fails the gate, a baseline that does not resolve is a
usage error (exit 1), and a baseline of another protocol (dataset, repeats,
graders, judge, rows) exits 4.

Prints every rule with its actual value, threshold and the evidence it saw
(rows graded, paired, left out and why), the slices flagged for review, the
slices that are not evidence (warnings), and a summary line. Exit codes:
0 passed · 1 bad input · 2 gate failed (also an empty or fully skipped run, a
critical slice with no graded rows, a new permanent error) · 3 a side is not
evidence (the run or the baseline INVALID, incomplete or ungraded; an error
rate over its maximum, overall or in one slice) · 4 the baseline is not comparable.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from goldenkit.baselines import resolve_run_or_baseline
from goldenkit.compare import compare_runs
from goldenkit.config import load_config, section
from goldenkit.errors import ComparisonInvalid
from goldenkit.gate import GatePolicy, evaluate_gate


def register(sub: Any) -> None:
    p = sub.add_parser(
        "gate",
        help="apply the quality gate to a run (exit 0 pass, 2 fail, 3 invalid run, 4 baseline not comparable)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 passed, 1 usage or bad input, 2 gate failed, 3 infrastructure failure, "
        "4 comparison invalid",
    )
    p.add_argument("run", help="run folder, run id or baseline name")
    p.add_argument("--baseline", help="baseline: name, run folder or run id (default: [gate] baseline)")
    p.add_argument("--config", help="goldenkit.toml (default: the one in the current folder)")
    p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    p.add_argument("--baselines-dir", default="baselines", help="folder of baselines (default baselines)")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.set_defaults(func=gate_command)


def gate_command(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where=where)
    run = resolve_run_or_baseline(args.run, args.results_dir, args.baselines_dir)
    ref = args.baseline or policy.baseline
    base = comparison = missing = invalid = None
    if policy.regression:
        if ref is None:
            missing = "no baseline given (pass --baseline or set [gate] baseline)"
        else:
            # a name that resolves to nothing is a usage error (exit 1), raised here
            base = resolve_run_or_baseline(ref, args.results_dir, args.baselines_dir)
            try:
                comparison = compare_runs(base, run, rule=policy.rule, alpha=policy.alpha)
            except ComparisonInvalid as exc:
                invalid = str(exc)
    subject: Any = run
    if callable(getattr(run, "outcomes", None)) and not callable(getattr(run, "collapsed", None)):
        cols = ["row_id", "slice", "repeat", "verdict", "error_kind"]
        if policy.max_hallucination_rate is not None:
            cols.append("graders")
        if policy.max_hallucination_rate is not None or policy.min_negative_case_pass_rate is not None:
            cols.append("tags")  # the red rows and the hallucination rows
        subject = run.outcomes(columns=cols)
    decision = evaluate_gate(
        subject,
        policy=policy,
        comparison=comparison,
        baseline=base,
        baseline_missing_reason=missing,
        comparison_invalid=invalid,
        manifest=getattr(run, "manifest", None),
    )
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
    else:
        label = getattr(run, "run_id", None) or args.run
        against = f" against {comparison.base_id}" if comparison is not None else ""
        print(f"gate for {label}{against}")
        print(decision.format())
    return decision.exit_code
