"""``goldenkit run DATASET --provider NAME ...``: run a dataset through a model or agent.

Options come from the command line, else from the ``[run]`` table of
goldenkit.toml (same names with underscores: ``max_in_flight = 16``), else the
defaults below. The graders are ``[graders] use = [...]`` (or ``--graders a,b``),
built by :func:`goldenkit.graders.build_graders` with their options.

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
from goldenkit._constraints import RUN_OPTIONS
from goldenkit._text import did_you_mean
from goldenkit.commands import _estimate as estimate_cli, _sequential as sequential_cli
from goldenkit.commands._agent import (
    PROVIDER_OPTIONS,
    TRANSPORT_OPTIONS,
    apply_transport_to_judges,
    build_provider,
    build_simulator,
    grader_list,
    register_simulator,
    worker_setup,
)
from goldenkit.commands._args import BadNumber
from goldenkit.config import load_config, section
from goldenkit.errors import ConfigError, GoldenkitError, UsageError

if TYPE_CHECKING:
    from goldenkit.formats._eval_config import EvalCriteria


def _str_list(value: Any) -> list[str]:
    """A TOML list of strings (``[run] artifacts``); anything else is a TypeError."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"not a list of strings: {value!r}")
    return list(value)


_str_list.__name__ = "list of paths"


def flag(name: str) -> Callable[[str], Any]:
    """The argparse type of run option ``name``: its text checked against :data:`RUN_OPTIONS`, the one
    table of what each run option takes (``RunOptions`` and the ``[run]`` table read it too)."""
    constraint = RUN_OPTIONS[name]

    def parse(text: str) -> Any:
        try:
            return constraint.parse(text)
        except ValueError as exc:
            raise BadNumber(str(exc)) from None

    parse.__name__ = constraint.what
    return parse


# [run] keys that may be set in goldenkit.toml, with their types; a key of RUN_OPTIONS is checked there.
RUN_KEYS: dict[str, Callable[[Any], Any]] = {
    "provider": str,
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "fixtures": str,
    "callable": str,
    "agent": str,
    "system": str,
    "temperature": RUN_OPTIONS["temperature"].check,
    "seed": RUN_OPTIONS["seed"].check,
    "max_tokens": RUN_OPTIONS["max_tokens"].check,
    "tool_choice": str,
    "history": str,
    "max_tool_steps": RUN_OPTIONS["max_tool_steps"].check,
    "tool_responses": str,
    "repeats": RUN_OPTIONS["repeats"].check,
    "max_in_flight": RUN_OPTIONS["max_in_flight"].check,
    "rpm": RUN_OPTIONS["rpm"].check,
    "timeout": RUN_OPTIONS["timeout"].check,
    "max_retries": RUN_OPTIONS["max_retries"].check,
    "max_retry_after": RUN_OPTIONS["max_retry_after"].check,
    "max_error_rate": RUN_OPTIONS["max_error_rate"].check,
    "split": str,
    "per_slice": RUN_OPTIONS["per_slice"].check,
    "sample_seed": RUN_OPTIONS["sample_seed"].check,
    "results_dir": str,
    "record": str,
    "ca_bundle": str,
    "no_proxy": bool,
    "stream": bool,
    "max_reply_bytes": RUN_OPTIONS["max_reply_bytes"].check,
    "red": bool,
    "max_ungradable": RUN_OPTIONS["max_ungradable"].check,
    "artifacts": _str_list,
    "executor": str,
    "ray_address": str,
    "ray_workers": RUN_OPTIONS["ray_workers"].check,
    "vision": bool,
    "criteria": str,
    "ignore_criteria": str,
    "user_simulator": str,
    "user_callable": str,
    "user_model": str,
    "user_base_url": str,
    "user_api_key_env": str,
    "user_temperature": RUN_OPTIONS["user_temperature"].check,
    "user_seed": RUN_OPTIONS["user_seed"].check,
    "max_turns": RUN_OPTIONS["max_turns"].check,
    "stop_decided_repeats": bool,
    "max_calls": RUN_OPTIONS["max_calls"].check,
    "max_tokens_total": RUN_OPTIONS["max_tokens_total"].check,
    "max_cost": RUN_OPTIONS["max_cost"].check,
    "label": RUN_OPTIONS["label"].check,
}
DEFAULTS: dict[str, Any] = {
    "repeats": 1,
    "max_in_flight": 8,
    "timeout": 60.0,
    "max_retries": 3,
    "max_retry_after": 120.0,
    "max_error_rate": 0.02,
    "results_dir": "results",
    "sample_seed": 0,
    "max_ungradable": 0.0,
}


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 VALID run, 1 usage or bad input (also a case that cannot be normalized, "
        "or a run id another live process is writing), 2 VALID but no outcome PASS or FAIL (nothing graded), "
        "3 INVALID run (infrastructure failure, or stopped: budget)",
    )
    p.add_argument("dataset", help="dataset folder (dataset.jsonl + dataset.json) or .jsonl file")
    _system_under_test(p.add_argument_group("system under test"))
    _execution(p.add_argument_group("execution"))
    _transport(p.add_argument_group("transport (HTTP providers and the judge)"))
    _rows(p.add_argument_group("rows"))
    _results(p.add_argument_group("results"))
    register_simulator(p.add_argument_group("simulated user (scenario rows)"), flag)
    sequential_cli.register_run(p.add_argument_group("decided repeats and the sequential gate"), flag)
    estimate_cli.register_run(p.add_argument_group("budgets and estimates"), flag)
    p.set_defaults(func=run_command)


def _system_under_test(g: Any) -> None:
    g.add_argument("--provider", help="openai, ollama, fixtures, callable, adk, or a registered name")
    g.add_argument("--base-url", help="server URL (openai: with or without /v1; ollama: host, default $OLLAMA_HOST)")
    g.add_argument("--model", help="model id sent to the server")
    g.add_argument("--api-key-env", help="NAME of the environment variable holding the API key (never the key)")
    g.add_argument("--fixtures", metavar="DIR", help="fixtures provider: the recorded fixture folder")
    g.add_argument("--callable", metavar="MOD:FN", help="callable provider: module:function taking a Case")
    g.add_argument("--agent", metavar="MOD:ATTR", help="adk provider: module.path:root_agent")
    g.add_argument("--system", help="system prompt that replaces the cases' system instruction")
    g.add_argument("--temperature", type=flag("temperature"))
    g.add_argument(
        "--model-seed",
        dest="seed",
        type=flag("seed"),
        help="the model's sampling seed (see --sample-seed for the row sample)",
    )
    g.add_argument("--max-tokens", type=flag("max_tokens"))
    g.add_argument(
        "--tool-choice",
        metavar="CHOICE",
        help="openai: tool_choice sent with tools: auto, none, required, or a tool name (forces that tool)",
    )
    g.add_argument(
        "--history",
        choices=("actual", "expected"),
        help="multi-turn: earlier turns as the model answered them (actual, default) or as the dataset expects",
    )
    g.add_argument(
        "--max-tool-steps",
        type=flag("max_tool_steps"),
        help="tool-call rounds per turn before it is cut off (default 8)",
    )
    g.add_argument(
        "--tool-responses", metavar="FILE", help="JSON/JSONL {name, args, response} answering tool calls in every case"
    )
    g.add_argument(
        "--artifact",
        dest="artifacts",
        action="append",
        metavar="PATH",
        help="a file or folder that defines the agent (prompts, a RAG corpus, tool definitions; repeatable): "
        "hashed into agent_version.artifacts_sha256, part of the run and comparability keys",
    )
    g.add_argument(
        "--no-vision",
        dest="vision",
        action="store_false",
        default=None,
        help="the model takes no images: refuse (exit 1, naming them) rows that carry images ([run] vision = false)",
    )


def _execution(r: Any) -> None:
    r.add_argument("--repeats", type=flag("repeats"), help="calls per row (default 1)")
    r.add_argument("--max-in-flight", type=flag("max_in_flight"), help="concurrent calls at most (default 8)")
    r.add_argument("--rpm", type=flag("rpm"), help="requests per minute at most (default: no limit)")
    r.add_argument("--timeout", type=flag("timeout"), help="seconds per request (default 60)")
    r.add_argument("--max-retries", type=flag("max_retries"), help="retries of a transient failure (default 3)")
    r.add_argument(
        "--max-retry-after",
        type=flag("max_retry_after"),
        metavar="SECONDS",
        help="longest Retry-After honoured (default 120); a 429 asking for more is a permanent ERROR",
    )
    r.add_argument(
        "--max-error-rate", type=flag("max_error_rate"), help="above this ERROR share the run is INVALID (default 0.02)"
    )
    r.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="local (this process, default) or ray: the calls run on a Ray cluster's workers, this process "
        "writes the run (needs goldenkit[ray])",
    )
    r.add_argument("--ray-address", metavar="ADDR", help="--executor ray: a running cluster (default: a new local one)")
    r.add_argument(
        "--ray-workers", type=flag("ray_workers"), metavar="W", help="--executor ray: worker actors (default: its CPUs)"
    )


def _transport(h: Any) -> None:
    h.add_argument(
        "--ca-bundle",
        metavar="FILE",
        help="PEM file of CA certificates to trust (default $SSL_CERT_FILE, then certifi)",
    )
    h.add_argument(
        "--no-proxy",
        action="store_true",
        default=None,
        help="ignore HTTPS_PROXY / HTTP_PROXY / ALL_PROXY from the environment",
    )
    h.add_argument(
        "--stream",
        action="store_true",
        default=None,
        help="ask for streamed replies (SSE / Ollama chunks) and record the time to first token",
    )
    h.add_argument(
        "--max-reply-bytes", type=flag("max_reply_bytes"), help="a larger reply is a permanent ERROR (default 32 MiB)"
    )


def _rows(s: Any) -> None:
    s.add_argument("--split", choices=("dev", "holdout"), help="only rows of this split")
    s.add_argument("--per-slice", type=flag("per_slice"), help="stratified sample: at most N rows per slice")
    s.add_argument("--sample-seed", type=flag("sample_seed"), help="seed of the --per-slice sample (default 0)")
    s.add_argument(
        "--red",
        action="store_true",
        default=None,
        help="also run the red rows (tagged red or listed in dataset.json red_rows: expected failures); "
        "a red run is comparable only with red runs",
    )
    s.add_argument(
        "--shard",
        metavar="K/N",
        help="only the rows of hash shard K of N (after --split/--per-slice); merge the N runs with goldenkit merge",
    )
    s.add_argument(
        "--max-ungradable",
        type=flag("max_ungradable"),
        metavar="SHARE",
        help="largest share of the selected rows allowed to have nothing any configured grader checks "
        "(default 0: refuse, naming them, before the first call)",
    )


def _results(o: Any) -> None:
    o.add_argument(
        "--run-id",
        type=flag("run_id"),
        help="run id; an existing run with this id is resumed (only missing outcomes run)",
    )
    o.add_argument(
        "--label",
        type=flag("label"),
        metavar="TEXT",
        help="what leaderboards, history and reports show first (default: derived from the model and its "
        "settings, or the agent's name); recorded in run.json, never part of the protocol key",
    )
    o.add_argument("--results-dir", help="folder of run folders (default results)")
    o.add_argument("--retry-errors", action="store_true", help="re-run only the ERROR outcomes of run --run-id")
    o.add_argument("--record", metavar="DIR", help="also write the answers as a fixture folder")
    o.add_argument("--config", help="goldenkit.toml to use (default: beside the dataset, then the current folder)")
    o.add_argument("--graders", help="comma-separated grader names (overrides [graders] use)")
    o.add_argument(
        "--criteria",
        metavar="FILE",
        help="an ADK eval config (or test_config.json): its criteria and thresholds replace every case's",
    )
    o.add_argument(
        "--ignore-criteria",
        metavar="NAME[,NAME]",
        help="criteria of --criteria that goldenkit cannot grade, left ungraded on purpose (else exit 1)",
    )
    o.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _coerce(name: str, value: Any, where: str) -> Any:
    if name in RUN_OPTIONS:
        try:
            return RUN_OPTIONS[name].check(value)
        except ValueError as exc:
            raise ConfigError(f"{where}: [run] {name} {exc}") from None
    if RUN_KEYS[name] is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: [run] {name} = {value!r} is not a valid bool (true or false)")
    try:
        return RUN_KEYS[name](value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: [run] {name} = {value!r} is not a valid {RUN_KEYS[name].__name__}") from None


def resolve_options(args: argparse.Namespace, cfg: dict[str, Any]) -> dict[str, Any]:
    """Command line over goldenkit.toml [run] over defaults."""
    run_cfg = section(cfg, "run")
    where = cfg.get("_path", "goldenkit.toml")
    unknown = sorted(set(run_cfg) - set(RUN_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown [run] key(s): {', '.join(unknown)}{did_you_mean(unknown[0], RUN_KEYS)}")
    opts = dict(DEFAULTS)
    opts.update({k: _coerce(k, v, where) for k, v in run_cfg.items()})
    if "artifacts" in opts and "_path" in cfg:  # [run] artifacts are relative to the config file
        opts["artifacts"] = [str(Path(cfg["_path"]).parent / p) for p in opts["artifacts"]]
    for k in RUN_KEYS:
        v = getattr(args, k, None)
        if v is not None:
            opts[k] = v
    return opts


def _executor(args: argparse.Namespace, opts: dict[str, Any], cfg: dict[str, Any]) -> dict[str, Any]:
    """The executor keywords of ``run_eval`` (none for a local run)."""
    executor = opts.get("executor") or "local"
    if executor == "local":
        if opts.get("ray_address") is not None or opts.get("ray_workers") is not None:
            raise UsageError("goldenkit run: --ray-address and --ray-workers need --executor ray")
        return {}
    if executor != "ray":
        raise ConfigError(f"[run] executor = {executor!r}: use local or ray")
    import functools

    from goldenkit.runner._ray_executor import RaySettings

    setup = functools.partial(worker_setup, opts, cfg, args.graders)
    return {"executor": RaySettings(address=opts.get("ray_address"), workers=opts.get("ray_workers"), setup=setup)}


def read_criteria(path: str | None, ignore: str | None, command: str) -> EvalCriteria | None:
    """The ``--criteria`` file read, its warnings printed (``--ignore-criteria`` names, comma-separated); None
    without one, where ``--ignore-criteria`` alone is a usage error of ``command``."""
    if path is None:
        if ignore:
            raise UsageError(f"goldenkit {command}: --ignore-criteria needs --criteria FILE")
        return None
    from goldenkit.formats._eval_config import read_eval_config

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
    sample = {"split": opts.get("split"), "per_slice": opts.get("per_slice"), "seed": None}
    if sample["per_slice"] is not None:
        sample["seed"] = opts.get("sample_seed", 0)
    config = {"config_file": cfg.get("_path"), "config_sha256": cfg.get("_sha256"), **(extra or {})}
    if opts.get("artifacts"):
        config["artifacts"] = opts["artifacts"]
    return {
        "provider": provider,
        "graders": graders,
        "repeats": opts["repeats"],
        "max_in_flight": opts["max_in_flight"],
        "rpm": opts.get("rpm"),
        "timeout": opts["timeout"],
        "max_retries": opts["max_retries"],
        "max_retry_after": opts["max_retry_after"],
        "run_id": run_id,
        "label": opts.get("label"),
        "results_dir": Path(opts["results_dir"]),
        "sample": sample,
        "max_error_rate": opts["max_error_rate"],
        "record_dir": opts.get("record"),
        "retry_errors": args.retry_errors,
        "progress": False if args.quiet else None,
        "config": config,
        "include_red": bool(opts.get("red")),
        "max_ungradable": opts["max_ungradable"],
        "shard": parse_shard(args.shard) if getattr(args, "shard", None) is not None else None,
        "artifacts": opts.get("artifacts"),
        **_executor(args, opts, cfg),
        "vision": opts.get("vision") is not False,
        "criteria": criteria,
        "user_simulator": simulator,
        **({"max_turns": opts["max_turns"]} if opts.get("max_turns") is not None else {}),
        **estimate_cli.budget_keywords(opts),
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
    "PROVIDER_OPTIONS",
    "TRANSPORT_OPTIONS",
    "apply_transport_to_judges",
    "build_provider",
    "build_simulator",
    "grader_list",
    "register",
    "resolve_options",
    "run_arguments",
    "run_command",
    "worker_setup",
]
