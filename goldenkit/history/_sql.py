"""SQL over every run: DuckDB views ``runs``, ``outcomes`` and ``baseline_history``.

:func:`connect` opens an in-memory DuckDB database (no server, no file) with
three views; :func:`query` runs one statement on them and returns a DataFrame.

* ``runs``: :func:`goldenkit.history.runs_df` (one row per run folder and baseline).
* ``outcomes``: every outcome of every readable run, the columns of
  :data:`goldenkit.schema.OUTCOME_FIELDS` (nested ``agent_version`` and ``graders``
  as DuckDB STRUCT and MAP, ``trajectory`` as JSON text). A complete run is read
  from its ``outcomes.parquet`` **in place** at query time (nothing is copied); a
  run without Parquet yet (in progress, interrupted) from its ``outcomes.jsonl``,
  the last record per row x repeat winning, as :func:`goldenkit.read_run` reads it.
  Files of different schemas (written by different goldenkit versions) are read
  in groups and united by column name.
* ``baseline_history``: ``baselines/history.jsonl``, one row per save.

DuckDB is imported on first use, so ``import goldenkit`` does not pay for it.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pyarrow as pa

from goldenkit._registry import publish
from goldenkit.errors import GoldenkitError, InputError
from goldenkit.history._run_index import Index, scan
from goldenkit.results import OUTCOME_SCHEMA, iter_jsonl, read_run

if TYPE_CHECKING:
    import duckdb

__all__ = ["HISTORY_COLUMNS", "VIEWS", "baseline_history_df", "connect", "query"]

VIEWS = ("runs", "outcomes", "baseline_history")

#: Columns of the ``baseline_history`` view (a line of history.jsonl; ``agent_version`` as JSON text).
HISTORY_COLUMNS = (
    "saved_at",
    "name",
    "run_id",
    "dataset_name",
    "dataset_version",
    "dataset_sha256",
    "model_id",
    "agent_version",
    "mode",
    "rule",
    "rows",
    "n",
    "k",
    "p_hat",
    "ci_low",
    "ci_high",
    "replaced",
    "note",
)


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def baseline_history_df(baselines_dir: str | os.PathLike[str] | None = "baselines") -> pd.DataFrame:
    """``history.jsonl`` as a DataFrame with :data:`HISTORY_COLUMNS` (empty when there is none)."""
    path = Path(baselines_dir) / "history.jsonl" if baselines_dir is not None else None
    recs = list(iter_jsonl(path)) if path is not None and path.is_file() else []
    rows = []
    for rec in recs:
        av = rec.get("agent_version")
        row = {c: rec.get(c) for c in HISTORY_COLUMNS}
        row["model_id"] = av.get("model_id") if isinstance(av, dict) else None
        row["agent_version"] = None if av is None else json.dumps(av, sort_keys=True)
        rows.append(row)
    df = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    df["saved_at"] = pd.to_datetime(df["saved_at"], utc=True, errors="coerce", format="ISO8601")
    for c in ("rows", "n", "k"):
        df[c] = df[c].astype("Int64")
    for c in ("p_hat", "ci_low", "ci_high"):
        df[c] = df[c].astype("float64")
    df["replaced"] = df["replaced"].astype("boolean")
    return df


def _jsonl_tables(index: Index) -> list[pa.Table]:
    """The full outcome tables of runs read from JSONL; a run whose records do not fit the schema is marked."""
    tables = []
    for row in index.rows:
        if row.get("kind") != "run" or row.get("source") != "jsonl":
            continue
        try:
            tables.append(read_run(row["path"]).table())
        except (GoldenkitError, OSError, ValueError, pa.ArrowException) as exc:
            row["state"], row["problem"] = "corrupt", f"{row['path']}: outcomes unreadable: {exc}"
    return tables


def _outcomes_sql(con: duckdb.DuckDBPyConnection, index: Index) -> str:
    """The SELECT behind the ``outcomes`` view: Parquet files grouped by schema, then the JSONL runs."""
    groups: dict[str, list[str]] = defaultdict(list)
    for row in index.rows:
        if row.get("kind") == "run" and row.get("source") == "parquet" and row.get("state") != "corrupt":
            groups[index.schemas.get(row["path"], "?")].append(str(Path(row["path"]) / "outcomes.parquet"))
    parts = [f"SELECT * FROM read_parquet([{', '.join(map(_sql_str, files))}])" for files in groups.values()]
    tables = _jsonl_tables(index)
    if tables:
        con.register("_goldenkit_jsonl_outcomes", pa.concat_tables(tables))
        parts.append("SELECT * FROM _goldenkit_jsonl_outcomes")
    if not parts:
        con.register("_goldenkit_no_outcomes", OUTCOME_SCHEMA.empty_table())
        parts.append("SELECT * FROM _goldenkit_no_outcomes")
    return " UNION ALL BY NAME ".join(parts)


def connect(
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] | None = "baselines",
    *,
    rule: str = "majority",
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views ``runs``, ``outcomes`` and ``baseline_history``.

    The caller closes it. The views read the run folders as they are when a
    query runs (Parquet in place); ``runs`` is the index at connection time.
    """
    import duckdb

    index = scan(results_dir, baselines_dir, rule=rule)
    con = duckdb.connect(":memory:")
    try:
        outcomes = _outcomes_sql(con, index)  # first: it may mark a JSONL run corrupt in the index
        con.register("_goldenkit_runs", index.frame())
        con.register("_goldenkit_history", baseline_history_df(baselines_dir))
        con.execute("CREATE VIEW runs AS SELECT * FROM _goldenkit_runs")
        con.execute(f"CREATE VIEW outcomes AS {outcomes}")
        con.execute("CREATE VIEW baseline_history AS SELECT * FROM _goldenkit_history")
    except BaseException:
        con.close()
        raise
    return con


def query(
    sql: str,
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] | None = "baselines",
    *,
    rule: str = "majority",
) -> pd.DataFrame:
    """Run ``sql`` on the views ``runs``, ``outcomes``, ``baseline_history``; return the result as a DataFrame.

    A bad statement is an :class:`goldenkit.errors.InputError` carrying DuckDB's one-line message.

    >>> query("SELECT slice, count(*) AS failures FROM outcomes WHERE verdict = 'FAIL' "
    ...       "GROUP BY slice ORDER BY failures DESC")                          # doctest: +SKIP
    """
    import duckdb

    if not isinstance(sql, str) or not sql.strip():
        raise InputError("query: empty SQL statement")
    con = connect(results_dir, baselines_dir, rule=rule)
    try:
        return con.execute(sql).df()
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"query: {first}") from None
    finally:
        con.close()


publish(globals())
