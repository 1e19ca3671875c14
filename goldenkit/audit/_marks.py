"""Audit marks: the marks file (append-only JSONL), reading it back, the latest mark per row."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import InputError
from goldenkit.schema import SCHEMA_VERSION

AUDIT_LABELS = ("label_error", "agent_error", "unclear")
AUDITS_DIR = "audits"


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


publish(globals())
