"""The dataset.json of an imported dataset: its name, version and changelog (a java-ai-golden
manifest's own, when the source has one), and where it came from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["import_manifest", "stem"]


def stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    for suffix in (".test.json", ".evalset.json", ".jsonl.gz", ".jsonl", ".json", ".csv", ".gz"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def import_manifest(
    src: Path,
    fmt: str,
    shape: str,
    name: str | None,
    *,
    added: str,
    golden: dict[str, Any] | None,
    imported_from: dict[str, Any],
) -> dict[str, Any]:
    why = f"imported from {src.name} ({fmt})"
    version = "1"
    changelog = [{"version": version, "date": added, "why": why}]
    if golden is not None and isinstance(golden.get("version"), str) and golden["version"].strip():
        version = golden["version"]
        changelog = _golden_changelog(golden, version, added, why)
        imported_from["changelog_dates"] = "import date (the source changelog has no dates)"
    ds_name = name or (golden or {}).get("name") or stem(src.name) or "imported"
    if not isinstance(ds_name, str) or not ds_name.strip():
        ds_name = stem(src.name)
    manifest: dict[str, Any] = {"name": ds_name, "version": version, "changelog": changelog, "case_format": shape}
    if golden is not None and isinstance(golden.get("description"), str):
        manifest["description"] = golden["description"]
    manifest["imported_from"] = imported_from
    return manifest


def _golden_changelog(golden: dict[str, Any], version: str, added: str, why: str) -> list[dict[str, str]]:
    """java-ai-golden changelog strings (``"generation-v1: 8 cases ..."``) as {version, date, why} entries."""
    entries: list[dict[str, str]] = []
    for item in golden.get("changelog") or []:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        m = re.match(r"\s*([^\s:]+):\s*(.+)", text, re.S)
        ver, reason = (m.group(1), m.group(2).strip()) if m else (version, text.strip())
        existing = next((e for e in entries if e["version"] == ver), None)
        if existing is not None:
            existing["why"] += f"; {reason}"
            continue
        entries.append({"version": ver, "date": added, "why": reason or why})
    if not entries or entries[-1]["version"] != version:
        entries = [e for e in entries if e["version"] != version]
        entries.append({"version": version, "date": added, "why": why})
    return entries
