"""A dataset folder for the benchmarks that run goldenkit on generated rows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def write_dataset(folder: Path, name: str, cases: Iterable[Mapping[str, Any]], *, slices: int) -> Path:
    """``folder`` with dataset.json and one dev row per case (ids q00000..., ``slices`` slices in turn)."""
    folder.mkdir(parents=True, exist_ok=True)
    changelog = [{"version": "1.0.0", "date": "2026-01-01", "why": "benchmark"}]
    (folder / "dataset.json").write_text(json.dumps({"name": name, "version": "1.0.0", "changelog": changelog}))
    with (folder / "dataset.jsonl").open("w") as fh:
        for i, case in enumerate(cases):
            fh.write(json.dumps({"id": f"q{i:05d}", "slice": f"s{i % slices}", "split": "dev", "case": case}) + "\n")
    return folder
