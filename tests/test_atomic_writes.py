"""Files replaced whole or not at all: a full disk halfway through a write leaves the old files whole.

A disk that fills up is simulated where the bytes are written: the write puts half of its bytes in
the file, then raises ``OSError(ENOSPC)``, for Python's writes (``Path.write_text``/``write_bytes``)
and pyarrow's (``pq.write_table``). Every multi-file write goldenkit makes in place of older files
(a baseline's rows, header and history; a run.json; an outcomes.parquet; a new dataset version) is
checked to leave what was there untouched, and no temporary file behind.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from run_factory import manifest, outcomes, write_run

from goldenkit._files import replaced_together, write_atomic
from goldenkit.baselines import read_baseline
from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.dataset._versions import write_version
from goldenkit.errors import InputError
from goldenkit.results import write_json_atomic, write_parquet

ROWS_A = [(f"r{i}", "s", ["PASS", "PASS", "PASS"] if i % 3 else ["FAIL"] * 3) for i in range(12)]
ROWS_B = [(f"r{i}", "s", ["PASS", "PASS", "PASS"]) for i in range(12)]


def enospc() -> OSError:
    return OSError(errno.ENOSPC, "No space left on device")


def full_disk(monkeypatch: pytest.MonkeyPatch, hit: Callable[[Path], bool]) -> list[Path]:
    """Make every write to a path ``hit`` accepts write half of its bytes, then fail with ENOSPC."""
    struck: list[Path] = []
    real_text, real_bytes, real_table = Path.write_text, Path.write_bytes, pq.write_table

    def write_bytes(self: Path, data: Any) -> int:
        if hit(self):
            struck.append(self)
            real_bytes(self, bytes(data)[: len(data) // 2])
            raise enospc()
        return real_bytes(self, data)

    def write_text(self: Path, data: str, encoding: str | None = None, errors: str | None = None, **kw: Any) -> int:
        if hit(self):
            return write_bytes(self, data.encode(encoding or "utf-8"))
        return real_text(self, data, encoding=encoding, errors=errors, **kw)

    def write_table(table: Any, where: Any, *args: Any, **kw: Any) -> None:
        if hit(Path(where)):
            real_table(table, where, *args, **kw)
            size = Path(where).stat().st_size
            with open(where, "r+b") as fh:
                fh.truncate(size // 2)
            struck.append(Path(where))
            raise enospc()
        real_table(table, where, *args, **kw)

    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    monkeypatch.setattr(Path, "write_text", write_text)
    monkeypatch.setattr(pq, "write_table", write_table)
    return struck


def folder_bytes(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("victim", ["main.parquet", "main.json", "history.jsonl"])
def test_a_full_disk_while_a_baseline_is_replaced_leaves_the_old_snapshot_whole(tmp_path, monkeypatch, capsys, victim):
    monkeypatch.chdir(tmp_path)
    write_run(tmp_path / "results", manifest("a"), outcomes(ROWS_A, run_id="a"))
    write_run(tmp_path / "results", manifest("b"), outcomes(ROWS_B, run_id="b"))
    assert main(["baseline", "save", "a", "--name", "main"]) == 0
    before = folder_bytes(tmp_path / "baselines")
    old = read_baseline("main")
    capsys.readouterr()

    with monkeypatch.context() as m:
        struck = full_disk(m, lambda p: victim in p.name)
        code = main(["baseline", "save", "b", "--name", "main", "--force"])
    err = capsys.readouterr().err
    assert struck, "the simulated full disk was never hit"
    assert code == 1 and "Traceback" not in err
    assert "No space left on device; nothing was changed" in err.strip().splitlines()[-1]
    assert folder_bytes(tmp_path / "baselines") == before  # no file changed, none left behind
    again = read_baseline("main")
    assert again.run_id == "a" and again.rows.equals(old.rows) and again.info == old.info

    assert main(["baseline", "save", "b", "--name", "main", "--force"]) == 0  # with room, it is replaced whole
    new = read_baseline("main")
    assert new.run_id == "b" and set(new.rows["verdict"]) == {"PASS"}
    lines = (tmp_path / "baselines" / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["run_id"] for line in lines] == ["a", "b"]


def test_a_full_disk_while_run_json_is_rewritten_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "run.json"
    write_json_atomic(path, {"run_id": "r", "counts": {"total": 1}})
    before = path.read_bytes()
    with monkeypatch.context() as m:
        struck = full_disk(m, lambda p: p.name.endswith(".tmp"))
        with pytest.raises(OSError, match="No space left"):
            write_json_atomic(path, {"run_id": "r", "counts": {"total": 2}, "note": "x" * 10000})
    assert struck and path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_failure_while_outcomes_parquet_is_written_keeps_the_old_one(tmp_path):
    path = tmp_path / "outcomes.parquet"
    frame = outcomes(ROWS_A, run_id="r").astype(object)
    recs = frame.where(frame.notna(), None).to_dict(orient="records")  # a missing count is null, as a run writes it
    write_parquet(recs, path)
    before = path.read_bytes()

    def failing():
        yield recs[:5]
        raise enospc()

    from goldenkit.results import write_parquet_batches

    with pytest.raises(OSError, match="No space left"):
        write_parquet_batches(failing(), path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["outcomes.parquet"]


def test_a_full_disk_while_a_dataset_version_is_written_leaves_no_folder(tmp_path, monkeypatch):
    src = tmp_path / "ds"
    src.mkdir()
    log = [{"version": "1", "date": "2026-01-01", "why": "t"}]
    manifest_1 = {"name": "t", "version": "1", "changelog": log}
    (src / "dataset.json").write_text(json.dumps(manifest_1))
    row = {"id": "a", "slice": "s", "split": "dev", "case": {"prompt": "p"}}
    (src / "dataset.jsonl").write_text(json.dumps(row) + "\n")
    manifest_2 = {**manifest_1, "version": "2", "changelog": [*log, {"version": "2", "date": "2026-01-02", "why": "u"}]}
    data = (json.dumps(row) + "\n" + json.dumps({**row, "id": "b"}) + "\n").encode()
    with monkeypatch.context() as m:
        struck = full_disk(m, lambda p: p.name == "dataset.json" and p.parent != src)
        with pytest.raises(InputError, match=r"cannot write the new dataset .*ds-2: No space left on device"):
            write_version(src, tmp_path / "ds-2", data, manifest_2)
    assert struck and sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert len(write_version(src, tmp_path / "ds-2", data, manifest_2)) == 2
    assert read_dataset(tmp_path / "ds-2").version == "2"


def test_every_target_is_replaced_or_none_is(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_atomic(a, "old a")
    write_atomic(b, b"old b")
    with pytest.raises(RuntimeError), replaced_together(a, b) as (ta, tb):
        ta.write_text("new a")
        tb.write_text("new b")
        raise RuntimeError("interrupted before the renames")
    assert (a.read_text(), b.read_text()) == ("old a", "old b") and sorted(p.name for p in tmp_path.iterdir()) == [
        "a",
        "b",
    ]
    with replaced_together(a, b) as (ta, tb):
        ta.write_text("new a")
        tb.write_text("new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
