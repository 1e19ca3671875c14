"""The report's interval figures (a point and its interval per line, labelled; the pass rate per slice and the
forest plot of a comparison) drawn as SVG by one autoescaped template (``gk_figure.html.j2``).

One SVG document (:func:`figure_svg`) is the figure everywhere: a site's page embeds it inline
(``_repr_html_``: its labels are the page's text) and a notebook displays it as an ``<img>`` of a ``data:`` URI
(``_repr_mimebundle_``, :func:`figure_img`), because JupyterLab's sanitizer removes ``<svg>`` from the output of a
notebook it does not trust (an executed report opened by its reader) and keeps an image.
The drawing reads as matplotlib's did (its default sizes at 100 dpi, its tab colours, a point with capped error
bars per line, the overall line last, grid lines at the x ticks), at about 1 ms of CPU a figure where
matplotlib's PNG cost 60-80 ms (a site draws one or two for every run). The text is the browser's; a label's
width is estimated from its length (:data:`CHAR_WIDTH`) to leave room for it.

>>> fig = IntervalFigure("Pass rate", "rate", (IntervalLine("a (n=2)", 0.5, 0.1, 0.9),), (0.0, 1.0))
>>> fig._repr_html_().startswith('<figure class="gk-figure"><svg ') and "a (n=2)" in fig._repr_html_()
True
>>> fig._repr_mimebundle_()["text/html"].startswith('<figure class="gk-figure"><img alt="Pass rate, rate: a (n=2)"')
True
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldenkit._display import HTMLBlock, templates
from goldenkit._registry import publish
from goldenkit.report._html import _data_image

#: matplotlib's tab colours, by the names the report's figures use
COLOURS = {
    "tab:blue": "#1f77b4",
    "tab:red": "#d62728",
    "tab:green": "#2ca02c",
    "tab:grey": "#7f7f7f",
    "black": "#000000",
}
#: pixels a character of a 10 pt label takes, on average, in the sans-serif fonts browsers use
CHAR_WIDTH = 7.5
# pixels the axes keep at least, however long the labels beside them
_MIN_PLOT_WIDTH = 320
_PT = 100 / 72  # pixels per point at 100 dpi
_FONT, _TITLE, _SMALL = 10 * _PT, 12 * _PT, 8.33 * _PT


@dataclass(frozen=True)
class IntervalLine:
    """One line of the figure: its label, its point and interval (NaN: no point), its colour (a name of
    :data:`COLOURS`) and marker (``o`` a dot, ``D`` a diamond)."""

    label: str
    estimate: float
    low: float
    high: float
    colour: str = "tab:blue"
    marker: str = "o"


@dataclass(frozen=True)
class LegendEntry:
    """A legend line: a marker of ``colour`` (``filled`` or an outline) and its label."""

    label: str
    colour: str
    marker: str = "o"
    filled: bool = True


@dataclass(frozen=True)
class IntervalFigure:
    """Lines (drawn top to bottom in order) with their intervals on one x axis; ``xlim`` None scales it to the
    intervals (and zero when ``zero_line``) with 5% margins. ``tick_format`` writes a tick's label."""

    title: str
    xlabel: str
    lines: tuple[IntervalLine, ...]
    xlim: tuple[float, float] | None = None
    tick_format: Callable[[float], str] = field(default=lambda v: f"{v:g}", compare=False)
    zero_line: bool = False
    legend: tuple[LegendEntry, ...] = ()
    width: float = 7.0  # inches, as matplotlib's figsize (100 px an inch)

    @property
    def labels(self) -> list[str]:
        """The lines' labels, top to bottom."""
        return [line.label for line in self.lines]

    def _repr_html_(self) -> str:
        return f'<figure class="gk-figure">{figure_svg(self)}</figure>'

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """What a notebook keeps: the figure as an image (:func:`figure_img`), which an untrusted notebook shows."""
        return {"text/html": figure_img(self)}

    def __html__(self) -> str:
        return self._repr_html_()


def _limits(fig: IntervalFigure) -> tuple[float, float]:
    if fig.xlim is not None:
        return fig.xlim
    ends = [v for line in fig.lines for v in (line.low, line.high, line.estimate) if math.isfinite(v)]
    ends += [0.0] if fig.zero_line else []
    if not ends:
        return (-0.05, 0.05) if fig.zero_line else (0.0, 1.0)
    lo, hi = min(ends), max(ends)
    pad = 0.05 * (hi - lo) if hi > lo else 0.05
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float, length_px: float) -> list[float]:
    """The ticks matplotlib's default locator gives an axis ``length_px`` long: at most 9 intervals, one a 30 pt,
    each 1, 2, 2.5 or 5 times a power of ten (the smallest that fits), at its multiples within the axis."""
    bins = max(1, min(9, int(length_px / _PT / 30)))
    raw = (hi - lo) / bins
    scale = 10.0 ** math.floor(math.log10(raw))
    step = next(m * scale for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * scale >= raw * (1 - 1e-9))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return [round(k * step, 12) + 0.0 for k in range(first, last + 1)]  # + 0.0: no tick reads -0


def _columns(text: str) -> int:
    """How many label characters ``text`` is as wide as: a wide East Asian character counts two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _marker(x: float, y: float, marker: str, colour: str, filled: bool = True) -> dict[str, Any]:
    return {"x": x, "y": y, "marker": marker, "colour": COLOURS.get(colour, colour), "filled": filled}


def _legend(entries: Sequence[LegendEntry], width: float, top: float) -> list[dict[str, Any]]:
    """The legend's entries placed as matplotlib's ``ncols=2`` legend places them: two columns, filled down
    first, centred under the figure (a column as wide as its longest label, estimated)."""
    rows = math.ceil(len(entries) / 2)
    columns = [entries[:rows], entries[rows:]]
    widths = [max((_columns(e.label) for e in col), default=0) * CHAR_WIDTH * 0.85 + 40 for col in columns]
    x = width / 2 - sum(widths) / 2 + 10
    out = []
    for col, col_width in zip(columns, widths, strict=True):
        for row, e in enumerate(col):
            out.append({"label": e.label, "point": _marker(x, top + row * _SMALL * 1.7, e.marker, e.colour, e.filled)})
        x += col_width
    return out


def figure_img(fig: IntervalFigure) -> str:
    """The figure as ``<figure class="gk-figure">`` holding an ``<img>`` of :func:`figure_svg`'s document (a base64
    ``data:`` URI) whose alt text names the figure, its x axis and its lines."""
    alt = f"{fig.title}, {fig.xlabel}: {'; '.join(fig.labels)}"
    image = _data_image(str(figure_svg(fig)).encode("utf-8"), "image/svg+xml", alt)
    return f'<figure class="gk-figure">{image}</figure>'


def figure_svg(fig: IntervalFigure) -> HTMLBlock:
    """The figure as one self-contained SVG document (see the module doc)."""
    rows = max(1, len(fig.lines))
    longest = max((_columns(line.label) for line in fig.lines), default=0)
    left = 12 + longest * CHAR_WIDTH + 10
    # labels too long for the figure widen it (the page scales it down) rather than leave the axes no room
    width = max(fig.width * 100, left + _MIN_PLOT_WIDTH + 28)
    height = (0.42 * len(fig.lines) + (1.9 if fig.legend else 1.4)) * 100
    top, bottom = 10 + _TITLE * 1.6, 10 + _FONT * 3.2 + (math.ceil(len(fig.legend) / 2) * _SMALL * 1.7 + 8)
    x0, x1, y0, y1 = left, width - 28, top, height - bottom
    lo, hi = _limits(fig)

    def sx(v: float) -> float:
        return x0 + (v - lo) / (hi - lo) * (x1 - x0)

    band = (y1 - y0) / (rows - 1 + 0.8)
    lines = []
    for i, line in enumerate(fig.lines):
        y = y0 + band * (0.4 + i)
        shown = math.isfinite(line.estimate)
        low, high = (line.low, line.high) if shown and math.isfinite(line.low) else (line.estimate, line.estimate)
        lines.append(
            {
                "label": line.label,
                "y": y,
                "shown": shown,
                "low": sx(low) if shown else 0.0,
                "high": sx(high) if shown else 0.0,
                "point": _marker(sx(line.estimate) if shown else 0.0, y, line.marker, line.colour),
            }
        )
    ticks = [{"x": sx(v), "label": fig.tick_format(v)} for v in _ticks(lo, hi, x1 - x0)]
    legend = _legend(fig.legend, width, y1 + 10 + _FONT * 3.6)
    zero = sx(0.0) if fig.zero_line and lo <= 0.0 <= hi else None
    sizes = {"font": _FONT, "title_font": _TITLE, "small": _SMALL}
    page = templates().get_template("gk_figure.html.j2")
    return HTMLBlock(
        page.render(
            fig=fig,
            width=width,
            height=height,
            box=(x0, y0, x1, y1),
            lines=lines,
            ticks=ticks,
            zero=zero,
            legend=legend,
            **sizes,
        ).rstrip("\n")
    )


def interval_lines(
    labels: Sequence[str],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    style: Callable[[int], tuple[str, str]],
) -> tuple[IntervalLine, ...]:
    """:class:`IntervalLine` s from columns; ``style(i)`` gives line ``i``'s colour and marker."""
    return tuple(
        IntervalLine(str(label), float(est), float(lo), float(hi), *style(i))
        for i, (label, est, lo, hi) in enumerate(zip(labels, estimates, lows, highs, strict=True))
    )


__all__ = ["COLOURS", "IntervalFigure", "IntervalLine", "LegendEntry", "figure_img", "figure_svg", "interval_lines"]

publish(globals())
