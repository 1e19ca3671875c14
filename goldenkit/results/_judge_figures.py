"""Which runs show judge-graded figures, and the short forms the comparison and the leaderboard print.

A run shows them when it is a run folder's :class:`~goldenkit.results.Run` with a judge version and some
judge verdict (:func:`judge_graded`); a pair, when both are and share the judge version
(:func:`judge_pair`); nothing is shown for any other run. The figures are those of
:mod:`goldenkit.results._judge_evidence`, formatted by :mod:`goldenkit._display`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import InputError
from goldenkit.results._judge_evidence import _judge_verdict, judge_difference, judge_estimates
from goldenkit.results._run import Run, read_run
from goldenkit.stats import OVERALL

__all__ = ["judge_graded", "judge_notes", "judge_pair"]


def judge_graded(run: Any) -> bool:
    """True when ``run`` is a run folder's Run with a judge version and some judge verdict (PASS or FAIL):
    the runs whose judge-graded figures are shown (nothing is shown for any other)."""
    if not isinstance(run, Run) or not run.manifest.get("judge_version"):
        return False
    out = run.outcomes(columns=["verdict", "graders"])
    return any(_judge_verdict(g, v) in ("PASS", "FAIL") for g, v in zip(out["graders"], out["verdict"], strict=True))


def judge_pair(
    run: Any, baseline: Any, *, by: str = "slice", alpha: float = 0.05, rule: str = "majority"
) -> pd.DataFrame | None:
    """:func:`judge_difference` of two runs graded by the same judge version, None for any other pair."""
    same = judge_graded(run) and judge_graded(baseline)
    if not same or run.manifest.get("judge_version") != baseline.manifest.get("judge_version"):
        return None
    return judge_difference(run, baseline, by=by, alpha=alpha, rule=rule)


def judge_notes(
    runs: Any,
    results_dir: str | os.PathLike[str] = "results",
    *,
    only: Collection[str] | None = None,
    rule: str = "majority",
    alpha: float = 0.05,
) -> list[str]:
    """One line per judge-graded run that holds human labels: its judge-graded pass rate, the judge-only
    figure beside the prediction-powered one (:func:`goldenkit._display.judge_figures_line`). ``runs``:
    Run objects, run folders or run ids under ``results_dir`` (anything else, an outcome DataFrame say,
    has no labels: no note); ``only``: the run ids to note (default every one)."""
    from goldenkit._display import judge_figures_line

    if isinstance(runs, str | os.PathLike | pd.DataFrame | Mapping) or not isinstance(runs, Sequence):
        return []
    notes = []
    for given in runs:
        run = given if isinstance(given, Run) else read_run(given, results_dir)
        if (only is not None and run.run_id not in only) or not judge_graded(run):
            continue
        try:
            table = judge_estimates(run, alpha=alpha, rule=rule)
        except InputError as exc:  # labels given on other answers: said, not fatal to what lists the runs
            notes.append(f"run {run.run_id}: judge-graded figures not shown: {exc}")
            continue
        if table.loc[OVERALL, ["n_human", "n_hand", "n_unused"]].sum() > 0:
            notes.append(f"run {run.run_id}: judge-graded pass rate: {judge_figures_line(table, OVERALL)}")
    return notes


publish(globals())
