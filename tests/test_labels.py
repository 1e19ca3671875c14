"""Human labels as data: labels.jsonl beside a run, append-only, bound to the answers the human read.

`goldenkit judge label FILE --run R` checks every line before it writes any; a label follows the answers
(it applies to a regrade of the same answers, and is refused for a run whose answers differ); a label
without a sampling probability was picked by hand: kept and shown, never used for inference.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main
from goldenkit.errors import InputError
from goldenkit.results import LABELS_FILE, add_labels, read_labels, read_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    rows = [("r1", "a", ["PASS"]), ("r2", "a", ["FAIL"]), ("r3", "b", ["PASS"])]
    return write_run(tmp_path / "results", manifest("judged", repeats=1), outcomes(rows, run_id="judged"))


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_labels_are_stored_beside_the_run_never_in_its_outcomes(run_dir: Path, tmp_path: Path, capsys) -> None:
    before = (run_dir / "outcomes.jsonl").read_bytes()
    f = _write(tmp_path / "l.jsonl", [{"id": "r1", "human": "FAIL"}, {"id": "r2", "human": "FAIL", "probability": 0.5}])
    assert main(["judge", "label", str(f), "--run", str(run_dir), "--who", "ana"]) == 0
    assert "2 human label(s) stored" in capsys.readouterr().out
    assert (run_dir / "outcomes.jsonl").read_bytes() == before
    labels = {lab.row_id: lab for lab in read_labels(run_dir)}
    assert labels["r1"].human == "FAIL" and labels["r1"].who == "ana" and not labels["r1"].designed
    assert labels["r2"].probability == 0.5 and labels["r2"].designed and labels["r2"].repeat is None
    # append-only: a later label of the same row supersedes, the file keeps both
    add_labels(run_dir, [{"id": "r1", "human": "PASS", "probability": 0.25}], who="bo")
    assert len((run_dir / LABELS_FILE).read_text().splitlines()) == 3
    assert {lab.row_id: lab.human for lab in read_labels(run_dir)}["r1"] == "PASS"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "nope", "human": "PASS"}, "l.jsonl:2: row 'nope' is not in the run"),
        ({"id": "r1", "human": "pass"}, "l.jsonl:2: human must be PASS or FAIL"),
        ({"id": "r1", "human": "PASS", "probability": 0}, "l.jsonl:2: probability must be a number in"),
        ({"id": "r1", "human": "PASS", "repeat": 2}, "l.jsonl:2: row 'r1' repeat 2 is not in the run"),
        ({"human": "PASS"}, "l.jsonl:2: a label needs a non-empty string id"),
    ],
)
def test_a_bad_line_is_one_error_naming_file_and_line_and_nothing_is_written(
    run_dir: Path, tmp_path: Path, capsys, line: dict, message: str
) -> None:
    f = _write(tmp_path / "l.jsonl", [{"id": "r2", "human": "FAIL"}, line])
    assert main(["judge", "label", str(f), "--run", str(run_dir)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (run_dir / LABELS_FILE).exists()


def test_labels_follow_the_answers_not_the_run(run_dir: Path, tmp_path: Path) -> None:
    add_labels(run_dir, [{"id": "r3", "human": "FAIL", "probability": 0.2}])
    # a regrade of the same answers reads the labels of the run it was regraded from
    same = write_run(
        tmp_path / "results",
        {**manifest("regraded", repeats=1), "regraded_from": {"run_id": "judged", "path": str(run_dir)}},
        outcomes([("r1", "a", ["PASS"]), ("r2", "a", ["FAIL"]), ("r3", "b", ["PASS"])], run_id="regraded"),
    )
    assert [(lab.row_id, lab.human) for lab in read_labels(same)] == [("r3", "FAIL")]
    # other answers: the label is refused, naming the row
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    text = (other / "outcomes.jsonl").read_text().replace('"answer', '"another answer')
    (other / "outcomes.jsonl").write_text(text)
    (other / "outcomes.parquet").unlink()
    with pytest.raises(InputError, match="row 'r3' was given on other answers"):
        read_labels(read_run(other))
