"""Limits for a whole Ray cluster: one actor holds the run's :class:`~goldenkit.runner.limits.Limiter`.

Every worker of a Ray run (:mod:`goldenkit.runner.ray_executor`) asks the one
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

Ray is not imported here: the classes are plain, and the executor wraps
:class:`LimiterActor` with ``ray.remote`` when a Ray run starts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from goldenkit.errors import InfrastructureError
from goldenkit.runner.limits import Limiter


class LimiterActor:
    """The cluster's one limiter (an async Ray actor: every method runs on the actor's event loop)."""

    def __init__(self, max_in_flight: int, rpm: float | None, max_pause: float) -> None:
        self.limiter = Limiter(max_in_flight, rpm, max_pause=max_pause)
        self.held: Counter[tuple[int, str]] = Counter()
        self.current: dict[int, str] = {}  # worker number -> its live incarnation
        self.gone: set[tuple[int, str]] = set()
        self.peak = 0

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

    async def acquire(self, worker: int, inc: str) -> bool:
        """Wait for a slot for incarnation ``inc`` of worker ``worker``; False if it is gone."""
        who = (worker, inc)
        if who in self.gone:
            return False
        self._arrive(who)
        await self.limiter.acquire()
        if who in self.gone:
            self.limiter.release()
            return False
        self.held[who] += 1
        self.peak = max(self.peak, self.limiter.in_flight)
        return True

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
        """A 429 somewhere in the cluster: pause and halve for everyone."""
        self.limiter.on_throttled(retry_after)

    async def forget(self, worker: int) -> None:
        """Worker ``worker`` is gone for good: give back every slot it held."""
        inc = self.current.get(worker)
        if inc is not None:
            self._drop((worker, inc))

    async def stats(self) -> dict[str, int]:
        return {**self.limiter.stats(), "peak_in_flight": self.peak}


class ClusterLimiter:
    """What a worker's run uses as its limiter: the :class:`LimiterActor`'s methods, asked remotely.

    ``acquire`` waits for the actor's answer; ``release``, ``on_success`` and
    ``on_throttled`` are sent without waiting (a success rides along with the next
    release, so a call costs two messages to the actor).
    """

    def __init__(self, actor: Any, worker: int, inc: str) -> None:
        self.actor, self.worker, self.inc = actor, worker, inc
        self._successes = 0

    async def acquire(self) -> None:
        if not await self.actor.acquire.remote(self.worker, self.inc):
            raise InfrastructureError(f"Ray worker {self.worker}: the run's limiter dropped this worker")

    def release(self) -> None:
        self.actor.release.remote(self.worker, self.inc, self._successes)
        self._successes = 0

    def on_success(self) -> None:
        self._successes += 1

    def on_throttled(self, retry_after: float | None) -> None:
        self.actor.throttled.remote(retry_after)

    def stats(self) -> dict[str, int]:
        return {}


__all__ = ["ClusterLimiter", "LimiterActor"]
