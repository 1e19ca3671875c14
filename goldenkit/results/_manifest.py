"""run.json: the run's manifest (:class:`goldenkit.schema.RunRecord`), built by :func:`run_record` for every
writer (a run, a regrade, a merge, an import), its end filled in by :func:`record_end`, written by
:func:`write_run_record` (atomically, in the model's order) and read back by :func:`read_manifest`, the one
reader (older formats migrated, a newer one refused)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from goldenkit._files import write_atomic
from goldenkit._protocol_key import protocol_key, protocol_sha256
from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets, mask_secrets_value, scrub_value
from goldenkit.errors import ResultsError
from goldenkit.schema import (
    FORMAT_VERSION,
    RUN_FIELDS,
    RUN_FILE,
    SCHEMA_VERSION,
    ProviderRecord,
    RunKey,
    RunRecord,
    Timings,
)

#: The top-level keys of goldenkit's JSON files that hold text for people, fully scrubbed
#: (:func:`goldenkit._scrub.scrub`): run.json's ``invalid_reason`` and ``crash`` (error excerpts), the
#: explanation cache's ``explanations``. The rest is data of record (:mod:`goldenkit._scrub`'s table).
TEXT_FOR_PEOPLE = frozenset({"invalid_reason", "crash", "explanations"})

_Record = TypeVar("_Record", bound=Mapping[str, Any])


def _people_scrubbed(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: scrub_value(v) if k in TEXT_FOR_PEOPLE else v for k, v in data.items()}


def stored_json(data: _Record) -> _Record:
    """``data`` as :func:`write_json_atomic` stores it: its text for people (:data:`TEXT_FOR_PEOPLE`)
    scrubbed, and the secret values in use masked everywhere else (the data of record is not
    otherwise rewritten: settings are redacted by key where they are recorded)."""
    out: _Record = mask_secrets_value(_people_scrubbed(data))
    return out


def write_json_atomic(path: str | Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` as pretty JSON to ``path``, whole or not at all (:func:`goldenkit._files.write_atomic`), as
    :func:`stored_json` makes it."""
    text = json.dumps(_people_scrubbed(data), indent=2, sort_keys=False, ensure_ascii=False, default=str)
    write_atomic(path, mask_secrets(text) + "\n")  # masked in its JSON spelling, like an outcome line


def read_manifest(folder: Path) -> RunRecord:
    """The run.json of the run folder ``folder`` as the current format; a :class:`ResultsError` naming the file
    when it is not a manifest (invalid JSON, not UTF-8, no ``run_id``, a newer format). A missing file is the
    :class:`OSError` opening it gave: whoever reads a folder that may have none says what that means."""
    try:
        manifest = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:  # UnicodeDecodeError included
        raise ResultsError(f"{folder / RUN_FILE}: invalid JSON: {exc}") from None
    if not isinstance(manifest, dict) or "run_id" not in manifest:
        raise ResultsError(f"{folder / RUN_FILE}: not a run manifest (no run_id)")
    return cast(RunRecord, migrated(manifest, folder / RUN_FILE))


def run_record(
    key: RunKey,
    *,
    run_id: str,
    label: str | None,
    provider: ProviderRecord | None,
    config: dict[str, Any],
    started_at: str | None,
    max_error_rate: float,
    timings: Timings,
) -> RunRecord:
    """run.json of run ``run_id`` as it starts (every writer builds its own here: a run, a regrade, a merge,
    an import): the run key ``key``, the protocol key built from it (stored whole with its SHA-256), the
    provider and configuration; the end's fields unset (:func:`record_end` fills them in)."""
    protocol = protocol_key(key)  # the one key of what can change a verdict (goldenkit._protocol_key)
    record: RunRecord = {
        "schema_version": SCHEMA_VERSION,
        "format_version": FORMAT_VERSION,
        "run_id": run_id,
        "label": label,
        "dataset": key["dataset"],
        "agent_version": key["agent_version"],
        "judge_version": key["judge_version"],
        "graders": key["graders"],
        "grader_hard": key["grader_hard"],
        "repeats": key["repeats"],
        "sample": key["sample"],
        "mode": key["mode"],
        "criteria": key["criteria"],
        "vision": key["vision"],
        "protocol": protocol,
        "protocol_sha256": protocol_sha256(protocol),
        "provider": provider,
        "config": config,
        "started_at": started_at,
        "ended_at": None,
        "counts": None,
        "error_rate": None,
        "max_error_rate": max_error_rate,
        "validity": None,
        "invalid_reason": None,
        "complete": False,
        "timings": timings,
    }
    if "shard" in key:
        record["shard"] = key["shard"]
    if "simulator_version" in key:
        record["simulator_version"] = key["simulator_version"]
    if "stop_decided_repeats" in key:
        record["stop_decided_repeats"] = key["stop_decided_repeats"]
    if "source" in key:
        record["source"] = key["source"]
    return record


def run_key_of(record: RunRecord) -> RunKey:
    """The run key a run.json holds (a regrade's and a merge's start from their source's); a field an older
    run did not write reads as its absence meant (no hard flags: each grader's default; no criteria; vision)."""
    key: RunKey = {
        "dataset": record.get("dataset"),
        "agent_version": record["agent_version"],
        "judge_version": record.get("judge_version"),
        "graders": record.get("graders") or {},
        "grader_hard": record.get("grader_hard") or {},
        "repeats": int(record.get("repeats") or 1),
        "sample": record.get("sample"),
        "mode": record["mode"],
        "criteria": record.get("criteria"),
        "vision": record.get("vision") is not False,
    }
    if "shard" in record:
        key["shard"] = record["shard"]
    if "simulator_version" in record:
        key["simulator_version"] = record["simulator_version"]
    if "stop_decided_repeats" in record:
        key["stop_decided_repeats"] = record["stop_decided_repeats"]
    if "source" in record:
        key["source"] = record["source"]
    return key


def record_end(
    record: RunRecord,
    *,
    ended_at: str,
    counts: dict[str, int],
    error_rate: float,
    validity: str,
    invalid_reason: str | None,
    complete: bool,
) -> None:
    """Fill in what a run's end decides (its counts, error rate, validity and whether it is complete)."""
    record["ended_at"] = ended_at
    record["counts"] = counts
    record["error_rate"] = error_rate
    record["validity"] = validity
    record["invalid_reason"] = invalid_reason
    record["complete"] = complete


def write_run_record(path: str | Path, record: RunRecord) -> None:
    """Write run.json ``path`` (:func:`write_json_atomic`), its fields in the model's order
    (:data:`goldenkit.schema.RUN_FIELDS`) whatever order they were set in."""
    fields: Mapping[str, Any] = record
    ordered = {k: fields[k] for k in RUN_FIELDS if k in fields}
    ordered.update((k, v) for k, v in fields.items() if k not in ordered)  # a field the model lacks is kept
    write_json_atomic(path, ordered)


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
    "record_end",
    "run_key_of",
    "run_record",
    "sequential_line",
    "sequential_rows",
    "stored_json",
    "write_json_atomic",
    "write_run_record",
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
