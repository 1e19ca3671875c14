"""The package where it is installed: ``pip install goldenkit`` then ``goldenkit demo`` in an empty folder,
and an sdist that holds what its build needs and no tests.

The wheel is built offline from a copy of the sources and installed with
``pip --no-deps --no-index`` into a fresh virtualenv that reaches this
environment's dependencies through a ``.pth`` path line (tests/test_wheel.py's
helpers: a venv made with ``--system-site-packages`` from this one would see the
base interpreter's packages, not this venv's, and a plain path line does not
run the editable install's finder, so the checkout stays invisible). The demo
then runs in an empty folder: its dataset, recorded answers and committed
baseline must come from the installed package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from test_wheel import _build_wheel, _fresh_venv, _run

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "datasets" / "support-agent"
DATA_IN_WHEEL = "goldenkit/demo/datasets/support-agent/"
BASELINE_IN_WHEEL = "goldenkit/demo/baselines/"

pytestmark = pytest.mark.slow


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def _tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file's size and modification time (what a write would change), bytecode caches left out."""
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the wheel, the fresh venv's python, the environment to run it in)."""
    tmp = tmp_path_factory.mktemp("installed")
    wheel = _build_wheel(tmp)
    python = _fresh_venv(tmp)
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], tmp)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")  # nbconvert's templates (see test_wheel)
    return wheel, python, env


def test_the_wheel_ships_the_demo_data_once(installed: tuple[Path, Path, dict[str, str]]) -> None:
    names = set(zipfile.ZipFile(installed[0]).namelist())
    shipped = {n.removeprefix(DATA_IN_WHEEL) for n in names if n.startswith(DATA_IN_WHEEL)}
    assert shipped == _files(DATASET)  # the dataset, its goldenkit.toml and every agent's recorded answers
    baselines = {n.removeprefix(BASELINE_IN_WHEEL) for n in names if n.startswith(BASELINE_IN_WHEEL)}
    assert baselines == {"support-agent-holdout.json", "support-agent-holdout.parquet"}
    assert not any(n.startswith(("datasets/", "baselines/", "tests/")) for n in names)  # no top-level copies


def test_goldenkit_demo_in_an_empty_folder(installed: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    _, python, env = installed
    site = Path(_run([python, "-c", "import goldenkit; print(goldenkit.__file__)"], tmp_path, env).strip()).parent
    assert not site.is_relative_to(ROOT), site  # the installed copy, not the checkout
    before = _tree_state(site)
    empty = tmp_path / "empty"
    empty.mkdir()

    printed = _run([python.parent / "goldenkit", "demo"], empty, env)  # exit 0, else _run shows the output

    for line in (
        "pass rate 88% -> 89% (352/400 -> 356/400 rows",
        "24 rows flipped, 10 broke vs 14 fixed; two-sided exact McNemar p = 0.54",
        "refunds (declared critical) regressed, 60 rows, 93.3% -> 81.7%: 8 broke vs 1 fixed",
        "gate FAILED: `goldenkit gate` would exit 2.",
    ):
        assert line in printed, line
    committed = site / "demo" / "baselines" / "support-agent-holdout.json"
    assert f"Against the committed baseline {committed}: exit 2." in printed
    assert sorted(p.name for p in empty.iterdir()) == ["results"]  # the demo writes only its runs here
    assert {"report.html", "compare.html"} <= {p.name for p in (empty / "results" / "demo-candidate").iterdir()}
    assert _tree_state(site) == before  # and nothing into the installed package

    # the command the story prints for the committed baseline works as printed (exit 2: the gate fails)
    gate = f"goldenkit gate demo-candidate --baseline {committed} --results-dir results"
    assert gate in printed
    done = subprocess.run(
        [str(python.parent / "goldenkit"), *gate.split()[1:]], cwd=empty, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "regression.critical[refunds]" in done.stdout


def test_the_sdist_builds_the_same_wheel_and_ships_no_tests(
    installed: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("goldenkit", "notebooks", "datasets", "baselines", "tests"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    build = "from setuptools import build_meta as b; print(b.build_sdist('dist'))"
    sdist = src / "dist" / _run([sys.executable, "-c", build], src).strip().splitlines()[-1]

    with tarfile.open(sdist) as tar:
        members = [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()]
        tar.extractall(tmp_path / "unpacked", filter="data")
    assert not [m for m in members if m.startswith("tests/")]  # the suite needs the checkout: not shipped
    assert {"LICENSE", "README.md", "pyproject.toml", "setup.py"} <= set(members)
    assert {f"datasets/support-agent/{f}" for f in _files(DATASET)} <= set(members)

    # the wheel built from the unpacked sdist holds exactly what the wheel built from the sources holds
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    dist = tmp_path / "wheel"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, unpacked], src)
    (from_sdist,) = dist.glob("goldenkit-*.whl")
    names = set(zipfile.ZipFile(from_sdist).namelist())
    assert names == set(zipfile.ZipFile(installed[0]).namelist())
