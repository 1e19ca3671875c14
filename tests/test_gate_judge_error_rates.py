"""The gate's judge-graded rules hold their false-green rate at small label counts, simulated.

A judge-graded rule with human labels reads :func:`goldenkit.gate._judge.gate_bound`: the more conservative of
the prediction-powered bound (asymptotic: with 10 labels it went green in over a quarter of the draws at a
threshold set at the truth) and a bound on the labels alone. Each cell here draws 2,000 runs of 400 rows, a
judge agreeing with the human 70% or 90% of the time with a planted bias (its errors are three times as
likely on one side), ``n`` labels from a simple random sample or drawn with unequal probabilities (Poisson:
the rows the judge is unsure of three times as likely, as ``judge next`` draws, or the rows it is sure of ten
times as likely), and sets the threshold (the margin) at each run's true human figure. The prediction-powered
bound is given as the worst it could be (infinitely optimistic), so the share of false greens is the gate's
whatever that bound says; the check: the upper 99.9% Clopper-Pearson bound of that share stays below
alpha + 0.01. The same holds of false reds (exit 2: the drop itself beyond the margin), read from the
labels' lower bound of the drop (the share lost less the share won) with the prediction-powered one given
as infinitely aggressive.
The power checks use the real prediction-powered bound (:func:`goldenkit.stats.ppi_mean`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import beta, binom
from test_gate_judge import JUDGE_PASSES, N, config, gate, judged, label

from goldenkit.gate._judge import gate_bound
from goldenkit.stats import ppi_mean

ROWS, DRAWS, ALPHA = 400, 2000, 0.05


def _held(false_greens: int) -> bool:
    """The upper 99.9% Clopper-Pearson bound of the share of false greens in DRAWS is below alpha + 0.01."""
    return bool(beta.ppf(0.999, false_greens + 1, DRAWS - false_greens) < ALPHA + 0.01)


def _judge(rng: np.random.Generator, human: np.ndarray, agree: float, kind_share: float) -> np.ndarray:
    """The judge's 0/1 verdicts: wrong with probability ``1 - agree`` overall, three times as often on a
    human FAIL as on a PASS (it passes too much: the planted bias). ``kind_share``: the human FAIL share."""
    err_pass = (1 - agree) / (3 * kind_share + (1 - kind_share))
    wrong = rng.random(human.shape) < np.where(human == 0, min(1.0, 3 * err_pass), err_pass)
    return np.where(wrong, 1 - human, human)


def _labels(rng: np.random.Generator, unsure: np.ndarray, n: int, design: str) -> tuple[np.ndarray, np.ndarray]:
    """Per draw and row, the weight of its label (0: not labelled), and per draw the design's smallest
    probability: ``n`` rows of a simple random sample (weight 1), or a Poisson draw of ``n`` rows expected
    (weight 1 / probability), the rows where ``unsure`` three times as likely (``weighted``, as ``judge
    next`` draws) or the others ten times as likely (``favouring``: the rows the judge is sure of, which
    mostly pass; weighting at Kish's effective size went green in 8-19% of such draws)."""
    if design == "simple":
        order = rng.random(unsure.shape).argsort(axis=1)
        return (order < n) * (unsure.shape[1] / n), np.full(unsure.shape[0], n / unsure.shape[1])
    q = np.where(unsure, 3.0, 1.0) if design == "weighted" else np.where(unsure, 1.0, 10.0)
    prob = np.minimum(1.0, n * q / q.sum(axis=1, keepdims=True))
    return np.where(rng.random(unsure.shape) < prob, 1.0 / prob, 0.0), prob.min(axis=1)


DESIGNS = ("simple", "weighted", "favouring")
CELLS = [(n, agree, design) for n in (10, 40, 100) for agree in (0.7, 0.9) for design in DESIGNS]


@pytest.mark.parametrize(("n", "agree", "design"), CELLS)
def test_judge_pass_rate_goes_green_at_most_alpha_at_a_threshold_set_at_the_truth(
    n: int, agree: float, design: str
) -> None:
    rng = np.random.default_rng([n, int(agree * 10), len(design)])
    human = (rng.random((DRAWS, ROWS)) < 0.7).astype(float)
    judge = _judge(rng, human, agree, 0.3)
    w, smallest = _labels(rng, judge == 0, n, design)
    bound, _, kept = gate_bound(np.inf, human, w, ALPHA, upper=False, smallest=smallest)
    truth = human.mean(axis=1)
    false_greens = int((bound >= truth).sum())
    assert _held(false_greens), f"{false_greens} of {DRAWS} false greens"
    assert kept.mean() > (0.9 * n if design == "simple" else 0.08 * n)  # the labels read (thinned: fewer)


@pytest.mark.parametrize(("n", "agree", "design"), CELLS)
def test_judge_non_inferiority_goes_green_at_most_alpha_at_a_margin_set_at_the_true_drop(
    n: int, agree: float, design: str
) -> None:
    """The candidate loses 10% of the rows the baseline passed on and wins none back (the case the labels'
    bound, the share of rows lost, is tightest on); the margin is each run's true drop."""
    rng = np.random.default_rng([n, int(agree * 10), len(design), 1])
    base = (rng.random((DRAWS, ROWS)) < 0.8).astype(float)
    cand = np.where((base == 1) & (rng.random(base.shape) < 0.125), 0.0, base)
    jb, jc = _judge(rng, base, agree, 0.2), _judge(rng, cand, agree, 0.3)
    w, smallest = _labels(rng, jb != jc, n, design)
    drop = ((base == 1) & (cand == 0)).astype(float)
    bound, _, _ = gate_bound(-np.inf, drop, w, ALPHA, upper=True, smallest=smallest)
    margin = (base - cand).mean(axis=1)
    false_greens = int((bound < margin).sum())
    assert _held(false_greens), f"{false_greens} of {DRAWS} false greens"


@pytest.mark.parametrize(("n", "agree", "design"), CELLS)
def test_judge_non_inferiority_goes_red_at_most_alpha_when_the_drop_is_no_more_than_the_margin(
    n: int, agree: float, design: str
) -> None:
    """Exit 2 says the drop itself is beyond the margin: a red as valid as a green. The candidate loses 12.5%
    of the rows the baseline passed on and wins back 10% of those it failed (both kinds of flip, the case
    the labels' lower bound, the share lost less the share won, must hold on); the margin is each run's
    true drop, so any red is false. The prediction-powered lower bound is given as the worst it could be
    (infinitely aggressive): the share of reds is the gate's whatever that bound says."""
    rng = np.random.default_rng([n, int(agree * 10), len(design), 2])
    base = (rng.random((DRAWS, ROWS)) < 0.8).astype(float)
    u = rng.random(base.shape)
    cand = np.where((base == 1) & (u < 0.125), 0.0, np.where((base == 0) & (u < 0.1), 1.0, base))
    jb, jc = _judge(rng, base, agree, 0.2), _judge(rng, cand, agree, 0.3)
    w, smallest = _labels(rng, jb != jc, n, design)
    lost, won = ((base == 1) & (cand == 0)).astype(float), ((base == 0) & (cand == 1)).astype(float)
    bound, labels, _ = gate_bound(np.inf, lost, w, ALPHA, upper=False, smallest=smallest, won=won)
    margin = (base - cand).mean(axis=1)
    false_reds = int((bound > margin).sum())
    assert _held(false_reds), f"{false_reds} of {DRAWS} false reds"
    assert np.array_equal(bound, labels)  # the labels' bound decides when the prediction-powered one is wild


def test_a_clear_drop_goes_red_on_a_hundred_labels() -> None:
    """Power: a candidate losing a quarter of the rows the baseline passed on (a drop of 0.2), against a
    margin of 0.05, is shown red by 100 labels of a simple random sample in most draws, with the real
    prediction-powered bound."""
    rng = np.random.default_rng(100)
    reds = 0
    for _ in range(200):
        base = (rng.random(ROWS) < 0.8).astype(float)
        cand = np.where((base == 1) & (rng.random(ROWS) < 0.25), 0.0, base)
        judge = _judge(rng, base, 0.9, 0.2) - _judge(rng, cand, 0.9, 0.4)
        lab = _labels(rng, np.zeros((1, ROWS), bool), 100, "simple")[0][0] > 0
        drop, lost = base - cand, ((base == 1) & (cand == 0)).astype(float)
        low = ppi_mean(judge[~lab], judge[lab], drop[lab], alpha=2 * ALPHA, bounds=(-1.0, 1.0)).ci_low
        reds += float(gate_bound(low, lost, lab, ALPHA, upper=False, won=np.zeros(ROWS))[0]) > 0.05
    assert reds / 200 > 0.8


def test_a_drop_the_labels_alone_cannot_show_beyond_the_margin_is_not_red(tmp_path: Path, capsys: Any) -> None:
    """Through ``goldenkit gate``: 50 rows labelled on both runs, 8 lost and none won, the judges alike on
    every row. The prediction-powered lower bound of the drop (0.075, asymptotic) is above the margin 0.05;
    the labels' own (the share lost at least 0.0717, the share won at most 0.0711) is not: not shown (3),
    never a red the labels cannot back."""
    base, cand = judged(tmp_path, "base", JUDGE_PASSES), judged(tmp_path, "cand", JUDGE_PASSES)
    drawn, lost = range(0, N, 4), {4, 8, 12, 16, 24, 28, 32, 36}
    label(tmp_path, base, {i: JUDGE_PASSES[i] for i in drawn}, "--probability", "0.25")
    label(tmp_path, cand, {i: JUDGE_PASSES[i] and i not in lost for i in drawn}, "--probability", "0.25")
    code, rules, _ = gate(capsys, cand, config(tmp_path, "non_inferiority_margin = 0.05"), "--baseline", str(base))
    ni = rules["judge.non_inferiority"]
    assert (code, ni["passed"], ni["exit_code"]) == (3, False, 3), ni["detail"]
    assert "non-inferiority not shown" in ni["detail"] and "labels alone 0.0006" in ni["detail"]
    ppi_low = float(ni["detail"].split("its lower bound the smaller of prediction-powered ")[1].split()[0])
    assert ppi_low > 0.05  # the asymptotic bound alone would have said red


def _greens(rng: np.random.Generator, n: int, design: str, *, pair: bool) -> float:
    """The share of 200 draws in which the gate goes green when the truth is well clear: a pass rate of 90%
    against a threshold of 0.75, or no drop (2% of rows lost, 2% won) against a margin of 0.1, with the
    real prediction-powered bound."""
    greens = 0
    for _ in range(200):
        if pair:
            base = (rng.random(ROWS) < 0.8).astype(float)
            u = rng.random(ROWS)
            cand = np.where((base == 1) & (u < 0.025), 0.0, np.where((base == 0) & (u < 0.1), 1.0, base))
            human, judge = base - cand, _judge(rng, base, 0.9, 0.2) - _judge(rng, cand, 0.9, 0.2)
            hits = ((base == 1) & (cand == 0)).astype(float)
        else:
            human = hits = (rng.random(ROWS) < 0.9).astype(float)
            judge = _judge(rng, human, 0.9, 0.1)
        ws, smallests = _labels(rng, (judge != 0 if pair else judge == 0)[None, :], n, design)
        w, smallest = ws[0], smallests[0]
        lab = w > 0
        weights = None if design == "simple" else w[lab]
        bounds = (-1.0, 1.0) if pair else None
        est = ppi_mean(judge[~lab], judge[lab], human[lab], weights=weights, alpha=2 * ALPHA, bounds=bounds)
        if pair:  # the drop (baseline minus candidate): its upper bound
            greens += float(gate_bound(est.ci_high, hits, w, ALPHA, upper=True, smallest=smallest)[0]) < 0.1
        else:
            greens += float(gate_bound(est.ci_low, hits, w, ALPHA, upper=False, smallest=smallest)[0]) >= 0.75
    return greens / 200


@pytest.mark.parametrize("design", ["simple", "weighted"])
@pytest.mark.parametrize("pair", [False, True])
def test_the_rules_go_green_when_the_truth_is_well_clear_of_the_threshold(design: str, pair: bool) -> None:
    rng = np.random.default_rng([len(design), int(pair)])
    assert _greens(rng, 100, design, pair=pair) > 0.8


def test_fifty_labelled_pairs_that_all_agree_show_a_margin_of_a_tenth_not_of_a_twentieth() -> None:
    """No row lost in 50 labelled pairs: the share lost is at most 1 - 0.05 ** (1 / 50) = 0.058 (exact)."""
    bound, labels, size = gate_bound(0.02, np.zeros(50), np.ones(50), ALPHA, upper=True)
    assert float(bound) == pytest.approx(1 - 0.05 ** (1 / 50)) and float(size) == 50
    assert 0.05 < float(bound) < 0.1 and float(labels) == float(bound)


def test_the_prediction_powered_drop_alone_would_go_green_too_often_with_40_labelled_pairs() -> None:
    """Why the gate does not read the prediction-powered bound of a drop alone: over 40 pairs of a simple
    random sample, at a margin set at the true drop (10% of the rows lost), it went green in about 11% of
    the draws against alpha 5%; the gate's bound in about 2%."""
    rng = np.random.default_rng(40)
    ppi_greens = gate_greens = 0
    for _ in range(1000):
        base = (rng.random(ROWS) < 0.8).astype(float)
        cand = np.where((base == 1) & (rng.random(ROWS) < 0.125), 0.0, base)
        judge = _judge(rng, base, 0.9, 0.2) - _judge(rng, cand, 0.9, 0.3)
        lab = _labels(rng, np.zeros((1, ROWS), bool), 40, "simple")[0][0] > 0
        drop, lost = base - cand, ((base == 1) & (cand == 0)).astype(float)
        high = ppi_mean(judge[~lab], judge[lab], drop[lab], alpha=2 * ALPHA, bounds=(-1.0, 1.0)).ci_high
        ppi_greens += high < drop.mean()
        gate_greens += float(gate_bound(high, lost, lab, ALPHA, upper=True)[0]) < drop.mean()
    assert ppi_greens > 80 and gate_greens <= int(binom.ppf(0.999, 1000, ALPHA))


def test_the_gate_and_the_estimate_read_one_rule_of_a_complete_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """A round of ``judge next`` is complete when every row it drew and every row it knew holds a designed
    label (:func:`goldenkit.results.complete_rounds`); the gate's labels' bound reads the last such round
    through that one function."""
    import pandas as pd

    import goldenkit.results as results
    from goldenkit.gate import _judge

    rows = pd.DataFrame({"row_id": ["a", "b", "c", "d"], "label": ["designed", "designed", "designed", None]})
    known_a = {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.5}
    done = results.LabelRound(1, 1, "t", known_a, ("b",))
    open_draw = results.LabelRound(2, 1, "t", {**known_a, "b": 1.0}, ("d",))  # d has no label yet
    unknown = results.LabelRound(3, 1, "t", {"a": 0.5, "b": 0.5, "c": 0.5, "d": 1.0}, ("c",))  # knew d: no label
    assert results.complete_rounds([done, open_draw, unknown], rows) == ([done], 2)
    seen: list[int] = []
    rule = results.complete_rounds

    def spy(rounds: list[Any], frame: Any) -> Any:
        seen.append(len(rounds))
        return rule(rounds, frame)

    monkeypatch.setattr(_judge, "read_rounds", lambda run: [done, open_draw, unknown])
    monkeypatch.setattr(_judge, "complete_rounds", spy)  # the name the gate's module calls
    weights, smallest = _judge._label_weights(object(), rows.assign(probability=[1.0, 0.5, 0.5, 0.5]))
    assert seen == [3] and smallest == 0.5
    assert weights.tolist() == [1.0, 2.0, 0.0, 0.0]  # a known (1), b drawn (1 / 0.5); c and d not in the round
