"""The command line of decided repeats and the sequential gate (:mod:`goldenkit.gate._sequential`).

``goldenkit run ... --stop-decided-repeats`` stops a row's repeats once its verdict under the
``[gate] rule`` cannot change; ``goldenkit run ... --sequential --baseline REF [--max-rows N]
[--sequential-seed S]`` is the sequential gate as a run (exit 2 a regression shown, 0
non-inferiority shown, 3 undecided at the budget); ``goldenkit gate RUN --baseline REF
--replay-sequential [--orders 50]`` replays it over random orders of a full run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldenkit._text import did_you_mean
from goldenkit.config import section
from goldenkit.errors import ComparisonInvalid, ConfigError, UsageError
from goldenkit.schema import OUTCOMES_JSONL, RUN_FILE

if TYPE_CHECKING:
    from goldenkit.gate import ReplayResult

__all__ = ["register_replay", "replay_for", "run_exit", "run_keywords"]


def run_keywords(args: argparse.Namespace, cfg: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    """``stop_decided_repeats``, ``rule`` and (``--sequential``) the monitor of :mod:`goldenkit.gate._sequential`."""
    from goldenkit.gate import GatePolicy

    sequential = bool(getattr(args, "sequential", False))
    if sequential and getattr(args, "shard", None) is not None:
        raise UsageError("goldenkit run: --sequential reads every row of the run in its own order, not a shard")
    if not sequential and (args.baseline or args.max_rows is not None or args.sequential_seed is not None):
        raise UsageError("goldenkit run: --baseline, --max-rows and --sequential-seed need --sequential")
    if not (sequential or opts.get("stop_decided_repeats")):
        return {}
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where=where)
    out: dict[str, Any] = {"stop_decided_repeats": True, "rule": policy.rule}
    if sequential:
        from goldenkit.baselines import resolve_run_or_baseline
        from goldenkit.gate import sequential_gate

        ref = args.baseline or policy.baseline
        if ref is None:
            raise UsageError("goldenkit run --sequential: pass --baseline REF (or set [gate] baseline)")
        base = resolve_run_or_baseline(ref, opts["results_dir"], "baselines")
        repeats = (getattr(base, "manifest", None) or {}).get("repeats")
        if repeats is not None and repeats != opts["repeats"]:  # known before the first call: nothing is run
            why = f"repeats differ: {repeats} vs {opts['repeats']}"
            raise ComparisonInvalid(f"goldenkit run --sequential: baseline {ref} is not comparable: {why}", [why])
        folder = Path(opts["results_dir"]) / args.run_id if args.run_id else None
        seed = _order_seed(folder, args.sequential_seed)
        if policy.allowed_regression is not None:
            raise ConfigError(
                f"{where}: allowed_regression compares full runs point for point: unset it for --sequential"
            )
        gate = sequential_gate(base, policy, seed=seed, max_rows=args.max_rows)
        slices = {sl for sl, _ in gate.base.values()}
        for name in (n for n in policy.critical if n not in slices):  # it could never pass: refused before any call
            raise ConfigError(
                f"{where}: critical slice {name} has no row the baseline {ref} graded{did_you_mean(name, slices)}; "
                "the sequential gate could never show non-inferiority on it"
            )
        out["sequential"] = gate
    return out


def _order_seed(folder: Path | None, asked: int | None) -> int:
    """The design order's seed (default 0). A resumed sequential run keeps the seed it drew, and a run that
    has outcomes without a sequential record cannot turn sequential: an order drawn again after rows were
    seen could be chosen for its decision, and the decision holds over an order drawn before any row."""
    from goldenkit.results import read_manifest  # as run_exit's: the results store is loaded by a run, not by --help

    if folder is None or not (folder / RUN_FILE).is_file():
        return asked or 0
    jsonl = folder / OUTCOMES_JSONL
    rec = read_manifest(folder).get("sequential")  # the one reader: a corrupt run.json is named, not a traceback
    seen = jsonl.is_file() and jsonl.stat().st_size > 0
    if not isinstance(rec, dict):
        if seen:
            raise UsageError(
                f"goldenkit run --sequential: run {folder.name} already has outcomes of a run that was not "
                "sequential; its order must be drawn before any row is seen: start a new --run-id"
            )
        return asked or 0
    drawn = rec.get("seed")
    if seen and asked is not None and asked != drawn:
        raise UsageError(
            f"goldenkit run --sequential: run {folder.name} drew its order with --sequential-seed {drawn}; "
            f"a resume keeps it (got {asked}): leave --sequential-seed out, or start a new --run-id"
        )
    return int(drawn) if isinstance(drawn, int) and not isinstance(drawn, bool) else asked or 0


def run_exit(summary: Any, keywords: dict[str, Any]) -> int:
    """The exit code of ``goldenkit run``: for a sequential run that is VALID, the gate's on it against its
    baseline (what ``goldenkit gate RUN --baseline REF`` says), printed with where it stopped."""
    record, gate = summary.manifest.get("sequential"), keywords.get("sequential")
    if gate is None or not isinstance(record, dict) or summary.exit_code:
        return int(summary.exit_code)
    from goldenkit.gate import evaluate_gate
    from goldenkit.results import read_run

    decision = evaluate_gate(read_run(summary.path), policy=gate.policy, baseline=gate.baseline)
    for rule in decision.failed_rules:
        if rule.name != "sequential":
            print(f"goldenkit run --sequential: {rule.name}: {rule.detail}", file=sys.stderr)
    calls = f"{record['calls']} of the fixed-size {record['calls_full']} calls"
    print(
        f"sequential gate: stopped after {record['rows_run']} of {record['rows_total']} rows: "
        f"{record['stopped_because']} ({calls}); exit {decision.exit_code}"
    )
    return decision.exit_code


def register_replay(p: Any) -> None:
    """``goldenkit gate``'s shadow mode."""
    p.add_argument(
        "--replay-sequential",
        action="store_true",
        help="on a full run: replay the sequential gate over random orders and print when it would have "
        "stopped, with which decision, and the calls it would have saved",
    )
    p.add_argument("--orders", type=int, default=50, help="--replay-sequential: random orders (default 50)")
    p.add_argument("--replay-seed", type=int, default=0, help="--replay-sequential: the first order's seed (0)")


def replay_for(args: argparse.Namespace, run: Any, decision: Any, policy: Any) -> ReplayResult | None:
    """``--replay-sequential``: the replay (None without the flag); a usage error when there is none to make."""
    if not getattr(args, "replay_sequential", False):
        return None
    from goldenkit.gate import replay_sequential, sequential_record

    if decision.comparison is None:
        raise UsageError("goldenkit gate --replay-sequential needs a baseline the run is comparable with")
    if sequential_record(getattr(run, "manifest", None)) is not None:
        raise UsageError("goldenkit gate --replay-sequential replays a full run; this run is a sequential one")
    from dataclasses import replace

    from goldenkit.gate import evaluate_gate

    others = replace(policy, regression=False)  # the other rules, as on a sequential run's rows read
    # a sequential run answers for the rows it read, not for every outcome the full run counts
    manifest = {k: v for k, v in (getattr(run, "manifest", None) or {}).items() if k != "counts"}

    def read_rules(frame: Any) -> Any:
        return evaluate_gate(frame, policy=others, manifest=manifest)

    outcomes = run.outcomes(columns=["row_id", "slice", "split", "tags", "repeat", "verdict", "error_kind", "graders"])
    comparison = decision.comparison
    return replay_sequential(
        comparison, outcomes, policy, orders=args.orders, seed=args.replay_seed, read_rules=read_rules
    )
