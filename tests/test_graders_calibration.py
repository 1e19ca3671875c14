"""Judge calibration against numbers computed by hand, and on the real golden calibration file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _shared import shared_dir, shared_path

from goldenkit.cli import main
from goldenkit.errors import DatasetError
from goldenkit.graders._calibration import calibration_report, judge_labels, read_labels
from goldenkit.graders._judge import JudgeGrader
from goldenkit.providers._base import Provider, Response

INTEROP = shared_dir("interop")
REAL = INTEROP / "qa-guru__java-ai-golden" / "src__test__java__eval__generation__calibration__judge-calibration.jsonl"
Z = 1.959963984540054  # the 97.5% normal quantile


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score interval written out: (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def pairs(tp: int, fn: int, fp: int, tn: int) -> list[tuple[str, str]]:
    return (
        [("ACCEPT", "ACCEPT")] * tp
        + [("ACCEPT", "REJECT")] * fn
        + [("REJECT", "ACCEPT")] * fp
        + [("REJECT", "REJECT")] * tn
    )


def test_hand_computed_confusion_matrix_kappa_and_interval() -> None:
    # tp=20 fn=5 fp=10 tn=15, n=50. Cell shares: p11=.4 p12=.1 p21=.2 p22=.3
    # human (rows) marginals .5/.5, judge (columns) marginals .6/.4
    # po = (20+15)/50 = .7 ; pe = .5*.6 + .5*.4 = .5 ; kappa = (.7-.5)/(1-.5) = .4
    # Fleiss-Cohen-Everitt (1969) variance, with 1-kappa = .6:
    #   A = .4*(1-(.5+.6)*.6)^2 + .3*(1-(.5+.4)*.6)^2 = .4*.34^2 + .3*.46^2 = .04624 + .06348 = .10972
    #   B = .6^2 * (.1*(.6+.5)^2 + .2*(.4+.5)^2) = .36 * (.121 + .162) = .10188
    #   C = (kappa - pe*(1-kappa))^2 = (.4 - .3)^2 = .01
    #   var = (A + B - C) / ((1-pe)^2 * n) = .2016 / 12.5 = .016128
    rep = calibration_report(pairs(20, 5, 10, 15), min_n=30, kappa_floor=0.1)
    assert (rep.tp, rep.fn, rep.fp, rep.tn, rep.n, rep.n_pending) == (20, 5, 10, 15, 50, 0)
    assert rep.matrix().loc["ACCEPT", "REJECT"] == 5 and rep.matrix().loc["REJECT", "ACCEPT"] == 10
    assert rep.kappa == pytest.approx(0.4)
    se = math.sqrt(0.016128)
    assert rep.kappa_se == pytest.approx(se)
    assert (rep.kappa_low, rep.kappa_high) == (pytest.approx(0.4 - Z * se), pytest.approx(0.4 + Z * se))
    # accuracy 35/50, precision 20/30, recall 20/25, specificity 15/25, each with its Wilson interval
    for name, (k, n) in {
        "accuracy": (35, 50),
        "precision": (20, 30),
        "recall": (20, 25),
        "specificity": (15, 25),
    }.items():
        r = rep.rates[name]
        assert (r["hits"], r["total"], r["rate"]) == (k, n, pytest.approx(k / n))
        assert (r["ci_low"], r["ci_high"]) == tuple(pytest.approx(x) for x in wilson(k, n))
    # lower bound .4 - 1.96*.127 = .151 >= floor .1 and n = 50 >= 30
    assert rep.hard_allowed and rep.why.startswith("n = 50 >= 30 and kappa's 95% lower bound 0.151")
    strict = calibration_report(pairs(20, 5, 10, 15), kappa_floor=0.6)
    assert not strict.hard_allowed and strict.why == "kappa's 95% lower bound 0.151 < floor 0.6"


def test_pending_is_left_out_and_degenerate_kappa() -> None:
    rep = calibration_report([*pairs(3, 0, 0, 2), ("ACCEPT", "PENDING"), ("REJECT", "PENDING")], min_n=1)
    assert (rep.n, rep.n_pending, rep.kappa) == (5, 2, 1.0)
    same = calibration_report(pairs(10, 0, 0, 0), min_n=1)
    assert math.isnan(same.kappa) and not same.hard_allowed and "undefined" in same.why
    empty = calibration_report([], min_n=1)
    assert empty.n == 0 and math.isnan(empty.rates["accuracy"]["rate"]) and not empty.hard_allowed


def test_real_golden_calibration_file_replayed() -> None:
    shared_path("interop", "qa-guru__java-ai-golden", REAL.name)
    rows = read_labels(REAL)
    assert len(rows) == 20 and all(r.replayable for r in rows)
    rep = calibration_report([(r.id, r.human, r.replayed_decision()) for r in rows])
    # By hand from the file: humans ACCEPT cal-01..08, 16, 18, 20 (11), REJECT the other 9.
    # The judge disagrees on cal-17 and cal-19 (accepts what humans rejected) and cal-18 (rejects an accept).
    # tp = 11-1 = 10, fn = 1, fp = 2, tn = 9-2 = 7; po = 17/20 = .85
    # pe = (11/20)(12/20) + (9/20)(8/20) = .33 + .18 = .51 ; kappa = (.85-.51)/.49 = 34/49
    assert (rep.tp, rep.fn, rep.fp, rep.tn) == (10, 1, 2, 7)
    assert rep.kappa == pytest.approx(34 / 49)
    assert {d["id"] for d in rep.disagreements} == {"cal-17", "cal-18", "cal-19"}
    assert not rep.hard_allowed and rep.why == "n = 20 decided pairs < min_n = 30"
    assert rep.kappa_high == 1.0  # the normal interval (upper 1.011) is clipped to [-1, 1]


def test_cli_replay_writes_report_and_check_exit_code(tmp_path: Path, capsys) -> None:
    shared_path("interop", "qa-guru__java-ai-golden", REAL.name)
    out = tmp_path / "report.json"
    assert main(["judge", "calibrate", str(REAL), "--out", str(out), "--judge-version", "j+rubric.x+params.y"]) == 0
    printed = capsys.readouterr().out
    assert "human ACCEPT               10             1" in printed and "NOT ALLOWED" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["confusion"] == {"tp": 10, "fn": 1, "fp": 2, "tn": 7} and data["mode"] == "replay"
    assert data["judge_version"] == "j+rubric.x+params.y" and data["hard_allowed"] is False
    assert main(["judge", "calibrate", str(REAL), "--check"]) == 2
    assert main(["judge", "calibrate", str(REAL), "--check", "--min-n", "20", "--kappa-floor", "0.3"]) == 0


def test_bad_labels_name_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "labels.jsonl"
    f.write_text('# comment\n{"id": "a", "human": "ACCEPT", "judge_decision": "REJECT"}\n{"id": "b", "human": "ok"}\n')
    with pytest.raises(DatasetError, match=r"labels.jsonl:3: row b: the human decision must be ACCEPT or REJECT"):
        read_labels(f)
    f.write_text('{"id": "a", "human": "ACCEPT", "response": "x"}\n')
    assert main(["judge", "calibrate", str(f)]) == 1  # nothing to replay and no --judge


class Echo(Provider):
    """A judge that accepts answers mentioning a refund and rejects the rest."""

    name = "echo"

    def settings(self) -> dict:
        return {"model": "echo-judge"}

    async def complete(self, case, *, repeat=0) -> Response:
        answer = case.prompt.split(">>>\n", 1)[1].split("\n<<<END", 1)[0]
        return Response.from_text('{"decision": "%s"}' % ("ACCEPT" if "refund" in answer else "REJECT"))


def test_live_mode_asks_the_judge(tmp_path: Path) -> None:
    f = tmp_path / "labels.jsonl"
    lines = [
        {"id": "1", "human": "ACCEPT", "response": "Your refund is on its way."},
        {"id": "2", "human": "REJECT", "response": "No idea."},
        {"id": "3", "human": "ACCEPT", "response": "We cannot help."},
    ]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    import asyncio

    judge = JudgeGrader(Echo(), rubric_text="Accept refunds.")
    from goldenkit.runner._calls import CallLimits, ModelCalls

    decisions = asyncio.run(judge_labels(read_labels(f), judge, call=ModelCalls(CallLimits()).response))
    assert decisions == ["ACCEPT", "REJECT", "REJECT"]


def judge_by_prompt(case, repeat=0) -> str:
    """A stand-in judge (callable provider): accepts when the task mentions a refund."""
    task = case.prompt.split("<<<ANSWER", 1)[0]
    return '{"decision": "%s"}' % ("ACCEPT" if "refund" in task.lower() else "REJECT")


def test_cli_live_mode_with_config_and_dataset(tmp_path: Path, capsys) -> None:
    dataset = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
    if not (dataset / "dataset.jsonl").is_file():
        pytest.skip("bundled dataset absent")
    (tmp_path / "rubric.md").write_text("Accept answers about refunds.\n", encoding="utf-8")
    (tmp_path / "goldenkit.toml").write_text(
        '[judge]\nprovider = "callable"\nmodel = "judge-x"\nrubric = "rubric.md"\n'
        '[judge.options]\ncallable = "test_graders_calibration:judge_by_prompt"\n',
        encoding="utf-8",
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"id": "l1", "caseId": "refund-0001", "human": "ACCEPT", "response": "ok"})
        + "\n"
        + json.dumps({"id": "l2", "human": "REJECT", "response": "ok", "prompt": "What is your name?"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "report.json"
    code = main(
        [
            "judge",
            "calibrate",
            str(labels),
            "--live",
            "--config",
            str(tmp_path / "goldenkit.toml"),
            "--dataset",
            str(dataset),
            "--min-n",
            "2",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    # l1's task comes from the dataset case refund-0001 (a refund request), l2's from its own prompt
    assert data["confusion"] == {"tp": 1, "fn": 0, "fp": 0, "tn": 1} and data["mode"] == "live"
    assert data["judge_version"].startswith("judge-x+rubric.")


class LoopRecorder(Echo):
    """Echo that notes the event loop of each call and of its close (an HTTP client belongs to one loop)."""

    loops: list[tuple[str, object]] = []

    async def complete(self, case, *, repeat=0) -> Response:
        import asyncio

        LoopRecorder.loops.append(("complete", asyncio.get_running_loop()))
        return await super().complete(case, repeat=repeat)

    async def aclose(self) -> None:
        import asyncio

        LoopRecorder.loops.append(("aclose", asyncio.get_running_loop()))


def test_cli_live_mode_closes_the_judge_on_the_loop_it_ran_on(tmp_path: Path, capsys) -> None:
    from goldenkit.providers._base import register_provider

    register_provider("loop-recorder", lambda **options: LoopRecorder(), replace=True)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"id": "1", "human": "ACCEPT", "response": "A refund."}) + "\n", encoding="utf-8")
    rubric = tmp_path / "rubric.md"
    rubric.write_text("Accept answers about refunds.\n", encoding="utf-8")
    LoopRecorder.loops.clear()
    argv = ["judge", "calibrate", str(labels), "--judge", "loop-recorder", "--rubric", str(rubric), "--min-n", "1"]
    assert main(argv) == 0
    kinds = [k for k, _ in LoopRecorder.loops]
    assert kinds == ["complete", "aclose"]
    assert LoopRecorder.loops[0][1] is LoopRecorder.loops[1][1]
