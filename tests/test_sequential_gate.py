"""The sequential gate as a run, through the CLI: ``goldenkit run ... --sequential --baseline REF`` stops
as soon as the evidence decides, ``goldenkit gate`` on the stopped run gives the same exit, the ledger
and compare account the rows not run, a stopped run resumes to a full one, and the shadow mode replays it.

The agents are seeded callables: ``good`` passes 80% of the rows, ``broken`` fails a fifth of those
(a planted regression of 16 points, concentrated in slice ``refunds``), every call the same answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sequential_world import ROWS, broken, good, u as _u, write_world  # noqa: F401  (agents run by name)

from goldenkit.cli import main
from goldenkit.gate import GatePolicy
from goldenkit.gate._sequential import decide_sequential, sequential_order
from goldenkit.records import Case
from goldenkit.results import read_run
from goldenkit.stats import OVERALL


def _row(case: Case) -> str:
    return case.turns[-1].user


def flaky(case: Case, repeat: int = 0) -> str:
    """``good`` with every tenth row a coin flip per repeat."""
    q = _row(case)
    if _u("flaky", q) < 0.1:
        return "yes" if _u("coin", q, repeat) < 0.5 else "no"
    return good(case, repeat)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_world(tmp_path)


def run(ds: Path, agent: str, run_id: str, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "callable", "--callable", f"test_sequential_gate:{agent}", "--quiet"]
    return main([*argv, "--run-id", run_id, *extra])


def record(run_id: str) -> dict:  # type: ignore[type-arg]
    return read_run(Path("results") / run_id).manifest["sequential"]  # type: ignore[no-any-return]


def test_the_design_order_keeps_every_slice_at_its_share() -> None:
    rows = [(f"{s}-{i}", s) for s in ("a", "b", "c") for i in range({"a": 10, "b": 50, "c": 40}[s])]
    order = sequential_order(rows, seed=3)
    assert sorted(order) == sorted(r for r, _ in rows) and order != sequential_order(rows, seed=4)
    of = dict(rows)
    for t in range(1, len(order) + 1):
        for s, n in (("a", 10), ("b", 50), ("c", 40)):
            assert abs(sum(of[r] == s for r in order[:t]) - n * t / 100) <= 1, (t, s)


def test_a_planted_regression_stops_early_with_exit_2_and_the_gate_agrees(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    assert run(world, "broken", "cand", "--sequential", "--baseline", "base") == 2
    out = capsys.readouterr().out
    rec = record("cand")
    assert rec["decision"] == "regression" and rec["exit_code"] == 2
    assert rec["rows_run"] < rec["rows_total"] // 2 and rec["calls"] < rec["calls_full"]
    assert f"stopped after {rec['rows_run']} of {rec['rows_total']} rows: regression" in out
    man = read_run(Path("results") / "cand").manifest
    assert man["complete"] is True and man["validity"] == "VALID"
    assert rec["statistics"][OVERALL]["rows"] <= rec["rows_run"]
    assert main(["gate", "cand", "--baseline", "base"]) == 2
    gate_out = capsys.readouterr().out
    assert "not needed: decided" in gate_out and "MISSING" not in gate_out
    assert main(["compare", "base", "cand"]) == 0  # the rows not run are not missing evidence
    cmp_out = capsys.readouterr().out
    assert f"note: stopped after {rec['rows_run']} of {rec['rows_total']} rows: regression" in cmp_out


def test_an_identical_agent_stops_with_exit_0_and_fewer_calls(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(world, "flaky", "base", "--repeats", "3") == 0
    assert run(world, "flaky", "cand", "--repeats", "3", "--sequential", "--baseline", "base") == 0
    rec = record("cand")
    assert rec["decision"] == "non_inferior" and rec["exit_code"] == 0
    assert rec["calls"] < rec["calls_full"] == 3 * ROWS and rec["rows_run"] < ROWS
    assert "refunds" in rec["statistics"] and rec["statistics"]["refunds"]["decision"] == "non_inferior"
    assert main(["gate", "cand", "--baseline", "base"]) == 0


def test_a_budget_spent_undecided_exits_3_with_the_rows_it_would_need(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    assert run(world, "good", "cand", "--sequential", "--baseline", "base", "--max-rows", "20") == 3
    out = capsys.readouterr().out
    rec = record("cand")
    assert rec["decision"] == "undecided" and rec["rows_run"] == 20 and rec["rows_needed"] > 0
    assert "budget of 20 rows spent" in out and f"about {rec['rows_needed']} more rows" in out
    assert main(["gate", "cand", "--baseline", "base"]) == 3
    gate_out = capsys.readouterr().out
    assert f"about {rec['rows_needed']} more rows would be needed" in gate_out
    # the rows it never read were left out by the budget, not by a decision
    assert "not run: the sequential run stopped at its budget" in gate_out and "not needed: decided" not in gate_out


def test_a_stopped_run_resumes_without_sequential_to_a_full_run(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand", "--sequential", "--baseline", "base") == 2
    assert record("cand")["rows_run"] < ROWS
    assert run(world, "broken", "cand") == 0
    man = read_run(Path("results") / "cand").manifest
    assert "sequential" not in man and "stop_decided_repeats" not in man
    assert man["counts"]["total"] == ROWS and man["complete"] is True
    capsys.readouterr()
    assert main(["compare", "base", "cand"]) == 0
    assert "stopped after" not in capsys.readouterr().out


def test_replay_sequential_prints_the_stop_distribution(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand") == 0
    capsys.readouterr()
    assert main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "7"]) == 2
    out = capsys.readouterr().out
    assert "sequential replay over 7 random orders (seed 0):" in out
    assert "decision: regression in 7 (exit 2) of 7 orders" in out
    assert "would have stopped after" in out and "saved" in out
    assert main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "3", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)["replay_sequential"]
    assert doc["seed"] == 0 and doc["orders"] == 3 and doc["decisions"] == {"regression": 3}
    assert len(doc["calls"]) == 3 and max(doc["calls"]) < doc["calls_full"] == ROWS
    assert main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "0"]) == 1


def test_the_decision_never_passes_a_drop_beyond_the_margin_run_to_the_end() -> None:
    """Every row read: a population whose exact drop exceeds the margin is not passed, and one with no
    discordant row is never failed."""
    policy = GatePolicy(non_inferiority_margin=0.05)
    rows = [("s", 1, 0 if i % 10 == 0 else 1) for i in range(200)]  # a 10-point drop, nothing fixed
    d = decide_sequential(rows, {OVERALL: 200, "s": 200}, policy, 200)
    assert d.decision == "regression" and d.exit_code == 2
    same = [("s", i % 2, i % 2) for i in range(200)]
    d = decide_sequential(same, {OVERALL: 200, "s": 200}, policy, 200)
    assert d.decision == "non_inferior" and d.rows_run < 200


def test_a_committed_snapshot_is_a_baseline_and_calls_stay_near_the_decision(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against a saved baseline snapshot the same stop; rows are taken lazily, so the rows called beyond
    the decision are at most the calls in flight (--max-in-flight)."""
    assert run(world, "good", "base") == 0
    assert main(["baseline", "save", "base", "--name", "good-v1"]) == 0
    assert run(world, "broken", "cand", "--sequential", "--baseline", "good-v1", "--max-in-flight", "4") == 2
    rec = record("cand")
    assert rec["decision"] == "regression" and rec["baseline"] == "good-v1"
    assert rec["rows_run"] <= rec["calls"] <= rec["rows_run"] + 4  # one repeat a row; at most 4 in flight
    assert main(["gate", "cand", "--baseline", "good-v1"]) == 2


def test_bad_sequential_input_is_one_line(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(world, "good", "cand", "--max-rows", "5") == 1  # --max-rows without --sequential
    assert "need --sequential" in capsys.readouterr().err
    assert run(world, "good", "cand", "--sequential", "--baseline", "base", "--shard", "1/2") == 1
    assert "not a shard" in capsys.readouterr().err
    assert run(world, "good", "cand", "--sequential") == 1  # no baseline
    assert "pass --baseline REF" in capsys.readouterr().err
    assert run(world, "good", "cand", "--sequential", "--baseline", "base", "--max-rows", "0") == 1
    assert "--max-rows" in capsys.readouterr().err


@pytest.mark.slow
def test_report_and_compare_html_say_where_it_stopped(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand", "--sequential", "--baseline", "base") == 2
    rec = record("cand")
    line = f"stopped after {rec['rows_run']} of {rec['rows_total']} rows: {rec['stopped_because']}"
    capsys.readouterr()
    assert main(["report", "cand", "--baseline", "base"]) == 0
    out = capsys.readouterr().out
    assert f"cand: {line}" in out and "cand: stopped decided repeats (rule majority)" in out
    assert line in (Path("results") / "cand" / "compare.html").read_text(encoding="utf-8")


def test_a_baseline_of_other_repeats_is_refused_before_any_call(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    assert run(world, "good", "cand", "--repeats", "3", "--sequential", "--baseline", "base") == 4
    assert "repeats differ: 1 vs 3" in capsys.readouterr().err
    assert not (Path("results") / "cand").exists()


def test_a_baseline_of_another_protocol_makes_the_decision_exit_4(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    argv = ["--graders", "contract,reference", "--sequential", "--baseline", "base"]
    assert run(world, "broken", "cand", *argv) == 4
    assert "baseline not comparable: grader versions differ" in capsys.readouterr().err
    assert main(["gate", "cand", "--baseline", "base"]) == 4


def test_fail_on_slices_watches_every_slice_for_regression() -> None:
    """Slice b breaks half its rows; a's discordant rows balance. Overall alone shows the regression late;
    with fail_on_slices = true slice b joins the family (each member at alpha / 3) and shows it first."""
    rows = [(f"a{i}", "a") for i in range(400)] + [(f"b{i}", "b") for i in range(60)]
    val = {f"a{i}": ("a", i % 2, (i % 2) if i % 40 else 1 - i % 2) for i in range(400)}
    val.update({f"b{i}": ("b", 1, 0 if i < 30 else 1) for i in range(60)})
    seq = [val[r] for r in sequential_order(rows, 1)]
    pops = {OVERALL: 460, "a": 400, "b": 60}
    overall = decide_sequential(seq, pops, GatePolicy(), 460)
    per_slice = decide_sequential(seq, pops, GatePolicy(fail_on_slices=True), 460)
    assert overall.decision == per_slice.decision == "regression"
    assert per_slice.stopped_because == "regression on b shown" and per_slice.rows_run < overall.rows_run
    assert set(per_slice.members) == {OVERALL, "a", "b"} and set(overall.members) == {OVERALL}


def _slice_rows(rng: np.random.Generator, name: str, n: int, broke: int, fixed: int) -> list[tuple[str, int, int]]:
    """``n`` rows of slice ``name`` (80% PASS on the base), exactly ``broke`` PASS -> FAIL, ``fixed`` FAIL -> PASS."""
    base = (np.arange(n) % 5 != 0).astype(np.int8)
    cand = base.copy()
    cand[rng.choice(np.flatnonzero(base == 1), broke, replace=False)] = 0
    cand[rng.choice(np.flatnonzero(base == 0), fixed, replace=False)] = 1
    return [(name, int(b), int(c)) for b, c in zip(base, cand, strict=True)]


@pytest.mark.parametrize(("case", "broke", "fixed"), [("no change", 8, 8), ("drop at the margin", 30, 20)])
def test_the_composed_gate_holds_its_error_rates(case: str, broke: int, fixed: int) -> None:
    """Overall + one critical slice (e-Bonferroni for regression, both needed for non-inferiority), over
    random orders of populations of 2 x 200 rows with the same flips in each slice: with no change (16
    discordant rows a slice, balanced) the gate fails at most alpha of the time; with the drop exactly at
    the margin (30 broke, 20 fixed: 10 of 200 = 0.05 in each slice, so overall too; discordant enough
    that regression is rarely shown) it passes at most alpha of the time. Each rate's one-sided 95%
    Clopper-Pearson upper limit over 2,000 random runs is under alpha; the same runs under a margin of
    0.10 pass most of the time (the check can fail)."""
    from scipy.stats import beta

    rng = np.random.default_rng(38)
    policy = GatePolicy(critical=("c",), alpha=0.05, non_inferiority_margin=0.05)
    wide = GatePolicy(critical=("c",), alpha=0.05, non_inferiority_margin=0.10)
    sims, bad, wide_pass = 2000, 0, 0
    populations = {OVERALL: 400, "c": 200, "o": 200}
    for i in range(sims):
        rows = _slice_rows(rng, "c", 200, broke, fixed) + _slice_rows(rng, "o", 200, broke, fixed)
        run_rows = [rows[j] for j in rng.permutation(len(rows))]
        d = decide_sequential(run_rows, populations, policy, 400)
        bad += d.decision == ("regression" if case == "no change" else "non_inferior")
        if case != "no change" and i < 100:
            wide_pass += decide_sequential(run_rows, populations, wide, 400).decision == "non_inferior"
    assert beta.ppf(0.95, bad + 1, sims - bad) < policy.alpha, (case, bad)
    assert case == "no change" or wide_pass > 50


def test_a_stopped_sequential_run_is_no_baseline(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "stopped", "--sequential", "--baseline", "base") == 2
    assert run(world, "broken", "full") == 0
    capsys.readouterr()
    assert main(["gate", "full", "--baseline", "stopped"]) == 3
    assert "a sequential run (stopped after" in capsys.readouterr().out
    assert run(world, "broken", "again", "--sequential", "--baseline", "stopped") == 3
    assert "not a full run; resume it without --sequential" in capsys.readouterr().err


def test_the_policys_other_rules_apply_to_the_rows_read(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Non-inferiority shown, but the policy's min_pass_rate fails over the rows read: exit 2, run and gate."""
    (world / "goldenkit.toml").write_text('[gate]\ncritical = ["refunds"]\nmin_pass_rate = 0.9\n')
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    assert run(world, "good", "cand", "--sequential", "--baseline", "base") == 2
    captured = capsys.readouterr()
    rec = record("cand")
    assert rec["decision"] == "non_inferior" and "pass_rate: pass rate" in captured.err
    assert f"(over the {rec['rows_run']} rows read)" in captured.err
    assert main(["gate", "cand", "--baseline", "base"]) == 2
