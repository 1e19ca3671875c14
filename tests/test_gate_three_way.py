"""The three-way gate: 2 when a failure is shown, 0 when non-inferiority is shown, 3 otherwise.

Its statistics are checked against independent values (the one-sided exact
McNemar test against scipy's binomtest and against exact rational sums, the
values R's ``binom.test(b, b + c, 0.5, alternative = "greater")`` gives), and
its two stated error rates by simulation: under no change the Holm family
fails at most alpha of the time; at a true drop equal to the margin the gate
passes at most alpha of the time. Each simulation draws 20,000 comparisons
at once (vectorized) and asserts the one-sided 99% Clopper-Pearson upper
limit of the observed rate, not the rate itself; a sample of the simulated
comparisons is then run through :func:`goldenkit.gate.evaluate_gate` itself,
which must reach the decision the vectorized code predicts.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import fields
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from run_factory import FakeRun, manifest, outcomes, write_run
from scipy import stats as sps

import goldenkit.gate
from goldenkit.cli import main
from goldenkit.compare import compare_runs
from goldenkit.gate import GatePolicy, evaluate_gate
from goldenkit.gate._regression import _wilson_cc, drop_interval
from goldenkit.stats import holm, mcnemar_exact, mcnemar_one_sided, paired_diff_ci, rows_needed

ALPHA = 0.05
MARGIN = 0.05
SIMS = 20_000


def rule(decision, name):  # type: ignore[no-untyped-def]
    return next(r for r in decision.rules if r.name == name)


# --------------------------------------------------------------------------- the one-sided test


def test_one_sided_mcnemar_is_scipys_binomtest_greater() -> None:
    b, c = np.meshgrid(np.arange(0, 31), np.arange(0, 31), indexing="ij")
    got = mcnemar_one_sided(b, c)
    for bb, cc, p in zip(b.ravel(), c.ravel(), got.ravel(), strict=True):
        want = 1.0 if bb + cc == 0 else sps.binomtest(int(bb), int(bb + cc), 0.5, alternative="greater").pvalue
        assert p == pytest.approx(want, rel=1e-10, abs=1e-300), (bb, cc)
    assert mcnemar_one_sided(620, 480) == pytest.approx(
        sps.binomtest(620, 1100, 0.5, alternative="greater").pvalue, rel=1e-9
    )


def _exact_greater(b: int, c: int) -> float:
    """R's binom.test(b, b + c, 0.5, alternative = "greater")$p.value, as an exact rational sum."""
    n = b + c
    return float(Fraction(sum(math.comb(n, k) for k in range(b, n + 1)), 2**n))


@pytest.mark.parametrize(
    ("b", "c"), [(8, 1), (10, 14), (1, 0), (0, 7), (13, 2), (30, 1150), (1150, 30), (1000, 0), (400, 300)]
)
def test_one_sided_mcnemar_is_the_exact_binomial_tail(b: int, c: int) -> None:
    assert mcnemar_one_sided(b, c) == pytest.approx(_exact_greater(b, c), rel=1e-9)


def test_the_demos_numbers() -> None:
    assert mcnemar_one_sided(8, 1) == 10 / 512  # refunds: 0.0195
    assert round(float(mcnemar_exact(10, 14)), 2) == 0.54  # the compare table keeps its two-sided p
    p = np.array([mcnemar_one_sided(10, 14), mcnemar_one_sided(8, 1)])  # overall + refunds: one family
    assert holm(p)[1] == pytest.approx(2 * 10 / 512) and holm(p)[1] < ALPHA


# --------------------------------------------------------------------------- the non-inferiority bound


def test_continuity_corrected_wilson_limits_are_newcombes() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table II, method 4
    k = np.array([81.0, 15.0, 0.0, 1.0])
    n = np.array([263.0, 148.0, 20.0, 29.0])
    lo, hi = _wilson_cc(k, n, 1.959964)
    assert np.round(lo, 4).tolist() == [0.2535, 0.0598, 0.0, 0.0018]
    assert np.round(hi, 4).tolist() == [0.3682, 0.1644, 0.2005, 0.1963]


def test_the_drop_interval_is_newcombe_11_and_wider_than_method_10() -> None:
    rng = np.random.default_rng(5)
    x = rng.multinomial(60, [0.6, 0.1, 0.15, 0.15], size=500)
    lo, hi = drop_interval(x[:, 0], x[:, 1], x[:, 2], x[:, 3], ALPHA)
    # method 10 of the same cells at 90%, candidate minus base: its limits lie inside method 11's
    _, lo10, hi10 = paired_diff_ci(x[:, 0], x[:, 1], x[:, 2], x[:, 3], 1 - 2 * ALPHA)
    assert np.all(lo <= -hi10 + 1e-12) and np.all(hi >= -lo10 - 1e-12)
    assert np.all(lo < (x[:, 2] - x[:, 1]) / 60) and np.all(hi > (x[:, 2] - x[:, 1]) / 60)
    assert all(math.isnan(v) for v in drop_interval(0, 0, 0, 0, ALPHA))


# --------------------------------------------------------------------------- the error rates, simulated


def _upper(k: int, n: int, level: float = 0.99) -> float:
    """One-sided Clopper-Pearson upper confidence limit of a binomial rate."""
    return 1.0 if k == n else float(sps.beta.ppf(level, k + 1, n - k))


def _simulate(probs: list[float], sizes: tuple[int, int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(critical, other) cells (both pass, fixed, broke, both fail) of SIMS comparisons."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(sizes[0], probs, size=SIMS), rng.multinomial(sizes[1], probs, size=SIMS)


def _decide(crit: np.ndarray, other: np.ndarray, critical: bool) -> np.ndarray:
    """The gate's exit code of each simulated comparison: the Holm family of overall (and the critical
    slice) by one-sided exact McNemar, then non-inferiority overall (and on the critical slice)."""
    lines = [crit + other, crit] if critical else [crit + other]
    p = np.stack([mcnemar_one_sided(x[:, 2], x[:, 1]) for x in lines], axis=1)
    order = np.sort(p, axis=1)
    adjusted = np.maximum.accumulate(order * (len(lines) - np.arange(len(lines))), axis=1)
    shown = (adjusted < ALPHA).any(axis=1)  # Holm rejects at least one line (each with b > c here)
    ni = np.ones(SIMS, dtype=bool)
    for x in lines:
        ni &= drop_interval(x[:, 0], x[:, 1], x[:, 2], x[:, 3], ALPHA)[1] < MARGIN
    return np.where(shown, 2, np.where(ni, 0, 3))


NO_CHANGE = [0.80, 0.05, 0.05, 0.10]  # 10% of the rows flip, as many each way
AT_MARGIN = [0.70, 0.05, 0.10, 0.15]  # broke - fixed = 0.05: the true drop is the margin


def test_false_fail_under_no_change_is_at_most_alpha() -> None:
    for critical, seed in ((True, 1), (False, 2)):
        codes = _decide(*_simulate(NO_CHANGE, (100, 300), seed), critical=critical)
        fails = int((codes == 2).sum())
        assert _upper(fails, SIMS) <= ALPHA, (critical, fails)
        assert (codes == 0).mean() > 0.3  # and it is not the gate refusing everything: 400 rows show NI


def test_false_pass_at_the_margin_is_at_most_alpha() -> None:
    for critical, seed in ((True, 3), (False, 4)):
        codes = _decide(*_simulate(AT_MARGIN, (100, 300), seed), critical=critical)
        passes = int((codes == 0).sum())
        assert _upper(passes, SIMS) <= ALPHA, (critical, passes)
        assert passes > 0  # a bound that could never pass would hold this trivially


def _runs(crit: np.ndarray, other: np.ndarray) -> tuple[FakeRun, FakeRun]:
    base, cand = [], []
    for name, cells in (("refunds", crit), ("other", other)):
        i = 0
        for (bv, cv), k in zip(
            (("PASS", "PASS"), ("FAIL", "PASS"), ("PASS", "FAIL"), ("FAIL", "FAIL")), cells, strict=True
        ):
            for _ in range(int(k)):
                base.append((f"{name}-{i}", name, [bv]))
                cand.append((f"{name}-{i}", name, [cv]))
                i += 1
    return FakeRun(manifest("b", repeats=1), outcomes(base)), FakeRun(manifest("c", repeats=1), outcomes(cand))


def test_the_gate_decides_as_the_simulation_predicts() -> None:
    crit, other = _simulate(AT_MARGIN, (40, 60), 7)
    codes = _decide(crit, other, critical=True)
    picks = [int(np.flatnonzero(codes == code)[0]) for code in (0, 2, 3) if (codes == code).any()]
    assert len(picks) == 3  # every outcome occurs among the simulated comparisons
    policy = GatePolicy(critical=("refunds",), non_inferiority_margin=MARGIN, alpha=ALPHA)
    for i in picks:
        base, cand = _runs(crit[i], other[i])
        d = evaluate_gate(cand, comparison=compare_runs(base, cand), policy=policy)
        assert d.exit_code == codes[i], (i, d.format())


# --------------------------------------------------------------------------- decisions


def _same(n: int, slice_: str = "s") -> tuple[FakeRun, FakeRun]:
    rows = [(f"r{i}", slice_, ["PASS"]) for i in range(n)]
    return FakeRun(manifest("b", repeats=1), outcomes(rows)), FakeRun(manifest("c", repeats=1), outcomes(rows))


def test_an_identical_tiny_run_is_not_evidence_not_a_failure() -> None:
    base, cand = _same(10)
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=0.1))
    ni = rule(d, "non_inferiority")
    assert d.exit_code == 3 and ni.exit_code == 3 and ni.kind == "undecided"
    need = rows_needed(0.1, 0.1, 0.1, 0.8)
    assert f"non-inferiority not shown (10 paired rows); about {need} paired rows would show it" in ni.detail
    assert d.summary().startswith("gate NOT EVIDENCE: non_inferiority: overall: upper 95% bound")
    assert d.format().splitlines()[-1] == d.summary()
    # the same agent over enough rows shows it
    base, cand = _same(need)
    assert evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=0.1)).exit_code == 0


def test_without_a_margin_green_says_what_it_could_not_have_detected() -> None:
    base, cand = _same(10)
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=None))
    assert d.exit_code == 0 and not any(r.name.startswith("non_inferiority") for r in d.rules)
    note = next(w for w in d.warnings if w.startswith("non_inferiority_margin = false"))
    # 5 broken rows of 5 are the fewest with a one-sided p below 0.05; P(Bin(10, d) >= 5) = 0.8 at d
    d_star = next(x / 1000 for x in range(1, 1001) if sps.binom.sf(4, 10, x / 1000) >= 0.8)
    assert f"with 10 paired rows a drop under {100 * d_star:.0f} points could not have been detected" in note
    base, cand = _same(4)
    tiny = evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=None))
    assert any("with 4 paired rows no drop could have been detected" in w for w in tiny.warnings)


def test_a_drop_shown_beyond_the_margin_fails_and_one_not_shown_is_not_evidence() -> None:
    rows_b = [(f"r{i}", "s", ["PASS"]) for i in range(200)]
    rows_c = [(f"r{i}", "s", ["FAIL" if i < 60 else "PASS"]) for i in range(200)]
    base, cand = (FakeRun(manifest(n, repeats=1), outcomes(r)) for n, r in (("b", rows_b), ("c", rows_c)))
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy())
    ni = rule(d, "non_inferiority")
    assert not ni.passed and ni.exit_code == 2 and "the drop itself exceeds the margin" in ni.detail
    assert d.exit_code == 2 and d.summary().startswith("gate FAILED: regression.overall")
    # 3 of 40 broke: a drop not shown to exceed the margin, nor shown to be within it
    rows_c = [(f"r{i}", "s", ["FAIL" if i < 3 else "PASS"]) for i in range(40)]
    base = FakeRun(manifest("b", repeats=1), outcomes(rows_b[:40]))
    cand = FakeRun(manifest("c", repeats=1), outcomes(rows_c))
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy())
    assert rule(d, "regression.overall").passed and rule(d, "non_inferiority").exit_code == 3
    assert d.exit_code == 3


def test_a_failure_shown_wins_over_not_shown_but_not_over_a_side_that_is_not_evidence() -> None:
    base, cand = _same(10)
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(min_pass_rate=1.0, non_inferiority_margin=0.1))
    assert d.exit_code == 3  # NI not shown, nothing failed
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(per_slice_min_pass_rate=1.0, min_wilson_lower=0.9))
    assert d.exit_code == 2 and d.summary().startswith("gate FAILED: wilson_lower")  # shown: 2 over 3
    bad = manifest("c", repeats=1, validity="INVALID")
    cand = FakeRun(bad, cand.outcomes())
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(min_wilson_lower=0.9))
    assert d.exit_code == 3 and d.summary().startswith("gate NOT EVIDENCE: run.validity")


def test_a_policy_that_checks_no_quality_is_never_green() -> None:
    base, cand = _same(400)
    d = evaluate_gate(cand, policy=GatePolicy(regression=False))
    q = rule(d, "quality")
    assert d.exit_code == 3 and not q.passed and "regression = false and no absolute threshold" in q.detail
    assert evaluate_gate(cand, policy=GatePolicy(regression=False, min_pass_rate=0.9)).exit_code == 0
    assert evaluate_gate(cand, baseline=base, policy=GatePolicy()).exit_code == 0


def test_allowed_regression_is_a_point_comparison_refused_on_noisy_runs() -> None:
    policy = GatePolicy(allowed_regression=0.0, non_inferiority_margin=None)
    base, cand = _same(10)
    d = evaluate_gate(cand, baseline=base, policy=policy)
    assert d.exit_code == 0 and "a point comparison without an error rate" in rule(d, "allowed_regression").detail
    rows_b = [(f"r{i}", "s", ["PASS"] * 3) for i in range(10)]
    rows_c = [(f"r{i}", "s", ["FAIL"] * 3 if i == 0 else ["PASS"] * 3) for i in range(10)]
    base, cand = (FakeRun(manifest(n, repeats=3), outcomes(r)) for n, r in (("b", rows_b), ("c", rows_c)))
    d = evaluate_gate(cand, baseline=base, policy=policy)
    r = rule(d, "allowed_regression")
    assert not r.passed and r.actual == pytest.approx(0.1) and d.exit_code == 2  # 1 of 10: 10 points
    assert evaluate_gate(cand, baseline=base, policy=GatePolicy(allowed_regression=0.1)).exit_code != 2
    noisy = [(f"r{i}", "s", ["PASS", "FAIL", "PASS"] if i == 1 else ["PASS"] * 3) for i in range(10)]
    cand = FakeRun(manifest("c", repeats=3), outcomes(noisy))
    d = evaluate_gate(cand, baseline=base, policy=policy)
    r = rule(d, "allowed_regression")
    assert d.exit_code == 3 and "1 flaky row(s) in the candidate (r1)" in r.detail and "allow_noisy" in r.detail
    ok = evaluate_gate(cand, baseline=base, policy=GatePolicy(allowed_regression=0.0, allow_noisy=True))
    assert rule(ok, "allowed_regression").passed and "allow_noisy" in rule(ok, "allowed_regression").detail


def test_policy_keys_of_the_three_way_gate() -> None:
    p = GatePolicy.from_config({"non_inferiority_margin": False, "fail_on_slices": True, "allowed_regression": 0})
    assert p.non_inferiority_margin is None and p.fail_on_slices and p.allowed_regression == 0.0
    assert GatePolicy.from_config({}).non_inferiority_margin == 0.05 == GatePolicy().non_inferiority_margin
    for cfg, msg in (
        ({"non_inferiority_margin": True}, "non_inferiority_margin must be a finite number in \\(0, 1\\) or false"),
        ({"non_inferiority_margin": "false"}, "non_inferiority_margin must be a finite number in \\(0, 1\\) or false"),
        ({"non_inferiority_margin": float("nan")}, "or false \\(off\\), got nan"),
        ({"allow_noisy": "false"}, "allow_noisy must be true or false"),
        ({"allowed_regression": -1}, "allowed_regression must be a finite number in"),
    ):
        with pytest.raises(goldenkit.errors.ConfigError, match=msg):
            GatePolicy.from_config(cfg, where="goldenkit.toml [gate]")


def test_the_docstring_table_is_every_gate_key() -> None:
    doc = goldenkit.gate.__doc__ or ""
    table = doc.split("::", 1)[1].split("All keys are optional", 1)[0]
    keys = set(re.findall(r"^    (\w+) = ", table, flags=re.M))
    keys |= {"slices"} if "[gate.slices." in table else set()
    from goldenkit.gate._policy import GATE_KEYS

    assert keys == set(GATE_KEYS) == {f.name for f in fields(GatePolicy)} - {"other_keys"}


def test_rules_carry_their_exit_code_in_json() -> None:
    base, cand = _same(10)
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy())
    out = d.to_dict()
    assert out["exit_code"] == 3 and out["decision"] == "NOT EVIDENCE"
    by_name = {r["name"]: r for r in out["rules"]}
    assert by_name["non_inferiority"]["exit_code"] == 3 and by_name["regression.overall"]["exit_code"] == 2
    assert all(isinstance(r["exit_code"], int) for r in out["rules"])


def test_an_absurd_margin_answers_in_seconds() -> None:
    rows_b = [(f"r{i}", "s", ["PASS"] if i % 3 else ["FAIL"]) for i in range(300)]
    rows_c = [(f"r{i}", "s", ["PASS"] if i % 3 != 1 else ["FAIL"]) for i in range(300)]  # 100 broke, 100 fixed
    base, cand = (FakeRun(manifest(n, repeats=1), outcomes(r)) for n, r in (("b", rows_b), ("c", rows_c)))
    start = time.perf_counter()
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=1e-9, critical=("s",)))
    assert time.perf_counter() - start < 10.0  # measured about 0.2 s
    assert "more than 10,000,000 paired rows would show it" in rule(d, "non_inferiority").detail
    assert any("more than 10,000,000" in w for w in d.warnings)
    with pytest.raises(goldenkit.errors.InputError, match="the plan is not practical"):
        rows_needed(1e-5, 0.5)


def test_the_candidates_own_errors_count_against_it_not_against_its_validity() -> None:
    # an agent that raises on 1 of 30 rows: 3.3% of the attempts, over max_error_rate 2%, and its own
    rows_b = [(f"r{i}", "s", ["PASS"]) for i in range(30)]
    rows_c = [(f"r{i}", "s", ["ERROR" if i == 0 else "PASS"]) for i in range(30)]
    base = FakeRun(manifest("b", repeats=1), outcomes(rows_b))
    frame = outcomes(rows_c)
    frame.loc[frame["row_id"] == "r0", "error_kind"] = "agent"
    cand = FakeRun(manifest("c", repeats=1), frame)
    d = evaluate_gate(cand, baseline=base, policy=GatePolicy(non_inferiority_margin=None))
    err = rule(d, "error_rate")
    assert err.passed and err.actual == 0.0 and "the candidate's own 1 ERROR attempt(s)" in err.detail
    new = rule(d, "errors.new_permanent")
    assert not new.passed and "r0 (s)" in new.detail and d.exit_code == 2
    # the same error of an outage is not evidence (exit 3), never the candidate's failure
    frame.loc[frame["row_id"] == "r0", "error_kind"] = "transient"
    d = evaluate_gate(FakeRun(manifest("c", repeats=1), frame), baseline=base, policy=GatePolicy())
    assert not rule(d, "error_rate").passed and d.exit_code == 3


def test_the_last_line_names_the_decision_of_each_exit_code() -> None:
    base, cand = _same(400)
    lines = {
        0: evaluate_gate(cand, baseline=base, policy=GatePolicy()),
        2: evaluate_gate(cand, baseline=base, policy=GatePolicy(min_pass_rate=1.0, per_slice_min_wilson_lower=1.0)),
        3: evaluate_gate(cand, policy=GatePolicy()),  # no baseline: no regression rule could be checked
        4: evaluate_gate(cand, policy=GatePolicy(), comparison_invalid="dataset sha256 differs"),
    }
    names = {0: "gate PASSED", 2: "gate FAILED: ", 3: "gate NOT EVIDENCE: baseline: ", 4: "gate COMPARISON INVALID: "}
    for code, d in lines.items():
        assert d.exit_code == code and d.format().splitlines()[-1].startswith(names[code]), (code, d.summary())


def test_a_rule_needing_more_repeats_than_the_runs_have_is_refused_not_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """at_least:5 over one repeat makes every row FAIL on both sides: "no regression" would be automatic."""
    monkeypatch.chdir(tmp_path)
    good = [(f"r{i}", "s", ["PASS"]) for i in range(30)]
    wrong = [(f"r{i}", "s", ["FAIL" if i < 20 else "PASS"]) for i in range(30)]
    write_run(tmp_path / "results", manifest("good", repeats=1), outcomes(good, run_id="good"))
    write_run(tmp_path / "results", manifest("wrong", repeats=1), outcomes(wrong, run_id="wrong"))
    (tmp_path / "g.toml").write_text('[gate]\nrule = "at_least:5"\nnon_inferiority_margin = false\n')
    assert main(["gate", "wrong", "--baseline", "good", "--config", "g.toml"]) == 1
    err = capsys.readouterr().err
    assert "[gate] rule = 'at_least:5' needs at least 5 repeats of a row, and the run has 1" in err
    (tmp_path / "g.toml").write_text("[gate]\nnon_inferiority_margin = false\n")
    assert main(["gate", "wrong", "--baseline", "good", "--config", "g.toml"]) == 2  # the regression, shown
