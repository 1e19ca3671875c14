"""The pages people read: the decision first, every table formatted for people, and the site's reports
made without a kernel or a notebook, holding what ``goldenkit report``'s hold.

The rendered pages are those of report_fixtures (``goldenkit report`` through papermill, plus the audit,
coverage and an invalid comparison), a leaderboard, the report of a run whose agent counts no tokens,
and the pages of a site built over a few runs.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from leaderboard_site import benchmark_run
from pages_site import rendered_site
from report_fixtures import DATA, rendered
from report_page_content import page_content
from run_factory import manifest, outcomes, write_run

from goldenkit import report
from goldenkit._scrub import secrets_in_use
from goldenkit.errors import GoldenkitError, InputError
from goldenkit.notebooks import execute_notebook
from goldenkit.pages import _site as site_mod, build_site

#: what raw pandas output leaves in a page: a missing float, a missing integer, a float printed with 6 decimals
RAW = ("NaN", "<NA>", ".000000")


def visible_text(page: str) -> str:
    """What a reader sees: the page without its scripts, styles and tags (attributes such as image data out)."""
    body = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", page)
    return html.unescape(re.sub(r"(?s)<[^>]*>", " ", body))


@pytest.fixture(scope="module")
def extra_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A leaderboard page (its notebook) and the report of a run without token counts (a callable agent)."""
    root = tmp_path_factory.mktemp("pages")
    runs = [benchmark_run(root / "results", f"m{i}", "support", passed, 20) for i, passed in enumerate((18, 12, 15))]
    data = [("a", "refunds", ["PASS", "PASS"]), ("b", "refunds", ["FAIL", "PASS"]), ("c", "billing", ["ERROR"] * 2)]
    frame = outcomes(data, run_id="callable")
    frame["tokens_in"] = frame["tokens_out"] = None
    frame["latency_ms"] = 400.0
    callable_run = write_run(root / "results", manifest("callable", repeats=2), frame)
    board = execute_notebook("leaderboard", {"runs": [str(r) for r in runs]}, root / "leaderboard").html
    assert board is not None
    (root / "callable.html").write_text(report.run_page(callable_run), encoding="utf-8")
    return {"leaderboard": board, "callable": root / "callable.html"}


@pytest.mark.slow
def test_compare_html_leads_with_the_decision() -> None:
    text = visible_text(rendered()["compare"].read_text(encoding="utf-8"))
    order = ["Paired comparison", "gate PASSED", "COMPARABLE: ", "Gate rules", "b (broke)", "Flip list"]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    page = rendered()["compare"].read_text(encoding="utf-8")
    first = re.search(r'class="gk-banner gk-banner-(\w+)"[^>]*>([^<]*)', page)
    assert first is not None and first.group(1) == "ok" and first.group(2).startswith("gate PASSED")
    assert 'class="gk-banner gk-banner-info">COMPARABLE: ' in page  # comparability: a statement, not a verdict
    invalid = rendered()["compare_invalid"].read_text(encoding="utf-8")
    first = re.search(r'class="gk-banner gk-banner-(\w+)"[^>]*>([^<]*)', invalid)
    assert first is not None and first.group(1) == "warn" and "gate NOT EVIDENCE" in first.group(2)
    assert "<li>baseline.comparable: baseline not comparable" in invalid  # the failing rule, under the decision


@pytest.mark.slow
def test_no_page_shows_raw_pandas_output(extra_pages: dict[str, Path]) -> None:
    pages = {key: rendered()[key] for key in ("report", "compare", "compare_invalid", "audit", "coverage")}
    pages.update(extra_pages)
    result, _, _ = rendered_site()
    pages.update({f"site {p.relative_to(result.path)}": p for p in sorted(result.path.rglob("*.html"))})
    assert any(name.startswith("site runs/") for name in pages)  # the site's own rendered reports
    for name, path in pages.items():
        text = visible_text(path.read_text(encoding="utf-8"))
        found = [token for token in RAW if token in text]
        assert found == [], f"{name}: {found}"
    callable_text = visible_text(extra_pages["callable"].read_text(encoding="utf-8"))
    assert "tokens in" in callable_text and " 400 " in callable_text  # a dash, never <NA>, and no 400.0
    audit = rendered()["audit"].read_text(encoding="utf-8")
    assert "No row marked yet: mark failing rows above" in audit  # the empty label-error table says what fills it
    report = rendered()["report"].read_text(encoding="utf-8")
    assert "<th>field</th>" not in report and "<th>value</th>" not in report  # the run key: no stray header
    assert '<table class="dataframe' not in report and '<table class="dataframe' not in audit.split("Failing rows")[1]


@pytest.mark.slow
@pytest.mark.parametrize("key", ["report", "compare", "compare_invalid"])
def test_pages_show_what_goldenkit_report_shows(key: str) -> None:
    """The site's page of the same parameters: the same headings, banners, tables, figures and text."""
    page = rendered()[key]
    executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    parameters = dict(executed.metadata["papermill"]["parameters"])
    title = html.unescape(re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    ours = site_mod._render_report(page.stem, parameters, title, site_title="site")
    theirs, mine = page_content(page.read_text(encoding="utf-8")), page_content(ours)
    assert mine.headings == theirs.headings and len(mine.headings) >= 7
    assert mine.banners == theirs.banners and mine.banners
    assert mine.tables == theirs.tables and len(mine.tables) >= (2 if key == "compare_invalid" else 6)
    assert mine.figures == theirs.figures and len(mine.figures) == (0 if key == "compare_invalid" else 1)
    assert mine.text == theirs.text
    assert f"<title>{html.escape(title)}</title>" in ours and "<h1" in ours


def test_page_content_tells_pages_apart() -> None:
    """The comparison above can fail: a table cell, a figure or a banner's tone that differs is seen."""
    body = report.run_page(str(DATA / "cand"))
    base = page_content(body)
    assert page_content(body.replace("<td>refunds</td>", "<td>refund</td>", 1)).tables != base.tables
    assert page_content(body.replace('<circle cx="', '<circle cx="1', 1)).figures != base.figures  # a point moved
    assert page_content(body.replace("gk-banner gk-banner-info", "gk-banner gk-banner-ok", 1)).banners != base.banners
    assert page_content(body.replace("<h2", "<h3", 1)).headings != base.headings


@pytest.mark.parametrize("key", ["report", "compare"])
def test_the_stylesheet_is_carried_once_by_a_page_and_by_a_notebook(key: str) -> None:
    """The tables, banners and lists carry no stylesheet of their own: the site's shell carries it once, an
    exported notebook once (the output of report.setup_notebook()), and both are styled by it."""
    page = rendered()[key]
    executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    parameters = dict(executed.metadata["papermill"]["parameters"])
    body = report.layout_page(report.LAYOUTS[key], parameters)
    assert "<style" not in body and 'class="gk-banner gk-banner-' in body
    rule = ".gk-banner-ok {"  # a rule of goldenkit.css, which appears once wherever the stylesheet is
    ours = site_mod._render_report(key, parameters, "t", site_title="site")
    exported = page.read_text(encoding="utf-8")
    assert ours.count(rule) == 1 and exported.count(rule) == 1
    assert ours.count('<table class="gk-table">') == exported.count('<table class="gk-table">') >= 2


def test_a_site_page_masks_the_callers_secrets_and_a_failing_page_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "zq-9f8e7d6c5b4a-secret"
    frame = outcomes(
        [("a", "refunds", ["PASS"]), ("b", "refunds", ["FAIL"]), ("c", "refunds", ["ERROR"])], run_id="leaky"
    )
    failed = {"contract": {"passed": False, "score": 0.0, "reason": f"quoted the key {secret}", "error": False}}
    frame["graders"] = [failed if v == "FAIL" else g for v, g in zip(frame["verdict"], frame["graders"], strict=True)]
    # the ERROR's reason is shown as the provider gave it (findings are value-free): the page masks the key
    frame["detail"] = [
        f"HTTP 500 for key {secret}" if v == "ERROR" else d
        for v, d in zip(frame["verdict"], frame["detail"], strict=True)
    ]
    results = tmp_path / "results"
    for i in range(3):  # the key as a file could hold it
        write_run(results, manifest(f"leaky-{i}"), frame.assign(run_id=f"leaky-{i}"), raw=True)
    monkeypatch.setattr(site_mod, "POOL_MIN", 2)  # three pages: on worker processes, not in this process
    with secrets_in_use(secret):
        result = build_site(tmp_path / "site", results, tmp_path / "baselines", processes=None)
    assert [p for p in result.rendered if p.startswith("runs/")] == [f"runs/leaky-{i}/report.html" for i in range(3)]
    for i in range(3):
        page = (tmp_path / "site" / "runs" / f"leaky-{i}" / "report.html").read_text(encoding="utf-8")
        assert result.failures == [] and "Why rows fail" in page and "HTTP 500 for key" in page
        assert secret not in page and "***" in page  # the worker knew the caller's secret
    with pytest.raises(InputError, match=r"^report page: step 1 \(r = read_run\(run, results_dir\)\) raised .*most"):
        report.run_page(str(results / "leaky-0"), rule="most")
    with pytest.raises(InputError, match=r"report page: unknown parameter 'rules' \(known: run, results_dir, rule"):
        report.run_page(str(results / "leaky-0"), rules="all")

    def unreadable(*_: object) -> None:
        raise InputError("red rows unreadable")

    monkeypatch.setattr("goldenkit.report._run.red_rows_block", unreadable)  # the page's last step
    monkeypatch.setattr(site_mod, "POOL_MIN", 24)  # in this process, where the patch is
    shutil.rmtree(results / "leaky-2")
    shutil.rmtree(results / "leaky-1")
    build = build_site(tmp_path / "site2", results, tmp_path / "baselines")
    assert build.failures == [
        "runs/leaky-0/report.html: report page: step 11 (report.red_rows_block(outcomes)) raised InputError: "
        "red rows unreadable"
    ]
    assert not (tmp_path / "site2" / "runs" / "leaky-0").exists()  # a page that failed is not written, half or whole


def test_a_step_that_raises_keeps_goldenkits_error_and_names_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    from goldenkit.errors import InfrastructureError

    def broken(*_: object, **__: object) -> None:
        raise InfrastructureError("the store is gone\nsecond line")

    monkeypatch.setattr("goldenkit.report._run.run_key_table", broken)
    with pytest.raises(InfrastructureError) as raised:
        report.run_page(str(DATA / "cand"))
    assert str(raised.value) == (
        "report page: step 3 (report.table_html(report.run_key_table(r), header=False)) raised "
        "InfrastructureError: the store is gone"
    )
    monkeypatch.setattr("goldenkit.report._run.run_key_table", lambda run: 1 / 0)
    with pytest.raises(GoldenkitError, match=r"step 3 .* raised ZeroDivisionError: division by zero"):
        report.run_page(str(DATA / "cand"))


def test_the_notebooks_are_written_from_the_layout_the_pages_follow() -> None:
    """Each code cell of report.ipynb and compare.ipynb is a step of the layout, in order, and each markdown
    cell a heading of the page."""
    for name in ("report", "compare"):
        nb = nbformat.read(Path(__file__).resolve().parents[1] / "notebooks" / f"{name}.ipynb", as_version=4)
        layout = report.LAYOUTS[name]
        assert [(c.cell_type == "markdown", c.source) for c in nb.cells] == [
            (kind == "md", text) for kind, text in layout.cells()
        ]
        steps = [part.source() for part in layout.body if not hasattr(part, "heading")]
        assert steps and all(step in [c.source for c in nb.cells] for step in steps)


def test_the_pages_batch_is_the_reports_of_goldenkit_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without rendering a single page: site.py gives the pages what goldenkit report gives the notebooks."""
    results = tmp_path / "results"
    run = write_run(results, manifest("night"), outcomes([("a", "refunds", ["PASS"])], run_id="night"))
    seen: list[tuple[str, dict[str, object], str]] = []

    def record(name: str, parameters: dict[str, object], title: str, *, site_title: str) -> str:
        seen.append((name, parameters, title))
        raise GoldenkitError("not rendered in this test")

    monkeypatch.setattr(site_mod, "_render_report", record)
    result = build_site(tmp_path / "site", results, tmp_path / "baselines")
    # the run's label (its model here) first, then its id
    assert [(name, title) for name, _, title in seen] == [("report", "goldenkit report: model-a (night)")]
    assert seen[0][1] == {"run": str(run.resolve()), "results_dir": str(results), "rule": "majority"}
    assert result.failures == ["runs/night/report.html: not rendered in this test"]


def test_build_site_from_python_renders_in_this_process_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spawned worker imports the caller's ``__main__``: a script without its guard would run its own work
    (its model calls too) again in each worker. So a build from Python renders here unless it asks for
    processes; ``goldenkit pages`` asks for one per core."""
    from concurrent import futures

    def no_pool(*_: object, **__: object) -> None:
        raise AssertionError("a worker process was started")

    results = tmp_path / "results"
    frame = outcomes([("a", "refunds", ["PASS"]), ("b", "refunds", ["FAIL"])], run_id="r")
    for i in range(3):
        write_run(results, manifest(f"r-{i}"), frame.assign(run_id=f"r-{i}"), raw=True)
    monkeypatch.setattr(site_mod, "POOL_MIN", 2)
    monkeypatch.setattr(futures, "ProcessPoolExecutor", no_pool)
    result = build_site(tmp_path / "site", results, tmp_path / "baselines")
    assert result.failures == [] and len([p for p in result.rendered if p.startswith("runs/")]) == 3
    with pytest.raises(AssertionError, match="worker process was started"):
        build_site(tmp_path / "site2", results, tmp_path / "baselines", processes=2)
