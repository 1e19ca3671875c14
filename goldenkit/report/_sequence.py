"""What the compare notebook shows of a sequential run: the confidence sequence against the rows run.

A run made with ``goldenkit run ... --sequential --baseline REF`` records in run.json's
``sequential`` the rows it read, in their order, the populations and the levels
(:mod:`goldenkit.gate._sequential`). :func:`sequence_table` reads those rows again from a
comparison of the run with its baseline and recomputes, with
:func:`goldenkit.stats.sequential_path`, the statistics after each row for the overall rows and
each slice the gate watched; :func:`sequence_figure` plots them: the upper and lower bounds of
the mean drop (base minus candidate) with the margin, the regression e-value with its threshold,
and the row where the run stopped.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.compare import Comparison
from goldenkit.gate import baseline_values, candidate_values, sequential_record
from goldenkit.report._html import OVERALL, HTMLBlock
from goldenkit.stats import sequential_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["sequence_figure", "sequence_table"]

#: the columns of :func:`sequence_table`
SEQUENCE_COLUMNS = ["member", "row", "b", "c", "e_value", "threshold", "drop_low", "drop_high", "margin"]


def _note(text: str) -> HTMLBlock:
    return HTMLBlock(f"<p>{escape(text)}</p>")


def sequence_table(comparison: Comparison | None) -> pd.DataFrame | HTMLBlock:
    """The sequential gate's statistics after each row the candidate read, recomputed from the record.

    One line per member the gate watched (the overall rows, then each slice of its record) and
    per row of that member that was evidence: ``row`` is the rows run when it was read (1-based,
    in the recorded order), ``b``, ``c`` and ``e_value`` the regression e-process and its
    ``threshold`` (``1 / regression_alpha``), ``drop_low`` and ``drop_high`` the confidence
    sequence for the member's mean drop, ``margin`` the policy's. A note instead when the
    comparison is invalid, the candidate is not a sequential run, or the baseline compared is not
    the one the run read against.
    """
    if comparison is None:
        return _note("Not shown: the comparison is invalid (see above).")
    rec = sequential_record(comparison.cand_manifest)
    if rec is None:
        return _note("Not a sequential run: the candidate ran every row (goldenkit run --sequential stops early).")
    if comparison.base_collapsed is None or comparison.cand_collapsed is None:
        return _note("Not shown: the comparison holds no per-row verdicts.")
    base = baseline_values(comparison.base_collapsed)
    cand = candidate_values(comparison.cand_collapsed)
    read = [str(r) for r in rec["rows"]]
    unknown = [r for r in read if r not in base]
    if unknown:
        return _note(
            f"Not shown: the baseline compared did not grade row {unknown[0]} that the run read; "
            f"compare against the baseline it ran against ({rec.get('baseline')})."
        )
    slices = np.array([base[r][0] for r in read], dtype=object)
    b_arr = np.array([base[r][1] for r in read], dtype=np.int8)
    values = [cand.get(r) for r in read]
    evidence = np.array([v is not None for v in values], dtype=bool)
    c_arr = np.array([v if v is not None else 0 for v in values], dtype=np.int8)
    frames = [
        _member_frame(name, stats, rec, slices=slices, evidence=evidence, base=b_arr, cand=c_arr)
        for name, stats in _members(rec).items()
    ]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=SEQUENCE_COLUMNS)


def _members(rec: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The members of the record's statistics, the overall rows first."""
    stats = rec.get("statistics") or {}
    names = sorted(stats, key=lambda n: (n != OVERALL, str(n)))
    return {str(n): stats[n] for n in names if isinstance(stats[n], Mapping)}


def _member_frame(
    name: str,
    stats: Mapping[str, Any],
    rec: Mapping[str, Any],
    *,
    slices: np.ndarray[Any, Any],
    evidence: np.ndarray[Any, Any],
    base: np.ndarray[Any, Any],
    cand: np.ndarray[Any, Any],
) -> pd.DataFrame:
    """One member's statistics after each of its rows read (:func:`goldenkit.stats.sequential_path`)."""
    where = np.flatnonzero(evidence if name == OVERALL else evidence & (slices == name))
    population = int((rec.get("populations") or {}).get(name, 0))
    if where.size == 0 or population < where.size:
        return pd.DataFrame(columns=SEQUENCE_COLUMNS)
    alpha, r_alpha = float(stats.get("alpha", rec["alpha"])), float(stats["regression_alpha"])
    path = sequential_path(base[where], cand[where], population=population, alpha=alpha, regression_alpha=r_alpha)
    return pd.DataFrame(
        {
            "member": name,
            "row": where + 1,
            "b": path["b"],
            "c": path["c"],
            "e_value": path["e_value"],
            "threshold": 1.0 / r_alpha,
            "drop_low": path["drop_low"],
            "drop_high": path["drop_high"],
            "margin": float(stats.get("margin", rec["margin"])),
        }
    )


def sequence_figure(comparison: Comparison | None) -> Figure | HTMLBlock:
    """The confidence sequence of a sequential run against the rows run, with the margin and the stop.

    Top: for each member (overall, then each slice the gate watched) the upper bound of the mean
    drop (base minus candidate; solid) and its lower bound (dotted), the margin (red dashed: the
    run passes once every non-inferiority member's upper bound is under it). Bottom: the
    regression e-value of each member on a log scale with its threshold (the run fails once one
    reaches it). A vertical line marks the row where the run stopped; the title says why. The
    x-axis runs to every row of the design, so the rows not needed show. The data is
    :func:`sequence_table`'s; a note instead where it gives one.
    """
    table = sequence_table(comparison)
    if isinstance(table, HTMLBlock):
        return table
    if comparison is None:  # narrowed: sequence_table returned a note above
        return _note("Not shown: the comparison is invalid (see above).")
    rec = sequential_record(comparison.cand_manifest) or {}
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 5.6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    for i, (name, t) in enumerate(table.groupby("member", sort=False)):
        colour = f"C{i}"
        top.step(t["row"], t["drop_high"], where="pre", color=colour, label=f"{name}: upper bound")
        top.step(t["row"], t["drop_low"], where="pre", color=colour, linestyle=":", linewidth=1)
        bottom.step(t["row"], t["e_value"], where="pre", color=colour, label=str(name))
    margin = float(rec.get("margin") or table["margin"].iloc[0])
    top.axhline(margin, color="tab:red", linestyle="--", linewidth=1, label=f"margin {margin:g}")
    top.axhline(0.0, color="grey", linewidth=0.5)
    for threshold in sorted(set(table["threshold"])):
        bottom.axhline(threshold, color="tab:red", linestyle="--", linewidth=1)
    bottom.set_yscale("log")
    stop = int(rec.get("rows_run") or 0)
    for ax in (top, bottom):
        ax.axvline(stop, color="black", linewidth=1)
        ax.grid(alpha=0.3)
    top.set_xlim(0, max(int(rec.get("rows_total") or stop), stop, 1))
    top.set_ylabel("mean drop, base - candidate")
    top.yaxis.set_major_formatter(lambda v, _pos: f"{100 * v:+.0f} pp")
    top.legend(fontsize="small", loc="upper right")
    bottom.set_ylabel("regression e-value")
    bottom.set_xlabel(f"rows run (stop at {stop}, black line; red dashed: margin and e-value thresholds)")
    line = f"stopped after {rec.get('rows_run')} of {rec.get('rows_total')} rows: {rec.get('stopped_because')}"
    top.set_title("\n".join(textwrap.wrap(line, 90)), fontsize="medium")
    return fig


publish(globals())
