"""The public API is listed once, in goldenkit/__init__.pyi; the package reads its lines at run time."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import goldenkit
from goldenkit._registry import attach_stub, publish

STUB = Path(goldenkit.__file__).with_suffix(".pyi")


def _stub_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.name not in table, f"{alias.name} listed twice"
                table[alias.name] = str(node.module)
    return table


def test_all_is_the_stubs_names_and_each_is_the_object_of_its_module() -> None:
    table = _stub_table()
    assert goldenkit.__all__ == sorted(table)
    for name, module in table.items():
        assert getattr(goldenkit, name) is getattr(importlib.import_module(module), name), name
    assert set(goldenkit.__all__) <= set(dir(goldenkit))


ROOT = """Case Comparison Dataset GateDecision GatePolicy GoldenkitError Grader Response Run RunOptions arun_eval
compare_runs evaluate_gate explore get_provider leaderboard outcomes_df read_baseline read_dataset read_run regrade
run_eval save_baseline slice_table why""".split()


def test_the_root_holds_at_most_25_names_a_first_hour_needs() -> None:
    """Every other public name lives in its package only (goldenkit.stats.holm, goldenkit.errors.ConfigError)."""
    assert len(ROOT) <= 25
    assert goldenkit.__all__ == sorted(ROOT)
    for name in ("holm", "wilson_ci", "ConfigError", "build_site", "Provider", "merge_shards"):
        assert not hasattr(goldenkit, name), name
    assert goldenkit.stats.holm is importlib.import_module("goldenkit.stats").holm
    assert issubclass(goldenkit.errors.ConfigError, goldenkit.GoldenkitError)


def test_the_init_module_names_no_public_name_itself() -> None:
    """__init__.py holds no list of its own: no import of a public name, no table, no __all__ literal."""
    tree = ast.parse(Path(goldenkit.__file__).read_text(encoding="utf-8"))
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert imported & set(goldenkit.__all__) == set()
    assert not any(isinstance(n, ast.Dict | ast.List) for n in ast.walk(tree))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'read_runs'"):
        goldenkit.read_runs  # noqa: B018


def test_a_stub_line_in_another_form_is_refused(tmp_path: Path) -> None:
    (tmp_path / "__init__.pyi").write_text("from json import dumps as encode\n")
    with pytest.raises(TypeError, match=r"__init__.pyi:1: write public names as"):
        attach_stub("pkg", str(tmp_path / "__init__.py"))
    (tmp_path / "__init__.pyi").write_text("from json import (\n    dumps as dumps,\n    loads as loads,\n)\n")
    getattr_, dir_, names = attach_stub("json", str(tmp_path / "__init__.py"))
    assert names == ["dumps", "loads"] and getattr_("dumps")([1]) == "[1]"


def test_import_goldenkit_loads_none_of_the_heavy_libraries() -> None:
    code = (
        "import sys, goldenkit; goldenkit.__all__; "
        "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'statsmodels', 'pyarrow') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_package_imports_from_a_zip_file(tmp_path: Path) -> None:
    """The stub is read through the package's loader, not as a file beside it (zipimport, freezers)."""
    import zipfile

    package = Path(goldenkit.__file__).parent
    with zipfile.ZipFile(tmp_path / "gk.zip", "w") as zf:
        for path in package.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(package.parent).as_posix())
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import goldenkit; print(goldenkit.__file__, goldenkit.stats.holm)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "gk.zip")], capture_output=True, text=True)
    assert done.returncode == 0 and "gk.zip" in done.stdout, done.stderr[-2000:]


def _homes() -> dict[str, tuple[object, str]]:
    """Each public class and function of the root and of every package with its home (the root wins)."""
    homes: dict[str, tuple[object, str]] = {}
    for package in ["goldenkit", *(f"goldenkit.{m.name}" for m in pkgutil.iter_modules(goldenkit.__path__))]:
        stub = Path(importlib.import_module(package).__file__ or "").with_suffix(".pyi")
        if stub.exists():  # the root and every package but the two without public names
            for name in attach_stub(package, str(stub))[2]:
                value = getattr(importlib.import_module(package), name)
                if inspect.isclass(value) or inspect.isfunction(value):
                    homes.setdefault(f"{id(value)}", (value, package))
    return homes


def test_each_root_name_has_the_root_as_its_module_in_reprs_and_pickles() -> None:
    for name in goldenkit.__all__:
        assert getattr(goldenkit, name).__module__ == "goldenkit", name
    assert repr(goldenkit.GatePolicy) == "<class 'goldenkit.GatePolicy'>"
    assert repr(goldenkit.GoldenkitError("x")) == "GoldenkitError('x')"
    assert "goldenkit.errors.ConfigError" in repr(goldenkit.errors.ConfigError)
    fn = goldenkit.compare_runs
    assert f"{fn.__module__}.{fn.__qualname__}" == "goldenkit.compare_runs"
    policy = goldenkit.GatePolicy(min_pass_rate=0.8, critical=("refunds",))
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert pickle.loads(pickle.dumps(goldenkit.read_run)) is goldenkit.read_run
    done = subprocess.run(
        [sys.executable, "-c", "import pickle, sys; print(pickle.loads(sys.stdin.buffer.read()))"],
        input=pickle.dumps(policy),
        capture_output=True,
    )
    assert done.returncode == 0 and done.stdout.startswith(b"GatePolicy(rule='majority', min_pass_rate=0.8,"), (
        done.stderr[-2000:]
    )


def test_a_public_name_of_a_module_that_publishes_has_its_package_as_its_module() -> None:
    """A module's private path never shows: goldenkit.stats.flaky_rows, defined in goldenkit.stats._collapse."""
    assert goldenkit.stats.flaky_rows.__module__ == "goldenkit.stats"
    assert goldenkit.graders.GradeResult.__module__ == "goldenkit.graders"
    assert repr(goldenkit.graders.GradeResult) == "<class 'goldenkit.graders.GradeResult'>"


def test_every_public_class_and_function_names_a_public_path_as_its_module() -> None:
    homes = _homes()
    assert len(homes) > 300  # the root's names and every package's
    for value, _home in homes.values():
        module = str(getattr(value, "__module__", ""))
        assert "._" not in module and not module.startswith("_"), f"{module}.{value.__qualname__}"  # type: ignore[attr-defined]
        assert getattr(importlib.import_module(module), value.__name__) is value, module  # type: ignore[attr-defined]


def test_the_root_s_private_modules_name_the_package_that_offers_their_names() -> None:
    """goldenkit._display sits below every package that formats; its names' home is goldenkit.report."""
    report, compare, runner = goldenkit.report, goldenkit.compare, goldenkit.runner
    assert repr(report.HTMLBlock) == "<class 'goldenkit.report.HTMLBlock'>"
    assert (report.pct.__module__, compare.protocol_key.__module__) == ("goldenkit.report", "goldenkit.compare")
    assert (runner.redact_settings.__module__, runner.agent_version.__module__) == ("goldenkit.runner",) * 2
    assert "pct" in importlib.import_module("goldenkit._display").__test__  # its examples still collected there
    with pytest.raises(TypeError, match=r"^goldenkit\._scrub: no stub of goldenkit\.stats lists a name defined here$"):
        publish({"__name__": "goldenkit._scrub"}, "goldenkit.stats")


def test_names_defined_in_private_modules_unpickle_in_a_fresh_interpreter() -> None:
    runner = goldenkit.runner
    values = [
        goldenkit.report.pct,
        goldenkit.report.HTMLBlock("<b>x</b>"),
        goldenkit.compare.protocol_sha256,
        goldenkit.gate.sequential_gate,
        runner.RaySettings(address="auto", workers=2),
        runner.SpecSetup({"provider": "fixtures"}, {}, ["contract"]),
        goldenkit.harnesses.sample_differences,
    ]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value
    shown = "lambda v: f'{v.__module__}.{v.__qualname__}' if callable(v) and hasattr(v, '__qualname__') else repr(v)"
    code = f"import pickle, sys; print(*map({shown}, pickle.loads(sys.stdin.buffer.read())), sep='\\n')"
    done = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(values), capture_output=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.decode().splitlines() == [
        "goldenkit.report.pct",
        "'<b>x</b>'",
        "goldenkit.compare.protocol_sha256",
        "goldenkit.gate.sequential_gate",
        "RaySettings(address='auto', workers=2, setup=None, max_restarts=None)",
        "SpecSetup(opts={'provider': 'fixtures'}, cfg={}, use=['contract'])",
        "goldenkit.harnesses.sample_differences",
    ]
