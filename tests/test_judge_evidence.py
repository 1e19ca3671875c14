"""Judge-graded figures with valid intervals: `goldenkit judge estimate` and the bias `judge calibrate` measures.

Runs are written with run_factory (a "judge" entry in each outcome's graders), labels stored with
`goldenkit judge label`; the estimates are checked against `goldenkit.stats.ppi_mean` on the same
verdicts (itself checked against ppi-python in tests/test_ppi.py) and, for the paired difference,
`ppi_mean(bounds=(-1, 1))` against ppi-python's `ppi_mean_ci` on the differences.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from run_factory import manifest, outcomes, write_run

from goldenkit._model_family import model_family, self_preference
from goldenkit.cli import main
from goldenkit.graders._calibration import calibration_report, length_agreement
from goldenkit.stats import OVERALL, ppi_mean, wilson_ci

JV = "judge-model+rubric.aaaaaaaaaaaa+params.bbbbbbbbbbbb"


def judged_run(
    root: Path, run_id: str, judge: dict[str, list[Any]], slices: dict[str, str], *, own: str = "PASS", jv: str = JV
) -> Path:
    """A run whose row ``r`` has the judge's per-repeat ``judge[r]`` (True pass, False fail, None PENDING)."""
    repeats = max(len(v) for v in judge.values())
    frame = outcomes([(r, slices[r], [own] * len(v)) for r, v in judge.items()], run_id=run_id)
    frame["graders"] = [
        {**g, "judge": {"passed": judge[r][rep], "score": None, "reason": "", "error": False}}
        for g, r, rep in zip(frame["graders"], frame["row_id"], frame["repeat"], strict=True)
    ]
    return write_run(root, manifest(run_id, repeats=repeats, judge_version=jv), frame)


def planted(m: int = 120, seed: int = 0, agree: float = 0.85) -> tuple[np.ndarray, np.ndarray, dict[str, str]]:
    """(human, judge) 0/1 per row r000..; the judge agrees with the human with probability ``agree``."""
    rng = np.random.default_rng(seed)
    human = (rng.random(m) < 0.7).astype(float)
    judge = np.where(rng.random(m) < agree, human, 1.0 - human)
    return human, judge, {f"r{i:03d}": ("refunds" if i % 3 else "billing") for i in range(m)}


def label(tmp_path: Path, run: Path, lines: list[dict[str, Any]], *extra: str) -> None:
    f = tmp_path / f"labels-{run.name}-{len(list(tmp_path.glob('labels-*')))}.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["judge", "label", str(f), "--run", str(run), *extra]) == 0


def estimate(capsys: Any, *args: str) -> dict[str, dict[str, Any]]:
    capsys.readouterr()
    assert main(["judge", "estimate", *args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {rec[doc["by"]]: rec for rec in doc["rows"]}


def test_without_labels_the_figure_is_the_judges_own_and_marked_so(tmp_path: Path, capsys: Any) -> None:
    human, judge, slices = planted()
    run = judged_run(tmp_path, "j", {r: [bool(judge[i])] for i, r in enumerate(slices)}, slices)
    rows = estimate(capsys, "--run", str(run))
    k, n = int(judge.sum()), len(judge)
    lo, hi = wilson_ci(k, n)
    overall = rows[OVERALL]
    assert (overall["n_judged"], overall["judge_k"], overall["method"]) == (n, k, "judge only")
    assert (overall["judge_ci_low"], overall["judge_ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert overall["estimate"] is None and overall["n_human"] == 0 and "no human label" in overall["reason"]
    assert main(["judge", "estimate", "--run", str(run)]) == 0
    out = capsys.readouterr().out
    assert "judge only (of the judge)" in out and "billing" in out and "refunds" in out


def test_equal_probabilities_give_plain_ppi_on_the_rows_collapsed_verdicts(tmp_path: Path, capsys: Any) -> None:
    human, judge, slices = planted()
    ids = list(slices)
    run = judged_run(tmp_path, "j", {r: [bool(judge[i])] for i, r in enumerate(ids)}, slices)
    chosen = np.arange(0, 120, 4)  # 30 rows, all drawn with probability 0.25
    label(
        tmp_path,
        run,
        [{"id": ids[i], "human": "PASS" if human[i] else "FAIL"} for i in chosen],
        "--probability",
        "0.25",
    )
    rows = estimate(capsys, "--run", str(run))
    mask = np.zeros(120, dtype=bool)
    mask[chosen] = True
    want = ppi_mean(judge[~mask], judge[mask], human[mask])
    got = rows[OVERALL]
    assert (got["method"], got["weighted"], got["n_human"]) == ("ppi++", False, 30)
    assert (got["estimate"], got["ci_low"], got["ci_high"], got["lam"]) == pytest.approx(
        (want.estimate, want.ci_low, want.ci_high, want.lam), abs=1e-12
    )
    assert got["ess_gain"] == pytest.approx(want.effective_n - 30)
    billing = [i for i in chosen if slices[ids[i]] == "billing"]
    assert rows["billing"]["n_human"] == len(billing)


def test_unequal_probabilities_take_the_weighted_path(tmp_path: Path, capsys: Any) -> None:
    human, judge, slices = planted(seed=1)
    ids = list(slices)
    run = judged_run(tmp_path, "j", {r: [bool(judge[i])] for i, r in enumerate(ids)}, slices)
    chosen = np.arange(0, 120, 3)
    prob = np.where(chosen % 2 == 0, 0.2, 0.6)
    lines = [
        {"id": ids[i], "human": "PASS" if human[i] else "FAIL", "probability": float(p)}
        for i, p in zip(chosen, prob, strict=True)
    ]
    label(tmp_path, run, lines)
    got = estimate(capsys, "--run", str(run))[OVERALL]
    mask = np.zeros(120, dtype=bool)
    mask[chosen] = True
    want = ppi_mean(judge[~mask], judge[mask], human[mask], weights=1 / prob)
    plain = ppi_mean(judge[~mask], judge[mask], human[mask])
    assert (got["method"], got["weighted"]) == ("ppi++ weighted", True) and "1/probability" in got["reason"]
    assert (got["estimate"], got["ci_low"], got["ci_high"]) == pytest.approx(
        (want.estimate, want.ci_low, want.ci_high), abs=1e-12
    )
    assert got["estimate"] != pytest.approx(plain.estimate, abs=1e-6)


def test_hand_picked_labels_are_shown_and_refused_for_inference_with_the_reason(tmp_path: Path, capsys: Any) -> None:
    human, judge, slices = planted(seed=2)
    ids = list(slices)
    run = judged_run(tmp_path, "j", {r: [bool(judge[i])] for i, r in enumerate(ids)}, slices)
    label(tmp_path, run, [{"id": ids[i], "human": "FAIL"} for i in range(0, 120, 10)])  # no probability: by hand
    only_hand = estimate(capsys, "--run", str(run))[OVERALL]
    assert (only_hand["n_hand"], only_hand["n_human"], only_hand["method"]) == (12, 0, "judge only")
    assert "12 label(s) picked by hand, not drawn by a recorded design" in only_hand["reason"]
    designed = [{"id": ids[i], "human": "PASS" if human[i] else "FAIL"} for i in range(5, 120, 10)]
    label(tmp_path, run, designed, "--probability", "0.1")
    got = estimate(capsys, "--run", str(run))[OVERALL]
    mask = np.zeros(120, dtype=bool)
    mask[5::10] = True
    want = ppi_mean(judge[~mask], judge[mask], human[mask])  # the hand-picked rows count as unlabelled
    assert (got["n_hand"], got["n_human"], got["method"]) == (12, 12, "ppi++")
    assert got["estimate"] == pytest.approx(want.estimate, abs=1e-12)
    assert main(["judge", "estimate", "--run", str(run)]) == 0
    assert "never used for inference" in capsys.readouterr().out


def test_the_judge_verdict_is_the_judge_graders_collapsed_with_the_rule(tmp_path: Path, capsys: Any) -> None:
    judge = {"a": [True, True, False], "b": [True, None, None], "c": [False, False, True], "d": [True, True, True]}
    run = judged_run(tmp_path, "j", judge, dict.fromkeys(judge, "s"), own="FAIL")  # the row's own verdict: FAIL
    majority = estimate(capsys, "--run", str(run))[OVERALL]
    assert (majority["n_judged"], majority["judge_k"]) == (3, 2)  # b undecided: P,E,E under majority
    strict = estimate(capsys, "--run", str(run), "--rule", "all")[OVERALL]
    assert (strict["n_judged"], strict["judge_k"]) == (3, 1)  # only d passes every repeat; b is P,E,E again


def test_a_label_of_one_repeat_in_a_run_of_several_is_shown_not_used(tmp_path: Path, capsys: Any) -> None:
    judge = {f"r{i}": [i % 2 == 0, i % 3 == 0, True] for i in range(12)}
    run = judged_run(tmp_path, "j", judge, dict.fromkeys(judge, "s"))
    label(tmp_path, run, [{"id": "r1", "repeat": 1, "human": "PASS", "probability": 0.5}])
    got = estimate(capsys, "--run", str(run))[OVERALL]
    assert (got["n_unused"], got["n_human"]) == (1, 0) and "a label of one repeat" in got["reason"]


def test_the_paired_difference_is_ppi_on_the_rows_differences(tmp_path: Path, capsys: Any) -> None:
    human_b, judge_b, slices = planted(seed=3)
    human_c, judge_c, _ = planted(seed=4)
    ids = list(slices)
    base = judged_run(tmp_path, "base", {r: [bool(judge_b[i])] for i, r in enumerate(ids)}, slices)
    cand = judged_run(tmp_path, "cand", {r: [bool(judge_c[i])] for i, r in enumerate(ids)}, slices)
    chosen = np.arange(1, 120, 4)
    for run, human in ((base, human_b), (cand, human_c)):  # one draw, labelled on both runs
        lines = [{"id": ids[i], "human": "PASS" if human[i] else "FAIL"} for i in chosen]
        label(tmp_path, run, lines, "--probability", "0.25")
    got = estimate(capsys, "--run", str(cand), "--baseline", str(base))[OVERALL]
    mask = np.zeros(120, dtype=bool)
    mask[chosen] = True
    d_judge, d_human = judge_c - judge_b, human_c - human_b
    want = ppi_mean(d_judge[~mask], d_judge[mask], d_human[mask], bounds=(-1, 1))
    assert got["judge_diff"] == pytest.approx(d_judge.mean(), abs=1e-12) and got["method"] == "ppi++"
    assert (got["estimate"], got["ci_low"], got["ci_high"]) == pytest.approx(
        (want.estimate, want.ci_low, want.ci_high), abs=1e-12
    )
    other = judged_run(tmp_path, "other", {r: [True] for r in ids}, slices, jv="another+rubric.x+params.y")
    assert main(["judge", "estimate", "--run", str(other), "--baseline", str(base)]) == 4
    assert "judge_version" in capsys.readouterr().err


@pytest.mark.parametrize("seed", range(10))
def test_ppi_mean_on_differences_is_ppi_python(seed: int) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(10, 60)), int(rng.integers(50, 400))
    y = rng.integers(-1, 2, n).astype(float)
    fl = np.where(rng.random(n) < 0.8, y, rng.integers(-1, 2, n))
    fu = rng.integers(-1, 2, big_n).astype(float)
    got = ppi_mean(fu, fl, y, alpha=0.1, bounds=(-1, 1))
    lo, hi = ppi_py.ppi_mean_ci(y, fl, fu, alpha=0.1)
    assert got.estimate == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, fl, fu)[0]), abs=1e-9)
    assert (got.ci_low, got.ci_high) == pytest.approx((max(-1, float(lo[0])), min(1, float(hi[0]))), abs=1e-9)
    with pytest.raises(ValueError, match=r"values in \[-1, 1\]"):
        ppi_mean(fu, fl, y + 1.5, bounds=(-1, 1))


def test_calibration_reports_agreement_by_length_tertiles() -> None:
    lengths = [10, 20, 30, 100, 110, 120, 500, 600, 700, None]
    humans = ["ACCEPT"] * 10
    judges = ["ACCEPT", "ACCEPT", "ACCEPT", "ACCEPT", "REJECT", "ACCEPT", "REJECT", "REJECT", "ACCEPT", "REJECT"]
    groups = {g["group"]: g for g in length_agreement(lengths, humans, judges)}
    assert [(g["n"], g["min_chars"], g["max_chars"]) for g in groups.values()] == [
        (3, 10, 30),
        (3, 100, 120),
        (3, 500, 700),
    ]
    assert groups["short"]["agreement"] == 1.0 and groups["long"]["agreement"] == pytest.approx(1 / 3)
    assert groups["medium"]["judge_accept"] == pytest.approx(2 / 3) and groups["long"]["human_accept"] == 1.0
    report = calibration_report(
        list(zip(humans, judges, strict=True)), lengths=lengths, judge_model="gpt-4o", candidate_model="gpt-4o-mini"
    )
    data = report.to_dict()
    assert [g["group"] for g in data["by_length"]] == ["short", "medium", "long"]
    assert data["self_preference"]["flag"] and "SELF-PREFERENCE" in report.render() and "long" in report.render()


@pytest.mark.parametrize(
    ("judge", "candidate", "family"),
    [
        ("gpt-4o-2024-08-06", "openai/gpt-4o-mini", "gpt-4o"),
        ("claude-3-5-sonnet-latest", "anthropic.claude-3-haiku", "claude"),
        ("gemini-1.5-pro", "models/gemini-2.0-flash", "gemini"),
        ("llama3.1:70b", "meta-llama/Llama-3.1-8B-Instruct", "llama"),
        ("qwen2.5:72b", "Qwen/Qwen2.5-7B", "qwen"),
        ("gpt-4o", "gpt-4.1-mini", None),
        ("claude-3-opus", "gpt-4o", None),
        ("o3-mini", "o30-custom", None),
    ],
)
def test_the_self_preference_flag_names_a_shared_family(judge: str, candidate: str, family: str | None) -> None:
    got = self_preference(judge, candidate, "openai")
    assert got is not None and got["flag"] is (family is not None) and got["family"] == family
    assert got["judge"] == f"openai:{judge}" and candidate in got["why"]
    assert self_preference(None, candidate) is None and model_family("unknown-model") is None


def test_judge_calibrate_shows_length_and_family_in_its_report_and_json(tmp_path: Path, capsys: Any) -> None:
    f = tmp_path / "labels.jsonl"
    rows = [
        {
            "id": f"x{i}",
            "response": "y" * (5 + 40 * i),
            "human": "ACCEPT" if i % 3 else "REJECT",
            "judge_decision": "ACCEPT",
        }
        for i in range(12)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = write_run(tmp_path, manifest("cand", model_id="claude-3-5-haiku"), outcomes([("r", "s", ["PASS"])]))
    args = ["judge", "calibrate", str(f), "--judge-version", JV.replace("judge-model", "claude-3-opus")]
    assert main([*args, "--run", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["self_preference"]["flag"] and data["self_preference"]["family"] == "claude"
    assert [g["n"] for g in data["by_length"]] == [4, 4, 4]
    assert main([*args, "--candidate-model", "gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert "self-preference: the judge claude-3-opus (claude) and the candidate gpt-4o (gpt-4o)" in out
    assert "short" in out and "medium" in out
