"""Browsing failing rows: the filtering, paging and marking logic, and its ipywidgets front end."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

import pandas as pd

from goldenkit._display import STYLE
from goldenkit._registry import publish
from goldenkit.audit._failures import failure_card_html
from goldenkit.audit._labelling import HumanLabelling, LabelNextPanel
from goldenkit.audit._marks import AUDIT_LABELS, AuditLog, latest_marks, make_mark
from goldenkit.errors import InputError

ALL = "(all)"


@dataclass
class AuditBrowser:
    """Filtering, paging and marking over :func:`failing_rows` output (no widgets).

    Filters (``slice``, ``tag``, ``grader``, ``cluster``, ``source``, ``run``) are
    exact values; ``None`` or ``"(all)"`` means no filter. ``tag`` matches rows that
    carry the tag, ``grader`` rows where that grader failed, ``cluster`` rows with
    that finding (``trajectory: lookup_order was not called before the answer``, the
    ``what`` of :func:`goldenkit.why`; its options come largest first). Pages hold
    ``page_size`` rows; changing a filter returns to the first page.
    """

    failures: pd.DataFrame
    log: AuditLog | None = None
    dataset: Mapping[str, Any] = field(default_factory=dict)
    page_size: int = 1
    filters: dict[str, str | None] = field(default_factory=dict)
    page: int = 0
    marks: dict[str, str] = field(default_factory=dict)

    FILTERS = ("slice", "tag", "grader", "cluster", "source", "run")

    def __post_init__(self) -> None:
        if self.page_size < 1:
            raise InputError(f"page_size must be >= 1, got {self.page_size}")
        if self.log is not None:
            self.marks = {rid: m["label"] for rid, m in latest_marks(self.log.read()).items()}

    def options(self, name: str) -> list[str]:
        """The values a filter can take (sorted), for a dropdown."""
        f = self.failures
        if name == "tag":
            return sorted({t for tags in f["tags"] for t in tags})
        if name == "grader":
            return sorted({g for gs in f["graders_failed"] for g in gs})
        if name == "cluster":  # largest first: what most failing rows share
            counts = Counter(x for found in f.get("findings", pd.Series(dtype=object)) for x in dict.fromkeys(found))
            return [x for x, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        col = {"run": "run_id"}.get(name, name)
        if name not in self.FILTERS:
            raise InputError(f"unknown filter {name!r}: use one of {', '.join(self.FILTERS)}")
        return sorted({str(v) for v in f[col] if v is not None and str(v) != ""})

    def set_filter(self, **filters: str | None) -> None:
        for name, value in filters.items():
            if name not in self.FILTERS:
                raise InputError(f"unknown filter {name!r}: use one of {', '.join(self.FILTERS)}")
            self.filters[name] = None if value in (None, "", ALL) else value
        self.page = 0

    @property
    def view(self) -> pd.DataFrame:
        """The failing rows that pass every filter."""
        f = self.failures
        keep = pd.Series(True, index=f.index)
        for name, value in self.filters.items():
            if value is None:
                continue
            if name == "tag":
                keep &= f["tags"].map(lambda tags, v=value: v in tags)
            elif name == "grader":
                keep &= f["graders_failed"].map(lambda gs, v=value: v in gs)
            elif name == "cluster":
                keep &= f["findings"].map(lambda found, v=value: v in found)
            else:
                keep &= f[{"run": "run_id"}.get(name, name)].astype(str) == value
        return f[keep]

    @property
    def n_pages(self) -> int:
        return max(1, -(-len(self.view) // self.page_size))

    def goto(self, page: int) -> None:
        self.page = min(max(0, page), self.n_pages - 1)

    def next(self) -> None:
        self.goto(self.page + 1)

    def prev(self) -> None:
        self.goto(self.page - 1)

    def current(self) -> pd.DataFrame:
        """The rows of the current page."""
        start = self.page * self.page_size
        return self.view.iloc[start : start + self.page_size]

    def mark(
        self, row_id: str, label: str, note: str = "", correction: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Record a mark for a failing row: appended to the log (when there is one) and remembered."""
        hits = self.failures[self.failures["row_id"].astype(str) == str(row_id)]
        if hits.empty:
            raise InputError(f"row {row_id!r} is not among the failing rows")
        mark = make_mark(hits.iloc[0].to_dict(), label, note, correction, dataset=self.dataset)
        if self.log is not None:
            self.log.append(mark)
        self.marks[str(row_id)] = label
        return mark


class AuditWidget:
    """An ipywidgets front end over :class:`AuditBrowser` (display ``.widget`` in Jupyter).

    ``apply``: what the "apply" button calls to write the confirmed label errors as a
    new dataset version (:meth:`goldenkit.audit.AuditSession.apply_summary`); it returns
    the line the status shows. Without one (no dataset folder at hand) the button is disabled.
    The button writes nothing itself: it asks first, saying what would be written (``plan``,
    :meth:`goldenkit.audit.AuditSession.apply_plan`: the version and its folder), and only
    "confirm" writes it. ``on_mark`` is called after each saved mark (the session's live
    summaries follow it). The status line wraps on its own row, never clipped.

    ``labelling``: per judge-graded run id, where the "human verdict: PASS / FAIL" mark of the row on show
    is saved (a hand-picked label unless a round of label next drew the row, and the status says so);
    ``label_next``: the run whose "label next" panel (:class:`goldenkit.audit._labelling.LabelNextPanel`)
    is shown below the browser. Without a judge-graded run neither is shown.
    """

    def __init__(
        self,
        browser: AuditBrowser,
        apply: Callable[[], str] | None = None,
        plan: Callable[[], str] | None = None,
        on_mark: Callable[[], None] | None = None,
        *,
        labelling: Mapping[str, HumanLabelling] | None = None,
        label_next: str | None = None,
    ) -> None:
        import ipywidgets as w

        self.browser = browser
        self._apply = apply
        self._plan = plan
        self._on_mark = on_mark
        self.status_text = ""
        self.dropdowns = {
            name: w.Dropdown(options=[ALL, *browser.options(name)], value=ALL, description=name)
            for name in AuditBrowser.FILTERS
        }
        self.prev_button = w.Button(description="◀ previous")
        self.next_button = w.Button(description="next ▶")
        self.position = w.Label()
        self.card = w.HTML()
        self.label = w.ToggleButtons(options=list(AUDIT_LABELS), value=None, description="mark")
        self.note = w.Text(placeholder="note (why)", layout=w.Layout(width="60%"))
        self.correction = w.Textarea(placeholder='correction as JSON merge patch, e.g. {"case": {"expect": {...}}}')
        self.save = w.Button(description="save mark", button_style="primary")
        self.apply_button = w.Button(
            description="apply as new version",
            button_style="warning",
            disabled=apply is None,
            tooltip="write the rows marked label_error, corrected or dropped, as a new dataset version"
            if apply is not None
            else "the dataset folder is not at hand: use goldenkit audit apply",
            layout=w.Layout(width="auto", min_width="13em"),
        )
        self.status = w.HTML(layout=w.Layout(width="100%"))
        self.confirm_button = w.Button(description="confirm: write it", button_style="danger")
        self.cancel_button = w.Button(description="cancel")
        self.confirm = w.HBox([self.confirm_button, self.cancel_button], layout=w.Layout(display="none"))
        self.labelling = dict(labelling or {})
        self.human = w.ToggleButtons(options=["PASS", "FAIL"], value=None, description="human verdict")
        self.save_human = w.Button(description="save verdict", tooltip="a human verdict on the row, as a label")
        self.save_human.on_click(self._on_save_human)
        self.panel = (
            LabelNextPanel(self.labelling[label_next], on_label=on_mark) if label_next in self.labelling else None
        )
        for dd in self.dropdowns.values():
            dd.observe(self._on_filter, names="value")
        self.prev_button.on_click(lambda _b: self._move(-1))
        self.next_button.on_click(lambda _b: self._move(1))
        self.save.on_click(self._on_save)
        self.apply_button.on_click(self._on_apply)
        self.confirm_button.on_click(self._on_confirm)
        self.cancel_button.on_click(self._on_cancel)
        self.widget = w.VBox(
            [
                w.HBox(list(self.dropdowns.values())[:3]),
                w.HBox(list(self.dropdowns.values())[3:]),
                w.HBox([self.prev_button, self.position, self.next_button]),
                self.card,
                w.HBox([self.label, self.note]),
                self.correction,
                w.HBox([self.save, self.apply_button]),
                self.confirm,
                self.status,
                *([w.HBox([self.human, self.save_human])] if self.labelling else []),
                *([self.panel.widget] if self.panel is not None else []),
            ]
        )
        self.refresh()

    def _on_filter(self, _change: Any) -> None:
        self.browser.set_filter(**{name: dd.value for name, dd in self.dropdowns.items()})
        self.refresh()

    def _move(self, step: int) -> None:
        self.browser.goto(self.browser.page + step)
        self.refresh()

    def _on_save(self, _b: Any) -> None:
        rows = self.browser.current()
        if rows.empty or self.label.value is None:
            self.say("choose a row and a label first")
            return
        text = self.correction.value.strip()
        try:
            corr = json.loads(text) if text else None
            mark = self.browser.mark(str(rows.iloc[0]["row_id"]), self.label.value, self.note.value, corr)
        except (ValueError, InputError) as exc:
            self.say(f"not saved: {exc}")
            return
        where = self.browser.log.path if self.browser.log is not None else "memory"
        self.say(f"saved {mark['label']} for {mark['row_id']} to {where}")
        self.note.value = ""
        self.correction.value = ""
        self.refresh()
        if self._on_mark is not None:
            self._on_mark()

    def _on_save_human(self, _b: Any) -> None:
        """Save the human verdict on the row on show (a label of its run: module doc of the labelling)."""
        rows = self.browser.current()
        if rows.empty or self.human.value is None:
            self.say("choose a row and a human verdict (PASS or FAIL) first")
            return
        run_id, row_id = str(rows.iloc[0]["run_id"]), str(rows.iloc[0]["row_id"])
        if run_id not in self.labelling:
            self.say(f"not saved: run {run_id} has no judge verdicts, so a human verdict has nothing to correct")
            return
        try:
            lab = self.labelling[run_id].label(row_id, str(self.human.value))
        except InputError as exc:
            self.say(f"not saved: {exc}")
            return
        self.human.value = None
        self.say(self.labelling[run_id].saved_text(lab))
        self.refresh()
        if self.panel is not None:
            self.panel.redraw()
        if self._on_mark is not None:
            self._on_mark()

    def _human_badge(self, rec: Mapping[str, Any]) -> str:
        """The human verdict saved on the row, and whether it counts, under its card ("" without one)."""
        lab = self.labelling.get(str(rec.get("run_id")))
        found = lab.labels().get(str(rec["row_id"])) if lab is not None else None
        if found is None:
            return ""
        how = "drawn by label next: used for inference" if found.designed else "hand-picked: shown, never used"
        return f"<p>human verdict: <b>{escape(found.human)}</b> ({how})</p>"

    def say(self, text: str) -> None:
        """Show ``text`` (escaped) in the status line, which wraps (``status_text`` keeps it as text)."""
        self.status_text = text
        self.status.value = f'<div style="white-space: normal; overflow-wrap: anywhere">{escape(text)}</div>'

    def _on_apply(self, _b: Any) -> None:
        """Ask before writing: what would be written, with "confirm" and "cancel" beside it."""
        if self._apply is None:
            return
        try:
            what = self._plan() if self._plan is not None else "write the label errors as a new dataset version"
        except InputError as exc:
            self.say(f"not applied: {exc}")
            return
        self.confirm.layout.display = "flex"
        self.say(f"{what}? Nothing is written until you confirm.")

    def _on_confirm(self, _b: Any) -> None:
        self.confirm.layout.display = "none"
        if self._apply is None:
            return
        try:
            self.say(self._apply())
        except InputError as exc:
            self.say(f"not applied: {exc}")

    def _on_cancel(self, _b: Any) -> None:
        self.confirm.layout.display = "none"
        self.say("not applied: cancelled; the dataset is unchanged")

    def refresh(self) -> None:
        b = self.browser
        rows = b.current()
        self.position.value = f"page {b.page + 1} of {b.n_pages} · {len(b.view)} failing rows"
        cards = []
        for rec in rows.to_dict("records"):
            label = b.marks.get(str(rec["row_id"]))
            badge = f"<p>marked: <b>{escape(label)}</b></p>" if label else ""
            cards.append(failure_card_html(rec) + badge + self._human_badge(rec))
        self.card.value = STYLE + ("".join(cards) or "<p>no failing rows match the filters</p>")


publish(globals())
