"""leaderboard.html in headless Chromium with the network off (the checks of test_html_browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from leaderboard_fixtures import rendered_leaderboard
from test_html_browser import _console_problems, _dump_dom, _probe

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_leaderboard_page_renders_offline_without_errors(tmp_path: Path) -> None:
    dom, log = _dump_dom(rendered_leaderboard(), tmp_path)
    probe = _probe(dom)
    assert probe["errors"] == 0, log[-2000:]
    assert probe["images"] == 2 and probe["broken"] == 0  # the pass rates' intervals and the quality-cost frontier
    assert probe["rows"] >= 10  # table 3 + matrix 3 + slices 3, with headers
    assert _console_problems(log) == []
    assert "m-&lt;b&gt;strong&lt;/b&gt;" in dom
