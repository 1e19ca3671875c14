"""One invocation of a run as an object: workers under a TaskGroup, each pair called, graded, written.

:class:`RunExecution` holds what the workers share (the limiter, the outcome writer, the
progress, the counters) and its methods are the steps of one row x repeat:
:meth:`RunExecution.call` (one call through the run's seam, :class:`~goldenkit.runner._calls.ModelCalls`:
retries, backoff and Retry-After under the limiter; the judge gets the same seam as its ``call``),
:meth:`RunExecution.run_one` (call, grade, write) and :meth:`RunExecution.finish` (counts, validity, run.json, Parquet,
``results/latest``). :meth:`RunExecution.execute` starts the workers in an
``asyncio.TaskGroup``: a worker that fails, or a cancel (Ctrl-C, an interrupted
notebook cell), stops every sibling; no call outlives the run, and what
finished is written either way.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import ProviderError, ResultsError
from goldenkit.graders import Grader, GradeResult, JudgeGrader, agrade_case, combine, grade_case
from goldenkit.providers import Provider
from goldenkit.records import Case, Response
from goldenkit.results import (
    RECORD_BATCH,
    OutcomeWriter,
    record_end,
    update_latest,
    write_parquet_batches,
    write_run_record,
)
from goldenkit.runner._budget import STOPPED, Budget, BudgetSpent, earlier_spend, finish_budget
from goldenkit.runner._calls import CallLimits, CallResult, ModelCalls, attempts_note
from goldenkit.runner._folder import RunFolder, utc_now
from goldenkit.runner._limits import Limiter
from goldenkit.runner._outcome_index import OutcomeIndex, has_grader_error, is_candidate_error
from goldenkit.runner._progress import Progress
from goldenkit.runner._summary import RunSummary, run_accounting
from goldenkit.runner._validity import crash_report, validity, worker_exceptions
from goldenkit.schema import (
    ERROR,
    FAIL,
    INFRASTRUCTURE,
    OUTCOMES_PARQUET,
    PASS,
    SKIPPED,
    TOKEN_COUNTS,
    OutcomeRun,
    RunRecord,
    outcome_usage,
)

if TYPE_CHECKING:  # rows at a time: loaded only when decided repeats stop or the run is sequential
    from goldenkit.runner._sequential import RowSchedule

Pair = tuple[str, int]
T = TypeVar("T")
#: What an ERROR outcome keeps of the calls answered before its failure (a conversation's earlier turns).
SPENT = (*TOKEN_COUNTS, "cost", "usage")


@dataclass(frozen=True)
class RunPlan:
    """What was decided before the first call: the rows, their cases, the pairs to call."""

    index: OutcomeIndex  # every row x repeat of the run, and where its last outcome is
    todo: npt.NDArray[np.int64]  # the pairs this invocation calls (their numbers in ``index``), in order
    row_info: dict[str, tuple[str, str, list[str]]]  # row id -> (slice, split, tags)
    cases: dict[str, Case]
    base_record: OutcomeRun  # the fields every outcome of the run shares (goldenkit.schema.outcome_run)


class RunExecution:
    """One invocation of a run (see the module doc)."""

    def __init__(
        self,
        plan: RunPlan,
        provider: Provider,
        graders: Sequence[Grader],
        folder: RunFolder,
        manifest: RunRecord,
        opts: CallLimits,
        *,
        progress: bool | IO[str] | None,
        recorder: Any = None,
        conversations: Any = None,
    ) -> None:
        self.plan, self.provider, self.graders = plan, provider, list(graders)
        self.conversations = conversations  # a ConversationDriver for scenario cases (goldenkit.runner._conversation)
        self.folder, self.manifest, self.opts, self.recorder = folder, manifest, opts, recorder
        self.hard = {g.name: bool(g.hard) for g in self.graders}
        self.sync_grading = all(type(g).agrade is Grader.agrade for g in self.graders)
        self.judges = [g for g in self.graders if isinstance(g, JudgeGrader)]
        self.replay = provider.mode == "fixtures"
        self.recorded_latency = getattr(provider, "recorded_latency_ms", None) if self.replay else None
        self.seam = ModelCalls(opts)  # every model call of the run: the candidate's, the judge's, the simulator's
        budget = Budget.of(opts)
        if self.limiter.budget is not None and budget is not None:  # a budget is the run's total: resumes count
            self.limiter.budget.spent = earlier_spend(folder.old_manifest, folder.jsonl, budget)
        self.progress = Progress(len(plan.todo), progress)
        self.writer = OutcomeWriter(folder.jsonl, coalesce=True)
        self.consecutive_errors = 0
        self.stopped: str | None = None
        self.first_error: str | None = None
        self.first_candidate_error: str | None = None
        self.crash: list[BaseException] = []  # every worker's exception when goldenkit itself failed
        self.rows: RowSchedule | None = None  # rows at a time: decided repeats stop, a sequential run's order
        self.on_outcome: Callable[[dict[str, Any]], None] | None = None  # sees every outcome written
        self.t_start = time.monotonic()

    @property
    def limiter(self) -> Limiter:
        """The run's limiter (and budget): the seam's."""
        return self.seam.limiter

    @limiter.setter
    def limiter(self, limiter: Limiter) -> None:
        self.seam.limiter = limiter

    @property
    def calls(self) -> int:
        """The model calls made (every attempt), as the seam counted them."""
        return self.seam.calls

    @calls.setter
    def calls(self, calls: int) -> None:
        self.seam.calls = calls

    # ------------------------------------------------------------ the workers

    async def execute(self) -> RunSummary:
        """Call every pending pair and write the run; the summary even when interrupted (then re-raised)."""
        interrupted = True
        try:
            await self._work()
            interrupted = False
        except Exception as exc:  # a worker raised what is not a row's error: goldenkit crashed
            self.crash = worker_exceptions(exc)
            raise
        finally:
            summary = await self.finish(interrupted)
        return summary

    async def _work(self) -> None:
        if self.rows is not None:  # goldenkit.runner._sequential
            await self.rows.work(self)
            return
        index = self.plan.index
        pairs = (index.pair(int(i)) for i in self.plan.todo)
        await self.in_workers(pairs, len(self.plan.todo), lambda pair: self.run_one(*pair))

    async def in_workers(self, items: Iterator[T], count: int, handle: Callable[[T], Awaitable[None]]) -> None:
        """``handle`` each of the ``count`` ``items`` on up to ``max_in_flight`` workers under one TaskGroup
        (a worker's failure is the run's, and stops its siblings); workers stop early once ``stopped``."""
        try:
            async with asyncio.TaskGroup() as tg:
                # one loop pass apart: the first request leaves at once and the waves are spread from the start
                for _ in range(min(self.opts.max_in_flight, count)):
                    tg.create_task(self._worker(items, handle))
                    await asyncio.sleep(0)
        except BaseExceptionGroup as group:  # the workers' failures: every one is kept (run.json "crash")
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    async def _worker(self, items: Iterator[T], handle: Callable[[T], Awaitable[None]]) -> None:
        for item in items:
            if self.stopped:
                return
            try:
                await handle(item)
            except BudgetSpent:  # the run's budget refused a call: this item is not written, the run stops
                self.stopped = self.stopped or STOPPED
                return
            # An agent that answers without awaiting would keep this loop from ever yielding: the
            # whole run in one event-loop pass, the cancelled deadline timers of every call piling
            # up in the loop (about 200 bytes an outcome) until it ends. One pass per outcome.
            await asyncio.sleep(0)

    # ------------------------------------------------------------ one call

    async def call(self, provider: Provider, case: Case, repeat: int) -> CallResult:
        """Call ``provider`` on ``case`` through the run's seam (:meth:`~goldenkit.runner._calls.ModelCalls.call`:
        the limiter and budget, retries with backoff and Retry-After, the deadline, the error kinds):
        ``(response, error, attempts, latency of the last, ms)``."""
        return await self.seam.call(provider, case, repeat)

    # ------------------------------------------------------------ one outcome

    def new_record(self, row_id: str, repeat: int) -> dict[str, Any]:
        """The outcome record of one row x repeat before its call: the run's fields, the row's, the start."""
        sl, sp, tags = self.plan.row_info[row_id]
        rec: dict[str, Any] = dict(self.plan.base_record)
        rec.update(row_id=row_id, slice=sl, split=sp, tags=tags, repeat=repeat, started_at=utc_now())
        return rec

    async def run_one(self, row_id: str, repeat: int) -> None:
        """Call, grade and write the outcome of one row x repeat."""
        rec = self.new_record(row_id, repeat)
        case = self.plan.cases[row_id]
        if case.scenario is not None and self.conversations is not None:
            resp, err, attempts, latency = await self.conversations.run(self, self.provider, case, repeat)
        else:
            resp, err, attempts, latency = await self.seam.call(self.provider, case, repeat)
        if self.recorder is not None:
            self.recorder.write(row_id, repeat, resp, latency_ms=latency, error=err)
        if self.recorded_latency is not None:
            latency = self.recorded_latency(row_id, repeat)
        if resp is None:
            self.write_error(rec, err, attempts, latency)
            return
        self.consecutive_errors = 0
        if self.sync_grading:
            results = grade_case(self.graders, case, resp)
        else:
            results = await agrade_case(self.graders, case, resp, call=self.seam.response)
        self.write_graded(rec, results, resp, latency, attempts)

    def write_error(self, rec: dict[str, Any], err: ProviderError | None, attempts: int, latency: float | None) -> None:
        """Write an ERROR outcome for a call that produced nothing to grade; trip the circuit breaker if due.

        ``error_kind`` is the error's kind (one of :data:`goldenkit.schema.ERROR_KINDS`); the
        trajectory is what the call produced before it failed (``err.partial``: a conversation's
        earlier turns), and the detail says how often the failing call itself was tried."""
        reason = one_line(str(err)) + attempts_note(err, attempts) if err is not None else "no response"
        partial = err.partial if err is not None else None
        rec.update(
            verdict=ERROR,
            detail=reason,
            error_kind=err.kind if err is not None else INFRASTRUCTURE,
            graders={},
            response=None,
            trajectory=partial.trajectory() if isinstance(partial, Response) else [],
            latency_ms=latency,
            ttft_ms=None,
            attempts=attempts,
            **{k: getattr(partial if isinstance(partial, Response) else None, k, None) for k in SPENT},
        )
        if not is_candidate_error(rec):  # the candidate's own error is evidence, not a server gone away
            self.count_error(reason)
        elif self.first_candidate_error is None:
            self.first_candidate_error = reason  # said in the run's summary line
        self._write(rec, attempts)

    def count_error(self, reason: str) -> None:
        """One more consecutive ERROR nobody's answer caused: the circuit breaker stops the run after
        ``abort_after_errors`` (an ``agent`` or ``refused`` ERROR neither counts nor breaks the streak)."""
        self.consecutive_errors += 1
        if self.first_error is None:
            self.first_error = reason
        limit = self.opts.abort_after_errors
        if limit and self.consecutive_errors >= limit and self.stopped is None:
            self.stopped = (
                f"stopped after {self.consecutive_errors} consecutive errors (last: {reason}); "
                f"resume with --run-id {self.folder.run_id} --retry-errors"
            )

    def write_graded(
        self,
        rec: dict[str, Any],
        results: Mapping[str, GradeResult],
        resp: Response,
        latency: float | None,
        attempts: int,
    ) -> None:
        """Complete ``rec`` with the verdict, the graders' results and the response; write it."""
        verdict, detail = combine(results, self.hard)
        rec.update(
            verdict=verdict,
            detail=one_line(detail, 1000) if detail else "",
            error_kind="grader" if verdict == ERROR else None,
            graders={n: r.to_dict() for n, r in results.items()},
            response=resp.text,
            trajectory=resp.trajectory(),
            latency_ms=latency,
            ttft_ms=resp.ttft_ms,
            attempts=attempts,
            tokens_in=resp.tokens_in,
            tokens_out=resp.tokens_out,
            tokens_cached=resp.tokens_cached,
            tokens_reasoning=resp.tokens_reasoning,
            cost=resp.cost,
            usage=outcome_usage(resp.usage, (r.usage for r in results.values())),  # the judge's and simulator's
        )
        self._write(rec, attempts)

    def _write(self, rec: dict[str, Any], attempts: int) -> None:
        offset, length = self.writer.write(rec)
        self.plan.index.note(rec, offset, length)  # the record itself is not kept: memory stays flat
        if self.on_outcome is not None:
            self.on_outcome(rec)
        self.progress.update(rec["verdict"], attempts)

    # ------------------------------------------------------------ the end

    async def _close(self) -> OSError | None:
        """Close the writer, the recorder, the progress and every provider (the judge's too)."""
        lost: OSError | None = None
        try:
            self.writer.close()  # the lines of the last loop pass go out here
        except OSError as exc:
            lost = exc
        if self.recorder is not None:
            self.recorder.close()
        self.progress.close()
        if self.conversations is not None:
            await self.conversations.aclose()
        try:
            await self.provider.aclose()
        finally:
            for judge in self.judges:
                await judge.aclose()
        return lost

    async def finish(self, interrupted: bool) -> RunSummary:
        """Counts, validity, run.json, Parquet (when complete) and ``results/latest`` (left where it was by a
        resume that wrote no outcome -- nothing to call, or a budget already spent: the newest run is the
        newest that did something)."""
        lost = await self._close()
        index = self.plan.index
        counts = index.counts()  # the earlier invocations' outcomes, superseded by this one's
        if self.rows is not None:  # pairs a decided row (or a decided sequential run) does not need
            counts["not_needed"] = self.rows.not_needed(index)
        total, expected = counts["total"], counts["expected"] - counts.get("not_needed", 0)
        stopped = self.stopped if total < expected else None
        if interrupted or lost is not None:
            stopped = f"interrupted with {total} of {expected} outcomes; resume with --run-id {self.folder.run_id}"
        if self.crash:  # goldenkit itself failed: a crash with every worker's exception, not an interruption
            stopped, crashed = crash_report(self.crash)
            self.manifest["stopped_because"], self.manifest["crash"] = crashed["stopped_because"], crashed["crash"]
        stopped = finish_budget(self.limiter, self.manifest, stopped, self.folder.run_id)
        first_error = self.first_error
        if first_error is None and counts[ERROR] and lost is None:
            first_error = index.first_error_detail(self.folder.jsonl)
        valid, why, rate = validity(counts, expected, self.opts.max_error_rate, stopped, first_error)
        complete = total == expected and lost is None and not interrupted
        elapsed = time.monotonic() - self.t_start
        invocation = self.manifest["timings"]["invocations"][-1]
        invocation.update(ended_at=utc_now(), calls=self.calls, elapsed_s=round(elapsed, 3), **self.limiter.stats())
        record_end(
            self.manifest,
            ended_at=utc_now(),
            counts=counts,
            error_rate=rate,
            validity=valid,
            invalid_reason=why,
            complete=complete,
        )
        if self.rows is not None:  # rows at a time: how many pairs the decided rows did not need, the sequential record
            ran = self.rows.record(self, counts["not_needed"], finished=complete)
            self.manifest["decided_repeats"] = ran["decided_repeats"]
            if "sequential" in ran:
                self.manifest["sequential"] = ran["sequential"]
        if complete:  # read back from outcomes.jsonl a row group at a time
            write_parquet_batches(index.batches(self.folder.jsonl, RECORD_BATCH), self.folder.path / OUTCOMES_PARQUET)
        else:
            (self.folder.path / OUTCOMES_PARQUET).unlink(missing_ok=True)
        if lost is None:  # what the run's final outcomes cost (goldenkit.results._accounting)
            batches = index.batches(self.folder.jsonl, RECORD_BATCH)
            self.manifest["accounting"] = run_accounting(batches, self.manifest, self.folder.path)
        write_run_record(self.folder.run_file, self.manifest)
        if self.progress.done or self.folder.old_manifest is None:  # a resume that wrote no outcome moves nothing
            update_latest(self.folder.path.parent, self.folder.run_id)
        if lost is not None:
            raise ResultsError(
                f"{self.folder.jsonl}: outcomes could not be written ({lost}); "
                f"free space and resume with --run-id {self.folder.run_id}"
            ) from lost
        return self.summary(counts, rate, valid, why, elapsed)

    def summary(self, counts: dict[str, int], rate: float, valid: str, why: str | None, elapsed: float) -> RunSummary:
        commits = [i.get("git_commit") for i in self.manifest["timings"]["invocations"]]
        return RunSummary(
            run_id=self.folder.run_id,
            path=self.folder.path,
            counts=counts,
            error_rate=rate,
            max_error_rate=self.opts.max_error_rate,
            validity=valid,
            invalid_reason=why,
            complete=bool(self.manifest["complete"]),
            calls=self.calls,
            resumed=len(self.plan.index) - len(self.plan.todo),
            elapsed_s=elapsed,
            manifest=self.manifest,
            git_commits=list(dict.fromkeys(c for c in commits if c)),
            candidate_error=self.first_candidate_error,
        )


def count_outcomes(records: Sequence[Mapping[str, Any]], expected: int) -> dict[str, int]:
    """Verdict counts, ``total``, ``expected``, ``grader_errors`` (outcomes not ERROR whose
    graders include one that could not grade, e.g. a soft judge whose call failed) and
    ``candidate_errors`` (ERROR outcomes that are the candidate's own: agent, refused)."""
    verdicts = Counter(r["verdict"] for r in records)
    counts = {v: verdicts.get(v, 0) for v in (PASS, FAIL, ERROR, SKIPPED)}
    grader_errors = sum(1 for r in records if has_grader_error(r))
    candidate_errors = sum(1 for r in records if is_candidate_error(r))
    counts.update(total=len(records), expected=expected, grader_errors=grader_errors, candidate_errors=candidate_errors)
    return counts


__all__ = ["RunExecution", "RunPlan", "count_outcomes"]

publish(globals())
