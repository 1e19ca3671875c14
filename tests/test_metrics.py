"""run_metrics on a hand-built outcomes table: attempt-weighted counts, intervals clustered by row."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from _shared import shared_path

from goldenkit.metrics import METRIC_COLUMNS, run_metrics
from goldenkit.records import Case, Turn

Z = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def g(passed, error=False, score=None):
    return {"passed": passed, "score": score, "reason": "", "error": error}


# row, tags, verdict, contract, trajectory, judge
ROWS = [
    # "refuse-1" must refuse (tag); 3 repeats: PASS, FAIL, ERROR
    ("refuse-1", ["refusal"], "PASS", g(True), None, g(True)),
    ("refuse-1", ["refusal"], "FAIL", g(False), None, g(True)),
    ("refuse-1", ["refusal"], "ERROR", None, None, None),
    # hallucination rows (tag and id prefix): 1 FAIL, 2 PASS, 1 SKIPPED
    ("h-1", ["hallucinate-policy"], "FAIL", g(False), g(True), g(False)),
    ("h-1", ["hallucinate-policy"], "PASS", g(True), g(True), g(None)),  # judge PENDING
    ("hallucinate-x", [], "PASS", g(True), g(True), g(None, error=True)),  # judge error
    ("hallucinate-x", [], "SKIPPED", g(None), None, None),
    # ordinary rows
    ("r-1", ["multi_turn"], "PASS", g(True), g(True), g(True)),
    ("r-1", ["multi_turn"], "FAIL", g(True), g(False), g(False)),
    ("r-2", [], "FAIL", g(False), g(False), g(True)),
]


def outcomes() -> pd.DataFrame:
    recs = []
    for i, (rid, tags, verdict, contract, traj, judge) in enumerate(ROWS):
        graders = {k: v for k, v in (("contract", contract), ("trajectory", traj), ("judge", judge)) if v is not None}
        recs.append(
            {
                "run_id": "r",
                "row_id": rid,
                "repeat": i,
                "tags": tags,
                "verdict": verdict,
                "graders": graders if verdict != "ERROR" else {},
            }
        )
    return pd.DataFrame(recs)


def metric(df: pd.DataFrame, name: str) -> dict:
    return df.set_index("metric").loc[name].to_dict()


def test_counts_by_hand() -> None:
    m = run_metrics(outcomes())
    assert tuple(m.columns) == METRIC_COLUMNS
    # decided attempts (PASS/FAIL): 8 of 10 (one ERROR, one SKIPPED out). PASS: 4.
    expected = {
        "overall_pass_rate": (4, 8),
        # contract decided on the 8 decided attempts: passed on refuse-1#0, h-1#1, hallucinate-x#0, r-1#0, r-1#1
        "pass_rate:contract": (5, 8),
        # trajectory present on h-1 x2, hallucinate-x#0, r-1 x2, r-2: passed 4 of 6
        "pass_rate:trajectory": (4, 6),
        "trajectory_accuracy": (4, 6),
        # judge: ACCEPT refuse-1 x2, r-1#0, r-2; REJECT h-1#0, r-1#1; PENDING and error excluded -> 4 / 6
        "pass_rate:judge": (4, 6),
        "judge_accept_rate": (4, 6),
        # must refuse: refuse-1's two decided attempts, contract passed on one
        "refusal_accuracy": (1, 2),
        # hallucination rows h-1 and hallucinate-x: decided attempts 3, failures 1
        "hallucination_rate": (1, 3),
    }
    for name, (hits, total) in expected.items():
        row = metric(m, name)
        assert (row["hits"], row["total"]) == (hits, total), name
        assert row["rate"] == pytest.approx(hits / total)
        assert row["ci_low"] <= row["rate"] <= row["ci_high"], name
    # intervals clustered by row, by hand. overall: 8 attempts in 5 rows, p = 1/2; per-row sums of
    # (s - p): refuse-1 0, h-1 0, hallucinate-x +1/2, r-1 0, r-2 -1/2 -> SE^2 = (1/4 + 1/4) / 8^2 = 1/128,
    # n_eff = p(1-p) / SE^2 = 32, capped at the 8 attempts: Wilson(4, 8)
    lo, hi = wilson(4, 8)
    row = metric(m, "overall_pass_rate")
    assert (row["rows"], row["ci_low"], row["ci_high"]) == (5, pytest.approx(lo), pytest.approx(hi))
    # refusal: 2 attempts of ONE row are one observation, n_eff = 1: Wilson at p = 1/2, n = 1
    # = 1/2 -+ z / (2 sqrt(1 + z^2))
    half = Z / (2 * math.sqrt(1 + Z * Z))
    row = metric(m, "refusal_accuracy")
    assert (row["rows"], row["ci_low"], row["ci_high"]) == (1, pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert metric(m, "hallucination_rate")["lower_is_better"] is True
    assert metric(m, "overall_pass_rate")["lower_is_better"] is False
    assert metric(m, "judge_accept_rate")["grader"] == "judge"


def test_repeats_that_agree_count_once_per_row() -> None:
    # rows a, c, d pass 3 of 3, b fails 3 of 3: 12 attempts, p = 3/4. Per-row sums of (s - p): 3/4 x 3 and
    # -9/4 -> SE^2 = (3 * 9/16 + 81/16) / 144 = 3/64, n_eff = (3/16) / (3/64) = 4 = the rows: Wilson(3, 4),
    # not the narrower Wilson(9, 12) over attempts as if they were independent
    df = pd.DataFrame({"row_id": list("aaabbbcccddd"), "verdict": ["PASS"] * 3 + ["FAIL"] * 3 + ["PASS"] * 6})
    row = metric(run_metrics(df), "overall_pass_rate")
    lo, hi = wilson(3, 4)
    assert (row["hits"], row["total"], row["rows"]) == (9, 12, 4)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    naive = wilson(9, 12)
    assert row["ci_low"] < naive[0] and row["ci_high"] > naive[1]


def test_one_attempt_per_row_is_the_plain_wilson_interval() -> None:
    # every row its own cluster: SE^2 = p(1-p)/n exactly, so n_eff = n (Miller's formula, 1/n variance)
    df = pd.DataFrame({"row_id": [f"r{i}" for i in range(10)], "verdict": ["PASS"] * 7 + ["FAIL"] * 3})
    row = metric(run_metrics(df), "overall_pass_rate")
    lo, hi = wilson(7, 10)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))


def test_attempt_weighted_not_mean_of_row_rates() -> None:
    # row a: 1 of 1 passes; row b: 1 of 3 passes. Mean of row rates = (1 + 1/3)/2 = 0.667; attempts: 2/4 = 0.5
    df = pd.DataFrame({"row_id": ["a", "b", "b", "b"], "verdict": ["PASS", "PASS", "FAIL", "FAIL"]})
    assert metric(run_metrics(df), "overall_pass_rate")["rate"] == 0.5


def test_refusal_rows_from_cases_and_explicit_lists() -> None:
    df = outcomes()
    cases = {"r-2": Case(id="r-2", shape="contract", turns=(Turn(user="x"),), expect={"refuse": True})}
    row = metric(run_metrics(df, cases=cases), "refusal_accuracy")
    assert (row["hits"], row["total"]) == (0, 1)
    raw = {"r-1": {"prompt": "x", "expect": {"refusal": True}}}
    row = metric(run_metrics(df, cases=raw), "refusal_accuracy")
    assert (row["hits"], row["total"]) == (2, 2)
    row = metric(run_metrics(df, refusal_rows=["r-1", "r-2"], hallucination_rows=["r-2"]), "hallucination_rate")
    assert (row["hits"], row["total"]) == (1, 1)


def test_refusal_rows_from_a_dataset_that_lacks_some_outcome_rows(tmp_path: Path) -> None:
    # outcomes of rows the dataset does not hold (another version, a subset) are not refusal rows
    from goldenkit.dataset import read_dataset, rows_to_jsonl

    row = {"id": "r-2", "slice": "s", "tags": [], "split": "dev", "source": "t", "added": "2026-11-30"}
    row["case"] = {"prompt": "x", "expect": {"refusal": True}}
    (tmp_path / "dataset.jsonl").write_bytes(rows_to_jsonl([row]))
    manifest = {"name": "m", "version": "1", "changelog": [{"version": "1", "date": "2026-11-30", "why": "test"}]}
    (tmp_path / "dataset.json").write_text(json.dumps(manifest), encoding="utf-8")
    got = metric(run_metrics(outcomes(), cases=read_dataset(tmp_path)), "refusal_accuracy")
    assert (got["hits"], got["total"]) == (0, 1)


def test_empty_metrics_are_nan_with_zero_total() -> None:
    df = pd.DataFrame({"row_id": ["a"], "verdict": ["ERROR"]})
    m = run_metrics(df)
    row = metric(m, "overall_pass_rate")
    assert row["total"] == 0 and math.isnan(row["rate"]) and math.isnan(row["ci_low"])
    assert set(m["metric"]) == {
        "overall_pass_rate",
        "judge_accept_rate",
        "refusal_accuracy",
        "hallucination_rate",
        "trajectory_accuracy",
        "weighted_score",
    }
    score = metric(m, "weighted_score")  # no rate is defined: no score, and never a 0
    assert score["total"] == 0 and math.isnan(score["rate"])


def test_graders_cell_from_parquet_map_or_json() -> None:
    df = pd.DataFrame(
        {
            "row_id": ["a", "b"],
            "verdict": ["PASS", "FAIL"],
            "graders": [[("contract", g(True))], '{"contract": {"passed": false}}'],
        }
    )
    row = metric(run_metrics(df), "pass_rate:contract")
    assert (row["hits"], row["total"]) == (1, 2)


def _golden_outcomes(run: dict) -> pd.DataFrame:
    """One outcome per attempt of a golden-harness run: verdict, contract and judge results as goldenkit graders."""
    recs = []
    for case in run["cases"]:
        for a in case.get("attempts", []):
            graders = {}
            if a.get("contract"):
                graders["contract"] = {"passed": a["contract"]["passed"], "score": None, "reason": "", "error": False}
            judge = a.get("judge")
            if judge:
                decided = {"ACCEPT": True, "REJECT": False}.get(judge["decision"])
                graders["judge"] = {"passed": decided, "score": judge.get("score"), "reason": "", "error": False}
            tags = ["refusal"] if "REFUSAL" in case["kinds"] else []
            recs.append({"row_id": case["caseId"], "verdict": a["status"], "tags": tags, "graders": graders})
    return pd.DataFrame(recs)


@pytest.mark.parametrize("name", ["baselines__generation-v1.json", "baselines__live-generation-v1.json"])
def test_golden_harness_runs_reproduced(name: str) -> None:
    path = shared_path("interop", "qa-guru__java-ai-golden", name)
    run = json.loads(path.read_text(encoding="utf-8"))
    m = run_metrics(_golden_outcomes(run))
    theirs = run["metrics"]
    for ours, key in [
        ("overall_pass_rate", "overallPassRate"),
        ("pass_rate:contract", "contractPassRate"),
        ("judge_accept_rate", "judgeAcceptRate"),
        ("hallucination_rate", "hallucinationRate"),
        ("refusal_accuracy", "refusalAccuracy"),
    ]:
        row = metric(m, ours) if ours in set(m["metric"]) else {"hits": 0, "total": 0}
        assert (row["hits"], row["total"]) == (theirs[key]["hits"], theirs[key]["total"]), (name, key)
        ci = theirs[key].get("ci95")
        if ci and row["total"]:
            # the harness's interval is Wilson over attempts as if independent; ours is clustered by row:
            # never narrower than one attempt per row would give, and equal when every row has one attempt
            if row["rows"] == row["total"]:
                assert (row["ci_low"], row["ci_high"]) == (pytest.approx(ci["lower"]), pytest.approx(ci["upper"]))
            else:
                assert row["ci_low"] <= row["rate"] <= row["ci_high"]
