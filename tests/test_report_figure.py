"""The report's interval figures drawn as inline SVG (goldenkit.report._figure): the ticks matplotlib would put,
a line without a point, labels as text, and the page showing what the notebook displays."""

from __future__ import annotations

import base64
import math
import re

import pytest
from matplotlib.ticker import MaxNLocator

from goldenkit import report
from goldenkit.report._figure import _PT, IntervalFigure, IntervalLine, LegendEntry, _ticks, figure_svg
from goldenkit.report._page import shown_html


@pytest.mark.parametrize(
    ("lo", "hi", "length"),
    [(-0.02, 1.02, 540), (-0.3517, 0.3171, 412), (-0.05, 0.05, 400), (0.0, 1.0, 100), (-0.9, 0.01, 300)],
)
def test_ticks_are_those_of_matplotlibs_default_locator(lo: float, hi: float, length: float) -> None:
    bins = max(1, min(9, int(length / _PT / 30)))
    expected = [float(v) for v in MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)]
    inside = [v for v in expected if lo - 1e-12 <= v <= hi + 1e-12]
    got = _ticks(lo, hi, length)
    assert len(got) == len(inside) and all(math.isclose(a, b, abs_tol=1e-9) for a, b in zip(got, inside, strict=True))
    assert all(math.copysign(1.0, v) > 0 for v in got if v == 0)  # no -0 tick


def test_a_line_without_a_point_keeps_its_label_and_labels_are_text() -> None:
    hostile = 'refunds<script>alert("x")</script>'
    fig = IntervalFigure(
        "t <b>",
        "x",
        (IntervalLine(f"{hostile} (n=3)", 0.5, 0.2, 0.8), IntervalLine("empty (n=0)", math.nan, math.nan, math.nan)),
        (0.0, 1.0),
        legend=(LegendEntry("overall line", "black", "D", filled=False),),
    )
    svg = fig._repr_html_()
    drawn = base64.b64decode(fig._repr_mimebundle_()["text/html"].split("base64,")[1].split('"')[0]).decode()
    assert drawn in svg and "refunds&lt;script&gt;" in drawn  # the image's document escapes the labels too
    alt = fig._repr_mimebundle_()["text/html"].split('alt="')[1].split('"')[0]
    assert "<" not in alt and "refunds&lt;script&gt;alert(&quot;x&quot;)" in alt
    assert "<script>" not in svg and "<b>" not in svg and "refunds&lt;script&gt;" in svg
    assert svg.count("<circle ") == 1 and ">empty (n=0)</text>" in svg  # no point for the empty line
    assert "nan" not in svg.lower()
    assert '<polygon points="' in svg and 'fill="none" stroke="#000000"' in svg  # the legend's outline diamond
    numbers = [float(n) for n in re.findall(r'(?:x|y|x1|x2|y1|y2|cx|cy)="(-?[\d.]+)"', svg)]
    assert numbers and min(numbers) >= 0 and max(numbers) <= 700  # drawn inside the figure


def test_the_page_embeds_what_the_notebook_displays() -> None:
    import pandas as pd

    table = pd.DataFrame(
        {"slice": ["a", "(overall)"], "p_hat": [0.5, 0.5], "ci_low": [0.1, 0.2], "ci_high": [0.9, 0.8], "n": [2, 2]}
    )
    fig = report.pass_rate_figure(table)
    assert shown_html(fig) == fig._repr_html_() == f'<figure class="gk-figure">{figure_svg(fig)}</figure>'
    # a notebook keeps the same SVG document as an image (JupyterLab shows it in a notebook it does not trust)
    shown = fig._repr_mimebundle_()["text/html"]
    uri = re.fullmatch(
        r'<figure class="gk-figure"><img alt="([^"]*)" src="data:image/svg\+xml;base64,([^"]+)"></figure>', shown
    )
    assert uri is not None and base64.b64decode(uri.group(2)).decode("utf-8") == str(figure_svg(fig))
    assert uri.group(1) == f"{fig.title}, {fig.xlabel}: a (n=2); (overall) (n=2)"
    assert [line.colour for line in fig.lines] == ["tab:blue", "black"]
