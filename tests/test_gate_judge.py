"""The gate on judge-graded rules, through `goldenkit gate`: the judge's figure corrected by human labels
(prediction-powered) when a recorded design drew them, the judge's own figure marked as such otherwise,
hand-picked labels refused for inference, and a judge of the candidate's family never alone green.

Runs are written with run_factory, a hard "judge" grader deciding every row (its verdict is the row's);
labels are stored with `goldenkit judge label`, as a user stores them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main

JV = "gpt-4o+rubric.aaaaaaaaaaaa+params.bbbbbbbbbbbb"
N = 200


def judged(root: Path, run_id: str, passes: list[bool], *, model: str = "model-a") -> Path:
    """A run of N rows (one repeat) whose hard judge passed row i when ``passes[i]``."""
    ids = [f"r{i:03d}" for i in range(N)]
    frame = outcomes(
        [(r, "refunds" if i % 2 else "billing", ["PASS" if passes[i] else "FAIL"]) for i, r in enumerate(ids)],
        run_id=run_id,
    )
    frame["graders"] = [
        {"judge": {"passed": bool(passes[i]), "score": None, "reason": "", "error": False}} for i in range(N)
    ]
    man = manifest(run_id, repeats=1, judge_version=JV, graders={"judge": "1"}, model_id=model)
    man["grader_hard"] = {"judge": True}
    return write_run(root, man, frame)


def label(tmp_path: Path, run: Path, humans: dict[int, bool], *extra: str) -> None:
    f = tmp_path / f"labels-{run.name}-{len(list(tmp_path.glob('labels-*')))}.jsonl"
    lines = [{"id": f"r{i:03d}", "human": "PASS" if ok else "FAIL"} for i, ok in humans.items()]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert main(["judge", "label", str(f), "--run", str(run), *extra]) == 0


def config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "goldenkit.toml"
    path.write_text(f"[gate]\n{body}\n", encoding="utf-8")
    return path


def gate(capsys: Any, run: Path, cfg: Path, *extra: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    capsys.readouterr()
    code = main(["gate", str(run), "--config", str(cfg), *extra, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == code
    return code, {r["name"]: r for r in doc["rules"]}, doc["decision"]


JUDGE_PASSES = [i % 5 != 0 for i in range(N)]  # the judge passes 80% of the rows
ABSOLUTE = "regression = false\njudge_min_pass_rate = 0.6"


def test_without_labels_the_judges_own_bound_decides_and_is_marked(tmp_path: Path, capsys: Any) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    r = rules["judge_pass_rate"]
    assert code == 0 and r["passed"] and "judge-only (no human labels)" in r["detail"]
    assert r["actual"] == pytest.approx(0.7525, abs=0.01)  # Wilson one-sided 95% lower bound of 160/200
    code, rules, _ = gate(capsys, run, config(tmp_path, "regression = false\njudge_min_pass_rate = 0.78"))
    assert code == 2 and not rules["judge_pass_rate"]["passed"] and "< 0.7800" in rules["judge_pass_rate"]["detail"]


def test_designed_labels_make_it_prediction_powered_and_can_fail_a_judge_that_is_too_kind(
    tmp_path: Path, capsys: Any
) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    # 50 rows drawn with probability 0.25; the human passes half of them where the judge passed 80%
    label(tmp_path, run, {i: (i // 4) % 2 == 0 for i in range(0, N, 4)}, "--probability", "0.25")
    code, rules, decision = gate(capsys, run, config(tmp_path, ABSOLUTE))
    r = rules["judge_pass_rate"]
    assert code == 2 and decision == "FAILED" and not r["passed"]
    assert "prediction-powered: 50 human, 200 judged, lambda" in r["detail"] and "human pass rate" in r["detail"]
    assert r["actual"] < 0.6


def test_hand_picked_labels_are_refused_with_the_reason_and_counted(tmp_path: Path, capsys: Any) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    label(tmp_path, run, {i: False for i in range(0, N, 4)})  # no probability: picked by hand
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    detail = rules["judge_pass_rate"]["detail"]
    assert code == 0 and "judge-only (no human labels)" in detail
    assert "50 label(s) refused for inference: picked by hand, not drawn by a recorded sampling design" in detail


def test_a_judge_of_the_candidates_family_cannot_alone_make_the_gate_green(tmp_path: Path, capsys: Any) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES, model="openai/gpt-4o-mini")
    code, rules, decision = gate(capsys, run, config(tmp_path, ABSOLUTE))
    r = rules["judge.self_preference"]
    assert (code, decision, r["passed"], r["exit_code"]) == (3, "NOT EVIDENCE", False, 3)
    assert r["detail"] == (
        "the judge (family gpt-4o) shares the candidate's family: its verdicts alone are not evidence; "
        "set [gate] accept_self_preference = true to accept"
    )
    assert "judge_pass_rate" in r["evidence"]
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE + "\naccept_self_preference = true"))
    assert (
        code == 0
        and rules["judge.self_preference"]["passed"]
        and "accepted" in rules["judge.self_preference"]["detail"]
    )
    # human labels that agree with the judge: the green rests on them, not on the judge alone
    label(tmp_path, run, {i: JUDGE_PASSES[i] for i in range(0, N, 4)}, "--probability", "0.25")
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    assert code == 0 and "judge.self_preference" not in rules
    assert "prediction-powered: 50 human" in rules["judge_pass_rate"]["detail"]


def test_a_judge_of_another_family_needs_no_acceptance(tmp_path: Path, capsys: Any) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES, model="claude-3-5-haiku")
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    assert code == 0 and "judge.self_preference" not in rules


def test_a_pair_green_on_the_judges_verdicts_alone_is_not_evidence_when_the_family_is_shared(
    tmp_path: Path, capsys: Any
) -> None:
    base = judged(tmp_path, "base", JUDGE_PASSES, model="gpt-4o-2024-08-06")
    cand = judged(tmp_path, "cand", JUDGE_PASSES, model="gpt-4o-mini")
    code, rules, _ = gate(capsys, cand, config(tmp_path, ""), "--baseline", str(base))
    assert code == 3 and rules["non_inferiority"]["passed"] and rules["judge.non_inferiority"]["passed"]
    sp = rules["judge.self_preference"]
    assert not sp["passed"] and "non_inferiority, judge.non_inferiority" in sp["evidence"]
    code, _, _ = gate(capsys, cand, config(tmp_path, "accept_self_preference = true"), "--baseline", str(base))
    assert code == 0


def test_the_pair_non_inferiority_of_a_judge_graded_slice_reads_the_labels(tmp_path: Path, capsys: Any) -> None:
    base = judged(tmp_path, "base", JUDGE_PASSES)
    cand = judged(tmp_path, "cand", JUDGE_PASSES)
    cfg = config(tmp_path, 'critical = ["refunds"]')
    code, rules, _ = gate(capsys, cand, cfg, "--baseline", str(base))
    ni = rules["judge.non_inferiority"]
    assert code == 0 and ni["passed"] and "judge-only (no human labels)" in ni["detail"]
    assert rules["judge.non_inferiority[refunds]"]["passed"]
    # the same rows drawn on both runs (probability 0.25): the human fails the candidate's answers on half
    drawn = range(0, N, 4)
    label(tmp_path, base, {i: JUDGE_PASSES[i] for i in drawn}, "--probability", "0.25")
    label(tmp_path, cand, {i: JUDGE_PASSES[i] and (i // 4) % 2 == 0 for i in drawn}, "--probability", "0.25")
    code, rules, _ = gate(capsys, cand, cfg, "--baseline", str(base))
    ni = rules["judge.non_inferiority"]
    assert code == 2 and not ni["passed"] and ni["exit_code"] == 2
    assert "the drop itself exceeds the margin 0.05" in ni["detail"]
    assert "prediction-powered: 50 human, 200 judged, lambda" in ni["detail"]
    assert "judge-only (no human labels)" in rules["judge.non_inferiority[refunds]"]["detail"]  # no label drawn there
    assert rules["non_inferiority"]["passed"]  # the judge's verdicts alone agree: only the labels show the drop


# --------------------------------------------------------------------------- the evidence lines of the gate


def _plain(root: Path, run_id: str, reps: list[list[str]], **extra: Any) -> Path:
    frame = outcomes([(f"r{i:03d}", "s", v) for i, v in enumerate(reps)], run_id=run_id)
    own = frame["verdict"] == "ERROR"
    frame.loc[own, "error_kind"] = "agent"
    frame.loc[own, "detail"] = "the agent raised ValueError"
    return write_run(root, {**manifest(run_id, repeats=3), **extra}, frame)


def test_the_candidates_own_errors_are_named_as_its_failures_in_the_evidence_lines(tmp_path: Path, capsys: Any) -> None:
    base = _plain(tmp_path, "base", [["PASS"] * 3] * 200)
    cand = _plain(tmp_path, "cand", [["ERROR"] * 3] * 4 + [["PASS"] * 3] * 196)
    code, rules, _ = gate(capsys, cand, config(tmp_path, "max_new_permanent_errors = 10"), "--baseline", str(base))
    own = "4 of them the candidate's own ERROR (agent, refused): its failures, counted against it"
    assert own in rules["run.graded"]["evidence"] and own in rules["regression.overall"]["evidence"]
    assert "not missing evidence" in rules["regression.overall"]["evidence"]
    assert rules["errors.new_permanent"]["passed"] and code == 0  # the policy tolerates 10 of them
    code, rules, _ = gate(capsys, cand, config(tmp_path, ""), "--baseline", str(base))
    assert code == 2 and not rules["errors.new_permanent"]["passed"]
    # the baseline's own errors are its agent's, said so on the baseline's evidence line
    code, rules, _ = gate(capsys, base, config(tmp_path, ""), "--baseline", str(cand))
    assert "4 ERROR (4 the baseline's agent's own: agent, refused)" in rules["baseline.evidence"]["evidence"]


def test_repeats_stopped_once_decided_do_not_show_a_run_deterministic(tmp_path: Path, capsys: Any) -> None:
    """Under --stop-decided-repeats a row whose first two repeats agree stops: its repeats agree, but a
    third could have disagreed, so the point rule for deterministic runs is refused unless allow_noisy."""
    reps = [["PASS", "PASS"]] * 30 + [["FAIL", "FAIL"]] * 10
    stop = {"stop_decided_repeats": "majority"}
    base, cand = (_plain(tmp_path, name, reps, **stop) for name in ("base", "cand"))
    body = "allowed_regression = 0.0\nnon_inferiority_margin = false"
    code, rules, _ = gate(capsys, cand, config(tmp_path, body), "--baseline", str(base))
    r = rules["allowed_regression"]
    assert (code, r["passed"], r["exit_code"]) == (3, False, 3)
    assert "40 row(s) whose repeats stopped once decided, before all of them ran in the candidate" in r["detail"]
    code, rules, _ = gate(capsys, cand, config(tmp_path, body + "\nallow_noisy = true"), "--baseline", str(base))
    assert code == 0 and rules["allowed_regression"]["passed"]


@pytest.mark.parametrize("value", [0, 1.5])
def test_a_judge_min_pass_rate_that_cannot_fail_or_cannot_pass_is_refused_in_one_line(
    tmp_path: Path, capsys: Any, value: float
) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    code = main(["gate", str(run), "--config", str(config(tmp_path, f"judge_min_pass_rate = {value}"))])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert f"judge_min_pass_rate must be a finite number in (0, 1], got {value}" in err


def test_fifty_labelled_pairs_that_all_agree_show_non_inferiority_at_a_margin_of_a_tenth(
    tmp_path: Path, capsys: Any
) -> None:
    """No row of 50 labelled on both runs lost: the share lost is at most 1 - 0.05 ** (1 / 50) = 0.058
    (exact), so a margin of 0.1 is shown, 0.05 is not."""
    base = judged(tmp_path, "base", JUDGE_PASSES)
    cand = judged(tmp_path, "cand", JUDGE_PASSES)
    for run in (base, cand):
        label(tmp_path, run, {i: JUDGE_PASSES[i] for i in range(0, N, 4)}, "--probability", "0.25")
    code, rules, _ = gate(capsys, cand, config(tmp_path, "non_inferiority_margin = 0.1"), "--baseline", str(base))
    ni = rules["judge.non_inferiority"]
    assert code == 0 and ni["passed"] and ni["actual"] == pytest.approx(1 - 0.05 ** (1 / 50))
    assert "the gate reads the labels-alone bound" in ni["detail"]
    assert "labels alone 0.0582 (Clopper-Pearson, 50 labels of a simple random sample)" in ni["detail"]
    code, rules, _ = gate(capsys, cand, config(tmp_path, "non_inferiority_margin = 0.05"), "--baseline", str(base))
    assert code == 3 and not rules["judge.non_inferiority"]["passed"]


def test_labels_of_unequal_probabilities_and_rounds_of_judge_next_are_thinned_to_a_simple_random_sample(
    tmp_path: Path, capsys: Any
) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    label(tmp_path, run, {i: JUDGE_PASSES[i] for i in range(0, 100, 4)}, "--probability", "0.25")
    label(tmp_path, run, {i: JUDGE_PASSES[i] for i in range(100, N, 10)}, "--probability", "0.1")
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    detail = rules["judge_pass_rate"]["detail"]
    # each of the 25 labels drawn with probability 0.25 kept with probability 0.4, the 10 others all
    thinned = "of 35 labels drawn with unequal probabilities, thinned to a simple random sample of probability 0.1)"
    assert thinned in detail and "prediction-powered: 35 human" in detail
    drawn = tmp_path / "next.jsonl"
    assert main(["judge", "next", "--run", str(run), "--n", "30", "--seed", "1", "-o", str(drawn)]) == 0
    lines = [json.loads(x) for x in drawn.read_text().splitlines()]
    rows = [int(x["id"][1:]) for x in lines]
    filled = [{**x, "human": "PASS" if JUDGE_PASSES[r] else "FAIL"} for x, r in zip(lines, rows, strict=True)]
    drawn.write_text("".join(json.dumps(x) + "\n" for x in filled))
    assert main(["judge", "label", str(drawn), "--run", str(run)]) == 0
    # the round: probability 1 for the 35 rows it knew labelled, its own for the others; the smallest is
    # the probability every label is thinned to
    (rnd,) = [json.loads(x) for x in (run / "label_rounds.jsonl").read_text().splitlines()]
    smallest = min(rnd["probabilities"].values())
    code, rules, _ = gate(capsys, run, config(tmp_path, ABSOLUTE))
    r = rules["judge_pass_rate"]
    thinned = f"of {35 + len(lines)} labels drawn with unequal probabilities, thinned to a simple random sample"
    assert f"{thinned} of probability {smallest:.3g})" in r["detail"]
    assert f"{35 + len(lines)} human label(s) used" in r["evidence"]
