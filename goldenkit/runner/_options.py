"""What a run is asked to do: :class:`RunOptions`, every option of :func:`goldenkit.runner.arun_eval`.

``arun_eval(dataset, agent, graders, options)`` takes one :class:`RunOptions`; the same
options given by keyword (``run_eval(ds, agent, repeats=3)``) replace the fields of
``options`` (or of the defaults), checked by name: an unknown name is a TypeError
naming the closest option. :meth:`RunOptions.limits` is the part the workers share
(how one invocation calls and when it stops), :class:`goldenkit.runner._calls.CallLimits`.

>>> RunOptions.merged(None, {"repeats": 3}).repeats
3
>>> RunOptions.merged(RunOptions(repeats=3), {"timeout": 5.0}).limits().timeout
5.0
>>> RunOptions.merged(None, {"repeat": 3})
Traceback (most recent call last):
...
TypeError: arun_eval() got an unexpected keyword argument 'repeat' (did you mean repeats?)

Every field with a range is checked when the options are made, against the one table of
what each run option takes (:data:`goldenkit._constraints.RUN_OPTIONS`, which the command
line and goldenkit.toml's ``[run]`` table read too): a value outside it is a ConfigError
naming the field, before anything is created or written.

>>> RunOptions(max_in_flight=0)
Traceback (most recent call last):
...
goldenkit.errors.ConfigError: RunOptions.max_in_flight must be an integer >= 1, got 0
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypedDict

from goldenkit._constraints import RUN_TABLE, check_option, field_of, plain_run_keys, sample_of
from goldenkit._registry import publish
from goldenkit._text import did_you_mean
from goldenkit.errors import ConfigError
from goldenkit.formats import EvalCriteria
from goldenkit.providers import UserSimulator
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._limits import pacing_problem

__all__ = ["RunOptions", "RunOptionsFields", "options_from_config", "with_run_table"]

#: The name of each RunOptions field's run option in :data:`goldenkit._constraints.RUN_TABLE`, and the option.
_NAMES = {field: name for name in RUN_TABLE if (field := field_of(name)) is not None}
_FIELDS = {field: RUN_TABLE[name] for field, name in _NAMES.items()}


def _default(field: str) -> Any:
    """The default of RunOptions field ``field``: its option's in the table."""
    return _FIELDS[field].default


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """Every option of a run; the defaults are ``arun_eval``'s.

    What is run and how often:
      ``repeats``; ``sample``: ``{"split": "dev"|"holdout"|None, "per_slice": N|None, "seed": S}``;
      ``include_red``: also run the red rows (expected failures, left out by default; part of the
      run key); ``shard``: ``(k, n)`` runs only the rows of hash shard k of n, chosen after the
      split and the sample (:mod:`goldenkit.runner._shard`), recorded in run.json (``goldenkit
      merge`` unites the n shard runs); ``criteria``: an ADK eval config that replaces the cases'
      criteria and enters the run key; ``vision=False``: the model takes no images (both checked
      before the first call); ``max_ungradable``: the largest share of the selected rows with
      nothing a configured grader can check (:mod:`goldenkit.graders._gradable`), else a
      DatasetError naming them (None: no check).
    How it calls and when it stops (:meth:`limits`):
      ``max_in_flight``, ``rpm``, ``timeout``, ``max_retries``, ``backoff_base``, ``backoff_cap``,
      ``max_retry_after`` (the longest Retry-After honoured, in seconds; a 429 asking for more is
      a permanent ERROR), ``max_error_rate``, ``abort_after_errors``; the budget ``max_calls``,
      ``max_tokens_total``, ``max_cost`` (USD, needs prices): the run stops when one is reached
      (:mod:`goldenkit.runner._budget`); ``pricing``: the :class:`~goldenkit._pricing.Pricing` its money is
      counted in (None: the ``[pricing]`` of the goldenkit.toml that applies).
    Where it writes and what it records:
      ``run_id``, ``label`` (what people read first, :func:`goldenkit._run_label.run_label`; None: derived,
      or on a resume the label the run has), ``results_dir``, ``retry_errors`` (call again the pairs whose
      last outcome is an ERROR), ``record_dir`` (record fixtures), ``config`` (the goldenkit.toml
      to use, as ``--config``: a path; or extra settings recorded in run.json, secrets redacted:
      a mapping, whose ``config_file`` names the goldenkit.toml; see ``run_eval``), ``judge_version``,
      ``artifacts`` (files and folders that define the agent,
      hashed into ``agent_version.artifacts_sha256``, :mod:`goldenkit._artifacts`; a missing path is
      an InputError naming it), ``progress`` (None/True: a ``tqdm.auto`` bar on stderr, quiet when
      it is not a terminal, a widget in Jupyter; False: silent; or a text stream).
    Where it runs and who talks to the agent:
      ``executor``: ``"local"``, or ``"ray"`` / a ``RaySettings`` (:mod:`goldenkit.runner._ray_executor`);
      ``user_simulator``, ``max_turns`` (None: a replay's recorded limit, else 5): the scenario
      rows' conversations.
    Which calls are needed (:mod:`goldenkit.runner._sequential`):
      ``stop_decided_repeats``: a row's repeats run in order and stop once its verdict under ``rule``
      (the collapse rule, default majority) can no longer change (recorded in the protocol key);
      ``sequential``: a :class:`~goldenkit.runner._sequential.RowMonitor` (the sequential gate,
      :mod:`goldenkit.gate._sequential`) that orders the rows and stops the run once its decision is
      reached (decided repeats stop too). Both run locally only.
    """

    repeats: int = _default("repeats")
    sample: Mapping[str, Any] | None = _default("sample")
    include_red: bool = _default("include_red")
    shard: tuple[int, int] | None = _default("shard")
    criteria: EvalCriteria | None = _default("criteria")
    vision: bool = _default("vision")
    max_ungradable: float | None = _default("max_ungradable")
    max_in_flight: int = _default("max_in_flight")
    rpm: float | None = _default("rpm")
    timeout: float = _default("timeout")
    max_retries: int = _default("max_retries")
    backoff_base: float = _default("backoff_base")
    backoff_cap: float = _default("backoff_cap")
    max_retry_after: float = _default("max_retry_after")
    max_error_rate: float = _default("max_error_rate")
    abort_after_errors: int | None = _default("abort_after_errors")
    max_calls: int | None = _default("max_calls")
    max_tokens_total: int | None = _default("max_tokens_total")
    max_cost: float | None = _default("max_cost")
    pricing: Any = _default("pricing")
    run_id: str | None = _default("run_id")
    label: str | None = _default("label")
    results_dir: str | os.PathLike[str] = _default("results_dir")
    retry_errors: bool = _default("retry_errors")
    record_dir: str | os.PathLike[str] | None = _default("record_dir")
    config: Mapping[str, Any] | str | os.PathLike[str] | None = _default("config")
    judge_version: str | None = _default("judge_version")
    artifacts: Sequence[str | os.PathLike[str]] | None = _default("artifacts")
    progress: bool | IO[str] | None = _default("progress")
    executor: Any = _default("executor")
    user_simulator: UserSimulator | None = _default("user_simulator")
    max_turns: int | None = _default("max_turns")
    stop_decided_repeats: bool = _default("stop_decided_repeats")
    rule: str = _default("rule")
    sequential: Any = _default("sequential")

    def __post_init__(self) -> None:
        """Every field with a range (and ``sample``'s ``per_slice`` and ``seed``) checked against its option
        in :data:`~goldenkit._constraints.RUN_TABLE`."""
        for name, option in _FIELDS.items():
            if option.ranged:
                value = getattr(self, name)
                object.__setattr__(self, name, _checked(f"RunOptions.{name}", _NAMES[name], value))
        if isinstance(self.sample, Mapping):
            for key, name in (("per_slice", "per_slice"), ("seed", "sample_seed")):
                if self.sample.get(key) is not None:
                    _checked(f"RunOptions.sample[{key!r}]", name, self.sample[key])
        if (pacing := pacing_problem(self.rpm, self.max_retry_after)) is not None:
            raise ConfigError(f"RunOptions.{pacing}")
        if isinstance(self.rule, str) and self.rule.startswith("at_least:"):  # only a count can need more
            from goldenkit.stats import too_few_repeats

            short = too_few_repeats(self.rule, self.repeats)
            if short is not None:
                raise ConfigError(f"RunOptions.rule {short}")

    @classmethod
    def merged(cls, options: RunOptions | None, overrides: Mapping[str, object]) -> RunOptions:
        """``options`` (None: the defaults) with ``overrides`` in place of its fields, checked by name."""
        known = [f.name for f in dataclasses.fields(cls)]
        for name in overrides:
            if name not in known:
                raise TypeError(f"arun_eval() got an unexpected keyword argument {name!r}{did_you_mean(name, known)}")
        base = options if options is not None else cls()
        if not isinstance(base, cls):
            raise TypeError(f"options must be a RunOptions (got {type(base).__name__})")
        changes: dict[str, Any] = dict(overrides)
        return dataclasses.replace(base, **changes) if changes else base

    def limits(self) -> CallLimits:
        """How one invocation calls and when it stops: what every worker (local or on Ray) shares."""
        names = [f.name for f in dataclasses.fields(CallLimits)]
        return CallLimits(**{name: getattr(self, name) for name in names})


def options_from_config(cfg: Mapping[str, Any], given: Mapping[str, object]) -> dict[str, Any]:
    """The run options the ``[run]`` table of ``cfg`` sets that ``given`` (the caller's keywords) does not:
    the repeats, limits and sample of the run, as ``goldenkit run`` reads them, so a run from Python has
    the protocol key of the same run from the command line (:func:`goldenkit._constraints.plain_run_keys`:
    the keys whose value is their field's, ``red`` is ``include_red``). ``split``, ``per_slice`` and ``sample_seed``
    make ``sample``."""
    table = cfg.get("run")
    if not isinstance(table, Mapping):
        return {}
    out = {field: table[k] for k, field in plain_run_keys().items() if k in table and field not in given}
    if "sample" not in given and any(k in table for k in ("split", "per_slice")):
        out["sample"] = sample_of(table)
    return out


def with_run_table(
    o: RunOptions, cfg: Mapping[str, Any], options: RunOptions | None, overrides: Mapping[str, object]
) -> RunOptions:
    """``o``, with the ``[run]`` table of ``cfg`` for what the caller did not give (:func:`options_from_config`;
    a RunOptions given whole is taken as it is), checked as every option is, naming the file. The fields are
    replaced on ``o`` itself: the options are never taken apart into keywords again."""
    if options is not None or not (from_config := options_from_config(cfg, overrides)):
        return o
    try:
        return dataclasses.replace(o, **from_config)
    except ConfigError as exc:
        raise ConfigError(f"{cfg.get('_path', 'goldenkit.toml')} [run]: {exc}") from None


def _checked(where: str, name: str, value: object) -> Any:
    """``value`` as run option ``name`` takes it, else a ConfigError naming ``where`` it was given."""
    try:
        return check_option(name, value)
    except ValueError as exc:
        raise ConfigError(f"{where} {exc}") from None


class RunOptionsFields(TypedDict, total=False):
    """The fields of :class:`RunOptions`, as the keywords of ``arun_eval`` (type checkers check each one)."""

    repeats: int
    sample: Mapping[str, Any] | None
    include_red: bool
    shard: tuple[int, int] | None
    criteria: EvalCriteria | None
    vision: bool
    max_ungradable: float | None
    max_in_flight: int
    rpm: float | None
    timeout: float
    max_retries: int
    backoff_base: float
    backoff_cap: float
    max_retry_after: float
    max_error_rate: float
    abort_after_errors: int | None
    max_calls: int | None
    max_tokens_total: int | None
    max_cost: float | None
    pricing: Any
    run_id: str | None
    label: str | None
    results_dir: str | os.PathLike[str]
    retry_errors: bool
    record_dir: str | os.PathLike[str] | None
    config: Mapping[str, Any] | str | os.PathLike[str] | None
    judge_version: str | None
    artifacts: Sequence[str | os.PathLike[str]] | None
    progress: bool | IO[str] | None
    executor: Any
    user_simulator: UserSimulator | None
    max_turns: int | None
    stop_decided_repeats: bool
    rule: str
    sequential: Any


publish(globals())
