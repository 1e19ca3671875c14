"""``goldenkit benchmark DATASET --provider P --models a,b,c``: one ordinary run per model, then the leaderboard.

Every model runs the same protocol -- the same rows (split, sample), repeats,
graders and judge -- as ``goldenkit run`` with the same options would run it,
into the run id ``<prefix>-<model>`` (``--run-prefix``, default today's UTC
date). A run id that exists is resumed like any run: only missing outcomes
are called, so an interrupted benchmark is finished by running it again.

Heterogeneous agents (two prompts of one model, a fixture recording, a
callable) are listed in goldenkit.toml instead of ``--models``::

    [[benchmark.agents]]
    name = "short-prompt"            # run id suffix (default: the model)
    label = "gpt-4o-mini, concise"   # what leaderboards show first (default: derived from its settings)
    provider = "openai"
    model = "gpt-4o-mini"
    system = "Be concise."

    [[benchmark.agents]]
    name = "recorded"
    provider = "fixtures"
    fixtures = "datasets/support-agent/fixtures/baseline"

Each agent table takes the provider keys of ``[run]`` (provider, model,
base_url, api_key_env, system, fixtures, callable, agent, temperature, ...);
what it leaves out comes from the command line and ``[run]``.

The leaderboard of all the runs is printed at the end (see ``goldenkit
leaderboard``), with what a passing row cost (money from the provider or
the config's ``[pricing]``, else ``n/a``) and the quality-cost frontier.
Exit codes: 0 every run VALID and the runs comparable · 1 usage or bad
input · 3 a run is INVALID (the leaderboard is still printed, with a note;
it is no evidence) · 4 the runs are not comparable.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import re
import sys
from pathlib import Path
from typing import Any

from goldenkit.commands import _run as run_cmd
from goldenkit.commands._agent import grader_list
from goldenkit.commands._leaderboard import add_options, compute, show
from goldenkit.config import load_config, table_values
from goldenkit.errors import ConfigError, ResultsError, UsageError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def register(sub: Any) -> None:
    # the options of `goldenkit run`, taken from its own parser so the two never drift apart
    scratch = argparse.ArgumentParser(add_help=False)
    run_sub = scratch.add_subparsers()
    run_cmd.register(run_sub)
    run_parser = run_sub.choices["run"]
    p = sub.add_parser(
        "benchmark",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 ok, 1 usage or bad input, 3 a run is INVALID, 4 the runs are not comparable",
        parents=[run_parser],
        conflict_handler="resolve",
    )
    b = p.add_argument_group("benchmark")
    b.add_argument("--models", help="comma-separated model ids, one run each (or [[benchmark.agents]])")
    b.add_argument(
        "--run-prefix",
        type=run_cmd.flag("run_id"),  # checked as a run id is: it becomes the first part of each
        help="run ids are PREFIX-MODEL (default: today's date, YYYY-MM-DD)",
    )
    add_options(b, results_dir=False)  # --results-dir is run's
    p.set_defaults(func=benchmark_command)


def safe_name(text: str) -> str:
    """A run-id-safe form of a model or agent name (``llama3:8b`` -> ``llama3-8b``)."""
    return _UNSAFE.sub("-", text).strip("-") or "agent"


def agents_of(args: argparse.Namespace, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The agents to run: ``--models``, else ``[[benchmark.agents]]`` of the config."""
    where = cfg.get("_path", "goldenkit.toml")
    listed = table_values(cfg, "benchmark")["agents"]  # each agent's keys checked as [benchmark] declares them
    if args.models:
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        if not models:
            raise UsageError("goldenkit benchmark: --models lists no model")
        return [{"name": m, "model": m} for m in models]
    if not listed:
        raise UsageError("goldenkit benchmark: give --models a,b,... or [[benchmark.agents]] in goldenkit.toml")
    agents = []
    for i, a in enumerate(listed, 1):
        name = a.get("name") or a.get("model") or (Path(str(a["fixtures"])).name if a.get("fixtures") else None)
        if not name:
            raise ConfigError(f"{where}: [[benchmark.agents]] #{i}: needs a name or a model")
        agents.append({**a, "name": str(name)})
    return agents


def _run_ids(agents: list[dict[str, Any]], prefix: str) -> list[str]:
    ids = [f"{prefix}-{safe_name(a['name'])}" for a in agents]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise UsageError(f"goldenkit benchmark: two agents share the run id {dup[0]}; give them distinct names")
    return ids


def _run_one(
    dataset: Any, opts: dict[str, Any], cfg: dict[str, Any], graders: list[Any], run_id: str, args: argparse.Namespace
) -> Any:
    """One agent's run, built by the same function as ``goldenkit run``'s (every option kept)."""
    from goldenkit.runner import NEW_RUN_ID, run_eval

    args.command_name = "benchmark"
    extra = {"benchmark": args.run_prefix}
    try:
        return run_eval(dataset, **run_cmd.run_arguments(args, opts, cfg, run_id=run_id, graders=graders, extra=extra))
    except ResultsError as exc:  # a run of this prefix made with other settings: a new prefix is the fix
        if not str(exc).endswith(NEW_RUN_ID):
            raise
        why = str(exc).removesuffix(NEW_RUN_ID)
        raise ResultsError(f"{why}use another --run-prefix (e.g. --run-prefix {args.run_prefix}-2)") from None


def benchmark_command(args: argparse.Namespace) -> int:
    from goldenkit.dataset import read_dataset

    if args.run_id:
        raise UsageError("goldenkit benchmark: --run-id does not apply; run ids are --run-prefix + model")
    if args.model and args.models:
        raise UsageError("goldenkit benchmark: give --models, not --model")
    if args.record:
        raise UsageError("goldenkit benchmark: --record does not apply; record each agent with goldenkit run")
    if args.label is not None:  # one label on every run would name them all alike
        raise UsageError(
            "goldenkit benchmark: --label does not apply; each run is labelled by its model and settings, "
            "or by label = ... in its [[benchmark.agents]] table"
        )
    cfg = load_config(args.config, dataset_dir=args.dataset)
    base = run_cmd.resolve_options(args, cfg)
    args.run_prefix = args.run_prefix or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    agents = agents_of(args, cfg)
    run_ids = _run_ids(agents, args.run_prefix)
    dataset = read_dataset(args.dataset)
    code = 0
    for agent, run_id in zip(agents, run_ids, strict=True):
        # each agent's label: its table's, else derived from its own settings ([run] label would name them all alike)
        opts = {**base, "label": None, **{k: v for k, v in agent.items() if k != "name"}}
        summary = _run_one(dataset, opts, cfg, grader_list(args, cfg, opts.get("model")), run_id, args)
        print(f"{agent['name']}: {summary.line()}", flush=True)
        code = max(code, summary.exit_code)  # 3 wins over 2 (an agent whose run graded nothing)
    args.results_dir = str(base["results_dir"])
    print()
    show(compute([Path(base["results_dir"]) / r for r in run_ids], args, cfg), args.json)
    sys.stdout.flush()
    return code


__all__ = ["agents_of", "benchmark_command", "register", "safe_name"]
