"""The package's shape: the public API list and the one-way data flow.

Data flows dataset -> runner -> results -> stats/compare/gate -> notebooks; a lower
layer never imports a higher one, not even inside a function.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent

# Every module of goldenkit (dotted, relative to goldenkit; "__init__" is the package's own), in layers
# from the bottom up. A module imports only modules of its own layer or a lower one (top level or inside a
# function), and the imports never form a cycle. A new module must be placed here: add its name to the set
# of its layer (a new package: its submodules' line, then the package itself one line above).
#: Deprecated import locations (a module that only re-exports its new place, with a DeprecationWarning).
DEPRECATED = {
    "comparability": "compare.protocol",
    "flips": "compare.flips",
    "policy": "gate.policy",
    "evidence": "gate.evidence",
    "dataset.generate": "scenarios.generate",
    "dataset.agent_config": "scenarios.agent_config",
    "alignment": "leaderboards.alignment",
    "ranking": "leaderboards.ranking",
    "passk": "leaderboards.passk",
    "pairwise": "leaderboards.pairwise",
    "leaderboard_report": "leaderboards.report",
    "demo_benchmark": "demo.benchmark",
    "runner.index": "runner.outcome_index",
}
LAYERS: list[set[str]] = [
    # foundations: errors, the records every layer shares, constants, the HTML base
    {"errors"},
    {"_text", "_sync", "_jsonable", "display", "schema", "records", "config", "scrub"},
    {"reprs"},
    {"artifacts", "registry"},
    {"cases", "protocols", "findings"},
    # dataset -> sampling
    {"formats._scenario"},
    {
        "formats._common",
        "formats._contract_fields",
        "formats._rubrics",
        "formats._contract_build",
        "formats.adk",
        "formats.contract",
    },
    {"formats.vertex", "formats.eval_config", "formats._import_manifest"},
    {"formats.inspect", "formats.openai_evals", "formats.normalize", "formats.importer"},
    {"formats"},
    {"dataset.lines", "dataset.problems", "dataset.rows", "dataset.manifest", "dataset.reader"},
    {"dataset.versions", "dataset.red"},
    {"dataset"},
    {"sampling"},
    # statistics over tables (they never read a run folder)
    {"stats.intervals", "stats.clustered"},
    {"stats.collapse", "stats.mcnemar", "stats.representative"},
    {"stats", "leaderboards.passk"},
    {"metrics._red_rows", "metrics._text"},
    {"metrics._rates"},
    {"gate.policy", "metrics"},
    # results: what a run wrote; other harnesses' results imported as runs
    {"results.manifest", "results.jsonl", "results.parquet", "results.latest"},
    {"results.run"},
    {"results.light"},
    {"results"},
    {"harnesses.common"},
    {"harnesses.runfolder"},
    {"harnesses.deepeval_testrun", "harnesses.inspect_log", "harnesses.lm_eval_samples"},
    {"harnesses.openai_evals_log", "harnesses.promptfoo_output", "harnesses.adk_history"},
    {"harnesses"},
    # analysis of results: never imports providers, graders or the runner
    {"compare.protocol", "compare.ledger"},
    {"compare.flips", "baselines"},
    {"compare.clusters"},
    {"compare.groups"},
    {"compare.runs"},
    {"compare"},
    {"gate.evidence", "gate._power"},
    {"gate.evaluate"},
    {"gate", "leaderboards.alignment", "leaderboards.pairwise"},
    {"leaderboards.ranking"},
    # every run at once: the index, SQL over all outcomes, trends
    {"history.run_index"},
    {"history.index"},  # the old path of history.run_index (re-exports it; deprecated once pages.site moves)
    {"history.sql", "history.trend"},
    {"history"},
    # the system under test, its graders, the runner
    {"providers.base", "providers.http", "providers.client", "providers.streaming", "providers.failures"},
    {"providers.adk_events", "providers.images"},
    {"providers.conversation", "providers.callable", "providers.fixtures", "providers.chat", "providers.adk"},
    {"providers.ollama", "providers.openai"},
    {"providers.simulator"},
    {"providers"},
    # scenarios a model generates from an agent's config, written as a new dataset version: a layer above
    # the providers (the dataset layer knows nothing of running)
    {"scenarios.agent_config"},
    {"scenarios.generate"},
    {"scenarios"},
    {"graders._text", "graders._criteria", "graders._args", "graders._partial", "graders.base"},
    {"graders.contract", "graders.match", "graders.trajectory", "graders.judge", "graders.retrieval"},
    {"graders.state", "graders.rubrics"},
    {"graders.build", "graders.calibration"},
    {"graders.gradable"},
    {"graders"},
    {"runner.versions", "runner.validity"},
    {"runner.limits", "runner.runkey", "runner.summary", "runner.progress", "runner.shard", "runner.outcome_index"},
    {"runner.folder"},
    {"runner.ray_limits"},
    {"runner.run"},
    {"runner.manifest", "runner._options"},
    {"runner.ray_executor"},
    {"runner.conversation"},
    {"runner.evaluate", "runner.merge"},
    {"runner.regrade"},
    {"runner"},
    # a judge's optional words on a comparison's clusters (goldenkit compare --explain)
    {"explain"},
    # what people look at: the audit, the report (one module per notebook), the notebooks
    {"audit.marks", "audit.failures"},
    {"audit.apply", "audit.browser"},
    {"audit.session"},
    {"audit"},
    {"report.html"},
    {"report.run", "report.compare", "report.audit", "report.coverage"},
    {"report.explore"},  # goldenkit.explore: the comparison widget over report.compare
    {"report", "leaderboards.report"},
    {"leaderboards"},
    {"notebooks"},
    {"notebooks.inprocess"},  # notebooks executed without a kernel (the site renders many)
    # the static site over every run
    {"pages.html", "pages.plots"},
    {"pages.views"},
    {"pages.leaderboards"},
    {"pages.site"},
    {"pages"},
    # the public API, the demo, then the CLI and its commands
    {"__init__"},
    {"demo.story"},
    {"demo.benchmark"},
    {"demo"},
    # the commands: peers (one imports another's helpers; the cycle check keeps them apart)
    {
        "commands",
        "commands._agent",
        "commands._args",
        "commands._leaderboard_text",
        "commands._pairwise_judge",
        "commands._report_leaderboard",
        "commands.audit",
        "commands.baseline",
        "commands.benchmark",
        "commands.compare",
        "commands.dataset",
        "commands.demo",
        "commands.gate",
        "commands.import_run",
        "commands.judge",
        "commands.leaderboard",
        "commands.merge",
        "commands.pages",
        "commands.query",
        "commands.regrade",
        "commands.report",
        "commands.run",
        "commands.stats",
    },
    {"cli"},
    # deprecated import locations, kept for one release: each only re-exports its new module
    set(DEPRECATED),
]


def _layer_of(module: str) -> str:
    return module.split(".")[0]


def _name(path: Path) -> str:
    parts = [p for p in path.relative_to(PACKAGE).with_suffix("").parts if p != "__init__"]
    return ".".join(parts) or "__init__"


def _modules() -> list[tuple[str, Path]]:
    return [(_name(path), path) for path in sorted(PACKAGE.rglob("*.py"))]


def _is_module(dotted: str) -> bool:
    base = PACKAGE.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(path: Path) -> set[str]:
    """Every goldenkit module a file imports (top level or inside functions).

    ``from goldenkit.pkg import name`` counts as an import of ``pkg.name`` when that is a module.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("goldenkit."):
                    found.add(alias.name.removeprefix("goldenkit."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module != "goldenkit" and not node.module.startswith("goldenkit."):
                continue
            prefix = node.module.removeprefix("goldenkit").removeprefix(".")
            for alias in node.names:
                sub = f"{prefix}.{alias.name}" if prefix else alias.name
                if _is_module(sub):
                    found.add(sub)
                elif prefix:
                    found.add(prefix)
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    return {module: _imports(path) for module, path in _modules()}


def test_every_module_is_placed_in_one_layer() -> None:
    placed = [m for layer in LAYERS for m in layer]
    assert len(placed) == len(set(placed)), "a module is placed in two layers"
    found = {m for m, _ in _modules()}
    assert found - set(placed) == set(), "place every new module of goldenkit in LAYERS"
    assert set(placed) - found == set(), "LAYERS names a module that does not exist"


def test_lower_layers_never_import_higher_ones() -> None:
    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    violations = []
    for module, imported in _graph().items():
        for target in sorted(imported):
            if level.get(target, -1) > level.get(module, len(LAYERS)):
                violations.append(f"goldenkit.{module} imports goldenkit.{target}")
    assert violations == []


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports) as a path back to its start, or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        for target in sorted(graph.get(module, ())):
            cycle = visit(target, [*path, module])
            if cycle:
                return cycle
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module, [])
        if cycle:
            return cycle
    return None


def test_imports_form_no_cycle() -> None:
    cycle = _find_cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_checker_resolves_from_package_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("from goldenkit.report import html, pct\nfrom goldenkit import stats\n")
    assert _imports(src) == {"report.html", "report", "stats"}


def test_registries_name_real_builtins_of_their_own_package() -> None:
    """A registry's built-ins are imported by name on first use (goldenkit.registry), not by an import the
    checker sees: each must be a real factory in the registry's own package, above its base module."""
    from goldenkit.graders.base import BUILTINS as GRADERS
    from goldenkit.providers.base import BUILTINS as PROVIDERS

    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    for package, builtins in (("providers", PROVIDERS), ("graders", GRADERS)):
        for name, target in builtins.items():
            module, attribute = target.split(":")
            dotted = module.removeprefix("goldenkit.")
            assert _layer_of(dotted) == package and level[dotted] > level[f"{package}.base"], name
            assert callable(getattr(importlib.import_module(module), attribute)), target


def test_analysis_never_imports_graders_providers_or_the_runner() -> None:
    """The analysis reads what a run wrote (records, results), never what produced it."""
    analysis = {"stats", "passk", "policy", "evidence", "metrics", "flips", "baselines", "compare", "gate", "report"}
    producers = {"providers", "graders", "runner"}
    for module, imported in _graph().items():
        if _layer_of(module) in analysis:
            assert not {_layer_of(i) for i in imported} & producers, module


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


def test_only_the_judge_among_graders_calls_providers() -> None:
    """A grader reads a Response record (goldenkit.records); only the LLM judges (judge, rubrics) call a model."""
    for module, imported in _graph().items():
        if _layer_of(module) == "graders" and module not in {"graders", "graders.judge", "graders.rubrics"}:
            assert "providers" not in {_layer_of(i) for i in imported if i != "graders.judge"}, module


def test_the_dataset_layer_imports_no_provider() -> None:
    # reading, validating and hashing files knows nothing of running (scenario generation is scenarios/)
    graph = _graph()
    calls = sorted(
        f"goldenkit.{m} imports goldenkit.{t}"
        for m, targets in graph.items()
        if (m == "dataset" or m.startswith(("dataset.", "formats"))) and m not in DEPRECATED
        for t in targets
        if t == "providers" or t.startswith(("providers.", "runner", "graders"))
    )
    assert calls == []


def test_a_deprecated_location_only_re_exports_its_new_module() -> None:
    for old, new in DEPRECATED.items():
        path = PACKAGE.joinpath(*old.split(".")).with_suffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)]
        assert defined == [] and _graph()[old] == {new}, old
        assert "DeprecationWarning" in path.read_text(encoding="utf-8"), old
