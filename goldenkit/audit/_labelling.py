"""Human verdicts in the audit: the pass/fail mark, the rows to label next and the judge-graded figures.

A person reading a run graded by an LLM judge can say what the answer deserved: a **human verdict**
(PASS or FAIL) on the row, the row's answers in all its repeats. Each verdict is a label in the run's
``labels.jsonl`` (:func:`goldenkit.results.add_labels`: who, when, the answers it was given on), never an
outcome. How the row came to be labelled decides what the label may be used for:

* **proposed** -- "label next" drew it (:func:`goldenkit.results.label_plan`, the draw recorded as a round
  of ``judge next`` before anyone labels): the label carries the probability it was drawn with, and the
  prediction-powered estimate uses it (:func:`goldenkit.results.judge_estimates`);
* **hand-picked** -- the person chose the row (browsing failing rows, say): the label is kept and shown,
  never used for inference (a hand-picked sample is not a design; the gate refuses it too), and the widget
  says so when it saves one. A row that a round drew keeps that round's probability, whichever way the
  person reached it: the draw, not the route, made it part of the design.

"Label next" proposes the rows whose labels narrow the interval most and says by how much it expects
(:meth:`goldenkit.results.LabelPlan.width_lines`); while a round has rows left to label it proposes those,
not a new draw (a round counts once every row it drew is labelled). The figures (judge-only beside
prediction-powered: estimate, interval, n human, N judged, lambda, effective sample size gained) are
recomputed from the files after every saved verdict.

:class:`HumanLabelling` is plain Python (tested); :class:`LabelNextPanel` wires it to ipywidgets.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

import pandas as pd

from goldenkit._display import STYLE, HTMLBlock, judge_figures_table, table_html
from goldenkit._registry import publish
from goldenkit.audit._failures import case_texts, failure_card_html
from goldenkit.dataset import Dataset
from goldenkit.errors import InputError
from goldenkit.records import grader_results
from goldenkit.results import (
    JUDGE,
    HumanLabel,
    LabelPlan,
    LabelRound,
    Run,
    add_labels,
    add_round,
    judge_estimates,
    judge_rows,
    label_plan,
    read_labels,
    read_rounds,
)

#: What the widget says of a label saved on a row nobody drew.
HAND_PICKED = (
    "hand-picked (not drawn by a recorded design): kept and shown, never used for inference "
    "(the gate refuses it); use label next for labels that count"
)


def session_user() -> str:
    """Who labels: the operating system's user name ("unknown" when it has none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no LOGNAME/USER and no passwd entry (some containers)
        return "unknown"


@dataclass
class HumanLabelling:
    """Human verdicts on one judge-graded run (module doc): ``who`` labels, ``dataset`` gives the prompts."""

    run: Run
    who: str
    dataset: Dataset | None = None
    by: str = "slice"
    rule: str = "majority"
    alpha: float = 0.05
    #: the last draw this session made (its expected widths), None before one or when a round was resumed
    plan: LabelPlan | None = None
    _rows: pd.DataFrame | None = field(default=None, repr=False)
    #: the files as last read (labels, figures); :meth:`forget` drops them, every write does
    _read: dict[str, Any] = field(default_factory=dict, repr=False)

    def forget(self) -> None:
        """Read the labels and rounds again at the next look (after a write, or one by another process)."""
        self._read.clear()

    @property
    def rows(self) -> pd.DataFrame:
        """The judge's collapsed verdict per row (:func:`goldenkit.results._judge_evidence.judge_rows`)."""
        if self._rows is None:
            self._rows = judge_rows(self.run, by=self.by, rule=self.rule, labels=False)
        return self._rows

    def labels(self) -> dict[str, HumanLabel]:
        """The run's latest row labels (repeat null) by row id."""
        if "labels" not in self._read:
            found_now = read_labels(self.run, skip_other_answers=True)  # those to give again are not shown
            self._read["labels"] = {lab.row_id: lab for lab in found_now if lab.repeat is None}
        found: dict[str, HumanLabel] = self._read["labels"]
        return found

    def open_round(self) -> LabelRound | None:
        """The latest round of ``judge next`` while some row it drew has no label of its design."""
        rounds = read_rounds(self.run)
        return rounds[-1] if rounds and self._left(rounds[-1]) else None

    def _left(self, draw: LabelRound) -> list[str]:
        labels = self.labels()
        return [r for r in draw.drawn if r not in labels or not labels[r].designed]

    def queue(self) -> list[str]:
        """The proposed rows still to label (those of the open round, in the order drawn)."""
        draw = self.open_round()
        return [] if draw is None else self._left(draw)

    def propose(self, n: int = 25, seed: int | None = None) -> list[str]:
        """Draw about ``n`` rows to label and record the draw as a round (before anyone labels); while a
        round has rows left, those rows, without a new draw. Returns the rows to label."""
        self.forget()
        left = self.queue()
        if left:
            self.plan = None
            return left
        self.plan = label_plan(self.run, n=n, seed=seed, by=self.by, rule=self.rule, alpha=self.alpha)
        add_round(self.run, self.plan.round)
        self.forget()
        return self.queue()

    def proposal_text(self) -> str:
        """What "label next" says: how many rows, and the interval's expected width before and after."""
        left = self.queue()
        if not left:
            return "no proposed row left to label: label next draws new ones"
        if self.plan is None:
            return f"label these {len(left)} rows, left of the round drawn earlier (its labels count once all are in)"
        head = f"label these {len(left)} rows (seed {self.plan.seed}):"
        return "\n".join([head, *self.plan.width_lines(self.figures())])

    def probability(self, row_id: str) -> float | None:
        """The probability a recorded design drew ``row_id`` with (the latest round that drew it, else its
        designed label's), None for a row nobody drew (a hand-picked label)."""
        for draw in reversed(read_rounds(self.run)):
            if row_id in draw.drawn:
                return draw.probabilities[row_id]
        earlier = self.labels().get(row_id)
        return earlier.probability if earlier is not None else None

    def label(self, row_id: str, human: str) -> HumanLabel:
        """Save the human verdict ``human`` (PASS or FAIL) on ``row_id``: a label of the row, with the
        probability of the design that drew it or none (hand-picked)."""
        if human not in ("PASS", "FAIL"):
            raise InputError(f"human verdict must be PASS or FAIL, got {human!r}")
        p = self.probability(str(row_id))
        one = {"id": str(row_id), "human": human}
        saved = add_labels(self.run, [one], who=self.who, source="audit", probability=p, where="audit widget")[0]
        self.forget()
        return saved

    def saved_text(self, lab: HumanLabel) -> str:
        """What the widget says after saving ``lab``."""
        head = f"saved human verdict {lab.human} for {lab.row_id} (run {self.run.run_id}, by {lab.who})"
        if lab.designed:
            return f"{head}: drawn with probability {lab.probability:.3g}, used for inference"
        return f"{head}: {HAND_PICKED}"

    def figures(self) -> pd.DataFrame:
        """:func:`goldenkit.results.judge_estimates` of the run, as the files are now."""
        if "figures" not in self._read:
            self._read["figures"] = judge_estimates(self.run, by=self.by, alpha=self.alpha, rule=self.rule)
        found: pd.DataFrame = self._read["figures"]
        return found

    def figures_html(self) -> HTMLBlock:
        """The judge-graded figures for people, with the state of the open round."""
        draw, left = self.open_round(), self.queue()
        note = ""
        if draw is not None:
            done = len(draw.drawn) - len(left)
            note = (
                f"<p>label next: {done} of {len(draw.drawn)} proposed rows labelled; "
                "they count once all are labelled</p>"
            )
        title = f"<p><b>judge-graded pass rate of run {escape(str(self.run.run_id))}</b></p>"
        try:
            figures = self.figures()
        except InputError as exc:  # labels given on other answers: said, and the widget stays open to relabel
            return HTMLBlock(f"{title}{note}<p>judge-graded figures not shown: {escape(str(exc))}</p>")
        return HTMLBlock(title + note + table_html(judge_figures_table(figures)))

    def card(self, row_id: str) -> str:
        """The row as the person reads it: prompt, expected, its answers and the judge's reasons (escaped)."""
        out = self.run.outcomes(columns=["row_id", "repeat", "slice", "response", "graders"])
        reps = out[out["row_id"].astype(str) == str(row_id)].sort_values("repeat")
        if reps.empty:
            raise InputError(f"row {row_id!r} is not in run {self.run.run_id}")
        several = len(reps) > 1
        answers, reasons = [], []
        for rep, text, graders in zip(reps["repeat"], reps["response"], reps["graders"], strict=True):
            tag = f"[repeat {int(rep)}] " if several else ""
            answers.append(tag + ("" if text is None or text != text else str(text)))  # NaN: no answer
            entry = grader_results(graders).get(JUDGE, {})
            passed = entry.get("passed")
            verdict = "undecided" if passed is None else ("PASS" if passed else "FAIL")
            reasons.append(f"{tag}judge: {verdict} {entry.get('reason') or ''}".rstrip())
        prompt, expected = case_texts(self.dataset, str(row_id))
        judged = self.rows.set_index("row_id").loc[str(row_id), "judge"]
        rec = {
            "row_id": row_id,
            "slice": reps["slice"].iloc[0],
            "run_id": self.run.run_id,
            "passed": f"judge {judged}",
            "prompt": prompt,
            "expected": expected,
            "response": "\n".join(answers),
            "reasons": "\n".join(reasons),
        }
        return failure_card_html(rec)


class LabelNextPanel:
    """The "label next" controls (display ``.widget``): ``n`` rows asked, the draw's ``seed`` (empty: a new
    one, recorded with the round), the "label next" button, the card
    of the proposed row to label, the human verdict (``verdict``: PASS / FAIL) and "save verdict", and
    the figures, redrawn after every saved verdict (also after :meth:`redraw`, which the audit widget's
    own verdict mark calls). ``on_label`` is called after each saved verdict."""

    def __init__(self, labelling: HumanLabelling, on_label: Callable[[], None] | None = None) -> None:
        import ipywidgets as w

        self.labelling = labelling
        self._on_label = on_label
        self.status_text = ""
        self.n = w.BoundedIntText(value=25, min=1, max=100_000, description="rows")
        self.seed = w.Text(placeholder="seed (empty: a new one)", layout=w.Layout(width="14em"))
        self.next_button = w.Button(description="label next", button_style="info")
        self.proposal = w.HTML(layout=w.Layout(width="100%"))
        self.card = w.HTML()
        self.verdict = w.ToggleButtons(options=["PASS", "FAIL"], value=None, description="human verdict")
        self.save = w.Button(description="save verdict", button_style="primary")
        self.status = w.HTML(layout=w.Layout(width="100%"))
        self.figures = w.HTML()
        self.next_button.on_click(self._on_next)
        self.save.on_click(self._on_save)
        self.widget = w.VBox(
            [
                w.HBox([self.n, self.seed, self.next_button]),
                self.proposal,
                self.card,
                w.HBox([self.verdict, self.save]),
                self.status,
                self.figures,
            ]
        )
        self.redraw()

    def say(self, text: str) -> None:
        self.status_text = text
        self.status.value = f'<div style="white-space: normal; overflow-wrap: anywhere">{escape(text)}</div>'

    def current(self) -> str | None:
        """The proposed row on show (the first left to label), None when none is left."""
        left = self.labelling.queue()
        return left[0] if left else None

    def _on_next(self, _b: Any) -> None:
        seed = self.seed.value.strip()
        if seed and not seed.isdigit():
            self.say(f"nothing proposed: the seed must be a whole number, got {seed!r}")
            return
        try:
            self.labelling.propose(int(self.n.value), seed=int(seed) if seed else None)
        except InputError as exc:
            self.say(f"nothing proposed: {exc}")
            return
        self.say("")
        self.redraw()

    def _on_save(self, _b: Any) -> None:
        row = self.current()
        if row is None or self.verdict.value is None:
            self.say("press label next, then choose PASS or FAIL")
            return
        try:
            lab = self.labelling.label(row, str(self.verdict.value))
        except InputError as exc:
            self.say(f"not saved: {exc}")
            return
        self.verdict.value = None
        self.say(self.labelling.saved_text(lab))
        self.redraw()
        if self._on_label is not None:
            self._on_label()

    def redraw(self) -> None:
        """Show the open round's next row and the figures as the files are now."""
        lab = self.labelling
        lab.forget()  # the files as they are now (a label saved from the command line shows too)
        row = self.current()
        text = (
            lab.proposal_text()
            if row is not None
            else "press label next for the rows whose labels narrow the interval most"
        )
        self.proposal.value = f'<pre style="white-space: pre-wrap">{escape(text)}</pre>'
        self.card.value = STYLE + (lab.card(row) if row is not None else "")
        self.figures.value = str(lab.figures_html())


__all__ = ["HAND_PICKED", "HumanLabelling", "LabelNextPanel", "session_user"]

publish(globals())
