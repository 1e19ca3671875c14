"""Names that changed keep working for one release: the old name is the new object, with a DeprecationWarning."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_the_runners_run_is_run_execution() -> None:
    from goldenkit.runner import RunExecution

    with pytest.warns(DeprecationWarning, match="RunExecution"):
        from goldenkit.runner import Run
    assert Run is RunExecution
    with pytest.warns(DeprecationWarning, match="RunExecution"):
        from goldenkit.runner._run import Run as Old
    assert Old is RunExecution


def test_the_histories_failing_rows_is_failure_counts() -> None:
    from goldenkit.history import failure_counts

    with pytest.warns(DeprecationWarning, match="failure_counts"):
        from goldenkit.history import failing_rows
    assert failing_rows is failure_counts
    trend = sys.modules["goldenkit.history._trend"]
    with pytest.warns(DeprecationWarning, match="FAILURE_COUNT_COLUMNS"):
        assert trend.FAILING_COLUMNS == trend.FAILURE_COUNT_COLUMNS
    assert importlib.import_module("goldenkit.audit").failing_rows is not failure_counts


def test_the_old_index_modules_re_export_the_new_ones() -> None:
    sys.modules.pop("goldenkit.runner.index", None)
    with pytest.warns(DeprecationWarning, match="outcome_index"):
        old = importlib.import_module("goldenkit.runner.index")
    assert old.OutcomeIndex is importlib.import_module("goldenkit.runner._outcome_index").OutcomeIndex
    history_index = importlib.import_module("goldenkit.history.index")
    run_index = importlib.import_module("goldenkit.history._run_index")
    assert history_index.runs_df is run_index.runs_df and history_index.fingerprint is run_index.fingerprint


def test_runkey_still_names_what_moved_out_of_it() -> None:
    from goldenkit import _scrub as scrub
    from goldenkit.runner import _runkey as runkey, _validity as validity, _versions as versions

    for name in ("agent_version", "canonical", "git_commit"):
        assert getattr(runkey, name) is getattr(versions, name)
    assert runkey.validity is validity.validity
    assert runkey.redact_settings is scrub.redact_settings and runkey.key_differences.__module__ == runkey.__name__
