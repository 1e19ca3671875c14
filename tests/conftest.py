"""Fixtures shared by the whole suite: the dataset and run factories of tests/factories.py,
writing under the test's own ``tmp_path``.

``new_dataset(rows, name=..., version=..., toml=..., meta=...)`` writes ``tmp_path/ds``
(another ``folder=`` for a second one); ``new_run({"r000": "PASS", ...}, run_id=...)``
makes a graded run folder under ``tmp_path/results`` with the library's own runner.

The checks of the code's shape (:data:`LINT_FILES`: formatting, size limits, layers,
declared dependencies, the wheel, the speed of ``--help``) carry the ``lint`` marker:
``make lint`` runs them first (``pytest -m lint``) and ``make test`` the rest
(``-m "not lint"``); a plain ``pytest`` runs both. A new check of the code's shape is
one more name in :data:`LINT_FILES`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from factories import graded_run, write_dataset

#: The test files that check the code's shape rather than its behaviour (marked ``lint``).
LINT_FILES = frozenset(
    {
        "test_code_shape.py",
        "test_architecture.py",
        "test_dependencies.py",
        "test_wheel.py",
        "test_cli_help.py",
        "test_imports_shape.py",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lint: checks of the code's shape, run first by make lint (tests/conftest.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in LINT_FILES:
            item.add_marker(pytest.mark.lint)


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
