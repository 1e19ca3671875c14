"""goldenkit.pages: the static site (index, reports, history per dataset, baselines) and `goldenkit pages`."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
from history_runs import HOSTILE, build
from pages_site import rendered_site
from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main as cli_main
from goldenkit.errors import InfrastructureError
from goldenkit.history import trend
from goldenkit.notebooks import remote_references
from goldenkit.pages import STATE_FILE, _site as site_mod, build_site
from goldenkit.pages._leaderboards import LeaderboardPages
from goldenkit.pages._plots import trend_svg, x_axis
from goldenkit.pages._views import Section


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Every kind of run, built once into a site without rendering: (results, baselines, site)."""
    root = tmp_path_factory.mktemp("full")
    results, baselines = build(root / "in")
    result = build_site(root / "site", results, baselines, title="Support <agent>", render=False)
    assert result.failures == []
    return results, baselines, root / "site"


@pytest.fixture()
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A few runs of `support` (two versions, one incomplete) and a corrupt folder, plus the baseline."""
    results, baselines = build(tmp_path / "in")
    for name in os.listdir(results):
        if name not in ("night-1", "night-3", "partial-1", "bad-json"):
            shutil.rmtree(results / name)
    return results, baselines


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_the_site_has_every_page_and_nothing_remote(full: tuple[Path, Path, Path]) -> None:
    site = full[2]
    names = {p.relative_to(site).as_posix() for p in _pages(site)}
    assert {"index.html", "baselines.html", "datasets.html", "datasets/support.html"} <= names
    assert "datasets/fixture-support.html" in names
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        assert remote_references(text) == [], page
        assert "default-src 'none'" in text, page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Support &lt;agent&gt;" in index and "Support <agent>" not in index
    for rid in ("night-1", "live-1", "invalid-1", "partial-1", "resumed-1", "bad-json", "truncated", "orphan"):
        assert f">{rid}<" in index, rid
    assert index.count('data-state="corrupt"') == 5 and 'data-state="invalid"' in index
    assert "outcomes.jsonl:2: invalid JSON" in index


def test_model_output_and_notes_are_escaped(full: tuple[Path, Path, Path]) -> None:
    site = full[2]
    history = (site / "datasets" / "support.html").read_text(encoding="utf-8")
    escaped = "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; done"
    assert escaped in history
    assert HOSTILE not in history and "<img src=x" not in history
    assert history.count('<figure class="trend"><svg ') == 2  # one figure per protocol (3 and 5 repeats)
    baselines = (site / "baselines.html").read_text(encoding="utf-8")
    assert "release &lt;b&gt;1&lt;/b&gt;" in baselines and "<b>1</b>" not in baselines


def test_a_second_build_reuses_what_did_not_change(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(site, *dirs, render=False)
    again = build_site(site, *dirs, render=False)
    assert again.rendered == [] and "datasets/support.html" in again.reused
    state = json.loads((site / STATE_FILE).read_text())
    assert str(dirs[0] / "night-1") in state["runs"]
    with (dirs[0] / "partial-1" / "outcomes.jsonl").open("a") as fh:  # a run of `support` goes on
        fh.write((dirs[0] / "partial-1" / "outcomes.jsonl").read_text().splitlines()[0] + "\n")
    third = build_site(site, *dirs, render=False)
    assert third.rendered == ["datasets/support.html"]
    assert str(dirs[0] / "night-3") in json.loads((site / STATE_FILE).read_text())["runs"]


def test_a_run_folders_own_report_is_copied_while_it_is_up_to_date(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    results, baselines = dirs
    own = results / "night-1" / "report.html"
    own.write_text("<html><body>night-1 report</body></html>", encoding="utf-8")
    site = tmp_path / "site"
    first = build_site(site, results, baselines, render=False)
    assert first.copied == ["runs/night-1/report.html"]
    assert (site / "runs" / "night-1" / "report.html").read_text().endswith("night-1 report</body></html>")
    assert 'href="runs/night-1/report.html"' in (site / "index.html").read_text()
    newer = own.stat().st_mtime_ns + 10**9
    os.utime(results / "night-1" / "run.json", ns=(newer, newer))  # the run changed after its report
    second = build_site(site, results, baselines, render=False)
    assert second.copied == [] and 'href="runs/night-1/report.html"' not in (site / "index.html").read_text()


def test_a_deleted_run_loses_its_pages(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    results, baselines = dirs
    (results / "night-1" / "report.html").write_text("<html></html>", encoding="utf-8")
    site = tmp_path / "site"
    build_site(site, results, baselines, render=False)
    assert (site / "runs" / "night-1").is_dir()
    shutil.rmtree(results / "night-1")
    build_site(site, results, baselines, render=False)
    assert not (site / "runs" / "night-1").exists()
    assert ">night-1<" not in (site / "index.html").read_text()


def test_the_leaderboard_section_plugs_into_the_index(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    build_site(site, *dirs, render=False)
    assert "<h2>Leaderboards</h2>" not in (site / "index.html").read_text()
    seen = {}

    def hook(runs, site_dir, *, site_title, rule, previous):  # type: ignore[no-untyped-def]
        seen["runs"], seen["dir"] = len(runs), site_dir
        return LeaderboardPages([Section("support: 3 models", "leaderboards/support.html", "<top group>")])

    monkeypatch.setattr(site_mod, "leaderboard_sections", hook)
    build_site(site, *dirs, render=False)
    index = (site / "index.html").read_text()
    assert '<h2>Leaderboards</h2><ul><li><a href="leaderboards/support.html">support: 3 models</a>' in index
    assert "&lt;top group&gt;" in index and seen == {"runs": 5, "dir": site}


def test_a_report_that_cannot_be_rendered_is_exit_3_and_the_rest_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    results, baselines = build(tmp_path / "in")
    for name in os.listdir(results):
        if name not in ("night-1", "bad-json"):
            shutil.rmtree(results / name)
    shutil.rmtree(baselines)

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise InfrastructureError("the run key is unreadable")

    monkeypatch.setattr("goldenkit.report._run.run_key_table", broken)
    code = cli_main(
        ["pages", "-o", str(tmp_path / "site"), "--results-dir", str(results), "--baselines-dir", str(baselines)]
    )
    out = capsys.readouterr().out
    assert code == 3
    assert (
        "could not render runs/night-1/report.html: report page: step 3 (report.table_html(report.run_key_table(r), "
        "header=False)) raised InfrastructureError: the run key is unreadable" in out
    )
    assert (tmp_path / "site" / "index.html").is_file() and (tmp_path / "site" / "datasets" / "support.html").is_file()


def test_cli_pages_without_rendering(
    dirs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["pages", "-o", str(tmp_path / "s"), "--results-dir", str(dirs[0]), "--baselines-dir", str(dirs[1])]
    assert cli_main([*args, "--no-render", "--title", "Nightly"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert "<title>Nightly: runs</title>" in (tmp_path / "s" / "index.html").read_text()
    (tmp_path / "file").write_text("x")
    assert cli_main(["pages", "-o", str(tmp_path / "file"), "--no-render"]) == 1


@pytest.mark.slow
def test_reports_are_rendered_once_and_reused() -> None:
    result, results, baselines = rendered_site()
    assert sorted(result.rendered) == [
        "datasets/support.html",
        "runs/night-4/compare.html",
        "runs/night-4/report.html",
        "runs/night-5/report.html",
    ]
    assert result.failures == []
    site = result.path
    for page in _pages(site):
        assert remote_references(page.read_text(encoding="utf-8")) == [], page
    compare = (site / "runs" / "night-4" / "compare.html").read_text(encoding="utf-8")
    assert "night-4" in compare and "main" in compare
    report5 = (site / "runs" / "night-5" / "report.html").read_text(encoding="utf-8")
    assert '<script>alert("pwned")</script>' not in report5
    again = build_site(site, results, baselines, title="Support <agent> history")
    assert again.rendered == [] and again.copied == [] and len(again.reused) == 4


# --------------------------------------------------------------------------- history that reads

ROWS = [("r1", "refunds", ["PASS"]), ("r2", "refunds", ["FAIL"]), ("s1", "shipping", ["PASS"])]


def _runs(results: Path, starts: dict[str, str], models: dict[str, str] | None = None) -> None:
    """One-repeat runs of `support` started at the given times (run id -> ISO time), of the given models."""
    for rid, started in starts.items():
        man = manifest(rid, repeats=1, model_id=(models or {}).get(rid, "model-a"))
        man["started_at"] = started
        if rid.endswith("-b"):  # another prompt too
            man["agent_version"]["prompt_sha256"] = "b" * 64
        write_run(results, man, outcomes(ROWS, run_id=rid))


def test_runs_minutes_apart_get_a_time_axis_of_minutes(tmp_path: Path) -> None:
    _runs(tmp_path, {f"m-{i}": f"2026-11-30T10:0{3 * i}:00Z" for i in range(4)})
    axis = x_axis(trend("support", results_dir=tmp_path))
    assert axis.mode == "time"
    xs = sorted(axis.x.values())
    assert xs[-1] - xs[0] == pytest.approx(9 / (24 * 60))  # the span of the runs, not a day around them
    assert [round((b - a) * 24 * 60) for a, b in zip(xs, xs[1:], strict=False)] == [3, 3, 3]


def test_runs_close_together_among_far_ones_are_plotted_in_order_with_dates(tmp_path: Path) -> None:
    _runs(
        tmp_path,
        {
            "n-1": "2026-11-01T02:00:00Z",
            "n-2": "2026-11-02T02:00:00Z",
            "n-3": "2026-11-03T02:00:00Z",
            "rerun": "2026-11-03T02:04:00Z",
        },
    )
    axis = x_axis(trend("support", results_dir=tmp_path))
    assert axis.mode == "order"
    assert axis.x == {"n-1": 0.0, "n-2": 1.0, "n-3": 2.0, "rerun": 3.0}
    assert axis.labels == ["11-01 02:00", "11-02 02:00", "11-03 02:00", "11-03 02:04"]
    assert x_axis(trend("support", runs=["n-1"], results_dir=tmp_path)).mode == "order"  # one run


def _svg_runs(tmp_path: Path) -> pd.DataFrame:
    starts = {
        "a-1": "2026-11-01T02:00:00Z",
        "x-b": "2026-11-01T02:30:00Z",
        "a-2": "2026-11-02T02:00:00Z",
        "x2-b": "2026-11-02T02:30:00Z",
    }
    _runs(tmp_path, starts, models={"x-b": "model-<x>", "x2-b": "model-<x>"})
    return trend("support", results_dir=tmp_path)


def test_the_trend_plot_has_a_series_per_agent_and_links_each_point(tmp_path: Path) -> None:
    lines = _svg_runs(tmp_path)
    assert set(lines["agent"]) == {"model-a · prompt pppppppp", "model-<x> · prompt bbbbbbbb"}
    groups = ["(overall)", "refunds", "shipping"]
    links = {"a-1": "../runs/a-1/report.html", "x-b": "../runs/x-b/report.html"}
    svg = trend_svg(lines, "pass_rate", groups, links=links)
    assert svg.startswith("<svg ") and "<?xml" not in svg and "<metadata>" not in svg
    # the legend names both agents (matplotlib escapes its texts)
    assert "model-a · prompt pppppppp" in svg and "model-&lt;x&gt; · prompt bbbbbbbb" in svg and "<x>" not in svg
    for rid, href in links.items():  # one linked point per panel
        assert svg.count(f'<a xlink:href="{href}">') == len(groups), rid
    assert "a-2/report" not in svg  # a run without a report has no link
    assert "<title>a-1 · 2026-11-01 02:00 · model-a · prompt pppppppp · dataset 1.0.0</title>" in svg
    ids = re.findall(r'\bid="([^"]+)"', svg)
    prefix = ids[0].split("-")[0]
    assert len(ids) == len(set(ids)) and all(i.startswith(prefix + "-") for i in ids)
    refs = re.findall(r'(?:url\(#|xlink:href="#)([^)"]+)', svg)
    assert refs and set(refs) <= set(ids)  # every reference resolves inside this figure
    other = trend_svg(lines[lines["agent"] == "model-a · prompt pppppppp"], "pass_rate", groups)
    assert not set(ids) & set(re.findall(r'\bid="([^"]+)"', other))  # two figures on a page share no id
    assert trend_svg(lines, "pass_rate", groups, links=links) == svg  # the same figure, byte for byte


def test_the_history_page_links_points_to_reports_and_names_agents(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    results, baselines = dirs
    (results / "night-1" / "report.html").write_text("<html><body>night-1</body></html>", encoding="utf-8")
    site = tmp_path / "site"
    build_site(site, results, baselines, render=False)
    history = (site / "datasets" / "support.html").read_text(encoding="utf-8")
    assert history.count('<a xlink:href="../runs/night-1/report.html">') == 3  # overall, refunds, shipping
    assert "<th>agent</th>" in history and "model-a · prompt pppppppp" in history
    assert "One series per agent" in history


def test_the_empty_baselines_page_says_how_to_save_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results, baselines = build(tmp_path / "in")
    shutil.rmtree(baselines)
    build_site(tmp_path / "site", results, baselines, render=False)
    page = (tmp_path / "site" / "baselines.html").read_text(encoding="utf-8")
    assert "No baseline saved yet." in page
    command = re.search(r"<pre><code>(.*?)</code></pre>", page, re.S)
    assert command is not None
    import html

    args = shlex.split(html.unescape(command.group(1)))
    # the newest run that can be a baseline: VALID, complete, no ERROR (the night-* runs have some)
    assert args[:2] == ["goldenkit", "baseline"] and args[args.index("save") + 1] == "clean-4"
    assert cli_main(args[1:]) == 0  # the command as shown saves it
    assert "saved baseline main from run clean-4" in capsys.readouterr().out
    build_site(tmp_path / "site", results, baselines, render=False)
    page = (tmp_path / "site" / "baselines.html").read_text(encoding="utf-8")
    assert "No baseline saved yet." not in page and 'id="baseline-main"' in page
