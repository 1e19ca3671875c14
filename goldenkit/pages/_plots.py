"""Trend plots: each group's metric per run with its Wilson band, one series per agent, each point a link.

Drawn with matplotlib's object API (a ``Figure`` of its own, no pyplot state,
no rcParams changed beyond the saving call) as small multiples, one panel per group in one figure
(one drawing pass for all of them: a figure per slice cost about a second
each on two busy cores), returned as inline SVG markup: the page stays one
file, and each point is an ``<a>`` to its run's report (with a tooltip naming
the run). The figure's ids are prefixed with a digest of the figure, so two
figures on one page never share an id.

**Series.** One per agent version as :func:`goldenkit.history.trend` labels it (the
``agent`` column: model and prompt hash), each in its own colour and marker,
named in the legend; a series is broken where the dataset version changes
(a dashed line with the new version's label), because points are comparable
within a segment only.

**Time axis.** The x axis is the runs' start time scaled to the runs shown
(their span plus 5% on each side) while every two runs are at least 1/60 of
that span apart. When runs are closer than that (a rerun minutes after a
nightly run, or runs minutes apart), the axis is the run order instead,
labelled with the start times, so no two runs fall on one vertical line.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["XAxis", "trend_svg", "x_axis"]

_COLORS = ("#0969da", "#bf3989", "#1a7f37", "#9a6700", "#8250df", "#cf222e")
_MARKERS = ("o", "s", "^", "D", "v", "P")
_COLUMNS = 2
_LEGEND_COLUMNS = 3
_ERRORBARS_UP_TO = 60  # points per series drawn with error bars; more get the band only
_MIN_GAP_SHARE = 60  # a time axis while every two runs are at least span / 60 apart


@dataclass(frozen=True)
class XAxis:
    """Where each run goes on the x axis: ``mode`` is ``"time"`` (matplotlib day numbers) or ``"order"``."""

    mode: str
    x: Mapping[str, float]
    labels: Sequence[str]  # run order only: the tick label of each position (the run's start time)
    title: str


def _start_times(runs: pd.DataFrame) -> np.ndarray:
    from matplotlib import dates as mdates

    # float day numbers, not datetime objects: matplotlib's unit conversion of a
    # datetime Series cost seconds per panel at 1,000 runs
    times = pd.to_datetime(runs["started_at"], utc=True).dt.tz_convert(None).to_numpy()
    return np.asarray(mdates.date2num(times), dtype=float)  # type: ignore[no-untyped-call]


def x_axis(lines: pd.DataFrame) -> XAxis:
    """The x axis of ``lines`` (rows of :func:`goldenkit.history.trend`): time while runs are spread out, else order."""
    runs = lines.drop_duplicates("run_id").sort_values(["started_at", "run_id"], kind="stable")
    ids = [str(r) for r in runs["run_id"]]
    times = _start_times(runs)
    span = float(times[-1] - times[0]) if len(times) else 0.0
    gaps = np.diff(times)
    if len(times) > 1 and span > 0 and float(gaps.min()) >= span / _MIN_GAP_SHARE:
        return XAxis("time", dict(zip(ids, times.tolist(), strict=True)), [], "start time (UTC)")
    started = pd.to_datetime(runs["started_at"], utc=True)
    days = {d.date() for d in started}
    fmt = "%H:%M" if len(days) == 1 else "%Y-%m-%d %H:%M" if span > 300 else "%m-%d %H:%M"
    labels = [d.strftime(fmt) for d in started]
    title = "runs in order of start (UTC" + (f", {next(iter(days)).isoformat()}" if len(days) == 1 else "") + ")"
    return XAxis("order", {rid: float(i) for i, rid in enumerate(ids)}, labels, title)


def _style_axis(ax: Any, axis: XAxis) -> None:
    from matplotlib import dates as mdates
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    xs = list(axis.x.values())
    if axis.mode == "time":
        pad = 0.05 * (max(xs) - min(xs))
        ax.set_xlim(min(xs) - pad, max(xs) + pad)
        locator = mdates.AutoDateLocator(maxticks=8)  # type: ignore[no-untyped-call]
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
        return
    n = len(axis.labels)
    ax.set_xlim(-0.5, max(n - 0.5, 0.5))
    ax.xaxis.set_major_locator(MaxNLocator(nbins=min(8, max(n, 1)), integer=True))

    def label(v: float, _pos: Any) -> str:
        i = int(round(v))
        return axis.labels[i] if abs(v - i) < 1e-6 and 0 <= i < n else ""

    ax.xaxis.set_major_formatter(FuncFormatter(label))


def _series(
    ax: Any, part: pd.DataFrame, xs: np.ndarray, style: tuple[str, str], metric: str, urls: list[str | None]
) -> None:
    """One agent's points within one segment: band, line (with error bars up to a size), linked markers."""
    color, marker = style
    y, lo, hi = (part[c].to_numpy(dtype=float) for c in (metric, "ci_low", "ci_high"))
    ax.fill_between(xs, lo, hi, color=color, alpha=0.15, lw=0)
    if len(xs) <= _ERRORBARS_UP_TO:
        ax.errorbar(xs, y, yerr=[y - lo, hi - y], fmt="-", lw=1.3, elinewidth=0.7, capsize=2, color=color)
    else:  # the band alone says it; a thousand error bars would hide the line
        ax.plot(xs, y, "-", lw=1.1, color=color)
    points = ax.scatter(xs, y, s=16, color=color, marker=marker, zorder=3)
    points.set_urls(urls)


def _panel(
    ax: Any,
    lines: pd.DataFrame,
    axis: XAxis,
    styles: Mapping[str, tuple[str, str]],
    metric: str,
    links: Mapping[str, str],
) -> None:
    data = lines.sort_values(["started_at", "run_id"], kind="stable")
    xs = np.array([axis.x[str(r)] for r in data["run_id"]], dtype=float)
    for (_segment, agent), idx in data.groupby(["segment", "agent"], sort=False).indices.items():
        part = data.iloc[idx]
        urls = [links.get(str(r)) for r in part["run_id"]]
        _series(ax, part, xs[idx], styles[str(agent)], metric, urls)


def _versions(ax: Any, lines: pd.DataFrame, axis: XAxis) -> None:
    """Each segment's start labelled with its dataset version; a dashed line where the version changed."""
    starts = lines.sort_values(["started_at", "run_id"], kind="stable").drop_duplicates("segment")
    for rec in starts.to_dict(orient="records"):
        x = axis.x[str(rec["run_id"])]
        if bool(rec["version_change"]):
            ax.axvline(x, color="#57606a", ls="--", lw=0.9)
        ax.annotate(f"v{rec['dataset_version']}", (x, 1.0), xytext=(3, -9), textcoords="offset points", fontsize=7)


def _styles(lines: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """A colour and a marker per agent, in the order the agents first ran."""
    agents = lines.sort_values(["started_at", "run_id"], kind="stable")["agent"].astype(str)
    return {
        a: (_COLORS[i % len(_COLORS)], _MARKERS[(i // len(_COLORS)) % len(_MARKERS)])
        for i, a in enumerate(dict.fromkeys(agents))
    }


def _legend(fig: Any, styles: Mapping[str, tuple[str, str]]) -> int:
    """The agents' legend at the top of the figure; returns its number of lines."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, marker=m, ms=5, lw=1.3, label=a) for a, (c, m) in styles.items()]
    cols = max(1, min(_LEGEND_COLUMNS, len(handles)))
    fig.legend(handles=handles, loc="upper left", fontsize=8, frameon=False, ncols=cols, bbox_to_anchor=(0.05, 1.0))
    return math.ceil(len(handles) / cols)


def _inline(svg: str, titles: Mapping[str, str], label: str) -> str:
    """Matplotlib's SVG document as markup for an HTML page: ids prefixed, a tooltip on each link."""
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg[svg.index("<svg") :], flags=re.S)
    prefix = "gk" + hashlib.sha256(svg.encode()).hexdigest()[:8]
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    svg = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{prefix}-\1"', svg)

    def tooltip(m: re.Match[str]) -> str:  # a report opens in the same tab, as every link of the site
        title = titles.get(html.unescape(m.group(1)))
        return f'<a xlink:href="{m.group(1)}">' + (f"<title>{html.escape(title)}</title>" if title else "")

    svg = re.sub(r'<a xlink:href="([^"#][^"]*)"(?: target="_blank")?>', tooltip, svg)
    attrs = f'class="trend" role="img" aria-label="{html.escape(label)}" style="max-width:100%;height:auto"'
    return svg.replace("<svg ", f"<svg {attrs} ", 1)


def _titles(lines: pd.DataFrame, links: Mapping[str, str]) -> dict[str, str]:
    runs = lines.drop_duplicates("run_id")
    out = {}
    cols = [runs[c] for c in ("run_id", "started_at", "agent", "dataset_version")]
    for rid, started, agent, version in zip(*cols, strict=True):
        url = links.get(str(rid))
        if url:
            when = pd.Timestamp(started).strftime("%Y-%m-%d %H:%M")
            out[url] = f"{rid} · {when} · {agent} · dataset {version}"
    return out


def trend_svg(
    lines: pd.DataFrame,
    metric: str,
    groups: Sequence[str],
    by: str = "slice",
    links: Mapping[str, str] | None = None,
) -> str:
    """Panels of ``lines`` (rows of :func:`goldenkit.history.trend`), one per group in ``groups``, as inline SVG.

    ``links``: run id -> the href of its report; each point of a run that has
    one is a link to it. See the module docstring for series and axis.
    """
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    links = links or {}
    rows = max(1, math.ceil(len(groups) / _COLUMNS))
    styles = _styles(lines)
    legend_rows = math.ceil(len(styles) / max(1, min(_LEGEND_COLUMNS, len(styles)))) if styles else 0
    top = 0.25 + 0.2 * legend_rows
    fig = Figure(figsize=(11, 2.3 * rows + top + 0.45), dpi=100)
    FigureCanvasSVG(fig)
    axes = fig.subplots(rows, _COLUMNS, sharex=True, sharey=True, squeeze=False).ravel()
    axis = x_axis(lines) if len(lines) else XAxis("order", {}, [], "")
    for ax, group in zip(axes, groups, strict=False):
        part = lines[lines[by] == group]
        _panel(ax, part, axis, styles, metric, links)
        _versions(ax, part, axis)
        ax.set_ylim(-0.02, 1.04)
        ax.set_title(group, fontsize=9, loc="left")
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, lw=0.5)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    for ax in axes[: len(groups)] if axis.x else []:
        _style_axis(ax, axis)
    for ax in axes[len(groups) :]:
        ax.set_visible(False)
    if styles:
        _legend(fig, styles)
    height = fig.get_figheight()
    fig.subplots_adjust(left=0.06, right=0.99, top=1 - top / height, bottom=0.75 / height, hspace=0.5, wspace=0.08)
    for ax in axes[: len(groups)]:
        ax.tick_params(axis="x", labelrotation=20, labelbottom=True)
    for ax in axes[max(0, len(groups) - _COLUMNS) : len(groups)]:
        ax.set_xlabel(axis.title, fontsize=7)
    text = _svg_text(fig)
    label = f"{metric} per run of {', '.join(groups)}, one series per agent"
    return _inline(text, _titles(lines, links), label)


def _svg_text(fig: Any) -> str:
    """The figure as SVG text, byte for byte the same for the same figure: no date in its metadata, and a
    fixed salt for the ids matplotlib hashes (a random one otherwise; set for this call only)."""
    import io

    from matplotlib import rc_context

    buf = io.StringIO()
    with rc_context({"svg.hashsalt": "goldenkit"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()
