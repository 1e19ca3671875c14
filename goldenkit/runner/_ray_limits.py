"""Limits for a whole Ray cluster: one actor holds the run's :class:`~goldenkit.runner._limits.Limiter`.

Every worker of a Ray run (:mod:`goldenkit.runner._ray_executor`) asks the one
:class:`LimiterActor` before each call and tells it when the call ended, so
``max_in_flight``, ``rpm``, the Retry-After pause and the adaptive halving on
429s hold for the cluster as they hold for one process: ten workers never send
ten times the quota. The actor runs the very same ``Limiter`` (no second
implementation of the rules); :class:`ClusterLimiter` is what a worker's run
holds in place of its own ``Limiter``, with the same methods.

A slot is held by a worker *incarnation* (the worker's number and a random id
drawn when its process starts). When Ray restarts a killed worker, the new
incarnation's first request releases the slots the dead one held, and a grant
that reaches a dead incarnation is given back at once, so a killed worker
never leaks capacity. The driver calls :meth:`LimiterActor.forget` for a
worker that is gone for good.

A run's budget (:mod:`goldenkit.runner._budget`) is counted by the actor's limiter: with one, every
call asks the actor (no slot is handed on without it), a refused call raises
:class:`~goldenkit.runner._budget.BudgetSpent` in the worker, and a worker's returned call
adds its tokens and money there (:meth:`ClusterLimiter.charge`), so the whole cluster overshoots
a budget by at most its calls in flight.

Ray is not imported here: the classes are plain, and the executor wraps
:class:`LimiterActor` with ``ray.remote`` when a Ray run starts.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from typing import Any

from goldenkit.errors import InfrastructureError
from goldenkit.runner._budget import Budget, BudgetSpent, Spend
from goldenkit.runner._limits import Limiter


class LimiterActor:
    """The cluster's one limiter (an async Ray actor: every method runs on the actor's event loop)."""

    def __init__(self, max_in_flight: int, rpm: float | None, max_pause: float, budget: Budget | None = None) -> None:
        self.limiter = Limiter(max_in_flight, rpm, max_pause=max_pause, budget=budget)
        self.held: Counter[tuple[int, str]] = Counter()
        self.current: dict[int, str] = {}  # worker number -> its live incarnation
        self.gone: set[tuple[int, str]] = set()
        self.peak = 0
        self.grants = 0  # slots handed out: requests that reached the actor
        self.strict = bool(rpm) or budget is not None  # every call asks: pacing, a budget, or a 429 seen anywhere

    def _arrive(self, who: tuple[int, str]) -> None:
        worker, inc = who
        old = self.current.get(worker)
        if old != inc:
            if old is not None:
                self._drop((worker, old))  # Ray restarted this worker: its old process is dead
            self.current[worker] = inc

    def _drop(self, who: tuple[int, str]) -> None:
        self.gone.add(who)
        for _ in range(self.held.pop(who, 0)):
            self.limiter.release()

    async def acquire(self, worker: int, inc: str) -> tuple[bool, bool, str | None]:
        """Wait for a slot for incarnation ``inc`` of worker ``worker``: ``(granted, strict, budget)``;
        not granted if it is gone, or (``budget``: which one) when the run's budget is spent;
        ``strict``: the worker must ask for every call."""
        who = (worker, inc)
        if who in self.gone:
            return False, self.strict, None
        self._arrive(who)
        try:
            await self.limiter.acquire()
        except BudgetSpent as spent:
            return False, self.strict, str(spent)
        if who in self.gone:
            self.limiter.release()
            return False, self.strict, None
        self.held[who] += 1
        self.grants += 1
        self.peak = max(self.peak, self.limiter.in_flight)
        return True, self.strict, None

    async def charge(self, tokens: int | None, cost: float | None) -> None:
        """A worker's call returned: its tokens and money count against the run's budget."""
        if self.limiter.budget is not None:
            self.limiter.budget.add(tokens, cost)

    async def start_spend(self, spent: Spend) -> None:
        """What the run's earlier invocations spent (a resumed run's budget is its total)."""
        if self.limiter.budget is not None:
            self.limiter.budget.spent = spent

    async def budget(self) -> tuple[Spend, str | None] | None:
        """What the run spent and which budget refused a call (None: the run has no budget)."""
        counter = self.limiter.budget
        return None if counter is None else (counter.spent, counter.refused)

    async def release(self, worker: int, inc: str, successes: int) -> None:
        """One call of ``inc`` ended; ``successes``: calls that succeeded since the last report."""
        who = (worker, inc)
        if who in self.gone or self.held[who] <= 0:
            return
        self.held[who] -= 1
        self.limiter.release()
        for _ in range(successes):
            self.limiter.on_success()

    async def throttled(self, retry_after: float | None) -> None:
        """A 429 somewhere in the cluster: pause and halve for everyone; from now on every call asks."""
        self.strict = True
        self.limiter.on_throttled(retry_after)

    async def forget(self, worker: int) -> None:
        """Worker ``worker`` is gone for good: give back every slot it held."""
        inc = self.current.get(worker)
        if inc is not None:
            self._drop((worker, inc))

    async def stats(self) -> dict[str, int]:
        return {**self.limiter.stats(), "peak_in_flight": self.peak, "limiter_grants": self.grants}


class ClusterLimiter:
    """What a worker's run uses as its limiter: slots granted by the :class:`LimiterActor`.

    A call waits for a slot from the actor. When it ends, its slot goes to a call of
    this worker that is waiting, if there is one (no message), at most ``reuse`` times
    in a row; otherwise it goes back to the actor, whose queue serves every worker in
    turn. A slot is a slot either way: the cluster never has more than ``max_in_flight``
    calls out. With ``rpm`` pacing, and from the first 429 anywhere in the cluster on
    (the actor says so with its next grant; this worker's own 429 at once), every call
    asks the actor, so pacing, Retry-After pauses and the halving hold exactly. A round
    trip to the actor costs the actor and the worker about 2 ms of CPU each
    (bench_ray.py: asking for every call made 2 workers slower than one local process;
    handing a slot on 16 times, 1.5x; 64 times, 1.6x), hence the reuse.
    Successes ride along with the next slot given back (the AIMD increase).
    """

    def __init__(self, actor: Any, worker: int, inc: str, reuse: int = 64, budget: Budget | None = None) -> None:
        self.actor, self.worker, self.inc, self.reuse = actor, worker, inc, reuse
        self.budget = budget  # its prices: a returned call's money is counted here, added at the actor
        self.strict = budget is not None
        self._successes = 0
        self._reused = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._asking = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._charges: list[Any] = []  # charges sent to the actor, not yet known to be added

    async def acquire(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._ask()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # granted as it was cancelled: pass the slot on
            elif fut in self._waiters:
                self._waiters.remove(fut)
            raise

    def _ask(self) -> None:
        """Ask the actor for slots: one per waiting call when strict, else one at a time (a worker
        grows its share while the cluster has free slots, and queues at the actor for the next)."""
        wanted = len(self._waiters) if self.strict else min(1, len(self._waiters))
        while self._asking < wanted:
            self._asking += 1
            task = asyncio.get_running_loop().create_task(self._grant())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _grant(self) -> None:
        failure: BaseException | None = None
        try:
            granted, strict, spent = await self.actor.acquire.remote(self.worker, self.inc)
            self.strict = self.strict or strict
            if spent is not None:
                failure = BudgetSpent(spent)
            elif not granted:
                failure = InfrastructureError(f"Ray worker {self.worker}: the run's limiter dropped this worker")
        except Exception as exc:
            why = f"the run's limiter did not answer ({type(exc).__name__})"
            failure = InfrastructureError(f"Ray worker {self.worker}: {why}")
        finally:
            self._asking -= 1
        if failure is not None:
            while self._waiters:
                fut = self._waiters.popleft()
                if not fut.done():
                    fut.set_exception(failure)
            return
        self._give()
        self._ask()

    def _give(self) -> None:
        """Hand a slot this worker holds to its first waiting call, or back to the actor."""
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self._return()

    def _return(self) -> None:
        self.actor.release.remote(self.worker, self.inc, self._successes)
        self._successes = 0
        self._reused = 0

    def release(self) -> None:
        if self.strict or self._reused >= self.reuse or not self._waiters:
            self._return()
            self._ask()  # a waiting call asks the actor for the slot given back (or another)
            return
        self._reused += 1
        self._give()

    def on_success(self) -> None:
        self._successes += 1

    def charge(self, model: str | None, resp: Any) -> None:
        if self.budget is not None:
            self._charges.append(self.actor.charge.remote(*self.budget.call_spend(model, resp)))

    async def settled(self) -> None:
        """Wait until the actor has added every charge this worker sent: a batch returns only then, so
        what the driver reads at the end of the run (the run's spend) holds every call that returned."""
        charges, self._charges = self._charges, []
        for ref in charges:
            await ref

    def on_throttled(self, retry_after: float | None) -> None:
        self.strict = True
        self.actor.throttled.remote(retry_after)

    def stats(self) -> dict[str, int]:
        return {}


__all__ = ["ClusterLimiter", "LimiterActor"]
