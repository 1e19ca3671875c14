"""The leaderboard notebook's display functions, the notebook itself (papermill) and `report --leaderboard`."""

from __future__ import annotations

import ast
import html
from pathlib import Path

import nbformat
import papermill as pm
import pytest
from leaderboard_fixtures import rendered_leaderboard, three_runs
from matplotlib.figure import Figure

from goldenkit import leaderboard
from goldenkit.cli import main
from goldenkit.leaderboards._report import (
    difference_matrix,
    format_leaderboard_table,
    interval_figure,
    notes_block,
    slice_leaderboards,
)
from goldenkit.notebooks import notebook_path

NOTEBOOK = notebook_path("leaderboard")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return three_runs(tmp_path_factory.mktemp("results"))


def test_table(runs: list[Path]) -> None:
    t = format_leaderboard_table(leaderboard(runs))
    strong, weak = "m-<b>strong</b> (strong)", "m-weak (weak)"  # each run's label (its model here), then its id
    assert list(t.index) == [strong, "m-close (close)", weak]
    assert list(t["group"]) == ["top", "top", "A"]
    assert list(t["rank"]) == ["1–2", "1–2", "3"]
    assert t.loc[strong, "passed / graded rows"] == "60 / 60" and t.loc[weak, "pass rate"] == "58.3%"
    assert {"95% Wilson", "pass@3", "pass^3", "error rows"} <= set(t.columns)


def test_difference_matrix_is_antisymmetric_with_marks(runs: list[Path]) -> None:
    lb = leaderboard(runs)
    m = difference_matrix(lb)
    assert list(m.index) == list(m.columns) == ["strong", "close", "weak"]
    assert m.loc["strong", "strong"] == "·"
    assert m.loc["strong", "close"].startswith("+5.0 pp (p_holm") and "*" not in m.loc["strong", "close"]
    assert m.loc["close", "strong"] == "-5.0 pp"
    assert m.loc["strong", "weak"].startswith("+41.7 pp *") and m.loc["weak", "strong"] == "-41.7 pp *"


def test_figure_and_slices(runs: list[Path]) -> None:
    fig = interval_figure(leaderboard(runs))
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    by_height = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()), strict=True), reverse=True)
    assert [label for _, label in by_height] == [
        "m-<b>strong</b> (strong) [top, rank 1–2]",
        "m-close (close) [top, rank 1–2]",
        "m-weak (weak) [A, rank 3]",
    ]
    s = slice_leaderboards(leaderboard(runs, by_slice=True))
    assert list(s.index) == ["(overall)", "billing", "refunds"] and list(s.columns) == ["strong", "close", "weak"]
    assert s.loc["(overall)", "weak"].startswith("58.3% (A, n=60)")
    with pytest.raises(ValueError, match="by_slice=True"):
        slice_leaderboards(leaderboard(runs))


def test_notes_are_escaped(runs: list[Path]) -> None:
    lb = leaderboard(runs)
    lb.notes.append("run <b>x</b> is odd")
    block = notes_block(lb)
    assert html.escape("run <b>x</b> is odd") in block and "<b>x</b>" not in block
    assert "3 runs, repeats collapsed by majority, alpha 0.05" in block


def test_notebook_parameters_are_literals_and_cells_thin() -> None:
    params = pm.inspect_notebook(str(NOTEBOOK))
    assert set(params) == {"runs", "results_dir", "alpha", "rule", "frontier_seed", "frontier_resamples"}
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    for stmt in ast.parse(code[0].source).body:
        assert isinstance(stmt, ast.Assign)
        ast.literal_eval(stmt.value)
    for cell in code[1:]:
        assert cell.outputs == [] and len(cell.source.splitlines()) <= 6, cell.source  # as test_notebooks asks


def test_report_leaderboard_renders_the_notebook() -> None:
    page = rendered_leaderboard()
    text = page.read_text(encoding="utf-8")
    assert "goldenkit leaderboard: strong, close, weak" in text
    assert "m-&lt;b&gt;strong&lt;/b&gt;" in text and "m-<b>strong</b>" not in text  # escaped model id
    executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    assert "+41.7 pp *" in text and "58.3% (A, n=60)" in text


def test_report_leaderboard_not_comparable_exits_4_before_a_kernel(
    runs: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    odd = tmp_path / "odd"
    odd.mkdir()
    man = json.loads((runs[0] / "run.json").read_text())
    man.update(run_id="odd", repeats=5)
    (odd / "run.json").write_text(json.dumps(man))
    code = main(["report", "--leaderboard", *map(str, runs), str(odd), "-o", str(tmp_path / "out")])
    assert code == 4
    assert "run odd vs strong: repeats differ: 3 vs 5" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert main(["report"]) == 1
