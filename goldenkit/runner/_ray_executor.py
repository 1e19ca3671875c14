"""``executor="ray"``: one run spread over the workers of a Ray cluster, written by its driver.

The driver (the process that called ``run_eval``) plans the run and owns its
folder exactly as a local run does: the same lock, the same
:class:`~goldenkit.results.OutcomeWriter` appending every outcome as it
arrives (crash-safe; a killed driver's run resumes by run id from any machine
that sees the folder), the same counts, validity, run.json and Parquet. Only
the calls move: the driver hands small batches of (row, repeat) items to W
worker actors (:class:`~goldenkit.runner._ray_worker.RayWorker`), each of which runs the items of a batch
concurrently through the run's own code (:meth:`goldenkit.runner._run.RunExecution.run_one`:
retries, backoff, Retry-After, grading) and sends the batch's outcome records
back. The limits hold for the whole cluster: every worker asks one limiter actor (:mod:`goldenkit.runner._ray_limits`),
and a batch returns once the actor holds its calls' spend.

What a worker runs is rebuilt there, never assumed: the driver pickles a *setup* (a zero-argument callable
returning the provider and the graders) before anything is written; one that cannot be pickled (a lambda's
closure over a lock, an open client) is a :class:`~goldenkit.errors.ConfigError` (exit 1), and so is a setup
that fails on a worker (a fixtures folder or a module that is not there), named
with the worker's host. The default setup ships the provider and grader objects
themselves; ``goldenkit run --executor ray`` ships the command's options instead,
so each worker builds its provider from the recorded settings and reads API keys
from its own environment. A worker starts in the driver's folder when that folder
exists on its machine (relative paths then resolve as on the driver), and adds the
driver's import path where it exists (a function the driver imports by name, the
worker can too).

Faults, each bounded:

- a worker killed mid-batch (process killed, node lost): the batch's items go back
  to the queue and run on a live worker; its finished items were never written, so
  nothing is lost and nothing is written twice (outcomes are keyed by row and
  repeat; the last record per pair wins). Ray restarts a worker at most
  ``MAX_RESTARTS`` times; an item whose batch failed ``ITEM_TRIES`` times is an
  ERROR outcome saying so (an agent that kills its worker on one row does not take
  the run down);
- every worker gone, or no batch returned for longer than the calls' own deadlines
  allow: the run stops, incomplete and INVALID (exit 3), resumable by run id;
- Ctrl-C or a driver crash: what arrived is written; the actors are killed.

Ray is imported only here, and only when a Ray run starts (``import goldenkit``
does not import it): ``pip install 'goldenkit[ray]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import ConfigError, InfrastructureError, ProviderError
from goldenkit.graders import Grader, build_graders
from goldenkit.providers import Provider, apply_transport_to_judges, build_provider
from goldenkit.runner._budget import STOPPED, Budget, BudgetCounter
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._outcome_index import is_candidate_error
from goldenkit.runner._ray_limits import LimiterActor
from goldenkit.runner._ray_worker import RayWorker
from goldenkit.runner._run import RunExecution
from goldenkit.schema import ERROR

#: Restarts Ray grants one worker actor after its process died.
MAX_RESTARTS = 3
#: Batches an item may be part of that failed (a worker died or the batch raised) before it is an ERROR.
ITEM_TRIES = 3
#: Seconds to wait for the workers to start (or for a restarted worker to answer).
READY_TIMEOUT = 120.0
#: Items per batch at most (small batches: outcomes stream back as they finish).
MAX_BATCH = 16

Setup = Callable[[], tuple[Provider, Sequence[Grader]]]


@dataclass(frozen=True)
class RaySettings:
    """Where and how wide: ``address`` of a running cluster (None starts a local one; ``"auto"``
    finds one), ``workers`` actors (default: the cluster's CPUs), and ``setup``, what each worker
    calls to build its provider and graders (default: the driver's objects, pickled); ``max_restarts``
    of a worker whose process died."""

    address: str | None = None
    workers: int | None = None
    setup: Setup | None = None
    max_restarts: int | None = None  # None: MAX_RESTARTS


def import_ray() -> Any:
    """The ``ray`` module, or a ConfigError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray: pip install 'goldenkit[ray]'") from None
    return ray


@dataclass
class ShippedObjects:
    """The default setup: the driver's provider and graders, pickled as they are."""

    provider: Provider
    graders: list[Grader]

    def __call__(self) -> tuple[Provider, Sequence[Grader]]:
        return self.provider, self.graders


@dataclass
class SpecSetup:
    """A setup from a recorded spec (``goldenkit run --executor ray``'s): each worker builds its provider from the
    run's options (:func:`goldenkit.providers.build_provider`, API keys from its own environment) and the graders
    ``use`` names (None: ``[graders] use``) from its goldenkit.toml, importing no module of the command line."""

    opts: dict[str, Any]
    cfg: dict[str, Any]
    use: list[str] | None = None

    def __call__(self) -> tuple[Provider, Sequence[Grader]]:
        graders = build_graders(self.cfg, use=self.use, generator_model=self.opts.get("model"))
        provider = build_provider(self.opts)
        apply_transport_to_judges(graders, self.opts)
        return provider, graders


def pickle_setup(provider: Provider, graders: Sequence[Grader], settings: RaySettings) -> bytes:
    """The setup every worker unpickles; a ConfigError (exit 1) when it cannot be shipped."""
    ray = import_ray()
    if settings.workers is not None and settings.workers < 1:
        raise ConfigError(f"--ray-workers must be >= 1 (got {settings.workers})")
    setup: Setup = settings.setup or ShippedObjects(provider, list(graders))
    try:
        blob: bytes = ray.cloudpickle.dumps(setup)
    except Exception as exc:
        what = getattr(provider, "spec", None) or provider.name
        raise ConfigError(
            f"provider {what} cannot be shipped to Ray workers ({type(exc).__name__}: {one_line(str(exc), 200)}); "
            "use a function a worker can import (--callable module:function) or run without --executor ray"
        ) from None
    return blob


@dataclass
class RayPool:
    """The cluster connection, the limiter actor and the workers of one Ray run."""

    ray: Any
    started: bool  # this run started the local cluster (and shuts it down)
    limiter: Any
    workers: list[Any]
    stats: dict[str, int] = field(default_factory=dict)
    closed: bool = False

    async def close(self) -> None:
        """Keep the limiter's figures, kill every actor, shut down a cluster this run started (once)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            self.stats = await asyncio.wait_for(_wrap(self.limiter.stats.remote()), 10.0)
        for actor in (*self.workers, self.limiter):
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        if self.started:
            self.ray.shutdown()


def _wrap(ref: Any) -> asyncio.Future[Any]:
    return asyncio.wrap_future(ref.future())


def _connect(ray: Any, settings: RaySettings) -> bool:
    """Connect to (or start) the cluster; True when this run started it."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "WARNING"}
    address = settings.address
    if address is None and not os.environ.get("RAY_ADDRESS"):
        address = "local"  # a new cluster of its own, never one that happens to run on this machine
        kwargs["num_cpus"] = settings.workers or os.cpu_count() or 1
    try:
        ray.init(address=address, **kwargs)
    except Exception as exc:
        where = settings.address or "a new local cluster"
        raise InfrastructureError(f"Ray: cannot connect to {where}: {one_line(str(exc), 300)}") from None
    return True


async def start_pool(settings: RaySettings, opts: CallLimits, blob: bytes) -> RayPool:
    """Connect, start the limiter and the workers, and wait until every worker has built its run."""
    ray = import_ray()
    started = _connect(ray, settings)
    pool = RayPool(ray, started, None, [])
    try:
        count = settings.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        limiter_cls = ray.remote(LimiterActor).options(num_cpus=0, max_concurrency=100_000)
        pool.limiter = limiter_cls.remote(opts.max_in_flight, opts.rpm, opts.max_retry_after, Budget.of(opts))
        worker_cls = ray.remote(RayWorker).options(
            num_cpus=1,
            max_restarts=MAX_RESTARTS if settings.max_restarts is None else settings.max_restarts,
            max_task_retries=0,  # the driver re-runs a failed batch's items itself (ITEM_TRIES)
            max_concurrency=1000,
            scheduling_strategy="SPREAD",
        )
        cwd = os.getcwd()
        paths = [os.path.abspath(p) for p in sys.path if p]
        pool.workers = [worker_cls.remote(blob, opts, pool.limiter, i, cwd, paths) for i in range(count)]
        try:
            answers = await asyncio.wait_for(
                asyncio.gather(*(_wrap(w.ready.remote()) for w in pool.workers)), READY_TIMEOUT
            )
        except TimeoutError:
            cpus = ray.cluster_resources().get("CPU", 0)
            raise InfrastructureError(
                f"Ray: {count} workers did not start within {READY_TIMEOUT:g}s (the cluster has {cpus:g} CPUs; "
                "each worker takes one; see --ray-workers)"
            ) from None
        for error, where in answers:
            if error is not None:
                raise ConfigError(f"Ray worker on {where} cannot build the provider and graders: {error}")
    except BaseException:
        await pool.close()
        raise
    return pool


class _FixedStats:
    """The limiter figures run.json records, read from the limiter actor at the end."""

    def __init__(self, stats: dict[str, int], budget: BudgetCounter | None = None) -> None:
        self._stats = stats
        self.budget = budget  # what the run spent, as the limiter actor counted it

    def stats(self) -> dict[str, int]:
        return dict(self._stats)


class RayRun(RunExecution):
    """The driver of a Ray run: a :class:`RunExecution` whose calls are made by the pool's workers."""

    def __init__(self, *args: Any, pool: RayPool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pool = pool
        todo, workers = len(self.plan.todo), len(pool.workers)
        self.batch = max(1, min(MAX_BATCH, todo // (workers * 4) or 1))
        # enough batches out per worker that each can fill every cluster slot, plus one queued behind
        self.depth = math.ceil(self.opts.max_in_flight / self.batch) + 1
        self.tries: Counter[int] = Counter()
        self.requeued = 0
        self.retry: deque[int] = deque()
        self.todo_iter: Iterator[int] = (int(i) for i in self.plan.todo)
        self.max_turns = max((len(c.turns) for c in self.plan.cases.values()), default=1)

    async def _work(self) -> None:
        counter = self.limiter.budget  # the run's budget, with what earlier invocations spent
        try:
            if counter is not None:
                await _wrap(self.pool.limiter.start_spend.remote(counter.spent))
            await self._dispatch()
        finally:
            if counter is not None:
                with contextlib.suppress(Exception):
                    counter.spent, counter.refused = await asyncio.wait_for(
                        _wrap(self.pool.limiter.budget.remote()), 10.0
                    )
            await self.pool.close()
            self.limiter = _FixedStats(  # type: ignore[assignment]
                {**self.pool.stats, "ray_workers": len(self.pool.workers), "ray_requeued": self.requeued}, counter
            )

    def stall_after(self) -> float:
        """Seconds without any batch returning after which the run stops (never a hang).

        The longest a batch can take when every call runs into its deadline, every
        retry and the longest Retry-After, queued behind the whole cluster's slots."""
        o = self.opts
        per_call = (o.timeout * self.max_turns + 1.0) * (o.max_retries + 1) + o.backoff_cap * o.max_retries
        out = len(self.pool.workers) * self.depth * self.batch
        rounds = math.ceil(out / o.max_in_flight) * (2 if self.judges else 1)
        pacing = out * 60.0 / o.rpm if o.rpm else 0.0
        return 60.0 + per_call * rounds + o.max_retry_after + pacing

    def _next_batch(self) -> list[int]:
        nums: list[int] = []
        while len(nums) < self.batch and self.retry:
            nums.append(self.retry.popleft())
        for num in self.todo_iter:
            nums.append(num)
            if len(nums) >= self.batch:
                break
        return nums

    def _submit(self, worker: int, nums: list[int]) -> asyncio.Future[Any]:
        pairs = [self.plan.index.pair(n) for n in nums]
        rows = {rid for rid, _ in pairs}
        cases = {rid: self.plan.cases[rid] for rid in rows}
        info = {rid: self.plan.row_info[rid] for rid in rows}
        ref = self.pool.workers[worker].run_batch.remote(self.plan.base_record, pairs, cases, info)
        return _wrap(ref)

    async def _dispatch(self) -> None:
        """Keep every live worker fed; write each batch as it returns; requeue a failed one's items."""
        live = set(range(len(self.pool.workers)))
        busy: Counter[int] = Counter()
        out: dict[asyncio.Future[Any], tuple[int, list[int]]] = {}
        stall = self.stall_after()
        last_failure = ""
        try:
            while True:
                for w in sorted(live):
                    while not self.stopped and busy[w] < self.depth and (nums := self._next_batch()):
                        out[self._submit(w, nums)] = (w, nums)
                        busy[w] += 1
                if not out:
                    break
                done, _ = await asyncio.wait(out, timeout=stall, return_when=asyncio.FIRST_COMPLETED)
                if not done:
                    self.stopped = (
                        f"no Ray worker returned an outcome for {stall:.0f}s; resume with --run-id {self.folder.run_id}"
                    )
                    break
                for fut in done:
                    w, nums = out.pop(fut)
                    busy[w] -= 1
                    failure = self._take(fut, nums)
                    if failure is None:
                        continue
                    last_failure, dead = failure
                    if dead and w in live and not await self._alive(w):  # Ray's restarts are bounded
                        live.discard(w)
                        self.pool.limiter.forget.remote(w)
                if not live and not self.stopped:
                    self.stopped = (
                        f"all {len(self.pool.workers)} Ray workers died (last: {last_failure}); "
                        f"resume with --run-id {self.folder.run_id}"
                    )
        finally:
            for fut in out:
                fut.cancel()

    def _take(self, fut: asyncio.Future[Any], nums: list[int]) -> tuple[str, bool] | None:
        """Write a returned batch; for a failed one requeue its items and return (why, worker died)."""
        ray = self.pool.ray
        try:
            records, calls, spent = fut.result()
        except ray.exceptions.RayActorError as exc:
            why = f"a Ray worker died ({type(exc).__name__})"
            self._requeue(nums, why)
            return why, True
        except Exception as exc:  # the batch raised: RayTaskError wraps the cause
            cause = getattr(exc, "cause", None) or exc
            why = f"the Ray batch failed: {type(cause).__name__}: {one_line(str(cause), 200)}"
            self._requeue(nums, why)
            return why, False
        self.calls += calls
        for rec in records:
            self._write(rec, int(rec.get("attempts") or 0))
            self._breaker(rec)
        if spent is not None:  # the items the budget refused stay to run: a resume with a larger budget
            self.stopped = self.stopped or STOPPED
        return None

    def _requeue(self, nums: list[int], why: str) -> None:
        """Back to the queue, or an ERROR outcome for an item whose batches failed ITEM_TRIES times."""
        for num in nums:
            self.requeued += 1
            self.tries[num] += 1
            if self.tries[num] < ITEM_TRIES:
                self.retry.append(num)
                continue
            rec = self.new_record(*self.plan.index.pair(num))
            err = ProviderError(f"{why}, {ITEM_TRIES} times running this item", transient=True)
            self.write_error(rec, err, 0, None)

    def _breaker(self, rec: dict[str, Any]) -> None:
        """The circuit breaker of a local run, over the outcomes as they arrive from every worker."""
        if rec.get("verdict") != ERROR or rec.get("error_kind") == "grader":
            self.consecutive_errors = 0
            return
        if not is_candidate_error(rec):  # the candidate's own error neither counts nor breaks the streak
            self.count_error(str(rec.get("detail") or ""))

    async def _alive(self, worker: int) -> bool:
        """Whether worker ``worker`` answers again (Ray restarted it and its setup built)."""
        try:
            error, _ = await asyncio.wait_for(_wrap(self.pool.workers[worker].ready.remote()), READY_TIMEOUT)
        except Exception:
            return False
        return error is None


__all__ = [
    "ITEM_TRIES",
    "MAX_RESTARTS",
    "RayPool",
    "RayRun",
    "RaySettings",
    "SpecSetup",
    "pickle_setup",
    "start_pool",
]

publish(globals())
