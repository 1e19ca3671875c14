"""The folder beside the checkout is reached through tests/_shared.py alone, and a missing one skips (or fails in CI).

A user's clone has nothing beside it: a test that built the path itself and read
it would fail there with FileNotFoundError, while CI (which has the folder) stays
green. So no test module spells the folder's path; each asks tests/_shared.py,
whose :func:`shared_path` skips naming the missing folder, or fails under
``GOLDENKIT_REQUIRE_SHARED=1`` as CI sets it.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import _shared
import pytest
from _shared import needs_shared, shared_dir, shared_path

TESTS = Path(__file__).resolve().parent
HELPER = TESTS / "_shared.py"
#: The folder's name, assembled so that this module does not spell it (the rule reads string constants).
FOLDER = "sh" + "ared"
#: "shared" as a whole path component: "shared", "../shared/interop", "x/shared".
SPELLING = re.compile(r"(?:^|[/\\])shared(?:[/\\]|$)")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions (prose may name the folder)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def spellings(source: str, name: str = "<source>") -> list[str]:
    """``name:line: text`` for every string in code (not a docstring) that spells the shared folder's path."""
    tree = ast.parse(source, name)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if SPELLING.search(node.value):
                found.append(f"{name}:{node.lineno}: {node.value!r}")
    return found


def test_no_test_file_but_the_helper_spells_the_shared_folder() -> None:
    files = sorted(p for p in TESTS.rglob("*.py") if p != HELPER)
    assert len(files) > 50  # the walk found the suite
    found = [hit for p in files for hit in spellings(p.read_text(encoding="utf-8"), str(p.relative_to(TESTS)))]
    assert found == [], "reach ../shared through tests/_shared.py (shared_path, needs_shared, shared_fixture):\n" + (
        "\n".join(found)
    )


def test_the_rule_sees_each_spelling_and_leaves_prose_alone() -> None:
    source = '''"""Reads ../FOLDER/interop (prose: allowed)."""
from pathlib import Path

A = Path(__file__).resolve().parents[2] / "FOLDER" / "interop"
B = "../FOLDER/interop/results"
C = f"{A}/FOLDER/x"


def test_x() -> None:
    """The files in ../FOLDER/interop."""
    assert "FOLDER-prefix" != "FOLDER_state"
'''.replace("FOLDER", FOLDER)
    assert sorted(hit.split(":")[1] for hit in spellings(source)) == ["4", "5", "6"]


def test_the_helper_is_what_the_rule_protects() -> None:
    assert spellings(HELPER.read_text(encoding="utf-8")) != []  # the one place that spells it
    assert shared_dir("interop") == _shared.SHARED / "interop"
    assert _shared.SHARED == TESTS.parent.parent / FOLDER


def test_a_missing_folder_skips_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_shared.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"/no-such-folder/x\.json is absent"):
        shared_path("no-such-folder", "x.json")
    assert not _shared.shared_available("no-such-folder")


def test_a_missing_folder_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_shared.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"/no-such-folder is absent.*GOLDENKIT_REQUIRE_SHARED=1"):
        shared_path("no-such-folder")


def test_an_existing_path_is_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "interop").mkdir()
    monkeypatch.setattr(_shared, "SHARED", tmp_path)
    assert shared_path("interop") == tmp_path / "interop"
    assert _shared.shared_available("interop")


def test_needs_shared_runs_the_test_with_its_arguments_or_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_shared.REQUIRE_ENV, raising=False)
    monkeypatch.setattr(_shared, "SHARED", tmp_path)
    calls: list[tuple[int, str]] = []

    @needs_shared("interop")
    def case(n: int, word: str = "w") -> int:
        calls.append((n, word))
        return n + 1

    assert [p.name for p in inspect.signature(case).parameters.values()] == ["n", "word"]
    with pytest.raises(pytest.skip.Exception, match="interop is absent"):
        case(1)
    assert calls == []
    (tmp_path / "interop").mkdir()
    assert case(1, word="x") == 2 and calls == [(1, "x")]


MODULE_WIDE = """
import pytest
from _shared import shared_fixture

_needs = shared_fixture("no-such-folder")


@pytest.mark.parametrize("n", [1, 2])
def test_module_wide(n: int) -> None:
    assert n
"""
ONE_TEST = """
import pytest
from _shared import needs_shared


@pytest.fixture
def word() -> str:
    return "w"


@needs_shared("no-such-folder-either")
@pytest.mark.parametrize("n", [3])
def test_one(n: int, word: str) -> None:
    assert word == "w"


@pytest.mark.parametrize("n", [4])
def test_without_the_folder(n: int, word: str) -> None:
    assert (n, word) == (4, "w")
"""


@pytest.mark.parametrize(("require", "expected"), [("", "1 passed, 3 skipped"), ("1", "1 failed, 1 passed, 2 errors")])
def test_in_a_real_session_missing_folders_skip_or_fail(tmp_path: Path, require: str, expected: str) -> None:
    """The module fixture and the decorator, run by pytest itself: skipped naming the folder, or errors in CI."""
    (tmp_path / "test_module_wide.py").write_text(MODULE_WIDE, encoding="utf-8")
    (tmp_path / "test_one_test.py").write_text(ONE_TEST, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(TESTS), _shared.REQUIRE_ENV: require}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "--rootdir", str(tmp_path), "-c"]
    argv += [os.devnull, str(tmp_path)]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    out = done.stdout + done.stderr
    assert expected in out, out
    assert "no-such-folder is absent" in out and "no-such-folder-either is absent" in out
    if require:
        assert done.returncode == 1 and "GOLDENKIT_REQUIRE_SHARED=1 requires it" in out
    else:
        assert done.returncode == 0
