"""Applying audit marks: confirmed label errors become a new dataset version in a new folder."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit.audit._marks import latest_marks, read_marks
from goldenkit.dataset import (
    Dataset,
    new_version_target,
    read_dataset,
    rows_to_jsonl,
    with_changelog_entry,
    write_version,
)
from goldenkit.errors import InputError


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

    See the package docstring for the rules. Raises InputError when the marks
    were made against another dataset hash, name a row the dataset lacks, a
    correction makes a row invalid, or there is nothing to apply; refuses to
    write into an existing folder.
    """
    src = Path(dataset_dir)
    if not src.is_dir():
        raise InputError(f"{src}: audit apply needs a dataset folder (dataset.jsonl + dataset.json)")
    ds = read_dataset(src)
    paths = [audit_paths] if isinstance(audit_paths, (str, Path)) else list(audit_paths)
    latest = _latest_marks_on(ds, src, paths)
    confirmed = {rid: m for rid, m in latest.items() if m["label"] == "label_error"}
    ignored = {lab: sum(1 for m in latest.values() if m["label"] == lab) for lab in ("agent_error", "unclear")}
    if not confirmed:
        raise InputError(f"{', '.join(map(str, paths))}: no label_error marks to apply; the dataset is unchanged")

    new_version, dest = new_version_target(ds, src, version, out)

    lines, relabelled, dropped = _corrected_lines(ds, confirmed)
    why = _why(ds, paths, confirmed, relabelled, dropped)
    manifest = with_changelog_entry(ds.manifest, new_version, today or datetime.now(UTC).date(), why)
    new = write_version(src, dest, b"".join(lines), manifest, what="corrected")
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


def _latest_marks_on(ds: Dataset, src: Path, paths: Sequence[str | Path]) -> dict[str, dict[str, Any]]:
    """The latest mark per row, after checking every mark was made on this dataset's rows."""
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
    return latest


def _corrected_lines(
    ds: Dataset, confirmed: Mapping[str, Mapping[str, Any]]
) -> tuple[list[bytes], list[str], list[str]]:
    """(the new file's lines, relabelled ids, dropped ids); unchanged rows keep their exact bytes."""
    lines: list[bytes] = []
    relabelled: list[str] = []
    dropped: list[str] = []
    for rid in ds.ids:
        mark = confirmed.get(rid)
        if mark is None:
            lines.append(ds.raw_line(rid) + b"\n")
        elif mark.get("correction") is None:
            dropped.append(rid)
        else:
            patched = merge_patch(json.loads(ds.raw_line(rid)), mark["correction"])
            patched["id"] = rid
            lines.append(rows_to_jsonl([patched]))
            relabelled.append(rid)
    if not lines:
        raise InputError("every row would be dropped; refusing to write an empty dataset")
    return lines, relabelled, dropped


def _why(
    ds: Dataset,
    paths: Sequence[str | Path],
    confirmed: Mapping[str, Mapping[str, Any]],
    relabelled: list[str],
    dropped: list[str],
) -> str:
    """The changelog entry's text: which audit, what was relabelled or dropped, and the notes."""
    parts = [f"audit {', '.join(Path(p).name for p in paths)} of {ds.version} (sha256 {ds.sha256[:12]})"]
    if relabelled:
        parts.append(f"relabelled {len(relabelled)} label error(s): {', '.join(relabelled)}")
    if dropped:
        parts.append(f"dropped {len(dropped)} label error(s) without a correction: {', '.join(dropped)}")
    notes = [f"{rid}: {confirmed[rid]['note']}" for rid in relabelled + dropped if confirmed[rid].get("note")]
    if notes:
        parts.append("notes: " + "; ".join(notes))
    return "; ".join(parts)


publish(globals())
