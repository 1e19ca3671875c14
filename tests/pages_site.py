"""One rendered site shared by the pages tests and the browser tests (built once per test process).

Results: ``night-4`` (has the committed baseline ``main`` of the same protocol, so
it gets compare.html), ``night-5`` (a response with markup in it) and a corrupt
folder; every report is rendered through the notebooks (a few seconds each).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from history_runs import build

from goldenkit.pages import SiteResult, build_site


@lru_cache(maxsize=1)
def rendered_site() -> tuple[SiteResult, Path, Path]:
    """(the build's result, results dir, baselines dir)."""
    root = Path(tempfile.mkdtemp(prefix="gk-pages-"))
    atexit.register(shutil.rmtree, root, True)
    results, baselines = build(root / "all")
    small = root / "results"
    small.mkdir()
    for name in ("night-4", "night-5", "bad-json"):
        shutil.copytree(results / name, small / name)
    result = build_site(root / "site", small, baselines, title="Support <agent> history")
    return result, small, baselines
