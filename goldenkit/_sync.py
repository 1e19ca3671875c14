"""One way to run a coroutine to completion from sync code, inside or outside a running event loop.

Outside a loop it is ``asyncio.run``. Inside one (a Jupyter cell runs in the
kernel's loop) the coroutine runs on a new loop in a helper thread and the
caller waits for it; its exception is re-raised in the caller, never
swallowed, and a KeyboardInterrupt while waiting cancels the coroutine and
waits until it has finished cancelling (a run writes what finished first).
The run, regrade, the pairwise judge and scenario generation all call
:func:`run_sync`.

>>> import asyncio
>>> async def twice(x: int) -> int:
...     await asyncio.sleep(0)
...     return 2 * x
>>> run_sync(twice(21))
42
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["run_sync"]


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``coro``'s result (or its exception), on a new loop here or in a helper thread (see the module doc)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return _run_in_thread(coro)


def _run_in_thread(coro: Coroutine[Any, Any, T]) -> T:
    box: dict[str, Any] = {}
    started, done = threading.Event(), threading.Event()

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await coro

    def target() -> None:
        try:
            box["value"] = asyncio.run(main())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            started.set()
            done.set()

    # An Event, not Thread.join: a join cut short by KeyboardInterrupt may not wait again.
    threading.Thread(target=target, name="goldenkit-sync").start()
    try:
        done.wait()
    except KeyboardInterrupt:  # an interrupted cell: cancel the coroutine, wait until it has cleaned up
        started.wait()
        if "task" in box:
            try:
                box["loop"].call_soon_threadsafe(box["task"].cancel)
            except RuntimeError:  # the loop is closed: the coroutine had ended
                pass
        done.wait()
        raise
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
