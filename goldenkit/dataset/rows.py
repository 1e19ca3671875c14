"""Parse and check the rows of a dataset.jsonl, one row at a time, into columns (and the rows DataFrame).

Each row is checked in a fixed order (a JSON object, no unknown key, ``id``,
``slice``, ``split``, ``tags``, ``source``, ``added``, ``case``, then duplicate
ids) and its first problem is recorded; no row is skipped, and the file's
problems are raised together, first by line in the message.

The columns (and the DataFrame built from them) hold every field but
``case``: a case is checked to be a JSON object here and parsed again from its
row's line when asked for (:meth:`goldenkit.dataset.Dataset.raw_case`), so
reading a dataset keeps no parsed case alive (holding them all made the garbage collector re-traverse
millions of containers while the rows were read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from goldenkit.dataset.lines import Lines
from goldenkit.dataset.problems import Problems, diagnose_line, json_repr, json_type
from goldenkit.schema import ROW_COLUMNS, SPLITS

if TYPE_CHECKING:
    import pandas as pd

_ROW_KEYS = frozenset(ROW_COLUMNS)
_SPLIT_SET = frozenset(SPLITS)
_UNKNOWN_KEY = 'unknown key "{}" (a row has ' + ", ".join(ROW_COLUMNS) + '; put other data inside "case")'
_MISSING_SPLIT = 'missing "split" (must be "dev" or "holdout"; or set "default_split" in dataset.json)'

FRAME_COLUMNS = tuple(c for c in ROW_COLUMNS if c != "case")
"""The rows DataFrame's columns: a row's fields but its case."""

# One checked row: id, slice, tags, split, source, added (the order of FRAME_COLUMNS).
Row = tuple[str, str, list[str], str, str | None, str | None]


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


def _check_case(obj: dict[str, Any]) -> None:
    value = obj.get("case")
    if type(value) is not dict:
        raise ValueError('missing "case"' if value is None else f'"case" must be a JSON object, got {json_type(value)}')


def check_row(obj: Any, default_split: str | None) -> Row:
    """One parsed row's values in FRAME_COLUMNS order (its case checked, not kept); a ValueError has its problem.

    >>> check_row({"id": "r1", "slice": "s", "split": "dev", "case": {}}, None)
    ('r1', 's', [], 'dev', None, None)
    >>> check_row({"id": "r1", "slice": "s", "split": "dev", "case": []}, None)
    Traceback (most recent call last):
    ...
    ValueError: "case" must be a JSON object, got a list
    >>> check_row({"id": "r1", "slice": "s", "case": {}}, None)
    Traceback (most recent call last):
    ...
    ValueError: missing "split" (must be "dev" or "holdout"; or set "default_split" in dataset.json)
    """
    if type(obj) is not dict:
        raise ValueError(f"a row must be a JSON object, got {json_type(obj)}")
    if not _ROW_KEYS.issuperset(obj):
        raise ValueError(_UNKNOWN_KEY.format(next(key for key in obj if key not in _ROW_KEYS)))
    row_id, slice_ = _text(obj, "id"), _text(obj, "slice")
    split = _split(obj, default_split)
    tags = _tags(obj)
    source, added = _optional_text(obj, "source"), _optional_text(obj, "added")
    _check_case(obj)
    return row_id, slice_, tags, split, source, added


def check_rows(lines: Lines, problems: Problems, default_split: str | None) -> dict[str, list[Any]]:
    """Parse and check every line into columns (FRAME_COLUMNS -> values); each row's first problem to ``problems``.

    A duplicate id is a problem of the later row (naming the first one's line),
    unless that row already has a problem of its own. The values go straight
    into one list per column: no object per row is kept besides its values,
    and the parsed row is dropped as soon as it is checked.
    """
    columns: list[list[Any]] = [[] for _ in FRAME_COLUMNS]
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
    return dict(zip(FRAME_COLUMNS, columns, strict=True))


def rows_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    """The rows DataFrame of the checked columns: strings as pandas ``str``, ``tags`` lists as objects."""
    import pandas as pd  # here, not at the top: reading and running a dataset never needs it

    index = pd.RangeIndex(len(columns["id"]))
    data = {
        name: pd.Series(columns[name], dtype=object, index=index)
        if name == "tags"
        else pd.array(columns[name], dtype="str")
        for name in FRAME_COLUMNS
    }
    return pd.DataFrame(data, index=index)
