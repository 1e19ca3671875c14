"""Parse and check the rows of a dataset.jsonl, one row at a time, into columns (and the rows DataFrame).

Each row is checked in a fixed order (valid JSON, no key twice in one object,
a JSON object, no unknown key, ``id``, ``slice``, ``split``, ``tags``,
``source``, ``added``, ``case``, then duplicate and look-alike ids). A good row
costs one pass of :func:`check_row`; a row with a problem is checked again by
:func:`row_problems`, which records every problem it has. No row is skipped,
and the file's problems are raised together, first by line in the message.

Two ids are look-alikes when they differ only in case, in Unicode
normalization (NFC vs NFD) or in surrounding whitespace: the same after
:func:`fold_id`. They name the same row to a person and to a case-insensitive
file system, so the later one is refused as an exact duplicate is.

The columns (and the DataFrame built from them) hold every field but
``case``: a case is checked to be a JSON object here and parsed again from its
row's line when asked for (:meth:`goldenkit.dataset.Dataset.raw_case`), so
reading a dataset keeps no parsed case alive (holding them all made the garbage collector re-traverse
millions of containers while the rows were read).
"""

from __future__ import annotations

import json
import unicodedata
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from goldenkit._checks import is_reserved_slice
from goldenkit._text import did_you_mean
from goldenkit.dataset._lines import Lines
from goldenkit.dataset._problems import Problems, diagnose_line, json_repr, json_type
from goldenkit.schema import ROW_COLUMNS, SPLITS

if TYPE_CHECKING:
    import pandas as pd

_ROW_KEYS = frozenset(ROW_COLUMNS)
_SPLIT_SET = frozenset(SPLITS)
_ROW_HOLDS = "a row has " + ", ".join(ROW_COLUMNS) + '; put other data inside "case"'
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


def _slice(obj: dict[str, Any]) -> str:
    """The row's slice: a non-empty string not spelled like a row goldenkit adds to its tables
    (:func:`goldenkit._checks.is_reserved_slice`)."""
    value = _text(obj, "slice")
    if is_reserved_slice(value):
        raise ValueError(f'"slice" {json_repr(value)} is reserved: goldenkit names its own rows in parentheses')
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


def _unknown_key(key: str) -> str:
    """``unknown key "slcie" (did you mean slice? a row has id, ...)``."""
    hint = did_you_mean(key, ROW_COLUMNS)
    return f'unknown key "{key}" ({hint[2:-1] + " " if hint else ""}{_ROW_HOLDS})'


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
        raise ValueError(_unknown_key(next(key for key in obj if key not in _ROW_KEYS)))
    row_id, slice_ = _text(obj, "id"), _slice(obj)
    split = _split(obj, default_split)
    tags = _tags(obj)
    source, added = _optional_text(obj, "source"), _optional_text(obj, "added")
    _check_case(obj)
    return row_id, slice_, tags, split, source, added


def row_problems(obj: Any, default_split: str | None) -> list[str]:
    """Every problem of one parsed row, in :func:`check_row`'s order (which raises only the first).

    >>> row_problems({"id": "r1", "slcie": "s", "split": "test", "case": {}}, None)  # doctest: +NORMALIZE_WHITESPACE
    ['unknown key "slcie" (did you mean slice? a row has id, slice, tags, split, source, added, case;
      put other data inside "case")', 'missing "slice"', '"split" must be "dev" or "holdout", got "test"']
    """
    if type(obj) is not dict:
        return [f"a row must be a JSON object, got {json_type(obj)}"]
    found = [_unknown_key(key) for key in obj if key not in _ROW_KEYS]
    for check in (
        partial(_text, obj, "id"),
        partial(_slice, obj),
        partial(_split, obj, default_split),
        partial(_tags, obj),
        partial(_optional_text, obj, "source"),
        partial(_optional_text, obj, "added"),
        partial(_check_case, obj),
    ):
        try:
            check()
        except ValueError as exc:
            found.append(str(exc))
    return found


def check_rows(lines: Lines, problems: Problems, default_split: str | None) -> dict[str, list[Any]]:
    """Parse and check every line into columns (FRAME_COLUMNS -> values); every problem of every row to
    ``problems`` (each naming the row's id when it has a usable one).

    A duplicate or look-alike id is a problem of the later row (naming the first
    one's line). The values go straight into one list per column: no object per
    row is kept besides its values, and the parsed row is dropped as soon as it is checked.
    """
    columns: list[list[Any]] = [[] for _ in FRAME_COLUMNS]
    ids = _SeenIds(lines.numbers)
    for i, line in enumerate(lines.texts):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            problems.add(i, diagnose_line(line))
            continue
        twice = duplicate_key(line) if _may_repeat_a_key(line, obj) else None
        found = [] if twice is None else [twice]
        try:
            values = check_row(obj, default_split)
        except ValueError:
            found += row_problems(obj, default_split)  # every problem of a bad row, not only the first
        else:
            if not found:
                for column, value in zip(columns, values, strict=True):
                    column.append(value)
        row_id = obj.get("id") if type(obj) is dict else None
        named = row_id if type(row_id) is str and row_id.strip() else None
        for problem in found:
            problems.add(i, problem, named)
        if type(row_id) is str and (seen := ids.problem(i, row_id)) is not None:
            problems.add(i, seen)  # it names the id itself
    return dict(zip(FRAME_COLUMNS, columns, strict=True))


def _may_repeat_a_key(line: bytes, obj: Any) -> bool:
    """Whether ``line`` may write a key twice in one object (``obj``, orjson's parse of it, would hide it).

    orjson keeps the last of two equal keys without a word. Every colon of a JSON
    text outside its strings follows a key, and orjson writes no colon escaped: when
    no key was lost, ``obj`` written back holds as many colons as the line, and a
    lost key leaves it fewer. Only a colon the line escaped inside a string
    (``\\u003a``) could make up for a lost one, so such a line is checked in full
    too. About 2 us a 1 KB row (0.2 s per 100,000 rows of bench_dataset.py);
    parsing every line again with Python's json to see its keys costs 1.2 s.
    """
    try:
        written = orjson.dumps(obj)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes
        return True
    if written == line:  # a compact line orjson wrote (as `goldenkit dataset generate` does)
        return False
    return line.count(b":") != written.count(b":") or (b"\\" in line and b"\\u003" in line)


class _Pairs(list[tuple[str, Any]]):
    """One JSON object's (key, value) pairs in the order written, equal keys kept."""


def duplicate_key(line: bytes) -> str | None:
    """The problem of the first key written twice in one object of a JSON ``line`` (None when there is none).

    >>> duplicate_key(b'{"id": "a", "case": {"expect": {"regex": "x", "regex": "y"}}}')
    'duplicate key "regex" in case.expect'
    >>> duplicate_key(b'{"id": "a", "case": {}}') is None
    True
    """
    try:
        return _first_repeated_key(json.loads(line, object_pairs_hook=_Pairs), "")
    except RecursionError:
        return "JSON nested too deeply to read"


def _first_repeated_key(node: Any, where: str) -> str | None:
    if type(node) is list:
        for i, item in enumerate(node):
            found = _first_repeated_key(item, f"{where}[{i}]")
            if found is not None:
                return found
    elif type(node) is _Pairs:
        keys: set[str] = set()
        for key, _ in node:
            if key in keys:
                return f"duplicate key {json_repr(key)} in {where or 'the row'}"
            keys.add(key)
        for key, value in node:
            found = _first_repeated_key(value, f"{where}.{key}" if where else key)
            if found is not None:
                return found
    return None


def fold_id(row_id: str) -> str:
    """What look-alike ids have in common: the id stripped of surrounding whitespace, in NFKC (a fullwidth
    digit is the digit), without invisible format characters (a zero-width space), every dash a hyphen,
    case-folded. Letters of other scripts that only look alike (a Cyrillic "е") stay distinct.

    >>> fold_id(" Refund-1") == fold_id("refund-1") == fold_id("REFUND-1\\t") == fold_id("refund\\u20101\\u200b")
    True
    >>> fold_id("caf\\u00e9") == fold_id("cafe\\u0301"), fold_id("r-\\uff11") == fold_id("r-1")
    (True, True)
    >>> fold_id("a-1") == fold_id("a_1")
    False
    """
    text = unicodedata.normalize("NFKC", row_id.strip())
    text = "".join("-" if unicodedata.category(c) == "Pd" else c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", text.casefold())


def _edges(text: str) -> tuple[str, str]:
    return text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]


def how_alike(first: str, later: str) -> str:
    """What two different ids of the same :func:`fold_id` differ in.

    >>> how_alike("refund-1", "Refund-1"), how_alike("caf\\u00e9", " cafe\\u0301")
    ('case', 'Unicode normalization and surrounding whitespace')
    """
    a, b = first.strip(), later.strip()
    nfc_a, nfc_b = unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)
    folded_a, folded_b = (unicodedata.normalize("NFC", x.casefold()) for x in (nfc_a, nfc_b))
    parts = []
    if nfc_a != nfc_b and folded_a == folded_b:
        parts.append("case")
    if (a != b and nfc_a == nfc_b) or (a.casefold() != b.casefold() and folded_a == folded_b):
        parts.append("Unicode normalization")
    if folded_a != folded_b:
        parts.append("look-alike characters (width, invisible characters, dashes)")
    if _edges(first) != _edges(later):
        parts.append("surrounding whitespace")
    return " and ".join(parts) if len(parts) < 3 else f"{parts[0]}, {parts[1]} and {parts[2]}"


class _SeenIds:
    """The ids met so far: each exact id's first row, and the first id of each :func:`fold_id`."""

    def __init__(self, numbers: list[int]) -> None:
        self.numbers = numbers
        self.first_row: dict[str, int] = {}
        self.first_alike: dict[str, str] = {}

    def problem(self, index: int, row_id: str) -> str | None:
        """Record ``row_id`` of the row at ``index``; the problem when an earlier row has it or a look-alike."""
        first = self.first_row.get(row_id)
        if first is not None:
            return f'duplicate id "{row_id}" (first on line {self.numbers[first]})'
        self.first_row[row_id] = index
        alike = self.first_alike.setdefault(fold_id(row_id), row_id)
        if alike == row_id:
            return None
        line = self.numbers[self.first_row[alike]]
        return (
            f"id {_quoted(row_id)} looks like id {_quoted(alike)} of line {line} "
            f"(differs only in {how_alike(alike, row_id)})"
        )


def _quoted(text: str) -> str:
    """``text`` in double quotes, control characters escaped as JSON writes them (never cut)."""
    return json.dumps(text, ensure_ascii=False)


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
