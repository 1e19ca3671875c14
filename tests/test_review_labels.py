"""Human labels and the judge-graded figures, read as a hostile user would use them.

Each test is a problem found by trying to break labels, the prediction-powered estimate or the places
that show it: labels given twice, labels whose answers changed since, a judge whose verdicts leave
nothing to estimate a variance from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_judge_evidence import judged_run, planted

from goldenkit import audit
from goldenkit.cli import main
from goldenkit.errors import InputError
from goldenkit.results import LABELS_FILE, read_labels
from goldenkit.results._judge_evidence import ROUNDS_FILE
from goldenkit.stats import ppi_mean, wilson_ci


def _runs(tmp_path: Path) -> tuple[Path, Path, np.ndarray, list[str]]:
    """A candidate and a baseline graded by the same judge (85% agreement) on 120 rows."""
    human, judge, slices = planted(120, seed=1)
    verdicts = {r: [bool(judge[i])] for i, r in enumerate(slices)}
    return (
        judged_run(tmp_path, "cand", verdicts, slices),
        judged_run(tmp_path, "base", verdicts, slices),
        human,
        list(slices),
    )


def _label(tmp_path: Path, run: Path, lines: list[dict[str, Any]], *extra: str) -> int:
    f = tmp_path / "labels-in.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return main(["judge", "label", str(f), "--run", str(run), *extra])


def test_labels_all_alike_never_give_a_zero_width_interval() -> None:
    # ten labelled rows, all PASS, on which the judge said PASS too: nothing for lambda to use, and the
    # plug-in variance of the labels is 0; an interval [1, 1] would claim every row passes, for certain
    est = ppi_mean([1, 0, 1, 1, 0] * 20, [1] * 10, [1] * 10)
    assert est.ci_high - est.ci_low > 0.1
    assert (est.ci_low, est.ci_high) == pytest.approx(wilson_ci(10, 10, 0.95))  # the labels' own interval
    # a judge that passed every row, and labels that agree: the judge's rate alone has variance 0 too
    same = ppi_mean([1] * 100, [1] * 10, [1] * 10)
    assert same.ci_high - same.ci_low > 0.1
    # a paired difference whose labelled rows all held (0 on each) is not known to be exactly 0
    diff = ppi_mean([0, 1, -1, 0] * 25, [0] * 10, [0] * 10, bounds=(-1.0, 1.0))
    u = 1.959963984540054**2 / (10 + 1.959963984540054**2)  # Wilson's bound on a share none of 10 showed
    assert (diff.estimate, diff.ci_low, diff.ci_high) == pytest.approx((0.0, -u, u))
    # unequal probabilities: the labels' effective size (Kish) sets the width
    weighted = ppi_mean([1] * 90, [1] * 6, [1] * 6, weights=[2, 2, 2, 8, 8, 8])
    n_eff = 30**2 / (3 * 4 + 3 * 64)
    assert (weighted.ci_low, weighted.ci_high) == pytest.approx((_wilson_low(n_eff), 1.0), abs=1e-9)


def _wilson_low(n: float, z: float = 1.959963984540054) -> float:
    """The Wilson lower bound when every one of ``n`` (not necessarily whole) trials succeeded."""
    return n / (n + z * z)


def test_a_row_labelled_twice_in_one_file_is_refused_naming_both_lines(tmp_path: Path, capsys: Any) -> None:
    cand, _, _, ids = _runs(tmp_path)
    lines = [{"id": ids[0], "human": "PASS"}, {"id": ids[1], "human": "PASS"}, {"id": ids[0], "human": "FAIL"}]
    assert _label(tmp_path, cand, lines, "--probability", "0.5") == 1
    err = capsys.readouterr().err
    assert f"labels-in.jsonl:3: row {ids[0]!r} is labelled on line 1 too" in err and len(err.splitlines()) == 1
    assert not (cand / LABELS_FILE).exists()  # refused whole


def test_a_label_replacing_an_earlier_one_is_said_and_keeps_its_design(tmp_path: Path, capsys: Any) -> None:
    cand, _, _, ids = _runs(tmp_path)
    assert (
        _label(
            tmp_path, cand, [{"id": ids[0], "human": "PASS"}, {"id": ids[1], "human": "PASS"}], "--probability", "0.5"
        )
        == 0
    )
    capsys.readouterr()
    assert _label(tmp_path, cand, [{"id": ids[0], "human": "FAIL"}]) == 0  # a correction, without a probability
    said = capsys.readouterr().out
    assert "1 replace(s) an earlier label of the same row" in said
    now = {lab.row_id: lab for lab in read_labels(cand)}
    assert now[ids[0]].human == "FAIL" and now[ids[0]].probability == 0.5  # the draw, not the route, decides


def test_compare_still_compares_when_labels_were_given_on_other_answers(tmp_path: Path, capsys: Any) -> None:
    cand, base, human, ids = _runs(tmp_path)
    code = main(["compare", str(base), str(cand)])
    assert (
        _label(
            tmp_path,
            cand,
            [{"id": r, "human": "PASS" if human[i] else "FAIL"} for i, r in enumerate(ids) if i % 4 == 0],
            "--probability",
            "0.25",
        )
        == 0
    )
    outcomes = cand / "outcomes.jsonl"  # the answer of a labelled row edited by hand since
    lines = [json.loads(x) for x in outcomes.read_text(encoding="utf-8").splitlines()]
    lines[0]["response"] = "edited by hand"
    outcomes.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (cand / "outcomes.parquet").unlink(missing_ok=True)
    capsys.readouterr()
    assert main(["compare", str(base), str(cand)]) == code  # the comparison of the outcomes is unchanged
    both = capsys.readouterr()
    assert "judge-graded figures not shown" in both.err and "other answers than this run's" in both.err


def test_labels_given_on_other_answers_can_be_given_again(tmp_path: Path, capsys: Any) -> None:
    # the refusal says "label this run's rows again": the later label on this run's answers must then stand
    cand, _, _, ids = _runs(tmp_path)
    assert _label(tmp_path, cand, [{"id": ids[0], "human": "PASS"}]) == 0
    outcomes = cand / "outcomes.jsonl"
    lines = [json.loads(x) for x in outcomes.read_text(encoding="utf-8").splitlines()]
    lines[0]["response"] = "edited by hand"
    outcomes.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (cand / "outcomes.parquet").unlink(missing_ok=True)
    with pytest.raises(InputError, match="other answers than this run's"):
        read_labels(cand)
    assert _label(tmp_path, cand, [{"id": ids[0], "human": "FAIL"}]) == 0
    assert [(lab.row_id, lab.human) for lab in read_labels(cand)] == [(ids[0], "FAIL")]


def _edit_answer(run: Path, index: int = 0) -> None:
    """Edit by hand the answer of the ``index``-th outcome line (its labels are then on other answers)."""
    outcomes = run / "outcomes.jsonl"
    lines = [json.loads(x) for x in outcomes.read_text(encoding="utf-8").splitlines()]
    lines[index]["response"] = "edited by hand"
    outcomes.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (run / "outcomes.parquet").unlink(missing_ok=True)


def test_the_audit_widget_opens_on_labels_given_on_other_answers_and_they_can_be_given_again(
    tmp_path: Path,
) -> None:
    # the notebook's widget must open to let the person label the rows again, as the refusal asks
    human, judge, slices = planted(60, seed=5)
    ids = list(slices)
    run = judged_run(tmp_path / "results", "c", {r: [bool(judge[i])] for i, r in enumerate(ids)}, slices, own="FAIL")
    assert _label(tmp_path, run, [{"id": r, "human": "PASS"} for r in ids[:3]]) == 0
    _edit_answer(run, 0)
    _edit_answer(run, 2)
    with pytest.raises(InputError, match=r"the human labels of 2 rows \('r000', 'r002'\) were given on other answers"):
        read_labels(run)
    session = audit.open_audit(str(run), audits_dir=tmp_path / "audits", day="2026-12-05", user="ana")
    assert "judge-graded figures not shown" in str(session.judge_figures())
    w = session.widget()
    assert w.panel is not None and "other answers than this run&#x27;s" in w.panel.figures.value
    for row in ("r000", "r002"):
        assert w.panel.labelling.label(row, "FAIL").human == "FAIL"
    w.panel.redraw()
    assert "judge-graded pass rate of run c" in w.panel.figures.value and "not shown" not in w.panel.figures.value


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"probability": 0}, "the probability of row 'r000' must be a number in (0, 1], got 0"),
        ({"probability": 2.5}, "the probability of row 'r000' must be a number in (0, 1], got 2.5"),
        ({"probability": True}, "the probability of row 'r000' must be a number in (0, 1], got True"),
        ({"drawn": "nope"}, "the round drew row 'nope', which has no probability in the round"),
    ],
)
def test_a_forged_round_is_refused_naming_its_line(
    tmp_path: Path, capsys: Any, edit: dict[str, Any], said: str
) -> None:
    cand, _, human, ids = _runs(tmp_path)
    extra = {"seed": 1, "n": 5, "at": "2026-12-05T10:00:00+00:00", "drawn": ["r000", "r001"]}
    good = {**extra, "schema_version": 1, "probabilities": {r: 0.2 for r in ids}}
    line = json.loads(json.dumps(good))
    if "probability" in edit:
        line["probabilities"]["r000"] = edit["probability"]
    else:
        line["drawn"].append(edit["drawn"])
    (cand / ROUNDS_FILE).write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["judge", "estimate", "--run", str(cand)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{ROUNDS_FILE}:2: {said}") and len(err.splitlines()) == 1
