"""goldenkit._sync.run_sync: one way to run a coroutine from sync code, inside a running loop too."""

from __future__ import annotations

import asyncio

import pytest

from goldenkit._sync import run_sync


async def _fail() -> None:
    await asyncio.sleep(0)
    raise KeyError("from the coroutine")


def test_outside_a_loop_it_returns_and_raises() -> None:
    async def value() -> int:
        return 7

    assert run_sync(value()) == 7
    with pytest.raises(KeyError, match="from the coroutine"):
        run_sync(_fail())


def test_inside_a_running_loop_the_worker_exception_is_re_raised() -> None:
    # a Jupyter cell calls sync code from inside the kernel's running loop
    async def cell() -> tuple[int, str]:
        async def value() -> int:
            return 3

        got = run_sync(value())
        try:
            run_sync(_fail())
        except KeyError as exc:
            return got, str(exc)
        return got, "not raised"

    assert asyncio.run(cell()) == (3, "'from the coroutine'")
