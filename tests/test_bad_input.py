"""Input that is not what it seems: look-alike ids, keys written twice, numbers that are not numbers,
outcome files cut short. Each is refused with one line naming where, and the right exit code."""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings, strategies as st

from goldenkit.cli import build_parser, main
from goldenkit.commands._args import BadNumber
from goldenkit.dataset import read_dataset
from goldenkit.dataset._rows import _may_repeat_a_key, duplicate_key, fold_id
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
    ids = ["refund-1", "refund_1", "refund-1a", "refund-l", "r\u00e9fund-1", "r\u0435fund-1"]  # a Cyrillic e: kept
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


# --------------------------------------------------------------------------- numbers that are not numbers


def _actions(parser: argparse.ArgumentParser, prog: str = "goldenkit") -> list[tuple[str, argparse.Action]]:
    """Every option of every command (subcommands too), with the command's name."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _actions(sub, f"{prog} {name}")
        else:
            found.append((prog, action))
    return found


def test_no_option_takes_a_bare_float() -> None:
    bare = [f"{prog} {a.option_strings}" for prog, a in _actions(build_parser()) if a.type is float]
    assert bare == []


def test_every_number_option_refuses_nan_and_inf() -> None:
    checked = 0
    for _, action in _actions(build_parser()):
        if callable(action.type) and str(getattr(action.type, "__name__", "")).startswith("finite number"):
            for text in ("nan", "inf", "-inf", "NaN", "1e999", "twelve"):
                with pytest.raises(BadNumber, match="must be a finite number"):
                    action.type(text)
            checked += 1
    assert checked >= 20  # run's eight, generate's two, compare, report, leaderboard, stats, judge, import-run, regrade


@pytest.mark.parametrize(
    ("argv", "option", "why"),
    [
        (["run", "ds", "--timeout", "nan"], "--timeout", "finite number > 0, got 'nan'"),
        (["run", "ds", "--timeout", "0"], "--timeout", "finite number > 0, got '0'"),
        (["run", "ds", "--rpm", "nan"], "--rpm", "finite number > 0"),
        (["run", "ds", "--rpm", "-60"], "--rpm", "finite number > 0"),
        (["run", "ds", "--max-retry-after", "nan"], "--max-retry-after", "finite number >= 0"),
        (["run", "ds", "--max-retry-after", "inf"], "--max-retry-after", "finite number >= 0"),
        (["run", "ds", "--max-error-rate", "1.5"], "--max-error-rate", "finite number in [0, 1]"),
        (["run", "ds", "--max-ungradable", "nan"], "--max-ungradable", "finite number in [0, 1]"),
        (["run", "ds", "--temperature", "-0.5"], "--temperature", "finite number in [0, 2]"),
        (["run", "ds", "--temperature", "2.5"], "--temperature", "finite number in [0, 2], got '2.5'"),
        (["run", "ds", "--user-temperature", "inf"], "--user-temperature", "finite number in [0, 2]"),
        (["run", "ds", "--max-in-flight", "0"], "--max-in-flight", "integer >= 1, got '0'"),
        (["run", "ds", "--repeats", "0"], "--repeats", "integer in [1, 1000], got '0'"),
        (["run", "ds", "--max-reply-bytes", "0"], "--max-reply-bytes", "integer >= 1, got '0'"),
        (["run", "ds", "--max-reply-bytes", "-5"], "--max-reply-bytes", "integer >= 1"),
        (["run", "ds", "--max-tool-steps", "-1"], "--max-tool-steps", "integer >= 0, got '-1'"),
        (["benchmark", "ds", "--timeout", "nan"], "--timeout", "finite number > 0"),
        (["compare", "a", "b", "--alpha", "nan"], "--alpha", "finite number in (0, 1)"),
        (["compare", "a", "b", "--alpha", "1"], "--alpha", "finite number in (0, 1)"),
        (["leaderboard", "a", "b", "--alpha", "inf"], "--alpha", "finite number in (0, 1)"),
        (["report", "r", "--timeout", "-1"], "--timeout", "finite number > 0"),
        (["stats", "plan", "--delta", "nan", "--discordance", "0.1"], "--delta", "finite number"),
        (["stats", "plan", "--delta", "0.01", "--discordance", "inf"], "--discordance", "finite number in (0, 1]"),
        (["stats", "plan", "--delta", "0.01", "--discordance", "0.1", "--power", "nan"], "--power", "in (0, 1)"),
        (["judge", "calibrate", "x", "--kappa-floor", "nan"], "--kappa-floor", "finite number in [-1, 1]"),
        (["import-run", "x", "--format", "inspect", "--run-id", "r", "--threshold", "nan"], "--threshold", "finite"),
        (["regrade", "--run-id", "r", "--max-ungradable", "2"], "--max-ungradable", "finite number in [0, 1]"),
        (["dataset", "generate", "d", "--agent-config", "a", "--count", "1", "--timeout", "nan"], "--timeout", "> 0"),
        (["dataset", "generate", "d", "--agent-config", "a", "--count", "1", "--temperature", "nan"], "--temp", ">= 0"),
    ],
)
def test_a_number_outside_its_option_is_a_usage_error_naming_it(
    argv: list[str], option: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"argument {option}" in err and why in err


def test_good_numbers_still_pass() -> None:
    parser = build_parser("run")
    numbers = {"--timeout": "0.5", "--rpm": "90", "--max-retry-after": "0", "--max-error-rate": "1"}
    numbers |= {"--max-reply-bytes": "1", "--max-tool-steps": "0", "--temperature": "0", "--max-ungradable": "0.25"}
    args = parser.parse_args(["run", "ds", *[part for pair in numbers.items() for part in pair]])
    assert (args.timeout, args.rpm, args.max_retry_after, args.max_error_rate) == (0.5, 90.0, 0.0, 1.0)
    assert (args.max_reply_bytes, args.max_tool_steps, args.temperature, args.max_ungradable) == (1, 0, 0.0, 0.25)


@pytest.mark.parametrize(
    ("setting", "why"),
    [
        ("timeout = nan", "[run] timeout must be a finite number > 0, got nan"),
        ("rpm = inf", "[run] rpm must be a finite number > 0, got inf"),
        ("max_retry_after = -1.0", "[run] max_retry_after must be a finite number >= 0, got -1.0"),
        ("max_error_rate = nan", "[run] max_error_rate must be a finite number in [0, 1], got nan"),
        ("temperature = -inf", "[run] temperature must be a finite number in [0, 2], got -inf"),
        ("max_reply_bytes = 0", "[run] max_reply_bytes must be an integer >= 1, got 0"),
        ("max_tool_steps = -1", "[run] max_tool_steps must be an integer >= 0, got -1"),
        ("repeats = inf", "[run] repeats must be an integer in [1, 1000], got inf"),
        ("max_in_flight = 2.5", "[run] max_in_flight must be an integer >= 1, got 2.5"),
        ("max_in_flight = 0", "[run] max_in_flight must be an integer >= 1, got 0"),
        ('max_in_flight = "8"', "[run] max_in_flight must be an integer >= 1, got '8'"),
        ("timeout = true", "[run] timeout must be a finite number > 0, got True"),
    ],
)
def test_the_same_numbers_in_goldenkit_toml_are_refused_naming_the_key(
    tmp_path: Path, setting: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "goldenkit.toml"
    config.write_text(f"[run]\n{setting}\n", encoding="utf-8")
    ds = write(tmp_path, [line("r1")])
    assert main(["run", str(ds), "--config", str(config), "--provider", "fixtures", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err == f"goldenkit: {config}: {why}\n"


# --------------------------------------------------------------------------- outcome files cut short


@pytest.fixture
def cut_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """results/base (whole) and results/cand, whose outcomes.parquet is cut in half as a crash or a full disk would."""
    from run_factory import manifest, worked_example, write_run

    base, cand = worked_example()
    write_run(tmp_path / "results", manifest("base"), base)
    folder = write_run(tmp_path / "results", manifest("cand", model_id="model-b"), cand)
    parquet = folder / "outcomes.parquet"
    parquet.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])
    monkeypatch.chdir(tmp_path)
    return parquet


@pytest.mark.parametrize(
    "argv",
    [["compare", "base", "cand"], ["compare", "cand", "base", "--json"], ["gate", "cand", "--baseline", "base"]],
)
def test_compare_and_gate_on_a_cut_parquet_exit_1_naming_the_file(
    cut_run: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err == (
        "goldenkit: results/cand/outcomes.parquet: unreadable (cut short or corrupt): Parquet magic bytes not found "
        "in footer. Either the file is corrupted or this is not a parquet file.\n"
    )
    assert "PASS" not in captured.out  # no verdict printed from half a run


def test_the_report_of_a_cut_parquet_exits_1_naming_the_file(cut_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "cand"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "outcomes.parquet: unreadable (cut short or corrupt)" in err


def test_dataset_validate_lists_look_alikes_and_repeated_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice = '{"id": "k", "slice": "s", "split": "dev", "case": {"prompt": "a", "prompt": "b"}}'
    path = write(tmp_path, [line("refund-1"), line("Refund-1"), twice, line("refund-1 ")])
    assert main(["dataset", "validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f'goldenkit: {path}:2: id "Refund-1" looks like id "refund-1" of line 1 (differs only in case)',
        f'goldenkit: {path}:3: row "k": duplicate key "prompt" in case',
        f'goldenkit: {path}:4: id "refund-1 " looks like id "refund-1" of line 1 '
        "(differs only in surrounding whitespace)",
        "goldenkit: 3 problems found",
    ]


@pytest.mark.parametrize("option", ["timeout", "rpm", "max_retry_after"])
def test_the_library_refuses_nan_options_too(option: str, tmp_path: Path) -> None:
    from goldenkit.dataset import read_dataset
    from goldenkit.errors import ConfigError
    from goldenkit.providers._callable import CallableProvider
    from goldenkit.runner import run_eval

    ds = read_dataset(Path(__file__).resolve().parents[1] / "datasets" / "support-agent")
    with pytest.raises(ConfigError, match=option):
        run_eval(ds, CallableProvider(lambda case: "x"), ["contract"], results_dir=tmp_path, **{option: float("nan")})
    assert not any(tmp_path.iterdir())  # refused before anything was written


@pytest.mark.parametrize(
    "twin", ["refund-\uff11", "refund-1\u200b", "refund\u20101"], ids=["fullwidth", "zwsp", "dash"]
)
def test_width_invisible_characters_and_dashes_are_look_alikes(twin: str, tmp_path: Path) -> None:
    path = write(tmp_path, [line("refund-1"), line(twin)])
    with pytest.raises(DatasetError, match=r"looks like id \"refund-1\" of line 1 \(differs only in look-alike"):
        read_dataset(path)
