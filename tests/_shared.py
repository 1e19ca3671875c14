"""The one way tests reach the folder beside the checkout that holds other projects' real files.

``../shared`` (``interop/``, ``interop-more/``, ``real-server/``) lies beside the
checkout in this project's CI, never in a user's clone. Every test that reads it
goes through :func:`shared_path`, which skips the test, naming the missing
folder, when it is absent; CI runs with ``GOLDENKIT_REQUIRE_SHARED=1`` so a
missing folder fails there instead of skipping (tests/test_shared_rule.py keeps
every other spelling out of tests/).

Three ways to use it:

* inside a test (or a fixture): ``path = shared_path("interop", "x.json")``;
* on a test: ``@needs_shared("interop")`` calls :func:`shared_path` before the test runs;
* for a whole module: ``_needs_interop = shared_fixture("interop")`` at module level
  (an autouse fixture of the module's scope), with module constants built by
  :func:`shared_dir`, which never skips, so collection never fails.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pytest

#: The folder beside the checkout (it may not exist).
SHARED = Path(__file__).resolve().parents[2] / "shared"

#: Set to 1 (CI does) and a missing folder fails the test instead of skipping it.
REQUIRE_ENV = "GOLDENKIT_REQUIRE_SHARED"

P = ParamSpec("P")
R = TypeVar("R")


def shared_available(*parts: str) -> bool:
    """Whether ``../shared/<parts>`` exists."""
    return SHARED.joinpath(*parts).exists()


def shared_path(*parts: str) -> Path:
    """``../shared/<parts>``; skips the calling test (or module, at import) when it is absent.

    With ``GOLDENKIT_REQUIRE_SHARED=1`` (CI) a missing folder is a failure, not a skip.
    """
    path = SHARED.joinpath(*parts)
    if not path.exists():
        why = f"{path} is absent (other projects' files lie beside the checkout only in CI)"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{why}; {REQUIRE_ENV}=1 requires it", pytrace=False)
        pytest.skip(why, allow_module_level=True)
    return path


def shared_dir(*parts: str) -> Path:
    """``../shared/<parts>`` without skipping: for module-level constants whose tests call :func:`shared_path`."""
    return SHARED.joinpath(*parts)


def needs_shared(*parts: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A test decorator: the test calls ``shared_path(*parts)`` first (skip, or fail in CI, when absent).

    ``functools.wraps`` keeps the test's signature, so its fixtures and parameters are passed as before.
    """

    def decorate(test: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(test)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            shared_path(*parts)
            return test(*args, **kwargs)

        return wrapper

    return decorate


def shared_fixture(*parts: str) -> Any:
    """An autouse fixture of module scope calling ``shared_path(*parts)``: assign it to a module-level name."""

    @pytest.fixture(autouse=True, scope="module", name="needs_shared:" + "/".join(parts))
    def _needs_shared() -> Iterator[Path]:
        yield shared_path(*parts)

    return _needs_shared
