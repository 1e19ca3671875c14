"""How fast a run may call: the in-flight limit, pacing, Retry-After pauses and backoff.

:class:`Limiter` keeps at most ``limit`` calls in flight, spaces starts to ``rpm``
per minute, pauses new starts for a server's Retry-After (never longer than the
run's cap) and adapts ``limit`` on 429s (AIMD: halve at most once per second, add
one back after a streak of successes). :func:`backoff_delay` is the wait before a
retry: full-jitter exponential backoff, never less than Retry-After.
:func:`throttle_error` turns a retried error (a 429, a 503) whose Retry-After exceeds the cap into an
``infrastructure`` error (not retried), so one throttled call never holds a run longer than the cap.
A run's budget (:mod:`goldenkit.runner._budget`) is kept here too: a call is admitted only while it
remains (:meth:`Limiter.acquire` raises :class:`~goldenkit.runner._budget.BudgetSpent` otherwise) and
:meth:`Limiter.charge` adds what a returned call spent. :func:`pacing_problem` refuses an ``rpm`` that
would space the calls further apart than a run ever waits.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from typing import Any

from goldenkit._constraints import RUN_OPTIONS, default_of
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.runner._budget import Budget, BudgetCounter, BudgetSpent

#: The default cap on one Retry-After, in seconds: ``--max-retry-after``'s (the run options' table).
_DEFAULT_RETRY_AFTER: float = default_of("max_retry_after")


class Limiter:
    """At most ``limit`` calls in flight, optional pacing to ``rpm`` starts per minute,
    a global pause (Retry-After), and AIMD adaptation of ``limit`` on 429s.

    >>> import asyncio
    >>> lim = Limiter(2)
    >>> asyncio.run(lim.acquire()); lim.in_flight
    1
    >>> lim.release(); lim.in_flight
    0
    """

    def __init__(
        self,
        max_in_flight: int,
        rpm: float | None = None,
        *,
        decrease_every: float = 1.0,
        max_pause: float = _DEFAULT_RETRY_AFTER,
        budget: Budget | None = None,
    ) -> None:
        for name, value in (("max_in_flight", max_in_flight), ("rpm", rpm), ("max_retry_after", max_pause)):
            try:  # the one table of what each run option takes
                RUN_OPTIONS[name].check(value)
            except ValueError as exc:
                raise ConfigError(f"Limiter {name} {exc}") from None
        self.max = max_in_flight
        self.limit = max_in_flight
        self.in_flight = 0
        self.interval = 60.0 / rpm if rpm else 0.0
        self.max_pause = max_pause
        self._next_start = 0.0
        self.pause_until = 0.0
        self._waiters: list[asyncio.Future[None]] = []
        self._ok_streak = 0
        self._last_decrease = -math.inf
        self._decrease_every = decrease_every
        self.decreases = 0
        self.increases = 0
        self.min_limit = max_in_flight
        self.budget = BudgetCounter(budget) if budget is not None else None

    async def acquire(self) -> None:
        """Wait for a slot (and for the pacing and any pause); :meth:`release` gives it back."""
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut  # release() hands its slot over (in_flight already counted)
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self.release()
                elif fut in self._waiters:
                    self._waiters.remove(fut)
                raise
        if self.budget is not None:
            try:
                self.budget.admit()
            except BudgetSpent:
                self.release()
                raise
        if self.interval or self.pause_until:
            now = time.monotonic()
            start = max(now, self._next_start, self.pause_until)
            if self.interval:
                self._next_start = start + self.interval
            if start > now:
                try:
                    await asyncio.sleep(start - now)
                except asyncio.CancelledError:
                    self.release()
                    raise

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.pop(0)
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def charge(self, model: str | None, resp: Any) -> None:
        """A call of ``model`` returned ``resp``: its tokens and money count against the budget."""
        if self.budget is not None:
            self.budget.add(*self.budget.budget.call_spend(model, resp))

    def on_success(self) -> None:
        if self.limit >= self.max:
            return
        self._ok_streak += 1
        if self._ok_streak >= self.limit and time.monotonic() - self._last_decrease >= self._decrease_every:
            self.limit += 1
            self.increases += 1
            self._ok_streak = 0
            self._wake()

    def on_throttled(self, retry_after: float | None) -> None:
        """A 429: pause new starts for Retry-After (at most ``max_pause``), and halve the
        limit (at most once per period)."""
        now = time.monotonic()
        if retry_after:
            self.pause_until = max(self.pause_until, now + min(retry_after, self.max_pause))
        self._ok_streak = 0
        if now - self._last_decrease >= self._decrease_every and self.limit > 1:
            self.limit = max(1, self.limit // 2)
            self.min_limit = min(self.min_limit, self.limit)
            self.decreases += 1
            self._last_decrease = now

    def stats(self) -> dict[str, int]:
        return {
            "max_in_flight": self.max,
            "final_in_flight": self.limit,
            "min_in_flight": self.min_limit,
            "decreases": self.decreases,
            "increases": self.increases,
        }


def pacing_problem(rpm: float | None, max_retry_after: float) -> str | None:
    """Why ``rpm`` cannot pace a run, or None: the wait between two starts (60 / rpm) is longer than the
    longest wait a run accepts before a call (the larger of ``--max-retry-after``'s default and ``max_retry_after``),
    so a tiny rpm is refused before anything is written instead of waiting for days.

    >>> pacing_problem(0.0001, 120.0).split(",")[0]
    'rpm 0.0001 waits 600000s between two calls'
    >>> pacing_problem(0.5, 120.0) is None and pacing_problem(None, 0.0) is None
    True
    """
    if not rpm:
        return None
    wait, cap = 60.0 / rpm, max(_DEFAULT_RETRY_AFTER, max_retry_after)
    if wait <= cap:
        return None
    return (
        f"rpm {rpm:g} waits {wait:.0f}s between two calls, longer than the longest wait a run accepts "
        f"({cap:g}s, the larger of {_DEFAULT_RETRY_AFTER:g}s and --max-retry-after): give --rpm {60.0 / cap:g} or more"
    )


def backoff_delay(attempt: int, retry_after: float | None, base: float, cap: float) -> float:
    """Full-jitter exponential backoff after failed ``attempt`` (1-based), never less than Retry-After.

    >>> 0 <= backoff_delay(1, None, 0.5, 30.0) <= 0.5
    True
    >>> backoff_delay(3, 10.0, 0.5, 30.0) >= 10.0
    True
    """
    delay = random.uniform(0, min(cap, base * (2 ** (attempt - 1))))
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, min(1.0, 0.1 * retry_after + 0.05)))
    return delay


def throttle_error(err: ProviderError, max_retry_after: float) -> ProviderError:
    """``err`` itself, or an ``infrastructure`` error (not retried) when it is a retried error (a 429, a 503)
    asking to wait longer than ``max_retry_after``.

    >>> e = ProviderError("HTTP 429 from http://h/v1", transient=True, status=429, retry_after=3600)
    >>> str(throttle_error(e, 120.0))
    'HTTP 429 from http://h/v1: Retry-After 3600s exceeds the cap of 120s (--max-retry-after)'
    >>> throttle_error(e, 7200.0) is e
    True
    """
    if not err.transient or err.retry_after is None or err.retry_after <= max_retry_after:
        return err
    head = str(err).split(": ", 1)[0] if str(err).startswith("HTTP ") else str(err)
    return ProviderError(
        f"{head}: Retry-After {err.retry_after:g}s exceeds the cap of {max_retry_after:g}s (--max-retry-after)",
        kind="infrastructure",
        status=err.status,
        url=err.url,
        retry_after=err.retry_after,
    )


__all__ = ["Limiter", "backoff_delay", "pacing_problem", "throttle_error"]

publish(globals())
