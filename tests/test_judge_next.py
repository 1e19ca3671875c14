"""`goldenkit judge next`: the rows to label next, drawn with recorded probabilities tied to the judge's doubt.

Every candidate gets a probability > 0 (floored), the probabilities sum to --n, and the Poisson draw's
size averages --n over many seeds (checked with a bound of the Poisson-binomial's variance); the file it
writes is accepted by `goldenkit judge label` once the verdicts are filled in, and the estimate then
uses those labels with their probabilities.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_judge_evidence import judged_run, planted

from goldenkit.cli import main
from goldenkit.results import LABELS_FILE, label_plan, read_labels
from goldenkit.results._judge_next import FLOOR_SHARE, sampling_probabilities
from goldenkit.stats import OVERALL, ppi_mean


def _run(tmp_path: Path, m: int = 150, seed: int = 0) -> tuple[Path, np.ndarray, list[str]]:
    """A run whose judge splits its 3 repeats on every 5th row and agrees with itself elsewhere."""
    human, judge, slices = planted(m, seed=seed)
    ids = list(slices)
    verdicts = {r: ([True, False, bool(judge[i])] if i % 5 == 0 else [bool(judge[i])] * 3) for i, r in enumerate(ids)}
    return judged_run(tmp_path, "j", verdicts, slices), human, ids


def test_probabilities_are_positive_capped_and_sum_to_n() -> None:
    err = np.array([0.5] * 5 + [0.01] * 95)
    p = sampling_probabilities(err, 20)
    assert p.sum() == pytest.approx(20) and (p <= 1).all()
    assert p.min() >= FLOOR_SHARE * 20 / 100 - 1e-12 and p[:5].min() > p[5:].max()
    assert (sampling_probabilities(np.array([0.9, 0.9, 0.0]), 5) == 1).all()  # n >= rows: every row


def test_the_rows_the_judge_doubts_are_drawn_more_often(tmp_path: Path) -> None:
    run, _, ids = _run(tmp_path)
    plan = label_plan(run, n=25, seed=1)
    rows = plan.rows.set_index("row_id")
    assert (rows["probability"] > 0).all() and rows["probability"].sum() == pytest.approx(25)
    passed = set(rows.index[rows["judge"] == "PASS"])  # the row's own verdict is PASS: no hard-grader doubt
    split = [r for i, r in enumerate(ids) if i % 5 == 0 and r in passed]
    steady = [r for i, r in enumerate(ids) if i % 5 and r in passed]
    assert rows.loc[split, "probability"].min() > rows.loc[steady, "probability"].max()
    failed = rows.loc[[r for i, r in enumerate(ids) if i % 5 and r not in passed], "probability"]
    assert failed.min() > rows.loc[steady, "probability"].max()  # the judge fails what the contract passed
    again = label_plan(run, n=25, seed=1)
    assert list(again.drawn["row_id"]) == list(plan.drawn["row_id"])  # the seed reproduces the draw


def test_the_expected_count_is_n_over_many_seeds(tmp_path: Path) -> None:
    run, _, _ = _run(tmp_path)
    first = label_plan(run, n=25, seed=0)
    p = first.rows["probability"].to_numpy()
    seeds = 100
    total = sum(len(label_plan(run, n=25, seed=s).drawn) for s in range(seeds))
    # the total is a sum of independent Bernoulli(p_i) over seeds x rows: mean 25 * seeds, variance
    # seeds * sum p(1 - p); 5 standard deviations is a false alarm once in ~3.5 million runs
    sd = math.sqrt(seeds * float((p * (1 - p)).sum()))
    assert abs(total - 25 * seeds) <= 5 * sd


def _fill(path: Path, human: np.ndarray, ids: list[str]) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line["human"] is None:
            line["human"] = "PASS" if human[ids.index(line["id"])] else "FAIL"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return lines


def test_the_file_it_writes_is_accepted_by_judge_label_and_used(tmp_path: Path, capsys: Any) -> None:
    run, human, ids = _run(tmp_path)
    out = tmp_path / "next.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "30", "--seed", "7", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "seed 7" in said and "no valid interval yet" in said and "refunds pass rate interval goes from" in said
    unfilled = [json.loads(line) for line in out.read_text().splitlines()]
    assert unfilled and all(line["human"] is None and 0 < line["probability"] <= 1 for line in unfilled)
    assert main(["judge", "label", str(out), "--run", str(run)]) == 1  # a verdict left empty: refused whole
    assert not (run / LABELS_FILE).exists()
    lines = _fill(out, human, ids)
    assert main(["judge", "label", str(out), "--run", str(run)]) == 0
    stored = {lab.row_id: lab.probability for lab in read_labels(run)}
    assert stored == {line["id"]: line["probability"] for line in lines}
    capsys.readouterr()
    assert main(["judge", "estimate", "--run", str(run), "--json"]) == 0
    overall = {r["slice"]: r for r in json.loads(capsys.readouterr().out)["rows"]}[OVERALL]
    assert overall["n_human"] == len(lines) and overall["method"] in ("ppi++", "ppi++ weighted")


def test_a_later_draw_records_the_known_rows_with_probability_one(tmp_path: Path, capsys: Any) -> None:
    run, human, ids = _run(tmp_path)
    first = tmp_path / "first.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "30", "--seed", "1", "-o", str(first)]) == 0
    known = _fill(first, human, ids)
    assert main(["judge", "label", str(first), "--run", str(run)]) == 0
    second = tmp_path / "second.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "30", "--seed", "2", "-o", str(second)]) == 0
    assert "re-records the" in capsys.readouterr().out
    lines = [json.loads(line) for line in second.read_text().splitlines()]
    again = {x["id"]: x for x in lines if x["human"] is not None}
    assert again == {x["id"]: {**x, "probability": 1.0} for x in known}
    new = [x for x in lines if x["human"] is None]
    assert new and not {x["id"] for x in new} & set(again)
    # the rows not labelled yet rest on the new draw alone: a small one widens the interval, and says so
    small = label_plan(run, n=3, seed=3)
    assert small.widths.loc[OVERALL, "after"] > small.widths.loc[OVERALL, "before"]
    assert small.needed is not None and small.needed > 3
    enough = label_plan(run, n=small.needed, seed=3)
    assert enough.widths.loc[OVERALL, "after"] < enough.widths.loc[OVERALL, "before"] and enough.needed is None
    assert main(["judge", "next", "--run", str(run), "--n", "3", "--seed", "3", "-o", str(tmp_path / "s.jsonl")]) == 0
    assert f"draw about {small.needed} rows (--n {small.needed})" in capsys.readouterr().out


def test_the_expected_width_after_labelling_is_what_the_draws_give(tmp_path: Path) -> None:
    """The predicted half-width (PPI variance at the current error estimates) against the mean half-width
    of the weighted estimate over simulated draws labelled by the planted humans."""
    run, human, ids = _run(tmp_path, m=300, seed=5)
    plan = label_plan(run, n=60, seed=0)
    rows = plan.rows.set_index("row_id").loc[ids]
    judge = (rows["judge"] == "PASS").to_numpy(dtype=float)
    p = rows["probability"].to_numpy()
    rng = np.random.default_rng(11)
    halves = []
    for _ in range(300):
        drawn = rng.random(len(ids)) < p
        est = ppi_mean(judge[~drawn], judge[drawn], human[drawn], weights=1 / p[drawn])
        halves.append(1.959963984540054 * est.se)
    predicted = plan.widths.loc[OVERALL, "after"]
    # no labels yet: every slice's judge error starts at 1/2, so the prediction may only err wide
    assert float(np.mean(halves)) <= predicted * 1.05
    assert math.isnan(plan.widths.loc[OVERALL, "before"])
