"""The one way tests reach the folder beside the checkout that holds other projects' real files.

``../shared`` (``interop/``, ``interop-more/``, ``real-server/``) lies beside the
checkout in this project's CI, never in a user's clone. Every test that reads it
goes through :func:`shared_path`, which skips the test, naming the missing
folder, when it is absent; CI runs with ``GOLDENKIT_REQUIRE_SHARED=1`` so a
missing folder fails there instead of skipping (tests/test_shared_rule.py keeps
every other spelling out of tests/).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The folder beside the checkout (it may not exist).
SHARED = Path(__file__).resolve().parents[2] / "shared"


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
        if os.environ.get("GOLDENKIT_REQUIRE_SHARED") == "1":
            pytest.fail(why, pytrace=False)
        pytest.skip(why, allow_module_level=True)
    return path


def shared_dir(*parts: str) -> Path:
    """``../shared/<parts>`` without skipping: for module-level constants whose tests call :func:`shared_path`."""
    return SHARED.joinpath(*parts)
