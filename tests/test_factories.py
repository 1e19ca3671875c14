"""The test factories (tests/factories.py) write what the library reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from factories import numbered_rows, row

from goldenkit.compare import compare_runs
from goldenkit.dataset import read_dataset
from goldenkit.results import outcomes_df, read_run


def test_a_written_dataset_reads_back_with_its_rows_slices_and_config(new_dataset: Callable[..., Path]) -> None:
    rows = numbered_rows(5, lambda i: {"prompt": f"q{i}"}, slice=lambda i: f"s{i % 2}")
    ds = read_dataset(new_dataset(rows, name="tiny", version="2.0.0", toml="[run]\nrepeats = 2\n"))
    assert (ds.name, ds.version, len(ds)) == ("tiny", "2.0.0", 5)
    assert ds.column("slice") == ["s0", "s1", "s0", "s1", "s0"]
    assert (ds.path / "goldenkit.toml").read_text() == "[run]\nrepeats = 2\n"


def test_a_windows_dataset_file_ends_its_lines_with_crlf(new_dataset: Callable[..., Path]) -> None:
    d = new_dataset([row("a", {"prompt": "q"}), row("b", {"prompt": "q"})], newline="\r\n")
    assert (d / "dataset.jsonl").read_bytes().count(b"\r\n") == 2
    assert read_dataset(d).ids == ["a", "b"]


def test_a_graded_run_holds_the_verdicts_asked_for_per_repeat(new_run: Callable[..., Path]) -> None:
    run = new_run({"a": ["PASS", "FAIL"], "b": ["ERROR", "PASS"]}, run_id="mixed", max_error_rate=1.0)
    df = outcomes_df(run).sort_values(["row_id", "repeat"])
    assert list(df["verdict"]) == ["PASS", "FAIL", "ERROR", "PASS"]
    assert read_run(run).manifest["repeats"] == 2


def test_two_graded_runs_of_the_same_rows_compare(new_run: Callable[..., Path]) -> None:
    base = new_run({f"r{i}": "PASS" for i in range(4)}, run_id="base")
    cand = new_run({f"r{i}": "PASS" if i else "FAIL" for i in range(4)}, run_id="cand")
    flips = compare_runs(read_run(base), read_run(cand)).flip_rows
    assert list(flips["row_id"]) == ["r0"]


def test_a_row_with_fewer_verdicts_than_the_others_is_refused(tmp_path: Path) -> None:
    from factories import graded_run

    with pytest.raises(ValueError, match="one per repeat"):
        graded_run(tmp_path, {"a": ["PASS", "PASS"], "b": ["PASS"]})
