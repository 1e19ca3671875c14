"""The site in a real browser: headless Chromium over the DevTools protocol, network off.

The index is opened from file://; the test filters and sorts the table, clicks
through to a run's report, to a dataset's history page and to a leaderboard
page (from a site of benchmark runs), and checks that
every request any page made stayed on file:// (or a data: image), from
Chromium's network events and from ``performance.getEntries()``. Screenshots
of the index, a history page and a leaderboard are kept in tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cdp import Browser
from pages_site import rendered_site

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
if CHROMIUM is None:
    pytest.skip(
        "headless Chromium not found (/usr/bin/chromium); install Debian's chromium package "
        "(apt-get install -y chromium) to run the browser tests",
        allow_module_level=True,
    )

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
VISIBLE_ROWS = "Array.from(document.querySelectorAll('#runs tbody tr')).filter(r => !r.hidden).length"
ENTRIES = "['navigation', 'resource'].flatMap(t => performance.getEntriesByType(t)).map(e => e.name)"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(str(CHROMIUM), tmp_path_factory.mktemp("chromium"))
    try:
        yield b
    finally:
        b.close()


def _local(urls: list[str]) -> list[str]:
    """The URLs that are not file:// pages or data: images (what must be empty)."""
    return [u for u in urls if not (u.startswith("file://") or u.startswith("data:") or u == "about:blank")]


def test_index_filters_sorts_and_links_to_a_report(browser: Browser) -> None:
    result, _, _ = rendered_site()
    browser.navigate(result.index.as_uri())
    assert browser.evaluate("document.title") == "Support <agent> history: runs"
    assert browser.evaluate(VISIBLE_ROWS) == 4  # night-4, night-5, bad-json and the baseline main
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / "pages-index.png")
    browser.evaluate("var f = document.getElementById('filter'); f.value = 'night-5';"
                     "f.dispatchEvent(new Event('input'))")  # fmt: skip
    assert browser.evaluate(VISIBLE_ROWS) == 1
    assert browser.evaluate("document.getElementById('shown').textContent") == "1"
    browser.evaluate("var f = document.getElementById('filter'); f.value = ''; f.dispatchEvent(new Event('input'));"
                     "var s = document.getElementById('state'); s.value = 'corrupt';"
                     "s.dispatchEvent(new Event('change'))")  # fmt: skip
    assert browser.evaluate(VISIBLE_ROWS) == 1
    browser.evaluate("var s = document.getElementById('state'); s.value = ''; s.dispatchEvent(new Event('change'))")
    browser.evaluate("document.querySelectorAll('#runs thead th')[0].click()")  # sort by run, ascending
    first = "document.querySelector('#runs tbody tr').cells[0].textContent"
    assert browser.evaluate(first) == "bad-json"
    browser.evaluate("document.querySelectorAll('#runs thead th')[0].click()")  # and descending
    assert browser.evaluate(first) == "night-5"
    assert _local(browser.evaluate(ENTRIES)) == []
    browser.click_and_wait("a[href='runs/night-4/report.html']")
    assert browser.evaluate("location.href").endswith("/runs/night-4/report.html")
    assert browser.evaluate("document.querySelectorAll('table tr').length") > 5  # the rendered report
    assert browser.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)") is True
    assert _local(browser.evaluate(ENTRIES)) == []
    assert _local(browser.requested_urls()) == []


def test_history_page_has_decoded_plots_and_escaped_output(browser: Browser) -> None:
    result, _, _ = rendered_site()
    browser.navigate(result.index.as_uri())
    browser.click_and_wait("a[href='datasets/support.html']")
    assert browser.evaluate("location.href").endswith("/datasets/support.html")
    images = "Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)"
    assert browser.evaluate(images) == [True]
    text = browser.evaluate("document.body.innerText")
    assert '<script>alert("pwned")</script><img src=x onerror=alert(2)> & done' in text  # shown as text
    assert browser.evaluate("Array.from(document.scripts).length") == 0
    assert browser.evaluate("document.querySelectorAll('img[src=x]').length") == 0
    browser.screenshot(ARTIFACTS / "pages-trend.png")
    browser.click_and_wait("a[href='../runs/night-5/report.html']")
    assert browser.evaluate("location.href").endswith("/runs/night-5/report.html")
    browser.navigate((result.path / "baselines.html").as_uri())
    assert "main" in browser.evaluate("document.body.innerText")
    assert _local(browser.requested_urls()) == []
    assert all(u.startswith(("file://", "data:", "about:")) for u in browser.requested_urls())
    assert any(u.startswith("file://") for u in browser.requested_urls())


def test_index_links_to_a_leaderboard_page(browser: Browser, tmp_path: Path) -> None:
    from leaderboard_site import HOSTILE_MODEL, HOSTILE_PREFIX, HOSTILE_RUN, hostile_group

    from goldenkit.pages import build_site
    from goldenkit.pages.html import slug

    hostile_group(tmp_path / "results")
    result = build_site(tmp_path / "site", tmp_path / "results", tmp_path / "baselines", render=False)
    browser.navigate(result.index.as_uri())
    rel = f"leaderboards/{slug(HOSTILE_PREFIX)}.html"
    browser.click_and_wait(f"a[href='{rel}']")
    assert browser.evaluate("location.href").endswith("/" + rel)
    rows = "Array.from(document.querySelectorAll('#leaderboard tbody tr')).map(r => r.cells[2].textContent)"
    assert browser.evaluate(rows) == ["ok", HOSTILE_RUN]
    text = browser.evaluate("document.body.innerText")
    assert HOSTILE_MODEL in text and f"Leaderboard {HOSTILE_PREFIX}" in text  # shown as text
    assert "indistinguishable from the leader" in text
    assert browser.evaluate("document.querySelectorAll('#pairs tbody tr').length") == 1
    assert browser.evaluate("Array.from(document.scripts).length + document.querySelectorAll('img').length") == 0
    ARTIFACTS.mkdir(exist_ok=True)
    browser.screenshot(ARTIFACTS / "pages-leaderboard.png")
    browser.click_and_wait("a[href='../index.html']")
    assert browser.evaluate("location.href").endswith("/site/index.html")
    assert _local(browser.evaluate(ENTRIES)) == []
    assert _local(browser.requested_urls()) == []
