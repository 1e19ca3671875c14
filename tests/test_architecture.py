"""The package's shape: the public API list and the one-way data flow.

Data flows dataset -> runner -> results -> stats/compare/gate -> notebooks; a lower
layer never imports a higher one, not even inside a function.
"""

from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent
ROOT = PACKAGE.parent

# Every module of goldenkit (dotted, relative to goldenkit; "__init__" is the package's own), in layers
# from the bottom up. A module imports only modules of its own layer or a lower one (top level or inside a
# function), and the imports never form a cycle. A new module must be placed here: add its name to the set
# of its layer (a new package: its submodules' line, then the package itself one line above).
LAYERS: list[set[str]] = [
    # foundations: errors, the records every layer shares, constants, the HTML base
    {"errors"},
    {"_registry"},
    {
        "_text",
        "_checks",
        "_files",
        "_constraint_types",
        "_constraints",
        "_config_tables",
        "_sync",
        "_jsonable",
        "_display",
        "schema",
        "records",
        "config",
        "_pricing",
        "_scrub",
        "_model_family",
        "_run_label",
    },
    {"_reprs"},
    {"_artifacts"},
    {"_protocols", "_findings"},
    # dataset -> sampling
    {"formats._scenario"},
    {
        "formats._common",
        "formats._contract_fields",
        "formats._rubrics",
        "formats._contract_build",
        "formats._adk",
        "formats._contract",
    },
    {"formats._vertex", "formats._eval_config", "formats._import_manifest"},
    {"formats._inspect", "formats._openai_evals", "formats._normalize", "formats._importer"},
    {"formats"},
    # the protocol key: what makes two runs comparable, below every package that reads it (the runner,
    # results, baselines, compare, gate, history), so the baseline store knows nothing of comparisons
    {"_protocol_key"},
    {"dataset._lines", "dataset._problems", "dataset._rows", "dataset._manifest", "dataset._reader"},
    {"dataset._versions", "dataset._red"},
    {"dataset"},
    {"sampling._rules", "sampling"},
    # statistics over tables (they never read a run folder)
    {"stats._intervals", "stats._clustered", "stats._sequential", "stats._ppi", "stats._paired_mean"},
    {"stats._collapse", "stats._mcnemar", "stats._representative"},
    {"stats", "leaderboards._passk"},
    {"metrics._red_rows", "metrics._text", "metrics._weighted"},
    {"metrics._rates"},
    {"gate._policy", "metrics"},
    # results: what a run wrote; other harnesses' results imported as runs
    {"results._manifest", "results._jsonl", "results._parquet", "results._latest"},
    {"results._run", "results._accounting"},
    {"results._light", "results._labels", "results._usage_change"},
    {"results._judge_evidence"},
    {"results._judge_next", "results._judge_figures"},
    {"results"},
    {"harnesses._formats", "harnesses._common"},
    {"harnesses._runfolder"},
    {"harnesses._deepeval_testrun", "harnesses._inspect_log", "harnesses._lm_eval_samples"},
    {"harnesses._openai_evals_log", "harnesses._promptfoo_output", "harnesses._adk_history"},
    {"harnesses._import"},
    {"harnesses"},
    # analysis of results: never imports providers, graders or the runner
    {"compare._ledger"},
    {"compare._flips", "baselines._store", "baselines"},
    {"compare._clusters"},
    {"compare._groups"},
    {"compare._runs"},
    {"compare"},
    {"gate._evidence", "gate._power", "gate._sequential", "gate._sequential_monitor", "gate._judge"},
    {"gate._regression"},
    {"gate._evaluate", "gate._replay"},
    {"gate", "leaderboards._alignment", "leaderboards._frontier"},
    # every run at once: the index, SQL over all outcomes, trends
    {"history._run_index"},
    {"history._sql", "history._trend"},
    {"history"},
    # the system under test, its graders, the runner
    {"providers._base", "providers._http", "providers._client", "providers._streaming", "providers._failures"},
    {"providers._adk_events", "providers._images"},
    {"providers._conversation", "providers._callable", "providers._fixtures", "providers._chat", "providers._adk"},
    {"providers._ollama", "providers._openai"},
    {"providers._simulator", "providers._spec"},
    {"providers"},
    {"graders._text", "graders._criteria", "graders._args", "graders._partial", "graders._base"},
    {"graders._contract", "graders._match", "graders._trajectory", "graders._judge", "graders._retrieval"},
    {"graders._state", "graders._rubrics"},
    {"graders._build", "graders._calibration"},
    {"graders._gradable"},
    {"graders"},
    {"runner._versions", "runner._validity", "runner._budget"},
    {
        "runner._limits",
        "runner._runkey",
        "runner._summary",
        "runner._progress",
        "runner._shard",
        "runner._outcome_index",
    },
    {"runner._folder", "runner._sequential", "runner._calls"},
    {"runner._ray_limits"},
    {"runner._run"},
    {"runner._manifest", "runner._options"},
    {"runner._ray_executor", "runner._ray_worker"},
    {"runner._conversation"},
    {"runner._evaluate", "runner._merge"},
    {"runner._regrade"},
    # a judge's optional words on a comparison's clusters (goldenkit compare --explain)
    {"runner._explain"},
    # a judge's pairwise preferences call it through the runner's seam (goldenkit.runner._calls), so pairwise
    # judging and the leaderboard that offers it sit above the runner
    {"leaderboards._pairwise"},
    {"leaderboards._ranking"},
    # scenarios a model generates from an agent's config, written as a new dataset version: above the runner,
    # whose seam its model calls go through (the dataset layer knows nothing of running)
    {"scenarios._agent_config"},
    {"scenarios._generate"},
    {"scenarios"},
    {"runner"},
    # what people look at: the audit, the report (one module per notebook), the notebooks
    {"audit._marks", "audit._failures", "audit._labelling"},
    {"audit._apply", "audit._browser"},
    {"audit._session"},
    {"audit"},
    {"report._figure", "report._html", "report._layout"},
    {"report._run", "report._compare", "report._audit", "report._coverage", "report._quality", "report._sequence"},
    {"report._explore", "report._markdown"},  # goldenkit.explore: the comparison widget over report.compare
    {"report._page"},  # the run report and the comparison as pages (what the site shows)
    {"report", "leaderboards._report"},
    {"leaderboards"},
    {"notebooks"},
    # the static site over every run
    {"pages._html", "pages._plots"},
    {"pages._views"},
    {"pages._leaderboards"},
    {"pages._site"},
    {"pages"},
    # the public API, the demo, then the CLI and its commands
    {"__init__"},
    {"demo._data"},  # where the demo's bundled dataset and baseline are
    {"demo._story"},
    {"demo._benchmark"},
    {"demo"},
    # the commands: peers (one imports another's helpers; the cycle check keeps them apart)
    {
        "commands",
        "commands._agent",
        "commands._args",
        "commands._leaderboard_text",
        "commands._pairwise_judge",
        "commands._report_leaderboard",
        "commands._audit",
        "commands._baseline",
        "commands._benchmark",
        "commands._compare",
        "commands._dataset",
        "commands._demo",
        "commands._estimate",
        "commands._gate",
        "commands._import_run",
        "commands._judge",
        "commands._judge_evidence",
        "commands._leaderboard",
        "commands._merge",
        "commands._notebooks",
        "commands._pages",
        "commands._query",
        "commands._regrade",
        "commands._report",
        "commands._run",
        "commands._sequential",
        "commands._stats",
    },
    {"cli"},
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


@functools.cache
def _homes(package: str) -> dict[str, str]:
    """A package's public names and the module each lives in (from its ``__init__.pyi``; "" is the root)."""
    stub = PACKAGE.joinpath(*package.split("."), "__init__.pyi") if package else PACKAGE / "__init__.pyi"
    if not stub.is_file():
        return {}
    body = ast.parse(stub.read_text(encoding="utf-8")).body
    return {
        a.name: str(n.module).removeprefix("goldenkit.") for n in body if isinstance(n, ast.ImportFrom) for a in n.names
    }


@functools.cache
def _eager(package: str) -> frozenset[str]:
    """What importing a package runs: its ``__init__.py``'s own imports (its stub's names load on first use)."""
    init = PACKAGE.joinpath(*package.split("."), "__init__.py")
    return frozenset(_scan([ast.parse(init.read_text(encoding="utf-8"))]))


def _imports(path: Path) -> set[str]:
    """Every goldenkit module a file imports (top level or inside functions).

    ``from goldenkit.pkg import name`` counts as an import of ``pkg.name`` when that is a module, else as one of
    the module the package's ``__init__.pyi`` names for ``name`` (what runs: the package loads it on first use)
    and of what the package's ``__init__.py`` imports itself. A package's ``__init__.pyi`` counts as part of its
    ``__init__.py`` (``import goldenkit.pkg`` reaches every public name).
    """
    stub = path.with_suffix(".pyi")
    sources = [path, stub] if path.name == "__init__.py" and stub.is_file() else [path]
    return _scan([ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for p in sources])


def _scan(trees: list[ast.Module]) -> set[str]:
    found: set[str] = set()
    for node in (node for tree in trees for node in ast.walk(tree)):
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
                elif alias.name in _homes(prefix):
                    found.add(_homes(prefix)[alias.name])
                    found.update(_eager(prefix) if prefix else ())
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


def _packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` between packages: a module counts as its package (its first name; a root module is its own)."""
    out: dict[str, set[str]] = {}
    for module, imported in graph.items():
        package = module.split(".")[0]
        out.setdefault(package, set()).update(target.split(".")[0] for target in imported)
        out[package].discard(package)
    return out


def test_packages_form_no_cycle() -> None:
    """No two packages import each other, not even through different modules: a package below another knows
    nothing of it (the baseline store knows nothing of comparisons; the protocol key both of them read lives
    below both, in goldenkit._protocol_key)."""
    cycle = _find_cycle(_packages(_graph()))
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle or [])


def test_the_package_cycle_check_finds_a_cycle_split_by_modules() -> None:
    split = {
        "compare._runs": {"baselines._store"},
        "baselines._store": {"compare._protocol"},
        "compare._protocol": set(),
    }
    assert _find_cycle(split) is None  # no cycle between the modules
    assert _find_cycle(_packages(split)) == ["baselines", "compare", "baselines"]
    assert _find_cycle(_packages({"compare._runs": {"compare._ledger", "baselines"}, "baselines": {"_key"}})) is None


def test_the_checker_resolves_from_package_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("from goldenkit.report import _html, pct\nfrom goldenkit import stats\n")
    assert _imports(src) == {"report._html", "_display", "_registry", "stats"}  # pct lives in _display
    src.write_text("from goldenkit.gate import GatePolicy, evaluate_gate\nfrom goldenkit.nope import x\n")
    assert _imports(src) == {"gate._policy", "gate._evaluate", "_registry", "nope"}


def test_registries_name_real_builtins_of_their_own_package() -> None:
    """A registry's built-ins are imported by name on first use (goldenkit._registry), not by an import the
    checker sees: each must be a real factory in the registry's own package, above its base module."""
    from goldenkit.graders._base import BUILTINS as GRADERS
    from goldenkit.providers._base import BUILTINS as PROVIDERS

    level = {m: i for i, layer in enumerate(LAYERS) for m in layer}
    for package, builtins in (("providers", PROVIDERS), ("graders", GRADERS)):
        for name, target in builtins.items():
            module, attribute = target.split(":")
            dotted = module.removeprefix("goldenkit.")
            assert _layer_of(dotted) == package and level[dotted] > level[f"{package}._base"], name
            assert callable(getattr(importlib.import_module(module), attribute)), target


def test_analysis_never_imports_graders_providers_or_the_runner() -> None:
    """The analysis reads what a run wrote (records, results), never what produced it."""
    analysis = {"stats", "metrics", "baselines", "compare", "gate", "report"}
    scores = {"leaderboards._passk", "leaderboards._alignment", "leaderboards._ranking"}
    producers = {"providers", "graders", "runner"}
    for module, imported in _graph().items():
        if _layer_of(module) in analysis or module in scores:
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
    public = {n for n, v in vars(goldenkit).items() if not n.startswith("_") and not isinstance(v, type(goldenkit))}
    assert public <= set(names) | {"__version__"}


# Every package that lists public names in an __init__.pyi; "commands" has none (the CLI's), and notebooks'
# __init__.py is the module itself.
STUBBED = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.pyi"))


def test_the_root_and_every_package_list_their_names_one_way() -> None:
    """One lazy-import mechanism: each __init__.py reads its __init__.pyi (goldenkit._registry.attach_stub),
    with no table of its own, no TYPE_CHECKING copy and no public name imported eagerly."""
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert packages - set(STUBBED) == {"commands", "notebooks"}
    for init in [PACKAGE / "__init__.py", *(PACKAGE / p / "__init__.py" for p in STUBBED)]:
        tree = ast.parse(init.read_text(encoding="utf-8"))
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert all(name.startswith("_") for name in imported), f"{init}: {sorted(imported)}"
        assert "_attach_stub(__name__, __file__)" in ast.unparse(tree), init


@pytest.mark.parametrize("package", ["goldenkit", *(f"goldenkit.{p}" for p in STUBBED)])
def test_dir_shows_the_public_names_and_submodules_and_each_resolves(package: str) -> None:
    module = importlib.import_module(package)
    shown = {n for n in dir(module) if not n.startswith("_")}
    assert set(module.__all__) <= shown and module.__all__ == sorted(module.__all__)
    others = {n for n in shown - set(module.__all__) if not isinstance(getattr(module, n), type(goldenkit))}
    assert others == set(), f"{package} shows {sorted(others)}"  # not the __future__ object 'annotations'
    for name in module.__all__:
        getattr(module, name)


def test_a_subpackage_is_an_attribute_before_it_is_imported() -> None:
    code = "import sys, goldenkit as gk; print(gk.report.__name__, 'report' in dir(gk), 'annotations' in dir(gk))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["goldenkit.report", "True", "False"]


def _private_imports(path: Path, own: str | None, where: str) -> list[str]:
    """``where:line: module`` for each import in ``path`` (a module of package ``own``, None for the root's) of
    another package's private module.

    A package's private modules (``goldenkit.pkg._mod``) are its own: other packages, the root's modules and the
    CLI import what the package offers (``from goldenkit.pkg import name``, listed in its ``__init__.pyi``). The
    root's private modules (goldenkit/_checks.py, _files.py, _display.py ...) are shared helpers below every
    package: importing them is allowed.
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_"))]
        else:
            continue
        for name in names:
            dotted = name.split(".")
            if dotted[0] != "goldenkit" or len(dotted) < 3 or dotted[1] == own:
                continue
            if (PACKAGE / dotted[1] / "__init__.py").is_file() and any(d.startswith("_") for d in dotted[2:]):
                found.append(f"{where}:{node.lineno}: {name}")
                break
    return found


def test_no_module_imports_another_packages_private_module() -> None:
    found = []
    for _, path in _modules():
        parts = path.relative_to(PACKAGE).parts
        found += _private_imports(path, parts[0] if len(parts) > 1 else None, path.relative_to(ROOT).as_posix())
    assert found == [], "import what the package offers (its __init__.pyi):\n" + "\n".join(found)


def test_the_private_import_check_names_each_offender(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    text = "from goldenkit.runner._run import x\nimport goldenkit.graders._base\nfrom goldenkit.report import _html\n"
    src.write_text(text + "from goldenkit.stats._collapse import y\nfrom goldenkit._checks import z\n")
    found = _private_imports(src, "stats", "goldenkit/stats/m.py")
    assert found == [
        "goldenkit/stats/m.py:1: goldenkit.runner._run",
        "goldenkit/stats/m.py:2: goldenkit.graders._base",
        "goldenkit/stats/m.py:3: goldenkit.report._html",
    ]
    assert _private_imports(src, "runner", "m.py") == [
        "m.py:2: goldenkit.graders._base",
        "m.py:3: goldenkit.report._html",
        "m.py:4: goldenkit.stats._collapse",
    ]
    assert _private_imports(src, None, "m.py")[3:] == ["m.py:4: goldenkit.stats._collapse"]  # a root module's


def test_the_checker_sees_function_level_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from goldenkit.runner import run_eval\n    import goldenkit.stats\n")
    assert _imports(src) == {"runner._evaluate", "_registry", "stats"}


def test_the_audit_never_imports_the_report() -> None:
    """The report reads audit marks; the audit shares only goldenkit._display with it (no cycle)."""
    for module, path in _modules():
        if _layer_of(module) == "audit":
            assert not {_layer_of(i) for i in _imports(path)} & {"report", "notebooks"}, module


def test_only_the_judge_among_graders_calls_providers() -> None:
    """A grader reads a Response record (goldenkit.records); only the LLM judges (judge, rubrics) call a model."""
    for module, imported in _graph().items():
        if _layer_of(module) == "graders" and module not in {"graders", "graders._judge", "graders._rubrics"}:
            assert "providers" not in {_layer_of(i) for i in imported if i != "graders._judge"}, module


def test_the_dataset_layer_imports_no_provider() -> None:
    # reading, validating and hashing files knows nothing of running (scenario generation is scenarios/)
    graph = _graph()
    calls = sorted(
        f"goldenkit.{m} imports goldenkit.{t}"
        for m, targets in graph.items()
        if (m == "dataset" or m.startswith(("dataset.", "formats")))
        for t in targets
        if t == "providers" or t.startswith(("providers.", "runner", "graders"))
    )
    assert calls == []


def test_no_old_location_answers() -> None:
    """Nothing was released, so no module keeps an old name alive: each name has one home."""
    for old in ("goldenkit.cases", "goldenkit.comparability", "goldenkit.policy", "goldenkit.runner.run"):
        sys.modules.pop(old, None)
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    history = importlib.import_module("goldenkit.history")
    assert callable(history.trend) and callable(importlib.import_module("goldenkit.demo").story)
    assert not hasattr(importlib.import_module("goldenkit.runner"), "Run")
    assert not hasattr(history, "failing_rows")


def test_the_cli_loads_no_old_name() -> None:
    """Every command group's module is imported by its own name (a fresh process: none is loaded yet)."""
    code = "import warnings; warnings.simplefilter('error'); from goldenkit.cli import build_parser; build_parser()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
