"""The tables of goldenkit.toml besides ``[gate]`` and ``[pricing]``, each declared once, key by key.

``[run]`` is the run options' table (:data:`goldenkit._constraints.RUN_TABLE`), checked by
:func:`check_run_table`.

``[judge]``, ``[graders]`` (and its ``[graders.judge]`` and ``[graders.rubrics]``), ``[metrics]`` and
``[benchmark]`` are each one table of :class:`~goldenkit._constraint_types.TableKey` (what the key takes, its
default, what it does), as ``[gate]`` is (:data:`goldenkit.gate._policy.GATE_KEYS`) and the run options are
(:data:`goldenkit._constraints.RUN_TABLE`). :func:`goldenkit.config.check_config` checks each such table of a
file when it is read, before any work, with :func:`check_table`; the readers (the graders' builder, the
metrics' weights, ``goldenkit benchmark``, ``compare --explain``) take its values from
:func:`goldenkit.config.table_values`, every absent key at its default. A refusal is one line naming the file,
the table and the key::

    goldenkit.errors.ConfigError: g.toml: [judge] max_response_chars must be an integer >= 1, got 0

Adding a key is one entry here plus its use. The module imports nothing heavy.

>>> check_table("judge", {"provider": "openai"}, "g.toml")["max_response_chars"]
20000
>>> check_table("judge", {"provider": "openai", "hard": "yes"}, "g.toml")
Traceback (most recent call last):
...
goldenkit.errors.ConfigError: g.toml: [judge] hard must be true or false, got 'yes'
>>> check_table("judge", {"modle": "m"}, "g.toml")
Traceback (most recent call last):
...
goldenkit.errors.ConfigError: g.toml: [judge] modle: unknown key (did you mean model?)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from goldenkit._constraint_types import Constraint, Flag, Names, Number, Table, TableKey, Tables, Text
from goldenkit._constraints import RUN_TABLE, check_option, handed_to
from goldenkit._text import did_you_mean
from goldenkit.errors import ConfigError

__all__ = [
    "BENCHMARK_KEYS",
    "DECLARED",
    "GRADERS_KEYS",
    "JUDGE_KEYS",
    "METRICS_KEYS",
    "RUBRICS_KEYS",
    "check_run_table",
    "check_table",
    "keys_listing",
]

_NAME = Text(length=200, optional=True)
_PATH = Text(length=4096, optional=True)

#: ``[judge]`` (and ``[graders.judge]``, merged under it): the judge grader's model and how it decides.
JUDGE_KEYS: dict[str, TableKey] = {
    "provider": TableKey(
        _NAME, None, "the judge's provider (openai, ollama, callable, ...); required when it is in use", '"openai"'
    ),
    "model": TableKey(_NAME, None, "the judge's model id", '"judge-model-id"'),
    "rubric": TableKey(_PATH, None, "the rubric file, relative to goldenkit.toml", '"rubric.md"'),
    "rubric_sha256": TableKey(_NAME, None, "pin: refuse a rubric whose SHA-256 differs", '"..."'),
    "hard": TableKey(Flag(), False, "the judge decides rows (needs a calibration that allows it)", "false"),
    "calibration": TableKey(
        _PATH, None, "the judge's calibration report, relative to goldenkit.toml", '"judge-calibration.json"'
    ),
    "allow_self_judge": TableKey(Flag(), False, "the judge may be the model under test", "false"),
    "max_response_chars": TableKey(
        Number(integer=True, low=1), 20000, "longest answer shown to the judge, in characters", "20000"
    ),
    "options": TableKey(
        Table("a table of the judge provider's options"),
        {},
        "the judge provider's own options (base_url, api_key_env, temperature, ...)",
        '[judge.options]\nbase_url = "http://127.0.0.1:8080"',
    ),
}

#: The keys of ``[judge]`` the rubric grader takes from there unless ``[graders.rubrics]`` sets its own.
INHERITED = ("provider", "model", "options", "allow_self_judge", "max_response_chars")


def _optional(c: Constraint) -> Constraint:
    return dataclasses.replace(c, optional=True)  # type: ignore[type-var]


#: ``[graders.rubrics]``: the rubric grader's own keys, and those of ``[judge]`` it may set for itself.
RUBRICS_KEYS: dict[str, TableKey] = {
    "threshold": TableKey(Number(low=0, high=1), 1.0, "share of a case's rubrics to meet", "1.0"),
    "prompt": TableKey(_PATH, None, "the rubric judge's prompt file, relative to goldenkit.toml", '"prompt.md"'),
    "hard": TableKey(Flag(), False, "the rubric grader decides rows (needs its own calibration)", "false"),
    "calibration": TableKey(_PATH, None, "its calibration report, relative to goldenkit.toml", '"rubrics-cal.json"'),
    **{
        k: TableKey(
            _optional(JUDGE_KEYS[k].constraint), None, f"its own {k} (default: [judge]'s)", JUDGE_KEYS[k].example
        )
        for k in INHERITED
    },
}

#: ``[graders]``: which graders a run uses; one ``[graders.NAME]`` table of options per grader beside it.
GRADERS_KEYS: dict[str, TableKey] = {
    "use": TableKey(
        Names("grader names", unique=True),
        ("contract", "trajectory", "reference"),
        "the graders of a run (--graders overrides); [graders.NAME]: a grader's options",
        '["contract", "trajectory", "reference"]',
    ),
}

#: ``[metrics]``: the weighted score's weights (the metric names are checked by goldenkit.metrics).
METRICS_KEYS: dict[str, TableKey] = {
    "weights": TableKey(
        Table("a table of metric = weight", values=Number(low=0)),
        {},
        "each metric's weight in the weighted score (default 1)",
        "[metrics.weights]\nhallucination_rate = 2",
    ),
}

#: What one ``[[benchmark.agents]]`` table takes: a name, a label, and the provider options of ``[run]``.
AGENT_KEYS: dict[str, Constraint] = {
    "name": _NAME,
    **{
        k: c
        for k in ("label", "provider", *handed_to("provider"), *handed_to("transport"))
        if (c := RUN_TABLE[k].takes) is not None
    },
}


#: ``[benchmark]``: the agents ``goldenkit benchmark`` runs when no --models is given.
BENCHMARK_KEYS: dict[str, TableKey] = {
    "agents": TableKey(
        Tables(AGENT_KEYS),
        [],
        "the agents to run: a name (the run id's suffix), a label and the provider keys of [run] each",
        '[[benchmark.agents]]\nname = "short-prompt"\nprovider = "openai"\nmodel = "gpt-4o-mini"',
    ),
}

#: Every table declared here, by its dotted name.
DECLARED: dict[str, dict[str, TableKey]] = {
    "judge": JUDGE_KEYS,
    "graders": GRADERS_KEYS,
    "graders.judge": JUDGE_KEYS,
    "graders.rubrics": RUBRICS_KEYS,
    "metrics": METRICS_KEYS,
    "benchmark": BENCHMARK_KEYS,
}


def check_table(name: str, value: object, path: str, *, keys: Mapping[str, TableKey] | None = None) -> dict[str, Any]:
    """``value``, table ``name`` of the goldenkit.toml at ``path``, checked key by key against its declaration
    (``keys``, default :data:`DECLARED`'s): an unknown key (a table under ``[graders]`` is a grader's, left to
    it), or a value its key does not take, is a one-line ConfigError naming the file, the table and the key.
    Returns every declared key: its value as its constraint gives it, else its default (a fresh copy)."""
    keys = DECLARED[name] if keys is None else keys
    where = f"{path}: [{name}]"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table")
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key not in keys:
            if name == "graders" and isinstance(v, Mapping):
                continue
            hint = did_you_mean(key, keys) or f"; known: {', '.join(sorted(keys))}" + (
                f"; a provider's own options go in [{name}.options]" if "options" in keys else ""
            )
            raise ConfigError(f"{where} {key}: unknown key{hint}")
        try:
            out[key] = keys[key].constraint.check(v)
        except ValueError as exc:
            raise ConfigError(_refused(where, path, f"{name}.{key}", keys[key].constraint, exc)) from None
    for key, spec in keys.items():
        if key not in out:
            d = spec.default
            out[key] = type(d)(d) if isinstance(d, dict | list) else d
    return out


def _run_key_hint(key: str, keys: list[str]) -> str:
    """The did-you-mean of an unknown ``[run]`` key: the option whose flag it spells (``model_seed``: the key
    of ``--model-seed`` is ``seed``), else the closest key."""
    for name in keys:
        flag = RUN_TABLE[name].flag
        if flag and flag.lstrip("-").replace("-", "_") == key:
            return f" (did you mean {name}? the key of {flag})"
    return did_you_mean(key, keys)


def check_run_table(value: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The ``[run]`` table of the goldenkit.toml at ``path``: each key a run option of
    :data:`goldenkit._constraints.RUN_TABLE` (an unknown one refused with a did-you-mean), each value as its
    option takes it (:func:`goldenkit._constraints.check_option`, and one of its ``choices``), else a one-line
    ConfigError naming the key.
    Returns the keys given, checked (the defaults are the run options')."""
    keys = [name for name, option in RUN_TABLE.items() if option.key]
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ConfigError(f"{path}: unknown [run] key(s): {', '.join(unknown)}{_run_key_hint(unknown[0], keys)}")
    out = {}
    for name, v in value.items():
        try:
            out[name] = check_option(name, v)
        except ValueError as exc:
            raise ConfigError(f"{path}: [run] {name} {exc}") from None
        choices = RUN_TABLE[name].choices
        if choices is not None and out[name] not in choices:  # as the flag's choices are
            raise ConfigError(f"{path}: [run] {name} must be one of {', '.join(choices)}, got {v!r}")
    return out


def _refused(where: str, path: str, dotted: str, constraint: Constraint, exc: ValueError) -> str:
    """The line of a value refused: ``FILE: [judge] hard must be ...``; inside a table ``FILE: [metrics]
    weights.x = -1: ...``; inside an array of tables ``FILE: [[benchmark.agents]] #2: label ...``."""
    key = dotted.rpartition(".")[2]
    if isinstance(constraint, Tables):
        return f"{path}: [[{dotted}]] {exc}"
    entry = isinstance(constraint, Table) and not str(exc).startswith("must ")  # one entry, not the table
    return f"{where} {key}{'.' if entry else ' '}{exc}"


def keys_listing(name: str, indent: str = "    ") -> str:
    """Table ``name`` as goldenkit.toml lines, each key with its example, what it does and its default."""
    scalars, tables = [], []
    for key, spec in DECLARED[name].items():
        if "\n" in spec.example:  # a table (of tables): its example is the TOML of one, its head named here
            head = f"[[{name}.{key}]]" if spec.example.startswith("[[") else f"[{name}.{key}]"
            tables += ["", f"{head:<32} # {spec.help}", *spec.example.split("\n")[1:]]
            continue
        d = spec.default
        shown = (
            "none" if d is None else str(d).lower() if isinstance(d, bool) else list(d) if isinstance(d, tuple) else d
        )
        text = f"{key} = {spec.example}"
        said = "" if "(default" in spec.help else f" (default {shown})"
        scalars.append(f"{text:<32} # {spec.help}{said}")
    return "\n".join(indent + line if line else "" for line in [f"[{name}]", *scalars, *tables])
