"""A hostile review of the three-way and the sequential gate: each test is a way to a green gate without
evidence (or a red one on an unchanged agent) that the gate must refuse.

The agents are seeded callables as in tests/test_sequential_gate.py: ``good`` passes 80% of the rows,
``broken`` breaks 60% of the refunds rows and 5% of the others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sequential_world import SLICES, broken, good, u as _u, write_world  # noqa: F401  (agents run by name)

from goldenkit.cli import main
from goldenkit.errors import ProviderError
from goldenkit.records import Case
from goldenkit.results import read_run


def outage(case: Case, repeat: int = 0) -> str:
    """``good``, with 5% of the calls an outage (a 503 nobody's answer caused)."""
    if _u("out", case.turns[-1].user) < 0.05:
        raise ProviderError("503", kind="transient", final_kind="infrastructure")
    return good(case, repeat)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_world(tmp_path)


def run(ds: Path, agent: str, run_id: str, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "callable", "--callable", f"test_review_gate:{agent}", "--quiet"]
    return main([*argv, "--run-id", run_id, *extra])


def _verdicts(run_id: str) -> dict[str, str]:
    out = {}
    for line in (Path("results") / run_id / "outcomes.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out[rec["row_id"]] = rec["verdict"]
    return out


def test_a_sequential_record_with_chosen_rows_and_populations_is_not_evidence(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full run of a broken agent (the gate fails it) given a hand-written sequential record that reads
    only the rows where it agrees with the baseline, over populations shrunk to them: not a green."""
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand") == 0
    assert main(["gate", "cand", "--baseline", "base"]) == 2
    base, cand = _verdicts("base"), _verdicts("cand")
    agree = [r for r in base if base[r] == cand[r]]
    path = Path("results") / "cand" / "run.json"
    man = json.loads(path.read_text())
    pops = {"(overall)": len(agree)} | {s: sum(r.startswith(s) for r in agree) for s in SLICES}
    man["sequential"] = {"seed": 0, "rows": agree, "rows_total": len(agree), "populations": pops}
    path.write_text(json.dumps(man))
    capsys.readouterr()
    assert main(["gate", "cand", "--baseline", "base"]) == 3
    out = capsys.readouterr().out
    assert "[FAIL] sequential.order: row 1 read" in out and "not evidence" in out


def test_a_stopped_run_gated_again_keeps_its_decision(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The order check accepts the rows a real sequential run read (its seed's order)."""
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand", "--sequential", "--baseline", "base", "--sequential-seed", "7") == 2
    assert read_run(Path("results") / "cand").manifest["sequential"]["seed"] == 7
    assert main(["gate", "cand", "--baseline", "base"]) == 2
    assert "sequential.order" not in capsys.readouterr().out


def test_a_resumed_sequential_run_keeps_its_seed(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Resuming an undecided sequential run with another seed would draw a new order after rows were seen
    (a regression shown under one seed could be erased by trying others): refused; without the flag the
    resume keeps the seed it drew."""
    assert run(world, "good", "base") == 0
    seq = ("--sequential", "--baseline", "base")
    assert run(world, "broken", "cand", *seq, "--sequential-seed", "3", "--max-rows", "5") == 3
    capsys.readouterr()
    assert run(world, "broken", "cand", *seq, "--sequential-seed", "4") == 1
    err = capsys.readouterr().err
    assert "drew its order with --sequential-seed 3; a resume keeps it (got 4)" in err
    assert run(world, "broken", "cand", *seq) == 2
    assert read_run(Path("results") / "cand").manifest["sequential"]["seed"] == 3
    assert main(["gate", "cand", "--baseline", "base"]) == 2


def test_a_run_with_outcomes_cannot_turn_sequential(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A full run's outcomes are seen: a sequential order drawn afterwards could be chosen for them."""
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand") == 0
    capsys.readouterr()
    assert run(world, "broken", "cand", "--sequential", "--baseline", "base", "--sequential-seed", "9") == 1
    assert "already has outcomes of a run that was not sequential" in capsys.readouterr().err
    assert "sequential" not in read_run(Path("results") / "cand").manifest


@pytest.mark.parametrize(
    ("cfg", "msg"),
    [
        ({"non_inferiority_margin": 1.0}, "non_inferiority_margin must be a finite number in \\(0, 1\\) or false"),
        ({"non_inferiority_margin": 0}, "non_inferiority_margin must be a finite number in \\(0, 1\\) or false"),
        ({"alpha": 0.9}, "alpha must be a finite number in \\(0, 0.5\\)"),
        ({"alpha": 0.5}, "alpha must be a finite number in \\(0, 0.5\\)"),
    ],
)
def test_a_margin_or_alpha_that_makes_green_free_is_refused(cfg: dict[str, float], msg: str) -> None:
    """A margin of 1 tolerates every drop (the rule off, without saying what it could not detect); an alpha of
    0.5 or more has no one-sided 1 - alpha bound (its two-sided 1 - 2 alpha interval is empty)."""
    from goldenkit.errors import ConfigError
    from goldenkit.gate import GatePolicy

    with pytest.raises(ConfigError, match=f"^goldenkit.toml \\[gate\\]: {msg}"):
        GatePolicy.from_config(cfg, where="goldenkit.toml [gate]")
    with pytest.raises(ConfigError, match="^GatePolicy: "):
        GatePolicy(**cfg)  # type: ignore[arg-type]


def test_the_rows_an_undecided_run_would_need_are_never_more_than_the_rows_left() -> None:
    """At the last row the bound is the exact drop: "about 448 more rows" of a 200-row design that read 100
    is not a number a budget can be set from."""
    import random

    from goldenkit.gate import GatePolicy
    from goldenkit.gate._sequential import decide_sequential
    from goldenkit.stats import OVERALL

    rows = [("a", 1, 1)] * 80 + [("a", 1, 0)] * 10 + [("a", 0, 1)] * 10
    random.Random(1).shuffle(rows)
    d = decide_sequential(rows, {OVERALL: 200, "a": 200}, GatePolicy(non_inferiority_margin=0.05), 200)
    assert d.decision == "undecided" and d.rows_needed == 100
    every = decide_sequential(rows, {OVERALL: 100, "a": 100}, GatePolicy(non_inferiority_margin=0.05), 100)
    assert every.decision == "non_inferior"  # all rows read: the exact drop, 0, is under the margin


def test_the_replay_names_the_exit_code_the_other_rules_give(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shadow mode on a run whose outages make it not evidence: a sequential run of it exits 3 (its error
    rate over the rows read), so the replay must not promise exit 0 in every order."""
    assert run(world, "good", "base") == 0
    assert run(world, "outage", "cand", "--max-retries", "0") == 3
    capsys.readouterr()
    assert main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "5", "--json"]) == 3
    replay = json.loads(capsys.readouterr().out)["replay_sequential"]
    assert replay["decisions"] == {"non_inferior": 5} and replay["exit_codes"] == {"3": 5}
    assert run(world, "outage", "seq", "--max-retries", "0", "--sequential", "--baseline", "base") == 3
    main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "5"])
    out = capsys.readouterr().out
    assert (
        "non_inferior in 5 (exit 0) of 5 orders; with the policy's other rules over the rows read: exit 3 in 5" in out
    )


def test_the_replay_of_a_clean_run_keeps_the_decisions_exit_codes(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand") == 0
    capsys.readouterr()
    assert main(["gate", "cand", "--baseline", "base", "--replay-sequential", "--orders", "4", "--json"]) == 2
    replay = json.loads(capsys.readouterr().out)["replay_sequential"]
    assert replay["decisions"] == {"regression": 4} and replay["exit_codes"] == {"2": 4}


def test_a_regression_shown_after_a_members_non_inferiority_but_before_the_gate_decided_fails() -> None:
    """The overall rows show non-inferiority early; a regression overall is shown later, while the critical
    slice is still undecided: the gate had not passed yet, so the regression decides (it passed at row
    1655 when the overall e-process stopped being watched at its own non-inferiority)."""
    from goldenkit.gate import GatePolicy
    from goldenkit.gate._sequential import decide_sequential
    from goldenkit.stats import OVERALL

    rows = [("a", 1, 1)] * 1500 + [("a", 1, 0)] * 40 + [("c", 1, 1), ("c", 0, 1), ("c", 1, 0)] * 40
    policy = GatePolicy(critical=("c",), non_inferiority_margin=0.05)
    d = decide_sequential(rows, {OVERALL: len(rows), "a": 1540, "c": 120}, policy, len(rows))
    assert d.members[OVERALL].decision == "non_inferior" and d.members[OVERALL].step == 227
    assert (d.decision, d.rows_run, d.stopped_because) == ("regression", 1508, "regression overall shown")


def test_a_sequential_run_against_a_baseline_without_a_graded_row_is_not_evidence(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every row of the baseline SKIPPED (nothing to grade): the sequential run reads no row and made exit 2
    ("empty run", the candidate blamed); the baseline is not evidence, before any call and in the gate."""
    lines = (world / "dataset.jsonl").read_text().splitlines()
    ungradable = [json.loads(x) for x in lines]
    for row in ungradable:
        row["case"]["expect"] = {}
    (world / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ungradable))
    assert run(world, "good", "base", "--max-ungradable", "1") == 2
    capsys.readouterr()
    assert run(world, "good", "cand", "--max-ungradable", "1", "--sequential", "--baseline", "base") == 3
    assert "baseline base is not evidence: without a graded row" in capsys.readouterr().err
    assert run(world, "good", "full", "--max-ungradable", "1") == 2
    rec = {"seed": 0, "rows": [], "rows_total": 0, "populations": {}}
    path = Path("results") / "full" / "run.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "sequential": rec}))
    capsys.readouterr()
    assert main(["gate", "full", "--baseline", "base"]) == 3
    assert "baseline.evidence: baseline is without a graded row" in capsys.readouterr().out


def test_a_critical_slice_no_baseline_row_has_is_refused_before_any_call(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt critical slice can never show non-inferiority: the sequential run spent every call on an
    identical agent and exited 3; refused before any call, naming the slice meant."""
    assert run(world, "good", "base") == 0
    (world / "goldenkit.toml").write_text('[gate]\ncritical = ["refnuds"]\n')
    capsys.readouterr()
    assert run(world, "good", "cand", "--sequential", "--baseline", "base") == 1
    err = capsys.readouterr().err
    assert "critical slice refnuds has no row the baseline base graded (did you mean refunds?)" in err
    assert not (Path("results") / "cand").exists()


def test_a_threshold_missed_on_a_stopped_runs_rows_is_no_failure_of_an_unchanged_agent(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The baseline's own agent, run sequentially, stops at non-inferiority after 230 of 240 rows whose pass
    rate (0.787) is under min_pass_rate 0.79, while every row's is 0.796: exit 2 was a red gate on an
    unchanged agent. The rows not run could lift it: not shown (3). A miss no row can mend stays 2."""
    (world / "goldenkit.toml").write_text('[gate]\ncritical = ["refunds"]\nmin_pass_rate = 0.79\n')
    assert run(world, "good", "base") == 0
    capsys.readouterr()
    assert run(world, "good", "cand", "--sequential", "--baseline", "base", "--sequential-seed", "1") == 3
    assert "pass rate 0.7870 < 0.7900; not shown: a point rule over the rows read" in capsys.readouterr().err
    assert read_run(Path("results") / "cand").manifest["sequential"]["decision"] == "non_inferior"
    assert main(["gate", "cand", "--baseline", "base"]) == 3
    assert run(world, "good", "full") == 0
    capsys.readouterr()
    main(["gate", "full", "--baseline", "base", "--json"])
    rules = {r["name"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    assert rules["pass_rate"]["passed"] and rules["pass_rate"]["actual"] == pytest.approx(191 / 240)
    (world / "high.toml").write_text('[gate]\ncritical = ["refunds"]\nmin_pass_rate = 0.9\n')
    # 0.9 is out of reach even if every row left passed: a failure shown
    assert main(["gate", "cand", "--baseline", "base", "--config", str(world / "high.toml")]) == 2


def test_allowed_regression_is_not_dropped_silently_by_a_sequential_run(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """allowed_regression = 0.0 fails any drop of a full run; a sequential run passed a drop inside the margin
    without a word of it. Refused before any call, and a sequential run's gate names it not checked (3)."""
    assert run(world, "good", "base") == 0
    assert run(world, "good", "cand", "--sequential", "--baseline", "base") == 0
    (world / "point.toml").write_text('[gate]\ncritical = ["refunds"]\nallowed_regression = 0.0\n')
    config = ["--config", str(world / "point.toml")]
    capsys.readouterr()
    assert run(world, "good", "again", "--sequential", "--baseline", "base", *config) == 1
    assert "allowed_regression compares full runs point for point" in capsys.readouterr().err
    assert main(["gate", "cand", "--baseline", "base", *config]) == 3
    assert "[NOT SHOWN] allowed_regression: allowed_regression compares the pass rates of full runs" in (
        capsys.readouterr().out
    )
