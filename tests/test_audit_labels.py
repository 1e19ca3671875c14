"""The audit widget's human verdicts: the pass/fail mark, "label next", and the figures that follow them.

Driven through the widget objects (buttons clicked, toggles set) as a notebook user would; what they
wrote is read back from the run's labels.jsonl and label_rounds.jsonl, and the figures shown are those of
`goldenkit.results.judge_estimates` on the same files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_judge_evidence import judged_run, planted

from goldenkit import audit
from goldenkit._display import judge_figures_table, pct, table_html
from goldenkit.errors import InputError
from goldenkit.results import LABELS_FILE, judge_estimates, label_plan, read_labels, read_run
from goldenkit.results._judge_evidence import ROUNDS_FILE, read_rounds
from goldenkit.stats import OVERALL


@pytest.fixture
def judged(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A run of 90 rows whose judge agrees with the planted human 85% of the time; every row's own verdict
    is FAIL, so the browser shows every row."""
    human, judge, slices = planted(90, seed=5)
    run = judged_run(
        tmp_path / "results", "cand", {r: [bool(judge[i])] for i, r in enumerate(slices)}, slices, own="FAIL"
    )
    truth = {r: ("PASS" if human[i] else "FAIL") for i, r in enumerate(slices)}
    return run, truth


def _session(run: Path, tmp_path: Path) -> audit.AuditSession:
    return audit.open_audit(str(run), audits_dir=tmp_path / "audits", day="2026-12-05", user="ana")


def _descendants(widget: Any) -> list[Any]:
    return [widget] + [d for c in getattr(widget, "children", ()) for d in _descendants(c)]


def _labels_file(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / LABELS_FILE).read_text(encoding="utf-8").splitlines()]


def test_a_hand_picked_human_verdict_is_saved_shown_and_never_used(
    judged: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    run, _ = judged
    outcomes_before = (run / "outcomes.jsonl").read_bytes()
    w = _session(run, tmp_path).widget()
    row = str(w.browser.current().iloc[0]["row_id"])
    w.save_human.click()  # no verdict chosen: nothing written
    assert "choose a row and a human verdict" in w.status_text and not (run / LABELS_FILE).exists()
    w.human.value = "FAIL"
    w.save_human.click()
    [line] = _labels_file(run)
    assert line["row_id"] == row and line["human"] == "FAIL" and line["repeat"] is None
    assert line["who"] == "ana" and line["source"] == "audit" and line["probability"] is None
    assert "hand-picked" in w.status_text and "never used for inference" in w.status_text
    assert "human verdict: <b>FAIL</b> (hand-picked: shown, never used)" in w.card.value  # under the row's card
    table = judge_estimates(run)
    assert table.loc[OVERALL, "n_hand"] == 1 and table.loc[OVERALL, "n_human"] == 0
    assert w.panel is not None and str(table_html(judge_figures_table(table))) in w.panel.figures.value  # redrawn
    assert (run / "outcomes.jsonl").read_bytes() == outcomes_before  # labels never go into the outcomes


def test_label_next_proposes_the_drawn_rows_and_their_labels_carry_the_probability(
    judged: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    run, truth = judged
    w = _session(run, tmp_path).widget()
    panel = w.panel
    assert panel is not None and panel.current() is None
    panel.n.value = 20
    panel.next_button.click()
    [draw] = read_rounds(read_run(run))  # the design is recorded before anyone labels
    queue = panel.labelling.queue()
    assert queue == list(draw.drawn) and len(queue) > 5
    assert f"label these {len(queue)} rows" in panel.proposal.value
    assert "pass rate: no valid interval yet" in panel.proposal.value and "after labelling +/-" in panel.proposal.value
    assert queue[0] in panel.card.value
    for i, row in enumerate(queue):
        assert panel.current() == row
        panel.verdict.value = truth[row]
        panel.save.click()
        assert "used for inference" in panel.status_text and "hand-picked" not in panel.status_text
        if i < len(queue) - 1:  # a round counts once every row it drew is labelled: the figures say so
            assert f"{i + 1} of {len(queue)} proposed rows labelled" in panel.figures.value
    labels = {lab.row_id: lab for lab in read_labels(read_run(run))}
    assert set(labels) == set(queue)
    for row in queue:
        assert labels[row].probability == pytest.approx(draw.probabilities[row])
        assert labels[row].human == truth[row] and labels[row].who == "ana"
    table = judge_estimates(run)
    overall = table.loc[OVERALL]
    assert overall["method"].startswith("ppi++") and overall["n_human"] == len(queue)
    shown = panel.figures.value
    assert pct(overall["estimate"]) in shown and pct(overall["ci_low"]) in shown and pct(overall["ci_high"]) in shown
    assert f"{overall['lam']:.2f}" in shown and f"{overall['ess_gain']:+.1f}" in shown
    assert "proposed rows labelled" not in shown  # the round is complete


def test_a_second_round_narrows_the_interval_and_says_so_before_labelling(
    judged: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    run, truth = judged
    lab = audit.HumanLabelling(read_run(run), "ana")
    widths = []
    for seed in (1, 2):
        rows = lab.propose(20, seed=seed)
        if seed == 2:
            assert "pass rate interval goes from +/-" in lab.proposal_text()
        for row in rows:
            lab.label(row, truth[row])
        est = lab.figures().loc[OVERALL]
        widths.append(est["ci_high"] - est["ci_low"])
    assert len(read_rounds(read_run(run))) == 2 and widths[1] < widths[0]


def test_a_proposed_row_keeps_its_probability_when_marked_from_the_browser(
    judged: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    run, truth = judged
    session = _session(run, tmp_path)
    w = session.widget()
    lab = session.labelling()["cand"]
    rows = lab.propose(15, seed=3)
    assert lab.propose(40) == rows  # while the round has rows left, label next proposes them again
    w.browser.goto(list(w.browser.view["row_id"]).index(rows[0]))
    w.human.value = truth[rows[0]]
    w.save_human.click()
    assert "drawn with probability" in w.status_text
    [line] = _labels_file(run)
    assert line["probability"] == pytest.approx(read_rounds(read_run(run))[0].probabilities[rows[0]])
    assert lab.queue() == rows[1:] and w.panel is not None and rows[1] in w.panel.card.value


def test_a_verdict_other_than_pass_or_fail_is_refused(judged: tuple[Path, dict[str, str]]) -> None:
    run, _ = judged
    with pytest.raises(InputError, match="PASS or FAIL"):
        audit.HumanLabelling(read_run(run), "ana").label("r001", "MAYBE")
    assert not (run / LABELS_FILE).exists() and not (run / ROUNDS_FILE).exists()


def test_a_run_without_a_judge_has_no_human_verdict_mark(tmp_path: Path) -> None:
    from run_factory import manifest, outcomes, write_run

    run = write_run(
        tmp_path / "results", manifest("plain", repeats=1), outcomes([("a1", "s", ["FAIL"])], run_id="plain")
    )
    session = _session(run, tmp_path)
    w = session.widget()
    assert w.panel is None and w.labelling == {}
    assert w.save in _descendants(w.widget)  # the browser's own marks stay
    assert w.human not in _descendants(w.widget)
    assert "No run here is graded by a judge" in session.judge_figures()


def test_the_seed_field_makes_the_draw_reproducible_and_refuses_other_text(
    judged: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    run, _ = judged
    panel = _session(run, tmp_path).widget().panel
    assert panel is not None
    panel.seed.value = "twelve"
    panel.next_button.click()
    assert "the seed must be a whole number" in panel.status_text and not (run / ROUNDS_FILE).exists()
    panel.n.value = 12
    panel.seed.value = "12"
    panel.next_button.click()
    [draw] = read_rounds(read_run(run))
    assert draw.seed == 12 and list(draw.drawn) == list(label_plan(run, n=12, seed=12).drawn["row_id"])
