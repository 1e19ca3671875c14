"""The committed baseline of the bundled dataset still matches its fixtures.

``baselines/support-agent-holdout.json`` + ``.parquet`` is the snapshot of the
baseline fixtures of datasets/support-agent (holdout, 3 repeats), saved with
``goldenkit baseline save``. Re-running those fixtures must give the same
protocol key and the same verdict on every row: a fixture or grader change that
moves a baseline verdict fails here until the snapshot is captured again::

    goldenkit run datasets/support-agent --provider fixtures \\
        --fixtures datasets/support-agent/fixtures/baseline --split holdout \\
        --run-id support-agent-holdout --results-dir /tmp/gk
    goldenkit baseline save /tmp/gk/support-agent-holdout --name support-agent-holdout --force
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from goldenkit.baselines import read_baseline
from goldenkit.cli import main
from goldenkit.compare import protocol_differences, protocol_key
from goldenkit.results import read_run
from goldenkit.stats import collapse_repeats

ROOT = Path(__file__).resolve().parents[1]
NAME = "support-agent-holdout"


def test_the_committed_snapshot_matches_its_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the paths the snapshot records are the checkout's, relative
    snapshot = read_baseline(ROOT / "baselines" / f"{NAME}.json")
    argv = [
        "run",
        "datasets/support-agent",
        "--provider",
        "fixtures",
        "--fixtures",
        "datasets/support-agent/fixtures/baseline",
        "--split",
        "holdout",
        "--run-id",
        NAME,
        "--results-dir",
        str(tmp_path),
        "--quiet",
    ]
    assert main(argv) == 0
    run = read_run(tmp_path / NAME)
    assert snapshot.manifest["repeats"] == 3 and snapshot.manifest["sample"]["split"] == "holdout"
    fresh = protocol_key(run.manifest, rule=snapshot.rule)
    assert protocol_differences(snapshot.info["protocol"], fresh) == []
    got = collapse_repeats(run.outcomes(columns=["row_id", "slice", "repeat", "verdict"]), snapshot.rule)
    saved = snapshot.collapsed().set_index("row_id")["verdict"].astype(str)
    now = got.set_index("row_id")["verdict"].astype(str)
    moved = sorted(r for r in saved.index if saved[r] != now.get(r))
    assert not moved and set(now.index) == set(saved.index), f"re-capture the baseline: {moved[:5]}"


def test_the_committed_files_name_no_local_path() -> None:
    for path in (ROOT / "baselines").iterdir():
        text = path.read_bytes()
        assert os.fsencode(str(ROOT)) not in text and b"/tmp/" not in text, path.name
    history = [json.loads(line) for line in (ROOT / "baselines" / "history.jsonl").read_text().splitlines()]
    assert [h["name"] for h in history][-1] == NAME
