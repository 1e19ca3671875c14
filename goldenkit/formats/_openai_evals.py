"""openai/evals registry samples (``samples.jsonl``) as contract cases.

The file is read the way ``evals.data.get_jsonl`` reads it: one JSON object
per line, every line must parse, and **a blank line is an error** (a missing
trailing newline is fine). ``.gz`` files are decompressed. A Git LFS pointer
(almost all registry data is stored that way) is refused by the importer with
a message saying so.

Each sample ``{"input": str | [chat messages], "ideal": str | [str], ...}``
becomes a contract case (see :mod:`goldenkit.formats._contract_build` for the
input and answer mapping) with the sample kept whole under ``original``.
Samples carry no id: row ids are ``<name>-<line number>``, zero-padded to the
width of the last line number. A few-shot file (rows ``{"sample": [...]}``) is
not an eval and is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldenkit.errors import DatasetError
from goldenkit.formats._common import json_object_line
from goldenkit.formats._contract_build import answers_to_contract, input_to_contract, short_answers


def read_openai_evals(
    path: Path, text: str, prefix: str
) -> tuple[list[tuple[str, dict[str, Any], int]], dict[str, Any]]:
    """Cases of a samples file as ``(id, contract case, line)``, and notes for the manifest."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the file's final newline
    if not lines:
        raise DatasetError("empty samples file", path=path.name)
    samples: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            raise DatasetError(
                "blank line (openai/evals refuses blank lines in samples files)", path=path.name, line=lineno
            )
        rec = json_object_line(line, where=path.name, lineno=lineno, what="a sample")
        if "input" not in rec:
            hint = ' (rows shaped {"sample": [...]} are a few-shot file, not eval samples)' if "sample" in rec else ""
            raise DatasetError(f'sample has no "input"{hint}', path=path.name, line=lineno)
        samples.append((lineno, rec))
    width = len(str(len(lines)))
    answer_lists = []
    for lineno, rec in samples:
        answer_lists.append(_answers(rec.get("ideal"), path, lineno))
    short = short_answers(answer_lists)
    out = []
    for (lineno, rec), answers in zip(samples, answer_lists, strict=True):
        rid = f"{prefix}-{lineno:0{width}d}"
        try:
            case = input_to_contract(rec["input"], row_id=None)
        except DatasetError as exc:
            raise DatasetError(exc.detail, path=path.name, line=lineno) from None
        case.update(answers_to_contract(answers, short=short))
        case["original"] = rec
        out.append((rid, case, lineno))
    notes = {"answer_mapping": "must_contain_any" if short else "reference"}
    return out, notes


def _answers(ideal: Any, path: Path, lineno: int) -> list[str]:
    if ideal is None:
        return []
    if isinstance(ideal, str):
        return [ideal] if ideal else []
    if isinstance(ideal, list) and all(isinstance(a, str) for a in ideal):
        return [a for a in ideal if a]
    raise DatasetError('"ideal" must be a string or a list of strings', path=path.name, line=lineno)


__all__ = ["read_openai_evals"]
