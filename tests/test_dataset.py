"""read_dataset, the canonical content hash and the refusal of every bad input.

Expected digests are computed here independently of goldenkit: plain hashlib over
lines sorted by hand, so the hash definition of DESIGN.md is checked, not just
goldenkit against itself.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from goldenkit.dataset import Dataset, canonical_sha256, read_dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.records import Case


def row(i: int | str, slice_: str = "refunds", split: str = "dev", **extra: object) -> dict:
    rid = i if isinstance(i, str) else f"r-{i:03d}"
    r = {"id": rid, "slice": slice_, "split": split, "case": {"prompt": f"question {rid}"}}
    r.update(extra)
    return r


def jsonl(rows: list[dict]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


MANIFEST = {
    "name": "demo",
    "version": "1.1",
    "changelog": [
        {"version": "1.0", "date": "2026-10-01", "why": "first rows"},
        {"version": "1.1", "date": "2026-11-02", "why": "more refunds"},
    ],
}


def make_folder(tmp_path: Path, data: bytes, manifest: dict | None = None) -> Path:
    folder = tmp_path / "ds"
    folder.mkdir(exist_ok=True)
    (folder / "dataset.jsonl").write_bytes(data)
    (folder / "dataset.json").write_text(json.dumps(MANIFEST if manifest is None else manifest))
    return folder


def write_jsonl(tmp_path: Path, data: bytes, name: str = "rows.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def expected_digest(lines: list[bytes]) -> str:
    """The DESIGN.md recipe, by hand: lines already stripped and non-empty."""
    h = hashlib.sha256()
    for line in sorted(lines):
        h.update(line + b"\n")
    return h.hexdigest()


# --------------------------------------------------------------------------- hash


A = b'{"id":"a","slice":"s","split":"dev","case":{}}'
B = b'{"id":"b","slice":"s","split":"dev","case":{}}'
C = b'{"id":"c","slice":"t","split":"holdout","case":{"prompt":"x"}}'


def test_hash_matches_independent_recipe():
    assert canonical_sha256(C + b"\n" + A + b"\n" + B + b"\n") == expected_digest([A, B, C])
    # The digest of the sorted lines, each followed by LF, spelled out once.
    assert canonical_sha256(B + b"\n" + A) == hashlib.sha256(A + b"\n" + B + b"\n").hexdigest()


def test_hash_invariant_to_order_crlf_blank_lines_and_surrounding_whitespace():
    base = canonical_sha256(A + b"\n" + B + b"\n" + C + b"\n")
    variants = [
        C + b"\n" + B + b"\n" + A + b"\n",
        A + b"\r\n" + B + b"\r\n" + C + b"\r\n",
        A + b"\n" + B + b"\n" + C,  # no final LF
        b"\n\n" + A + b"\n\n\n" + B + b"\n" + C + b"\n\n\n",
        b"  " + A + b" \t\n\x0b" + B + b"\x0c\r\n\t" + C + b"   \r\n \r\n",
    ]
    for v in variants:
        assert canonical_sha256(v) == base, v


def test_hash_sensitive_to_one_character():
    base = canonical_sha256(A + b"\n" + B + b"\n")
    assert canonical_sha256(A + b"\n" + B.replace(b'"b"', b'"B"') + b"\n") != base
    assert canonical_sha256(A + b"\n" + B.replace(b"dev", b"deV") + b"\n") != base
    # Whitespace inside a line is content.
    assert canonical_sha256(A + b"\n" + B.replace(b":", b": ", 1) + b"\n") != base
    # Duplicate lines count.
    assert canonical_sha256(A + b"\n" + A + b"\n" + B + b"\n") != base


def test_unicode_line_separators_inside_strings_do_not_split_lines():
    # U+2028, U+2029 and U+0085 raw inside JSON strings: str.splitlines() would break these lines.
    weird = '{"id":"w","slice":"s","split":"dev","case":{"prompt":"a\u2028b\u2029c\u0085d\x1ce"}}'.encode()
    assert len(weird.decode().splitlines()) > 1  # the trap this test is about
    data = B + b"\n" + weird + b"\n" + A + b"\n"
    assert canonical_sha256(data) == expected_digest([A, B, weird])


def test_hash_of_bytes_below_lf_sorts_by_line_not_by_line_plus_lf():
    # "a" < "a\tb" as lines, but "a\n" > "a\tb\n": the sort is over lines, the LF is only appended.
    data = b"a\tb\nz\x01\nz\na\n\x00\n"
    assert canonical_sha256(data) == hashlib.sha256(b"\x00\na\na\tb\nz\nz\x01\n").hexdigest()


def test_hash_of_nothing():
    empty = hashlib.sha256(b"").hexdigest()
    assert canonical_sha256(b"") == empty
    assert canonical_sha256(b" \r\n\n\t\n") == empty


def test_hash_only_strips_ascii_whitespace():
    # U+00A0 (NBSP, C2 A0) and U+3000 are not ASCII whitespace: they stay.
    nbsp = "\u00a0x\u3000".encode()
    assert canonical_sha256(nbsp + b"\n") == hashlib.sha256(nbsp + b"\n").hexdigest()
    assert canonical_sha256(b"\x1cx\x1f\n") == hashlib.sha256(b"\x1cx\x1f\n").hexdigest()


def _reference(data: bytes) -> str:
    lines = [line.strip(b" \t\r\n\x0b\x0c") for line in data.split(b"\n")]
    return expected_digest([line for line in lines if line])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(max_size=12) | st.sampled_from([b"", b"\r", b" ", b"\t", b"a", b"a\t", b"\x00"]), max_size=30)
)
def test_hash_equals_reference_on_arbitrary_bytes(parts):
    data = b"\n".join(parts)
    assert canonical_sha256(data) == _reference(data)


def test_hash_of_large_input_equals_reference():
    rnd = random.Random(5)
    alphabet = [b"a", b"b", b"\t", b" ", b"\r", b"\x01", b'"', b"\xe2\x80\xa8"]
    parts = [b"".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 9))) for _ in range(5000)]
    parts += [b'{"id": "shared-prefix-' + str(i % 50).encode() + b'"}' for i in range(3000)]
    rnd.shuffle(parts)
    data = b"\n".join(parts)
    assert canonical_sha256(data) == _reference(data)


def test_read_dataset_hash_equals_canonical_of_file(tmp_path):
    data = jsonl([row(3), row(1), row(2, "shipping", "holdout")])
    folder = make_folder(tmp_path, data)
    ds = read_dataset(folder)
    assert ds.sha256 == canonical_sha256(data) == _reference(data)
    (tmp_path / "crlf").mkdir()
    crlf = make_folder(tmp_path / "crlf", data.replace(b"\n", b"\r\n"))
    assert read_dataset(crlf).sha256 == ds.sha256


# --------------------------------------------------------------------------- reading


def test_read_folder(tmp_path):
    data = jsonl(
        [
            row(1, tags=["multi_turn", "tool_error"], source="prod-2026-09", added="2026-09-18"),
            row(2, "shipping", "holdout"),
            row(3, tags=[], source=None),
        ]
    )
    folder = make_folder(tmp_path, data)
    ds = read_dataset(folder)
    assert isinstance(ds, Dataset)
    assert (ds.name, ds.version, ds.path, ds.case_format) == ("demo", "1.1", folder, None)
    assert ds.manifest["changelog"][0]["why"] == "first rows"
    assert list(ds.rows.columns) == ["id", "slice", "tags", "split", "source", "added"]
    assert ds.rows["id"].tolist() == ["r-001", "r-002", "r-003"]
    assert ds.rows["tags"].tolist() == [["multi_turn", "tool_error"], [], []]
    assert ds.rows["split"].tolist() == ["dev", "holdout", "dev"]
    assert ds.rows["source"].iloc[0] == "prod-2026-09"
    assert ds.rows["source"].isna().tolist() == [False, True, True]
    assert ds.rows["added"].iloc[0] == "2026-09-18"
    assert ds.raw_case("r-002") == {"prompt": "question r-002"}
    first = ds.raw_case("r-002")
    first["prompt"] = "edited by the caller"  # a fresh dict every call: the dataset is not changed
    assert ds.raw_case("r-002") == {"prompt": "question r-002"}
    with pytest.raises(DatasetError, match='no row with id "nope"'):
        ds.raw_case("nope")
    assert len(ds) == 3 and ds.ids == ["r-001", "r-002", "r-003"]
    assert ds.line_number("r-002") == 2
    assert ds.raw_line("r-002") == json.dumps(row(2, "shipping", "holdout")).encode()


def test_read_bare_jsonl_and_dataset_jsonl_with_manifest(tmp_path):
    data = jsonl([row(1), row(2)])
    bare = write_jsonl(tmp_path, data, "my-evals.jsonl")
    ds = read_dataset(str(bare))
    assert (ds.name, ds.version, ds.manifest) == ("my-evals", None, {})
    folder = make_folder(tmp_path, data)
    ds2 = read_dataset(folder / "dataset.jsonl")
    assert (ds2.name, ds2.version) == ("demo", "1.1")
    assert ds2.sha256 == ds.sha256


def test_line_numbers_count_blank_lines(tmp_path):
    data = b"\n" + jsonl([row(1)]) + b"\r\n  \n" + jsonl([row(2)])
    ds = read_dataset(write_jsonl(tmp_path, data))
    assert [ds.line_number(r) for r in ds.ids] == [2, 5]


def test_default_split_from_manifest(tmp_path):
    r = row(1)
    del r["split"]
    data = jsonl([r, row(2, split="holdout"), {**row(3), "split": None}])
    with pytest.raises(DatasetError, match=r':1: missing "split"'):
        read_dataset(make_folder(tmp_path, data))
    ds = read_dataset(make_folder(tmp_path, data, {**MANIFEST, "default_split": "holdout"}))
    assert ds.rows["split"].tolist() == ["holdout", "holdout", "holdout"]


def test_case_is_normalized_and_cached(tmp_path):
    r = row(1, case={"prompt": "Where is order A-1?", "expect": {"must_contain": ["A-1"]}})
    ds = read_dataset(make_folder(tmp_path, jsonl([r, row(2)])))
    case = ds.case("r-001")
    assert isinstance(case, Case)
    assert case.prompt == "Where is order A-1?"
    assert case.id == "r-001"
    assert ds.case("r-001") is case
    with pytest.raises(DatasetError, match='no row with id "nope"'):
        ds.case("nope")


def test_case_that_cannot_be_normalized_names_file_and_line(tmp_path):
    good = row(1)
    bad = row(2, case={"conversation": "not a list", "eval_id": "x"})
    folder = make_folder(tmp_path, jsonl([good, bad]), {**MANIFEST, "case_format": "adk"})
    ds = read_dataset(folder)
    with pytest.raises(DatasetError) as info:
        ds.case("r-002")
    assert f"{folder / 'dataset.jsonl'}:2:" in str(info.value)


def test_subset(tmp_path):
    ds = read_dataset(make_folder(tmp_path, jsonl([row(i) for i in range(1, 6)])))
    sub = ds.subset(["r-004", "r-002"])
    assert sub.ids == ["r-004", "r-002"]
    assert (sub.sha256, sub.name, sub.version) == (ds.sha256, ds.name, ds.version)
    assert sub.line_number("r-004") == 4
    assert sub.raw_line("r-002") == ds.raw_line("r-002")
    assert sub.case("r-002").prompt == "question r-002"
    assert ds.subset({"r-005", "r-001"}).ids == ["r-001", "r-005"]
    assert ds.subset(ds.rows[ds.rows["id"] > "r-003"]).ids == ["r-004", "r-005"]
    assert len(ds) == 5
    with pytest.raises(DatasetError, match='no row with id "r-999"'):
        ds.subset(["r-001", "r-999"])
    with pytest.raises(DatasetError, match="twice"):
        ds.subset(["r-001", "r-001"])


def test_columns_rows_and_retagging(tmp_path):
    ds = read_dataset(make_folder(tmp_path, jsonl([row(1, tags=["a"]), row(2, "billing", "holdout", source="s")])))
    assert ds.column("slice") == ["refunds", "billing"] and ds.column("source") == [None, "s"]
    assert ds.column("tags") == [["a"], []]
    assert ds.subset(pd.Series(["r-002"])).column("split") == ["holdout"]
    with pytest.raises(KeyError, match="no row column 'case' \\(columns: id, slice, tags, split, source, added\\)"):
        ds.column("case")
    assert ds.rows is ds.rows  # built once, on first access
    frame = {
        name: [None if v is not None and not isinstance(v, list) and pd.isna(v) else v for v in values]
        for name, values in ds.rows.to_dict("list").items()
    }
    assert frame == {name: ds.column(name) for name in ds.rows.columns}  # missing: NaN in the frame, None here
    retagged = ds.with_tags([["red"], ["x", "y"]])
    assert retagged.rows["tags"].tolist() == [["red"], ["x", "y"]] and retagged.sha256 == ds.sha256
    assert ds.column("tags")[1] == []  # the original keeps its tags
    with pytest.raises(ValueError, match="1 tag lists for 2 rows"):
        ds.with_tags([[]])


def test_crlf_file_reads_like_lf(tmp_path):
    data = jsonl([row(1), row(2)])
    lf = read_dataset(write_jsonl(tmp_path, data, "lf.jsonl"))
    crlf = read_dataset(write_jsonl(tmp_path, data.replace(b"\n", b"\r\n"), "crlf.jsonl"))
    assert lf.sha256 == crlf.sha256
    assert crlf.rows["id"].tolist() == ["r-001", "r-002"]
    assert crlf.raw_line("r-002") == lf.raw_line("r-002")


def test_unicode_separators_inside_strings_are_one_row(tmp_path):
    r = row(1, case={"prompt": "first\u2028second\u0085third"})
    data = json.dumps(r, ensure_ascii=False).encode() + b"\n" + jsonl([row(2)])
    ds = read_dataset(write_jsonl(tmp_path, data))
    assert len(ds) == 2
    assert ds.raw_case("r-001")["prompt"] == "first\u2028second\u0085third"
    assert ds.line_number("r-002") == 2


# --------------------------------------------------------------------------- bad input


BAD_ROWS = [
    (b"{not json}", r"invalid JSON: .* at column 2"),
    (b'{"id": "x", "slice": "s", "split": "dev", "case": {}', r"invalid JSON: .*"),
    (b'{"id": "x", "slice": "s", "split": "dev", "case": {}} {}', r"invalid JSON: .*"),
    (b"[1, 2]", r"a row must be a JSON object, got a list"),
    (b'"text"', r"a row must be a JSON object, got a string"),
    (b'{"slice": "s", "split": "dev", "case": {}}', r'missing "id"'),
    (b'{"id": null, "slice": "s", "split": "dev", "case": {}}', r'missing "id"'),
    (b'{"id": "", "slice": "s", "split": "dev", "case": {}}', r'empty "id"'),
    (b'{"id": "  ", "slice": "s", "split": "dev", "case": {}}', r'empty "id"'),
    (b'{"id": 7, "slice": "s", "split": "dev", "case": {}}', r'"id" must be a string, got a number 7'),
    (b'{"id": "x", "split": "dev", "case": {}}', r'missing "slice"'),
    (b'{"id": "x", "slice": "", "split": "dev", "case": {}}', r'empty "slice"'),
    (b'{"id": "x", "slice": ["a", "b"], "split": "dev", "case": {}}', r'"slice" must be a string, got a list'),
    (b'{"id": "x", "slice": "s", "split": "test", "case": {}}', r'"split" must be "dev" or "holdout", got "test"'),
    (b'{"id": "x", "slice": "s", "split": "Dev", "case": {}}', r'"split" must be "dev" or "holdout", got "Dev"'),
    (b'{"id": "x", "slice": "s", "case": {}}', r'missing "split"'),
    (b'{"id": "x", "slice": "s", "split": "dev", "tags": "a,b", "case": {}}', r'"tags" must be a list of strings'),
    (
        b'{"id": "x", "slice": "s", "split": "dev", "tags": ["a", 2], "case": {}}',
        r'"tags" must be a list of strings, found a number 2',
    ),
    (b'{"id": "x", "slice": "s", "split": "dev", "tags": [""], "case": {}}', r'empty string in "tags"'),
    (b'{"id": "x", "slice": "s", "split": "dev", "source": 5, "case": {}}', r'"source" must be a string, got a number'),
    (
        b'{"id": "x", "slice": "s", "split": "dev", "added": true, "case": {}}',
        r'"added" must be a string, got a boolean',
    ),
    (b'{"id": "x", "slice": "s", "split": "dev"}', r'missing "case"'),
    (b'{"id": "x", "slice": "s", "split": "dev", "case": "prompt"}', r'"case" must be a JSON object, got a string'),
    (b'{"id": "x", "slice": "s", "split": "dev", "slcie": "t", "case": {}}', r'unknown key "slcie"'),
    (b'{"id": "x", "slice": "s", "split": "dev", "case": {"p": "\xff"}}', r"invalid UTF-8 byte 0xff at column 58"),
    (b'{"id": "x", "slice": "s", "split": "dev", "case": {"p": "\xc3("}}', r"invalid UTF-8 byte 0xc3"),
    (b'\xef\xbb\xbf{"id": "x", "slice": "s", "split": "dev", "case": {}}', r"byte-order mark"),
]


@pytest.mark.parametrize(("line", "message"), BAD_ROWS)
def test_bad_row_is_refused_with_its_line(tmp_path, line, message):
    data = jsonl([row(1)]) + b"\n" + jsonl([row(2)]) + line + b"\n" + jsonl([row(4)])
    path = write_jsonl(tmp_path, data)
    with pytest.raises(DatasetError, match=message) as info:
        read_dataset(path)
    err = info.value
    assert (err.path, err.line) == (str(path), 4)
    assert str(err).startswith(f"{path}:4: ")
    assert "\n" not in str(err)
    assert isinstance(err, InputError) and err.exit_code == 1


def test_duplicate_id_names_both_lines(tmp_path):
    data = jsonl([row(1), row(2), row("refund-0142"), row(4)]) + b"\n" + jsonl([row(5), row("refund-0142")])
    path = write_jsonl(tmp_path, data)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert str(info.value) == f'{path}:7: duplicate id "refund-0142" (first on line 3)'


def test_several_problems_first_in_message_all_listed(tmp_path):
    data = jsonl([row(1), row(1)]) + b"{oops\n" + jsonl([{**row(3), "split": "x"}])
    path = write_jsonl(tmp_path, data)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    err = info.value
    assert err.line == 2 and "duplicate id" in str(err) and "and 2 more problems" in str(err)
    assert [p.split(": ")[0] for p in err.problems] == [f"{path}:2", f"{path}:3", f"{path}:4"]


def test_bom_at_file_start(tmp_path):
    path = write_jsonl(tmp_path, b"\xef\xbb\xbf" + jsonl([row(1)]))
    with pytest.raises(DatasetError, match=r":1: file starts with a UTF-8 byte-order mark"):
        read_dataset(path)


@pytest.mark.parametrize("data", [b"", b"\n\n", b"  \r\n\t\n"])
def test_empty_file(tmp_path, data):
    path = write_jsonl(tmp_path, data)
    with pytest.raises(DatasetError, match=r"empty dataset: no rows") as info:
        read_dataset(path)
    assert info.value.path == str(path)


def test_utf16_file_is_refused(tmp_path):
    path = write_jsonl(tmp_path, json.dumps(row(1)).encode("utf-16"))
    with pytest.raises(DatasetError, match=r":1: .*(UTF-8|BOM|byte-order)"):
        read_dataset(path)


def test_missing_paths(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset file or folder"):
        read_dataset(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="has no dataset.jsonl"):
        read_dataset(tmp_path / "empty")
    (tmp_path / "nomanifest").mkdir()
    (tmp_path / "nomanifest" / "dataset.jsonl").write_bytes(jsonl([row(1)]))
    with pytest.raises(DatasetError, match="has no dataset.json"):
        read_dataset(tmp_path / "nomanifest")


CHANGELOG_1 = b'"changelog": [{"version": "1", "date": "2026-01-01", "why": "a"}]}'
BAD_MANIFESTS = [
    (b'{"name": "x", "version": "1",', r"dataset.json:1: invalid JSON"),
    (b'["x"]', r"dataset.json: manifest must be a JSON object, got a list"),
    (b'{"version": "1", "changelog": []}', r'dataset.json: manifest has no "name"'),
    (b'{"name": "", "version": "1", "changelog": []}', r'"name" must be a non-empty string'),
    (b'{"name": "x", "version": 1, "changelog": []}', r'"version" must be a non-empty string, got 1'),
    (b'{"name": "x", "version": "1"}', r'manifest has no "changelog"'),
    (b'{"name": "x", "version": "1", "changelog": []}', r'"changelog" must be a non-empty list'),
    (b'{"name": "x", "version": "1", "changelog": ["1"]}', r"changelog\[0\] must be an object"),
    (
        b'{"name": "x", "version": "1", "changelog": [{"version": "1", "date": "2026-01-01"}]}',
        r'changelog\[0\]: "why" must be',
    ),
    (
        b'{"name": "x", "version": "1", "changelog": [{"version": "1", "date": "Jan 1", "why": "a"}]}',
        r'"date" must be YYYY-MM-DD',
    ),
    (
        b'{"name": "x", "version": "2", "changelog": [{"version": "1", "date": "2026-02-01", "why": "a"},'
        b' {"version": "2", "date": "2026-01-01", "why": "b"}]}',
        r"changelog\[1\]: date 2026-01-01 is earlier",
    ),
    (
        b'{"name": "x", "version": "1", "changelog": [{"version": "1", "date": "2026-01-01", "why": "a"},'
        b' {"version": "1", "date": "2026-01-02", "why": "b"}]}',
        r'changelog\[1\]: version "1" already in changelog\[0\]',
    ),
    (
        b'{"name": "x", "version": "2", "changelog": [{"version": "1", "date": "2026-01-01", "why": "a"}]}',
        r'version is "2" but the last changelog entry is "1"',
    ),
    (
        b'{"name": "x", "version": "1", "case_format": "yaml", ' + CHANGELOG_1,
        r'"case_format" must be one of adk, vertex, contract',
    ),
    (
        b'{"name": "x", "version": "1", "default_split": "test", ' + CHANGELOG_1,
        r'"default_split" must be "dev" or "holdout"',
    ),
    (b'\xef\xbb\xbf{"name": "x"}', r"dataset.json: file starts with a UTF-8 byte-order mark"),
]


@pytest.mark.parametrize(("manifest", "message"), BAD_MANIFESTS)
def test_bad_manifest_names_the_file(tmp_path, manifest, message):
    folder = make_folder(tmp_path, jsonl([row(1)]))
    (folder / "dataset.json").write_bytes(manifest)
    with pytest.raises(DatasetError, match=message) as info:
        read_dataset(folder)
    assert info.value.path == str(folder / "dataset.json")


def test_manifest_extra_keys_are_kept(tmp_path):
    manifest = {**MANIFEST, "description": "d", "slices": ["refunds"], "case_format": "contract"}
    ds = read_dataset(make_folder(tmp_path, jsonl([row(1)]), manifest))
    assert ds.manifest["slices"] == ["refunds"] and ds.case_format == "contract"


def test_many_rows_round_trip(tmp_path):
    rows = [row(i, f"s{i % 7}", "holdout" if i % 3 == 0 else "dev", tags=[f"t{i % 2}"]) for i in range(2000)]
    random.Random(1).shuffle(rows)
    data = jsonl(rows)
    ds = read_dataset(write_jsonl(tmp_path, data))
    assert ds.rows["id"].tolist() == [r["id"] for r in rows]
    assert [ds.raw_case(rid) for rid in ds.ids] == [r["case"] for r in rows]
    assert ds.sha256 == _reference(data)
    assert np.array_equal(
        ds.rows["slice"].value_counts().sort_index().to_numpy(), np.full(7, 2000 // 7) + (np.arange(7) < 2000 % 7)
    )


_PREFIXES = [b"", b"{", b'{"id": "', b'{"id": "refund-00', b"x" * 60, b"x" * 59 + b"\x00", b"x" * 61]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_PREFIXES), st.binary(max_size=20), st.sampled_from([b"", b"\r", b" \t"])),
        min_size=2,
        max_size=60,
    )
)
def test_vectorized_sort_equals_reference_with_shared_prefixes(parts):
    # Long shared prefixes (past the vectorized rounds), NULs and bytes below LF, lines
    # ending exactly at window boundaries and at the end of the buffer.
    data = b"\n".join(prefix + body + tail for prefix, body, tail in parts)
    assert canonical_sha256(data) == _reference(data)
    assert canonical_sha256(data + b"\n") == _reference(data)


@pytest.mark.parametrize("edge", [-1, 0, 1])
def test_hash_of_multi_megabyte_input_with_lf_at_scan_chunk_edges(edge):
    # The LF scan works 1 MiB at a time: put LFs on and around the chunk boundaries.
    chunk = 1 << 20
    first = b"x" * (chunk - 1 + edge)
    rnd = random.Random(edge)
    rest = [bytes(rnd.choice(b"ab \r\t{}") for _ in range(rnd.randrange(1, 300))) for _ in range(12000)]
    data = b"\n".join([first, *rest, b"y" * (chunk - 2)]) + b"\n"
    assert len(data) > 2 * chunk
    assert canonical_sha256(data) == _reference(data)


# --------------------------------------------------------------------------- fast path == careful path

FULL = {"id": "x", "slice": "s", "tags": ["t"], "split": "dev", "source": "src", "added": "2026-01-01", "case": {}}
FULL_BAD_VALUES = [
    ("id", ""),
    ("id", " \t"),
    ("id", "\u3000"),
    ("id", 5),
    ("id", None),
    ("slice", ""),
    ("slice", "\x1c"),
    ("slice", None),
    ("slice", {"a": 1}),
    ("split", "test"),
    ("split", None),
    ("split", ["dev"]),
    ("tags", [""]),
    ("tags", [" "]),
    ("tags", ["a", None]),
    ("tags", [1]),
    ("tags", "a"),
    ("tags", {"a": 1}),
    ("source", 1),
    ("source", ["a"]),
    ("added", False),
    ("added", 20260101),
    ("case", None),
    ("case", []),
    ("case", "x"),
]


@pytest.mark.parametrize(("key", "value"), FULL_BAD_VALUES)
def test_a_bad_value_in_a_complete_row_is_refused(tmp_path, key, value):
    # A bad value is refused even when the row holds all seven keys.
    good = [dict(FULL, id=f"g{i}") for i in range(3)]
    data = jsonl(good[:2] + [dict(FULL, **{key: value})] + good[2:])
    path = write_jsonl(tmp_path, data)
    with pytest.raises(DatasetError) as info:
        read_dataset(path)
    assert info.value.line == 3


def test_duplicate_in_complete_rows_is_refused(tmp_path):
    data = jsonl([dict(FULL, id="a"), dict(FULL, id="b"), dict(FULL, id="a")])
    with pytest.raises(DatasetError, match=r':3: duplicate id "a" \(first on line 1\)'):
        read_dataset(write_jsonl(tmp_path, data))


def test_rows_frame_types_with_and_without_optional_values(tmp_path):
    rows = [
        dict(FULL, id=f"r{i}", slice=f"s{i % 3}", tags=[f"t{j}" for j in range(i % 3)], split=("dev", "holdout")[i % 2])
        for i in range(50)
    ]
    rows[4]["source"] = None
    del rows[7]["added"]
    rows[9]["case"] = {"prompt": "p", "expect": {"must_not": ["x"]}}
    frame = read_dataset(write_jsonl(tmp_path, jsonl(rows))).rows
    for col in ("id", "slice", "split", "source", "added"):
        assert frame[col].dtype == pd.StringDtype(na_value=np.nan), col
    assert frame["tags"].dtype == object and "case" not in frame
    assert frame["source"].isna().tolist() == [i == 4 for i in range(50)]
    assert frame["added"].isna().tolist() == [i == 7 for i in range(50)]
    assert frame["tags"].tolist() == [r["tags"] for r in rows]
    again = read_dataset(write_jsonl(tmp_path, jsonl(rows)))
    assert again.raw_case("r9") == {"prompt": "p", "expect": {"must_not": ["x"]}}


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_hash_of_a_mostly_sorted_file(eol):
    # Lines already in order are hashed run by run straight from the buffer.
    lines = [b'{"id": "row-%05d", "n": %d}' % (i, i * 7) for i in range(5000)]
    lines[100], lines[4000] = lines[4000], lines[100]
    data = eol.join(lines) + eol
    assert canonical_sha256(data) == _reference(data) == expected_digest(lines)


def test_hash_of_a_file_scanned_on_two_threads():
    # Past 16 MiB the LF scan splits the buffer in two halves; put an LF on the split.
    half = (17 << 20) // 2
    data = b"a" * (half - 1) + b"\n" + b"b" * 1000 + b"\n" + (b"c" * 999 + b"\n") * (half // 1000)
    assert canonical_sha256(data) == _reference(data)
    assert canonical_sha256(data[:-1] + b" ") == _reference(data[:-1] + b" ")


def test_hash_of_a_shuffled_crlf_file_with_inner_carriage_returns():
    rnd = random.Random(3)
    lines = [b'{"id": "r%d", "text": "a\\rb %d"}' % (rnd.randrange(10**6), i) for i in range(3000)]
    lines[5] = b"x\ry"  # a raw CR inside a line is content
    data = b"\r\n".join(lines) + b"\r\n"
    assert canonical_sha256(data) == _reference(data) == expected_digest(lines)
    assert canonical_sha256(data) == canonical_sha256(b"\n".join(lines[::-1]))
