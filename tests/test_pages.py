"""goldenkit.pages: the static site (index, reports, history per dataset, baselines) and `goldenkit pages`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from history_runs import HOSTILE, build
from pages_site import rendered_site

from goldenkit.cli import main as cli_main
from goldenkit.errors import InfrastructureError
from goldenkit.notebooks import remote_references
from goldenkit.pages import STATE_FILE, build_site
from goldenkit.pages import site as site_mod
from goldenkit.pages.leaderboards import LeaderboardPages
from goldenkit.pages.views import Section


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
    assert history.count("data:image/svg+xml;base64,") == 2  # one figure per protocol (3 and 5 repeats)
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
    import goldenkit.notebooks

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise InfrastructureError("report.ipynb: kernel died")

    monkeypatch.setattr(goldenkit.notebooks, "run_notebook", broken)
    code = cli_main(["pages", "-o", str(tmp_path / "site"), "--results-dir", str(results), "--baselines-dir",
                     str(baselines)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 3
    assert "could not render runs/night-1/report.html: report.ipynb: kernel died" in out
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
