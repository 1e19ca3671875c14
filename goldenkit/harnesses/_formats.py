"""The formats goldenkit imports, and where a folder is searched for each (no imports: the CLI lists them
in its help without loading a reader)."""

from __future__ import annotations

__all__ = ["FORMATS"]

#: Format name -> the file names a folder is searched for.
FORMATS: dict[str, tuple[str, ...]] = {
    "inspect": ("*.eval", "*.json"),
    "lm-eval": ("*samples_*.jsonl", "*samples_*.json", "*_write_out_info.json"),
    "promptfoo": ("*.json", "*.csv"),
    "deepeval": ("*.json",),
    "openai-evals": ("*.jsonl",),
    "adk": ("*.evalset_result.json",),
}
