"""The audit notebook's session: the runs, their dataset, the failing rows and where marks go."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._display import HTMLBlock
from goldenkit._registry import publish
from goldenkit.audit._apply import AuditApplied, apply_audit
from goldenkit.audit._browser import AuditBrowser, AuditWidget
from goldenkit.audit._failures import audit_sample, failing_rows, sample_cards_html
from goldenkit.audit._labelling import HumanLabelling, session_user
from goldenkit.audit._marks import AUDIT_LABELS, AUDITS_DIR, AuditLog, audit_file, latest_marks, read_marks
from goldenkit.config import dataset_path_for_run
from goldenkit.dataset import Dataset, new_version_target, read_dataset
from goldenkit.errors import InputError
from goldenkit.results import judge_graded, outcomes_df, read_run


@dataclass
class AuditSession:
    """What the audit notebook works on: the runs, their dataset, the failing rows and the marks file."""

    runs: list[Any]
    dataset: Dataset | None
    failures: pd.DataFrame
    log: AuditLog
    audits_dir: Path
    notes: list[str] = field(default_factory=list)
    #: who labels (human verdicts carry it)
    user: str = "unknown"
    rule: str = "majority"
    #: the live summaries handed out by :meth:`summary` (``live=True``), redrawn after each saved mark
    _live: list[Any] = field(default_factory=list, repr=False)
    _labelling: dict[str, HumanLabelling] | None = field(default=None, repr=False)

    @property
    def dataset_key(self) -> dict[str, Any]:
        m = self.runs[0].manifest.get("dataset") or {}
        return {"name": m.get("name"), "version": m.get("version"), "sha256": m.get("sha256")}

    def browser(self, page_size: int = 1) -> AuditBrowser:
        return AuditBrowser(self.failures, log=self.log, dataset=self.dataset_key, page_size=page_size)

    def widget(self, page_size: int = 1, *, label_run: str | None = None) -> AuditWidget:
        """The ipywidgets browser (display ``.widget``); its apply button says :meth:`apply_plan` and asks,
        and its confirm button calls :meth:`apply_summary`; each saved mark redraws the live summaries.
        With a judge-graded run: the human verdict mark, and the "label next" panel of ``label_run``
        (default: the first judge-graded run)."""
        at_hand = self.dataset is not None
        labelling = self.labelling()
        return AuditWidget(
            self.browser(page_size),
            apply=self.apply_summary if at_hand else None,
            plan=self.apply_plan if at_hand else None,
            on_mark=self.refresh_live,
            labelling=labelling,
            label_next=label_run or next(iter(labelling), None),
        )

    def labelling(self) -> dict[str, HumanLabelling]:
        """Per judge-graded run id (in the order given), its human verdicts (:class:`HumanLabelling`)."""
        if self._labelling is None:
            self._labelling = {
                str(r.run_id): HumanLabelling(r, self.user, self.dataset, rule=self.rule)
                for r in self.runs
                if judge_graded(r)
            }
        return self._labelling

    def judge_figures(self) -> HTMLBlock:
        """The judge-graded figures of each judge-graded run (judge-only beside prediction-powered), or a
        sentence saying there is none."""
        parts = [lab.figures_html() for lab in self.labelling().values()]
        return HTMLBlock("".join(parts) or "<p>No run here is graded by a judge: no judge-graded figures.</p>")

    def failures_view(self, *, interactive: bool, n_per_slice: int = 3, seed: int = 0, page_size: int = 1) -> Any:
        """What the notebook shows of the failing rows: the widget browser, or a fixed sample.

        ``interactive`` (Jupyter): the ipywidgets browser, ``page_size`` rows a page.
        Otherwise (papermill, CI): :func:`audit_sample` of ``n_per_slice`` rows per
        slice drawn with ``seed``, as escaped cards.
        """
        if interactive:
            return self.widget(page_size).widget
        return sample_cards_html(audit_sample(self.failures, n_per_slice, seed))

    def _files(self) -> list[Path]:
        name = self.log.path.name.rsplit("-", 3)[0]
        return sorted(self.audits_dir.glob(f"{name}-*.jsonl"))

    def _on_this_version(self, mark: dict[str, Any]) -> bool:
        return not mark.get("dataset_sha256") or mark.get("dataset_sha256") == self.dataset_key.get("sha256")

    def all_marks(self) -> list[dict[str, Any]]:
        """Every mark on this dataset version, from all ``audits/<dataset>-*.jsonl`` files (oldest file first)."""
        return [m for m in read_marks(self._files()) if self._on_this_version(m)]

    def mark_files(self) -> list[Path]:
        """The ``audits/<dataset>-*.jsonl`` files holding a mark on this dataset version (oldest first)."""
        return [p for p in self._files() if any(self._on_this_version(m) for m in read_marks(p))]

    def apply(self, out: str | Path | None = None, *, version: str | None = None) -> AuditApplied:
        """:func:`goldenkit.audit.apply_audit` of :meth:`mark_files` to the dataset's folder: a new version."""
        if self.dataset is None:
            raise InputError("the runs' dataset is not at hand: give open_audit the dataset folder")
        folder = self.dataset.path if self.dataset.path.is_dir() else self.dataset.path.parent
        files = self.mark_files()
        if not files:
            raise InputError(f"no marks on this dataset version under {self.audits_dir}: mark a row first")
        return apply_audit(files, folder, out, version=version)

    def apply_plan(self) -> str:
        """What :meth:`apply` would write, in one line (the widget asks with it before writing): the new
        version, its folder and how many label errors; an InputError when there is nothing to apply."""
        if self.dataset is None:
            raise InputError("the runs' dataset is not at hand: give open_audit the dataset folder")
        if not self.mark_files():
            raise InputError(f"no marks on this dataset version under {self.audits_dir}: mark a row first")
        errors = sum(1 for m in latest_marks(self.all_marks()).values() if m.get("label") == "label_error")
        if not errors:
            raise InputError("no label_error marks to apply; the dataset is unchanged")
        folder = self.dataset.path if self.dataset.path.is_dir() else self.dataset.path.parent
        version, dest = new_version_target(self.dataset, folder)
        return (
            f"write {self.dataset_key.get('name')} {version} to {dest} "
            f"with {errors} label error{'s' if errors != 1 else ''} corrected or dropped"
        )

    def apply_summary(self) -> str:
        """:meth:`apply`, said in one line (what the widget's apply button shows)."""
        done = self.apply()
        parts = [f"wrote {self.dataset_key.get('name')} {done.version} to {done.path} (sha256 {done.sha256[:12]})"]
        if done.relabelled:
            parts.append(f"relabelled {', '.join(done.relabelled)}")
        if done.dropped:
            parts.append(f"dropped {', '.join(done.dropped)}")
        kept = ", ".join(f"{n} {label}" for label, n in done.ignored.items() if n)
        return "; ".join(parts) + (f"; left as they are: {kept}" if kept else "")

    def summary(self, *, live: bool = False) -> Any:
        """Runs, dataset, where marks go, and per slice the failing rows, the marked ones and each label's
        count. ``live`` (Jupyter): an ipywidgets HTML that follows the marks saved in :meth:`widget`."""
        html = self._summary_html()
        if not live:
            return html
        import ipywidgets as w

        view = w.HTML(value=str(html))
        self._live.append(view)
        return view

    def refresh_live(self) -> None:
        """Redraw every live summary from the marks as they are now."""
        if self._live:
            html = str(self._summary_html())
            for view in self._live:
                view.value = html

    def _summary_html(self) -> HTMLBlock:
        marked = latest_marks(self.all_marks())
        f = self.failures
        ids = f.drop_duplicates("row_id").assign(row_id=lambda d: d["row_id"].astype(str))
        label = ids["row_id"].map(lambda r: marked.get(r, {}).get("label"))
        columns = {
            "failing rows": ids.groupby("slice")["row_id"].nunique(),
            "marked": label.notna().groupby(ids["slice"]).sum(),
        }
        for name in AUDIT_LABELS:
            columns[name] = (label == name).groupby(ids["slice"]).sum()
        per = pd.DataFrame(columns).fillna(0)
        per = per.astype("int64")
        key = self.dataset_key
        ids = ", ".join(str(r.run_id) for r in self.runs)
        lines = [
            f"runs: {ids}; dataset {key.get('name')} {key.get('version') or ''} (sha256 {str(key.get('sha256'))[:12]})",
            f"marks are appended to {self.log.path}",
            *self.notes,
        ]
        return HTMLBlock("<ul>" + "".join(f"<li>{escape(x)}</li>" for x in lines) + "</ul>" + per.to_html(escape=True))


def open_audit(
    run: str | Path | Sequence[str | Path],
    *,
    results_dir: str | Path = "results",
    dataset: str | Path | None = None,
    rule: str = "majority",
    audits_dir: str | Path = AUDITS_DIR,
    day: date | str | None = None,
    user: str | None = None,
) -> AuditSession:
    """Open one or more runs of the same dataset for auditing.

    ``dataset`` defaults to the path recorded in the first run; an explicit
    dataset with another content hash than the runs' is an InputError, a
    recorded one that changed since is left out (prompts are then not shown)
    with a note saying so. ``user``: who labels (default: the operating system's user name).
    """

    refs = [run] if isinstance(run, (str, Path)) else list(run)
    if not refs:
        raise InputError("open_audit: no run given")
    runs = [read_run(r, results_dir) for r in refs]
    shas = {(r.manifest.get("dataset") or {}).get("sha256") for r in runs}
    if len(shas) > 1:
        raise InputError("the runs audited together must share one dataset (their dataset sha256 differ)")
    sha = shas.pop()
    notes: list[str] = []
    ds: Dataset | None = None
    if dataset is not None:
        ds = read_dataset(dataset)
        if sha and ds.sha256 != sha:
            raise InputError(f"{dataset}: dataset sha256 {ds.sha256[:12]}… is not the runs' {str(sha)[:12]}…")
    else:
        recorded = (runs[0].manifest.get("dataset") or {}).get("path")
        found = dataset_path_for_run(runs[0].manifest, runs[0].path)
        if found is None:
            notes.append(f"dataset {recorded!r} not found: prompts and expectations are not shown")
        else:
            cand = read_dataset(found)
            if sha and cand.sha256 != sha:
                notes.append(f"dataset at {found} changed since the run (sha256 differs): prompts are not shown")
            else:
                ds = cand

    outcomes = outcomes_df(*runs)
    failures = failing_rows(outcomes, ds, rule)
    name = (runs[0].manifest.get("dataset") or {}).get("name") or "dataset"
    log = AuditLog(audit_file(str(name), day, audits_dir))
    who = user or session_user()
    return AuditSession(
        runs=runs, dataset=ds, failures=failures, log=log, audits_dir=Path(audits_dir), notes=notes, user=who, rule=rule
    )


publish(globals())
