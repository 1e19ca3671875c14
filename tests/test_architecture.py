"""The package's shape: the public API list and the one-way data flow.

Data flows dataset -> runner -> results -> stats/compare/gate -> notebooks; a lower
layer never imports a higher one, not even inside a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent

# module (dotted, relative to goldenkit) -> modules it must never import.
HIGHER_THAN_DATA = {
    "providers",
    "graders",
    "runner",
    "results",
    "harnesses",
    "stats",
    "compare",
    "gate",
    "baselines",
    "report",
    "audit",
    "notebooks",
    "demo",
    "cli",
    "commands",
}
# the top layers: the demo (uses the whole library), then the CLI and its commands
TOP = {"demo", "cli", "commands"}
FORBIDDEN = {
    "errors": HIGHER_THAN_DATA | {"dataset", "formats", "sampling", "cases", "config"},
    "schema": HIGHER_THAN_DATA | {"dataset", "formats", "sampling"},
    "cases": HIGHER_THAN_DATA | {"dataset", "formats", "sampling"},
    "dataset": HIGHER_THAN_DATA,
    "sampling": HIGHER_THAN_DATA,
    "formats": HIGHER_THAN_DATA | {"sampling"},
    "providers": HIGHER_THAN_DATA - {"providers"},
    "graders": HIGHER_THAN_DATA - {"providers", "graders"},
    "runner": {"stats", "compare", "gate", "baselines", "report", "audit", "notebooks"} | TOP,
    "results": {"runner", "stats", "compare", "gate", "baselines", "report", "audit", "notebooks"} | TOP,
    "harnesses": {"providers", "graders", "runner", "stats", "compare", "gate", "baselines", "report", "audit"}
    | {"notebooks"}
    | TOP,
    "stats": {"runner", "results", "compare", "gate", "baselines", "report", "audit", "notebooks"} | TOP,
    "compare": {"runner", "gate", "report", "audit", "notebooks"} | TOP,
    "gate": {"runner", "report", "audit", "notebooks"} | TOP,
    "baselines": TOP,
    "audit": TOP,
    "report": {"runner", "notebooks"} | TOP,
    "notebooks": {"runner"} | TOP,
    "demo": {"cli", "commands"},
    "display": HIGHER_THAN_DATA | {"dataset", "formats", "sampling", "cases", "config"},
}
# The leaderboard: passk beside stats, ranking and pairwise beside compare, leaderboard_report beside report.
_BOARD = {"passk", "alignment", "ranking", "pairwise", "leaderboard_report", "demo_benchmark"}
FORBIDDEN["passk"] = FORBIDDEN["stats"] | _BOARD
FORBIDDEN["pairwise"] = FORBIDDEN["compare"] | {"ranking", "leaderboard_report"}
FORBIDDEN["ranking"] = FORBIDDEN["compare"] | {"leaderboard_report"}
FORBIDDEN["alignment"] = FORBIDDEN["compare"] | {"ranking", "pairwise", "leaderboard_report"}
FORBIDDEN["leaderboard_report"] = set(FORBIDDEN["report"])
FORBIDDEN["demo_benchmark"] = set(FORBIDDEN["demo"])
for _low in ("errors", "schema", "cases", "dataset", "sampling", "formats", "providers", "graders", "runner"):
    FORBIDDEN[_low] = FORBIDDEN[_low] | _BOARD
for _low in ("results", "stats", "compare", "gate", "baselines"):
    FORBIDDEN[_low] = FORBIDDEN[_low] | _BOARD


def _layer_of(module: str) -> str:
    return module.split(".")[0]


def _imports(path: Path) -> set[str]:
    """Every goldenkit submodule a file imports (top level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("goldenkit."):
                    found.add(alias.name.removeprefix("goldenkit."))
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "goldenkit":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("goldenkit."):
                found.add(node.module.removeprefix("goldenkit."))
    return found


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        if parts:
            out.append((".".join(parts), path))
    return out


def test_lower_layers_never_import_higher_ones() -> None:
    violations = []
    for module, path in _modules():
        forbidden = FORBIDDEN.get(_layer_of(module), set())
        for imported in _imports(path):
            if _layer_of(imported) in forbidden:
                violations.append(f"goldenkit.{module} imports goldenkit.{imported}")
    assert violations == []


def test_only_the_cli_layer_imports_commands() -> None:
    for module, path in _modules():
        if _layer_of(module) in {"cli", "commands"}:
            continue
        assert not any(_layer_of(i) in {"cli", "commands"} for i in _imports(path)), module


def test_all_is_sorted_and_complete() -> None:
    names = goldenkit.__all__
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    for name in names:
        assert hasattr(goldenkit, name), name
    public = {
        n
        for n, v in vars(goldenkit).items()
        if not n.startswith("_") and not isinstance(v, type(goldenkit)) and n not in {"annotations"}
    }
    assert public <= set(names) | {"__version__"}


def test_the_checker_sees_function_level_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from goldenkit.runner import run_eval\n    import goldenkit.stats\n")
    assert _imports(src) == {"runner", "stats"}


# The runner package, its modules in layers: each imports only runner modules of an earlier layer.
RUNNER_LAYERS = [
    {"runner.limits", "runner.runkey", "runner.summary", "runner.progress", "runner.shard", "runner.index"},
    {"runner.folder"},
    {"runner.run"},
    {"runner.evaluate", "runner.merge"},
    {"runner"},
]


def test_the_runner_package_is_layered_without_cycles() -> None:
    placed = set().union(*RUNNER_LAYERS)
    found = {m for m, _ in _modules() if _layer_of(m) == "runner"}
    assert found == placed, "place every module of goldenkit/runner/ in RUNNER_LAYERS"
    level = {m: i for i, layer in enumerate(RUNNER_LAYERS) for m in layer}
    for module, path in _modules():
        if module not in level:
            continue
        for imported in _imports(path):
            if _layer_of(imported) == "runner":
                assert level[imported] < level[module], f"goldenkit.{module} imports goldenkit.{imported}"


def test_runner_functions_and_modules_are_small() -> None:
    for module, path in _modules():
        if _layer_of(module) != "runner":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 500, f"goldenkit.{module}: {len(lines)} lines"
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                assert length <= 80, f"goldenkit.{module}.{node.name}: {length} lines"


def test_the_audit_never_imports_the_report() -> None:
    """The report reads audit marks; the audit shares only goldenkit.display with it (no cycle)."""
    for module, path in _modules():
        if _layer_of(module) == "audit":
            assert not {_layer_of(i) for i in _imports(path)} & {"report", "notebooks"}, module
