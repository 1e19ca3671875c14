"""A run's budget and its estimate on the command line: ``goldenkit run ... --max-calls N --max-tokens-total N
--max-cost USD``, and ``goldenkit run ... --estimate [--like RUN]``.

The budget flags are run options (:data:`goldenkit._constraints.RUN_TABLE`, ``[run]`` keys of the same
names); :mod:`goldenkit.runner._budget` keeps them. ``--estimate`` calls nothing and writes nothing: it
reads the dataset and the options as the run would (the same rows: split, sample, red rows, shard; the
same repeats) and prints the calls the run would make, ``rows x repeats x turns`` (a case's user turns;
a simulated-user scenario takes 1 to its ``max_turns``, else ``--max-turns``). With
``--stop-decided-repeats`` the range runs from the repeats that decide every row under the
``[gate] rule`` when they agree to every repeat; a ``--sequential`` run may stop after its first
row still. The judge's calls are not counted (one per
graded outcome when a judge grades), nor a user simulator's.

``--like RUN`` (a run of the same dataset, by name; of another version, the line says so) adds, from that
run's outcomes: the expected tokens (its mean tokens in and out per outcome, times this run's outcomes), the time at
``--max-in-flight`` (its mean latency times the outcomes, over the calls in flight; the ``--rpm``
pacing when that is slower) and the money from the ``[pricing]`` of this run's model, else from the
prices the provider returned in that run, else ``money n/a`` (never a guess).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from goldenkit._display import money
from goldenkit.errors import UsageError

__all__ = ["estimate"]


@dataclass(frozen=True)
class Plan:
    """What a run would call: its rows, repeats, outcomes and calls (each a range ``low..high``)."""

    rows: int
    repeats: int
    turns: tuple[int, int]  # user turns over every row, fewest..most
    outcomes: tuple[int, int]
    calls: tuple[int, int]
    why_range: str | None


def estimate(args: argparse.Namespace, opts: Mapping[str, Any], cfg: Mapping[str, Any], dataset: Any) -> int:
    """``goldenkit run ... --estimate``: print the plan (and with ``--like``, its expected spend); exit 0."""
    if not args.estimate:
        raise UsageError("goldenkit run: --like RUN needs --estimate")
    plan = plan_run(args, opts, cfg, dataset)
    print(plan_line(plan, dataset))
    if args.like is not None:
        print(like_line(args.like, plan, opts, cfg, dataset))
    return 0


def plan_run(args: argparse.Namespace, opts: Mapping[str, Any], cfg: Mapping[str, Any], dataset: Any) -> Plan:
    """The rows the run would call (as :func:`goldenkit.runner.run_eval` picks them) and its calls."""
    from goldenkit.runner import (
        DEFAULT_MAX_TURNS,
        ConversationDriver,
        normalize_cases,
        parse_shard,
        select_rows,
        shard_rows,
    )

    sample = {"split": opts.get("split"), "per_slice": opts.get("per_slice"), "seed": None}
    if sample["per_slice"] is not None:
        sample["seed"] = opts.get("sample_seed", 0)
    rows, _ = select_rows(dataset, sample, bool(opts.get("red")))
    if getattr(args, "shard", None) is not None:
        rows = shard_rows(rows, parse_shard(args.shard))
    cases = normalize_cases(rows, [str(r) for r in rows.column("id")])
    driver = ConversationDriver(None, int(opts.get("max_turns") or DEFAULT_MAX_TURNS))  # its turn limits
    low = sum(1 if c.scenario is not None else max(1, len(c.turns)) for c in cases.values())
    high = sum(driver.turns_for(c.scenario) if c.scenario else max(1, len(c.turns)) for c in cases.values())
    repeats, n = int(opts["repeats"]), len(cases)
    outcomes, why = (n * repeats, n * repeats), None
    if getattr(args, "sequential", False):
        outcomes, why = (min(n, 1) * _deciding_repeats(cfg, repeats), n * repeats), "--sequential"
        low = min(low, 1)
    elif opts.get("stop_decided_repeats"):
        outcomes, why = (n * _deciding_repeats(cfg, repeats), n * repeats), "--stop-decided-repeats"
    per_row = (low / n if n else 0.0, high / n if n else 0.0)
    calls = (round(outcomes[0] * per_row[0]), round(outcomes[1] * per_row[1]))
    return Plan(n, repeats, (low, high), outcomes, calls, why)


def _deciding_repeats(cfg: Mapping[str, Any], repeats: int) -> int:
    """The fewest repeats that decide a row under the ``[gate] rule`` (every repeat agreeing)."""
    from goldenkit.config import section
    from goldenkit.stats import row_decided

    rule = section(dict(cfg), "gate").get("rule") or "majority"
    for k in range(1, repeats + 1):
        if any(row_decided([v] * k, str(rule), repeats) for v in ("PASS", "FAIL")):
            return k
    return repeats


def _span(pair: tuple[float, float], fmt: Callable[[float], str] = lambda x: f"{x:,.0f}") -> str:
    return fmt(pair[0]) if pair[0] == pair[1] else f"{fmt(pair[0])}..{fmt(pair[1])}"


def plan_line(plan: Plan, dataset: Any) -> str:
    """``estimate: dataset t 1.0.0: 4 rows x 2 repeats x 1 turn = 8 calls; nothing called, nothing written``."""
    turns = plan.turns
    per_row = "1 turn" if turns == (plan.rows, plan.rows) else f"{_span(turns)} turns in all"
    calls = f"{_span(plan.calls)} calls" + (f" ({plan.why_range} stops once decided)" if plan.why_range else "")
    head = f"estimate: dataset {dataset.name} {dataset.version}: {plan.rows} rows x {plan.repeats} repeats"
    tail = "the judge's and a user simulator's calls not counted; nothing called, nothing written"
    return f"{head} x {per_row} = {calls}; {tail}"


def like_line(ref: str, plan: Plan, opts: Mapping[str, Any], cfg: Mapping[str, Any], dataset: Any) -> str:
    """The expected tokens, time and money of ``plan`` from run ``ref``'s outcomes (one line)."""
    from goldenkit.results import read_run

    run = read_run(ref, opts.get("results_dir", "results"))
    theirs = run.manifest.get("dataset") or {}
    if theirs.get("name") != dataset.name:
        raise UsageError(
            f"goldenkit run --like {ref}: that run is of dataset {theirs.get('name')!r}, not {dataset.name!r}"
        )
    version = theirs.get("version")
    other = f", of version {version}, not {dataset.version}: its rows differ" if version != dataset.version else ""
    frame = run.outcomes(columns=["tokens_in", "tokens_out", "latency_ms", "cost"])
    mean = {c: _mean(frame[c]) for c in ("tokens_in", "tokens_out", "latency_ms", "cost")}
    n = plan.outcomes
    head = f"like run {run.run_id} ({len(frame)} outcomes{other})"
    if mean["tokens_in"] is None or mean["tokens_out"] is None:
        tokens = "tokens n/a (that run recorded none)"
        t_in, t_out = None, None
    else:
        t_in = (n[0] * mean["tokens_in"], n[1] * mean["tokens_in"])
        t_out = (n[0] * mean["tokens_out"], n[1] * mean["tokens_out"])
        total = (t_in[0] + t_out[0], t_in[1] + t_out[1])
        tokens = f"tokens ~{_span(total)} (in ~{_span(t_in)}, out ~{_span(t_out)})"
    return f"{head}: {tokens}; {_time(plan, opts, mean['latency_ms'])}; {_money(opts, cfg, t_in, t_out, n, mean)}"


def _mean(column: Any) -> float | None:
    import pandas as pd

    values = [float(v) for v in column if not pd.isna(v)]  # None, NaN and pd.NA (an ERROR's missing count)
    return sum(values) / len(values) if values else None


def _time(plan: Plan, opts: Mapping[str, Any], latency_ms: float | None) -> str:
    in_flight = int(opts.get("max_in_flight") or 1)
    if latency_ms is None:
        return "time n/a (that run recorded no latency)"
    rpm = opts.get("rpm")

    def seconds(outcomes: int, calls: int) -> float:
        busy = outcomes * latency_ms / 1000.0 / in_flight
        return max(busy, (calls - 1) * 60.0 / rpm) if rpm and calls else busy

    span = (seconds(plan.outcomes[0], plan.calls[0]), seconds(plan.outcomes[1], plan.calls[1]))
    pace = f", {float(rpm):g} rpm" if rpm else ""
    return f"time ~{_span(span, _duration)} at {in_flight} in flight{pace} (mean latency {latency_ms:,.0f} ms)"


def _duration(s: float) -> str:
    if s < 90:
        return f"{s:.1f}s"
    return f"{s / 60:.1f}min" if s < 5400 else f"{s / 3600:.1f}h"


def _money(
    opts: Mapping[str, Any],
    cfg: Mapping[str, Any],
    t_in: tuple[float, float] | None,
    t_out: tuple[float, float] | None,
    n: tuple[int, int],
    mean: Mapping[str, float | None],
) -> str:
    """From this run's model's ``[pricing]``, else that run's provider prices, else ``money n/a``."""
    from goldenkit._pricing import NO_MONEY, PROVIDER
    from goldenkit.config import pricing

    price = pricing(dict(cfg)).price(opts.get("model"))
    if price is not None and t_in is not None and t_out is not None:
        usd = [price.cost(round(t_in[i]), round(t_out[i])) or 0.0 for i in (0, 1)]
        return f"money ~{_span((usd[0], usd[1]), money)} ({price.label})"
    if mean["cost"] is not None:
        return f"money ~{_span((n[0] * mean['cost'], n[1] * mean['cost']), money)} ({PROVIDER}, as that run's)"
    return f"money {NO_MONEY}"
