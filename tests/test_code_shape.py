"""The library's size and strictness limits: short functions, short modules, few positional
parameters, no ``assert``, and one formatting of the whole tree with nothing exempted from it.

Every function in goldenkit/ is at most 80 lines (from its ``def`` to its last
line, docstring included) and takes at most six positional parameters (the rest
keyword-only, or a dataclass such as RunOptions), every module is at most 500
lines, and library code raises the errors of goldenkit/errors.py instead of
asserting (an ``assert`` vanishes under ``python -O``). scripts/ and tests/ are
outside goldenkit/ for these; ``ruff format --check`` holds for every file of the
tree, with no marker that exempts a line or a block from the formatter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500
MAX_POSITIONAL = 6
#: Overrides whose signature is a library's own (mypy holds an override to its base's parameters).
LIBRARY_SIGNATURES = {
    "goldenkit/providers/_client.py:_init_transport",  # httpx.AsyncClient._init_transport
    "goldenkit/providers/_client.py:_init_proxy_transport",  # httpx.AsyncClient._init_proxy_transport
}
ROOT = PACKAGE.parent
#: The tree ruff formats: every Python file, notebook and Markdown file.
TREE = ["goldenkit", "tests", "scripts", "benchmarks", "docs", "notebooks", "README.md"]

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
            positional = _positional(node)
            if positional > MAX_POSITIONAL and f"{name}:{node.name}" not in LIBRARY_SIGNATURES:
                problems.append(
                    f"{name}:{node.lineno}: {node.name} takes {positional} positional parameters (at most "
                    f"{MAX_POSITIONAL}: make the rest keyword-only)"
                )
        elif isinstance(node, ast.Assert):
            problems.append(f"{name}:{node.lineno}: assert in library code (raise an error of goldenkit.errors)")
    return problems


def _positional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    return len(names) - (1 if names[:1] in (["self"], ["cls"]) else 0)


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
    many = "class C:\n    def f(self, a, b, c, d, e, f, g):\n        pass\n"
    assert shape_problems(many, "m.py") == [
        "m.py:2: f takes 7 positional parameters (at most 6: make the rest keyword-only)"
    ]
    assert shape_problems("def f(a, b, c, d, e, f, *, g):\n    pass\n", "m.py") == []
    assert shape_problems("def f(a, /, b, c, d, e, f, g):\n    pass\n", "m.py") != []


def test_only_the_named_places_are_exempt() -> None:
    assert EXEMPT == ()
    assert not _exempt("results/run.py")
    assert not _exempt("reporting.py") and not _exempt("stats.py") and not _exempt("runner/run.py")
    checked = {rel for rel, _ in _library_modules()}
    assert "stats/__init__.py" in checked and "providers/_adk.py" in checked
    assert "runner/_run.py" in checked and "graders/_judge.py" in checked and "report/_compare.py" in checked
    assert "results/_jsonl.py" in checked and "results/_parquet.py" in checked


def test_nothing_is_exempted_from_formatting() -> None:
    marks = [
        f"{path.relative_to(ROOT).as_posix()}:{i}"
        for top in ("goldenkit", "tests", "scripts", "benchmarks")
        for path in sorted((ROOT / top).rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ("fmt: " + "skip") in line or ("fmt: " + "off") in line
    ]
    assert marks == []


def test_ruff_format_is_clean_on_the_whole_tree() -> None:
    paths = [p for p in TREE if (ROOT / p).exists()]
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", *paths], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
