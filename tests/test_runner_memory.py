"""Outcomes on disk, not in memory: the writer's spans, the index, Parquet in row groups, resume order."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_shards import answer, dataset

from goldenkit.errors import ResultsError
from goldenkit.providers._callable import CallableProvider
from goldenkit.results import OutcomeWriter, outcomes_df, outcomes_table, write_parquet, write_parquet_batches
from goldenkit.runner import run_eval
from goldenkit.runner._folder import scan_outcomes
from goldenkit.runner._outcome_index import OutcomeIndex

QUIET = {"progress": False}


def test_the_writer_returns_where_each_line_is(tmp_path: Path) -> None:
    p = tmp_path / "o.jsonl"
    p.write_bytes(b'{"row_id": "old", "repeat": 0}\n')  # an earlier invocation's line
    with OutcomeWriter(p) as w:
        spans = [w.write({"row_id": f"r{i}", "repeat": i, "text": "é" * i}) for i in range(3)]
    data = p.read_bytes()
    for i, (offset, length) in enumerate(spans):
        assert json.loads(data[offset : offset + length]) == {"row_id": f"r{i}", "repeat": i, "text": "é" * i}
    assert spans[0][0] == len(b'{"row_id": "old", "repeat": 0}\n')
    assert [(o, n) for _, o, n in scan_outcomes(p)][1:] == spans


def test_the_index_keeps_the_last_line_per_pair_and_counts(tmp_path: Path) -> None:
    p = tmp_path / "o.jsonl"
    recs = [
        {"row_id": "a", "repeat": 0, "verdict": "ERROR", "detail": "boom", "graders": {}},
        {"row_id": "b", "repeat": 1, "verdict": "PASS", "graders": {"judge": {"passed": True, "error": True}}},
        {"row_id": "a", "repeat": 0, "verdict": "FAIL", "graders": {}},  # supersedes the ERROR
        {"row_id": "zz", "repeat": 0, "verdict": "PASS"},  # not a row of this run: ignored
    ]
    index = OutcomeIndex(["a", "b"], 2)
    with OutcomeWriter(p) as w:
        for rec in recs:
            index.note(rec, *w.write(rec))
    assert index.counts() == {
        "PASS": 1,
        "FAIL": 1,
        "ERROR": 0,
        "SKIPPED": 0,
        "total": 2,
        "expected": 4,
        "grader_errors": 1,
        "candidate_errors": 0,  # the superseded ERROR is not counted
    }
    assert [index.pair(int(i)) for i in index.pending(False)] == [("a", 1), ("b", 0)]
    batches = list(index.batches(p, 1))
    assert [[(r["row_id"], r["repeat"], r["verdict"]) for r in b] for b in batches] == [
        [("a", 0, "FAIL")],
        [("b", 1, "PASS")],
    ]
    p.write_bytes(b"{}\n" + p.read_bytes())  # the file changed under the run: refused, never a wrong outcome
    with pytest.raises(ResultsError, match="row 'a' repeat 0 is no longer at byte"):
        list(index.batches(p, 10))


def _records(n: int) -> list[dict[str, object]]:
    return [
        {
            "row_id": f"r{i}",
            "repeat": 0,
            "verdict": "PASS",
            "graders": {"g": {"passed": True}},
            "trajectory": [{"tool": "t", "args": {"x": i}}],
            "tags": ["a"],
        }
        for i in range(n)
    ]


def test_parquet_written_in_row_groups_reads_back_whole(tmp_path: Path) -> None:
    recs = _records(25)
    n = write_parquet_batches((recs[i : i + 10] for i in range(0, 25, 10)), tmp_path / "o.parquet", row_group=10)
    groups = pq.ParquetFile(tmp_path / "o.parquet").metadata
    assert n == 25 and [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [10, 10, 5]
    assert pq.read_table(tmp_path / "o.parquet").equals(outcomes_table(recs))
    # batches smaller than a row group are gathered: 25 records in batches of 4, row groups of 10
    write_parquet_batches((recs[i : i + 4] for i in range(0, 25, 4)), tmp_path / "g.parquet", row_group=10)
    meta = pq.ParquetFile(tmp_path / "g.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [12, 12, 1]
    assert pq.read_table(tmp_path / "g.parquet").equals(outcomes_table(recs))
    write_parquet([], tmp_path / "empty.parquet")
    assert pq.read_table(tmp_path / "empty.parquet").num_rows == 0


def test_a_failed_parquet_write_leaves_no_file(tmp_path: Path) -> None:
    def batches():  # type: ignore[no-untyped-def]
        yield _records(3)
        raise ResultsError("the outcomes file changed")

    with pytest.raises(ResultsError):
        write_parquet_batches(batches(), tmp_path / "o.parquet")
    assert list(tmp_path.iterdir()) == []


def test_a_resumed_run_writes_parquet_in_row_order_with_every_outcome_once(tmp_path: Path) -> None:
    ds, res = dataset(tmp_path, rows=30), tmp_path / "results"
    first = run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id="r", results_dir=res, **QUIET)
    jsonl = first.path / "outcomes.jsonl"
    lines = jsonl.read_text().splitlines(keepends=True)
    jsonl.write_text("".join(lines[::2]))  # half the outcomes lost (every other line)
    again = run_eval(ds, CallableProvider(fn=answer), repeats=2, run_id="r", results_dir=res, **QUIET)
    assert again.calls == 30 and again.resumed == 30 and again.counts == first.counts
    df = outcomes_df(again.path)
    expected = [(f"r{i:03d}", rep) for i in range(30) for rep in range(2)]
    assert list(zip(df["row_id"], df["repeat"], strict=True)) == expected
