"""Input that is not what it seems: look-alike ids, keys written twice, numbers that are not numbers,
outcome files cut short. Each is refused with one line naming where, and the right exit code."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldenkit.dataset import read_dataset
from goldenkit.dataset.rows import _may_repeat_a_key, duplicate_key, fold_id
from goldenkit.errors import DatasetError


def line(row_id: str, **case: Any) -> str:
    return json.dumps({"id": row_id, "slice": "s", "split": "dev", "case": {"prompt": "hi", **case}})


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    return list(getattr(info.value, "problems", [str(info.value)]))


# --------------------------------------------------------------------------- look-alike ids


def test_an_id_differing_only_in_case_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path, [line("a"), line("b"), line("refund-1")] + [line(f"r{i}") for i in range(13)] + [line("Refund-1")]
    )
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f'{path}:17: id "Refund-1" looks like id "refund-1" of line 3 (differs only in case)'
    assert info.value.exit_code == 1


@pytest.mark.parametrize(
    ("first", "later", "why"),
    [
        ("caf\u00e9", "cafe\u0301", "Unicode normalization"),
        ("refund-1", "refund-1 ", "surrounding whitespace"),
        ("refund-1", "\trefund-1", "surrounding whitespace"),
        ("refund-1", "refund-1\u00a0", "surrounding whitespace"),
        ("Stra\u00dfe", "STRASSE", "case"),
        ("CAF\u00c9", " cafe\u0301", "case, Unicode normalization and surrounding whitespace"),
        ("\u212b-1", "\u00c5-1", "Unicode normalization"),
    ],
)
def test_look_alike_ids_say_how_they_differ(tmp_path: Path, first: str, later: str, why: str) -> None:
    path = write(tmp_path, [line(first), line("other"), line(later)])
    (problem,) = problems(path)
    assert problem == (
        f"{path}:3: id {json.dumps(later, ensure_ascii=False)} looks like id "
        f"{json.dumps(first, ensure_ascii=False)} of line 1 (differs only in {why})"
    )


def test_an_exact_duplicate_keeps_its_message_after_a_look_alike(tmp_path: Path) -> None:
    path = write(tmp_path, [line("A-1"), line("a-1"), line("a-1"), line("A-1")])
    assert problems(path) == [
        f'{path}:2: id "a-1" looks like id "A-1" of line 1 (differs only in case)',
        f'{path}:3: duplicate id "a-1" (first on line 2)',
        f'{path}:4: duplicate id "A-1" (first on line 1)',
    ]


def test_ids_that_only_look_close_are_kept_and_the_hash_is_unchanged(tmp_path: Path) -> None:
    ids = ["refund-1", "refund_1", "refund-1a", "refund-l", "r\u00e9fund-1", "refund-\uff11"]
    path = write(tmp_path, [line(i) for i in ids])
    ds = read_dataset(path)
    assert ds.ids == ids
    import hashlib

    body = sorted(text.encode() for text in path.read_text(encoding="utf-8").split("\n") if text)
    assert ds.sha256 == hashlib.sha256(b"".join(b + b"\n" for b in body)).hexdigest()


_ID_CHARS = st.sampled_from(["a", "A", "\u00e9", "e\u0301", "\u00c9", "-", " ", "\t", "\u00df", "ss", "1"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(_ID_CHARS, min_size=1, max_size=4).map("".join), min_size=1, max_size=6))
def test_a_file_is_refused_exactly_when_two_ids_fold_alike(ids: list[str]) -> None:
    import tempfile

    ids = [i for i in ids if i.strip()]
    if not ids:
        return
    key = [unicodedata.normalize("NFC", unicodedata.normalize("NFC", i.strip()).casefold()) for i in ids]
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), [line(i) for i in ids])
        if len(set(key)) == len(key):
            assert read_dataset(path).ids == ids
        else:
            found = problems(path)
            assert len(found) == len(key) - len(set(key))
            assert all(("looks like id" in p) != ("duplicate id" in p) for p in found)
    assert all(fold_id(i) == k for i, k in zip(ids, key, strict=True))


# --------------------------------------------------------------------------- keys written twice


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"id": "x", "id": "y", "slice": "s", "split": "dev", "case": {}}', 'duplicate key "id" in the row'),
        ('{"id": "x", "slice": "s", "split": "dev", "case": {"prompt": "a", "prompt": "b"}}', 'key "prompt" in case'),
        (
            '{"id": "x", "slice": "s", "split": "dev", "case": {"expect": {"tools": [{"name": "t", "name": "u"}]}}}',
            'duplicate key "name" in case.expect.tools[0]',
        ),
        # a colon escaped inside a string makes up for the lost key's colon
        ('{"id": "x", "slice": "s", "split": "dev", "case": {"k": "\\u003a", "d": 1, "d": 2}}', 'key "d" in case'),
        ('{"id":"x","slice":"s","split":"dev","case":{"a":{},"a":{}}}', 'duplicate key "a" in case'),
    ],
)
def test_a_key_written_twice_is_refused_naming_line_and_key(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, [line("first"), text])
    (found,) = problems(path)
    assert found.startswith(f"{path}:2: ") and found.endswith(problem)


def test_the_same_key_in_different_objects_is_fine(tmp_path: Path) -> None:
    tools = [{"name": "a", "args": {"name": "x"}}, {"name": "b", "args": {"name": "y"}}]
    path = write(tmp_path, [line("r1", expect={"tools": tools}, name="n", note="time: 10:30 \\u003a")])
    assert read_dataset(path).raw_case("r1")["expect"]["tools"] == tools


_KEYS = st.sampled_from(["a", "b", "c:d", "\u00e9"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(["", ":", "x:y", "\u00e9", '"']))


def _pairs_tree() -> st.SearchStrategy[Any]:
    """JSON values whose objects are lists of (key, value) pairs: a key may come twice."""
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.lists(st.tuples(_KEYS, inner), max_size=4).map(lambda p: ("obj", p))
        ),
        max_leaves=12,
    )


def _write(node: Any, ascii_only: bool, escape_colons: bool, space: str) -> str:
    if isinstance(node, tuple) and node and node[0] == "obj":
        items = [
            f"{_write(k, ascii_only, escape_colons, space)}:{space}{_write(v, ascii_only, escape_colons, space)}"
            for k, v in node[1]
        ]
        return "{" + f",{space}".join(items) + "}"
    if isinstance(node, list):
        return "[" + f",{space}".join(_write(v, ascii_only, escape_colons, space) for v in node) + "]"
    text = json.dumps(node, ensure_ascii=ascii_only)
    return text.replace(":", "\\u003a") if escape_colons and isinstance(node, str) else text


@settings(max_examples=300, deadline=None)
@given(_pairs_tree(), st.booleans(), st.booleans(), st.sampled_from(["", " ", "  \t"]))
def test_the_cheap_check_never_misses_a_key_written_twice(tree: Any, ascii_only: bool, esc: bool, sp: str) -> None:
    text = _write(("obj", [("case", tree)]), ascii_only, esc, sp).encode()
    if duplicate_key(text) is not None:
        assert _may_repeat_a_key(text, orjson.loads(text))
