"""run.json: the run's manifest, rewritten atomically while the run goes, read back by :func:`read_manifest`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit._files import write_atomic
from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets, mask_secrets_value, scrub_value
from goldenkit.errors import ResultsError
from goldenkit.schema import FORMAT_VERSION, RUN_FILE

#: The top-level keys of goldenkit's JSON files that hold text for people, fully scrubbed
#: (:func:`goldenkit._scrub.scrub`): run.json's ``invalid_reason`` and ``crash`` (error excerpts), the
#: explanation cache's ``explanations``. The rest is data of record (:mod:`goldenkit._scrub`'s table).
TEXT_FOR_PEOPLE = frozenset({"invalid_reason", "crash", "explanations"})


def _people_scrubbed(data: dict[str, Any]) -> dict[str, Any]:
    return {k: scrub_value(v) if k in TEXT_FOR_PEOPLE else v for k, v in data.items()}


def stored_json(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as :func:`write_json_atomic` stores it: its text for people (:data:`TEXT_FOR_PEOPLE`)
    scrubbed, and the secret values in use masked everywhere else (the data of record is not
    otherwise rewritten: settings are redacted by key where they are recorded)."""
    out: dict[str, Any] = mask_secrets_value(_people_scrubbed(data))
    return out


def write_json_atomic(path: str | Path, data: dict[str, Any]) -> None:
    """Write ``data`` as pretty JSON to ``path``, whole or not at all (:func:`goldenkit._files.write_atomic`), as
    :func:`stored_json` makes it."""
    text = json.dumps(_people_scrubbed(data), indent=2, sort_keys=False, ensure_ascii=False, default=str)
    write_atomic(path, mask_secrets(text) + "\n")  # masked in its JSON spelling, like an outcome line


def read_manifest(folder: Path) -> dict[str, Any]:
    """The run.json of the run folder ``folder``; a :class:`ResultsError` naming the file when it is not a manifest."""
    try:
        manifest = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ResultsError(f"{folder / RUN_FILE}: invalid JSON: {exc}") from None
    if not isinstance(manifest, dict) or "run_id" not in manifest:
        raise ResultsError(f"{folder / RUN_FILE}: not a run manifest (no run_id)")
    return migrated(manifest, folder / RUN_FILE)


def migrated(manifest: dict[str, Any], where: Path | str) -> dict[str, Any]:
    """A run.json read as the current format (:class:`goldenkit.schema.RunRecord`): the one place older formats
    are read. Format 1 (no ``format_version``: the same fields, written before the field existed) reads as it
    is, marked format 1; a format newer than this goldenkit knows is a :class:`ResultsError` naming ``where``."""
    version = manifest.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ResultsError(f"{where}: format_version {version!r} is not a format (a whole number from 1)")
    if version > FORMAT_VERSION:
        newer = f"format_version {version} is newer than this goldenkit reads ({FORMAT_VERSION})"
        raise ResultsError(f"{where}: {newer}: upgrade goldenkit")
    if "format_version" in manifest:
        return manifest
    out: dict[str, Any] = {}  # format 1: marked where the field is written (after schema_version), fields unchanged
    for key, value in manifest.items():
        out[key] = value
        if key == "schema_version":
            out["format_version"] = 1
    out.setdefault("format_version", 1)
    return out


__all__ = [
    "SEQUENTIAL",
    "TEXT_FOR_PEOPLE",
    "read_manifest",
    "sequential_line",
    "sequential_rows",
    "stored_json",
    "write_json_atomic",
]


#: run.json's record of a sequential run (:mod:`goldenkit.gate._sequential`).
SEQUENTIAL = "sequential"


def sequential_rows(manifest: Mapping[str, Any]) -> list[str] | None:
    """The rows a sequential run read, in order (its other rows are not needed), or None for another run."""
    rec = manifest.get(SEQUENTIAL)
    if not isinstance(rec, Mapping) or not isinstance(rec.get("rows"), list):
        return None
    return [str(r) for r in rec["rows"]]


def sequential_line(manifest: Mapping[str, Any]) -> str | None:
    """``stopped after 212 of 400 rows: regression on refunds shown`` for a sequential run, else None."""
    rec = manifest.get(SEQUENTIAL)
    if sequential_rows(manifest) is None or not isinstance(rec, Mapping):
        return None
    return f"stopped after {rec.get('rows_run')} of {rec.get('rows_total')} rows: {rec.get('stopped_because')}"


publish(globals())
