"""The failure audit: browse failing rows, mark label errors, turn them into a new dataset version.

A person reads failing rows (prompt, expected, response and the graders'
reasons side by side) and marks each one:

* ``label_error`` -- the dataset is wrong (the expectation or the slice), not the agent;
* ``agent_error`` -- the agent really failed;
* ``unclear`` -- cannot tell; needs another look.

**Marks file.** Marks are appended, one JSON object per line, to
``audits/<dataset>-<YYYY-MM-DD>.jsonl`` (:func:`audit_file`); the file is never
rewritten. A row marked twice keeps its **latest** mark. A mark::

    {"schema_version": 1, "marked_at": "2026-10-02T09:30:00+00:00",
     "dataset": "support-agent", "dataset_version": "1.0.0", "dataset_sha256": "...",
     "run_id": "cand", "row_id": "refund-0142", "slice": "refunds",
     "label": "label_error", "note": "policy changed: 30 days, not 14",
     "correction": {"case": {"expect": {"must_contain": ["30 days"]}}}}

**Applying marks** (:func:`apply_audit`, ``goldenkit audit apply``). Only
``label_error`` marks change the dataset:

* with a ``correction``: the correction is a JSON Merge Patch (RFC 7396) applied
  to the row (everything but ``id``): objects merge key by key, ``null``
  deletes a key, anything else replaces. ``{"case": {"expect": {"must_contain":
  ["30 days"]}}}`` relabels the expectation; ``{"slice": "billing"}`` moves the row.
* without one (``null``): the row is **dropped** from the new version -- a wrong
  label nobody has fixed is not ground truth, and guessing one would be worse.

The new version is written to a **new folder** (default: a sibling named
``<folder>-<new version>``); the old folder is never touched. Its dataset.json
has the new version and one changelog entry appended saying which rows were
relabelled or dropped and why (the notes), from which audit file and which
previous content hash. Unchanged rows keep their exact bytes; every other file
of the folder (fixtures, goldenkit.toml) is copied. Marks made against another
content hash than the dataset's are refused: they describe other rows.

The browser logic (:class:`AuditBrowser`: filtering, paging, mark recording) is
plain Python and tested; :class:`AuditWidget` only wires it to ipywidgets.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit import stats
from goldenkit.dataset import DATA_FILE, MANIFEST_FILE, Dataset, read_dataset, rows_to_jsonl
from goldenkit.errors import DatasetError, InputError
from goldenkit.metrics import grader_results
from goldenkit.schema import FAIL, SCHEMA_VERSION

AUDIT_LABELS = ("label_error", "agent_error", "unclear")
AUDITS_DIR = "audits"
ALL = "(all)"

# Columns of failing_rows(), in order.
FAILURE_COLUMNS = (
    "run_id",
    "row_id",
    "slice",
    "tags",
    "split",
    "source",
    "graders_failed",
    "passed",
    "repeat",
    "prompt",
    "expected",
    "response",
    "reasons",
)


# --------------------------------------------------------------------------- failing rows


def case_texts(dataset: Dataset | None, row_id: str) -> tuple[str, str]:
    """The prompt (all user turns) and what is expected of a dataset row, as text.

    Without a dataset, or for a row it does not hold, both are empty strings.
    A case that cannot be normalized falls back to its raw JSON.
    """
    if dataset is None:
        return "", ""
    try:
        case = dataset.case(row_id)
    except DatasetError:
        try:
            raw = dataset.rows["case"].iat[dataset.ids.index(row_id)]
        except ValueError:
            return "", ""
        return json.dumps(raw, ensure_ascii=False, indent=1, default=str), ""
    turns = [t.user for t in case.turns]
    prompt = turns[0] if len(turns) == 1 else "\n".join(f"[turn {i + 1}] {u}" for i, u in enumerate(turns))
    if case.system:
        prompt = f"[system] {case.system}\n{prompt}"
    parts = []
    if case.reference:
        parts.append(f"reference: {case.reference}")
    if case.expect:
        parts.append("expect: " + json.dumps(case.expect, ensure_ascii=False, sort_keys=True, default=str))
    tools = [[c.to_dict() for c in turn] for turn in case.expected_trajectory]
    if any(tools) and "tools" not in case.expect:
        parts.append("tools: " + json.dumps(tools, ensure_ascii=False, default=str))
    return prompt, "\n".join(parts)


def failing_rows(outcomes: pd.DataFrame, dataset: Dataset | None = None, rule: str = "majority") -> pd.DataFrame:
    """One line per (run, row) whose repeats collapse to FAIL under ``rule``.

    Shows the first failing repeat's response and its failed graders' reasons
    (``grader: reason`` lines), the graders that failed in any repeat, how many
    graded repeats passed, and -- when ``dataset`` is given -- the row's prompt,
    expectation and source. Ordered by slice, then row id, then run.
    """
    if outcomes.empty:
        return pd.DataFrame(columns=list(FAILURE_COLUMNS))
    runs = outcomes["run_id"].astype(str) if "run_id" in outcomes.columns else pd.Series("", index=outcomes.index)
    sources: dict[str, Any] = {}
    if dataset is not None:
        sources = dict(zip(dataset.rows["id"], dataset.rows["source"], strict=True))
    records = []
    for run_id, group in outcomes.groupby(runs, sort=True):
        collapsed = stats.collapse_repeats(group, rule)
        failed = collapsed[collapsed["verdict"].astype(str) == FAIL]
        if failed.empty:
            continue
        wanted = set(failed["row_id"].astype(str))
        sub = group[group["row_id"].astype(str).isin(wanted)].sort_values(["row_id", "repeat"], kind="stable")
        for row_id, reps in sub.groupby(sub["row_id"].astype(str), sort=False):
            fails = reps[reps["verdict"].astype(str) == FAIL]
            first = fails.iloc[0] if len(fails) else reps.iloc[0]
            failed_graders = sorted(
                {name for g in reps["graders"] for name, res in grader_results(g).items() if res.get("passed") is False}
            )
            reasons = [
                f"{name}: {res.get('reason') or '(no reason)'}"
                for name, res in grader_results(first["graders"]).items()
                if res.get("passed") is False
            ]
            if not reasons and first.get("detail"):
                reasons = [str(first["detail"])]
            graded = reps["verdict"].astype(str).isin(["PASS", "FAIL"])
            n_pass = int((reps["verdict"].astype(str) == "PASS").sum())
            prompt, expected = case_texts(dataset, row_id)
            source = sources.get(row_id)
            records.append(
                {
                    "run_id": str(run_id),
                    "row_id": row_id,
                    "slice": str(first["slice"]),
                    "tags": list(first["tags"]) if first.get("tags") is not None else [],
                    "split": str(first.get("split") or ""),
                    "source": "" if source is None or pd.isna(source) else str(source),
                    "graders_failed": failed_graders,
                    "passed": f"{n_pass}/{int(graded.sum())}",
                    "repeat": int(first["repeat"]),
                    "prompt": prompt,
                    "expected": expected,
                    "response": "" if first.get("response") is None else str(first["response"]),
                    "reasons": "\n".join(reasons),
                }
            )
    out = pd.DataFrame(records, columns=list(FAILURE_COLUMNS))
    return out.sort_values(["slice", "row_id", "run_id"], kind="stable").reset_index(drop=True)


def audit_sample(failures: pd.DataFrame, n_per_slice: int, seed: int = 0) -> pd.DataFrame:
    """A deterministic sample of at most ``n_per_slice`` failing rows per slice.

    Rows are ranked within their slice by SHA-256 of ``"<seed>:<run_id>:<row_id>"``
    and the first ``n_per_slice`` kept, so the sample depends only on the seed
    and the set of failures, never on their order or on the platform. Output is
    ordered by slice, then rank.
    """
    if n_per_slice < 0:
        raise InputError(f"n_per_slice must be >= 0, got {n_per_slice}")
    if failures.empty or n_per_slice == 0:
        return failures.iloc[0:0].copy()
    key = [
        hashlib.sha256(f"{seed}:{r}:{i}".encode()).hexdigest()
        for r, i in zip(failures["run_id"].astype(str), failures["row_id"].astype(str), strict=True)
    ]
    ranked = failures.assign(_key=key).sort_values(["slice", "_key"], kind="stable")
    return ranked.groupby("slice", sort=True).head(n_per_slice).drop(columns="_key").reset_index(drop=True)


def failure_card_html(row: Mapping[str, Any]) -> str:
    """One failing row as an HTML table: prompt, expected, response, reasons side by side (escaped)."""

    def cell(text: Any) -> str:
        return f"<td><pre>{escape('' if text is None else str(text))}</pre></td>"

    tags = ", ".join(row.get("tags") or [])
    head = (
        f"<b>{escape(str(row.get('row_id', '')))}</b> · slice {escape(str(row.get('slice', '')))}"
        f" · run {escape(str(row.get('run_id', '')))} · passed {escape(str(row.get('passed', '')))}"
        + (f" · tags {escape(tags)}" if tags else "")
        + (f" · source {escape(str(row.get('source')))}" if row.get("source") else "")
    )
    return (
        f'<div class="gk-card"><div>{head}</div><table class="gk-side-by-side">'
        "<tr><th>prompt</th><th>expected</th><th>response</th><th>reasons</th></tr><tr>"
        + cell(row.get("prompt"))
        + cell(row.get("expected"))
        + cell(row.get("response"))
        + cell(row.get("reasons"))
        + "</tr></table></div>"
    )


# --------------------------------------------------------------------------- marks


def audit_file(dataset_name: str, day: date | str | None = None, audits_dir: str | Path = AUDITS_DIR) -> Path:
    """``audits/<dataset>-<YYYY-MM-DD>.jsonl`` for a dataset name and a day (default today, UTC)."""
    d = day if isinstance(day, str) else (day or datetime.now(UTC).date()).isoformat()
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in dataset_name) or "dataset"
    return Path(audits_dir) / f"{safe}-{d}.jsonl"


def make_mark(
    row: Mapping[str, Any],
    label: str,
    note: str = "",
    correction: Mapping[str, Any] | None = None,
    *,
    dataset: Mapping[str, Any] | None = None,
    marked_at: str | None = None,
) -> dict[str, Any]:
    """A mark record for a failing row (see the module docstring for the fields)."""
    if label not in AUDIT_LABELS:
        raise InputError(f"unknown audit label {label!r}: use one of {', '.join(AUDIT_LABELS)}")
    if correction is not None and not isinstance(correction, Mapping):
        raise InputError("correction must be a JSON object (a merge patch of the row) or null")
    if correction is not None and "id" in correction:
        raise InputError("a correction cannot change a row's id")
    ds = dataset or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "marked_at": marked_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": ds.get("name"),
        "dataset_version": ds.get("version"),
        "dataset_sha256": ds.get("sha256"),
        "run_id": row.get("run_id"),
        "row_id": str(row["row_id"]),
        "slice": row.get("slice"),
        "label": label,
        "note": note,
        "correction": dict(correction) if correction is not None else None,
    }


class AuditLog:
    """An append-only marks file: each :meth:`append` writes one flushed JSON line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def append(self, mark: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(dict(mark), ensure_ascii=False, default=str) + "\n")
            fh.flush()

    def read(self) -> list[dict[str, Any]]:
        return read_marks(self.path) if self.path.exists() else []


def read_marks(paths: str | Path | Iterable[str | Path]) -> list[dict[str, Any]]:
    """The marks of one or more audit files, in file order; each carries ``_where`` (file:line).

    A malformed line, an unknown label or a mark without a row id is an
    InputError naming ``file:line``.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    marks = []
    for p in map(Path, items):
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{p}: cannot read audit file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not UTF-8 text (byte {exc.start})") from None
        for i, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            where = f"{p}:{i}"
            try:
                mark = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: invalid JSON: {exc.msg}") from None
            if not isinstance(mark, dict) or not isinstance(mark.get("row_id"), str) or not mark["row_id"]:
                raise InputError(f"{where}: a mark needs a non-empty string row_id")
            if mark.get("label") not in AUDIT_LABELS:
                raise InputError(f"{where}: unknown label {mark.get('label')!r}: use one of {', '.join(AUDIT_LABELS)}")
            corr = mark.get("correction")
            if corr is not None and (not isinstance(corr, dict) or "id" in corr):
                raise InputError(f"{where}: correction must be a JSON object without 'id', or null")
            mark["_where"] = where
            marks.append(mark)
    return marks


def latest_marks(marks: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last mark per row id (later lines and later files supersede earlier ones)."""
    out: dict[str, dict[str, Any]] = {}
    for m in marks:
        out[str(m["row_id"])] = dict(m)
    return out


def marks_frame(marks: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The latest mark per row as a DataFrame (row_id, slice, label, note, run_id, correction)."""
    latest = list(latest_marks(marks).values())
    cols = ["row_id", "slice", "label", "note", "run_id", "correction"]
    return pd.DataFrame([{c: m.get(c) for c in cols} for m in latest], columns=cols)


# --------------------------------------------------------------------------- browser logic


@dataclass
class AuditBrowser:
    """Filtering, paging and marking over :func:`failing_rows` output (no widgets).

    Filters (``slice``, ``tag``, ``grader``, ``source``, ``run``) are exact
    values; ``None`` or ``"(all)"`` means no filter. ``tag`` matches rows that
    carry the tag, ``grader`` rows where that grader failed. Pages hold
    ``page_size`` rows; changing a filter returns to the first page.
    """

    failures: pd.DataFrame
    log: AuditLog | None = None
    dataset: Mapping[str, Any] = field(default_factory=dict)
    page_size: int = 1
    filters: dict[str, str | None] = field(default_factory=dict)
    page: int = 0
    marks: dict[str, str] = field(default_factory=dict)

    FILTERS = ("slice", "tag", "grader", "source", "run")

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
    """An ipywidgets front end over :class:`AuditBrowser` (display ``.widget`` in Jupyter)."""

    def __init__(self, browser: AuditBrowser) -> None:
        import ipywidgets as w

        self.browser = browser
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
        self.status = w.Label()
        for dd in self.dropdowns.values():
            dd.observe(self._on_filter, names="value")
        self.prev_button.on_click(lambda _b: self._move(-1))
        self.next_button.on_click(lambda _b: self._move(1))
        self.save.on_click(self._on_save)
        self.widget = w.VBox(
            [
                w.HBox(list(self.dropdowns.values())[:3]),
                w.HBox(list(self.dropdowns.values())[3:]),
                w.HBox([self.prev_button, self.position, self.next_button]),
                self.card,
                w.HBox([self.label, self.note]),
                self.correction,
                w.HBox([self.save, self.status]),
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
            self.status.value = "choose a row and a label first"
            return
        text = self.correction.value.strip()
        try:
            corr = json.loads(text) if text else None
            mark = self.browser.mark(str(rows.iloc[0]["row_id"]), self.label.value, self.note.value, corr)
        except (ValueError, InputError) as exc:
            self.status.value = f"not saved: {exc}"
            return
        where = self.browser.log.path if self.browser.log is not None else "memory"
        self.status.value = f"saved {mark['label']} for {mark['row_id']} to {where}"
        self.note.value = ""
        self.correction.value = ""
        self.refresh()

    def refresh(self) -> None:
        b = self.browser
        rows = b.current()
        self.position.value = f"page {b.page + 1} of {b.n_pages} · {len(b.view)} failing rows"
        cards = []
        for rec in rows.to_dict("records"):
            label = b.marks.get(str(rec["row_id"]))
            badge = f"<p>marked: <b>{escape(label)}</b></p>" if label else ""
            cards.append(failure_card_html(rec) + badge)
        from goldenkit.report import STYLE

        self.card.value = STYLE + ("".join(cards) or "<p>no failing rows match the filters</p>")


# --------------------------------------------------------------------------- applying marks


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def next_version(version: str | None) -> str:
    """The version after ``version``: ``1.2.3 -> 1.3.0``, ``1.2 -> 1.3``, ``4 -> 5``, else ``<v>.1``."""
    if not version:
        return "1"
    parts = version.split(".")
    if all(p.isdigit() for p in parts):
        if len(parts) == 1:
            return str(int(parts[0]) + 1)
        bumped = [parts[0], str(int(parts[1]) + 1)] + ["0"] * (len(parts) - 2)
        return ".".join(bumped)
    return f"{version}.1"


@dataclass
class AuditApplied:
    """What :func:`apply_audit` wrote."""

    path: Path
    version: str
    sha256: str
    previous_version: str | None
    previous_sha256: str
    relabelled: list[str]
    dropped: list[str]
    ignored: dict[str, int]


def apply_audit(
    audit_paths: str | Path | Sequence[str | Path],
    dataset_dir: str | Path,
    out: str | Path | None = None,
    *,
    version: str | None = None,
    today: date | None = None,
) -> AuditApplied:
    """Write a new dataset version with the confirmed label errors of the audit files fixed.

    See the module docstring for the rules. Raises InputError when the marks
    were made against another dataset hash, name a row the dataset lacks, a
    correction makes a row invalid, or there is nothing to apply; refuses to
    write into an existing folder.
    """
    src = Path(dataset_dir)
    if not src.is_dir():
        raise InputError(f"{src}: audit apply needs a dataset folder (dataset.jsonl + dataset.json)")
    ds = read_dataset(src)
    paths = [audit_paths] if isinstance(audit_paths, (str, Path)) else list(audit_paths)
    marks = read_marks(paths)
    for m in marks:
        sha = m.get("dataset_sha256")
        if sha and sha != ds.sha256:
            raise InputError(f"{m['_where']}: mark made on dataset sha256 {sha[:12]}…, but {src} has {ds.sha256[:12]}…")
    latest = latest_marks(marks)
    known = set(ds.ids)
    for rid, m in latest.items():
        if rid not in known:
            raise InputError(f"{m['_where']}: row {rid!r} is not in {src}")
    confirmed = {rid: m for rid, m in latest.items() if m["label"] == "label_error"}
    ignored = {lab: sum(1 for m in latest.values() if m["label"] == lab) for lab in ("agent_error", "unclear")}
    if not confirmed:
        raise InputError(f"{', '.join(map(str, paths))}: no label_error marks to apply; the dataset is unchanged")

    new_version = version or next_version(ds.version)
    if new_version == ds.version or any(e.get("version") == new_version for e in ds.manifest.get("changelog", [])):
        raise InputError(f"version {new_version!r} is already in {src / MANIFEST_FILE}'s changelog")
    dest = Path(out) if out is not None else src.with_name(f"{src.name}-{new_version}")
    if dest.exists():
        raise InputError(f"{dest}: already exists; a new dataset version goes to a new folder")

    lines: list[bytes] = []
    relabelled: list[str] = []
    dropped: list[str] = []
    for row in ds.rows.to_dict("records"):
        rid = row["id"]
        mark = confirmed.get(rid)
        if mark is None:
            lines.append(ds.raw_line(rid) + b"\n")
        elif mark.get("correction") is None:
            dropped.append(rid)
        else:
            original = json.loads(ds.raw_line(rid))
            patched = merge_patch(original, mark["correction"])
            patched["id"] = rid
            lines.append(rows_to_jsonl([patched]))
            relabelled.append(rid)
    if not lines:
        raise InputError("every row would be dropped; refusing to write an empty dataset")

    why_parts = [f"audit {', '.join(Path(p).name for p in paths)} of {ds.version} (sha256 {ds.sha256[:12]})"]
    if relabelled:
        why_parts.append(f"relabelled {len(relabelled)} label error(s): {', '.join(relabelled)}")
    if dropped:
        why_parts.append(f"dropped {len(dropped)} label error(s) without a correction: {', '.join(dropped)}")
    notes = [f"{rid}: {confirmed[rid]['note']}" for rid in relabelled + dropped if confirmed[rid].get("note")]
    if notes:
        why_parts.append("notes: " + "; ".join(notes))
    manifest = dict(ds.manifest)
    manifest["version"] = new_version
    manifest["changelog"] = [
        *ds.manifest.get("changelog", []),
        {"version": new_version, "date": (today or datetime.now(UTC).date()).isoformat(), "why": "; ".join(why_parts)},
    ]

    tmp = dest.with_name(f".{dest.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(DATA_FILE, MANIFEST_FILE))
    (tmp / DATA_FILE).write_bytes(b"".join(lines))
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        new = read_dataset(tmp)
    except DatasetError as exc:
        shutil.rmtree(tmp)
        raise InputError(f"the corrected dataset would be invalid: {exc}") from None
    tmp.rename(dest)
    return AuditApplied(
        path=dest,
        version=new_version,
        sha256=new.sha256,
        previous_version=ds.version,
        previous_sha256=ds.sha256,
        relabelled=relabelled,
        dropped=dropped,
        ignored=ignored,
    )


# --------------------------------------------------------------------------- a notebook session


def _resolve_dataset(recorded: str | None, run_path: Path) -> Path | None:
    """Where the dataset recorded in run.json is now: as given, or relative to the run's folder or its parent."""
    if not recorded:
        return None
    p = Path(recorded)
    for cand in (p, run_path / p, run_path.parent / p):
        if cand.exists():
            return cand
    return None


@dataclass
class AuditSession:
    """What the audit notebook works on: the runs, their dataset, the failing rows and the marks file."""

    runs: list[Any]
    dataset: Dataset | None
    failures: pd.DataFrame
    log: AuditLog
    audits_dir: Path
    notes: list[str] = field(default_factory=list)

    @property
    def dataset_key(self) -> dict[str, Any]:
        m = self.runs[0].manifest.get("dataset") or {}
        return {"name": m.get("name"), "version": m.get("version"), "sha256": m.get("sha256")}

    def browser(self, page_size: int = 1) -> AuditBrowser:
        return AuditBrowser(self.failures, log=self.log, dataset=self.dataset_key, page_size=page_size)

    def widget(self, page_size: int = 1) -> AuditWidget:
        """The ipywidgets browser (display ``.widget``)."""
        return AuditWidget(self.browser(page_size))

    def all_marks(self) -> list[dict[str, Any]]:
        """Every mark on this dataset version, from all ``audits/<dataset>-*.jsonl`` files (oldest file first)."""
        name = self.log.path.name.rsplit("-", 3)[0]
        files = sorted(self.audits_dir.glob(f"{name}-*.jsonl"))
        sha = self.dataset_key.get("sha256")
        return [m for m in read_marks(files) if not m.get("dataset_sha256") or m.get("dataset_sha256") == sha]

    def summary(self) -> Any:
        """Runs, dataset, where marks go, and failing / already-marked rows per slice."""
        from goldenkit.report import HTMLBlock

        marked = latest_marks(self.all_marks())
        f = self.failures
        per = pd.DataFrame(
            {
                "failing rows": f.groupby("slice")["row_id"].nunique(),
                "marked": f.assign(m=f["row_id"].isin(set(marked)))[lambda d: d["m"]]
                .groupby("slice")["row_id"]
                .nunique(),
            }
        ).fillna(0)
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
) -> AuditSession:
    """Open one or more runs of the same dataset for auditing.

    ``dataset`` defaults to the path recorded in the first run; an explicit
    dataset with another content hash than the runs' is an InputError, a
    recorded one that changed since is left out (prompts are then not shown)
    with a note saying so.
    """
    from goldenkit.results import read_run

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
        found = _resolve_dataset(recorded, runs[0].path)
        if found is None:
            notes.append(f"dataset {recorded!r} not found: prompts and expectations are not shown")
        else:
            cand = read_dataset(found)
            if sha and cand.sha256 != sha:
                notes.append(f"dataset at {found} changed since the run (sha256 differs): prompts are not shown")
            else:
                ds = cand
    from goldenkit.results import outcomes_df

    outcomes = outcomes_df(*runs)
    failures = failing_rows(outcomes, ds, rule)
    name = (runs[0].manifest.get("dataset") or {}).get("name") or "dataset"
    log = AuditLog(audit_file(str(name), day, audits_dir))
    return AuditSession(runs=runs, dataset=ds, failures=failures, log=log, audits_dir=Path(audits_dir), notes=notes)


__all__ = [
    "ALL",
    "AUDITS_DIR",
    "AUDIT_LABELS",
    "FAILURE_COLUMNS",
    "AuditApplied",
    "AuditBrowser",
    "AuditLog",
    "AuditSession",
    "AuditWidget",
    "apply_audit",
    "audit_file",
    "audit_sample",
    "case_texts",
    "failing_rows",
    "failure_card_html",
    "latest_marks",
    "make_mark",
    "marks_frame",
    "merge_patch",
    "next_version",
    "open_audit",
    "read_marks",
]
