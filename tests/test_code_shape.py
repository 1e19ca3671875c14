"""The library's size and strictness limits: short functions, short modules, no ``assert``.

Every function in goldenkit/ is at most 80 lines (from its ``def`` to its last
line, docstring included), every module at most 500 lines, and library code
raises the errors of goldenkit/errors.py instead of asserting (an ``assert``
vanishes under ``python -O``). scripts/ and tests/ are outside goldenkit/ and
not checked.
"""

from __future__ import annotations

import ast
from pathlib import Path

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500

# Paths (relative to goldenkit/) not checked yet, each with its reason.
EXEMPT: tuple[str, ...] = ()


def _exempt(rel: str) -> bool:
    return any(rel == e or (e.endswith("/") and rel.startswith(e)) for e in EXEMPT)


def shape_problems(source: str, name: str) -> list[str]:
    """What in one module's source breaks the limits, one line per problem."""
    problems = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        problems.append(f"{name}: {lines} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name}:{node.lineno}: {node.name} is {length} lines (at most {MAX_FUNCTION_LINES})")
        elif isinstance(node, ast.Assert):
            problems.append(f"{name}:{node.lineno}: assert in library code (raise an error of goldenkit.errors)")
    return problems


def _library_modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not _exempt(rel):
            out.append((rel, path))
    return out


def test_functions_and_modules_are_small_and_library_code_never_asserts() -> None:
    problems = []
    for rel, path in _library_modules():
        problems += shape_problems(path.read_text(encoding="utf-8"), f"goldenkit/{rel}")
    assert problems == []


def test_the_checker_finds_each_kind_of_problem() -> None:
    long_function = "def f():\n" + "    x = 1\n" * 80
    assert shape_problems(long_function, "m.py") == ["m.py:1: f is 81 lines (at most 80)"]
    assert shape_problems("def f():\n" + "    x = 1\n" * 79, "m.py") == []
    long_async_method = "class C:\n    async def g(self):\n" + "        x = 1\n" * 80
    assert shape_problems(long_async_method, "m.py") == ["m.py:2: g is 81 lines (at most 80)"]
    assert shape_problems("x = 1\n" * 501, "m.py") == ["m.py: 501 lines (at most 500)"]
    assert shape_problems("x = 1\n" * 500, "m.py") == []
    assert shape_problems("def f(x):\n    assert x\n", "m.py") == [
        "m.py:2: assert in library code (raise an error of goldenkit.errors)"
    ]


def test_only_the_named_places_are_exempt() -> None:
    assert EXEMPT == ()
    assert not _exempt("results/run.py")
    assert not _exempt("reporting.py") and not _exempt("stats.py") and not _exempt("runner/run.py")
    checked = {rel for rel, _ in _library_modules()}
    assert "stats/__init__.py" in checked and "providers/adk.py" in checked
    assert "runner/run.py" in checked and "graders/judge.py" in checked and "report/compare.py" in checked
    assert "results/jsonl.py" in checked and "results/parquet.py" in checked
