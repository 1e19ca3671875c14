"""Headless Chromium (Debian's ``chromium`` package) driven through playwright, for the browser tests.

Playwright drives the system Chromium (``executable_path``; playwright's own browser
builds are never downloaded). The network is off for the page: every host name but
127.0.0.1 is unresolvable, and :func:`record_requests` keeps every URL a page asks
for, so a test can check that nothing left file:// or the local server.

A test module calls :func:`require_chromium` at import: without Chromium (or without
playwright) its tests are skipped saying what to install. ``.ci/run`` installs Chromium.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
VIEWPORT = {"width": 1280, "height": 900}


def require_chromium() -> None:
    """Skip the calling test module when headless Chromium or playwright is missing."""
    if CHROMIUM is None:
        pytest.skip(
            "headless Chromium not found (/usr/bin/chromium); install Debian's chromium package "
            "(apt-get install -y chromium) to run the browser tests",
            allow_module_level=True,
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed: pip install -e '.[dev]'", allow_module_level=True)


@contextmanager
def chromium() -> Iterator[Any]:
    """One headless Chromium (a playwright ``Browser``), closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


def record_requests(page: Any) -> list[str]:
    """Every URL ``page`` asks for from now on (documents, scripts, images, fetches, websockets), in order."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.on("websocket", lambda ws: urls.append(ws.url))
    return urls


def not_local(urls: list[str], *, origin: str | None = None) -> list[str]:
    """The URLs that are neither file:// pages, data: images, about:blank nor (when given) on ``origin``."""
    keep = ("file://", "data:", "about:blank") + ((origin, origin.replace("http", "ws", 1)) if origin else ())
    return [u for u in urls if not u.startswith(keep)]
