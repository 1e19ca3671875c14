"""Re-grading a finished run without calling the model: ``regrade(RUN, NEW, graders)``.

A new or fixed grader is applied to old answers. The new run folder ``NEW`` is
written from the outcomes of run ``RUN`` (``outcomes.jsonl``, last record per
row x repeat): each stored answer (``response`` and ``trajectory``: every
turn's text, tool calls, tool responses and intermediate texts; tokens,
latency, attempts and cost are kept) is graded again by ``graders`` and
combined into a verdict exactly as in a run. What is copied and what is new:

* an ERROR or SKIPPED outcome without a stored answer (the call failed, or the
  row was never called) is copied as it was: regrading does not invent an answer;
  every outcome with a stored answer is graded again, a grader ERROR or a row no
  old grader checked included (the new graders may decide it);
* the run key is RUN's (dataset, agent version, repeats, sample, shard) with the
  new graders, their versions and judge version, and ``mode: "regrade"``;
  run.json also names the source (``regraded_from: {run_id, path}``). So the new
  run compares with other runs of its protocol (same dataset hash, agent
  version, repeats, sample, grader versions) like any run: the mode may differ;
* judge and rubric graders do call the judge model, through the run's limiter,
  retries and Retry-After cap (RUN's ``max_in_flight``, ``rpm``, ``timeout``,
  ``max_retries``; ``max_error_rate`` too), and a judge ERROR counts toward the
  error rate as in a run.

A run imported from another harness (``mode: "imported"``, see
:mod:`goldenkit.harnesses`) is regraded the same way: its stored responses (an inspect
log run with ``--no-score``, whose samples are SKIPPED; a promptfoo output; ...) are
graded by goldenkit's graders against the goldenkit dataset it was imported with
(``--dataset``), else against the cases the import wrote beside it (``cases.jsonl``,
checked against ``source.cases_sha256``). Its ERRORs are the tool's and are copied,
answer or not. The new run's manifest keeps the import's ``source`` block (format,
identifiers, ``inputs_sha256``) beside ``regraded_from``, so its protocol names both
the source and the new graders.

Refused with a :class:`~goldenkit.errors.ResultsError` (exit 1) before anything
is written: RUN is not complete or not VALID; an outcome of RUN that is neither
ERROR nor SKIPPED has no stored response (named); the dataset (RUN's
``dataset.path``, or the one given) does not have RUN's sha256; NEW is RUN, or
an existing run that is not a regrade of RUN; a configured grader needs what
outcomes do not keep (the ``state`` grader: the session's final state; the
``retrieval`` grader without ``tools``: the ids a provider reported); RUN was graded
with ``--criteria`` (an ADK eval config replaced its cases' criteria). An
existing regrade of RUN with the same graders is **resumed**: only its missing
outcomes are graded (an interrupted regrade with a judge finishes where it
stopped); with other graders it is refused (the run key differs).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np

from goldenkit._protocols import DatasetLike
from goldenkit._registry import publish
from goldenkit.config import config_for_run, dataset_path_for_run
from goldenkit.dataset import read_dataset
from goldenkit.errors import ProviderError, ResultsError
from goldenkit.graders import (
    Grader,
    RetrievalGrader,
    StateGrader,
    agrade_case,
    build_graders,
    check_gradable,
    gradability,
    grade_case,
    shown_ids,
)
from goldenkit.harnesses import IMPORTED
from goldenkit.providers import Provider
from goldenkit.records import Case, Response, TurnOutput
from goldenkit.results import (
    RECORD_BATCH,
    Run as StoredRun,
    read_manifest,
    read_run,
    run_key_of,
    write_run_record,
)
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._evaluate import normalize_cases, resolve_graders, run_to_summary
from goldenkit.runner._folder import check_run_id, open_run_folder, scan_outcomes
from goldenkit.runner._manifest import run_manifest
from goldenkit.runner._outcome_index import OutcomeIndex
from goldenkit.runner._run import RunExecution, RunPlan
from goldenkit.runner._summary import RunSummary
from goldenkit.runner._versions import git_commit
from goldenkit.schema import (
    ANSWER_FIELDS,
    ERROR,
    JUDGE,
    OUTCOMES_JSONL,
    RUN_FILE,
    SKIPPED,
    VALID,
    RegradedFrom,
    RunKey,
    RunRecord,
    outcome_run,
)

__all__ = ["REGRADE", "aregrade", "regrade", "stored_response"]

#: The mode of a regraded run.
REGRADE = "regrade"
_KEPT = (ERROR, SKIPPED)  # copied as they were


class StoredAnswers(Provider):
    """The provider of a regrade: it never calls a model (the answers come from the source run)."""

    name: ClassVar[str] = REGRADE
    mode: ClassVar[str] = REGRADE

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        raise ProviderError("a regrade calls no model", transient=False)

    def settings(self) -> dict[str, Any]:
        return {}


def _unanswered(rec: dict[str, Any], imported: bool = False) -> bool:
    """An ERROR or SKIPPED outcome with no answer stored: nothing to grade again, copied as it was
    (an imported ERROR is copied even with an answer: the tool's error, a partial answer perhaps)."""
    if imported and rec.get("verdict") == ERROR:
        return True
    return rec.get("verdict") in _KEPT and rec.get("response") is None and not rec.get("trajectory")


def stored_response(rec: dict[str, Any]) -> Response:
    """The Response an outcome record stored: its turns from ``trajectory`` (else its ``response`` text)."""
    turns = [TurnOutput.from_dict(t) for t in rec.get("trajectory") or [] if isinstance(t, dict)]
    if not turns:
        turns = [TurnOutput(text=str(rec.get("response") or ""))]
    stored = rec.get("usage")
    spent: dict[str, Any] = stored if isinstance(stored, dict) else {}
    return Response(
        turns=turns,
        tokens_in=rec.get("tokens_in"),
        tokens_out=rec.get("tokens_out"),
        cost=rec.get("cost"),
        ttft_ms=rec.get("ttft_ms"),
        tokens_cached=rec.get("tokens_cached"),
        tokens_reasoning=rec.get("tokens_reasoning"),
        usage={k: v for k, v in spent.items() if k != JUDGE} or None,  # the judge's is this regrade's own
    )


@dataclass
class _Source:
    """The run being regraded: its folder, manifest, rows and where each final outcome is."""

    run_id: str
    path: Path
    manifest: RunRecord
    index: OutcomeIndex
    row_info: dict[str, tuple[str, str, list[str]]]

    @property
    def jsonl(self) -> Path:
        return self.path / OUTCOMES_JSONL

    @property
    def imported(self) -> bool:
        return self.manifest.get("mode") == IMPORTED

    def records(self) -> Iterator[dict[str, Any]]:
        """The final outcome of every pair, in pair order, a row group at a time."""
        for batch in self.index.batches(self.jsonl, RECORD_BATCH):
            yield from batch


def _dataset_of(run: StoredRun) -> tuple[DatasetLike, str | None]:
    """The dataset ``run``'s rows are graded against (see the module doc), and the sha256 it must have."""
    man = run.manifest
    path = dataset_path_for_run(man, run.path)  # absolute, else relative to the run folder
    if path is not None:
        return read_dataset(path), (man.get("dataset") or {}).get("sha256")
    if recorded := (man.get("dataset") or {}).get("path"):
        raise ResultsError(
            f"regrade: the dataset of run {run.run_id} is not at {recorded} nor relative to its "
            "folder; pass the dataset (--dataset) it was run on"
        )
    source = man.get("source") or {}
    if man.get("mode") == IMPORTED and source.get("cases"):
        return read_dataset(run.path / str(source["cases"])), source.get("cases_sha256")
    if man.get("mode") == IMPORTED:
        raise ResultsError(
            f"regrade: run {run.run_id} was imported from {source.get('format')} without the cases a goldenkit grader "
            "reads (a prompt and what is expected); import it with --dataset (the goldenkit dataset of its samples)"
        )
    raise ResultsError(f"regrade: run {run.run_id} does not say where its dataset is; pass the dataset")


def _read_source(run: StoredRun, dataset: DatasetLike, want: str | None = None) -> _Source:
    man = run.manifest
    if not man.get("complete") or man.get("validity") != VALID:
        why = man.get("invalid_reason") or ("incomplete" if not man.get("complete") else man.get("validity"))
        raise ResultsError(f"regrade: run {run.run_id} is not a complete VALID run ({why}); finish or fix it first")
    want = want if want is not None else (man.get("dataset") or {}).get("sha256")
    if dataset.sha256 != want:
        raise ResultsError(
            f"regrade: the dataset {getattr(dataset, 'path', '')} has sha256 {dataset.sha256}, run {run.run_id} "
            f"was run on {want}; pass the dataset version the run used"
        )
    row_info: dict[str, tuple[str, str, list[str]]] = {}
    for rec, _, _ in scan_outcomes(run.path / OUTCOMES_JSONL):
        rid = str(rec.get("row_id"))
        row_info[rid] = (str(rec.get("slice")), str(rec.get("split")), [str(t) for t in rec.get("tags") or []])
    order = [str(r) for r in dataset.column("id") if str(r) in row_info]
    unknown = sorted(set(row_info) - set(order))
    if unknown:
        raise ResultsError(f"regrade: run {run.run_id} has rows the dataset does not: {shown_ids(unknown)}")
    index = OutcomeIndex(order, int(man.get("repeats") or 1))
    for rec, offset, length in scan_outcomes(run.path / OUTCOMES_JSONL):
        index.note(rec, offset, length)
    src = _Source(run.run_id, run.path, man, index, {rid: row_info[rid] for rid in order})
    unanswered = [
        f"{r['row_id']}#{r.get('repeat') or 0}"
        for r in src.records()
        if r.get("verdict") not in _KEPT and r.get("response") is None
    ]
    if unanswered:
        raise ResultsError(
            f"regrade: run {run.run_id} has no stored response for {len(unanswered)} graded outcome(s): "
            f"{shown_ids(unanswered)}"
        )
    return src


def _check_graders(graders: list[Grader], cases: dict[str, Case]) -> None:
    """Refuse graders that need what outcomes do not keep (see the module doc)."""
    for g in graders:
        need = None
        if isinstance(g, StateGrader):
            need = "the session's final state"
        elif isinstance(g, RetrievalGrader) and not g.tools:
            need = "the ids the provider reported it retrieved (configure [graders.retrieval] tools)"
        if need and any(g.applies(c) for c in cases.values()):
            raise ResultsError(f"regrade: the {g.name} grader needs {need}, which outcomes do not keep")


def _regrade_key(src: _Source, graders: list[Grader]) -> RunKey:
    """RUN's run key with the new graders, their judge version and ``mode: "regrade"`` (an import's ``source``
    kept, a shard's spec and the simulator's version when set; the rule decided repeats stopped under is not
    a regrade's: every stored repeat is graded)."""
    key = run_key_of(src.manifest)
    key.pop("stop_decided_repeats", None)
    if not src.imported:
        key.pop("source", None)
    if key.get("shard") is None:
        key.pop("shard", None)
    if key.get("simulator_version") is None:
        key.pop("simulator_version", None)
    key["judge_version"] = (
        ",".join(sorted({str(v) for g in graders if (v := getattr(g, "judge_version", None))})) or None
    )
    key["graders"] = {g.name: str(g.version) for g in graders}
    key["grader_hard"] = {g.name: bool(g.hard) for g in graders}
    key["mode"] = REGRADE
    return key


def _check_target(results_dir: Path, run_id: str, src: _Source) -> None:
    check_run_id(run_id)
    if run_id == src.run_id and results_dir.resolve() == src.path.parent.resolve():
        raise ResultsError(f"regrade: --run-id {run_id} is the run being regraded; choose a new run id")
    if not (results_dir / run_id / RUN_FILE).exists():
        return
    try:
        regraded = read_manifest(results_dir / run_id).get("regraded_from")
    except ResultsError:  # not a run.json: not a regrade of anything
        regraded = None
    if (regraded["run_id"] if regraded else None) != src.run_id:
        raise ResultsError(
            f"regrade: run {run_id} already exists and is not a regrade of {src.run_id}; use a new --run-id"
        )


def _options(man: RunRecord) -> CallLimits:
    cfg = man.get("config") or {}
    base = CallLimits()
    return CallLimits(
        max_in_flight=int(cfg.get("max_in_flight") or base.max_in_flight),
        rpm=cfg.get("rpm"),
        timeout=float(cfg.get("timeout") or base.timeout),
        max_retries=int(cfg.get("max_retries", base.max_retries)),
        max_error_rate=float(man.get("max_error_rate", base.max_error_rate)),
        max_retry_after=float(cfg.get("max_retry_after") or base.max_retry_after),
    )


class Regrade(RunExecution):
    """A :class:`~goldenkit.runner._run.RunExecution` whose answers are the source run's stored outcomes."""

    def __init__(
        self,
        plan: RunPlan,
        graders: list[Grader],
        folder: Any,
        manifest: RunRecord,
        opts: CallLimits,
        *,
        source: _Source,
        progress: bool | IO[str] | None,
    ) -> None:
        super().__init__(plan, StoredAnswers(), graders, folder, manifest, opts, progress=progress)
        self.source = source

    async def _work(self) -> None:
        pending = np.zeros(len(self.plan.index), dtype=bool)
        pending[self.plan.todo] = True
        index = self.plan.index
        queue = (
            r for r in self.source.records() if pending[index.index_of(r["row_id"], int(r.get("repeat") or 0)) or 0]
        )
        await self.in_workers(queue, len(self.plan.todo), self.regrade_one)

    async def regrade_one(self, src: dict[str, Any]) -> None:
        """Grade one stored answer again and write it (an outcome without an answer is copied)."""
        row_id, repeat = str(src["row_id"]), int(src.get("repeat") or 0)
        sl, sp, tags = self.plan.row_info[row_id]
        rec = dict(self.plan.base_record)
        rec.update(row_id=row_id, slice=sl, split=sp, tags=tags, repeat=repeat, started_at=src.get("started_at"))
        attempts = int(src.get("attempts") or 1)
        if _unanswered(src, self.source.imported):
            rec.update({k: src.get(k) for k in ANSWER_FIELDS})
            self._write(rec, attempts)
            return
        case, resp = self.plan.cases[row_id], stored_response(src)
        if self.sync_grading:
            results = grade_case(self.graders, case, resp)
        else:
            results = await agrade_case(self.graders, case, resp, call=self.seam.response)  # the judge's retries
        self.write_graded(rec, results, resp, src.get("latency_ms"), attempts)


async def aregrade(
    source: StoredRun | str | os.PathLike[str],
    run_id: str,
    graders: Iterable[Grader | str] | None = None,
    *,
    results_dir: str | os.PathLike[str] | None = None,
    dataset: DatasetLike | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    progress: bool | IO[str] | None = None,
    max_ungradable: float | None = 0.0,
) -> RunSummary:
    """Regrade run ``source`` (a run folder, run id under ``results_dir``, or Run) into run ``run_id``.

    ``graders``: Grader objects or registered names; None: the ``[graders]`` of the goldenkit.toml
    that applies to the run (``config=PATH``, else the file the run recorded, else the one beside its
    dataset: :func:`goldenkit.config.config_for_run`), built as a run builds them
    (:func:`goldenkit.graders.build_graders`). ``results_dir``: where ``run_id`` is written and a run
    id ``source`` is looked up (default: the source's folder). ``dataset``: the dataset the run used, or
    its path (default: the one its run.json records, found from any working directory, or an import's
    own cases; its sha256 must match). See the module doc.
    """
    first = read_run(source, results_dir if results_dir is not None else "results")
    want = None
    if isinstance(dataset, (str, os.PathLike)):
        dataset = read_dataset(os.fspath(dataset))
    if dataset is None:
        dataset, want = _dataset_of(first)
    if graders is None:
        cfg = config_for_run(config, first.manifest, first.path)
        graders = build_graders(cfg, generator_model=(first.manifest.get("agent_version") or {}).get("model_id"))
    src = _read_source(first, dataset, want)
    if (crit := src.manifest.get("criteria")) is not None:  # its cases' criteria came from that file
        raise ResultsError(
            f"regrade: run {src.run_id} was graded with --criteria {(crit or {}).get('file')}; "
            "regrading a run with an ADK eval config is not supported"
        )
    out_dir = Path(results_dir) if results_dir is not None else src.path.parent
    grader_objs = resolve_graders(graders)
    cases = normalize_cases(dataset, src.index.row_ids)
    if max_ungradable is not None:
        check_gradable(gradability(grader_objs, cases), max_ungradable)
    _check_graders(grader_objs, cases)
    _check_target(out_dir, run_id, src)
    key = _regrade_key(src, grader_objs)
    if (was := key["dataset"]) and was.get("path") and (now := getattr(dataset, "path", None)) is not None:
        key["dataset"] = {**was, "path": os.path.abspath(now)}  # where it is now
    folder = open_run_folder(out_dir, run_id, key, retry_errors=False)
    try:
        return await _regrade_into(folder, key, src, grader_objs, cases, progress)
    finally:
        folder.lock.release()


async def _regrade_into(
    folder: Any,
    key: RunKey,
    src: _Source,
    graders: list[Grader],
    cases: dict[str, Case],
    progress: bool | IO[str] | None,
) -> RunSummary:
    index = OutcomeIndex(src.index.row_ids, src.index.repeats)
    for rec, offset, length in scan_outcomes(folder.jsonl) if folder.old_manifest is not None else ():
        index.note(rec, offset, length)
    todo = index.pending(False)
    man = src.manifest
    base = outcome_run(folder.run_id, key)
    plan = RunPlan(index=index, todo=todo, row_info=src.row_info, cases=cases, base_record=base)
    opts = _options(man)
    provider = StoredAnswers()
    manifest = run_manifest(
        key, provider, folder, opts, todo=len(todo), retry_errors=False, config=None, commit=git_commit()
    )
    earlier = man.get("regraded_from")  # a regrade of a regrade: the answers are still the first run's
    origin = (earlier.get("answers_from") or earlier.get("run_id")) if earlier else None
    source: RegradedFrom = {"run_id": src.run_id, "path": str(src.path), "answers_from": origin or src.run_id}
    manifest["provider"] = man.get("provider")  # the provider that made the answers
    manifest["regraded_from"] = source
    write_run_record(folder.run_file, manifest)
    return await Regrade(plan, graders, folder, manifest, opts, source=src, progress=progress).execute()


def regrade(
    source: StoredRun | str | os.PathLike[str],
    run_id: str,
    graders: Iterable[Grader | str] | None = None,
    *,
    results_dir: str | os.PathLike[str] | None = None,
    dataset: DatasetLike | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    progress: bool | IO[str] | None = None,
    max_ungradable: float | None = 0.0,
) -> RunSummary:
    """Synchronous :func:`aregrade` (same arguments); inside Jupyter's running loop, on a helper thread
    as :func:`~goldenkit.runner.run_eval` does."""
    return run_to_summary(
        aregrade(
            source,
            run_id,
            graders,
            results_dir=results_dir,
            dataset=dataset,
            config=config,
            progress=progress,
            max_ungradable=max_ungradable,
        )
    )


publish(globals())
