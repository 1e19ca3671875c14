"""Parse and check the rows of a dataset.jsonl, one row at a time, into the rows DataFrame.

Each row is checked in a fixed order (a JSON object, no unknown key, ``id``,
``slice``, ``split``, ``tags``, ``source``, ``added``, ``case``, then duplicate
ids) and its first problem is recorded; no row is skipped, and the file's
problems are raised together, first by line in the message.
"""

from __future__ import annotations

from typing import Any

import orjson
import pandas as pd

from goldenkit.dataset.lines import Lines
from goldenkit.dataset.problems import Problems, diagnose_line, json_repr, json_type
from goldenkit.schema import ROW_COLUMNS, SPLITS

_ROW_KEYS = frozenset(ROW_COLUMNS)
_SPLIT_SET = frozenset(SPLITS)
_UNKNOWN_KEY = 'unknown key "{}" (a row has ' + ", ".join(ROW_COLUMNS) + '; put other data inside "case")'
_MISSING_SPLIT = 'missing "split" (must be "dev" or "holdout"; or set "default_split" in dataset.json)'

# One checked row: id, slice, tags, split, source, added, case (the order of ROW_COLUMNS).
Row = tuple[str, str, list[str], str, str | None, str | None, dict[str, Any]]


def _text(obj: dict[str, Any], key: str) -> str:
    """A required non-empty string field; raises ValueError with the problem."""
    value = obj.get(key)
    if value is None:
        raise ValueError(f'missing "{key}"')
    if type(value) is not str:
        raise ValueError(f'"{key}" must be a string, got {json_type(value)} {json_repr(value)}')
    if not value.strip():
        raise ValueError(f'empty "{key}"')
    return value


def _split(obj: dict[str, Any], default_split: str | None) -> str:
    value = obj.get("split")
    if value is None:
        if default_split is None:
            raise ValueError(_MISSING_SPLIT)
        return default_split
    if type(value) is not str or value not in _SPLIT_SET:
        raise ValueError(f'"split" must be "dev" or "holdout", got {json_repr(value)}')
    return value


def _tags(obj: dict[str, Any]) -> list[str]:
    tags = obj.get("tags")
    if tags is None:
        return []
    if type(tags) is not list:
        raise ValueError(f'"tags" must be a list of strings, got {json_type(tags)} {json_repr(tags)}')
    for tag in tags:
        if type(tag) is not str:
            raise ValueError(f'"tags" must be a list of strings, found {json_type(tag)} {json_repr(tag)}')
        if not tag.strip():
            raise ValueError('empty string in "tags"')
    return tags


def _optional_text(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is not None and type(value) is not str:
        raise ValueError(f'"{key}" must be a string, got {json_type(value)} {json_repr(value)}')
    return value


def _case(obj: dict[str, Any]) -> dict[str, Any]:
    value = obj.get("case")
    if type(value) is not dict:
        raise ValueError('missing "case"' if value is None else f'"case" must be a JSON object, got {json_type(value)}')
    return value


def check_row(obj: Any, default_split: str | None) -> Row:
    """One parsed row's values in ROW_COLUMNS order; a ValueError carries its first problem.

    >>> check_row({"id": "r1", "slice": "s", "split": "dev", "case": {}}, None)
    ('r1', 's', [], 'dev', None, None, {})
    >>> check_row({"id": "r1", "slice": "s", "case": {}}, None)
    Traceback (most recent call last):
    ...
    ValueError: missing "split" (must be "dev" or "holdout"; or set "default_split" in dataset.json)
    """
    if type(obj) is not dict:
        raise ValueError(f"a row must be a JSON object, got {json_type(obj)}")
    unknown = next((key for key in obj if key not in _ROW_KEYS), None)
    if unknown is not None:
        raise ValueError(_UNKNOWN_KEY.format(unknown))
    row_id, slice_ = _text(obj, "id"), _text(obj, "slice")
    split = _split(obj, default_split)
    tags = _tags(obj)
    source, added = _optional_text(obj, "source"), _optional_text(obj, "added")
    return row_id, slice_, tags, split, source, added, _case(obj)


def check_rows(lines: Lines, problems: Problems, default_split: str | None) -> list[list[Any]]:
    """Parse and check every line into columns (ROW_COLUMNS order); each row's first problem goes to ``problems``.

    A duplicate id is a problem of the later row (naming the first one's line),
    unless that row already has a problem of its own. The values go straight
    into one list per column: no object per row is kept besides its values.
    """
    columns: list[list[Any]] = [[] for _ in ROW_COLUMNS]
    first_seen: dict[str, int] = {}
    for i, line in enumerate(lines.texts):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            problems.add(i, diagnose_line(line))
            continue
        try:
            for column, value in zip(columns, check_row(obj, default_split), strict=True):
                column.append(value)
            failed = False
        except ValueError as exc:
            problems.add(i, str(exc))
            failed = True
        row_id = obj.get("id") if type(obj) is dict else None
        if type(row_id) is not str:
            continue
        if row_id not in first_seen:
            first_seen[row_id] = i
        elif not failed:
            problems.add(i, f'duplicate id "{row_id}" (first on line {lines.numbers[first_seen[row_id]]})')
    return columns


def rows_frame(columns: list[list[Any]]) -> pd.DataFrame:
    """The rows DataFrame of :func:`check_rows`' columns: strings as pandas ``str``, ``tags`` and ``case`` objects."""
    index = pd.RangeIndex(len(columns[0]))
    data = {
        name: pd.Series(values, dtype=object, index=index)
        if name in ("tags", "case")
        else pd.array(values, dtype="str")
        for name, values in zip(ROW_COLUMNS, columns, strict=True)
    }
    return pd.DataFrame(data, index=index)
