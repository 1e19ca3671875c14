"""A new dataset version in a new folder: the version after the current one, and the atomic write.

Datasets are append-only: a command that changes rows (``goldenkit audit apply``,
``goldenkit dataset generate``) never edits a folder in place. It picks the next
version (:func:`next_version`) and a folder that does not exist yet
(:func:`new_version_target`), appends a changelog entry (:func:`with_changelog_entry`)
and writes the whole folder beside the target under a temporary name, reads it
back with :func:`~goldenkit.dataset.read_dataset`, and only then renames it into
place (:func:`write_version`, through :func:`goldenkit._files.replaced_together`). A failure
at any step (a full disk) leaves the target absent. The version becomes part of a folder
name, so it is a name (:func:`goldenkit._checks.check_name`): ``../x`` or ``main\\n`` is refused.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

from goldenkit._checks import check_name, check_output
from goldenkit._files import replaced_together
from goldenkit._registry import publish
from goldenkit.dataset._reader import Dataset, read_dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.schema import DATA_FILE, MANIFEST_FILE


def next_version(version: str | None) -> str:
    """The version after ``version``: ``1.2.3 -> 1.3.0``, ``1.2 -> 1.3``, ``4 -> 5``, else ``<v>.1``.

    >>> next_version("2026.11.0"), next_version("2.9"), next_version("2026-09")
    ('2026.12.0', '2.10', '2026-09.1')
    """
    if not version:
        return "1"
    parts = version.split(".")
    if all(p.isdigit() for p in parts):
        if len(parts) == 1:
            return str(int(parts[0]) + 1)
        bumped = [parts[0], str(int(parts[1]) + 1)] + ["0"] * (len(parts) - 2)
        return ".".join(bumped)
    return f"{version}.1"


def new_version_target(
    ds: Dataset, src: Path, version: str | None = None, out: str | Path | None = None
) -> tuple[str, Path]:
    """(the new version, the folder it goes to): ``version`` or the next one, ``out`` or ``<src>-<version>``.

    An InputError when the version is already in the changelog or the folder exists.
    """
    new_version = check_name(version or next_version(ds.version), "dataset version")
    if new_version == ds.version or any(e.get("version") == new_version for e in ds.manifest.get("changelog", [])):
        raise InputError(f"version {new_version!r} is already in {src / MANIFEST_FILE}'s changelog")
    dest = check_output(out, "--output", folder=True) if out is not None else src.with_name(f"{src.name}-{new_version}")
    if dest.exists():
        raise InputError(f"{dest}: already exists; a new dataset version goes to a new folder")
    return new_version, dest


def with_changelog_entry(manifest: dict[str, Any], version: str, day: date, why: str, **extra: Any) -> dict[str, Any]:
    """A copy of ``manifest`` at ``version`` with ``{"version", "date", "why", **extra}`` appended to its changelog."""
    new = dict(manifest)
    new["version"] = version
    new["changelog"] = [
        *manifest.get("changelog", []),
        {"version": version, "date": day.isoformat(), "why": why, **extra},
    ]
    return new


def write_version(src: Path, dest: Path, data: bytes, manifest: dict[str, Any], *, what: str = "new") -> Dataset:
    """Copy the folder beside ``dest`` with the new rows and manifest, check it reads, then rename it.

    ``what`` names the new dataset in the error raised when it would not read
    (``"the corrected dataset would be invalid: ..."``); the temporary folder is
    removed then, and ``dest`` is never created.
    """
    try:
        with replaced_together(dest) as (tmp,):
            shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(DATA_FILE, MANIFEST_FILE))
            (tmp / DATA_FILE).write_bytes(data)
            text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
            (tmp / MANIFEST_FILE).write_text(text, encoding="utf-8")
            read_dataset(tmp)  # checked before it takes the target's name
    except DatasetError as exc:
        raise InputError(f"the {what} dataset would be invalid: {exc}") from None
    except OSError as exc:  # a full disk: nothing was written in place
        raise InputError(
            f"cannot write the {what} dataset {dest}: {exc.strerror or exc}; nothing was changed"
        ) from None
    return read_dataset(dest)


__all__ = ["new_version_target", "next_version", "with_changelog_entry", "write_version"]

publish(globals())
