"""A run folder opened for reading: :class:`Run`, :func:`read_run`, :func:`outcomes_df`."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import ResultsError
from goldenkit.results._jsonl import iter_jsonl, latest_per_pair, scan_jsonl
from goldenkit.results._latest import follow_latest
from goldenkit.results._manifest import read_manifest
from goldenkit.results._parquet import JSON_COLUMNS, outcomes_table, read_parquet
from goldenkit.schema import OUTCOME_FIELDS, OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE, RunRecord

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Run:
    """A run folder: ``path``, ``run_id``, ``manifest`` (its run.json, :class:`goldenkit.schema.RunRecord`)."""

    path: Path
    run_id: str
    manifest: RunRecord

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
        try:
            return latest_per_pair(iter_jsonl(jsonl))
        except (TypeError, ValueError):  # a repeat that is not a number
            raise ResultsError(_misfit_line(jsonl)) from None

    def table(self, columns: Sequence[str] | None = None, dictionary: Sequence[str] = ()) -> pa.Table:
        """The outcomes as an Arrow table (Parquet when complete, JSONL otherwise); the ``dictionary``
        columns of a Parquet file are read dictionary-encoded. A file cut short or corrupt, or an outcome
        line that is not an outcome, is a :class:`ResultsError` naming the file (and the line)."""
        cols = list(columns) if columns is not None else list(OUTCOME_FIELDS)
        unknown = [c for c in cols if c not in OUTCOME_FIELDS]
        if unknown:
            raise ResultsError(f"unknown outcome column(s): {', '.join(unknown)}")
        if self.complete:
            return read_parquet(self.path / OUTCOMES_PARQUET, cols, dictionary)
        records = self.records()
        try:
            table = outcomes_table(records)
        except _MISFITS:
            raise ResultsError(_misfit_line(self.path / OUTCOMES_JSONL)) from None
        return table.select(cols)

    def outcomes(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The outcomes as a DataFrame, one row per row x repeat."""
        return _to_pandas(self.table(columns))

    def __repr__(self) -> str:
        from goldenkit._reprs import run_repr

        return run_repr(self)

    def _repr_html_(self) -> str:
        from goldenkit._reprs import run_html

        return run_html(self)


# What a record whose values do not fit the outcome schema raises while it becomes a table.
_MISFITS = (pa.ArrowException, TypeError, ValueError, AttributeError, OverflowError)


def _misfit_line(path: Path, chunk: int = 10_000) -> str:
    """The first line of the outcomes.jsonl ``path`` whose record does not fit the outcome schema, as a problem.

    Called once reading the file as a table failed: chunks of ``chunk`` records
    are tried, then the records of the failing chunk one by one, read by the one
    reader (:func:`~goldenkit.results._jsonl.scan_jsonl`: a line that is not JSON was
    already refused, or is the torn last line it skips).
    """
    numbered = [(line.number, line.record) for line in scan_jsonl(path)]
    for start in range(0, len(numbered), chunk):
        part = numbered[start : start + chunk]
        if _misfit([rec for _, rec in part]) is None:
            continue
        for number, rec in part:
            why = _misfit([rec])
            if why is not None:
                row = json.dumps(rec.get("row_id"))
                return f"{path}:{number}: the outcome of row {row} does not fit the outcome schema: {why}"
    return f"{path}: the outcomes do not fit the outcome schema"


def _misfit(records: list[dict[str, Any]]) -> str | None:
    """Why ``records`` cannot become an outcomes table (None when they can)."""
    try:
        for rec in records:
            int(rec.get("repeat") or 0)
        outcomes_table(records)
    except _MISFITS as exc:
        return one_line(exc, 160)
    return None


def read_run(path_or_run_id: str | os.PathLike[str] | Run, results_dir: str | os.PathLike[str] = "results") -> Run:
    """Open a run by folder path or by run id under ``results_dir``.

    ``"latest"`` (or the path ``results/latest``) opens the newest run: every run
    points ``results_dir/latest`` at itself when it ends (:func:`update_latest`).
    """
    if isinstance(path_or_run_id, Run):
        return path_or_run_id
    p = follow_latest(Path(path_or_run_id))
    if not (p / RUN_FILE).exists():
        alt = follow_latest(Path(results_dir) / str(path_or_run_id))
        if (alt / RUN_FILE).exists():
            p = alt
        else:
            raise ResultsError(f"{p}: no run found (no {RUN_FILE} there or under {results_dir}/)")
    manifest = read_manifest(p)
    return Run(path=p, run_id=str(manifest["run_id"]), manifest=manifest)


def outcomes_df(
    *runs: str | os.PathLike[str] | Run | Sequence[str | os.PathLike[str] | Run],
    columns: Sequence[str] | None = None,
    results_dir: str | os.PathLike[str] = "results",
    categorical: bool = False,
    flat: bool = False,
) -> pd.DataFrame:
    """The outcomes of one or many runs as one DataFrame.

    Each run is a :class:`Run`, a run folder or a run id under ``results_dir``,
    given one by one or as a list (``outcomes_df(["a", "b"])``); several runs are
    stacked, each line keeping its run's ``run_id`` (added first when ``columns``
    leaves it out). ``columns`` limits what is read (Parquet reads only those
    columns). ``categorical=True`` returns ``slice``, ``split`` and ``verdict``
    as pandas categoricals (smaller and faster to group on). ``flat=True`` gives
    one column per grader field instead of the ``graders`` dicts
    (``graders.contract.passed``, ``graders.contract.score``,
    ``graders.contract.reason``, ``graders.contract.error``; null where an
    outcome has no such grader) and one per ``agent_version`` field
    (``agent_version.model_id``, ...).
    """
    opened = [read_run(r, results_dir) for r in _each_run(runs)]
    if not opened:
        raise ResultsError("outcomes_df: no run given")
    cols = list(columns) if columns is not None else None
    if cols is not None and len(opened) > 1 and "run_id" not in cols:
        cols.insert(0, "run_id")
    tables = [_with_run_id(r.table(cols), r.run_id) if len(opened) > 1 else r.table(cols) for r in opened]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    df = _to_pandas(table)
    if categorical:
        for c in ("slice", "split", "verdict"):
            if c in df.columns:
                df[c] = df[c].astype("category")
    return _flat(df) if flat else df


def _each_run(runs: Sequence[Any]) -> list[str | os.PathLike[str] | Run]:
    """The runs given one by one or in lists (a str or a path is one run, never a sequence of them)."""
    out: list[str | os.PathLike[str] | Run] = []
    for r in runs:
        if isinstance(r, (str, os.PathLike, Run)):
            out.append(r)
        elif isinstance(r, Sequence):
            out.extend(_each_run(r))
        else:
            raise ResultsError(f"outcomes_df: {type(r).__name__} is not a run (give a Run, a run folder or a run id)")
    return out


def _with_run_id(table: pa.Table, run_id: str) -> pa.Table:
    """``table`` whose ``run_id`` column is the run's own id on every line (a line written without one too)."""
    at = table.column_names.index("run_id")
    return table.set_column(at, "run_id", pa.array([run_id] * table.num_rows, pa.string()))


def _flat(df: pd.DataFrame) -> pd.DataFrame:
    """``agent_version`` and ``graders`` spread into one column per field (see :func:`outcomes_df`)."""
    import pandas as pd

    for col in ("agent_version", "graders"):
        if col not in df.columns:
            continue
        values = df[col].tolist()
        if col == "agent_version":
            spread = {f"{col}.{f}": [_field({col: v}, col, f) for v in values] for f in _AGENT_FIELDS}
        else:
            names = sorted({str(n) for v in values if isinstance(v, dict) for n in v})
            spread = {f"{col}.{n}.{f}": [_field(v, n, f) for v in values] for n in names for f in _GRADE_FIELDS}
        flat = pd.DataFrame(spread, index=df.index)
        for c in flat.columns:
            kind = _FLAT_TYPES.get(c.rsplit(".", 1)[-1]) if col == "graders" else None
            if kind is not None:
                flat[c] = flat[c].astype(kind)
        at = df.columns.get_loc(col)
        df = pd.concat([df.iloc[:, :at], flat, df.iloc[:, at + 1 :]], axis=1)
    return df


def _field(graders: Any, name: str, field: str) -> Any:
    grade = graders.get(name) if isinstance(graders, dict) else None
    return grade.get(field) if isinstance(grade, dict) else None


_AGENT_FIELDS = ("git_commit", "model_id", "prompt_sha256", "artifacts_sha256")
_GRADE_FIELDS = ("passed", "score", "reason", "error")
_FLAT_TYPES = {"passed": "boolean", "score": "Float64", "error": "boolean"}


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd  # here: a run, which imports this package to write, never needs pandas

    df = table.to_pandas(maps_as_pydicts="strict", types_mapper={pa.int64(): pd.Int64Dtype()}.get)
    for c in JSON_COLUMNS:
        if c in df.columns:
            df[c] = [None if v is None else json.loads(v) for v in df[c].tolist()]
    for c in ("tags",):
        if c in df.columns:
            df[c] = [[] if v is None else list(v) for v in df[c].tolist()]
    if "repeat" in df.columns and not df["repeat"].isna().any():
        df["repeat"] = df["repeat"].astype("int64")
    return df


__all__ = ["Run", "outcomes_df", "read_run"]

publish(globals())
