"""The history of quality: every run in one table, SQL over every outcome, trends per slice.

* :func:`runs_df` -- one row per run folder and committed baseline (``run_index``).
* :func:`query` / :func:`connect` -- DuckDB views ``runs``, ``outcomes``,
  ``baseline_history`` over the run folders, Parquet read in place (``sql``).
* :func:`trend` -- pass rate per slice with Wilson intervals over comparable runs,
  segmented by dataset version (``trend``).
* :func:`failure_counts` -- in how many runs each row failed (``trend``; the old
  name ``failing_rows`` still works for one release).

Reads only what runs and baselines wrote (results -> history), never a model.
The views and their columns are documented in docs/history.md.
"""

from __future__ import annotations

from goldenkit.history._run_index import CACHE_FILE, PROTOCOL_KEYS, RUN_COLUMNS, protocol_id, runs_df, scan
from goldenkit.history._sql import HISTORY_COLUMNS, VIEWS, baseline_history_df, connect, query
from goldenkit.history._trend import METRICS, failure_counts, trend

__all__ = [
    "CACHE_FILE",
    "HISTORY_COLUMNS",
    "METRICS",
    "PROTOCOL_KEYS",
    "RUN_COLUMNS",
    "VIEWS",
    "baseline_history_df",
    "connect",
    "failure_counts",
    "protocol_id",
    "query",
    "runs_df",
    "scan",
    "trend",
]
