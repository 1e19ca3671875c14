"""Trend plots: each group's metric per run with its Wilson band, segments apart, version changes marked.

Drawn with matplotlib's object API (a ``Figure`` of its own, no pyplot state,
no rcParams touched) as small multiples, one panel per group in one figure
(one drawing pass for all of them: a figure per slice cost about a second
each on two busy cores), returned as an SVG ``data:`` URI for an ``<img>``:
the page stays one file, and the SVG keeps its ids to itself.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["trend_svg_uri"]

_COLORS = ("#0969da", "#8250df", "#1a7f37", "#bf3989", "#9a6700", "#cf222e")
_COLUMNS = 2
_ERRORBARS_UP_TO = 60  # points per segment drawn with error bars; more get the band only


def _panel(ax: Any, lines: pd.DataFrame, metric: str, title: str) -> None:
    from matplotlib import dates as mdates

    data = lines.sort_values(["started_at", "run_id"], kind="stable")
    # float day numbers, not datetime objects: matplotlib's unit conversion of a
    # datetime Series cost seconds per panel at 1,000 runs
    times = mdates.date2num(pd.to_datetime(data["started_at"], utc=True).dt.tz_convert(None).to_numpy())  # type: ignore[no-untyped-call]
    seg = data["segment"].to_numpy()
    for i, segment in enumerate(pd.unique(seg)):
        mask = seg == segment
        part = data[mask]
        x = times[mask]
        color = _COLORS[i % len(_COLORS)]
        label = f"v{part['dataset_version'].iloc[0]}"
        y, lo, hi = (part[c].to_numpy(dtype=float) for c in (metric, "ci_low", "ci_high"))
        ax.fill_between(x, lo, hi, color=color, alpha=0.18, lw=0)
        if len(x) <= _ERRORBARS_UP_TO:
            ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", ms=3, lw=1.3, elinewidth=0.7, capsize=2, color=color,
                        label=label)  # fmt: skip
        else:  # the band alone says it; a thousand error bars would hide the line
            ax.plot(x, y, "-", lw=1.1, color=color, label=label)
        if bool(part["version_change"].iloc[0]):
            ax.axvline(x[0], color="#57606a", ls="--", lw=0.9)
            ax.annotate(label, (x[0], 1.0), xytext=(3, -9), textcoords="offset points", fontsize=7)
    if len(times) and float(times.max() - times.min()) < 0.5:  # runs within hours: show a day around them
        ax.set_xlim(float(times.min()) - 0.5, float(times.max()) + 0.5)
    locator = mdates.AutoDateLocator(maxticks=8)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    ax.set_ylim(-0.02, 1.04)
    ax.set_title(title, fontsize=9, loc="left")
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, lw=0.5)


def trend_svg_uri(lines: pd.DataFrame, metric: str, groups: Sequence[str], by: str = "slice") -> str:
    """Panels of ``lines`` (rows of :func:`goldenkit.trend`), one per group in ``groups``, as an SVG data URI.

    Each segment (one dataset hash) is its own line with its band and error
    bars; a dashed vertical line with the new version's label marks each
    version change. The legend names the dataset version of each colour.
    """
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = max(1, math.ceil(len(groups) / _COLUMNS))
    fig = Figure(figsize=(11, 2.3 * rows + 0.4), dpi=100)
    FigureCanvasSVG(fig)
    axes = fig.subplots(rows, _COLUMNS, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, group in zip(axes, groups, strict=False):
        _panel(ax, lines[lines[by] == group], metric, group)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=8, frameon=False, ncols=max(1, len(labels)))
    fig.subplots_adjust(left=0.06, right=0.99, top=1 - 0.45 / fig.get_figheight(), bottom=0.6 / fig.get_figheight(),
                        hspace=0.45, wspace=0.08)  # fmt: skip
    for ax in axes[: len(groups)]:
        ax.tick_params(axis="x", labelrotation=20, labelbottom=True)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
