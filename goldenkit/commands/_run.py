"""``goldenkit run DATASET --provider NAME ...``: run a dataset through a model or agent.

Options come from the command line, else from the ``[run]`` table of
goldenkit.toml (same names with underscores: ``max_in_flight = 16``), else the
defaults of the run options' table (:data:`goldenkit._constraints.RUN_TABLE`). The graders are
``[graders] use = [...]`` (or ``--graders a,b``), built by :func:`goldenkit.graders.build_graders` with their options.

Seeds: ``--model-seed`` is the *model's* sampling seed (sent to the provider,
like ``--temperature``; ``[run] seed`` in goldenkit.toml); ``--sample-seed`` seeds the
stratified row sample drawn by ``--per-slice``. They are separate so a fixed
sample can be run with several model seeds and vice versa.

Prints the run summary on stdout and returns 0 for a VALID run, 3 for an
INVALID one (error rate above ``--max-error-rate``, every call errored, or the
run stopped early). Whether quality is good enough is the gate's business.
Bad input exits 1 before the first call: a case that cannot be normalized
(file:line and row id), or a ``--run-id`` that another live process is
writing (its PID is named), or more than ``--max-ungradable`` (a share,
default 0; ``[run] max_ungradable``) of the selected rows with nothing any
configured grader can check (named; see :mod:`goldenkit.graders._gradable`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldenkit._checks import check_output
from goldenkit._config_tables import check_run_table
from goldenkit._constraints import RUN_TABLE, RunOption, plain_run_keys, sample_of
from goldenkit.commands import _estimate as estimate_cli, _sequential as sequential_cli
from goldenkit.commands._agent import grader_list, grader_use
from goldenkit.commands._args import BadNumber
from goldenkit.config import load_config, section
from goldenkit.errors import ConfigError, GoldenkitError, UsageError
from goldenkit.providers import (
    apply_transport_to_judges,
    build_provider,
    build_simulator,
)

if TYPE_CHECKING:
    from goldenkit.formats import EvalCriteria


def flag(name: str) -> Callable[[str], Any]:
    """The argparse type of run option ``name``: its text checked by what the option takes in
    :data:`~goldenkit._constraints.RUN_TABLE` (``RunOptions`` and the ``[run]`` table read it too)."""
    constraint = RUN_TABLE[name].takes
    if constraint is None:
        raise KeyError(f"run option {name!r} takes any text")

    def parse(text: str) -> Any:
        try:
            return constraint.parse(text)
        except ValueError as exc:
            raise BadNumber(str(exc)) from None

    parse.__name__ = constraint.what
    return parse


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 VALID run, 1 usage or bad input (also a case that cannot be normalized, "
        "or a run id another live process is writing), 2 VALID but no outcome PASS or FAIL (nothing graded), "
        "3 INVALID run (infrastructure failure, or stopped: budget)",
    )
    p.add_argument("dataset", help="dataset folder (dataset.jsonl + dataset.json) or .jsonl file")
    groups: dict[str, Any] = {}
    for name, option in RUN_TABLE.items():  # every flag is a run option of the one table
        if option.flag is not None:
            if option.group not in groups:
                groups[option.group] = p.add_argument_group(option.group)
            groups[option.group].add_argument(option.flag or f"--{name.replace('_', '-')}", **_flag(name, option))
    p.set_defaults(func=run_command)


def _flag(name: str, option: RunOption) -> dict[str, Any]:
    """The keywords of ``add_argument`` for run option ``name``: its dest, help (the default filled in), type
    (its range: :func:`flag`), action, metavar and choices. A switch that is a ``[run]`` key is None unless
    given, so the file's value stands."""
    kw: dict[str, Any] = {"dest": name, "help": option.help_text()}
    if option.action is not None:
        kw["action"] = option.action
        if option.action != "append":
            kw["default"] = None if option.key else False
    if option.ranged:
        kw["type"] = flag(name)
    if option.metavar is not None:
        kw["metavar"] = option.metavar
    if option.choices is not None:
        kw["choices"] = option.choices
    return kw


def resolve_options(args: argparse.Namespace, cfg: dict[str, Any]) -> dict[str, Any]:
    """Command line over goldenkit.toml [run] over the defaults (:data:`goldenkit._constraints.RUN_TABLE`)."""
    keys = [name for name, option in RUN_TABLE.items() if option.key]
    # an option handed to the provider is handed only when given: the provider's default is the table's, and a
    # provider that does not take it is not handed it (goldenkit.providers.build_provider)
    opts = {k: RUN_TABLE[k].default for k in keys if RUN_TABLE[k].default is not None and RUN_TABLE[k].to != "provider"}
    opts.update(check_run_table(section(cfg, "run"), cfg.get("_path", "goldenkit.toml")))
    if "artifacts" in opts and "_path" in cfg:  # [run] artifacts are relative to the config file
        opts["artifacts"] = [str(Path(cfg["_path"]).parent / p) for p in opts["artifacts"]]
    for k in keys:
        v = getattr(args, k, None)
        if v is not None:
            opts[k] = v
    return opts


def _executor(args: argparse.Namespace, opts: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """The executor keywords of ``run_eval`` (none for a local run; the flag and ``[run]`` take local or ray
    only, as the run options' table says)."""
    executor = opts.get("executor") or "local"
    if executor == "local":
        if opts.get("ray_address") is not None or opts.get("ray_workers") is not None:
            raise UsageError("goldenkit run: --ray-address and --ray-workers need --executor ray")
        return {}
    from goldenkit.runner import RaySettings, SpecSetup

    setup = SpecSetup(opts, cfg, grader_use(args.graders))  # a worker builds from it, importing no command module
    return {"executor": RaySettings(address=opts.get("ray_address"), workers=opts.get("ray_workers"), setup=setup)}


def read_criteria(path: str | None, ignore: str | None, command: str) -> EvalCriteria | None:
    """The ``--criteria`` file read, its warnings printed (``--ignore-criteria`` names, comma-separated); None
    without one, where ``--ignore-criteria`` alone is a usage error of ``command``."""
    if path is None:
        if ignore:
            raise UsageError(f"goldenkit {command}: --ignore-criteria needs --criteria FILE")
        return None
    from goldenkit.formats import read_eval_config

    config = read_eval_config(path, ignore=str(ignore or "").split(","))
    for line in config.warnings():
        print(f"goldenkit: warning: {line}", file=sys.stderr)
    return config


def check_rule_repeats(cfg: dict[str, Any], repeats: int) -> None:
    """Refuse, before anything is written, a run whose repeats the ``[gate] rule`` that will collapse them
    cannot decide on (:func:`goldenkit.stats.too_few_repeats`, the rule RunOptions and the gate apply too)."""
    rule = section(cfg, "gate").get("rule")
    if not isinstance(rule, str) or not rule.startswith("at_least:"):
        return
    from goldenkit.stats import too_few_repeats

    where = cfg.get("_path", "goldenkit.toml")
    try:
        short = too_few_repeats(rule, repeats)
    except GoldenkitError as exc:
        raise ConfigError(f"{where}: [gate] rule: {exc}") from None
    if short is not None:
        raise ConfigError(f"{where}: [gate] rule {short} (--repeats, [run] repeats): every row would FAIL")


def run_arguments(
    args: argparse.Namespace,
    opts: dict[str, Any],
    cfg: dict[str, Any],
    *,
    run_id: str | None,
    graders: list[Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every keyword of :func:`goldenkit.runner.run_eval` from the resolved options: the one builder of a run
    that ``goldenkit run`` and ``goldenkit benchmark`` share (so a benchmark's runs are the protocol asked for)."""
    from goldenkit.runner import parse_shard

    check_rule_repeats(cfg, opts["repeats"])
    check_output(opts["results_dir"], "--results-dir", folder=True)  # also when it is the default or [run]'s
    criteria = read_criteria(opts.get("criteria"), opts.get("ignore_criteria"), args.command_name)
    provider, simulator = build_provider(opts), build_simulator(opts)
    apply_transport_to_judges(graders, opts)
    # the file named with --config; else run_eval finds the same one the same way, knowing how it was found
    # (a dataset's own goldenkit.toml stays the dataset's: goldenkit.config.budget_pricing)
    named = cfg.get("_how") == "--config"
    config = {
        "config_file": cfg.get("_path") if named else None,
        "config_sha256": cfg.get("_sha256") if named else None,
    }
    config.update(extra or {})
    if opts.get("artifacts"):
        config["artifacts"] = opts["artifacts"]
    # the options whose value is their keyword's (:func:`goldenkit._constraints.plain_run_keys`), as resolved;
    # stop_decided_repeats comes with the [gate] rule it stops under (goldenkit.commands._sequential)
    plain = {f: opts[k] for k, f in plain_run_keys().items() if opts.get(k) is not None and k != "stop_decided_repeats"}
    return {
        "provider": provider,
        "graders": graders,
        **plain,
        "run_id": run_id,
        "results_dir": Path(opts["results_dir"]),
        "sample": sample_of(opts),
        "record_dir": opts.get("record"),
        "retry_errors": args.retry_errors,
        "progress": False if args.quiet else None,
        "config": config,
        "shard": parse_shard(args.shard) if getattr(args, "shard", None) is not None else None,
        "artifacts": opts.get("artifacts"),
        **_executor(args, opts, cfg),
        "criteria": criteria,
        "user_simulator": simulator,
    }


def run_command(args: argparse.Namespace) -> int:
    from goldenkit.dataset import read_dataset
    from goldenkit.runner import run_eval

    cfg = load_config(args.config, dataset_dir=args.dataset)
    opts = resolve_options(args, cfg)
    dataset = read_dataset(args.dataset)
    if args.estimate or args.like is not None:  # nothing called, nothing written
        return estimate_cli.estimate(args, opts, cfg, dataset)
    graders = grader_list(args, cfg, opts.get("model"))
    args.command_name = "run"
    extra = sequential_cli.run_keywords(args, cfg, opts)
    summary = run_eval(dataset, **run_arguments(args, opts, cfg, run_id=args.run_id, graders=graders), **extra)
    print(summary.line(), file=sys.stdout)
    print(summary.cost_line(), file=sys.stdout)
    if summary.resumed:  # the final line of a resume: what it reused, what it called
        print(summary.resumed_line(), file=sys.stdout)
    return sequential_cli.run_exit(summary, extra)


__all__ = [
    "register",
    "resolve_options",
    "run_arguments",
    "run_command",
]
