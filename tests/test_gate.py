"""The quality gate: policy parsing, absolute and regression rules, exit codes."""

from __future__ import annotations

import pytest
from run_factory import FakeRun, manifest, outcomes, worked_example

from goldenkit.compare import compare_runs
from goldenkit.errors import ComparisonInvalid, ConfigError, GateFailed, InfrastructureError
from goldenkit.gate import GatePolicy, evaluate_gate


def example() -> tuple[FakeRun, FakeRun]:
    b, c = worked_example()
    return FakeRun(manifest("base"), b), FakeRun(manifest("cand"), c)


def rule(decision, name):  # type: ignore[no-untyped-def]
    return next(r for r in decision.rules if r.name == name)


def test_policy_from_config_reads_every_key() -> None:
    p = GatePolicy.from_config(
        {
            "rule": "at_least:2",
            "min_pass_rate": 0.85,
            "min_wilson_lower": 0.8,
            "per_slice_min_pass_rate": 0.7,
            "per_slice_min_wilson_lower": 0.5,
            "max_hallucination_rate": 0.02,
            "hallucination_grader": "grounded",
            "max_error_rate": 0.05,
            "regression": True,
            "baseline": "main",
            "alpha": 0.01,
            "critical": ["refunds", "safety"],
            "non_inferiority_margin": 0.03,
            "slices": {"refunds": {"min_pass_rate": 0.9}},
        }
    )
    assert p.rule == "at_least:2" and p.critical == ("refunds", "safety") and p.alpha == 0.01
    assert p.slices == {"refunds": {"min_pass_rate": 0.9}} and p.baseline == "main"
    assert GatePolicy.from_config(None) == GatePolicy()


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"min_pass_rat": 0.9}, "unknown key"),
        ({"min_pass_rate": 1.5}, "min_pass_rate must be a finite number in"),
        ({"min_pass_rate": "high"}, "min_pass_rate"),
        ({"alpha": 0}, "alpha must be a finite number in"),
        ({"critical": "refunds"}, "critical must be a list"),
        ({"rule": "most"}, "rule must be"),
        ({"regression": "yes"}, "regression must be true or false"),
        ({"slices": {"refunds": {"max": 1}}}, r"\[gate\]\.slices\.refunds: unknown key"),
    ],
)
def test_policy_errors_name_the_key(cfg: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GatePolicy.from_config(cfg, where="[gate]")


def test_critical_refunds_fails_the_worked_example_though_pass_rate_rose() -> None:
    base, cand = example()
    cmp = compare_runs(base, cand)
    assert cmp.overall["p_cand"] > cmp.overall["p_base"]
    policy = GatePolicy.from_config({"critical": ["refunds"], "min_pass_rate": 0.85})
    d = evaluate_gate(cand, comparison=cmp, policy=policy)
    assert not d.passed and d.exit_code == 2
    assert rule(d, "pass_rate").passed
    assert rule(d, "regression.overall").passed  # 10 broke vs 14 fixed: noise
    crit = rule(d, "regression.critical[refunds]")
    assert not crit.passed and round(crit.actual, 4) == 0.0391 and crit.threshold == 0.05
    assert "b=8 broke, c=1 fixed" in crit.detail and "one-sided exact McNemar p=0.0195" in crit.detail
    assert "Holm family of 2: overall + 1 critical slice(s)" in crit.detail  # one family, not two
    assert not any(r.name.startswith("regression.slice") for r in d.rules)  # other slices: review only
    every = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(critical=("refunds",), fail_on_slices=True))
    assert rule(every, "regression.slice[other]").passed  # improved: c > b; it joined the family of 3
    assert round(rule(every, "regression.critical[refunds]").actual, 4) == round(3 * 10 / 512, 4)
    with pytest.raises(GateFailed) as err:
        d.raise_for_failure()
    assert err.value.decision is d and "refunds" in str(err.value)


def test_same_candidate_passes_without_critical_slices_at_lower_alpha() -> None:
    base, cand = example()
    cmp = compare_runs(base, cand)
    d = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(alpha=0.01))
    assert d.passed and d.exit_code == 0
    d.raise_for_failure()  # no exception


def test_review_when_only_raw_p_is_below_alpha() -> None:
    # three slices, one broke 8 vs 1 (one-sided p=10/512): not critical -> review, never a rule
    rows_b, rows_c = [], []
    for s in ("a", "b", "c"):
        for i in range(30):
            rid = f"{s}{i}"
            broke = s == "a" and i < 8
            fixed = s == "a" and i == 8
            rows_b.append((rid, s, ["FAIL"] if fixed else ["PASS"]))
            rows_c.append((rid, s, ["FAIL"] if broke else ["PASS"]))
    base = FakeRun(manifest("b", repeats=1), outcomes(rows_b))
    cand = FakeRun(manifest("c", repeats=1), outcomes(rows_c))
    cmp = compare_runs(base, cand)
    d = evaluate_gate(cand, comparison=cmp, policy=GatePolicy())
    assert d.review == ["a"] and not any(r.name == "regression.slice[a]" for r in d.rules)
    ov = rule(d, "regression.overall")  # overall 8 vs 1: one-sided p=10/512 alone in its family
    assert not ov.passed and ov.actual == pytest.approx(10 / 512)
    assert d.exit_code == 2
    assert "[REVIEW] slice a" in d.format()
    # fail_on_slices: the slices join the overall's family of 4; Holm 4 * 10/512 = 0.078: nothing shown
    every = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(fail_on_slices=True))
    a = rule(every, "regression.slice[a]")
    assert a.passed and every.review == ["a"] and "flagged for review" in a.detail
    assert a.actual == pytest.approx(4 * 10 / 512) and rule(every, "regression.overall").passed
    # and a drop of 7 in 90 rows is not shown to be within the margin either: not enough evidence
    assert not rule(every, "non_inferiority").passed and every.exit_code == 3
    assert every.summary().startswith("gate NOT EVIDENCE: non_inferiority: ")


def test_non_inferiority_margin() -> None:
    from goldenkit.gate._regression import drop_interval

    base, cand = example()
    cmp = compare_runs(base, cand)
    both_pass = int(cmp.overall["k_cand"]) - cmp.c  # 356 - 14
    both_fail = 400 - both_pass - cmp.b - cmp.c
    # the one-sided 99% bound: the upper limit of the two-sided 98% Newcombe (method 11) interval of the drop
    _, drop_upper = drop_interval(both_pass, cmp.c, cmp.b, both_fail, 0.01)
    assert -cmp.overall["diff_ci_low"] < drop_upper < 0.03  # wider than the compare table's 95% interval
    ok = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(alpha=0.01, non_inferiority_margin=0.03))
    assert rule(ok, "non_inferiority").passed and rule(ok, "non_inferiority").actual == pytest.approx(drop_upper)
    bad = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(alpha=0.01, non_inferiority_margin=0.01))
    ni = rule(bad, "non_inferiority")
    assert not ni.passed and ni.exit_code == 3 and bad.exit_code == 3  # not shown: no evidence either way
    assert "non-inferiority not shown (400 paired rows); about " in ni.detail


def test_absolute_rules_overall_and_per_slice() -> None:
    _, cand = example()
    policy = GatePolicy.from_config(
        {
            "regression": False,
            "min_wilson_lower": 0.86,
            "per_slice_min_pass_rate": 0.85,
            "slices": {"other": {"min_wilson_lower": 0.9}},
        }
    )
    d = evaluate_gate(cand, policy=policy)
    w = rule(d, "wilson_lower")
    assert not w.passed and round(w.actual, 4) == 0.8555  # Wilson lower of 356/400
    assert not rule(d, "pass_rate[refunds]").passed  # 48/60 = 0.80
    assert rule(d, "pass_rate[other]").passed  # 308/340 = 0.906
    assert not rule(d, "wilson_lower[other]").passed  # 0.870 < 0.9
    assert d.exit_code == 2


def test_hallucination_rate() -> None:
    rows = [(f"r{i}", "s", ["PASS", "PASS"]) for i in range(10)]
    halluc = {"r0": [True, False], "r1": [False, False]}
    run = FakeRun(manifest("x", repeats=2), outcomes(rows, hallucination=halluc))
    d = evaluate_gate(run, policy=GatePolicy(regression=False, max_hallucination_rate=0.3))
    h = rule(d, "hallucination_rate")  # 1 of the 4 judged attempts
    assert h.passed and h.actual == pytest.approx(0.25) and "(1/4 judged attempts)" in h.detail
    d = evaluate_gate(run, policy=GatePolicy(regression=False, max_hallucination_rate=0.1))
    assert not rule(d, "hallucination_rate").passed
    none = evaluate_gate(
        run, policy=GatePolicy(regression=False, max_hallucination_rate=0.1, hallucination_grader="nope")
    )
    assert not rule(none, "hallucination_rate").passed
    assert "no attempt was judged" in rule(none, "hallucination_rate").detail


def test_error_rate_over_maximum_is_exit_3() -> None:
    rows = [(f"r{i}", "s", ["PASS"] if i >= 5 else ["ERROR"]) for i in range(100)]
    run = FakeRun(manifest("x", repeats=1), outcomes(rows))
    d = evaluate_gate(run, policy=GatePolicy(regression=False))
    e = rule(d, "error_rate")
    assert not e.passed and e.actual == pytest.approx(0.05) and d.exit_code == 3
    with pytest.raises(InfrastructureError):
        d.raise_for_failure()
    assert evaluate_gate(run, policy=GatePolicy(regression=False, max_error_rate=0.05, min_pass_rate=0.9)).passed
    # without a threshold and without regression the policy checks no quality: never green
    d = evaluate_gate(run, policy=GatePolicy(regression=False, max_error_rate=0.05))
    assert rule(d, "error_rate").passed and d.exit_code == 3
    assert rule(d, "quality").detail.startswith("the policy checks no quality: regression = false")


def test_invalid_run_is_exit_3_even_when_quality_fails() -> None:
    rows = [("r1", "s", ["FAIL"])]
    man = manifest("x", repeats=1, validity="INVALID")
    man["invalid_reason"] = "every call errored"
    d = evaluate_gate(outcomes(rows), manifest=man, policy=GatePolicy(min_pass_rate=0.9))
    assert d.exit_code == 3 and "every call errored" in rule(d, "run.validity").detail


@pytest.mark.parametrize("verdicts", [[], ["SKIPPED"] * 4])
def test_empty_or_fully_skipped_run_fails_the_gate_exit_2(verdicts: list[str]) -> None:
    """Nothing graded by the run's own doing (no row, or every row SKIPPED) is a quality failure, as the
    exit codes say; rows errors nobody caused took would be not evidence (3)."""
    rows = [(f"r{i}", "s", [v]) for i, v in enumerate(verdicts)]
    policy = GatePolicy(regression=False, min_pass_rate=0.5)
    d = evaluate_gate(FakeRun(manifest("x", repeats=1), outcomes(rows)), policy=policy)
    graded = rule(d, "run.graded")
    assert not graded.passed and graded.kind == "evidence" and graded.exit_code == 2 and d.exit_code == 2


def test_missing_baseline_fails_and_other_protocol_is_exit_4() -> None:
    _, cand = example()
    d = evaluate_gate(cand, policy=GatePolicy(max_error_rate=0.05))
    assert not rule(d, "baseline").passed and d.exit_code == 3  # no regression rule could be checked
    d = evaluate_gate(cand, policy=GatePolicy(max_error_rate=0.05, min_pass_rate=0.95))
    assert d.exit_code == 2  # a threshold failure is shown, baseline or not
    d = evaluate_gate(cand, policy=GatePolicy(), baseline_missing_reason="no baseline 'main' in baselines/")
    assert "no baseline 'main'" in rule(d, "baseline").detail
    d = evaluate_gate(cand, policy=GatePolicy(), comparison_invalid="dataset sha256 differs: 3f2a... vs 9b1c...")
    assert d.exit_code == 4 and "dataset sha256 differs" in rule(d, "baseline.comparable").detail
    with pytest.raises(ComparisonInvalid):
        d.raise_for_failure()


def test_critical_slice_missing_from_the_comparison_fails() -> None:
    base, cand = example()
    d = evaluate_gate(cand, comparison=compare_runs(base, cand), policy=GatePolicy(critical=("payments",), alpha=0.01))
    r = rule(d, "evidence.critical[payments]")
    assert not r.passed and "no rows on either side" in r.detail and d.exit_code == 3


def test_decision_to_dict_and_format() -> None:
    base, cand = example()
    d = evaluate_gate(cand, comparison=compare_runs(base, cand), policy=GatePolicy(critical=("refunds",)))
    doc = d.to_dict()
    assert doc["passed"] is False and doc["exit_code"] == 2
    assert {r["name"] for r in doc["rules"]} >= {"error_rate", "run.graded", "regression.overall"}
    text = d.format()
    assert "[FAIL] regression.critical[refunds]" in text and text.splitlines()[-1].startswith("gate FAILED")


def test_a_misspelled_critical_or_threshold_slice_names_the_slice_it_meant() -> None:
    base, cand = example()
    policy = GatePolicy.from_config({"critical": ["refnuds"], "slices": {"refudns": {"min_pass_rate": 0.9}}})
    d = evaluate_gate(cand, comparison=compare_runs(base, cand), policy=policy)
    crit = rule(d, "evidence.critical[refnuds]")
    assert not crit.passed and crit.detail.startswith("critical slice refnuds: 0 of 0 rows paired")
    assert crit.detail.endswith("(no rows on either side) (did you mean refunds?)")
    assert rule(d, "pass_rate[refudns]").detail == "slice refudns has no rows in this run (did you mean refunds?)"
    # without a baseline, the candidate's slices are the ones it may have meant
    alone = evaluate_gate(cand, policy=GatePolicy(critical=("refnuds",), regression=False))
    assert rule(alone, "evidence.critical[refnuds]").detail.endswith("(did you mean refunds?)")
    # a name like none of them gets no guess
    far = evaluate_gate(cand, comparison=compare_runs(base, cand), policy=GatePolicy(critical=("payments",)))
    assert "did you mean" not in rule(far, "evidence.critical[payments]").detail


def test_a_critical_slice_too_small_for_its_margin_is_a_warning_with_the_rows_it_needs() -> None:
    from goldenkit.stats import rows_needed

    base, cand = example()
    cmp = compare_runs(base, cand)  # 24 of the 400 paired rows flipped: 0.06
    d = evaluate_gate(cand, comparison=cmp, policy=GatePolicy(critical=("refunds", "other")))
    need = rows_needed(0.05, 0.06, 0.1, 0.8)  # the margin 0.05, one-sided at 0.05 = two-sided at 0.1
    assert need == 162
    assert [w for w in d.warnings if w.startswith("critical slice")] == [
        "critical slice refunds: 60 paired row(s) are too few to detect the non-inferiority margin 0.05 "
        "at alpha 0.05 with 80% power; it needs 162 paired rows (one-sided exact McNemar test, 0.06 of the rows "
        "flipping (as in this comparison): goldenkit stats plan --delta 0.05 --discordance 0.06 --alpha 0.1)"
    ]  # other has 340 paired rows: enough
    assert "[WARN] critical slice refunds: 60 paired row(s)" in d.format()
    # a margin of 0.03 at alpha 0.01 asks more of both slices
    strict = GatePolicy(critical=("refunds", "other"), non_inferiority_margin=0.03, alpha=0.01)
    d = evaluate_gate(cand, comparison=cmp, policy=strict)
    need = rows_needed(0.03, 0.06, 0.02, 0.8)
    power = [w for w in d.warnings if w.startswith("critical slice")]
    assert [w.split(":")[0] for w in power] == ["critical slice refunds", "critical slice other"]
    assert all(
        f"the non-inferiority margin 0.03 at alpha 0.01 with 80% power; it needs {need} paired" in w for w in power
    )
