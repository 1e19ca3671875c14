"""``callable``: any Python function ``fn(case) -> Response | str`` as the system under test.

``fn`` may also return ``{"text": str, "retrieved": [ids], "final_state": {...}}``:
the ids it retrieved (``Response.retrieved``, for the ``retrieval`` grader) and the
session's final state (``Response.raw["final_state"]``, for ADK ``final_session_state``).

For agents that run in-process. ``fn`` may be a coroutine function (awaited on
the run's event loop) or a plain function (run in a thread pool so a blocking
agent does not stall the other calls; ``threads=0`` calls it inline, which is
fastest for functions that never block). When ``fn`` takes a ``repeat``
keyword it receives the 0-based repeat index.

From the command line: ``--provider callable --callable package.module:function``
(the current directory is importable).

An exception from ``fn`` is an ERROR naming the exception, of the kind
:func:`goldenkit.providers._failures.exception_error` gives it: ``agent`` when the
function's own code raised (a ``KeyError`` in a tool); the network and OS family
(``ConnectionError``, ``TimeoutError``, ``OSError``, httpx's transport and status
errors) is never the agent's fault: ``transient`` (retried) or ``infrastructure``.
A :class:`goldenkit.errors.ProviderError` keeps its own kind. A return value of the
wrong type is ``agent``.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from goldenkit._artifacts import source_sha256
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import Provider, Response
from goldenkit.providers._failures import exception_error
from goldenkit.records import Case, ImagePart


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
        self._pool: ThreadPoolExecutor | None = None
        self._source = source_sha256(self.fn)  # the agent's identity follows its code

    def image_refusal(self, image: ImagePart) -> str | None:
        return None  # the callable gets them in the Case

    def settings(self) -> dict[str, Any]:
        return {"callable": self.spec, "model": self.model, **({"source_sha256": self._source} if self._source else {})}

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        if self.threads is None and max_in_flight:
            self.threads = max(1, int(max_in_flight))

    def _call(self, case: Case, repeat: int) -> Any:
        return self.fn(case, repeat=repeat) if self._takes_repeat else self.fn(case)

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        try:
            if self._is_async:
                out = await self._call(case, repeat)
            elif self.threads == 0:
                out = self._call(case, repeat)
                if inspect.isawaitable(out):
                    out = await out
            else:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        max_workers=self.threads or 8, thread_name_prefix="goldenkit-callable"
                    )
                loop = asyncio.get_running_loop()
                out = await loop.run_in_executor(self._pool, functools.partial(self._call, case, repeat))
                if inspect.isawaitable(out):
                    out = await out
        except ProviderError:
            raise
        except Exception as exc:  # the agent under test failed: data, not a crash
            raise exception_error(exc, f"callable {self.spec} raised") from exc
        if isinstance(out, Response):
            return out
        if isinstance(out, str):
            return Response.from_text(out, model=self.model)
        if isinstance(out, dict) and isinstance(out.get("text"), str):
            return self._from_dict(out)
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

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)


__all__ = ["CallableProvider", "load_callable"]
