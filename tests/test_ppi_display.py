"""The judge-graded figures where people read them: `goldenkit compare` text, report.html and compare.html.

A pair of runs graded by the same (planted) judge, with human labels drawn by a design on the same rows
of both: every place shows the judge-only figure beside the prediction-powered one, with n human,
N judged, lambda and the effective sample size gained, equal to what `judge_estimates` /
`judge_difference` compute; a run without a judge grader shows none of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from run_factory import manifest, outcomes, write_run
from test_judge_evidence import judged_run, planted

from goldenkit import report
from goldenkit._display import judge_figures_line, judge_figures_table, pct, signed_pct, table_html
from goldenkit.cli import main
from goldenkit.results import add_labels, judge_difference, judge_estimates, read_run
from goldenkit.stats import OVERALL


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Baseline and candidate, 120 rows each, one judge version; 60 rows labelled on both, probability 1/2."""
    root = tmp_path_factory.mktemp("ppi") / "results"
    human_b, judge_b, slices = planted(120, seed=3)
    human_c, judge_c, _ = planted(120, seed=4)
    base = judged_run(root, "base", {r: [bool(judge_b[i])] for i, r in enumerate(slices)}, slices)
    cand = judged_run(root, "cand", {r: [bool(judge_c[i])] for i, r in enumerate(slices)}, slices)
    for run, human in ((base, human_b), (cand, human_c)):
        lines = [{"id": r, "human": "PASS" if human[i] else "FAIL"} for i, r in enumerate(slices) if i % 2 == 0]
        add_labels(run, lines, who="ana", probability=1 / 2)
    return base, cand


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs without a judge grader."""
    root = tmp_path_factory.mktemp("plain") / "results"
    rows = [(f"p{i}", "refunds" if i % 2 else "billing", ["PASS" if i % 4 else "FAIL"]) for i in range(20)]
    made = [write_run(root, manifest(name, repeats=1), outcomes(rows, run_id=name)) for name in ("b", "c")]
    return made[0], made[1]


def _compare_text(capsys: Any, base: Path, cand: Path, *extra: str) -> str:
    capsys.readouterr()
    main(["compare", str(base), str(cand), *extra])
    return str(capsys.readouterr().out)


def test_compare_text_shows_the_judge_only_and_prediction_powered_difference(
    pair: tuple[Path, Path], capsys: Any
) -> None:
    base, cand = pair
    table = judge_difference(cand, base)
    overall = table.loc[OVERALL]
    assert overall["method"] == "ppi++" and overall["n_human"] == 60 and overall["n_judged"] == 120
    out = _compare_text(capsys, base, cand)
    assert "judge-graded difference (candidate minus baseline, same judge" in out
    line = judge_figures_line(table, OVERALL, diff=True)
    assert f"  {OVERALL}: {line}" in out
    for text in (signed_pct(overall["estimate"]), signed_pct(overall["judge_diff"]), f"lambda {overall['lam']:.2f}"):
        assert text in line
    assert f"ESS gained {overall['ess_gain']:+.1f}" in line and "n human 60, N judged 120" in line
    for key in ("billing", "refunds"):
        assert f"  {key}: {judge_figures_line(table, key, diff=True)}" in out
    doc = json.loads(_compare_text(capsys, base, cand, "--json"))
    by_key = {rec["slice"]: rec for rec in doc["judge_graded"]}
    assert by_key[OVERALL]["estimate"] == pytest.approx(overall["estimate"])


def test_compare_text_of_runs_without_a_judge_has_no_judge_figures(plain: tuple[Path, Path], capsys: Any) -> None:
    out = _compare_text(capsys, *plain)
    assert "base: b" in out and "judge-graded" not in out and "prediction-powered" not in out


def test_a_pair_graded_by_different_judges_shows_no_difference(pair: tuple[Path, Path], tmp_path: Path) -> None:
    base, _ = pair
    human, judge, slices = planted(120, seed=4)
    other = judged_run(tmp_path, "other", {r: [bool(judge[i])] for i, r in enumerate(slices)}, slices, jv="judge-b")
    html = report.judge_figures_html(read_run(other), read_run(base))
    assert "Judge-graded pass rate" in html and "Paired difference" not in html


def test_the_report_block_is_judge_estimates_formatted_and_empty_without_a_judge(
    pair: tuple[Path, Path], plain: tuple[Path, Path]
) -> None:
    _, cand = pair
    table = judge_estimates(cand)
    html = report.judge_figures_html(read_run(cand))
    assert str(table_html(judge_figures_table(table))) in html
    overall = table.loc[OVERALL]
    for text in (pct(overall["estimate"]), pct(overall["ci_low"]), pct(overall["ci_high"]), pct(overall["judge_rate"])):
        assert text in html
    assert "prediction-powered" in html and "ESS gained" in html and "lambda" in html and "N judged" in html
    assert report.judge_figures_html(read_run(plain[1])) == ""


def test_report_and_compare_pages_show_the_figures_of_a_judged_pair(pair: tuple[Path, Path]) -> None:
    base, cand = pair
    page = report.run_page(str(cand))
    rate = judge_estimates(cand).loc[OVERALL]
    assert "Judge-graded pass rate" in page and pct(rate["estimate"]) in page and f"{rate['lam']:.2f}" in page
    page = report.compare_page(str(base), str(cand), results_dir=str(cand.parent))
    diff = judge_difference(cand, base).loc[OVERALL]
    assert "Paired difference, candidate minus baseline (same judge)" in page
    assert signed_pct(diff["estimate"]) in page and f"{diff['ess_gain']:+.1f}" in page


def test_report_page_of_a_run_without_a_judge_shows_no_judge_figures(plain: tuple[Path, Path]) -> None:
    page = report.run_page(str(plain[1]))
    assert "Pass rate per slice" in page and "Judge-graded" not in page and "prediction-powered" not in page


def test_the_leaderboard_notes_each_judged_run_with_labels(
    pair: tuple[Path, Path], plain: tuple[Path, Path], capsys: Any
) -> None:
    base, cand = pair
    capsys.readouterr()
    main(["leaderboard", str(base), str(cand)])
    out = capsys.readouterr().out
    for run in (base, cand):
        line = judge_figures_line(judge_estimates(run), OVERALL)
        assert f"note: run {run.name}: judge-graded pass rate: {line}" in out
        assert "prediction-powered" in line and "n human 60, N judged 120" in line
    main(["leaderboard", *map(str, plain)])
    assert "judge-graded" not in capsys.readouterr().out
