"""Fixtures shared by the whole suite: the dataset and run factories of tests/factories.py,
writing under the test's own ``tmp_path``.

``new_dataset(rows, name=..., version=..., toml=..., meta=...)`` writes ``tmp_path/ds``
(another ``folder=`` for a second one); ``new_run({"r000": "PASS", ...}, run_id=...)``
makes a graded run folder under ``tmp_path/results`` with the library's own runner.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from factories import graded_run, write_dataset


@pytest.fixture
def new_dataset(tmp_path: Path) -> Callable[..., Path]:
    """``write_dataset`` under ``tmp_path``."""

    def make(rows: Any, **kw: Any) -> Path:
        return write_dataset(tmp_path, rows, **kw)

    return make


@pytest.fixture
def new_run(tmp_path: Path) -> Callable[..., Path]:
    """``graded_run`` under ``tmp_path``: runs of the same row ids share the dataset ``tmp_path/ds``."""

    def make(verdicts: Any, *, run_id: str = "run", **kw: Any) -> Path:
        return graded_run(tmp_path, verdicts, run_id=run_id, **kw)

    return make
