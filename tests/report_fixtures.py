"""Rendered reports shared by the notebook and browser tests (rendered once per test process).

``goldenkit report`` runs on the committed fixture runs under tests/data/runs
(the candidate has a response containing ``<script>alert(1)</script>``), plus
the audit and coverage notebooks, all side by side in one thread pool.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

# jupyter_client imported before two threads start kernels: a first import made by both at once can fail
# with a partially initialized module
import jupyter_client.manager  # noqa: F401

from goldenkit.cli import main as cli_main
from goldenkit.notebooks import execute_notebook

DATA = Path(__file__).resolve().parent / "data" / "runs"


@lru_cache(maxsize=1)
def rendered() -> dict[str, Path]:
    """HTML pages (executed notebooks beside them): report, compare, audit, audit_widget, coverage, compare_invalid."""
    root = Path(tempfile.mkdtemp(prefix="gk-reports-"))
    atexit.register(shutil.rmtree, root, True)

    def report_cmd() -> dict[str, Path]:
        out = root / "report"
        args = ["report", str(DATA / "cand"), "--baseline", str(DATA / "base"), "-o", str(out)]
        code = cli_main([*args, "--config", str(DATA / "goldenkit.toml")])
        assert code == 0
        return {"report": out / "report.html", "compare": out / "compare.html"}

    def nb(key: str, name: str, params: dict[str, object]) -> dict[str, Path]:
        result = execute_notebook(name, params, root / key)
        assert result.html is not None
        assert set(result.timings) == {"kernel_start", "execute", "html_export"}
        return {key: result.html}

    audits = str(root / "audits")
    # a base whose dataset hash differs: compare.ipynb must state why and show no number
    other = root / "other"
    shutil.copytree(DATA / "base", other)
    manifest = json.loads((other / "run.json").read_text(encoding="utf-8"))
    manifest["dataset"]["sha256"] = "f" * 64
    manifest["run_id"] = "other"
    (other / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    invalid = {"base": str(other), "cand": str(DATA / "cand"), "config": str(DATA / "goldenkit.toml")}
    jobs = [
        lambda: report_cmd(),
        lambda: nb("audit", "audit", {"run": str(DATA / "cand"), "interactive": False, "audits_dir": audits}),
        lambda: nb("coverage", "coverage", {"dataset": str(DATA / "dataset"), "traffic": str(DATA / "traffic.csv")}),
        lambda: nb("audit_widget", "audit", {"run": str(DATA / "base"), "interactive": True, "audits_dir": audits}),
        lambda: nb("compare_invalid", "compare", invalid),
    ]
    out: dict[str, Path] = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for part in pool.map(lambda job: job(), jobs):
            out.update(part)
    return out
