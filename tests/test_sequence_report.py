"""The compare notebook's plot of a sequential run: the confidence sequence against the rows run, recomputed
from run.json's record, crosses the margin (or the e-value its threshold) at the row where the run stopped.

The agents are seeded callables, as in tests/test_sequential_gate.py: ``good`` passes 80% of the rows,
``broken`` fails 60% of the refunds rows it passed and 5% of the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sequential_world import broken, good, write_world  # noqa: F401  (agents run by name)

from goldenkit import report
from goldenkit.cli import main
from goldenkit.compare import Comparison
from goldenkit.report import HTMLBlock
from goldenkit.results import read_run
from goldenkit.stats import OVERALL


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_world(tmp_path)


def run(ds: Path, agent: str, run_id: str, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "callable", "--callable", f"test_sequence_report:{agent}", "--quiet"]
    return main([*argv, "--run-id", run_id, "--baseline", "base", *extra] if extra else [*argv, "--run-id", run_id])


def compared(cand: str) -> tuple[Comparison, dict[str, Any]]:
    comparison, differences = report.try_compare(read_run(Path("results/base")), read_run(Path("results") / cand))
    assert comparison is not None, differences
    return comparison, comparison.cand_manifest["sequential"]


def crossed(table: pd.DataFrame, member: str, crossing: str) -> pd.Series:
    """The rows run at which ``member`` had crossed: ``"margin"`` (upper bound of the drop under the
    margin) or ``"threshold"`` (regression e-value at its threshold)."""
    t = table[table["member"] == member]
    hit = t["drop_high"] < t["margin"] if crossing == "margin" else t["e_value"] >= t["threshold"]
    return t["row"][hit.to_numpy()]


def test_an_unchanged_agent_crosses_the_margin_at_the_recorded_stop(world: Path) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "good", "cand", "--sequential") == 0
    comparison, rec = compared("cand")
    assert rec["decision"] == "non_inferior" and rec["rows_run"] < rec["rows_total"]
    table = report.sequence_table(comparison)
    assert isinstance(table, pd.DataFrame)
    assert list(table["member"].unique()) == [OVERALL, *sorted(set(rec["statistics"]) - {OVERALL})]
    # the run passes when the overall rows and the critical slice have both shown non-inferiority
    crossings = [int(crossed(table, m, "margin").iloc[0]) for m in (OVERALL, "refunds")]
    assert max(crossings) == rec["rows_run"]
    assert table["row"].max() <= rec["rows_run"] and (table["e_value"] < table["threshold"]).all()
    for member, stats in rec["statistics"].items():  # the record holds each member's statistics at its decision
        at = table[table["member"] == member].iloc[stats["step"] - 1]
        assert (at["b"], at["c"]) == (stats["b"], stats["c"])
        assert at["drop_high"] == pytest.approx(stats["drop_high"]) and at["e_value"] == pytest.approx(stats["e_value"])

    fig = report.sequence_figure(comparison)
    top, bottom = fig.axes
    upper = next(line for line in top.get_lines() if line.get_label() == f"{OVERALL}: upper bound")
    overall = table[table["member"] == OVERALL]
    np.testing.assert_allclose(upper.get_xdata(), overall["row"])
    np.testing.assert_allclose(upper.get_ydata(), overall["drop_high"])
    hlines = {float(line.get_ydata()[0]) for line in top.get_lines() if line.get_linestyle() == "--"}
    assert rec["margin"] in hlines
    vlines = [line for line in top.get_lines() if len(set(line.get_xdata())) == 1 and line.get_color() == "black"]
    assert [int(line.get_xdata()[0]) for line in vlines] == [rec["rows_run"]]
    assert top.get_xlim()[1] == rec["rows_total"]
    assert f"stopped after {rec['rows_run']} of {rec['rows_total']} rows" in top.get_title().replace("\n", " ")


def test_a_regression_reaches_its_e_value_threshold_at_the_recorded_stop(world: Path) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand", "--sequential") == 2
    comparison, rec = compared("cand")
    assert rec["decision"] == "regression"
    table = report.sequence_table(comparison)
    assert isinstance(table, pd.DataFrame)
    rows = [crossed(table, m, "threshold") for m in table["member"].unique()]
    assert min(int(r.iloc[0]) for r in rows if not r.empty) == rec["rows_run"]
    fig = report.sequence_figure(comparison)
    assert fig.axes[1].get_yscale() == "log"


def test_a_full_run_and_an_invalid_comparison_get_a_note(world: Path) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "good", "full") == 0
    comparison, _ = report.try_compare(read_run(Path("results/base")), read_run(Path("results/full")))
    note = report.sequence_figure(comparison)
    assert isinstance(note, HTMLBlock) and "Not a sequential run" in note
    invalid = report.sequence_figure(None)
    assert isinstance(invalid, HTMLBlock) and "comparison is invalid" in invalid
