"""Report rendering under hostile input: an interval figure whose labels are long still has a plot to draw in,
a site build reads a baseline again when it was rewritten in place with its old size and modification time, and
the explore widget keeps the stylesheet whatever its filters match."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from goldenkit._display import STYLE
from goldenkit.baselines import save_baseline
from goldenkit.pages import build_site
from goldenkit.report._explore import Explorer, ExploreWidget
from goldenkit.report._figure import IntervalFigure, IntervalLine
from goldenkit.results import read_run

DATA = Path(__file__).resolve().parent / "data" / "runs"


def _plot_box(svg: str) -> tuple[float, float, float]:
    """The figure's width and its axes frame's left edge and width (the last rect: the frame)."""
    width = float(re.search(r'<svg [^>]*width="([0-9.]+)"', svg).group(1))  # type: ignore[union-attr]
    x, w = re.findall(r'<rect x="([-0-9.]+)" y="[-0-9.]+" width="([-0-9.]+)"', svg)[-1]
    return width, float(x), float(w)


def test_a_long_label_leaves_the_plot_room_and_stays_inside_the_figure() -> None:
    label = "refunds / " + "a very long slice name " * 6 + "(b=1, c=0, n=6)"
    short = IntervalFigure("t", "x", (IntervalLine("a (n=3)", 0.5, 0.2, 0.8),), (-0.02, 1.02))
    long = IntervalFigure("t", "x", (IntervalLine(label, 0.5, 0.2, 0.8),), (-0.02, 1.02))
    width, left, plot = _plot_box(long._repr_html_())
    assert plot >= 300  # the axes keep a drawable width (it was negative: no frame, no bars, no ticks)
    assert left + plot <= width
    assert _plot_box(short._repr_html_())[0] == 700  # a figure whose labels fit keeps matplotlib's size


def test_a_label_of_wide_characters_gets_the_room_it_takes() -> None:
    label = "\u8fd4\u91d1\u3068\u914d\u9001\u306e\u554f\u3044\u5408\u308f\u305b (n=3)"  # CJK: two columns each
    fig = IntervalFigure("t", "x", (IntervalLine(label, 0.5, 0.2, 0.8),), (-0.02, 1.02))
    _, left, _ = _plot_box(fig._repr_html_())
    assert left >= (2 * 11 + len(" (n=3)")) * 7.5  # the frame starts right of the label (it was cut at the edge)


def _site(root: Path) -> Path:
    results, baselines = root / "results", root / "baselines"
    for name in ("base", "cand"):
        shutil.copytree(DATA / name, results / name)
    save_baseline(read_run(results / "base", results), "main", baselines_dir=baselines)
    return baselines / "main.json"


def test_a_baseline_rewritten_in_place_with_its_old_size_and_time_is_read_again(tmp_path: Path) -> None:
    baseline = _site(tmp_path)
    build_site(tmp_path / "site1", tmp_path / "results", tmp_path / "baselines")
    before = baseline.stat()
    text = baseline.read_text(encoding="utf-8")
    assert "model-base" in text
    baseline.write_text(text.replace("model-base", "model-BASE"), encoding="utf-8")  # same size
    os.utime(baseline, ns=(before.st_atime_ns, before.st_mtime_ns))  # same modification time
    assert (baseline.stat().st_size, baseline.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    build_site(tmp_path / "site2", tmp_path / "results", tmp_path / "baselines")  # a new folder: nothing reused
    page = (tmp_path / "site2" / "runs" / "cand" / "compare.html").read_text(encoding="utf-8")
    assert "model-BASE" in page and "model-base" not in page


def test_the_explore_widget_keeps_the_stylesheet_when_no_row_matches() -> None:
    explorer = Explorer(read_run(DATA / "base"), read_run(DATA / "cand"))
    widget = ExploreWidget(explorer)
    shown = [widget.banner, widget.summary, widget.table, widget.forest, widget.flips]
    assert sum(STYLE in part.value for part in shown) == 1  # once, as a notebook shows it
    explorer.set_filter(slice="shipping", tag="adversarial")  # no adversarial row ships
    widget.refresh()
    assert "No row matches the filters." in widget.table.value
    assert sum(STYLE in part.value for part in shown) == 1  # the banner above keeps its colours


def test_a_baseline_without_its_table_is_not_compared_with(tmp_path: Path) -> None:
    """A baseline whose .parquet is gone (deleted by hand) is listed as corrupt and no comparison is made
    against it; the rest of the site is written, and nothing raises."""
    from history_runs import build

    from goldenkit.history import scan
    from goldenkit.pages import build_site

    results, baselines = build(tmp_path / "all")
    small = tmp_path / "results"
    small.mkdir()
    shutil.copytree(results / "night-4", small / "night-4")
    (baselines / "main.parquet").unlink()
    listed = scan(small, baselines).frame()
    assert list(listed.loc[listed["kind"] == "baseline", "state"]) == ["corrupt"]
    result = build_site(tmp_path / "site", small, baselines)
    assert result.failures == [] and "runs/night-4/report.html" in result.rendered
    assert not (tmp_path / "site" / "runs" / "night-4" / "compare.html").exists()
