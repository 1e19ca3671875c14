"""The HTML reports in a real browser: headless Chromium, network off.

Each page is opened from a file:// URL with every host name unresolvable and a
dead proxy, so anything it tried to fetch would fail and be logged. A copy of
the page gets a small probe script (the report itself carries none) that
records script errors and whether every image decoded; the DOM Chromium dumps
is then checked for the tables, the decoded plot images and the probe's verdict.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it when
missing); where it is absent the tests are skipped saying so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_fixtures import rendered

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
if CHROMIUM is None:
    pytest.skip(
        "headless Chromium not found (/usr/bin/chromium); install Debian's chromium package "
        "(apt-get install -y chromium) to run the browser tests",
        allow_module_level=True,
    )

PROBE_HEAD = """<script>
window.__gkErrors = [];
window.addEventListener('error', function (e) { window.__gkErrors.push(String(e.message || e.type)); }, true);
</script>"""
PROBE_TAIL = """<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
  var rows = document.querySelectorAll('table tr').length;
  var figures = Array.prototype.slice.call(document.querySelectorAll('figure.gk-figure > svg, figure.gk-figure > img'));
  var drawn = figures.filter(function (f) {
    return f.tagName === 'IMG' ? f.complete && f.naturalWidth > 0 : f.getBBox().width > 0;
  }).length;
  document.body.setAttribute('data-gk-probe',
    'images=' + imgs.length + ' broken=' + bad + ' figures=' + figures.length + ' drawn=' + drawn +
    ' rows=' + rows + ' errors=' + window.__gkErrors.length);
});
</script>"""


def _dump_dom(html: Path, tmp_path: Path) -> tuple[str, str]:
    """Open a probed copy of ``html`` in headless Chromium with the network off; return (DOM, log)."""
    text = html.read_text(encoding="utf-8")
    probed = tmp_path / html.name
    probed.write_text(text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_TAIL + "</body>", 1))
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--dump-dom",
        probed.as_uri(),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if proc.returncode != 0 and not proc.stdout:
        pytest.fail(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout, proc.stderr


def _probe(dom: str) -> dict[str, int]:
    m = re.search(r'data-gk-probe="([^"]*)"', dom)
    assert m, "the probe did not run: the page did not finish loading"
    return {k: int(v) for k, v in (part.split("=") for part in m.group(1).split())}


def _console_problems(log: str) -> list[str]:
    return [
        line
        for line in log.splitlines()
        if "CONSOLE" in line and ("Uncaught" in line or "Failed to load resource" in line or "Error" in line)
    ]


@pytest.mark.parametrize(
    ("key", "images", "figures", "min_rows"),
    [
        ("report", 1, 1, 30),  # the pass rate figure, an SVG image
        ("compare", 1, 1, 10),  # the forest plot, an SVG image
        ("audit", 0, 0, 8),
        ("coverage", 1, 0, 6),
        ("compare_invalid", 0, 0, 3),
    ],
)
def test_page_renders_offline_without_errors(
    tmp_path: Path, key: str, images: int, figures: int, min_rows: int
) -> None:
    dom, log = _dump_dom(rendered()[key], tmp_path)
    probe = _probe(dom)
    assert probe["errors"] == 0, log[-2000:]
    assert probe["images"] == images and probe["broken"] == 0
    assert probe["figures"] == probe["drawn"] == figures
    assert probe["rows"] >= min_rows
    assert _console_problems(log) == []


def test_model_output_shows_as_text_not_markup(tmp_path: Path) -> None:
    dom, _ = _dump_dom(rendered()["compare"], tmp_path)
    # the response is text inside a <pre>: serialized back escaped, never as an element
    assert "Sure! &lt;script&gt;alert(1)&lt;/script&gt; Your refund is on its way." in dom
    assert "<script>alert(1)</script>" not in dom


# --------------------------------------------------------------------------- what people see

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
#: per table of the page: [header texts, [text-align of each cell of its first body row]]
TABLES = """Array.from(document.querySelectorAll('table.gk-table')).map(t => [
  Array.from(t.querySelectorAll('thead th')).map(h => h.textContent),
  Array.from((t.querySelector('tbody tr') || {children: []}).children).map(c => getComputedStyle(c).textAlign)])"""
FIRST_BANNER = (
    "(() => { const b = document.querySelector('.gk-banner'); return b ? [b.className, b.textContent] : null; })()"
)


@pytest.mark.parametrize("key", ["report", "compare", "compare_invalid", "audit", "coverage"])
def test_pages_read_as_made_for_people(key: str) -> None:
    """Each page in Chromium at 1280 px, kept as tests/artifacts/report-<key>.png: it leads with its verdict,
    text cells are left-aligned and numbers right-aligned, and no table widens the page."""
    from headless import VIEWPORT, chromium, require_chromium

    require_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(rendered()[key].as_uri())
        page.screenshot(path=str(ARTIFACTS / f"report-{key}.png"), full_page=True)
        tables = page.evaluate(TABLES)
        banner = page.evaluate(FIRST_BANNER)
        wide = page.evaluate("document.scrollingElement.scrollWidth > window.innerWidth")
    assert not wide  # a wide table scrolls inside its own box
    # report.html: the run's quality first (15 of 22 rows pass, no slice at 0%: neutral, never green)
    first = {"report": "gk-banner-info", "compare": "gk-banner-ok", "compare_invalid": "gk-banner-warn"}
    if key in first:
        assert banner is not None and first[key] in banner[0]
        assert banner[1].startswith("gate ") == key.startswith("compare")  # compare.html: the gate's decision first
        assert banner[1].startswith("QUALITY: ") == (key == "report")
    assert tables or key == "audit"
    assert key == "audit" or any("right" in aligns for _, aligns in tables)  # numbers are right-aligned
    for heads, aligns in tables:
        assert "" not in heads[1:] and "field" not in heads  # no numbered index, no stray header
        assert set(aligns) <= {"left", "right"} and (not aligns or aligns[0] == "left")  # a row starts with text


#: per table of the page: [its scrollWidth, the width of its box, the text of its first header]
WIDTHS = """Array.from(document.querySelectorAll('table.gk-table')).map(t => [
  t.scrollWidth, t.parentElement.clientWidth, (t.querySelector('th') || {textContent: ''}).textContent])"""


@pytest.mark.parametrize("key", ["compare", "report"])
def test_tables_wrap_to_1280_px_and_clip_nothing(key: str) -> None:
    """At a 1280 px viewport every table fits its box (cells wrap; nothing scrolls out of sight), compare.html's
    per-slice table with its 14 columns included."""
    from headless import VIEWPORT, chromium, require_chromium

    require_chromium()
    with chromium() as browser:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(rendered()[key].as_uri())
        widths = page.evaluate(WIDTHS)
    assert widths
    if key == "compare":
        assert any(head == "slice" for _, _, head in widths)  # the per-slice table is among them
    for scroll, box, head in widths:
        assert scroll <= VIEWPORT["width"] and scroll <= box + 1, (head, scroll, box)
