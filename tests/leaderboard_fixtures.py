"""Three comparable runs and their leaderboard.html, rendered once per test session."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from run_factory import manifest, outcomes, write_run

from goldenkit.cli import main as cli_main


def three_runs(root: Path) -> list[Path]:
    """``strong`` passes every row, ``close`` fails 3 (tied with strong), ``weak`` fails 25 of 60."""
    paths = []
    for run_id, model, failing in (("strong", "m-<b>strong</b>", 0), ("close", "m-close", 3), ("weak", "m-weak", 25)):
        rows = [
            (
                f"r{i:02d}",
                "refunds" if i % 2 else "billing",
                ("FAIL", "FAIL", "PASS") if i < failing else ("PASS", "PASS", "FAIL" if i % 7 == 0 else "PASS"),
            )
            for i in range(60)
        ]
        paths.append(write_run(root, manifest(run_id, model_id=model), outcomes(rows, run_id=run_id)))
    return paths


@functools.cache
def rendered_leaderboard() -> Path:
    """``goldenkit report --leaderboard`` over :func:`three_runs`: the HTML page (executed notebook beside it)."""
    root = Path(tempfile.mkdtemp(prefix="gk-leaderboard-"))
    atexit.register(shutil.rmtree, root, True)
    paths = three_runs(root / "results")
    code = cli_main(["report", "--leaderboard", *map(str, paths), "-o", str(root / "out")])
    if code != 0:
        raise RuntimeError(f"goldenkit report --leaderboard exited {code}")
    return root / "out" / "leaderboard.html"
