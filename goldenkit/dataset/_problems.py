"""How a dataset problem is described: JSON type names, short reprs, and the list of problems of a file."""

from __future__ import annotations

import json
from typing import Any

import orjson

from goldenkit._scrub import scrub
from goldenkit.errors import DatasetError

BOM = b"\xef\xbb\xbf"
BOM_MESSAGE = "file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM"
# How many problems a DatasetError lists in ``problems`` (the message shows the first).
MAX_PROBLEMS = 50


def json_type(value: Any) -> str:
    """The JSON name of a value's type, as the error messages say it.

    >>> json_type(None), json_type(True), json_type(3), json_type([1])
    ('null', 'a boolean', 'a number', 'a list')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def json_repr(value: Any, limit: int = 60) -> str:
    """The value as JSON text, cut to ``limit`` characters.

    >>> json_repr("dev"), json_repr(list(range(40)), limit=12)
    ('"dev"', '[0, 1, 2,...')
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = scrub(text)  # an error excerpt: masked before it is cut
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_error_text(exc: orjson.JSONDecodeError) -> str:
    """orjson's reason and column (the caller names the file and line)."""
    return f"{exc.msg} at column {exc.colno}"


def diagnose_line(line: bytes) -> str:
    """Why one line is not a JSON object (called only for a line that failed to parse)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = line[exc.start : exc.start + 1].hex()
        return f"invalid UTF-8 byte 0x{bad} at column {exc.start + 1} (the file must be UTF-8)"
    if line.startswith(BOM):
        return "byte-order mark (BOM) at the start of the line; save the file as UTF-8 without BOM"
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return f"invalid JSON: {json_error_text(exc)}"
    return "invalid JSON"


class Problems:
    """Problems found in a file (every problem of every row), reported in line order."""

    def __init__(self, where: str, numbers: list[int]) -> None:
        self.where = where
        self.numbers = numbers
        self.items: list[tuple[int, str, str | None]] = []  # (line, message, the row's id or None)

    def add(self, index: int, message: str, row_id: str | None = None) -> None:
        """Record a problem of the row at ``index`` (its line number comes from ``numbers``); ``row_id``
        names the row in :meth:`listed` (None when the message names it, or the row has no usable id)."""
        self.items.append((self.numbers[index], message, row_id))

    def listed(self) -> list[str]:
        """Every problem as ``file:line: row "ID": message`` (``row "ID": `` when known), in line order.

        >>> p = Problems("d.jsonl", [1, 3])
        >>> p.add(1, 'missing "slice"', "r2"); p.add(0, "invalid JSON")
        >>> p.listed()
        ['d.jsonl:1: invalid JSON', 'd.jsonl:3: row "r2": missing "slice"']
        """
        self.items.sort(key=lambda t: t[0])
        return [
            f"{self.where}:{line}: " + (f"row {json.dumps(rid, ensure_ascii=False)}: " if rid is not None else "") + msg
            for line, msg, rid in self.items
        ]

    def raise_if_any(self) -> None:
        """Raise one DatasetError: the first problem by line in the message, up to 50 in ``problems``."""
        if not self.items:
            return
        self.items.sort(key=lambda t: t[0])
        line, message, _ = self.items[0]
        more = len(self.items) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''}; `goldenkit dataset validate` lists them)"
        err = DatasetError(message, path=self.where, line=line)
        err.problems = [  # type: ignore[attr-defined]
            f"{self.where}:{ln}: {msg}" for ln, msg, _ in self.items[:MAX_PROBLEMS]
        ]
        err.problem_count = len(self.items)  # type: ignore[attr-defined]
        raise err
