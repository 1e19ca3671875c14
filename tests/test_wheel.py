"""``goldenkit report`` from a wheel installed outside the checkout.

The wheel is built from a copy of the sources (offline: no build isolation),
installed with ``pip --no-deps --no-index`` into a fresh virtualenv whose
site-packages reaches this environment's dependencies through a ``.pth`` path
line (a plain path line does not run the editable install's finder, so the
checkout stays invisible; nbconvert's data files are reached through
``JUPYTER_PATH``), and the report of a committed fixture run is
rendered from a working directory outside the checkout. This proves the
notebooks (the top-level notebooks/ folder, which the build configuration maps
into the package) and templates ship as package data.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from goldenkit.notebooks import NOTEBOOK_NAMES

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "tests" / "data" / "runs" / "cand"


def _run(args: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _build_wheel(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("goldenkit", "notebooks", "datasets", "baselines"):  # the folders mapped into the package
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, src], tmp_path)
    (wheel,) = dist.glob("goldenkit-*.whl")
    return wheel


def _fresh_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path)
    python = venv / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path).strip()
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "deps-of-the-test-environment.pth").write_text("\n".join(sorted(here)) + "\n", encoding="utf-8")
    return python


@pytest.mark.slow
def test_report_from_a_wheel_installed_in_a_fresh_venv(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.endswith(".ipynb"))
    assert shipped == [f"goldenkit/notebooks/bundled/{nb}.ipynb" for nb in sorted(NOTEBOOK_NAMES)]
    assert {n.removeprefix("goldenkit/notebooks/bundled/") for n in shipped} == {
        p.name for p in (ROOT / "notebooks").glob("*.ipynb")
    }
    assert "goldenkit/templates/goldenkit_report.html.j2" in names
    assert {"goldenkit/__init__.pyi", "goldenkit/py.typed"} <= set(names)  # the public API's one list
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)  # the Apache-2.0 text ships

    python = _fresh_venv(tmp_path)
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    # nbconvert's templates are data files under its environment's share/jupyter, which the .pth line
    # does not reach (installing nbconvert into the fresh venv would have put them there).
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    located = _run([python, "-c", "import goldenkit; print(goldenkit.__file__)"], outside, env).strip()
    assert Path(located).is_relative_to(tmp_path / "venv"), located

    out = outside / "out"
    printed = _run([python.parent / "goldenkit", "report", RUN, "-o", out], outside, env)
    assert f"wrote {out / 'report.html'}" in printed
    text = (out / "report.html").read_text(encoding="utf-8")
    assert "Pass rate per slice" in text and "VALID: 72 outcomes" in text
