"""A hostile review of budgets and of the gate on judge-graded rules, through the command line.

Each test is a problem found by using goldenkit as a hostile user would: a budget the server's replies
cannot count, a labels.jsonl edited by hand, a self-preferring judge hidden behind a trivial labelled rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply
from sequential_world import write_world
from test_gate_judge import JUDGE_PASSES, N, config, gate, judged, label

from goldenkit.cli import main
from goldenkit.gate._judge import gate_bound
from goldenkit.stats import ppi_mean

PRICED = (
    '[graders]\nuse = ["contract"]\n[pricing."m"]\ninput = 1.0\noutput = 2.0\nsource = "list"\ndate = "2026-11-01"\n'
)
#: A chat completion without a usage block: the server reports neither tokens nor a price.
NO_USAGE = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}],
    }
)


@pytest.mark.parametrize(
    ("flag", "value", "refused"),
    [
        ("--max-tokens-total", "10", "--max-tokens-total 10 cannot be counted: 1 call(s) returned no token counts"),
        ("--max-cost", "0.00001", "--max-cost 1e-05 cannot be counted: 1 call(s) returned no price and no token"),
    ],
)
def test_a_budget_the_replies_cannot_count_stops_the_run_instead_of_running_it_unbounded(
    tmp_path: Path, flag: str, value: str, refused: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = write_dataset(
        tmp_path, numbered_rows(20, lambda i: {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}})
    )
    (tmp_path / "priced.toml").write_text(PRICED)
    with FakeModelServer(default=Reply.status(200, body=NO_USAGE)) as srv:
        argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
        argv += ["--results-dir", str(tmp_path / "res"), "--run-id", "b", "--config", str(tmp_path / "priced.toml")]
        code = main([*argv, "--max-in-flight", "1", flag, value])
        assert (code, srv.count()) == (3, 1)  # the first reply said nothing to count: no second call
    out = capsys.readouterr().out
    assert refused in out and "resume with --run-id b and without that budget" in out
    man: dict[str, Any] = json.loads((tmp_path / "res" / "b" / "run.json").read_text())
    assert man["stopped_because"] == "budget" and man["budget"]["spent"]["uncounted"] == 1


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ({"probability": 0}, "labels.jsonl:1: probability must be a number in (0, 1], got 0"),
        ({"probability": 5}, "labels.jsonl:1: probability must be a number in (0, 1], got 5"),
        ({"probability": "0.5"}, "labels.jsonl:1: probability must be a number in (0, 1], got '0.5'"),
        ({"human": "MAYBE"}, "labels.jsonl:1: human must be PASS or FAIL, got 'MAYBE'"),
        ({"answer_sha256": None}, "labels.jsonl:1: a stored label needs the answer_sha256"),
    ],
)
def test_a_labels_file_edited_by_hand_is_checked_line_by_line_as_an_import_is(
    tmp_path: Path, edit: dict[str, Any], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, a probability of 0 or 5, a string, or a missing field in labels.jsonl was a traceback."""
    run = judged(tmp_path, "cand", JUDGE_PASSES)
    label(tmp_path, run, {i: True for i in range(0, 40, 4)}, "--probability", "0.1")
    lines = (run / "labels.jsonl").read_text().splitlines()
    (run / "labels.jsonl").write_text("\n".join([json.dumps({**json.loads(lines[0]), **edit}), *lines[1:]]) + "\n")
    code, rules, _ = gate(capsys, run, config(tmp_path, "regression = false\njudge_min_pass_rate = 0.6"))
    r = rules["judge_pass_rate"]
    assert (code, r["passed"], r["exit_code"]) == (3, False, 3) and why in r["detail"]
    assert main(["judge", "estimate", "--run", str(run)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and why in err[0]


def test_one_labelled_rule_does_not_vouch_for_a_non_inferiority_the_self_preferring_judge_alone_showed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trivial judge_min_pass_rate backed by three designed labels made the pair green before: the
    non-inferiority, the evidence of not worse, still rested on a judge of the candidate's family alone."""
    base = judged(tmp_path, "base", JUDGE_PASSES, model="gpt-4o-2024-08-06")
    cand = judged(tmp_path, "cand", JUDGE_PASSES, model="gpt-4o-mini")
    label(tmp_path, cand, {i: JUDGE_PASSES[i] for i in (1, 5, 7)}, "--probability", "0.015")
    cfg = config(tmp_path, "judge_min_pass_rate = 0.01")
    code, rules, _ = gate(capsys, cand, cfg, "--baseline", str(base))
    assert "prediction-powered: 3 human" in rules["judge_pass_rate"]["detail"] and rules["judge_pass_rate"]["passed"]
    sp = rules["judge.self_preference"]
    assert (code, sp["passed"]) == (3, False)
    assert sp["evidence"].endswith(
        "rules green on the judge's verdicts alone: "
        + ", ".join(["regression.overall", "non_inferiority", "judge.non_inferiority"])
    )
    # the same rows drawn and labelled on both runs (the human fixed row 0 and broke row 12 of the
    # candidate's): the pair's non-inferiority rests on the labels too
    drawn = range(0, N, 4)
    label(tmp_path, base, {i: JUDGE_PASSES[i] for i in drawn}, "--probability", "0.25")
    label(tmp_path, cand, {i: JUDGE_PASSES[i] != (i in (0, 12)) for i in drawn}, "--probability", "0.25")
    cfg = config(tmp_path, "judge_min_pass_rate = 0.01\nnon_inferiority_margin = 0.1")
    code, rules, _ = gate(capsys, cand, cfg, "--baseline", str(base))
    assert "prediction-powered" in rules["judge.non_inferiority"]["detail"]
    assert code == 0 and "judge.self_preference" not in rules


def test_an_estimate_like_a_run_with_errors_or_of_another_version_says_what_it_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ERROR outcome's missing token counts (pd.NA) were a traceback; a run of another dataset version
    was read as if its rows were this version's, without a word."""
    rows = numbered_rows(4, lambda i: {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}})
    ds = write_dataset(tmp_path, rows)
    ds2 = write_dataset(tmp_path, rows[:3], folder="ds2", version="2.0.0")
    common = ["--provider", "openai", "--model", "m", "--quiet", "--results-dir", str(tmp_path / "res")]
    with FakeModelServer(default=Reply.status(500)) as srv:
        assert main(["run", str(ds), *common, "--base-url", srv.url, "--run-id", "err", "--max-retries", "0"]) == 3
    with FakeModelServer(default=Reply.text("yes", tokens_in=100, tokens_out=20)) as srv:
        assert main(["run", str(ds), *common, "--base-url", srv.url, "--run-id", "ok"]) == 0
        capsys.readouterr()
        assert main(["run", str(ds), *common, "--base-url", srv.url, "--estimate", "--like", "err"]) == 0
        assert "like run err (4 outcomes): tokens n/a (that run recorded none);" in capsys.readouterr().out
        assert main(["run", str(ds2), *common, "--base-url", srv.url, "--estimate", "--like", "ok"]) == 0
        out = capsys.readouterr().out
        assert srv.count() == 4  # the run "ok" only: an estimate calls nothing
    # 3 outcomes x (100 + 20) tokens, from run ok's 4 outcomes of version 1.0.0
    assert (
        "like run ok (4 outcomes, of version 1.0.0, not 2.0.0: its rows differ): tokens ~360 (in ~300, out ~60)" in out
    )


def _false_greens(labelled: int, draws: int, seed: int) -> tuple[float, float]:
    """The share of draws in which the judge_pass_rate rule's bound reaches a threshold set at the true human
    pass rate (70%), prediction-powered alone and as the gate reads it (gate_bound: the smaller of it and the
    labels' exact bound):
    400 judged rows, a judge passing every human PASS and half the human FAILs, ``labelled`` rows drawn
    as a simple random sample."""
    rng = np.random.default_rng(seed)
    rows, rate, alpha = 400, 0.70, 0.05
    ppi_green = gate_green = 0
    for _ in range(draws):
        human = (rng.random(rows) < rate).astype(float)
        judge = np.where((human == 0) & (rng.random(rows) < 0.5), 1.0, human)
        lab = np.zeros(rows, bool)
        lab[rng.choice(rows, labelled, replace=False)] = True
        low = ppi_mean(judge[~lab], judge[lab], human[lab], alpha=2 * alpha).ci_low
        ppi_green += low >= rate
        gate_green += float(gate_bound(low, human, lab, alpha, upper=False)[0]) >= rate
    return ppi_green / draws, gate_green / draws


@pytest.mark.parametrize("labelled", [3, 10, 40])
def test_the_judge_pass_rate_rule_holds_its_false_green_rate_under_a_biased_judge(labelled: int) -> None:
    """The prediction-powered bound alone went green in over a quarter of the draws with 3 or 10 labels and
    12% with 40, at alpha 5%: its normal approximation does not hold with few labels. The gate's bound holds."""
    ppi_alone, gate_reads = _false_greens(labelled, 1500, seed=labelled)
    assert ppi_alone > 0.09  # the problem: well over alpha (1500 draws: a standard error under 0.009)
    assert gate_reads <= 0.05 + 3 * (0.05 * 0.95 / 1500) ** 0.5


def test_three_labels_that_agree_with_a_kind_judge_no_longer_make_the_gate_green(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = judged(tmp_path, "cand", JUDGE_PASSES)  # the judge passes 80% of 200 rows
    label(tmp_path, run, {i: JUDGE_PASSES[i] for i in (1, 5, 7)}, "--probability", "0.015")
    code, rules, _ = gate(capsys, run, config(tmp_path, "regression = false\njudge_min_pass_rate = 0.7"))
    r = rules["judge_pass_rate"]
    assert (code, r["passed"]) == (2, False) and "prediction-powered: 3 human" in r["detail"]
    assert "the gate reads the labels-alone bound: prediction-powered 0.75" in r["detail"]
    assert r["actual"] == pytest.approx(0.1354, abs=1e-4)  # Clopper-Pearson, one-sided 95%: 2 of 3 labels PASS


def test_a_sequential_run_stopped_by_its_budget_is_stopped_not_decided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rows a budget left unread were counted 'not needed' as if the sequential gate had decided: the
    run was VALID with 225 of 240 rows not needed, and said 'every row run, undecided'."""
    monkeypatch.chdir(tmp_path)
    ds = write_world(tmp_path)

    def run(agent: str, run_id: str, *extra: str) -> int:
        argv = ["run", str(ds), "--provider", "callable", "--callable", f"sequential_world:{agent}", "--quiet"]
        return main([*argv, "--run-id", run_id, *extra])

    assert run("good", "base") == 0
    seq = ["--sequential", "--baseline", "base", "--max-in-flight", "1"]  # one at a time: the same rows read
    assert run("broken", "cand", *seq, "--max-calls", "15") == 3
    man = json.loads((tmp_path / "results" / "cand" / "run.json").read_text())
    assert (man["validity"], man["stopped_because"], man["complete"]) == ("INVALID", "budget", False)
    assert man["counts"]["total"] == 15 and man["counts"]["not_needed"] == 0
    assert man["invalid_reason"].startswith("stopped: budget: --max-calls 15 reached")
    capsys.readouterr()
    assert main(["gate", "results/cand", "--baseline", "results/base"]) == 3
    assert run("broken", "cand", *seq, "--max-calls", "1000") == 2  # resumed: the regression shown
    assert run("broken", "whole", *seq) == 2
    full = json.loads((tmp_path / "results" / "whole" / "run.json").read_text())
    man = json.loads((tmp_path / "results" / "cand" / "run.json").read_text())
    assert man["validity"] == "VALID" and man["counts"] == full["counts"]
