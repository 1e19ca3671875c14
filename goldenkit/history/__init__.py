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

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
