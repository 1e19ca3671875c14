"""The results store: crash-tolerant JSONL, last-record-wins, Parquet and JSONL read alike."""

from __future__ import annotations

import asyncio
import json
import os

import pandas as pd
import pytest

from goldenkit.errors import ResultsError
from goldenkit.results import (
    OutcomeWriter,
    iter_jsonl,
    latest_per_pair,
    light_outcomes,
    outcomes_df,
    outcomes_table,
    read_run,
    repair_jsonl,
    write_json_atomic,
    write_parquet,
)
from goldenkit.schema import OUTCOME_FIELDS


def outcome(row_id: str, repeat: int = 0, verdict: str = "PASS", **kw: object) -> dict:
    rec = {f: None for f in OUTCOME_FIELDS}
    rec.update(
        schema_version=1,
        run_id="r",
        dataset_name="d",
        dataset_version="1",
        dataset_sha256="0" * 64,
        agent_version={"git_commit": None, "model_id": "m", "prompt_sha256": "p"},
        row_id=row_id,
        slice="s",
        split="dev",
        tags=["t1"],
        repeat=repeat,
        verdict=verdict,
        detail="",
        graders={"contract": {"passed": verdict == "PASS", "score": 1.0, "reason": "", "error": False}},
        response="hi",
        trajectory=[{"text": "hi", "tool_calls": [{"name": "f", "args": {"x": [1, {"y": None}]}}]}],
        latency_ms=1.5,
        attempts=1,
        tokens_in=3,
        started_at="2026-01-01T00:00:00Z",
    )
    rec.update(kw)
    return rec


def test_repair_cuts_a_torn_last_line_and_keeps_complete_ones(tmp_path):
    p = tmp_path / "o.jsonl"
    good = json.dumps(outcome("a")) + "\n" + json.dumps(outcome("b")) + "\n"
    p.write_text(good + '{"row_id": "c", "verd', encoding="utf-8")
    assert repair_jsonl(p) == len('{"row_id": "c", "verd')
    assert p.read_text(encoding="utf-8") == good
    assert repair_jsonl(p) == 0  # idempotent
    # an unterminated but complete object is kept and terminated
    p.write_text(good + json.dumps(outcome("c")), encoding="utf-8")
    assert repair_jsonl(p) == 0
    assert [r["row_id"] for r in iter_jsonl(p)] == ["a", "b", "c"]
    assert p.read_text(encoding="utf-8").endswith("\n")


def test_reader_skips_a_torn_last_line_but_names_a_bad_middle_line(tmp_path):
    p = tmp_path / "o.jsonl"
    p.write_text(json.dumps(outcome("a")) + "\n{torn", encoding="utf-8")
    assert [r["row_id"] for r in iter_jsonl(p)] == ["a"]
    p.write_text("{bad\n" + json.dumps(outcome("a")) + "\n", encoding="utf-8")
    with pytest.raises(ResultsError, match=r"o\.jsonl:1: invalid JSON"):
        list(iter_jsonl(p))


def test_every_outcome_reader_refuses_nan_as_a_bad_line(tmp_path):
    from goldenkit.runner._folder import scan_outcomes

    p = tmp_path / "o.jsonl"
    nan_line = '{"row_id": "b", "repeat": 0, "score": NaN}'
    p.write_text(json.dumps(outcome("a")) + "\n" + nan_line + "\n" + json.dumps(outcome("c")) + "\n")
    for read in (lambda: list(iter_jsonl(p)), lambda: list(scan_outcomes(p))):
        with pytest.raises(ResultsError, match=r"o\.jsonl:2: invalid JSON in outcome line$"):
            read()
    p.write_text(json.dumps(outcome("a")) + "\n" + nan_line)  # unterminated last line: torn, skipped and cut
    assert [r["row_id"] for r in iter_jsonl(p)] == ["a"]
    assert [r["row_id"] for r, _, _ in scan_outcomes(p)] == ["a"]
    assert repair_jsonl(p) == len(nan_line)


def test_writer_appends_after_repairing(tmp_path):
    p = tmp_path / "o.jsonl"
    p.write_text(json.dumps(outcome("a")) + "\n" + '{"torn', encoding="utf-8")
    with OutcomeWriter(p) as w:
        w.write(outcome("b"))
        # flushed: visible to another reader before close
        assert [r["row_id"] for r in iter_jsonl(p)] == ["a", "b"]
    assert [r["row_id"] for r in iter_jsonl(p)] == ["a", "b"]


def test_coalescing_writer_writes_one_loop_pass_at_a_time(tmp_path):
    p = tmp_path / "o.jsonl"

    async def main() -> None:
        w = OutcomeWriter(p, coalesce=True)
        w.write(outcome("a"))
        w.write(outcome("b"))
        assert p.read_bytes() == b""  # still this pass
        await asyncio.sleep(0)  # the next pass writes both
        assert [r["row_id"] for r in iter_jsonl(p)] == ["a", "b"]
        w.write(outcome("c"))
        w.close()  # what is pending goes out on close
        assert [r["row_id"] for r in iter_jsonl(p)] == ["a", "b", "c"]
        assert p.read_bytes().count(b"\n") == 3

    asyncio.run(main())


def test_coalescing_writer_raises_a_failed_write_at_the_next_write_and_at_close(tmp_path):
    async def main() -> None:
        w = OutcomeWriter(tmp_path / "o.jsonl", coalesce=True)
        os.close(w._fd)  # the descriptor goes bad underneath the writer (as a vanished disk would)
        w._fd = os.open(os.devnull, os.O_RDONLY)  # writes now fail with EBADF
        w.write(outcome("a"))
        await asyncio.sleep(0)  # the pass's write fails; the error is kept
        with pytest.raises(OSError):
            w.write(outcome("b"))
        with pytest.raises(OSError):
            w.close()
        assert w.closed

    asyncio.run(main())


def test_last_record_per_pair_wins():
    recs = [outcome("a", 0, "ERROR"), outcome("b", 0), outcome("a", 1), outcome("a", 0, "PASS")]
    out = latest_per_pair(recs)
    assert [(r["row_id"], r["repeat"], r["verdict"]) for r in out] == [
        ("a", 0, "PASS"),
        ("b", 0, "PASS"),
        ("a", 1, "PASS"),
    ]


def _run_folder(tmp_path, name, records, complete):
    d = tmp_path / name
    d.mkdir()
    write_json_atomic(d / "run.json", {"run_id": name, "complete": complete, "counts": {}})
    with OutcomeWriter(d / "outcomes.jsonl") as w:
        for r in records:
            w.write({**r, "run_id": name})
    if complete:
        write_parquet(latest_per_pair({**r, "run_id": name} for r in records), d / "outcomes.parquet")
    return d


def test_parquet_and_jsonl_read_the_same(tmp_path):
    recs = [
        outcome("a", 0, "ERROR", error_kind="transient", graders={}, trajectory=[], response=None, tokens_in=None),
        outcome("a", 0, "PASS"),
        outcome("b", 0, "FAIL", tags=[], cost=0.25),
        outcome("c", 1, "PASS", trajectory=[{"text": "x", "tool_calls": [{"name": "g", "args": {"n": 1}}]}]),
    ]
    done = _run_folder(tmp_path, "done", recs, complete=True)
    partial = _run_folder(tmp_path, "partial", recs, complete=False)
    a = outcomes_df(done).drop(columns="run_id")
    b = outcomes_df(partial).drop(columns="run_id")
    assert read_run(done).complete and not read_run(partial).complete
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == [c for c in OUTCOME_FIELDS if c != "run_id"]
    assert len(a) == 3  # the superseded ERROR of ("a", 0) is gone
    row = a.set_index("row_id").loc["a"]
    assert row["verdict"] == "PASS"
    assert row["graders"]["contract"]["passed"] is True
    assert row["trajectory"][0]["tool_calls"][0]["args"] == {"x": [1, {"y": None}]}
    assert row["agent_version"]["model_id"] == "m"
    assert a.set_index("row_id").loc["b", "tags"] == []
    assert a["repeat"].dtype == "int64"


def test_outcomes_table_reads_a_record_missing_a_field_as_null():
    full = outcome("a", cost=0.5)
    short = {k: v for k, v in outcome("b").items() if k not in ("cost", "trajectory")}
    table = outcomes_table([full, short])
    assert table.column("cost").to_pylist() == [0.5, None]
    assert table.column("trajectory").to_pylist() == [json.dumps(full["trajectory"], separators=(",", ":")), None]
    assert table.column("row_id").to_pylist() == ["a", "b"]
    assert outcomes_table([]).num_rows == 0


def test_outcomes_df_many_runs_columns_and_categoricals(tmp_path):
    r1 = _run_folder(tmp_path, "r1", [outcome("a"), outcome("b", verdict="FAIL")], complete=True)
    _run_folder(tmp_path, "r2", [outcome("a", verdict="FAIL")], complete=False)
    df = outcomes_df(r1, "r2", results_dir=tmp_path, columns=["run_id", "row_id", "verdict"], categorical=True)
    assert list(df.columns) == ["run_id", "row_id", "verdict"]
    assert df.values.tolist() == [["r1", "a", "PASS"], ["r1", "b", "FAIL"], ["r2", "a", "FAIL"]]
    assert isinstance(df["verdict"].dtype, pd.CategoricalDtype)
    with pytest.raises(ResultsError, match="unknown outcome column"):
        outcomes_df(r1, columns=["nope"])


def test_light_columns_read_an_older_parquet_like_the_full_reader(tmp_path):
    """A Parquet file written before a column existed (``ttft_ms``) reads it as nulls, light or full."""
    import pyarrow.parquet as pq

    done = _run_folder(tmp_path, "done", [outcome("a"), outcome("b", verdict="FAIL")], complete=True)
    path = done / "outcomes.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["ttft_ms"]), path)
    light = light_outcomes(read_run(done), columns=("row_id", "verdict", "ttft_ms"))
    assert light["row_id"].tolist() == ["a", "b"] and light["ttft_ms"].isna().all()
    assert isinstance(light["verdict"].dtype, pd.CategoricalDtype)
    assert outcomes_df(done, columns=["ttft_ms"])["ttft_ms"].isna().all()
    with pytest.raises(ResultsError, match="unknown outcome column"):
        light_outcomes(read_run(done), columns=("nope",))


def test_read_run_errors_name_the_place(tmp_path):
    with pytest.raises(ResultsError, match="no run found"):
        read_run("missing", results_dir=tmp_path)
    d = tmp_path / "bad"
    d.mkdir()
    (d / "run.json").write_text("{", encoding="utf-8")
    with pytest.raises(ResultsError, match=r"run\.json: invalid JSON"):
        read_run(d)


def test_parquet_schema_has_every_outcome_field_in_order():
    from goldenkit.results import OUTCOME_SCHEMA
    from goldenkit.schema import OUTCOME_FIELDS

    assert tuple(OUTCOME_SCHEMA.names) == OUTCOME_FIELDS


@pytest.mark.parametrize("cut", ["half", "footer", "empty", "pages"])
def test_a_cut_or_corrupt_parquet_is_one_error_naming_the_file(tmp_path, cut):
    done = _run_folder(
        tmp_path, "done", [outcome(f"r{i}", verdict="PASS" if i % 3 else "FAIL") for i in range(50)], True
    )
    path = done / "outcomes.parquet"
    data = path.read_bytes()
    if cut == "half":
        path.write_bytes(data[: len(data) // 2])
    elif cut == "footer":
        path.write_bytes(data[:-3])
    elif cut == "empty":
        path.write_bytes(b"")
    else:  # the footer intact, every byte before it changed
        import pyarrow.parquet as pq

        footer = pq.read_metadata(path).serialized_size + 8
        path.write_bytes(b"PAR1" + bytes(b ^ 0x5A for b in data[4:-footer]) + data[-footer:])
    run = read_run(done)
    for read in (lambda: run.table(), lambda: outcomes_df(done), lambda: light_outcomes(run), run.outcomes):
        with pytest.raises(ResultsError) as info:
            read()
        assert str(info.value).startswith(f"{path}: unreadable (cut short or corrupt): ")
        assert "\n" not in str(info.value)


def test_a_torn_last_outcome_line_is_still_skipped_by_every_reader(tmp_path):
    partial = _run_folder(tmp_path, "partial", [outcome("a"), outcome("b", verdict="FAIL")], complete=False)
    with (partial / "outcomes.jsonl").open("ab") as fh:
        fh.write(b'{"row_id": "c", "repeat": 0, "verd')  # a writer killed mid-line
    assert outcomes_df(partial)["row_id"].tolist() == ["a", "b"]
    assert light_outcomes(read_run(partial))["verdict"].tolist() == ["PASS", "FAIL"]


@pytest.mark.parametrize(
    ("patch", "why"),
    [
        ({"repeat": "second"}, "invalid literal for int()"),
        ({"verdict": 5}, "Expected bytes, got a 'int' object"),
        ({"graders": ["contract"]}, "has no attribute 'items'"),
        ({"latency_ms": "fast"}, "Could not convert 'fast'"),
        ({"tokens_in": 10**30}, "too large"),
    ],
)
def test_an_outcome_line_that_is_no_outcome_is_named_by_line_and_row(tmp_path, patch, why):
    records = [outcome(f"r{i}") for i in range(5)]
    partial = _run_folder(tmp_path, "partial", records, complete=False)
    path = partial / "outcomes.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = json.dumps({**json.loads(lines[3]), **patch})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for read in (lambda: outcomes_df(partial), lambda: light_outcomes(read_run(partial))):
        with pytest.raises(ResultsError) as info:
            read()
        message = str(info.value)
        assert message.startswith(f'{path}:4: the outcome of row "r3" does not fit the outcome schema: ')
        assert why in message and "\n" not in message


def test_a_corrupt_middle_outcome_line_names_its_line(tmp_path):
    partial = _run_folder(tmp_path, "partial", [outcome("a"), outcome("b"), outcome("c")], complete=False)
    path = partial / "outcomes.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1][:40] + b"\x00\xff" + lines[1][60:]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ResultsError, match=r"outcomes\.jsonl:2: invalid JSON in outcome line"):
        outcomes_df(partial)
