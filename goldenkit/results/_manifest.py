"""run.json: the run's manifest, rewritten atomically while the run goes, read back by :func:`read_manifest`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from goldenkit._scrub import scrub
from goldenkit.errors import ResultsError
from goldenkit.schema import RUN_FILE


def write_json_atomic(path: str | Path, data: dict[str, Any]) -> None:
    """Write ``data`` as pretty JSON to ``path`` via a temporary file and ``os.replace``,
    secrets masked (:func:`goldenkit._scrub.scrub`)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    text = scrub(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False, default=str))
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)


def read_manifest(folder: Path) -> dict[str, Any]:
    """The run.json of the run folder ``folder``; a :class:`ResultsError` naming the file when it is not a manifest."""
    try:
        manifest = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ResultsError(f"{folder / RUN_FILE}: invalid JSON: {exc}") from None
    if not isinstance(manifest, dict) or "run_id" not in manifest:
        raise ResultsError(f"{folder / RUN_FILE}: not a run manifest (no run_id)")
    return manifest


__all__ = ["read_manifest", "write_json_atomic"]
