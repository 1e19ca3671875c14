"""``arun_eval`` / ``run_eval``: plan a run, open its folder, hand it to a :class:`~goldenkit.runner._run.RunExecution`.

Before the first call: the options are checked, the rows picked, every case
normalized (a case that cannot be is bad input: a DatasetError naming
file:line and the row id, and nothing is called or written), rows carrying
images the provider cannot send refused (naming them), the run key
derived, and the run folder opened and locked. ``run_eval`` inside a running
event loop (Jupyter) runs the run on its own loop in a helper thread; a
KeyboardInterrupt in the caller (an interrupted cell) cancels the run there,
waits until what finished is written, and is re-raised.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Unpack

from goldenkit._checks import check_output
from goldenkit._protocols import DatasetLike
from goldenkit._registry import publish
from goldenkit._scrub import redact_settings, scrub, secrets_in_use
from goldenkit._sync import run_sync
from goldenkit.config import load_config
from goldenkit.dataset import mark_red, read_dataset, without_red
from goldenkit.errors import ConfigError, DatasetError, GoldenkitError
from goldenkit.formats import EvalCriteria, apply_criteria, check_graders
from goldenkit.graders import Grader, build_graders, check_gradable, get_grader, gradability
from goldenkit.providers import CallableProvider, Provider, check_images
from goldenkit.records import Case
from goldenkit.results import repair_jsonl, stored_json, write_run_record
from goldenkit.runner._budget import budget_limits
from goldenkit.runner._calls import CallLimits, frozen_heap
from goldenkit.runner._conversation import DEFAULT_MAX_TURNS, ConversationDriver, scenario_rows
from goldenkit.runner._folder import RunFolder, new_run_id, open_run_folder, scan_outcomes
from goldenkit.runner._manifest import run_key, run_manifest
from goldenkit.runner._options import RunOptions, RunOptionsFields, with_run_table
from goldenkit.runner._outcome_index import OutcomeIndex
from goldenkit.runner._run import RunExecution, RunPlan
from goldenkit.runner._shard import check_shard, shard_rows
from goldenkit.runner._summary import RunInterrupted, RunSummary
from goldenkit.runner._versions import git_commit
from goldenkit.schema import RunKey, RunRecord, outcome_run

if TYPE_CHECKING:  # loaded only when decided repeats stop or the run is sequential (it loads the statistics)
    from goldenkit.runner._sequential import RowSchedule


def select_rows(
    dataset: DatasetLike, sample: Mapping[str, Any] | None, include_red: bool = False
) -> tuple[DatasetLike, dict[str, Any]]:
    """The rows of the run (split filter and/or stratified sample) and the sample spec recorded.

    Red rows (:func:`goldenkit.dataset._red.red_row_ids`) are left out first unless
    ``include_red``; a run with them records ``include_red: true`` in its sample
    spec (absent means false, so older runs keep their key).
    """
    spec: dict[str, Any] = {"split": None, "per_slice": None, "seed": None}
    if sample:
        unknown = set(sample) - set(spec)
        if unknown:
            raise ConfigError(f"sample: unknown key(s) {', '.join(sorted(unknown))} (known: split, per_slice, seed)")
        spec.update(sample)
    if include_red:
        spec["include_red"] = True
        dataset = mark_red(dataset)
    else:
        dataset = without_red(dataset)
    split, per_slice = spec["split"], spec["per_slice"]
    if per_slice is not None:
        from goldenkit.sampling import stratified_sample

        seed = 0 if spec["seed"] is None else spec["seed"]
        spec["seed"] = seed
        dataset = stratified_sample(dataset, int(per_slice), int(seed), split=split)
    elif split is not None:
        splits = zip(dataset.column("id"), dataset.column("split"), strict=True)
        dataset = dataset.subset([row_id for row_id, row_split in splits if row_split == split])
    return dataset, spec


def dataset_and_config(
    dataset: DatasetLike | str | os.PathLike[str], config: Mapping[str, Any] | str | os.PathLike[str] | None
) -> tuple[DatasetLike, dict[str, Any], dict[str, Any] | None]:
    """The dataset (read when given as a path: a dataset folder or its .jsonl), the goldenkit.toml that
    applies, found as ``goldenkit run`` finds it (:func:`goldenkit.config.load_config`: ``config`` when it
    is a path, or the file a mapping names as ``config_file``; else beside the dataset, then in the
    current folder), and the configuration run.json records (naming that file and its sha256)."""
    if isinstance(dataset, (str, os.PathLike)):
        dataset = read_dataset(os.fspath(dataset))
    named = config if isinstance(config, (str, os.PathLike)) else (config or {}).get("config_file")
    cfg = load_config(named, dataset_dir=getattr(dataset, "path", None))
    record = dict(config) if isinstance(config, Mapping) else {}
    if cfg.get("_path") and not record.get("config_file"):
        record.update(config_file=cfg["_path"], config_sha256=cfg["_sha256"])
    return dataset, cfg, (record or None)


def resolve_graders(graders: Iterable[Grader | str]) -> list[Grader]:
    """Grader objects for ``graders`` (objects or registered names; none given: the [graders] of the
    goldenkit.toml that applies, :func:`goldenkit.graders.build_graders`)."""
    out = [get_grader(g) if isinstance(g, str) else g for g in graders]
    names = [g.name for g in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"grader(s) listed twice: {', '.join(dup)}")
    return out


def normalize_cases(dataset: DatasetLike, row_ids: Iterable[str]) -> dict[str, Case]:
    """Every row's case, normalized; the first that cannot be is a DatasetError (file:line, row id)."""
    out: dict[str, Case] = {}
    for rid in row_ids:
        try:
            out[rid] = dataset.case(rid)
        except GoldenkitError as exc:
            if isinstance(exc, DatasetError) and exc.path is not None and f'"{rid}"' in str(exc):
                raise exc from None  # file:line: row "id": why
            raise DatasetError(f'row "{rid}": cannot normalize its case: {exc}') from None
    return out


def _selection(
    dataset: DatasetLike, provider: Provider, graders: list[Grader], o: RunOptions
) -> tuple[DatasetLike, dict[str, Any], tuple[int, int] | None, dict[str, Case]]:
    """The run's rows (sample, red rows, shard) and their cases (:func:`_cases`), checked for something to grade."""
    dataset, sample_spec = select_rows(dataset, o.sample, o.include_red)
    shard = o.shard
    if shard is not None:
        shard = check_shard(shard)
        dataset = shard_rows(dataset, shard)
    cases = _cases(dataset, provider, graders, o.vision, o.criteria)
    if o.max_ungradable is not None:
        check_gradable(gradability(graders, cases), o.max_ungradable)
    return dataset, sample_spec, shard, cases


def _cases(
    dataset: DatasetLike, provider: Provider, graders: list[Grader], vision: bool, criteria: EvalCriteria | None
) -> dict[str, Case]:
    """The run's cases, normalized (a DatasetError names file:line and row); rows carrying images the
    provider cannot send, or any image when ``vision`` is False, refused naming them
    (:func:`goldenkit.providers._images.check_images`); the criteria of an ADK eval config
    (:func:`goldenkit.formats._eval_config.read_eval_config`) in place of every case's, after checking
    that each criterion's grader is among ``graders`` (a ConfigError otherwise)."""
    cases = normalize_cases(dataset, [str(r) for r in dataset.column("id")])
    check_images(cases, provider, vision=vision)
    if criteria is None:
        return cases
    check_graders(criteria, [g.name for g in graders])
    return apply_criteria(cases, criteria)


def _plan(
    dataset: DatasetLike,
    key: RunKey,
    folder: RunFolder,
    cases: dict[str, Case],
    repeats: int,
    retry_errors: bool,
) -> RunPlan:
    if folder.old_manifest is not None:  # a resume keeps the commit the run started at
        first = (folder.old_manifest.get("agent_version") or {}).get("git_commit")
        key["agent_version"] = {**key["agent_version"], "git_commit": first}
    row_info: dict[str, tuple[str, str, list[str]]] = {}
    for rid, sl, sp, tags in zip(*(dataset.column(c) for c in ("id", "slice", "split", "tags")), strict=True):
        row_info[str(rid)] = (str(sl), str(sp), [str(t) for t in (tags if tags is not None else [])])
    index = OutcomeIndex(list(row_info), repeats)
    for rec, offset, length in scan_outcomes(folder.jsonl) if folder.old_manifest is not None else ():
        index.note(rec, offset, length)  # an earlier invocation's outcome (the last line per pair wins)
    todo = index.pending(retry_errors)
    base = outcome_run(folder.run_id, key)  # the dataset's name, version and sha256 as the run key records them
    return RunPlan(index=index, todo=todo, row_info=row_info, cases=cases, base_record=base)


def _conversations(key: RunKey, cases: dict[str, Case], provider: Provider, o: RunOptions) -> ConversationDriver | None:
    """The driver of the scenario rows (None: there are none); sets the run key's ``simulator_version``.

    A live run of scenario rows without a simulator is refused before the first call:
    sending the starting prompt alone and grading that would be a green without the
    conversation. A fixtures replay needs none (the recording holds the user turns).
    """
    rows, simulator, max_turns = scenario_rows(cases), o.user_simulator, o.max_turns
    if o.executor != "local" and (rows or simulator is not None):
        raise ConfigError("simulated-user conversations run locally only: leave out --executor ray")
    if simulator is not None:  # the driver owns it: the run closes it at its end
        simulator.configure(timeout=o.timeout, max_in_flight=o.max_in_flight)
    if not rows:
        return None if simulator is None else ConversationDriver(simulator, max_turns or DEFAULT_MAX_TURNS)
    if simulator is None and provider.mode != "fixtures":
        shown = ", ".join(f'"{r}"' for r in rows[:5]) + (f" and {len(rows) - 5} more" if len(rows) > 5 else "")
        raise ConfigError(
            f"{len(rows)} row(s) are simulated-user scenarios ({shown}): pass --user-simulator "
            "callable|openai|ollama to run their conversations, or leave them out of the run"
        )
    recorded = getattr(provider, "recorded_simulator_version", None)
    version = recorded() if simulator is None and recorded is not None else None
    if max_turns is None:  # a replay goes as far as its recording's limit, a live run to the default
        max_turns = (version or {}).get("max_turns") or DEFAULT_MAX_TURNS
    driver = ConversationDriver(simulator, max_turns)
    if simulator is not None:
        key["simulator_version"] = {**simulator.version(), "max_turns": driver.max_turns}
    elif version is not None:  # a replay: the recorded simulator, with the turn limit this run applies
        key["simulator_version"] = {**version, "max_turns": driver.max_turns}
    return driver


def _recorder(record_dir: str | os.PathLike[str] | None, provider: Provider, key: RunKey, run_id: str) -> Any:
    if record_dir is None:
        return None
    from goldenkit.providers import FIXTURES_FILE, FixtureRecorder

    av = key["agent_version"]
    repair_jsonl(Path(record_dir) / FIXTURES_FILE)
    return FixtureRecorder(
        Path(record_dir),
        {
            "agent": getattr(provider, "spec", None) or provider.name,
            "model_id": av.get("model_id"),
            "system_prompt_sha256": av.get("prompt_sha256"),
            "git_commit": av.get("git_commit"),
            "settings": redact_settings(provider.settings()),
            "recorded_run_id": run_id,
            **({"simulator_version": key["simulator_version"]} if key.get("simulator_version") else {}),
        },
    )


async def arun_eval(
    dataset: DatasetLike | str | os.PathLike[str],
    provider: Provider | Callable[..., Any],
    graders: Iterable[Grader | str] | None = None,
    options: RunOptions | None = None,
    **overrides: Unpack[RunOptionsFields],
) -> RunSummary:
    """Run ``dataset`` through ``provider`` and ``graders``; see :mod:`goldenkit.runner`.

    ``dataset``: a Dataset or its path (a dataset folder or its .jsonl). ``provider``: a Provider, or a
    function ``fn(case)`` (sync or async), run as ``--provider callable --callable module:fn`` runs it
    (:func:`as_provider`). ``graders``: Grader objects
    or registered names; None: the ``[graders]`` of the goldenkit.toml that applies (``config=PATH``,
    else the one beside the dataset, then the current folder's; built-in defaults without one), built
    by :func:`goldenkit.graders.build_graders` as ``goldenkit run`` builds them, so a run from Python
    grades, and has the protocol key, of the same run from the command line (:func:`dataset_and_config`).
    ``options``: a :class:`~goldenkit.runner.RunOptions` (None: the defaults); ``overrides``: its
    fields by keyword (``arun_eval(ds, agent, repeats=3)``), in place of those of ``options``.
    """
    o = RunOptions.merged(options, overrides)  # every option checked (RunOptions.__post_init__)
    provider = as_provider(provider)
    for where, what in ((o.results_dir, "results_dir"), (o.record_dir, "record_dir")):
        if where is not None:  # the folders it will write, checked before anything is
            check_output(where, f"RunOptions.{what}", folder=True)
    dataset, cfg, recorded = dataset_and_config(dataset, o.config)
    o = dataclasses.replace(with_run_table(o, cfg, options, overrides), config=recorded)
    model = getattr(provider, "model", None)
    grader_objs = resolve_graders(graders) if graders is not None else build_graders(cfg, generator_model=model)
    judges = [getattr(g, "provider", None) for g in grader_objs]
    opts = budget_limits(o.limits(), cfg, [provider, *judges], simulator=o.user_simulator)
    dataset, sample_spec, shard, cases = _selection(dataset, provider, grader_objs, o)
    key = run_key(
        dataset,
        provider,
        grader_objs,
        judge_version=o.judge_version,
        repeats=o.repeats,
        sample_spec=sample_spec,
        shard=shard,
        artifacts=o.artifacts,
        criteria=o.criteria,
        vision=o.vision,
    )
    rows = _row_schedule(o, key)
    driver = _conversations(key, cases, provider, o)
    commit = git_commit() if provider.mode == "fixtures" else key["agent_version"].get("git_commit")
    pool = await _ray_pool(o.executor, provider, grader_objs, opts, o.record_dir)  # None: a local run
    folder = await _open_folder(o, key, pool, driver, provider)
    try:
        plan = _plan(dataset, key, folder, cases, o.repeats, o.retry_errors)
        manifest = run_manifest(
            key,
            provider,
            folder,
            opts,
            todo=len(plan.todo),
            retry_errors=o.retry_errors,
            config=recorded,
            commit=commit,
            label=o.label,
        )
        write_run_record(folder.run_file, manifest)
        recorder = _recorder(o.record_dir, provider, key, folder.run_id)
        provider.configure(timeout=opts.timeout, max_in_flight=opts.max_in_flight)
        run = _make_run(
            pool,
            plan,
            provider,
            grader_objs,
            folder,
            manifest,
            opts=opts,
            progress=o.progress,
            recorder=recorder,
            driver=driver,
        )
        run.rows = rows
        return await _execute(run)
    finally:
        await _release(folder, pool)


def _row_schedule(o: RunOptions, key: RunKey) -> RowSchedule | None:
    """Rows at a time (:mod:`goldenkit.runner._sequential`) when decided repeats stop or the run is
    sequential; the run key then records the rule the repeats stop under (in its protocol key)."""
    if not (o.stop_decided_repeats or o.sequential is not None):
        return None
    if o.executor != "local":
        raise ConfigError("stop_decided_repeats and a sequential run run locally only: leave out --executor ray")
    key["stop_decided_repeats"] = o.rule
    from goldenkit.runner._sequential import RowSchedule

    return RowSchedule(o.rule, o.sequential)


def _secret_values(obj: Any) -> tuple[str, ...]:
    get = getattr(obj, "secret_values", None)
    return tuple(get()) if callable(get) else ()


async def _execute(run: RunExecution) -> RunSummary:
    """``run`` inside a secret scope (:func:`goldenkit._scrub.secrets_in_use`) holding the secrets of its
    provider, its graders' providers (the judge's) and its simulator: every outcome, run.json, the
    Parquet file and the summary returned have them masked. The heap the run starts with is frozen while
    it runs (:func:`goldenkit.runner._calls.frozen_heap`)."""
    holders = [run.provider, *(getattr(g, "provider", None) for g in run.graders)]
    holders.append(getattr(run.conversations, "simulator", None))
    with secrets_in_use(*(v for h in holders for v in _secret_values(h))), frozen_heap():
        summary = await run.execute()
        reason = scrub(summary.invalid_reason) if summary.invalid_reason else summary.invalid_reason
        return dataclasses.replace(summary, invalid_reason=reason, manifest=stored_json(summary.manifest))


async def _ray_pool(
    executor: Any,
    provider: Provider,
    graders: list[Grader],
    opts: CallLimits,
    record_dir: str | os.PathLike[str] | None,
) -> Any:
    """For ``executor="ray"`` (or a RaySettings): the started cluster workers, before anything is
    written (a provider that cannot be shipped, or built on a worker, fails here); None for a local run."""
    if executor == "local":
        return None
    from goldenkit.runner._ray_executor import RaySettings, pickle_setup, start_pool

    if executor == "ray":
        executor = RaySettings()
    if not isinstance(executor, RaySettings):
        raise ConfigError(f"executor must be 'local', 'ray' or a RaySettings (got {executor!r})")
    if record_dir is not None:
        raise ConfigError("--record is not supported with --executor ray (record with a local run)")
    blob = pickle_setup(provider, graders, executor)
    return await start_pool(executor, opts, blob)


async def _open_folder(
    o: RunOptions, key: RunKey, pool: Any, driver: ConversationDriver | None, provider: Provider
) -> RunFolder:
    """The run folder, opened (or resumed); what was started for the run is closed when it cannot be."""
    try:
        settings = redact_settings(provider.settings())
        return open_run_folder(o.results_dir, o.run_id, key, retry_errors=o.retry_errors, settings=settings)
    except BaseException:
        await _release(None, pool)
        if driver is not None:  # the user simulator's clients
            await driver.aclose()
        raise


def _make_run(
    pool: Any,
    plan: RunPlan,
    provider: Provider,
    graders: list[Grader],
    folder: RunFolder,
    manifest: RunRecord,
    *,
    opts: CallLimits,
    progress: bool | IO[str] | None,
    recorder: Any,
    driver: ConversationDriver | None,
) -> RunExecution:
    if pool is None:
        return RunExecution(
            plan, provider, graders, folder, manifest, opts, progress=progress, recorder=recorder, conversations=driver
        )
    from goldenkit.runner._ray_executor import RayRun

    return RayRun(plan, provider, graders, folder, manifest, opts, progress=progress, pool=pool)


async def _release(folder: RunFolder | None, pool: Any) -> None:
    """Unlock the folder; close the Ray pool (closed by the run already, unless it failed before its first call)."""
    if folder is not None:
        folder.lock.release()
    if pool is not None:
        await pool.close()


def run_eval(
    dataset: DatasetLike | str | os.PathLike[str],
    provider: Provider | Callable[..., Any],
    graders: Iterable[Grader | str] | None = None,
    options: RunOptions | None = None,
    **overrides: Unpack[RunOptionsFields],
) -> RunSummary:
    """Synchronous :func:`arun_eval` (same arguments). Works inside Jupyter's running
    event loop too: the run then gets its own loop in a helper thread, and interrupting
    the cell cancels the run (what finished is written; the run id resumes). Interrupted
    (Ctrl-C, an interrupted cell), it raises :class:`~goldenkit.runner.RunInterrupted`
    (a KeyboardInterrupt) saying how many outcomes were kept and the run id that resumes."""
    o = RunOptions.merged(options, overrides)
    run_id = o.run_id or new_run_id()  # known here, to say what resumes it
    given: RunOptionsFields = {**overrides, "run_id": run_id}  # as given: [run] fills the others, as arun_eval's
    try:
        return run_to_summary(arun_eval(dataset, provider, graders, options, **given))
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted.read(o.results_dir or "results", run_id) from None


def as_provider(agent: Provider | Callable[..., Any]) -> Provider:
    """``agent`` as a Provider: a Provider as it is, a function ``fn(case)`` in a :class:`CallableProvider`
    (the same agent version as ``--callable module:fn`` gives it); anything else is a ConfigError."""
    if isinstance(agent, Provider):
        return agent
    if not callable(agent):
        raise ConfigError(f"run_eval: the agent must be a Provider or a function fn(case), got {type(agent).__name__}")
    return CallableProvider(agent)


def run_to_summary(coro: Coroutine[Any, Any, RunSummary]) -> RunSummary:
    """Run ``coro`` to its summary: on a new loop, or inside a running one (Jupyter) on a helper thread
    (:func:`goldenkit._sync.run_sync`: a KeyboardInterrupt cancels the run, which keeps what finished)."""
    return run_sync(coro)


__all__ = [
    "RunOptions",
    "arun_eval",
    "dataset_and_config",
    "normalize_cases",
    "resolve_graders",
    "run_eval",
    "select_rows",
]

publish(globals())
