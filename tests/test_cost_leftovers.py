"""What a verdict cost, as a user adds it up: one collapse rule, one set of roles, a regrade's own spend."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from goldenkit.report import latency_summary
from goldenkit.runner._summary import run_accounting
from goldenkit.stats import OVERALL


def decided_any() -> tuple[pd.DataFrame, dict]:
    """Two rows of a run whose repeats stopped once decided under ``any``: row a failed once then passed (two
    repeats ran), row b passed at once. Under ``any`` both pass; under majority a is a 1-1 tie, not a pass."""
    recs = [("a", 0, "FAIL", 100), ("a", 1, "PASS", 100), ("b", 0, "PASS", 100)]
    df = pd.DataFrame(recs, columns=["row_id", "repeat", "verdict", "tokens_in"])
    df = df.assign(slice="s", attempts=1, tokens_out=10, latency_ms=1000.0, agent_version=[{"model_id": "m"}] * 3)
    return df, {"repeats": 3, "stop_decided_repeats": "any"}


def test_per_passing_row_is_the_runs_own_rule_in_the_report_and_in_run_json() -> None:
    df, manifest = decided_any()
    stored = run_accounting([df.to_dict(orient="records")], manifest, Path("."))  # run.json's accounting
    shown = latency_summary(df, run=SimpleNamespace(manifest=manifest, path=None)).loc[OVERALL]  # report.html
    assert stored["passing_rows"] == shown["passing rows"] == 2  # rule any: both rows pass
    assert stored["tokens_per_passing_row"] == shown["tokens per passing row"] == 330 / 2
