"""A worker of a Ray run (:mod:`goldenkit.runner._ray_executor`): the actor that rebuilds the run's provider
and graders from the setup the driver shipped, runs batches of (row, repeat) items through the run's own code
(:meth:`goldenkit.runner._run.RunExecution.run_one`) and hands their outcome records back unwritten.

Its calls ask the run's one limiter actor (:class:`goldenkit.runner._ray_limits.ClusterLimiter`), so the
limits and the budget hold for the whole cluster; a batch returns once that actor holds its calls' spend.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from goldenkit._text import one_line
from goldenkit.errors import GoldenkitError, InfrastructureError
from goldenkit.graders import Grader
from goldenkit.providers import Provider
from goldenkit.records import Case
from goldenkit.runner._budget import Budget, BudgetSpent
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._folder import RunFolder, RunLock
from goldenkit.runner._outcome_index import OutcomeIndex
from goldenkit.runner._ray_limits import ClusterLimiter
from goldenkit.runner._run import RunExecution, RunPlan
from goldenkit.schema import OutcomeRun, RunRecord

__all__ = ["RayWorker", "RowInfo", "WorkerRun"]

#: What the driver sends of a row with its case: (row id, slice, tags).
RowInfo = tuple[str, str, list[str]]


class WorkerRun(RunExecution):
    """A worker's :class:`RunExecution`: the same calls and grading; records are kept for the batch, not written."""

    def __init__(self, provider: Provider, graders: Sequence[Grader], opts: CallLimits, limiter: ClusterLimiter):
        scratch = Path(tempfile.mkdtemp(prefix="goldenkit-ray-"))
        folder = RunFolder("worker", scratch, RunLock(scratch, "worker"))
        index = OutcomeIndex([], 1)
        # a worker's run has no record of its own: each batch brings the driver's base record; run.json is the driver's
        base, manifest = cast(OutcomeRun, {}), cast(RunRecord, {})
        plan = RunPlan(index=index, todo=index.pending(False), row_info={}, cases={}, base_record=base)
        super().__init__(plan, provider, graders, folder, manifest, opts, progress=False)
        self.writer.close()  # nothing is written on a worker: the scratch folder only held its empty file
        shutil.rmtree(scratch, ignore_errors=True)
        self.limiter = limiter  # type: ignore[assignment]
        self.done: dict[tuple[str, int], dict[str, Any]] = {}

    def _write(self, rec: dict[str, Any], attempts: int) -> None:
        self.done[(rec["row_id"], rec["repeat"])] = rec


class RayWorker:
    """One worker actor (wrapped with ``ray.remote`` by :func:`goldenkit.runner._ray_executor.start_pool`):
    builds its run, runs batches."""

    def __init__(self, blob: bytes, opts: CallLimits, limiter: Any, number: int, cwd: str, paths: list[str]) -> None:
        self.where = f"{socket.gethostname()} pid {os.getpid()}"
        self.error: str | None = None
        self.uses: Counter[str] = Counter()
        self.reported = 0
        try:
            if os.path.isdir(cwd):  # a worker process of this run's own: its folder is the driver's
                os.chdir(cwd)
                if cwd not in sys.path:
                    sys.path.insert(0, cwd)
            # the driver's import path, where it exists here: what the driver imports by name, a worker can
            sys.path.extend(p for p in paths if p not in sys.path and os.path.isdir(p))
            import ray.cloudpickle

            provider, graders = ray.cloudpickle.loads(blob)()
            provider.configure(timeout=opts.timeout, max_in_flight=opts.max_in_flight)
            self.cluster = ClusterLimiter(limiter, number, uuid.uuid4().hex, budget=Budget.of(opts))
            self.run = WorkerRun(provider, graders, opts, self.cluster)
        except Exception as exc:
            self.error = str(exc) if isinstance(exc, GoldenkitError) else f"{type(exc).__name__}: {exc}"
            self.error = one_line(self.error, 300)

    async def ready(self) -> tuple[str | None, str]:
        """``(setup error or None, where this worker runs)``."""
        return self.error, self.where

    async def run_batch(
        self, base: OutcomeRun, items: list[tuple[str, int]], cases: dict[str, Case], info: dict[str, RowInfo]
    ) -> tuple[list[dict[str, Any]], int, str | None]:
        """The outcome records of ``items`` (in order; those the run's budget refused a call are left out),
        the calls made since the last batch returned, and which budget refused a call (None: none)."""
        if self.error is not None:
            raise InfrastructureError(f"Ray worker on {self.where}: {self.error}")
        run = self.run
        run.plan.base_record.update(base)
        for rid, case in cases.items():
            run.plan.cases[rid], run.plan.row_info[rid] = case, info[rid]
            self.uses[rid] += 1
        spent: list[str] = []
        try:
            async with asyncio.TaskGroup() as tg:
                for rid, rep in items:
                    tg.create_task(_within_budget(run.run_one(rid, rep), spent))
            records = [run.done.pop(pair) for pair in items if pair in run.done or not spent]
        except BaseExceptionGroup as group:
            raise group.exceptions[0] from None
        finally:
            for pair in items:
                run.done.pop(pair, None)
            for rid in cases:
                self.uses[rid] -= 1
                if self.uses[rid] <= 0:
                    del self.uses[rid], run.plan.cases[rid], run.plan.row_info[rid]
        await self.cluster.settled()
        calls, self.reported = run.calls - self.reported, run.calls
        return records, calls, spent[0] if spent else None


async def _within_budget(call: Any, spent: list[str]) -> None:
    """``call``; a call the run's budget refused is noted in ``spent`` (its row is not written), not raised."""
    try:
        await call
    except BudgetSpent as exc:
        spent.append(str(exc))
