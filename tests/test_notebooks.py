"""The notebooks as tested programs: parameters, no committed outputs, clean execution, offline HTML.

Every notebook is executed with papermill against the committed fixture runs
(tests/data/runs); a test fails on any error or stderr output in any cell.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat
import papermill as pm
import pytest
from report_fixtures import DATA, rendered

from goldenkit.cli import main as cli_main
from goldenkit.notebooks import NOTEBOOK_NAMES, export_html, notebook_path, remote_references

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
IMG = re.compile(r'<img [^>]*src="data:image/png;base64,')
FIGURE = re.compile(r'<figure class="gk-figure"><img alt="[^"]+" src="data:image/svg\+xml;base64,')  # SVG images

EXPECTED_PARAMETERS = {
    "report": {"run", "results_dir", "rule", "top_reasons", "config"},
    "compare": {"base", "cand", "results_dir", "baselines_dir", "rule", "alpha", "by", "config", "flip_limit"},
    "audit": {"run", "results_dir", "dataset", "rule", "interactive", "n_per_slice", "seed", "audits_dir"},
    "coverage": {"dataset", "split", "traffic", "delta", "discordance", "alpha", "power", "min_ratio"},
    "leaderboard": {"runs", "results_dir", "alpha", "rule", "frontier_seed", "frontier_resamples"},
}


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_parameters_cell_holds_literals_only(name: str) -> None:
    path = NOTEBOOKS / f"{name}.ipynb"
    params = pm.inspect_notebook(str(path))
    assert set(params) == EXPECTED_PARAMETERS[name]
    for p in params.values():
        assert p["default"] is not None and p["help"], p  # every parameter is documented with a comment
    nb = nbformat.read(path, as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    first = code_cells[0]
    assert "parameters" in first.metadata.get("tags", [])
    for stmt in ast.parse(first.source).body:
        assert isinstance(stmt, ast.Assign), ast.dump(stmt)
        ast.literal_eval(stmt.value)  # raises unless a literal


@pytest.mark.parametrize("name", NOTEBOOK_NAMES)
def test_notebooks_are_committed_without_outputs_and_stay_thin(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            if "parameters" not in cell.metadata.get("tags", []):
                assert len(cell.source.splitlines()) <= 6, cell.source  # longer logic belongs in goldenkit.report


def test_notebook_lookup() -> None:
    assert notebook_path("report") == NOTEBOOKS / "report.ipynb"
    assert notebook_path(NOTEBOOKS / "audit.ipynb") == NOTEBOOKS / "audit.ipynb"
    from goldenkit.errors import InputError

    with pytest.raises(InputError, match="unknown notebook 'nope'"):
        notebook_path("nope")


def _executed(html: Path) -> nbformat.NotebookNode:
    return nbformat.read(html.with_suffix(".ipynb"), as_version=4)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["report", "compare", "audit", "audit_widget", "coverage", "compare_invalid"])
def test_notebook_executes_without_errors(key: str) -> None:
    html = rendered()[key]
    nb = _executed(html)
    problems = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                problems.append(f"{out.ename}: {out.evalue}")
            elif out.output_type == "stream" and out.name == "stderr":
                problems.append(f"stderr: {out.text[:300]}")
    assert problems == []
    tags = [c.metadata.get("tags", []) for c in nb.cells if c.cell_type == "code"]
    assert tags[0] == ["parameters"] and tags[1] == ["injected-parameters"]
    text = html.read_text(encoding="utf-8")
    assert remote_references(text) == []
    assert "<script src" not in text


@pytest.mark.slow
def test_report_html_shows_every_section_and_escapes_model_output() -> None:
    text = rendered()["report"].read_text(encoding="utf-8")
    for heading in (
        "Run key",
        "Pass rate per slice",
        "ERROR and SKIPPED outcomes",
        "Flaky rows",
        "What the run cost",
        "Why rows fail",
    ):
        assert heading in text
    assert "VALID: 72 outcomes" in text
    assert len(FIGURE.findall(text)) == 1
    assert "&lt;script&gt;alert(&lt;value&gt;)&lt;/script&gt;" in text  # quoted by a grader's finding, escaped
    assert "<script>alert(" not in text
    assert "def " not in text and "report.format_slice_table" not in text  # code cells hidden
    assert "<title>goldenkit report: model-cand (cand)</title>" in text  # the run's label first, then its id


@pytest.mark.slow
def test_compare_html_shows_the_comparison_flips_and_gate() -> None:
    text = rendered()["compare"].read_text(encoding="utf-8")
    assert "COMPARABLE: " in text and "b (broke)" in text and "Holm p" in text
    assert "<title>goldenkit compare: base vs cand</title>" in text
    assert len(FIGURE.findall(text)) == 1  # the forest plot
    assert text.index("NEW_FAILURE</b>") < text.index("RECOVERED</b>")
    assert "Sure! &lt;script&gt;alert(1)&lt;/script&gt; Your refund is on its way." in text
    assert "<script>alert(1)</script>" not in text
    assert "gate PASSED" in text and "regression.critical[refunds]" in text
    assert "What the change costs" in text  # the paired change per row in tokens and latency


@pytest.mark.slow
def test_audit_and_coverage_html() -> None:
    audit_text = rendered()["audit"].read_text(encoding="utf-8")
    assert audit_text.count('class="gk-card"') >= 4 and "Label-error share per slice" in audit_text
    coverage_text = rendered()["coverage"].read_text(encoding="utf-8")
    assert "UNDER-TESTED" in coverage_text and "billing" in coverage_text
    assert len(IMG.findall(coverage_text)) == 1


@pytest.mark.slow
def test_an_invalid_comparison_is_stated_never_a_number() -> None:
    html = rendered()["compare_invalid"]
    text = html.read_text(encoding="utf-8")
    assert "COMPARISON INVALID" in text and "dataset sha256 differs: ffffffffffff" in text
    assert FIGURE.findall(text) == IMG.findall(text) == [] and "b (broke)" not in text  # no number, no plot
    assert "exit code 4" in text


def test_report_command_refuses_a_missing_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_main(["report", str(tmp_path / "nope")]) == 1
    assert "no run found" in capsys.readouterr().err
    assert cli_main(["report", str(DATA / "cand"), "--baseline", "nope", "--baselines-dir", str(tmp_path)]) == 1
    assert "no baseline" in capsys.readouterr().err or "no run" in capsys.readouterr().err


def test_a_failing_cell_is_one_error_naming_the_notebook(tmp_path: Path) -> None:
    from goldenkit.errors import ResultsError

    with pytest.raises(ResultsError, match=r"report.ipynb: cell \d+ \(.+\) raised ResultsError: .*no run found") as exc:
        from goldenkit.notebooks import execute_notebook

        execute_notebook("report", {"run": str(tmp_path / "missing")}, tmp_path / "out", html=False)
    assert "executed notebook:" in str(exc.value) and exc.value.exit_code == 1


def _notebook(path: Path, *sources: str) -> Path:
    from nbformat.v4 import new_code_cell, new_notebook

    cells = [new_code_cell("x = 1", metadata={"tags": ["parameters"]}), *map(new_code_cell, sources)]
    nbformat.write(new_notebook(cells=cells), path)
    return path


def test_a_cell_that_raises_is_exit_1_naming_the_cell_not_an_outage(tmp_path: Path) -> None:
    from goldenkit.errors import GoldenkitError, InfrastructureError
    from goldenkit.notebooks import execute_notebook

    nb = _notebook(tmp_path / "n.ipynb", "y = x + 1", "rows = {}\nrows['missing']")
    with pytest.raises(GoldenkitError) as exc:
        execute_notebook(nb, {"x": 2}, tmp_path / "out", html=False)
    assert not isinstance(exc.value, InfrastructureError) and exc.value.exit_code == 1
    # cell 1 is the parameters cell, 2 the one papermill injects, 3 "y = x + 1"
    assert str(exc.value).startswith("n.ipynb: cell 4 (rows = {}) raised KeyError: 'missing' (executed notebook: ")


def test_only_a_failing_kernel_is_exit_3(tmp_path: Path) -> None:
    from goldenkit.errors import InfrastructureError
    from goldenkit.notebooks import execute_notebook

    nb = _notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(60)")
    with pytest.raises(
        InfrastructureError, match=r"^slow.ipynb: the notebook's kernel failed: CellTimeoutError"
    ) as exc:
        execute_notebook(nb, {}, tmp_path / "out", html=False, timeout=1)
    assert exc.value.exit_code == 3


def test_report_command_names_the_cell_of_a_notebook_that_raises(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli_main(["report", str(DATA / "cand"), "-o", str(tmp_path), "--rule", "at_least:x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("goldenkit: report.ipynb: cell ") and " raised " in err and err.count("\n") == 1


def test_export_refuses_a_page_that_would_load_from_the_network(tmp_path: Path) -> None:
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from goldenkit.errors import InfrastructureError

    cell = new_code_cell(
        "x", outputs=[new_output("display_data", data={"text/html": '<img src="https://x.test/a.png">'})]
    )
    path = tmp_path / "n.ipynb"
    nbformat.write(new_notebook(cells=[cell]), path)
    with pytest.raises(InfrastructureError, match="would load from the network"):
        export_html(path, tmp_path / "n.html")
    assert remote_references('<a href="//cdn.test/x.js">') == ['href="//']
    assert remote_references('<img src="data:image/png;base64,AAAA">') == []


def test_kernel_is_this_interpreter_whatever_kernels_are_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registered ``python3`` spec pointing elsewhere (e.g. a user-level one) is not used."""
    import sys

    from nbformat.v4 import new_code_cell, new_notebook

    from goldenkit.notebooks import execute_notebook

    bogus = tmp_path / "jupyter" / "kernels" / "python3"
    bogus.mkdir(parents=True)
    spec = {
        "argv": ["/nonexistent/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "language": "python",
    }
    (bogus / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter"))
    nb = new_notebook(
        cells=[
            new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
            new_code_cell("import sys\nprint(sys.executable, x)"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    result = execute_notebook(path, {"x": 2}, tmp_path / "out")
    executed = nbformat.read(result.notebook, as_version=4)
    assert executed.cells[-1].outputs[0]["text"].strip() == f"{sys.executable} 2"
    assert result.timings["kernel_start"] > 0 and result.html is not None and result.html.is_file()


def test_report_command_unknown_rule_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_main(["report", str(DATA / "cand"), "--rule", "most", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("goldenkit: report.ipynb: cell ") and "raised InputError: unknown collapse rule 'most'" in err


def test_report_command_resolves_a_run_folder_or_a_saved_baseline(tmp_path: Path) -> None:
    from run_factory import manifest, outcomes, write_run

    from goldenkit.baselines import save_baseline
    from goldenkit.commands._report import _resolve

    rows = [(f"r{i}", "A", ["PASS", "PASS", "FAIL"] if i % 3 else ["FAIL", "FAIL", "PASS"]) for i in range(6)]
    run_dir = write_run(tmp_path / "results", manifest("base"), outcomes(rows, run_id="base"))
    from goldenkit.results import read_run

    save_baseline(read_run(run_dir), name="main", baselines_dir=tmp_path / "baselines")
    assert _resolve(str(run_dir), str(tmp_path / "results"), str(tmp_path / "baselines")).run_id == "base"
    saved = _resolve("main", str(tmp_path / "results"), str(tmp_path / "baselines"))
    assert saved.name == "main" and saved.path == tmp_path / "baselines" / "main.json"


def test_a_finished_kernel_is_shut_down_never_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jupyter_client sends SIGINT before a shutdown request; the kernel then may log
    ``KeyboardInterrupt caught in kernel``. goldenkit's kernels get the shutdown request alone."""
    import signal

    from jupyter_client.manager import KernelManager
    from nbformat.v4 import new_code_cell, new_notebook

    from goldenkit.notebooks import execute_notebook

    sent: list[int] = []
    original = KernelManager._async_signal_kernel

    async def record(self: KernelManager, signum: int) -> None:
        sent.append(signum)
        await original(self, signum)

    monkeypatch.setattr(KernelManager, "_async_signal_kernel", record)
    nb = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": ["parameters"]}), new_code_cell("x + 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    result = execute_notebook(path, {"x": 41}, tmp_path / "out", html=False)
    executed = nbformat.read(result.notebook, as_version=4)
    assert executed.cells[-1].outputs[0]["data"]["text/plain"] == "42"
    assert signal.SIGINT not in sent


def test_notebooks_of_one_call_share_a_kernel_but_never_a_name(tmp_path: Path) -> None:
    """execute_notebooks runs its jobs in one kernel (one start, one import of goldenkit's report stack),
    each in an empty namespace; a kernel a job broke (a cell past its timeout) is replaced for the next."""
    from goldenkit.errors import GoldenkitError, InfrastructureError
    from goldenkit.notebooks import execute_notebooks

    probe = "import os, sys\nprint(os.getpid(), 'secret' in globals(), 'goldenkit.report' in sys.modules)"
    first = _notebook(tmp_path / "first.ipynb", "secret = x", probe)
    second = _notebook(tmp_path / "second.ipynb", probe)
    runs = execute_notebooks([(first, {"x": 7}, None), (second, {}, "second")], tmp_path / "out")
    said = [nbformat.read(r.notebook, as_version=4).cells[-1].outputs[0]["text"].split() for r in runs]
    assert said[0][1:] == ["True", "True"]  # the report stack was imported as the kernel started
    assert said[1] == [said[0][0], "False", "True"]  # the same kernel, without the first notebook's names
    assert all(r.html is not None and r.html.is_file() for r in runs)

    slow = _notebook(tmp_path / "slow.ipynb", "import time\ntime.sleep(60)")
    after = _notebook(tmp_path / "after.ipynb", probe)
    with pytest.raises(GoldenkitError) as exc:
        execute_notebooks([(slow, {}, None), (after, {}, None)], tmp_path / "out2", timeout=5)
    assert isinstance(exc.value, InfrastructureError) and "slow.ipynb" in str(exc.value)
    replaced = nbformat.read(tmp_path / "out2" / "after.ipynb", as_version=4).cells[-1].outputs[0]["text"].split()
    assert replaced[1] == "False"  # the next notebook ran, in a fresh kernel


def test_the_report_command_imports_no_statistics_before_its_kernel() -> None:
    """`goldenkit report` reaches its notebooks without the statistics stack (the kernel loads it) and
    without the IRI grammar jsonschema's format checkers compile when nbformat loads (about 2 s together)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "import goldenkit.notebooks as nb\n"
        "def seen(jobs, out, timeout=None):\n"
        "    nb._papermill()\n"
        "    print(sorted(m for m in ('goldenkit.stats', 'scipy.stats', 'rfc3987_syntax') if m in sys.modules))\n"
        "    print('papermill' in sys.modules)\n"
        "    return []\n"
        "nb.execute_notebooks = seen\n"
        "from goldenkit.cli import main\n"
        f"main(['report', {str(DATA / 'cand')!r}, '--baseline', {str(DATA / 'base')!r}])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.split("\n")[:2] == ["[]", "True"], done.stdout + done.stderr
