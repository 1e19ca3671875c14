"""Read and check a dataset's manifest, ``dataset.json``; every problem names the file."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import orjson

from goldenkit._checks import check_name
from goldenkit.dataset._problems import BOM, BOM_MESSAGE, json_error_text, json_repr, json_type
from goldenkit.errors import DatasetError, InputError
from goldenkit.records import CASE_SHAPES
from goldenkit.schema import SPLITS


def read_manifest(path: Path) -> dict[str, Any]:
    """Read and validate dataset.json: name, version, the append-only changelog, optional keys."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read manifest: {exc.strerror or exc}", path=where) from None
    if raw.startswith(BOM):
        raise DatasetError(BOM_MESSAGE, path=where)
    try:
        manifest = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {json_error_text(exc)}", path=where, line=exc.lineno) from None
    if not isinstance(manifest, dict):
        raise DatasetError(f"manifest must be a JSON object, got {json_type(manifest)}", path=where)
    for key in ("name", "version"):
        value = manifest.get(key)
        if key not in manifest:
            raise DatasetError(f'manifest has no "{key}"', path=where)
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f'"{key}" must be a non-empty string, got {json_repr(value)}', path=where)
    try:  # a version names folders and files (a new version's folder, its runs' pages)
        check_name(manifest["version"], '"version"')
    except InputError as exc:
        raise DatasetError(str(exc), path=where) from None
    _check_changelog(manifest, where)
    case_format = manifest.get("case_format")
    if case_format is not None and case_format not in CASE_SHAPES:
        raise DatasetError(
            f'"case_format" must be one of {", ".join(CASE_SHAPES)}, got {json_repr(case_format)}', path=where
        )
    default_split = manifest.get("default_split")
    if default_split is not None and default_split not in SPLITS:
        raise DatasetError(f'"default_split" must be "dev" or "holdout", got {json_repr(default_split)}', path=where)
    return manifest


def _check_changelog(manifest: dict[str, Any], where: str) -> None:
    """The changelog: a non-empty list, oldest first, versions unique, ending at ``version``."""
    if "changelog" not in manifest:
        raise DatasetError('manifest has no "changelog" (a list of {version, date, why})', path=where)
    changelog = manifest["changelog"]
    if not isinstance(changelog, list) or not changelog:
        raise DatasetError(
            f'"changelog" must be a non-empty list of {{version, date, why}}, got {json_repr(changelog)}', path=where
        )
    seen: dict[str, int] = {}
    prev_date: date | None = None
    for i, entry in enumerate(changelog):
        day = _entry_date(entry, f"changelog[{i}]", where)
        if entry["version"] in seen:
            raise DatasetError(
                f'changelog[{i}]: version "{entry["version"]}" already in changelog[{seen[entry["version"]]}]',
                path=where,
            )
        seen[entry["version"]] = i
        if prev_date is not None and day < prev_date:
            raise DatasetError(
                f"changelog[{i}]: date {entry['date']} is earlier than the entry before it "
                "(the changelog is append-only, oldest first)",
                path=where,
            )
        prev_date = day
    if changelog[-1]["version"] != manifest["version"]:
        raise DatasetError(
            f'version is "{manifest["version"]}" but the last changelog entry is "{changelog[-1]["version"]}" '
            "(append an entry for the new version)",
            path=where,
        )


def _entry_date(entry: Any, at: str, where: str) -> date:
    """A changelog entry's date, after checking its three fields are non-empty strings."""
    if not isinstance(entry, dict):
        raise DatasetError(f"{at} must be an object with version, date, why", path=where)
    for key in ("version", "date", "why"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f'{at}: "{key}" must be a non-empty string, got {json_repr(value)}', path=where)
    text = entry["date"]
    try:
        day = date.fromisoformat(text)
    except ValueError:
        day = None
    if day is None or len(text) != 10:
        raise DatasetError(f'{at}: "date" must be YYYY-MM-DD, got {json_repr(text)}', path=where)
    return day
