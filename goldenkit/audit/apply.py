"""Applying audit marks: confirmed label errors become a new dataset version in a new folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from goldenkit.audit.marks import latest_marks, read_marks
from goldenkit.dataset import DATA_FILE, MANIFEST_FILE, Dataset, read_dataset, rows_to_jsonl
from goldenkit.errors import DatasetError, InputError


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

    new_version = version or next_version(ds.version)
    if new_version == ds.version or any(e.get("version") == new_version for e in ds.manifest.get("changelog", [])):
        raise InputError(f"version {new_version!r} is already in {src / MANIFEST_FILE}'s changelog")
    dest = Path(out) if out is not None else src.with_name(f"{src.name}-{new_version}")
    if dest.exists():
        raise InputError(f"{dest}: already exists; a new dataset version goes to a new folder")

    lines, relabelled, dropped = _corrected_lines(ds, confirmed)
    why = _why(ds, paths, confirmed, relabelled, dropped)
    manifest = dict(ds.manifest)
    manifest["version"] = new_version
    manifest["changelog"] = [
        *ds.manifest.get("changelog", []),
        {"version": new_version, "date": (today or datetime.now(UTC).date()).isoformat(), "why": why},
    ]
    new = _write_version(src, dest, b"".join(lines), manifest)
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


def _write_version(src: Path, dest: Path, data: bytes, manifest: dict[str, Any]) -> Dataset:
    """Copy the folder beside ``dest`` with the new rows and manifest, check it reads, then rename it."""
    tmp = dest.with_name(f".{dest.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(DATA_FILE, MANIFEST_FILE))
    (tmp / DATA_FILE).write_bytes(data)
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    try:
        new = read_dataset(tmp)
    except DatasetError as exc:
        shutil.rmtree(tmp)
        raise InputError(f"the corrected dataset would be invalid: {exc}") from None
    tmp.rename(dest)
    return new
