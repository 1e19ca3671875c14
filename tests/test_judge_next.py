"""`goldenkit judge next`: the rows to label next, drawn with recorded probabilities tied to the judge's doubt.

Every candidate gets a probability > 0 (floored), the probabilities sum to --n, and the Poisson draw's
size averages --n over many seeds (checked with a bound of the Poisson-binomial's variance); the file it
writes is accepted by `goldenkit judge label` once the verdicts are filled in, and the estimate then
uses those labels with their probabilities.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_judge_evidence import judged_run, planted

from goldenkit.cli import main
from goldenkit.results import (
    LABELS_FILE,
    add_labels,
    judge_estimates,
    judge_rows,
    label_plan,
    read_labels,
    read_run,
)
from goldenkit.results._judge_evidence import LabelRound, _rounds_line, add_round, read_rounds
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
    assert "seed 7" in said and "the refunds pass rate: no valid interval yet" in said and "after labelling +/-" in said
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


def _estimate(capsys: Any, run: Path) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["judge", "estimate", "--run", str(run), "--json"]) == 0
    return {r["slice"]: r for r in json.loads(capsys.readouterr().out)["rows"]}[OVERALL]


def test_rounds_are_recorded_and_averaged_by_their_sizes(tmp_path: Path, capsys: Any) -> None:
    run, human, ids = _run(tmp_path)
    first = tmp_path / "first.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "30", "--seed", "1", "-o", str(first)]) == 0
    one = _fill(first, human, ids)
    assert main(["judge", "label", str(first), "--run", str(run)]) == 0
    after_one = _estimate(capsys, run)
    assert (after_one["rounds"], after_one["round_rows"], after_one["n_human"]) == (1, 30, len(one))
    second = tmp_path / "second.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "20", "--seed", "2", "-o", str(second)]) == 0
    said = capsys.readouterr().out
    before, after = (
        float(x) for x in re.findall(r"pass rate interval goes from \+/-([\d.]+) points to \+/-([\d.]+)", said)[-1]
    )
    assert after < before  # a later draw adds to the first one
    rounds = read_rounds(read_run(run))
    assert [len(r.drawn) for r in rounds] == [len(one), len(second.read_text().splitlines())]
    assert all(rounds[1].probabilities[x["id"]] == 1.0 for x in one)  # known rows: probability 1
    two = _fill(second, human, ids)
    assert not {x["id"] for x in two} & {x["id"] for x in one}
    # a third draw nobody labels yet is shown, not used
    assert main(["judge", "next", "--run", str(run), "--n", "5", "--seed", "3", "-o", str(tmp_path / "x.jsonl")]) == 0
    assert _estimate(capsys, run)["rounds"] == 1
    assert main(["judge", "label", str(second), "--run", str(run)]) == 0
    got = _estimate(capsys, run)
    assert (got["rounds"], got["round_rows"]) == (2, 50) and "1 round(s) of judge next not used until every row" in got[
        "reason"
    ]
    parts = []
    verdicts = _judge_of(run)
    judge = np.array([verdicts[r] for r in ids])
    for rd in rounds:
        p = np.array([rd.probabilities[r] for r in ids])
        used = (p >= 1) | np.isin(ids, rd.drawn)
        parts.append(ppi_mean(judge[~used], judge[used], human[used], weights=1 / p[used]))
    want = 0.6 * parts[0].estimate + 0.4 * parts[1].estimate
    se = math.sqrt(0.36 * parts[0].se ** 2 + 0.16 * parts[1].se ** 2)
    assert (got["estimate"], got["se"]) == pytest.approx((want, se), abs=1e-12)


def _judge_of(run: Path) -> dict[str, float]:
    from goldenkit.results import judge_rows

    rows = judge_rows(run)
    return dict(zip(rows["row_id"], (rows["judge"] == "PASS").astype(float), strict=True))


def test_a_first_draw_after_labels_of_one_design_adds_to_them(tmp_path: Path, capsys: Any) -> None:
    """The design's labels are a round 0 weighing their number: 3 more rows narrow the interval a little,
    and the estimate is the size-weighted average of the design's PPI++ and the round's."""
    run, human, ids = _run(tmp_path)
    lines = [{"id": r, "human": "PASS" if human[i] else "FAIL"} for i, r in enumerate(ids) if i % 4 == 1]
    f = tmp_path / "design.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["judge", "label", str(f), "--run", str(run), "--probability", "0.25"]) == 0
    small = label_plan(run, n=3, seed=3)
    w = small.widths.loc[OVERALL]
    assert w["after"] < w["before"] and small.needed is None
    drawn = tmp_path / "small.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "3", "--seed", "3", "-o", str(drawn)]) == 0
    said = capsys.readouterr().out
    assert f"the pass rate interval goes from +/-{100 * w['before']:.1f} points" in said
    assert "expected widths: the judge taken to disagree with you on" in said
    _fill(drawn, human, ids)
    assert main(["judge", "label", str(drawn), "--run", str(run)]) == 0
    got = _estimate(capsys, run)
    assert (got["rounds"], got["round_rows"]) == (1, len(lines) + 3) and "labels of one design, then 1 round" in got[
        "reason"
    ]
    verdicts = _judge_of(run)
    judge = np.array([verdicts[r] for r in ids])
    design = np.array([i % 4 == 1 for i in range(len(ids))])
    first = ppi_mean(judge[~design], judge[design], human[design])
    rd = read_rounds(read_run(run))[0]
    p = np.array([rd.probabilities[r] for r in ids])
    used = (p >= 1) | np.isin(ids, rd.drawn)
    second = ppi_mean(judge[~used], judge[used], human[used], weights=1 / p[used])
    a = len(lines) / (len(lines) + 3)
    want = (a * first.estimate + (1 - a) * second.estimate, math.sqrt(a**2 * first.se**2 + (1 - a) ** 2 * second.se**2))
    assert (got["estimate"], got["se"]) == pytest.approx(want, abs=1e-12)


def test_two_adaptive_rounds_cover_at_the_nominal_level() -> None:
    """Round 2's probabilities depend on round 1's labels (the judge's observed error per verdict); the
    averaged estimate still covers the human pass rate at 95% (2,000 simulated pairs of rounds)."""
    rng = np.random.default_rng(2026)
    m, sims, hits = 400, 2000, 0
    ids = [f"r{i:03d}" for i in range(m)]
    for _ in range(sims):
        human = (rng.random(m) < 0.6).astype(float)
        err = np.where(human == 1, 0.08, 0.25)  # a judge biased towards PASS
        judge = np.where(rng.random(m) < err, 1 - human, human)
        p1 = np.full(m, 0.08)
        d1 = rng.random(m) < p1
        seen = [(judge[d1] == v) for v in (0.0, 1.0)]
        wrong = [(float((human[d1][s] != v).sum()) + 1) / (s.sum() + 2) for s, v in zip(seen, (0.0, 1.0), strict=True)]
        e = np.where(judge == 1, wrong[1], wrong[0])
        p2 = np.ones(m)
        p2[~d1] = sampling_probabilities(e[~d1], 30)
        d2 = (rng.random(m) < p2) & ~d1
        rounds = [
            LabelRound(0, 32, "", dict(zip(ids, p1, strict=True)), tuple(np.array(ids)[d1])),
            LabelRound(1, 30, "", dict(zip(ids, p2, strict=True)), tuple(np.array(ids)[d2])),
        ]
        frame = pd.DataFrame(
            {
                "row_id": ids,
                "judge": np.where(judge == 1, "PASS", "FAIL"),
                "human": np.where(human == 1, "PASS", "FAIL"),
            }
        )
        line = _rounds_line(frame, rounds, 0.05)
        assert line is not None
        hits += line["ci_low"] <= human.mean() <= line["ci_high"]
    # 95% nominal: more than 3 standard deviations below it would be a real shortfall
    assert hits / sims >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / sims), hits / sims


Z95 = 1.959963984540054


def _word(v: float) -> str:
    return "PASS" if v else "FAIL"


def _realised(frame: pd.DataFrame, plan: Any, before: dict[str, Any] | None, human: np.ndarray, rng: Any) -> float:
    """The mean half-width judge estimate would give after labelling draws of ``plan``: the round's weighted
    PPI++ (the rows labelled already known), averaged with the estimate ``before`` it by the rows asked."""
    q = frame["row_id"].map(plan.round.probabilities).to_numpy()
    f = (frame["judge"] == "PASS").to_numpy(dtype=float)
    cand = q < 1
    halves = []
    for _ in range(50):
        used = ~cand | (rng.random(len(q)) < q)
        se = ppi_mean(f[~used], f[used], human[used], weights=1 / q[used]).se
        if before is not None:
            a = before["round_rows"] / (before["round_rows"] + plan.n)
            se = math.sqrt(a**2 * before["se"] ** 2 + (1 - a) ** 2 * se**2)
        halves.append(Z95 * se)
    return float(np.mean(halves))


def test_the_expected_width_is_within_a_stated_factor_of_what_the_draws_give(tmp_path: Path) -> None:
    """Planted judges agreeing with the humans on 70% and 90% of 240 rows (three runs each), 50 draws of a
    round of 40 per run (300 in all, per round): the forecast against the mean realised half-width of
    the estimate. Before any label the forecast rests on the 20% prior, so it errs wide for the 90% judge
    and narrow for the 70% one, within a factor 1.6 (0.90 and 1.44 here); after a round of labels it rests on
    the measured disagreement, within a factor 1.3 (1.06, 1.10). It is never wider than the interval now."""
    rng = np.random.default_rng(7)
    ratios: dict[tuple[float, int], list[float]] = {}
    for agree in (0.7, 0.9):
        for seed in range(3):
            human, judge, slices = planted(240, seed=seed, agree=agree)
            ids = list(slices)
            run = judged_run(
                tmp_path / f"{agree}-{seed}", "j", {r: [bool(judge[i])] for i, r in enumerate(ids)}, slices
            )
            frame = pd.DataFrame({"row_id": ids, "judge": np.where(judge == 1, "PASS", "FAIL")})
            first = label_plan(run, n=40, seed=seed)
            ratios.setdefault((agree, 1), []).append(
                first.widths.loc[OVERALL, "after"] / _realised(frame, first, None, human, rng)
            )
            add_round(read_run(run), first.round)
            p1 = first.round.probabilities
            add_labels(
                run, [{"id": r, "human": _word(human[ids.index(r)]), "probability": p1[r]} for r in first.round.drawn]
            )
            second = label_plan(run, n=40, seed=seed + 10)
            w = second.widths.loc[OVERALL]
            assert w["after"] <= w["before"]
            ratios.setdefault((agree, 2), []).append(
                w["after"] / _realised(frame, second, judge_estimates(run).loc[OVERALL], human, rng)
            )
    mean = {k: float(np.mean(v)) for k, v in ratios.items()}  # 0.90, 1.44 before; 1.06, 1.10 after
    assert all(1 / 1.6 <= mean[(a, 1)] <= 1.6 for a in (0.7, 0.9)), mean
    assert all(1 / 1.3 <= mean[(a, 2)] <= 1.3 for a in (0.7, 0.9)), mean


def test_until_a_round_is_labelled_the_labels_of_one_design_stand(tmp_path: Path, capsys: Any) -> None:
    run, human, ids = _run(tmp_path)
    lines = [{"id": r, "human": "PASS" if human[i] else "FAIL"} for i, r in enumerate(ids) if i % 4 == 1]
    f = tmp_path / "design.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["judge", "label", str(f), "--run", str(run), "--probability", "0.25"]) == 0
    one_design = _estimate(capsys, run)
    drawn = tmp_path / "next.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "20", "--seed", "4", "-o", str(drawn)]) == 0
    half = [json.loads(x) for x in drawn.read_text().splitlines()][:3]  # three of the round's rows labelled
    for x in half:
        x["human"] = "PASS" if human[ids.index(x["id"])] else "FAIL"
    drawn.write_text("".join(json.dumps(x) + "\n" for x in half))
    assert main(["judge", "label", str(drawn), "--run", str(run)]) == 0
    got = _estimate(capsys, run)
    assert (got["estimate"], got["n_human"], got["rounds"]) == (one_design["estimate"], len(lines), 0)
    assert got["n_unused"] == 3 and "drawn by a round of judge next not fully labelled yet" in got["reason"]
    assert "1 round(s) of judge next not used until every row they drew is labelled" in got["reason"]


def test_before_any_label_the_forecast_starts_from_the_judges_calibration(tmp_path: Path) -> None:
    """With ``[judge] calibration`` in the goldenkit.toml the run recorded, a report for the run's judge
    version sets the prior disagreement (5% here: a narrower forecast than the 20% default); a report for
    another judge version is not this judge's, and the default stands."""
    run, _, _ = _run(tmp_path)
    default = label_plan(run, n=25, seed=1)
    assert "the default 20%" in default.judge_error
    version = json.loads((run / "run.json").read_text())["judge_version"]
    report = {"judge_version": version, "n": 200, "rates": {"accuracy": {"rate": 0.95, "n": 200}}}
    (tmp_path / "cal.json").write_text(json.dumps(report))
    (tmp_path / "goldenkit.toml").write_text('[judge]\ncalibration = "cal.json"\n')
    man = json.loads((run / "run.json").read_text())
    man["config"] = {**man.get("config", {}), "extra": {"config_file": str(tmp_path / "goldenkit.toml")}}
    (run / "run.json").write_text(json.dumps(man))
    calibrated = label_plan(run, n=25, seed=1)
    assert "calibration cal.json (200 pairs)" in calibrated.judge_error
    assert calibrated.widths.loc[OVERALL, "after"] < default.widths.loc[OVERALL, "after"]
    (tmp_path / "cal.json").write_text(json.dumps({**report, "judge_version": "another-judge"}))
    assert "the default 20%" in label_plan(run, n=25, seed=1).judge_error


def test_a_group_the_draw_cannot_narrow_is_said_to_stay_never_to_widen(tmp_path: Path) -> None:
    run, _, _ = _run(tmp_path)
    plan = label_plan(run, n=25, seed=1)
    widths = pd.DataFrame(
        {"before": [0.10, 0.08], "after": [0.10, 0.06], "forecast": [0.14, 0.06], "expected_labels": [2.0, 25.0]},
        index=pd.Index(["billing", OVERALL], name="slice"),
    )
    lines = dataclasses.replace(plan, widths=widths).width_lines(judge_estimates(run))
    assert (
        lines[0]
        == "  the billing pass rate interval stays at +/-10.0 points (too few of these rows drawn to narrow it)"
    )
    assert lines[1] == "  the pass rate interval goes from +/-8.0 points to +/-6.0 points (expected)"
    assert lines[2].startswith("  expected widths: the judge taken to disagree with you on")


def test_after_a_lucky_round_a_small_draw_is_said_to_stay_and_the_rows_it_needs_named(
    tmp_path: Path, capsys: Any
) -> None:
    """Ten labels that all agree with the judge give an interval narrower than the judge's measured
    disagreement predicts; a draw that is expected to add more variance than it removes is shown as
    staying (never widening), and judge next names the draw that would narrow it."""
    run, _, _ = _run(tmp_path)
    first = label_plan(run, n=10, seed=1)
    add_round(read_run(run), first.round)
    judge = judge_rows(run).set_index("row_id")["judge"]
    p1 = first.round.probabilities
    add_labels(run, [{"id": r, "human": judge[r], "probability": p1[r]} for r in first.round.drawn])
    small = label_plan(run, n=3, seed=2)
    w = small.widths.loc[OVERALL]
    assert w["forecast"] > w["before"] == w["after"] and small.needed is not None and small.needed > 3
    out = tmp_path / "small.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "3", "--seed", "2", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"the pass rate interval stays at +/-{100 * w['before']:.1f} points" in said
    assert f"draw about {small.needed} rows (--n {small.needed}) for it to narrow" in said
