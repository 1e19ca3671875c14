"""What each option of a run takes: one declarative table, checked by one function before any work.

``goldenkit run``'s flags, the ``[run]`` table of goldenkit.toml and
:class:`goldenkit.runner.RunOptions` check a value against :data:`RUN_OPTIONS`
(as scikit-learn's ``_param_validation`` checks an estimator's parameters), so a value
outside its range is one line naming the option where it was given, before a run
folder, a lock or a run.json exists::

    goldenkit: goldenkit run: argument --max-in-flight: must be an integer >= 1, got '0'
    goldenkit: goldenkit.toml: [run] max_in_flight must be an integer >= 1, got 0
    goldenkit.errors.ConfigError: RunOptions.max_in_flight must be an integer >= 1, got 0

Each option of a run is one :class:`RunOption` of :data:`RUN_TABLE`: its name (the ``[run]`` key and
the command line's dest), flag, what it takes, default, help, its :class:`~goldenkit.runner.RunOptions`
field and whether it enters the protocol key. From it come ``goldenkit run``'s arguments (the help with
the default filled in), the check of the ``[run]`` table, RunOptions' defaults and checks, and the
classification tests/test_protocol_key.py runs. Adding an option is one entry here plus its use. The
module imports nothing heavy: the command line's parser reads it to list the options.

>>> check_option("repeats", 3), check_option("rpm", None)
(3, None)
>>> check_option("timeout", float("nan"))
Traceback (most recent call last):
...
ValueError: must be a finite number > 0, got nan
>>> RUN_OPTIONS["max_in_flight"].parse("0")
Traceback (most recent call last):
...
ValueError: must be an integer >= 1, got '0'
>>> check_option("run_id", "main\\n")
Traceback (most recent call last):
...
ValueError: must be one folder name, but it contains a control character (U+000A), got 'main\\n'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from goldenkit._constraint_types import Constraint, Kind, Name, Number, Text

__all__ = [
    "AGENT",
    "NONE",
    "PROTOCOL",
    "RUN_OPTIONS",
    "RUN_TABLE",
    "RunOption",
    "check_option",
    "default_of",
    "field_of",
    "handed_to",
    "plain_run_keys",
    "sample_of",
]


PROTOCOL, AGENT, NONE = "protocol", "agent", "none"


@dataclass(frozen=True)
class RunOption:
    """One option of a run, declared once: everything else is derived from it.

    ``protocol``: ``"protocol"`` (it can change a verdict: it enters the protocol key), ``"agent"`` (it
    changes the system under test: the agent's version) or ``"none"``; ``help``: the flag's help, where
    ``{default}`` is the default; ``takes``: what it takes (a range is checked wherever it is given, a
    :class:`Kind` only in goldenkit.toml; None: no check here); ``key``: a ``[run]`` key of goldenkit.toml;
    ``field``: its :class:`~goldenkit.runner.RunOptions` field (True: the same name); ``flag``: the flag of
    ``goldenkit run`` ("": ``--`` and the name with dashes; None: none), with ``action``, ``metavar``,
    ``choices`` and its help ``group``; ``to``: who is handed its value besides RunOptions (``"provider"``: the
    provider's factory, by name; ``"transport"``: the providers that call over HTTP, left out for the others;
    ``"simulator"``: the simulated user's builder; "": none), from which :data:`goldenkit.providers.PROVIDER_OPTIONS`
    and its siblings are derived (:func:`handed_to`).
    """

    protocol: str
    help: str = ""
    takes: Constraint | None = None
    default: Any = None
    key: bool = True
    field: bool | str = False
    flag: str | None = ""
    action: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    group: str = ""
    to: str = ""

    @property
    def ranged(self) -> bool:
        """Its value is checked wherever it is given (a flag, a ``[run]`` key, a RunOptions field)."""
        return self.takes is not None and not isinstance(self.takes, Kind)

    def help_text(self) -> str | None:
        d = self.default
        return self.help.replace("{default}", f"{d:g}" if isinstance(d, float) else str(d)) if self.help else None


def _in(group: str, **options: RunOption) -> dict[str, RunOption]:
    return {name: dataclasses.replace(o, group=group) for name, o in options.items()}


def _to(to: str, **options: RunOption) -> dict[str, RunOption]:
    return {name: dataclasses.replace(o, to=to) for name, o in options.items()}


_STR, _BOOL = Kind("str"), Kind("bool")
_SEQ = "--sequential"

#: Every option of a run (see :class:`RunOption`), in the order ``goldenkit run --help`` lists them. The name
#: is the ``[run]`` key and the command line's dest. ``latest`` is the results folder's link to the newest
#: run (:data:`goldenkit.results.LATEST`), never a run id.
RUN_TABLE: dict[str, RunOption] = {
    **_in(
        "system under test",
        provider=RunOption(AGENT, "openai, ollama, fixtures, callable, adk, or a registered name", _STR),
        **_to(
            "provider",
            base_url=RunOption(
                NONE, "server URL (openai: with or without /v1; ollama: host, default $OLLAMA_HOST)", _STR
            ),
            model=RunOption(AGENT, "model id sent to the server", _STR),
            api_key_env=RunOption(NONE, "NAME of the environment variable holding the API key (never the key)", _STR),
            fixtures=RunOption(AGENT, "fixtures provider: the recorded fixture folder", _STR, metavar="DIR"),
            callable=RunOption(AGENT, "callable provider: module:function taking a Case", _STR, metavar="MOD:FN"),
            agent=RunOption(AGENT, "adk provider: module.path:root_agent", _STR, metavar="MOD:ATTR"),
            system=RunOption(AGENT, "system prompt that replaces the cases' system instruction", _STR),
            temperature=RunOption(AGENT, "", Number(low=0, high=2, optional=True)),
            seed=RunOption(
                AGENT,
                "the model's sampling seed (see --sample-seed for the row sample)",
                Number(integer=True, optional=True),
                flag="--model-seed",
            ),
            max_tokens=RunOption(AGENT, "", Number(integer=True, low=1, optional=True)),
            tool_choice=RunOption(
                AGENT,
                "openai: tool_choice sent with tools: auto, none, required, or a tool name (forces that tool)",
                _STR,
                metavar="CHOICE",
            ),
            history=RunOption(
                AGENT,
                "multi-turn: earlier turns as the model answered them (actual, default) or as the dataset expects",
                _STR,
                choices=("actual", "expected"),
            ),
            # the providers take their default from here (goldenkit.providers._conversation); goldenkit run
            # hands the option only when it is given, as every option handed to the provider
            max_tool_steps=RunOption(
                AGENT,
                "tool-call rounds per turn before it is cut off (default {default})",
                Number(integer=True, low=0, optional=True),
                8,
            ),
            tool_responses=RunOption(
                AGENT, "JSON/JSONL {name, args, response} answering tool calls in every case", _STR, metavar="FILE"
            ),
        ),
        artifacts=RunOption(
            PROTOCOL,
            "a file or folder that defines the agent (prompts, a RAG corpus, tool definitions; repeatable): "
            "hashed into agent_version.artifacts_sha256, part of the run and comparability keys",
            Kind("list of paths"),
            field=True,
            flag="--artifact",
            action="append",
            metavar="PATH",
        ),
        vision=RunOption(
            PROTOCOL,
            "the model takes no images: refuse (exit 1, naming them) rows that carry images ([run] vision = false)",
            _BOOL,
            True,
            field=True,
            flag="--no-vision",
            action="store_false",
        ),
    ),
    **_in(
        "execution",
        # every attempt has a slot in the run's index
        repeats=RunOption(PROTOCOL, "calls per row (default {default})", Number(True, 1, 1000), 1, field=True),
        max_in_flight=RunOption(NONE, "concurrent calls at most (default {default})", Number(True, 1), 8, field=True),
        rpm=RunOption(
            NONE,
            "requests per minute at most (default: no limit)",
            Number(low=0, low_open=True, optional=True),
            field=True,
        ),
        timeout=RunOption(
            NONE,
            "seconds per request (default {default})",
            Number(low=0, low_open=True),
            60.0,
            field=True,
            to="transport",
        ),
        max_retries=RunOption(
            NONE, "retries of a transient failure (default {default})", Number(True, 0), 3, field=True
        ),
        max_retry_after=RunOption(
            NONE,
            "longest Retry-After honoured (default {default}); a 429 asking for more is a permanent ERROR",
            Number(low=0),
            120.0,
            field=True,
            metavar="SECONDS",
        ),
        max_error_rate=RunOption(
            NONE,
            "above this ERROR share the run is INVALID (default {default})",
            Number(low=0, high=1),
            0.02,
            field=True,
        ),
        executor=RunOption(
            NONE,
            "local (this process, default) or ray: the calls run on a Ray cluster's workers, this process "
            "writes the run (needs goldenkit[ray])",
            _STR,
            "local",
            field=True,
            choices=("local", "ray"),
        ),
        ray_address=RunOption(
            NONE, "--executor ray: a running cluster (default: a new local one)", _STR, metavar="ADDR"
        ),
        ray_workers=RunOption(
            NONE, "--executor ray: worker actors (default: its CPUs)", Number(True, 1, optional=True), metavar="W"
        ),
    ),
    **_in(
        "transport (HTTP providers and the judge)",
        **_to(
            "transport",
            ca_bundle=RunOption(
                NONE,
                "PEM file of CA certificates to trust (default $SSL_CERT_FILE, then certifi)",
                _STR,
                metavar="FILE",
            ),
            no_proxy=RunOption(
                NONE, "ignore HTTPS_PROXY / HTTP_PROXY / ALL_PROXY from the environment", _BOOL, action="store_true"
            ),
            stream=RunOption(
                NONE,
                "ask for streamed replies (SSE / Ollama chunks) and record the time to first token",
                _BOOL,
                action="store_true",
            ),
            max_reply_bytes=RunOption(  # the default is the HTTP providers' (goldenkit.providers._http)
                NONE, "a larger reply is a permanent ERROR (default 32 MiB)", Number(True, 1, optional=True)
            ),
        ),
    ),
    **_in(
        "rows",
        split=RunOption(PROTOCOL, "only rows of this split", _STR, choices=("dev", "holdout")),
        per_slice=RunOption(PROTOCOL, "stratified sample: at most N rows per slice", Number(True, 1, optional=True)),
        sample_seed=RunOption(
            PROTOCOL, "seed of the --per-slice sample (default {default})", Number(True, optional=True), 0
        ),
        red=RunOption(
            PROTOCOL,
            "also run the red rows (tagged red or listed in dataset.json red_rows: expected failures); "
            "a red run is comparable only with red runs",
            _BOOL,
            False,
            field="include_red",
            action="store_true",
        ),
        shard=RunOption(
            NONE,
            "only the rows of hash shard K of N (after --split/--per-slice); merge the N runs with goldenkit merge",
            key=False,
            field=True,
            metavar="K/N",
        ),
        max_ungradable=RunOption(
            NONE,
            "largest share of the selected rows allowed to have nothing any configured grader checks "
            "(default {default}: refuse, naming them, before the first call)",
            Number(low=0, high=1, optional=True),
            0.0,
            field=True,
            metavar="SHARE",
        ),
    ),
    **_in(
        "results",
        run_id=RunOption(
            NONE,
            "run id; an existing run with this id is resumed (only missing outcomes run)",
            Name(reserved=("latest",), optional=True),
            key=False,
            field=True,
        ),
        label=RunOption(  # what people read first (goldenkit._run_label)
            NONE,
            "what leaderboards, history and reports show first (default: derived from the model and its "
            "settings, or the agent's name); recorded in run.json, never part of the protocol key",
            Text(optional=True),
            field=True,
            metavar="TEXT",
        ),
        results_dir=RunOption(NONE, "folder of run folders (default {default})", _STR, "results", field=True),
        retry_errors=RunOption(
            NONE, "re-run only the ERROR outcomes of run --run-id", None, False, False, True, action="store_true"
        ),
        record=RunOption(NONE, "also write the answers as a fixture folder", _STR, field="record_dir", metavar="DIR"),
        config=RunOption(
            NONE, "goldenkit.toml to use (default: beside the dataset, then the current folder)", key=False, field=True
        ),
        graders=RunOption(PROTOCOL, "comma-separated grader names (overrides [graders] use)", key=False),
        criteria=RunOption(
            PROTOCOL,
            "an ADK eval config (or test_config.json): its criteria and thresholds replace every case's",
            _STR,
            field=True,
            metavar="FILE",
        ),
        ignore_criteria=RunOption(
            PROTOCOL,
            "criteria of --criteria that goldenkit cannot grade, left ungraded on purpose (else exit 1)",
            _STR,
            metavar="NAME[,NAME]",
        ),
        quiet=RunOption(NONE, "no progress on stderr", key=False, action="store_true"),
    ),
    **_in(
        "simulated user (scenario rows)",
        user_simulator=RunOption(
            PROTOCOL,
            "who writes the user's turns of scenario rows (required for them in a live run)",
            _STR,
            field=True,
            choices=("callable", "openai", "ollama"),
        ),
        **_to(
            "simulator",
            user_callable=RunOption(
                PROTOCOL, "callable simulator: fn(scenario, transcript) -> str|None", _STR, metavar="MOD:FN"
            ),
            user_model=RunOption(PROTOCOL, "openai/ollama simulator: the model id", _STR),
            user_base_url=RunOption(NONE, "openai/ollama simulator: the server URL", _STR),
            user_api_key_env=RunOption(
                NONE, "openai simulator: NAME of the environment variable holding its key", _STR
            ),
            user_temperature=RunOption(
                PROTOCOL, "openai/ollama simulator: sampling temperature", Number(low=0, high=2, optional=True)
            ),
            user_seed=RunOption(
                PROTOCOL, "openai/ollama simulator: seed (repeat r uses seed + r)", Number(True, optional=True)
            ),
        ),
        max_turns=RunOption(  # the default is the conversation driver's (goldenkit.runner._conversation)
            PROTOCOL,
            "agent turns per conversation at most (default 5; a case's own wins)",
            Number(True, 1, optional=True),
            field=True,
        ),
    ),
    **_in(
        "decided repeats and the sequential gate",
        # recorded in the protocol key (stop_decided), yet under its rule the verdicts are a full run's
        stop_decided_repeats=RunOption(
            NONE,
            "a row's repeats run in order and stop once its verdict under [gate] rule cannot change "
            "([run] stop_decided_repeats)",
            _BOOL,
            False,
            field=True,
            action="store_true",
        ),
        sequential=RunOption(
            PROTOCOL,
            "the sequential gate: rows in a seeded order against --baseline, stopped as soon as a regression "
            "(exit 2) or non-inferiority (exit 0) is shown; exit 3 at the budget",
            key=False,
            field=True,
            action="store_true",
        ),
        baseline=RunOption(NONE, f"{_SEQ}: the baseline (default: [gate] baseline)", key=False, metavar="REF"),
        max_rows=RunOption(
            NONE, f"{_SEQ}: rows read at most (default: all)", Number(True, 1, optional=True), key=False
        ),
        sequential_seed=RunOption(NONE, f"{_SEQ}: the order's seed (0)", Number(True, 0, optional=True), key=False),
    ),
    **_in(  # the run's budget (goldenkit.runner._budget): it stops the run when reached, never changes a verdict
        "budgets and estimates",
        max_calls=RunOption(
            NONE,
            "stop the run after N calls (every attempt, turn and judge call; the run's total over resumes)",
            Number(True, 1, optional=True),
            field=True,
            metavar="N",
        ),
        max_tokens_total=RunOption(
            NONE,
            "stop the run once its calls used N tokens (in + out)",
            Number(True, 1, optional=True),
            field=True,
            metavar="N",
        ),
        max_cost=RunOption(
            NONE,
            "stop the run once its calls cost USD (needs [pricing] for the models called)",
            Number(low=0, low_open=True, optional=True),
            field=True,
            metavar="USD",
        ),
        estimate=RunOption(
            NONE,
            "print the calls the run would make (and with --like its tokens, time and money); call nothing",
            key=False,
            action="store_true",
        ),
        like=RunOption(
            NONE, "--estimate: a previous run of the same dataset to estimate from", key=False, metavar="RUN"
        ),
    ),
    **_in(  # RunOptions' fields that no flag sets (a run from Python)
        "",
        sample=RunOption(PROTOCOL, key=False, field=True, flag=None),
        pricing=RunOption(NONE, key=False, field=True, flag=None),
        judge_version=RunOption(PROTOCOL, key=False, field=True, flag=None),
        progress=RunOption(NONE, key=False, field=True, flag=None),
        rule=RunOption(PROTOCOL, takes=None, default="majority", key=False, field=True, flag=None),
        backoff_base=RunOption(NONE, takes=Number(low=0), default=0.5, key=False, field=True, flag=None),
        backoff_cap=RunOption(NONE, takes=Number(low=0), default=30.0, key=False, field=True, flag=None),
        # consecutive ERRORs; None: never stop
        abort_after_errors=RunOption(
            NONE, takes=Number(True, 1, optional=True), default=50, key=False, field=True, flag=None
        ),
    ),
}

#: What each option with a range takes, checked wherever it is given (see the module doc).
RUN_OPTIONS: dict[str, Constraint] = {
    name: o.takes for name, o in RUN_TABLE.items() if o.ranged and o.takes is not None
}


def default_of(name: str) -> Any:
    """The default of run option ``name``: what RunOptions' and CallLimits' fields of it take."""
    return RUN_TABLE[name].default


def field_of(name: str) -> str | None:
    """The :class:`~goldenkit.runner.RunOptions` field of run option ``name`` (None: it has none)."""
    field = RUN_TABLE[name].field
    return field if isinstance(field, str) else name if field else None


def handed_to(to: str) -> tuple[str, ...]:
    """The run options handed to ``to`` (``"provider"``, ``"transport"``, ``"simulator"``), in the table's order.

    >>> handed_to("transport")
    ('timeout', 'ca_bundle', 'no_proxy', 'stream', 'max_reply_bytes')
    """
    return tuple(name for name, o in RUN_TABLE.items() if o.to == to)


def plain_run_keys() -> dict[str, str]:
    """The ``[run]`` keys whose value is their RunOptions field's as it is (a range, or true or false; not a
    path or a name of what to build), and that field: what a run from Python takes from ``[run]``, and what
    ``goldenkit run`` hands to ``run_eval`` as it resolved it."""
    out = {}
    for name, o in RUN_TABLE.items():
        field = field_of(name)
        if o.key and field is not None and (o.ranged or o.takes == Kind("bool")):
            out[name] = field
    return out


def sample_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """RunOptions' ``sample`` from the run options ``split``, ``per_slice`` and ``sample_seed`` of ``values`` (a
    ``[run]`` table, or ``goldenkit run``'s resolved options): the seed counts only for a per-slice sample.

    >>> sample_of({"split": "dev"}), sample_of({"per_slice": 2})
    ({'split': 'dev', 'per_slice': None, 'seed': None}, {'split': None, 'per_slice': 2, 'seed': 0})
    """
    per_slice, seed = values.get("per_slice"), values.get("sample_seed")
    if per_slice is not None and seed is None:
        seed = default_of("sample_seed")
    return {"split": values.get("split"), "per_slice": per_slice, "seed": seed if per_slice is not None else None}


def check_option(name: str, value: object) -> Any:
    """``value`` of run option ``name`` as the option takes it; a ValueError saying what it takes otherwise
    (the caller names the option where it was given: a flag, a ``[run]`` key, a RunOptions field)."""
    takes = RUN_TABLE[name].takes
    return value if takes is None else takes.check(value)
