"""The limits of the house, served rather than met: small modules and functions, few positional
parameters, and one formatting of the whole tree with nothing exempted from it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "goldenkit"
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_POSITIONAL = 500, 80, 6
#: Overrides whose signature is a library's own (mypy holds an override to its base's parameters).
LIBRARY_SIGNATURES = {
    "goldenkit/providers/client.py:_init_transport",  # httpx.AsyncClient._init_transport
    "goldenkit/providers/client.py:_init_proxy_transport",  # httpx.AsyncClient._init_proxy_transport
}
#: What the tree's files are: every Python file, notebook and Markdown file ruff formats.
TREE = ["goldenkit", "tests", "scripts", "benchmarks", "docs", "notebooks", "README.md"]


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _positional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    return len(names) - (1 if names[:1] in (["self"], ["cls"]) else 0)


def _package_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_and_function_of_the_package_is_small() -> None:
    over = []
    for path in _package_files():
        where = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            over.append(f"{where}: {lines} lines")
        for node in _functions(path):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                over.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    assert over == []


def test_no_function_takes_more_than_six_positional_parameters() -> None:
    many = [
        f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}: {_positional(node)}"
        for path in _package_files()
        for node in _functions(path)
        if _positional(node) > MAX_POSITIONAL
        and f"{path.relative_to(ROOT).as_posix()}:{node.name}" not in LIBRARY_SIGNATURES
    ]
    assert many == []


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "class A:\n    def f(self, a, b, c, d, e, f, g):\n        pass\n\n\ndef g(a, /, b, *, c):\n    pass\n"
    )
    assert sorted(_positional(n) for n in _functions(src)) == [2, 7]


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
