"""Every module goldenkit imports comes from a dependency pyproject.toml declares.

A module that arrives only through another package (scipy through statsmodels,
nbformat through nbconvert) works until that package drops it or a resolver
picks a version without it; then ``goldenkit`` fails on a clean machine. So
every import in goldenkit/ is walked with ``ast``: at the top of a module, inside
functions (the lazy ones), under ``TYPE_CHECKING``, and the module paths named
as strings in the lazy registries (``BUILTINS`` of a ``Registry``; a package's
public names are goldenkit modules its ``__init__.pyi`` names, each resolved by
tests/test_architecture.py). Each third-party module is mapped to the
distribution that installed it (``importlib.metadata.packages_distributions()``;
for a namespace such as ``google``, the distribution holding its sub-package),
which must be one of ``[project.dependencies]`` or of a user-facing extra
(``adk``, ``ray``; ``dev`` is for the tests and does not count).
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "goldenkit"
REGISTRIES = ("BUILTINS",)


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(pyproject: dict) -> set[str]:
    """The distributions of [project.dependencies] and of every extra but ``dev``."""
    project = pyproject["project"]
    reqs = list(project.get("dependencies", []))
    for extra, more in project.get("optional-dependencies", {}).items():
        if extra != "dev":
            reqs += more
    out = set()
    for req in reqs:
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if match is None:
            raise ValueError(f"pyproject.toml: cannot read the requirement {req!r}")
        out.add(canonical(match.group(1)))
    return out


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports(source: str, package: str) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every import of a module of ``package``, at any depth (relative ones resolved)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            name = "." * node.level + (node.module or "")
            yield node.lineno, importlib.util.resolve_name(name, package) if node.level else name


def registry_modules(source: str, module: str) -> Iterator[tuple[int, str]]:
    """The modules a lazy registry of ``module`` names as strings, read from the imported module itself."""
    for node in ast.parse(source).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id in REGISTRIES:
                table = getattr(importlib.import_module(module), target.id)
                for value in table.values():
                    path = value.split(":")[0]
                    yield node.lineno, importlib.util.resolve_name(path, module) if path.startswith(".") else path


@cache
def _files_of(dist: str) -> tuple[str, ...]:
    return tuple(str(f) for f in metadata.distribution(dist).files or ())


def distributions_of(module: str, table: dict[str, list[str]]) -> set[str]:
    """The installed distributions that provide ``module`` (for a namespace shared by several: its sub-package's)."""
    parts = module.split(".")
    dists = set(table.get(parts[0], []))
    if len(dists) > 1 and len(parts) > 1:
        sub = f"{parts[0]}/{parts[1]}"
        owners = {d for d in dists if any(f.startswith(f"{sub}/") or f == f"{sub}.py" for f in _files_of(d))}
        dists = owners or dists
    return {canonical(d) for d in dists}


def undeclared(found: Iterable[tuple[str, int, str]], allowed: set[str], table: dict[str, list[str]]) -> list[str]:
    """One line per third-party import whose distribution is not declared."""
    problems = []
    for where, line, module in found:
        top = module.split(".")[0]
        if top in sys.stdlib_module_names or top in {"goldenkit", "__future__"}:
            continue
        dists = distributions_of(module, table)
        if not dists:  # not installed here: the import name must then be a declared distribution's name
            dists = {canonical(top)}
        if not dists & allowed:
            problems.append(f"{where}:{line}: imports {module} (from {', '.join(sorted(dists))}), not declared")
    return problems


def goldenkit_imports() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        where = str(path.relative_to(ROOT))
        found += [(where, line, m) for line, m in imports(source, package)]
        found += [(where, line, m) for line, m in registry_modules(source, name)]
    return found


def test_every_import_of_goldenkit_is_a_declared_dependency() -> None:
    allowed = declared(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    found = goldenkit_imports()
    modules = {m for _, _, m in found}
    # the walk sees the lazy imports and the registries' strings, not only the module tops
    assert {"scipy.special", "nbformat", "IPython", "google.genai", "goldenkit.providers._openai"} <= modules
    assert undeclared(found, allowed, metadata.packages_distributions()) == []


def test_every_module_a_registry_names_exists() -> None:
    named = [(where, line, m) for where, line, m in goldenkit_imports() if m.startswith("goldenkit.")]
    missing = [f"{where}:{line}: {m}" for where, line, m in named if importlib.util.find_spec(m) is None]
    assert len(named) > 50 and missing == []


def test_the_rule_finds_an_undeclared_import_lazy_or_not() -> None:
    source = """
import json
import pandas as pd
from . import sibling


def later():
    from scipy import stats
    import google.genai.types
    import notinstalledpkg.sub
"""
    found = [("m.py", line, m) for line, m in imports(source, "goldenkit.x")]
    assert [m for _, _, m in found] == [
        "json",
        "pandas",
        "goldenkit.x",
        "scipy",
        "google.genai.types",
        "notinstalledpkg.sub",
    ]
    table = {"pandas": ["pandas"], "scipy": ["scipy"], "google": ["google-genai"]}
    problems = undeclared(found, {"pandas", "google-adk"}, table)
    assert [p.split(": imports ")[1].split(" ")[0] for p in problems] == [
        "scipy",
        "google.genai.types",
        "notinstalledpkg.sub",
    ]
    assert undeclared(found, {"pandas", "scipy", "google-genai", "notinstalledpkg"}, table) == []


def test_a_namespace_is_mapped_to_the_distribution_of_its_sub_package() -> None:
    pytest.importorskip("google.adk")
    table = metadata.packages_distributions()
    assert len(table["google"]) > 2  # google-adk, google-genai, protobuf, ...
    assert distributions_of("google.genai.types", table) == {"google-genai"}
    assert distributions_of("google.adk.runners", table) == {"google-adk"}


def test_declared_reads_dependencies_and_extras_but_not_dev() -> None:
    pyproject = {
        "project": {
            "dependencies": ["PyYAML>=6", "jupyter_client>=8 ; python_version>='3.11'"],
            "optional-dependencies": {"adk": ["google-adk[a2a]>=2.7"], "dev": ["pytest>=8"]},
        }
    }
    assert declared(pyproject) == {"pyyaml", "jupyter-client", "google-adk"}
