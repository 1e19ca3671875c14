"""Trend plots: one group's metric per run with its Wilson band, segments apart, version changes marked.

Drawn with matplotlib's object API (a ``Figure`` of its own, no pyplot state,
no rcParams touched) and returned as an SVG ``data:`` URI for an ``<img>``: the
page stays one file, and each SVG keeps its ids to itself.
"""

from __future__ import annotations

import base64
import io

import pandas as pd

__all__ = ["trend_svg_uri"]

_COLORS = ("#0969da", "#8250df", "#1a7f37", "#bf3989", "#9a6700", "#cf222e")


def trend_svg_uri(lines: pd.DataFrame, metric: str, title: str) -> str:
    """The plot of ``lines`` (rows of :func:`goldenkit.trend` for one group) as ``data:image/svg+xml;base64,...``.

    Each segment (one dataset hash) is its own line with its band; a dashed
    vertical line and the new version's label mark each version change.
    """
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    fig = Figure(figsize=(6.4, 2.5), dpi=100, layout="constrained")
    FigureCanvasSVG(fig)
    ax = fig.add_subplot()
    data = lines.sort_values(["started_at", "run_id"], kind="stable")
    times = pd.to_datetime(data["started_at"], utc=True).dt.tz_convert(None)
    for i, (_, part) in enumerate(data.groupby("segment", sort=True)):
        x = times.loc[part.index]
        color = _COLORS[i % len(_COLORS)]
        label = f"v{part['dataset_version'].iloc[0]}"
        ax.fill_between(x, part["ci_low"].astype(float), part["ci_high"].astype(float), color=color, alpha=0.18, lw=0)
        ax.plot(x, part[metric].astype(float), marker="o", ms=3.5, lw=1.4, color=color, label=label)
        if bool(part["version_change"].iloc[0]):
            ax.axvline(x.iloc[0], color="#57606a", ls="--", lw=0.9)
            ax.annotate(f"{label}", (x.iloc[0], 1.0), xytext=(3, -10), textcoords="offset points", fontsize=7)
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_title(title, fontsize=9, loc="left")
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3, lw=0.5)
    ax.legend(fontsize=7, loc="lower left", frameon=False)
    fig.autofmt_xdate(rotation=20)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
