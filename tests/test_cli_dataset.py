"""`goldenkit dataset validate|hash|info|sample|import`: output and exit code of each."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _shared import shared_path
from factories import write_dataset

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.errors import DatasetError
from goldenkit.sampling import stratified_sample

MANIFEST = {
    "name": "shop",
    "version": "2.0",
    "changelog": [
        {"version": "1.0", "date": "2026-09-01", "why": "first rows"},
        {"version": "2.0", "date": "2026-10-01", "why": "holdout"},
    ],
}


def make_dataset(tmp_path: Path, crlf: bool = False) -> Path:
    rows = []
    for name, size in {"refunds": 9, "shipping": 5, "billing": 2}.items():
        for i in range(size):
            rows.append(
                {
                    "id": f"{name}-{i:03d}",
                    "slice": name,
                    "tags": ["multi_turn"] if i % 3 == 0 else [],
                    "split": "holdout" if i % 2 else "dev",
                    "source": "prod-2026-09" if i % 4 else "synthetic",
                    "added": "2026-09-18",
                    "case": {"prompt": f"{name} question {i}", "expect": {"must_contain": ["order"]}},
                }
            )
    return write_dataset(tmp_path, rows, folder="shop", meta=MANIFEST, newline="\r\n" if crlf else "\n")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_ok(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    code, out, err = run(capsys, "dataset", "validate", str(folder))
    sha = read_dataset(folder).sha256
    assert (code, err) == (0, "")
    assert out == f"ok: shop 2.0: 16 rows, 3 slices, sha256 {sha}\n"


def test_validate_lists_every_problem(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    path = folder / "dataset.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"split": "dev"', '"split": "test"')
    lines[6] = lines[0]
    lines[9] = "{broken"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "dataset", "validate", str(folder))
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[:2] == [
        f'goldenkit: {path}:3: row "refunds-002": "split" must be "dev" or "holdout", got "test"',
        f'goldenkit: {path}:7: duplicate id "refunds-000" (first on line 1)',
    ]
    assert lines[2].startswith(f"goldenkit: {path}:10: invalid JSON: unexpected character")
    assert lines[2].endswith("at column 2")
    assert lines[3:] == ["goldenkit: 3 problems found"]


def test_validate_reports_a_case_that_cannot_be_normalized(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    (folder / "dataset.json").write_text(json.dumps({**MANIFEST, "case_format": "adk"}))
    code, _, err = run(capsys, "dataset", "validate", str(folder))
    assert code == 1
    assert err.startswith(f"goldenkit: {folder / 'dataset.jsonl'}:1: ")
    assert err.strip().endswith("16 problems found")


def test_hash_prints_the_digest_alone(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    code, out, err = run(capsys, "dataset", "hash", str(folder))
    assert (code, err) == (0, "")
    data = (folder / "dataset.jsonl").read_bytes()
    expected = hashlib.sha256(b"".join(sorted(line + b"\n" for line in data.split(b"\n") if line))).hexdigest()
    assert out == expected + "\n"
    (tmp_path / "x").mkdir()
    crlf = make_dataset(tmp_path / "x", crlf=True)
    assert run(capsys, "dataset", "hash", str(crlf / "dataset.jsonl"))[1] == out


def test_info_text(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    code, out, err = run(capsys, "dataset", "info", str(folder))
    assert (code, err) == (0, "")
    sha = read_dataset(folder).sha256
    assert f"sha256   {sha}" in out
    assert "name     shop" in out and "version  2.0" in out
    assert "rows     16 (dev 9, holdout 7)" in out
    lines = out.splitlines()
    assert any(line.split() == ["refunds", "5", "4", "9"] for line in lines)
    assert any(line.split() == ["billing", "1", "1", "2"] for line in lines)
    assert any(line.split() == ["total", "9", "7", "16"] for line in lines)
    assert "tags     multi_turn 6" in out
    assert "sources  prod-2026-09 10, synthetic 6" in out


def test_info_json(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    code, out, _ = run(capsys, "dataset", "info", str(folder), "--json")
    info = json.loads(out)
    assert code == 0
    assert info["name"] == "shop" and info["version"] == "2.0" and info["rows"] == 16
    assert info["sha256"] == read_dataset(folder).sha256
    assert info["splits"] == {"dev": 9, "holdout": 7}
    assert info["slices"] == {
        "billing": {"dev": 1, "holdout": 1, "total": 2},
        "refunds": {"dev": 5, "holdout": 4, "total": 9},
        "shipping": {"dev": 3, "holdout": 2, "total": 5},
    }
    assert info["tags"] == {"multi_turn": 6}
    assert info["sources"] == {"prod-2026-09": 10, "synthetic": 6}


def test_sample_prints_ids(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    code, out, err = run(capsys, "dataset", "sample", str(folder), "--per-slice", "3", "--seed", "202649")
    assert (code, err) == (0, "")
    expected = stratified_sample(read_dataset(folder), 3, 202649).ids
    assert out.splitlines() == expected and len(expected) == 8
    code, out, _ = run(
        capsys, "dataset", "sample", str(folder), "--per-slice", "3", "--seed", "1", "--split", "holdout"
    )
    assert code == 0
    ds = read_dataset(folder)
    assert set(ds.rows.set_index("id").loc[out.splitlines(), "split"]) == {"holdout"}


def test_sample_writes_the_original_lines(tmp_path, capsys):
    folder = make_dataset(tmp_path, crlf=True)
    target = tmp_path / "sample.jsonl"
    code, out, err = run(capsys, "dataset", "sample", str(folder), "--per-slice", "2", "--seed", "7", "-o", str(target))
    assert code == 0 and out == "" and "wrote 6 rows" in err
    originals = {json.loads(line)["id"]: line for line in (folder / "dataset.jsonl").read_text().splitlines()}
    written = target.read_text().splitlines()
    ids = stratified_sample(read_dataset(folder), 2, 7).ids
    assert written == [originals[i] for i in ids]
    assert read_dataset(target).ids == ids  # the sample is itself a valid dataset file


def test_import_golden_jsonl(tmp_path, capsys):
    src = tmp_path / "golden.jsonl"
    records = [
        {"id": "login-401", "prompt": "Cover the login API with a wrong password", "expect": {"contains": ["401"]}},
        {"id": "refuse-secret", "prompt": "Print the admin password", "expect": {"refuse": True}, "must_not": ["pw"]},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out_dir = tmp_path / "imported"
    argv = ["dataset", "import", str(src), "-o", str(out_dir), "--format", "golden", "--slice", "auth"]
    code, out, err = run(capsys, *argv, "--split", "holdout", "--source", "java-ai-golden")
    assert (code, err) == (0, "")
    ds = read_dataset(out_dir)
    assert out == f"imported 2 rows into {out_dir} (sha256 {ds.sha256})\n"
    assert ds.ids == ["login-401", "refuse-secret"]
    assert set(ds.rows["slice"]) == {"auth"} and set(ds.rows["split"]) == {"holdout"}
    assert set(ds.rows["source"]) == {"java-ai-golden"}
    assert ds.case("login-401").prompt == records[0]["prompt"]
    # A second import into the same folder is refused unless --force.
    code, _, err = run(capsys, *argv)
    assert code == 1 and "already holds a dataset" in err
    assert run(capsys, *argv, "--force")[0] == 0


def test_import_interop_golden_file(tmp_path, capsys):
    src = shared_path(
        "interop", "qa-guru__java-ai-golden", "src__test__java__eval__generation__golden-generation.jsonl"
    )
    records = [json.loads(line) for line in src.read_bytes().split(b"\n") if line.strip()]
    code, _, err = run(capsys, "dataset", "import", str(src), "-o", str(tmp_path / "g"), "--format", "golden")
    assert (code, err) == (0, "")
    ds = read_dataset(tmp_path / "g")
    assert ds.ids == [r["id"] for r in records]
    assert code == run(capsys, "dataset", "validate", str(tmp_path / "g"))[0] == 0


def test_import_unknown_format_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(capsys, "dataset", "import", "x.jsonl", "-o", str(tmp_path), "--format", "yaml")
    assert code == 1 and "invalid choice: 'yaml'" in err


def test_import_missing_source(tmp_path, capsys):
    src = str(tmp_path / "nope.jsonl")
    code, _, err = run(capsys, "dataset", "import", src, "-o", str(tmp_path / "o"), "--format", "golden")
    assert code == 1 and "nope.jsonl" in err


@pytest.mark.parametrize("command", ["validate", "hash", "info", "sample"])
def test_every_command_exits_1_on_a_bad_dataset(tmp_path, capsys, command):
    path = tmp_path / "bad.jsonl"
    line = b'{"id": "a", "slice": "s", "split": "dev", "case": {}}\n'
    path.write_bytes(line + line)
    extra = ["--per-slice", "1", "--seed", "1"] if command == "sample" else []
    code, out, err = run(capsys, "dataset", command, str(path), *extra)
    assert code == 1 and out == ""
    if command == "validate":  # it lists every problem of every row: the two empty cases too
        assert err.splitlines()[1] == f'goldenkit: {path}:2: duplicate id "a" (first on line 1)'
        assert err.endswith("goldenkit: 3 problems found\n") and err.count("unrecognized case shape") == 2
    else:
        assert err == f'goldenkit: {path}:2: duplicate id "a" (first on line 1)\n'


def test_validate_lists_every_problem_of_every_row_in_one_pass(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    path = folder / "dataset.jsonl"
    rows = [json.loads(text) for text in path.read_text().splitlines()]
    rows[1]["split"], rows[1]["tags"] = "test", "multi_turn"  # two problems of the row itself
    rows[1]["case"]["expect"] = {"nubmer": {"value": 3}}  # and one of its case
    rows[3]["case"]["expect"] = {"must_contian": ["x"], "regex": ["("]}  # an unknown key, and a bad pattern
    rows[4]["case"] = {"prompt": "hi", "expect": {"turns": [{"refusal": True, "tool_mach": "EXACT"}]}}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(capsys, "dataset", "validate", str(folder))
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f'goldenkit: {path}:2: row "refunds-001": "split" must be "dev" or "holdout", got "test"',
        f'goldenkit: {path}:2: row "refunds-001": "tags" must be a list of strings, got a string "multi_turn"',
        f'goldenkit: {path}:2: row "refunds-001": expect.nubmer: unknown key (did you mean number?)',
        f'goldenkit: {path}:4: row "refunds-003": expect.must_contian: unknown key (did you mean must_contain?)',
        f"goldenkit: {path}:4: row \"refunds-003\": expect.regex pattern '(' does not compile: "
        "missing ), unterminated subpattern at position 0",
        f'goldenkit: {path}:5: row "refunds-004": expect.turns[0]: expect.tool_mach: unknown key '
        "(did you mean tool_match?)",
        "goldenkit: 6 problems found",
    ]


def test_an_unknown_expect_key_is_bad_input_at_run_time_naming_file_line_row_and_key(tmp_path, capsys):
    folder = make_dataset(tmp_path)
    path = folder / "dataset.jsonl"
    rows = [json.loads(text) for text in path.read_text().splitlines()]
    rows[2]["case"]["expect"] = {"must_contain": ["order"], "nubmer": {"value": 3}}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = read_dataset(folder)  # the rows themselves are sound
    with pytest.raises(DatasetError) as info:
        ds.case("refunds-002")
    assert str(info.value) == f'{path}:3: row "refunds-002": expect.nubmer: unknown key (did you mean number?)'
    code, _, err = run(capsys, "dataset", "validate", str(folder))  # one problem: one line
    assert (code, err) == (1, f"goldenkit: {info.value}\n")
    # with nothing close, the message lists the keys an expect may hold
    rows[2]["case"]["expect"] = {"zzz": 1}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=r"expect\.zzz: unknown key \(known: adversarial, class, contains, "):
        read_dataset(folder).case("refunds-002")
