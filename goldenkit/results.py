"""The results store: one folder per run, written while the run is going.

::

    results/<run_id>/
        run.json           the run key, configuration, counts, validity (rewritten atomically)
        outcomes.jsonl     one outcome per line, appended as each completes
        outcomes.parquet   the final outcomes (one per row x repeat), written at the end

Crash safety: outcome lines are written with ``os.write()`` on an unbuffered file
descriptor, nothing waiting in a user-space buffer; the runner writes the outcomes
completed in one pass of its event loop together, before the loop waits for
anything again (:class:`OutcomeWriter`). A process killed with SIGKILL therefore
loses at most the calls in flight and the outcomes of the pass it was killed in,
which a resume calls again; the operating system keeps what was written. A torn
last line (a write cut by the kill) is tolerated: :func:`repair_jsonl` truncates
the file after its last complete line, and readers skip it.

Superseded outcomes: ``--retry-errors`` appends a new outcome for a row x repeat
that already has an ERROR line. The **last record per (row_id, repeat) wins**, in
``outcomes.parquet`` and in :func:`outcomes_df` alike, so the file keeps its history
while every reader sees exactly one outcome per pair.

Reading: :func:`read_run` opens a run folder (or a run id under ``results_dir``) as a
:class:`Run`; :func:`outcomes_df` concatenates the outcomes of one or many runs into
one DataFrame, read from Parquet when the run is complete and from the JSONL
otherwise; :func:`light_outcomes` reads a few flat columns of one run (the five
a comparison needs by default, optionally only some rows' outcomes), with the
string columns as categoricals. Nested columns come back as Python objects: ``tags`` a list of str,
``graders`` a dict name -> {passed, score, reason, error}, ``trajectory`` a list of
per-turn dicts, ``agent_version`` a dict.
"""

from __future__ import annotations

import asyncio
import json
import operator
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from goldenkit.errors import ResultsError
from goldenkit.schema import OUTCOME_FIELDS, OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE

_GRADE = pa.struct([("passed", pa.bool_()), ("score", pa.float64()), ("reason", pa.string()), ("error", pa.bool_())])
_AGENT = pa.struct([("git_commit", pa.string()), ("model_id", pa.string()), ("prompt_sha256", pa.string())])

# Columns whose values are free-form nested JSON (tool args of any shape): kept as
# JSON text in Parquet and decoded on read, so every run has the same schema.
_JSON_COLUMNS = ("trajectory",)

OUTCOME_SCHEMA = pa.schema(
    [
        ("schema_version", pa.int64()),
        ("run_id", pa.string()),
        ("dataset_name", pa.string()),
        ("dataset_version", pa.string()),
        ("dataset_sha256", pa.string()),
        ("agent_version", _AGENT),
        ("judge_version", pa.string()),
        ("row_id", pa.string()),
        ("slice", pa.string()),
        ("split", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("repeat", pa.int64()),
        ("verdict", pa.string()),
        ("detail", pa.string()),
        ("error_kind", pa.string()),
        ("graders", pa.map_(pa.string(), _GRADE)),
        ("response", pa.string()),
        ("trajectory", pa.string()),
        ("latency_ms", pa.float64()),
        ("ttft_ms", pa.float64()),
        ("attempts", pa.int64()),
        ("tokens_in", pa.int64()),
        ("tokens_out", pa.int64()),
        ("cost", pa.float64()),
        ("started_at", pa.string()),
    ]
)


# ---------------------------------------------------------------- writing


def write_json_atomic(path: str | Path, data: dict[str, Any]) -> None:
    """Write ``data`` as pretty JSON to ``path`` via a temporary file and ``os.replace``."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=False, ensure_ascii=False, default=str)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)


def repair_jsonl(path: str | Path) -> int:
    """Cut a torn last line (no trailing newline, or not valid JSON) off ``path``.

    Returns the number of bytes removed. Complete lines are never touched: a line
    is complete when it ends with ``\\n``; an unterminated last line that still
    parses as a JSON object is kept and terminated.
    """
    p = Path(path)
    if not p.exists():
        return 0
    size = p.stat().st_size
    if size == 0:
        return 0
    with p.open("rb+") as fh:
        # Find the last newline by reading backwards in blocks.
        pos = size
        block = 1 << 16
        last_nl = -1
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                last_nl = start + idx
                break
            pos = start
        if last_nl == size - 1:
            return 0
        fh.seek(last_nl + 1)
        tail = fh.read()
        try:
            obj = json.loads(tail)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            fh.seek(size)
            fh.write(b"\n")
            return 0
        fh.truncate(last_nl + 1)
        return size - (last_nl + 1)


_ORJSON_JSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_ORJSON_LINE = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


#: Coalesced lines waiting at most before they are written (see :class:`OutcomeWriter`).
MAX_PENDING_LINES = 256


class OutcomeWriter:
    """Append outcome records to ``outcomes.jsonl``, one line each, written straight to the OS.

    The file is opened unbuffered (``os.open`` with ``O_APPEND``) and lines go out
    with ``os.write``, so nothing sits in a user-space buffer that a SIGKILL could
    lose once the write is made. Opening repairs a torn last line first (see
    :func:`repair_jsonl`).

    ``coalesce=False``: each record is one ``os.write`` of its whole line, at once.
    ``coalesce=True`` (the runner; needs a running event loop): the lines of the
    records written during one pass of the event loop go out together in one
    ``os.write`` at the start of the next pass, before the loop waits for anything
    again. On two cores the write system call costs about as much as the rest of
    writing an outcome, and at hundreds of outcomes per second many complete in one
    pass. A kill can lose only outcomes of the current pass, which a resume calls
    again. A failed write is raised by the next :meth:`write` or by :meth:`close`.
    A pass's lines also go out as soon as :data:`MAX_PENDING_LINES` are waiting:
    an in-process agent that answers without ever awaiting completes a whole
    run in one pass, which would otherwise hold every line in memory until the end.
    """

    def __init__(self, path: str | Path, *, coalesce: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_jsonl(self.path)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _O_CLOEXEC, 0o644)
        self._coalesce = coalesce
        self._size = os.fstat(self._fd).st_size  # where the next line lands (this is the file's one writer)
        self._pending: list[bytes] = []
        self._scheduled = False
        self._error: OSError | None = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def write(self, record: dict[str, Any]) -> tuple[int, int]:
        """Append ``record`` as one UTF-8 JSON line (see the class for when it reaches the file).

        Returns ``(offset, length)`` of the line in the file (newline included), so
        a caller can read the record back later instead of keeping it in memory.
        """
        if self._fd is None:
            raise ValueError(f"{self.path}: outcome writer is closed")
        if self._error is not None:
            raise self._error
        line = orjson.dumps(record, default=str, option=_ORJSON_LINE)
        span = (self._size, len(line))
        self._size += len(line)
        if not self._coalesce:
            self._write_all(line)
            return span
        self._pending.append(line)
        if len(self._pending) >= MAX_PENDING_LINES:  # a pass that never ends (an agent that never awaits)
            self.end_pass()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._end_of_pass)
        return span

    def _end_of_pass(self) -> None:
        self._scheduled = False
        self.end_pass()

    def end_pass(self) -> None:
        """Write the pending lines now (a caller that knows the pass's outcomes are all in);
        a failure is kept and raised by the next :meth:`write` or by :meth:`close`."""
        try:
            self.flush()
        except OSError as exc:  # disk full, I/O error: the run hears of it at its next write
            self._error = exc

    def flush(self) -> None:
        """Write the pending lines now."""
        if self._pending and self._fd is not None:
            data = b"".join(self._pending)
            self._pending.clear()
            self._write_all(data)

    def _write_all(self, data: bytes) -> None:
        assert self._fd is not None
        written = os.write(self._fd, data)
        while written < len(data):  # a short write (disk full, signal): finish the lines
            written += os.write(self._fd, data[written:])

    def close(self) -> None:
        """Write what is pending and close; raises the write error, if any, after closing."""
        fd = self._fd
        if fd is None:
            return
        try:
            if self._error is None:
                self.flush()
        except OSError as exc:
            self._error = exc
        finally:
            self._fd = None
            self._pending.clear()
            os.close(fd)
        if self._error is not None:
            raise self._error

    def __enter__(self) -> OutcomeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file; a torn last line is skipped.

    A malformed line anywhere else is a :class:`ResultsError` naming ``file:line``.
    """
    p = Path(path)
    with p.open("rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    last = len(lines) - 1
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            if i == last:  # torn (unterminated) last line of a killed writer
                return
            raise ResultsError(f"{p}:{i + 1}: invalid JSON in outcome line") from None
        if not isinstance(obj, dict):
            raise ResultsError(f"{p}:{i + 1}: outcome line is not a JSON object")
        yield obj


def latest_per_pair(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the last record per (row_id, repeat), in first-seen order of the pairs."""
    by_pair: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        by_pair[(str(rec.get("row_id")), int(rec.get("repeat") or 0))] = rec
    return list(by_pair.values())


_ALL_FIELDS = operator.itemgetter(*OUTCOME_FIELDS)


def _columns(records: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    """The records' values column by column, in :data:`OUTCOME_FIELDS` order (a missing field is None)."""
    try:  # every field present (what the runner writes): one C-level pick per record, then transpose
        return list(zip(*map(_ALL_FIELDS, records), strict=True)) if records else [() for _ in OUTCOME_FIELDS]
    except KeyError:  # a record without some field (written by hand or by an older version)
        return [[rec.get(name) for rec in records] for name in OUTCOME_FIELDS]


def _json_cell(value: Any) -> str | None:
    if value is None:
        return None
    if value == []:  # most trajectories: no tool calls
        return "[]"
    return orjson.dumps(value, default=str, option=_ORJSON_JSON).decode()


def outcomes_table(records: Sequence[dict[str, Any]]) -> pa.Table:
    """Outcome records as an Arrow table with :data:`OUTCOME_SCHEMA` (JSON columns encoded)."""
    arrays = {}
    for name, values in zip(OUTCOME_FIELDS, _columns(records), strict=True):
        if name in _JSON_COLUMNS:
            values = [_json_cell(v) for v in values]
        elif name == "graders":
            values = [None if v is None else list(v.items()) for v in values]
        arrays[name] = pa.array(values, type=OUTCOME_SCHEMA.field(name).type)
    return pa.table(arrays)


#: Outcomes per Parquet row group when writing in batches (about 20 MB of records in memory at a time).
ROW_GROUP = 10_000


def write_parquet(records: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write the outcome records to ``path`` (atomically) as Parquet."""
    write_parquet_batches((records[i : i + ROW_GROUP] for i in range(0, len(records), ROW_GROUP)), path)


def write_parquet_batches(batches: Iterable[Sequence[dict[str, Any]]], path: str | Path) -> int:
    """Write outcome records arriving in batches to ``path`` as Parquet, one row group per batch.

    Only one batch is in memory at a time, so a run of millions of outcomes is
    written in flat memory. The file appears atomically (a temporary file, then
    ``os.replace``); an exception while writing leaves no file behind. Returns
    the number of records written.
    """
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    written = 0
    try:
        with pq.ParquetWriter(tmp, OUTCOME_SCHEMA, compression="zstd") as pw:
            for batch in batches:
                if batch:
                    pw.write_table(outcomes_table(batch))
                    written += len(batch)
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return written


# ---------------------------------------------------------------- reading


@dataclass
class Run:
    """A run folder: ``path``, ``run_id``, ``manifest`` (the run.json dict)."""

    path: Path
    run_id: str
    manifest: dict[str, Any]

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete")) and (self.path / OUTCOMES_PARQUET).exists()

    @property
    def validity(self) -> str | None:
        return self.manifest.get("validity")

    def records(self) -> list[dict[str, Any]]:
        """The outcome records from outcomes.jsonl, last record per pair winning."""
        jsonl = self.path / OUTCOMES_JSONL
        if not jsonl.exists():
            return []
        return latest_per_pair(iter_jsonl(jsonl))

    def table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The outcomes as an Arrow table (Parquet when complete, JSONL otherwise)."""
        cols = list(columns) if columns is not None else list(OUTCOME_FIELDS)
        unknown = [c for c in cols if c not in OUTCOME_FIELDS]
        if unknown:
            raise ResultsError(f"unknown outcome column(s): {', '.join(unknown)}")
        if self.complete:
            return _read_parquet(self.path / OUTCOMES_PARQUET, cols)
        return outcomes_table(self.records()).select(cols)

    def outcomes(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The outcomes as a DataFrame, one row per row x repeat."""
        return _to_pandas(self.table(columns))

    def __repr__(self) -> str:
        counts = self.manifest.get("counts", {})
        return f"Run({self.run_id!r}, validity={self.validity!r}, counts={counts})"


#: The name of the pointer to the newest run in a results folder.
LATEST = "latest"


def update_latest(results_dir: str | os.PathLike[str], run_id: str) -> Path:
    """Point ``results_dir/latest`` at the run ``run_id`` and return the pointer's path.

    A relative symlink (``latest -> RUN_ID``), or where links are not allowed a
    one-line file holding the run id; either is replaced atomically. A real
    folder called ``latest`` is left alone.
    """
    d = Path(results_dir)
    link = d / LATEST
    if link.is_dir() and not link.is_symlink():
        return link
    tmp = d / f".{LATEST}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(run_id, tmp, target_is_directory=True)
    except OSError:  # no symlinks here (a Windows account without the privilege, some mounts)
        tmp.write_text(run_id + "\n", encoding="utf-8")
    os.replace(tmp, link)
    return link


def _follow_latest(p: Path) -> Path:
    """The run folder a ``latest`` pointer (symlink or pointer file) names; any other path as it is."""
    if p.name != LATEST:
        return p
    if p.is_symlink():
        return p.parent / os.readlink(p)
    if p.is_file():
        return p.parent / p.read_text(encoding="utf-8").strip()
    return p


def _read_parquet(path: Path, cols: Sequence[str]) -> pa.Table:
    """The ``cols`` of an outcomes.parquet; a column added since it was written (``ttft_ms``) comes back null."""
    present = set(pq.read_schema(path).names)
    table = pq.read_table(path, columns=[c for c in cols if c in present])
    for c in cols:
        if c not in present:
            table = table.append_column(OUTCOME_SCHEMA.field(c), pa.nulls(table.num_rows, OUTCOME_SCHEMA.field(c).type))
    return table.select(list(cols))


def read_run(path_or_run_id: str | os.PathLike[str] | Run, results_dir: str | os.PathLike[str] = "results") -> Run:
    """Open a run by folder path or by run id under ``results_dir``.

    ``"latest"`` (or the path ``results/latest``) opens the newest run: every run
    points ``results_dir/latest`` at itself when it ends (:func:`update_latest`).
    """
    if isinstance(path_or_run_id, Run):
        return path_or_run_id
    p = _follow_latest(Path(path_or_run_id))
    if not (p / RUN_FILE).exists():
        alt = _follow_latest(Path(results_dir) / str(path_or_run_id))
        if (alt / RUN_FILE).exists():
            p = alt
        else:
            raise ResultsError(f"{p}: no run found (no {RUN_FILE} there or under {results_dir}/)")
    try:
        manifest = json.loads((p / RUN_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ResultsError(f"{p / RUN_FILE}: invalid JSON: {exc}") from None
    if not isinstance(manifest, dict) or "run_id" not in manifest:
        raise ResultsError(f"{p / RUN_FILE}: not a run manifest (no run_id)")
    return Run(path=p, run_id=str(manifest["run_id"]), manifest=manifest)


def outcomes_df(
    *runs: str | os.PathLike[str] | Run,
    columns: Sequence[str] | None = None,
    results_dir: str | os.PathLike[str] = "results",
    categorical: bool = False,
) -> pd.DataFrame:
    """The outcomes of one or many runs as one DataFrame.

    Each run is a :class:`Run`, a run folder or a run id under ``results_dir``.
    ``columns`` limits what is read (Parquet reads only those columns).
    ``categorical=True`` returns ``slice``, ``split`` and ``verdict`` as pandas
    categoricals (smaller and faster to group on).
    """
    if not runs:
        raise ResultsError("outcomes_df: no run given")
    tables = [read_run(r, results_dir).table(columns) for r in runs]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    df = _to_pandas(table)
    if categorical:
        for c in ("slice", "split", "verdict"):
            if c in df.columns:
                df[c] = df[c].astype("category")
    return df


#: The columns a comparison and the gate read of a run (see :func:`light_outcomes`).
LIGHT_COLUMNS = ("row_id", "slice", "repeat", "verdict", "error_kind")
_CATEGORICAL = ("slice", "split", "verdict", "error_kind")


def light_outcomes(
    run: Run, columns: Sequence[str] = LIGHT_COLUMNS, row_ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """Some columns of a run's outcomes (by default the five a comparison needs), one row per row x repeat.

    From Parquet when the run is complete (only these columns are read), from
    the JSONL otherwise; ``row_ids`` keeps only those rows' outcomes (``row_id``
    must be among the columns). ``slice``, ``split``, ``verdict`` and
    ``error_kind`` come back as pandas categoricals, ``repeat`` as int64 (a
    missing repeat is 0), ``graders`` as dicts.
    """
    cols = list(columns)
    unknown = [c for c in cols if c not in OUTCOME_FIELDS]
    if unknown:
        raise ResultsError(f"unknown outcome column(s): {', '.join(unknown)}")
    if run.complete:
        wanted = [c for c in cols if c in _CATEGORICAL]
        table = pq.read_table(run.path / OUTCOMES_PARQUET, columns=cols, read_dictionary=wanted)
    else:
        table = outcomes_table(run.records()).select(cols)
    if row_ids is not None:
        import pyarrow.compute as pc

        table = table.filter(pc.is_in(table.column("row_id"), value_set=pa.array(list(row_ids), pa.string())))
    df = table.to_pandas(maps_as_pydicts="strict")
    for c in cols:
        if c in _CATEGORICAL and not isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype("category")
    if "repeat" in df.columns:
        df["repeat"] = df["repeat"].fillna(0).astype("int64")
    return df


_INT_COLS = {"schema_version", "repeat", "attempts", "tokens_in", "tokens_out"}


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    df = table.to_pandas(maps_as_pydicts="strict", types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for c in _JSON_COLUMNS:
        if c in df.columns:
            df[c] = [None if v is None else json.loads(v) for v in df[c].tolist()]
    for c in ("tags",):
        if c in df.columns:
            df[c] = [[] if v is None else list(v) for v in df[c].tolist()]
    if "repeat" in df.columns and not df["repeat"].isna().any():
        df["repeat"] = df["repeat"].astype("int64")
    return df


__all__ = [
    "LATEST",
    "LIGHT_COLUMNS",
    "OUTCOME_SCHEMA",
    "OutcomeWriter",
    "Run",
    "iter_jsonl",
    "latest_per_pair",
    "light_outcomes",
    "outcomes_df",
    "outcomes_table",
    "read_run",
    "repair_jsonl",
    "update_latest",
    "write_json_atomic",
    "write_parquet",
    "write_parquet_batches",
]
