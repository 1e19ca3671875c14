"""The site in a real browser: headless Chromium through playwright, network off.

The index is opened from file://; the test filters and sorts the table, checks that
it never scrolls sideways at 1280 px (a run whose problem is a long path included),
clicks through to a run's report, to a dataset's history page, from a point of a
trend plot to its run's report, to the baselines page (and, on a site without
baselines, its hint), and to a leaderboard page (from a site of benchmark runs). Every
request any page made must stay on file:// (or a data: image), from the browser's
request events and from ``performance.getEntries()``. Screenshots of the index, a
history page and a leaderboard are kept in tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from headless import VIEWPORT, chromium, not_local, record_requests, require_chromium
from pages_site import rendered_site

require_chromium()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
VISIBLE_ROWS = "Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => !r.hidden).length"
ENTRIES = "['navigation', 'resource'].flatMap(t => performance.getEntriesByType(t)).map(e => e.name)"
SCROLL_WIDTH = "document.scrollingElement.scrollWidth"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture()
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    p = context.new_page()
    p.requested = record_requests(p)
    try:
        yield p
    finally:
        context.close()


def _follow(page: Any, selector: str) -> None:
    """Click the first element matching ``selector`` and wait for the page it opens."""
    with page.expect_navigation():
        page.locator(selector).first.click()


def test_index_filters_sorts_and_links_to_a_report(page: Any) -> None:
    result, _, _ = rendered_site()
    page.goto(result.index.as_uri())
    assert page.title() == "Support <agent> history: runs"
    assert page.evaluate(VISIBLE_ROWS) == 4  # night-4, night-5, bad-json and the baseline main
    assert page.evaluate(SCROLL_WIDTH) <= 1280  # bad-json's problem names a long path: it wraps
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pages-index.png"), full_page=True)
    page.fill("#filter", "night-5")
    assert page.evaluate(VISIBLE_ROWS) == 1
    assert page.text_content("#shown") == "1"
    page.fill("#filter", "")
    page.select_option("#state", "corrupt")
    assert page.evaluate(VISIBLE_ROWS) == 1
    page.select_option("#state", "")
    first = "document.querySelector('#runs tbody tr').cells[0].textContent"
    page.locator("#runs thead th").first.click()  # sort by run, ascending
    assert page.evaluate(first) == "bad-json"
    page.locator("#runs thead th").first.click()  # and descending: by what the cell shows, the label first
    assert page.evaluate(first) == "model-a night-5"
    assert not_local(page.evaluate(ENTRIES)) == []
    _follow(page, "a[href='runs/night-4/report.html']")
    assert page.url.endswith("/runs/night-4/report.html")
    assert page.locator("table tr").count() > 5  # the rendered report
    assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)") is True
    assert not_local(page.evaluate(ENTRIES)) == []
    assert not_local(page.requested) == []


def test_history_page_plots_link_their_points_and_output_is_escaped(page: Any) -> None:
    result, _, _ = rendered_site()
    page.goto(result.index.as_uri())
    _follow(page, "a[href='datasets/support.html']")
    assert page.url.endswith("/datasets/support.html")
    assert page.locator("figure.trend svg").count() == 1 and page.evaluate(SCROLL_WIDTH) <= 1280
    legend = page.locator("figure.trend svg").text_content() or ""
    assert "model-a · prompt pppppppp" in legend  # the legend names the agent
    text = page.inner_text("body")
    assert '<script>alert("pwned")</script><img src=x onerror=alert(2)> & done' in text  # shown as text
    assert page.evaluate("Array.from(document.scripts).length") == 0
    assert page.locator("img[src=x]").count() == 0
    page.screenshot(path=str(ARTIFACTS / "pages-trend.png"), full_page=True)
    point = page.locator("figure.trend svg a", has=page.locator("title", has_text="night-5 · "))
    assert point.count() == 3  # one point per panel: overall, refunds, shipping
    with page.expect_navigation():
        point.first.click()
    assert page.url.endswith("/runs/night-5/report.html")
    page.goto((result.path / "baselines.html").as_uri())
    assert "main" in page.inner_text("body") and page.locator(".empty").count() == 0
    assert not_local(page.requested) == []
    assert any(u.startswith("file://") for u in page.requested)


def test_index_links_to_a_leaderboard_page_and_baselines_says_how_to_save_one(page: Any, tmp_path: Path) -> None:
    from leaderboard_site import HOSTILE_MODEL, HOSTILE_PREFIX, HOSTILE_RUN, hostile_group

    from goldenkit.pages import build_site
    from goldenkit.pages._html import slug

    hostile_group(tmp_path / "results")
    long = tmp_path / "results" / ("a-run-folder-whose-name-goes-on-" * 5)  # its problem names this path
    long.mkdir()
    (long / "run.json").write_text("{not json", encoding="utf-8")
    result = build_site(tmp_path / "site", tmp_path / "results", tmp_path / "baselines", render=False)
    page.goto(result.index.as_uri())
    rel = f"leaderboards/{slug(HOSTILE_PREFIX)}.html"
    _follow(page, f"a[href='{rel}']")
    assert page.url.endswith("/" + rel)
    rows = "Array.from(document.querySelectorAll('#leaderboard tbody tr')).map(r => r.cells[2].textContent)"
    assert page.evaluate(rows) == ["m-plain ok", f"{HOSTILE_MODEL} {HOSTILE_RUN}"]  # each run's label, then its id
    text = page.inner_text("body")
    assert HOSTILE_MODEL in text and f"Leaderboard {HOSTILE_PREFIX}" in text  # shown as text
    assert "indistinguishable from the leader" in text
    assert page.locator("#pairs tbody tr").count() == 1
    assert page.evaluate("Array.from(document.scripts).length + document.querySelectorAll('img').length") == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "pages-leaderboard.png"), full_page=True)
    _follow(page, "a[href='../index.html']")
    assert page.url.endswith("/site/index.html")
    assert page.evaluate(SCROLL_WIDTH) <= 1280
    _follow(page, "header a[href='baselines.html']")
    hint = page.locator(".empty")
    assert "No baseline saved yet." in hint.inner_text()
    assert page.locator(".empty pre code").inner_text().startswith("goldenkit baseline --baselines-dir ")
    assert not_local(page.evaluate(ENTRIES)) == []
    assert not_local(page.requested) == []
