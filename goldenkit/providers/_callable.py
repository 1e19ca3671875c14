"""``callable``: any Python function ``fn(case) -> Response | str`` as the system under test.

``fn`` may also return ``{"text": str, "retrieved": [ids], "final_state": {...}}``:
the ids it retrieved (``Response.retrieved``, for the ``retrieval`` grader) and the
session's final state (``Response.raw["final_state"]``, for ADK ``final_session_state``).

For agents that run in-process. ``fn`` may be a coroutine function (run on an event
loop of its own, on a daemon thread: :class:`AgentLoop`, so a coroutine that blocks or
ignores its cancellation is abandoned at ``--timeout`` too) or a plain function (run in a thread pool so a blocking
agent does not stall the other calls; ``threads=0`` calls it inline, which is
fastest for functions that never block). When ``fn`` takes a ``repeat``
keyword it receives the 0-based repeat index.

From the command line: ``--provider callable --callable package.module:function``
(the current directory is importable).

``fn`` gets its own deep copy of the case: what it changes there (clearing ``case.expect``) is
never what its answer is graded against.

An exception from ``fn`` is an ERROR naming the exception, of the kind
:func:`goldenkit.providers._failures.exception_error` gives it: ``agent`` when the
function's own code raised (a ``KeyError`` in a tool); the network and OS family
(``ConnectionError``, ``TimeoutError``, ``OSError``, httpx's transport and status
errors) is never the agent's fault: ``transient`` (retried) or ``infrastructure``.
A :class:`goldenkit.errors.ProviderError` keeps its own kind. A return value of the
wrong type is ``agent``.

An agent cannot stop goldenkit: ``sys.exit()``, ``SystemExit`` and ``KeyboardInterrupt``
raised by ``fn``'s own code (awaited, inline or in a thread) are an ``agent`` ERROR on that
row, and the run goes on. A plain function runs on daemon threads (:class:`DaemonThreads`),
so a call that never returns is abandoned at the run's ``--timeout`` (the row is an ERROR,
the thread is left behind and replaced) and never keeps the process from exiting once the
run has written its results. ``threads=0`` calls inline, where a call that blocks forever
blocks the run: use it only for functions that never block.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import importlib
import inspect
import json
import math
import os
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from goldenkit._artifacts import source_sha256
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import Provider, Response
from goldenkit.providers._failures import exception_error
from goldenkit.records import Case, ImagePart, ToolCall, TurnOutput


def load_callable(spec: str) -> Callable[..., Any]:
    """Import ``module:attr`` (attr may be dotted) and return it; errors name the spec."""
    if ":" not in spec:
        raise ConfigError(f"--callable {spec!r}: expected module:function")
    mod_name, _, attr = spec.partition(":")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ConfigError(f"--callable {spec!r}: cannot import {mod_name}: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"--callable {spec!r}: {mod_name} has no attribute {attr}") from None
    if not callable(obj):
        raise ConfigError(f"--callable {spec!r}: {attr} is not callable")
    fn: Callable[..., Any] = obj
    return fn


@dataclass(eq=False)
class _Call:
    """One blocking call handed to a :class:`DaemonThreads`: its function, where its outcome goes, its state."""

    fn: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[tuple[Any, BaseException | None]]
    state: str = "queued"  # queued -> running -> done; or cancelled (never ran), abandoned (its caller left)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class DaemonThreads:
    """Blocking calls on at most ``size`` daemon threads, each call's outcome (value or exception, any
    ``BaseException``) handed back to the event loop that asked for it.

    A call whose caller stops waiting (a timeout cancels the future) is abandoned: its thread is
    no longer counted, a new one can start in its place, and it exits when (if ever) the call
    returns. Daemon threads never keep the interpreter alive, so a call that never returns cannot
    keep a finished run's process from exiting (a ``ThreadPoolExecutor`` joins its threads at exit).
    """

    def __init__(self, size: int, name: str) -> None:
        self.size, self.name = max(1, size), name
        self._queue: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._serving = 0  # threads that take calls (abandoned ones are not counted)
        self._idle = 0

    def submit(self, fn: Callable[[], Any]) -> asyncio.Future[tuple[Any, BaseException | None]]:
        """``fn`` queued; the future's result is ``(value, None)`` or ``(None, what fn raised)``."""
        loop = asyncio.get_running_loop()
        call = _Call(fn, loop, loop.create_future())
        call.future.add_done_callback(lambda fut: self._left(call) if fut.cancelled() else None)
        with self._lock:
            start = self._idle == 0 and self._serving < self.size
            self._serving += start
        if start:
            threading.Thread(target=self._serve, name=f"{self.name}-{id(call):x}", daemon=True).start()
        self._queue.put(call)
        return call.future

    def _left(self, call: _Call) -> None:
        """The caller stopped waiting: a queued call never runs, a running one is abandoned."""
        with call.lock:
            if call.state == "queued":
                call.state = "cancelled"
            elif call.state == "running":
                call.state = "abandoned"
                with self._lock:
                    self._serving -= 1

    def _serve(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            call = self._queue.get()
            with self._lock:
                self._idle -= 1
                if call is None:
                    self._serving -= 1
                    return
            with call.lock:
                if call.state != "queued":
                    continue
                call.state = "running"
            try:
                outcome: tuple[Any, BaseException | None] = (call.fn(), None)
            except BaseException as exc:  # noqa: BLE001 - sys.exit() in an agent is its error, not ours
                outcome = (None, exc)
            with call.lock:
                abandoned, call.state = call.state == "abandoned", "done"
            if abandoned:
                return  # this thread was replaced while it was stuck
            try:
                call.loop.call_soon_threadsafe(_deliver, call.future, outcome)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

    def shutdown(self) -> None:
        """Let the idle threads end (a running call's thread ends when its call returns)."""
        with self._lock:
            count = self._serving
        for _ in range(count):
            self._queue.put(None)


def _deliver(
    future: asyncio.Future[tuple[Any, BaseException | None]], outcome: tuple[Any, BaseException | None]
) -> None:
    if not future.done():
        future.set_result(outcome)


def _being_cancelled() -> bool:
    """Whether the running task is being cancelled (a timeout), not handed an agent's own CancelledError."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _guarded(awaitable: Any) -> tuple[Any, BaseException | None]:
    """``(value, None)`` or ``(None, what it raised)``: nothing the agent raises (``sys.exit()`` too)
    reaches the agent's event loop, which would stop it; only a cancellation by its caller goes on."""
    try:
        return await awaitable, None
    except BaseException as exc:  # noqa: BLE001 - the agent's own error, handed back as data
        if isinstance(exc, asyncio.CancelledError) and _being_cancelled():
            raise
        return None, exc


def _quiet_abandoned(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Say nothing of a call abandoned at its timeout that never ended; report the rest as asyncio does."""
    if not str(context.get("message", "")).startswith("Task was destroyed but it is pending"):
        loop.default_exception_handler(context)


class AgentLoop:
    """An event loop on a daemon thread, where a coroutine agent's calls run.

    On the run's own loop, a coroutine that blocks (``time.sleep`` in an ``async def``) or that
    swallows its cancellation would stop the run for good; here the run waits for each call as for a
    thread's, so a call that does not end by ``--timeout`` is abandoned (its cancellation is asked
    for) and the run goes on, and the daemon thread never keeps a finished run's process alive.
    """

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(_quiet_abandoned)
        threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                self.loop.run_forever()
                return  # stopped (shutdown)
            except BaseException:  # noqa: BLE001 - an agent's task let sys.exit() out of the loop: serve on
                continue

    async def run(self, awaitable: Any) -> tuple[Any, BaseException | None]:
        """``awaitable`` run on the agent's loop: ``(value, None)`` or ``(None, what it raised)``."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_guarded(awaitable), self.loop))

    def shutdown(self) -> None:
        """Stop the loop once it is free (a loop an agent blocks forever stays with its daemon thread)."""
        self.loop.call_soon_threadsafe(self.loop.stop)


def _plain(value: Any) -> Any:
    """``value`` as its JSON record reads back: plain str, dict, list and numbers, whatever the agent's types."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


_COUNTS = (
    ("tokens_in", int),
    ("tokens_out", int),
    ("tokens_cached", int),
    ("tokens_reasoning", int),
    ("cost", (int, float)),
    ("ttft_ms", (int, float)),
)


def _response_problem(resp: Response) -> str | None:
    """What is of the wrong type in a Response an agent built (None: nothing)."""
    for name, types in _COUNTS:
        v = getattr(resp, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, types) or not math.isfinite(v) or v < 0):
            return f"{name} must be a number >= 0 or None, got {v!r}"[:120]
    if resp.model is not None and not isinstance(resp.model, str):
        return f"model must be a str or None, got {type(resp.model).__name__}"
    if resp.usage is not None and not (
        isinstance(resp.usage, dict) and all(isinstance(u, dict) for u in resp.usage.values())
    ):
        return "usage must be None or a dict of {role: {calls, tokens_in, ...}}"
    for role, counts in (resp.usage or {}).items():
        for key, v in counts.items():  # what the judge or the simulated user spent: counted as the agent's are
            types = (int, float) if key == "cost" else int
            if v is not None and (isinstance(v, bool) or not isinstance(v, types) or not math.isfinite(v) or v < 0):
                return f"usage[{role!r}][{key!r}] must be a number >= 0 or None, got {v!r}"[:120]
    if resp.retrieved is not None and not (
        isinstance(resp.retrieved, list) and all(isinstance(r, str) for r in resp.retrieved)
    ):
        return "retrieved must be a list of str or None"
    if not isinstance(resp.turns, list) or not all(isinstance(t, TurnOutput) for t in resp.turns):
        return "turns must be a list of TurnOutput"
    for k, t in enumerate(resp.turns):
        if not isinstance(t.text, str) or not (t.user is None or isinstance(t.user, str)):
            return f"turns[{k}].text (and user) must be a str, got {type(t.text).__name__}"
        calls = t.tool_calls
        if not isinstance(calls, list) or not all(
            isinstance(c, ToolCall) and isinstance(c.name, str) and isinstance(c.args, dict) for c in calls
        ):
            return f"turns[{k}].tool_calls must be a list of ToolCall(name: str, args: dict)"
        if not isinstance(t.tool_responses, list) or not isinstance(t.intermediate, list):
            return f"turns[{k}].tool_responses and intermediate must be lists"
    return None


def as_stored(resp: Response, where: str = "the agent") -> Response:
    """``resp`` with what is graded as its outcome stores it (texts, tool calls and their arguments, tool
    responses, retrieved ids and the final state through their JSON form): an agent's ``str`` subclass
    whose ``in`` is always true, or a ``dict`` subclass that answers any key, is graded as the plain
    text that is stored. A field of the wrong type is the agent's error (``where`` names it)."""
    problem = _response_problem(resp)
    if problem is not None:
        raise ProviderError(f"{where} returned a Response whose {problem}", kind="agent")
    turns = [
        TurnOutput(
            text=_plain(t.text),
            tool_calls=[
                ToolCall(_plain(c.name), _plain(c.args), None if c.id is None else _plain(c.id)) for c in t.tool_calls
            ],
            tool_responses=_plain(t.tool_responses),
            intermediate=[tuple(_plain(list(x))) for x in t.intermediate],
            user=None if t.user is None else _plain(t.user),
        )
        for t in resp.turns
    ]
    raw = resp.raw
    if isinstance(raw, dict) and "final_state" in raw:  # the state grader's input
        raw = {**raw, "final_state": _plain(raw["final_state"])}
    retrieved = None if resp.retrieved is None else _plain(resp.retrieved)
    return dataclasses.replace(resp, turns=turns, retrieved=retrieved, raw=raw)


class CallableProvider(Provider):
    """Wrap ``fn(case) -> Response | str`` (sync or async). Options: ``fn`` or ``callable``
    (``"module:function"``), ``model`` (recorded as the model id), ``threads``."""

    name = "callable"
    mode = "live"

    def __init__(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        callable: str | Callable[..., Any] | None = None,  # noqa: A002 - the CLI option's name
        model: str | None = None,
        threads: int | None = None,
        **_ignored: Any,
    ) -> None:
        target = fn if fn is not None else callable
        if target is None:
            raise ConfigError("provider callable: --callable module:function is required")
        self.spec = (
            target
            if isinstance(target, str)
            else f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', repr(target))}"
        )
        self.fn = load_callable(target) if isinstance(target, str) else target
        self.model = model
        self.threads = threads
        self._is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(
            type(self.fn).__call__  # an object whose __call__ is async
        )
        try:
            params = inspect.signature(self.fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._takes_repeat = "repeat" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
        self._pool: DaemonThreads | None = None
        self._loop: AgentLoop | None = None
        self._source = source_sha256(self.fn)  # the agent's identity follows its code

    def image_refusal(self, image: ImagePart) -> str | None:
        return None  # the callable gets them in the Case

    def settings(self) -> dict[str, Any]:
        return {"callable": self.spec, "model": self.model, **({"source_sha256": self._source} if self._source else {})}

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        if self.threads is None and max_in_flight:
            self.threads = max(1, int(max_in_flight))

    def _call(self, case: Case, repeat: int) -> Any:
        case = copy.deepcopy(case)  # the agent's own copy: what it changes in it is never what is graded
        return self.fn(case, repeat=repeat) if self._takes_repeat else self.fn(case)

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        try:
            raised: BaseException | None = None
            if self._is_async:
                out, raised = await self._agent_loop().run(self._call(case, repeat))
            elif self.threads == 0:
                out = self._call(case, repeat)
            else:
                if self._pool is None:
                    self._pool = DaemonThreads(self.threads or 8, "goldenkit-callable")
                out, raised = await self._pool.submit(functools.partial(self._call, case, repeat))
            if raised is None and inspect.isawaitable(out):
                out, raised = await self._agent_loop().run(out)
            if raised is not None:
                raise raised
        except ProviderError:
            raise
        except Exception as exc:  # the agent under test failed: data, not a crash
            raise exception_error(exc, f"callable {self.spec} raised") from exc
        except BaseException as exc:  # its own sys.exit(), ^C, cancelled task, a group of them: its error
            if isinstance(exc, asyncio.CancelledError) and _being_cancelled():  # a timeout goes on
                raise
            raise exception_error(exc, f"callable {self.spec} raised") from None
        if isinstance(out, Response):
            return as_stored(out, f"callable {self.spec}")
        if isinstance(out, str):
            return as_stored(Response.from_text(out, model=self.model), f"callable {self.spec}")
        if isinstance(out, dict) and isinstance(out.get("text"), str):
            return as_stored(self._from_dict(out), f"callable {self.spec}")
        raise ProviderError(
            f"callable {self.spec} returned {type(out).__name__}, expected Response, str or "
            '{"text": ..., "retrieved"?: [...]}',
            kind="agent",
        )

    def _from_dict(self, out: dict[str, Any]) -> Response:
        """``{"text", "retrieved"?: [ids], "final_state"?: {...}}`` as a Response."""
        retrieved = out.get("retrieved")
        if retrieved is not None and (
            not isinstance(retrieved, list)
            or not all(isinstance(r, str | int) and not isinstance(r, bool) for r in retrieved)
        ):
            raise ProviderError(f"callable {self.spec}: 'retrieved' must be a list of ids", kind="agent")
        state = out.get("final_state")
        if state is not None and not isinstance(state, dict):
            raise ProviderError(f"callable {self.spec}: 'final_state' must be an object", kind="agent")
        return Response.from_text(
            out["text"],
            model=self.model,
            retrieved=None if retrieved is None else [str(r) for r in retrieved],
            raw=None if state is None else {"final_state": state},
        )

    def _agent_loop(self) -> AgentLoop:
        if self._loop is None:
            self._loop = AgentLoop("goldenkit-callable-loop")
        return self._loop

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.shutdown()


__all__ = ["CallableProvider", "DaemonThreads", "load_callable"]

publish(globals())
