"""One seam for every model call: :class:`ModelCalls`.

Every call goldenkit makes to a model goes through one :class:`ModelCalls` -- the system
under test (:meth:`goldenkit.runner._run.RunExecution.call`), the judge and the rubric
judge (a grader receives :meth:`ModelCalls.response` as the ``call`` argument of its
``agrade``, never by being patched), the simulated user and each agent turn of a
conversation (:mod:`goldenkit.runner._conversation`), ``goldenkit compare --explain``,
pairwise judging, calibration and scenario generation. It owns, in one place:

- the limiter (:class:`~goldenkit.runner._limits.Limiter`: in-flight limit, pacing,
  Retry-After pauses, AIMD) and the run's budget it keeps (a call is admitted while the
  budget remains; what a returned call spent is charged);
- retries: only ``transient`` errors, up to ``max_retries`` times, full-jitter backoff
  never shorter than Retry-After (:func:`~goldenkit.runner._limits.backoff_delay`); a
  429 or a 503 asking to wait longer than ``max_retry_after`` is ``infrastructure`` at once
  (:func:`~goldenkit.runner._limits.throttle_error`); a replayed (fixtures) target is
  never retried;
- the whole-request deadline: ``timeout`` x the case's turns + 1 s, unless the provider
  bounds its own calls (``bounds_calls``);
- the error taxonomy: a failure is a :class:`~goldenkit.errors.ProviderError` with its
  kind; an exception a provider raised is classified by
  :func:`goldenkit.providers._failures.exception_error`, and the error given up on is
  recorded as :meth:`~goldenkit.errors.ProviderError.given_up` says.

Two runs sharing one judge grader object each hand it their own :class:`ModelCalls`,
so each run's judge calls count against that run's limiter and budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from goldenkit._constraints import default_of
from goldenkit._registry import publish
from goldenkit.errors import ProviderError
from goldenkit.providers import exception_error
from goldenkit.records import Case, Response
from goldenkit.runner._budget import Budget
from goldenkit.runner._limits import Limiter, backoff_delay, throttle_error
from goldenkit.schema import usage_of

T = TypeVar("T")
#: ``(response, error, attempts, latency of the last attempt in ms)``: one call's result, retries done.
CallResult = tuple[Response | None, ProviderError | None, int, float]


@dataclass(frozen=True)
class CallLimits:
    """How one invocation calls and when it stops: what every worker of a run shares of its RunOptions (each
    field a run option, its default the table's: :data:`goldenkit._constraints.RUN_TABLE`)."""

    max_in_flight: int = default_of("max_in_flight")
    rpm: float | None = default_of("rpm")
    timeout: float = default_of("timeout")
    max_retries: int = default_of("max_retries")
    max_error_rate: float = default_of("max_error_rate")
    backoff_base: float = default_of("backoff_base")
    backoff_cap: float = default_of("backoff_cap")
    abort_after_errors: int | None = default_of("abort_after_errors")
    max_retry_after: float = default_of("max_retry_after")
    max_calls: int | None = default_of("max_calls")  # the run's budget (goldenkit.runner._budget)
    max_tokens_total: int | None = default_of("max_tokens_total")
    max_cost: float | None = default_of("max_cost")
    pricing: Any = default_of("pricing")  # the [pricing] its money is counted in (goldenkit._pricing.Pricing)


class ModelCalls:
    """The one seam every model call goes through (see the module doc).

    ``limiter``: the one to share (a Ray worker's cluster limiter); default a new
    :class:`~goldenkit.runner._limits.Limiter` of ``opts`` with its budget. ``calls``
    counts the attempts made (every retry is one).
    """

    def __init__(self, opts: CallLimits, limiter: Limiter | None = None) -> None:
        self.opts = opts
        if limiter is None:
            budget = Budget.of(opts)
            limiter = Limiter(opts.max_in_flight, opts.rpm, max_pause=opts.max_retry_after, budget=budget)
        self.limiter = limiter
        self.calls = 0

    def deadline(self, target: Any, turns: int = 1) -> float | None:
        """The whole-request deadline of a call of ``turns`` turns in seconds; None when ``target``
        bounds its own calls."""
        if getattr(target, "bounds_calls", False):
            return None
        return self.opts.timeout * max(1, turns) + 1.0

    def call(self, provider: Any, case: Case, repeat: int = 0) -> Coroutine[Any, Any, CallResult]:
        """``provider.complete(case)`` with the retries, to await: ``(response, error, attempts, latency ms)``.
        (The retries' coroutine itself: the hot path awaits one frame less.)"""
        deadline = None if provider.bounds_calls else self.opts.timeout * max(1, len(case.turns)) + 1.0
        return self.retrying(provider, lambda: provider.complete(case, repeat=repeat), deadline)

    async def response(self, provider: Any, case: Case, *, spent: list[dict[str, Any]] | None = None) -> Response:
        """A grader's model call (the judge's): the response, or the error still failing after the retries,
        raised with its attempts. ``spent``: the call's usage is appended to it, answered or failed
        (:func:`goldenkit.schema.usage_of`; ``calls`` is its attempts: what the run's budget admitted)."""
        resp, err, attempts, _ = await self.call(provider, case, 0)
        if spent is not None:
            spent.append(usage_of(resp, attempts))
        if resp is None:
            if err is None:
                raise ProviderError(f"provider {provider.name} returned nothing", kind="infrastructure")
            raise err.with_message(f"{err}{attempts_note(err, attempts)}")
        return resp

    async def retrying(
        self,
        target: Any,
        make: Callable[[], Awaitable[T]],
        deadline: float | None,
        *,
        spent: Callable[[Any], Any] | None = None,
    ) -> tuple[T | None, ProviderError | None, int, float]:
        """``make()`` (a fresh call of ``target`` each attempt) under the limiter, the deadline and the
        retries: ``(value, error, attempts, latency of the last attempt in ms)``. What a returned call spent
        is charged to the budget: a Response's counts, else ``spent(value)`` (a usage of
        :data:`goldenkit.schema.USAGE_COUNTS`, None: no model was called), priced as ``target.model``'s."""
        attempts = 0
        while True:
            attempts += 1
            value, err, latency = await self._attempt(target, make, deadline, spent)
            if err is None:
                self.limiter.on_success()
                return value, None, attempts, latency
            err = throttle_error(err, self.opts.max_retry_after)
            if err.status == 429 and err.transient:
                self.limiter.on_throttled(err.retry_after)
            if not err.transient or attempts > self.opts.max_retries or getattr(target, "mode", "") == "fixtures":
                return None, err.given_up(attempts) if err.transient else err, attempts, latency
            opts = self.opts
            await asyncio.sleep(backoff_delay(attempts, err.retry_after, opts.backoff_base, opts.backoff_cap))

    async def _attempt(
        self, target: Any, make: Callable[[], Awaitable[T]], deadline: float | None, spent: Callable[[Any], Any] | None
    ) -> tuple[T | None, ProviderError | None, float]:
        limiter = self.limiter
        await limiter.acquire()
        t0 = time.perf_counter()
        try:
            if deadline is None:
                value = await make()
            else:
                async with asyncio.timeout(deadline):
                    value = await make()
            used = value if isinstance(value, Response) else None if spent is None else spent(value)
            if used is not None:  # its tokens and money count against the budget
                limiter.charge(getattr(target, "model", None), used)
            return value, None, (time.perf_counter() - t0) * 1000.0
        except ProviderError as exc:
            err = exc
        except TimeoutError:
            url = getattr(target, "safe_url", None)
            where = f" calling {url}" if url else ""
            msg = f"timed out after {deadline:g}s{where}"  # the whole request's deadline, not one read's
            err = ProviderError(msg, kind="transient", final_kind="infrastructure", url=url)
        except Exception as exc:  # a provider's bug: data about this row, not a crash
            err = exception_error(exc, f"{_who(target)} raised", default="infrastructure")
        finally:
            limiter.release()
            self.calls += 1
        return None, err, (time.perf_counter() - t0) * 1000.0


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive when a run starts (imported modules, the dataset, its cases) kept out of the
    garbage collector's scans while the run's calls go (:func:`gc.freeze`), given back after it.

    The collector's full scans walk every object the process holds, most of them pandas', pyarrow's and
    the dataset's, which live as long as the run: ``bench_runner.py`` (5,000 calls, 64 in flight) measured
    the collector at about 0.08 ms of a call's 0.47 ms of CPU, and frozen the call's CPU 0.05-0.1 ms lower.
    A cycle of those objects that becomes garbage during the run is collected after it. A heap already
    frozen by the program (``gc.get_freeze_count()``) is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _who(target: Any) -> str:
    name = getattr(target, "name", None) or type(target).__name__
    return f"provider {name}" if hasattr(target, "complete") else str(name)


def attempts_note(err: ProviderError, attempts: int) -> str:
    """`` (after N attempts)`` when the failing call was tried more than once (``err.attempts``, else ``attempts``)."""
    n = err.attempts if err.attempts is not None else attempts
    return f" (after {n} attempts)" if n > 1 else ""


__all__ = ["CallLimits", "CallResult", "ModelCalls", "attempts_note", "frozen_heap"]

publish(globals())
