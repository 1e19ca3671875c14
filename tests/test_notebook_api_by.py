"""The notebook API finished: comparisons by tag display as comparisons by slice (forest plot, tables, the
compare notebook, ``goldenkit compare --by``), an unknown column gets a did-you-mean, ``goldenkit.report``
resolves without an import, the bundled notebooks copy out for a pip user, and docs/reports.md gives the
papermill command of every notebook with all its parameters.

The two runs are tests/test_notebook_api.py's (six rows, one repeat), by tag worked out by hand there:
x = r0 r1 r4 (b 1, c 0, 3 paired), y = r1 r2 (b 0, c 1, 2 paired), (untagged) = r3 r5 (b 1, c 0, 2 paired),
overall b 2, c 1 over 6 rows.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import papermill as pm
import pytest
from run_factory import manifest, outcomes, write_run

import goldenkit
from goldenkit import report
from goldenkit.cli import main as cli_main
from goldenkit.errors import InputError
from goldenkit.notebooks import NOTEBOOK_NAMES, execute_notebook
from goldenkit.stats import OVERALL, UNTAGGED

ROOT = Path(__file__).resolve().parents[1]
TAGS = {"r0": ["x"], "r1": ["x", "y", "x"], "r2": ["y"], "r3": [], "r4": ["x"], "r5": []}
BASE = {"r0": "PASS", "r1": "PASS", "r2": "FAIL", "r3": "PASS", "r4": "FAIL", "r5": "PASS"}
CAND = {"r0": "FAIL", "r1": "PASS", "r2": "PASS", "r3": "FAIL", "r4": "FAIL", "r5": "PASS"}
BY_TAG = {UNTAGGED: (1, 0, 2), "x": (1, 0, 3), "y": (0, 1, 2), OVERALL: (2, 1, 6)}  # b, c, paired


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for run_id, verdicts in (("base", BASE), ("cand", CAND)):
        rows = [(r, "a" if int(r[1]) < 3 else "b", (v,)) for r, v in verdicts.items()]
        write_run(root, manifest(run_id, repeats=1), outcomes(rows, run_id=run_id, tags=TAGS))
    return root


def test_forest_figure_and_tables_take_a_comparison_by_tag(results: Path) -> None:
    cmp = goldenkit.compare_runs("base", "cand", by="tags", results_dir=results)
    fig = report.forest_figure(cmp)  # was KeyError: 'slice'
    assert fig.labels == [f"{name} (b={b}, c={c}, n={n})" for name, (b, c, n) in BY_TAG.items()]
    assert fig.title == "cand vs base (by tags)"
    table = report.format_compare_table(cmp)
    assert table.index.name == "tags" and list(table.index) == list(BY_TAG)
    assert [(int(b), int(c)) for b, c in zip(table["b (broke)"], table["c (fixed)"], strict=True)] == [
        (b, c) for b, c, _ in BY_TAG.values()
    ]
    assert "Holm p (all tags, 3)" in table.columns
    shown = report.table_html(table)
    assert "<th>tags</th>" in shown and "<td>(untagged)</td>" in shown
    got, differences = report.try_compare(
        goldenkit.read_run(results / "base"), goldenkit.read_run(results / "cand"), by="tags"
    )
    assert differences == [] and got is not None and got.by == "tags"
    assert "Why it broke" in report.clusters_html(got)  # the clusters read the flips, whatever the lines are


def test_an_unknown_column_gets_a_did_you_mean(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match=r"cannot group by 'tag': .*\(did you mean tags\?\)"):
        goldenkit.compare_runs("base", "cand", by="tag", results_dir=results)
    assert cli_main(["compare", "base", "cand", "--by", "tag", "--results-dir", str(results)]) == 1
    assert "(did you mean tags?)" in capsys.readouterr().err


def test_goldenkit_compare_by_tags_prints_a_line_per_tag(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["compare", "base", "cand", "--by", "tags", "--results-dir", str(results)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("tags "))
    got = {c[0]: c for c in (re.split(r"\s{2,}", line.strip()) for line in lines[head + 1 : head + 5])}
    assert set(got) == set(BY_TAG)
    for name, (b, c, _) in BY_TAG.items():
        assert got[name][4:6] == [str(b), str(c)], name  # columns: tags rows base cand b c ...


@pytest.mark.slow
def test_the_compare_notebook_draws_a_comparison_by_tag(results: Path, tmp_path: Path) -> None:
    params = {"base": str(results / "base"), "cand": str(results / "cand"), "by": "tags"}
    done = execute_notebook("compare", params, tmp_path / "out")
    assert done.html is not None
    text = done.html.read_text(encoding="utf-8")
    assert len(re.findall(r'<figure class="gk-figure"><img [^>]*src="data:image/svg', text)) == 1  # the forest plot
    assert "<th>tags</th>" in text and "<td>x</td>" in text and "<td>y</td>" in text


def test_goldenkit_report_resolves_without_importing_it_first() -> None:
    code = (
        "import sys, goldenkit as gk; assert 'goldenkit.report' not in sys.modules; "
        "print(gk.report.forest_figure.__module__, gk.audit.open_audit.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["goldenkit.report", "open_audit"]
    with pytest.raises(AttributeError, match="has no attribute 'reports'"):
        goldenkit.reports  # noqa: B018


def test_notebooks_copy_writes_the_bundled_notebooks_for_a_pip_user(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nb"
    assert cli_main(["notebooks", "copy", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}.ipynb" for n in NOTEBOOK_NAMES)
    for name in NOTEBOOK_NAMES:
        assert (out / f"{name}.ipynb").read_bytes() == (ROOT / "notebooks" / f"{name}.ipynb").read_bytes()
    assert f"wrote {out / 'report.ipynb'}" in capsys.readouterr().out
    assert cli_main(["notebooks", "copy", str(out)]) == 0  # again: nothing changes
    assert f"unchanged {out / 'audit.ipynb'}" in capsys.readouterr().out
    (out / "audit.ipynb").write_text("{}", encoding="utf-8")  # the user's own edit is kept
    assert cli_main(["notebooks", "copy", str(out)]) == 1
    assert f"{out / 'audit.ipynb'}: exists with other content; pass --force" in capsys.readouterr().err
    assert (out / "audit.ipynb").read_text(encoding="utf-8") == "{}"
    assert cli_main(["notebooks", "copy", str(out), "--force"]) == 0
    assert (out / "audit.ipynb").read_bytes() == (ROOT / "notebooks" / "audit.ipynb").read_bytes()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert cli_main(["notebooks", "copy", str(tmp_path / "file")]) == 1
    assert "not a folder" in capsys.readouterr().err


def test_docs_give_the_papermill_command_of_each_notebook_with_every_parameter() -> None:
    doc = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    assert "goldenkit/notebooks/" not in doc  # the notebooks are the top-level notebooks/ folder
    commands = re.findall(r"^    (papermill .+?)(?<!\\)$", doc.replace("\\\n", " "), flags=re.MULTILINE)
    by_name = {}
    for command in commands:
        argv = shlex.split(command)
        by_name[Path(argv[1]).stem] = argv
    assert set(by_name) == set(NOTEBOOK_NAMES)
    for name, argv in by_name.items():
        given = {argv[i + 1] for i, a in enumerate(argv) if a == "-p"}
        given |= {argv[i + 1].split(":")[0] for i, a in enumerate(argv) if a == "-y"}
        params = pm.inspect_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"))
        assert given == set(params), name
