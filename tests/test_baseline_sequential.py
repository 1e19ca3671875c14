"""``goldenkit baseline save`` refuses a run the sequential gate stopped (it read only the rows it needed), in
one line, until it is resumed without ``--sequential`` to a full run."""

from __future__ import annotations

from pathlib import Path

import pytest
from sequential_world import ROWS
from test_sequence_report import run, world  # noqa: F401  (world: the fixture)

from goldenkit.cli import main
from goldenkit.results import read_run


def test_baseline_save_refuses_a_stopped_run_then_saves_it_resumed(
    world: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(world, "good", "base") == 0
    assert run(world, "broken", "cand", "--sequential") == 2
    rec = read_run(Path("results/cand")).manifest["sequential"]
    capsys.readouterr()
    assert main(["baseline", "save", "cand", "--name", "cand-v1"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"run cand is a sequential run (stopped after {rec['rows_run']} of {rec['rows_total']} rows" in err
    assert "resume it without --sequential to a full run first" in err
    assert not Path("baselines/cand-v1.json").exists()
    assert run(world, "broken", "cand") == 0  # resumed without --sequential: every row
    assert main(["baseline", "save", "cand", "--name", "cand-v1"]) == 0
    assert f"/{ROWS} rows pass" in capsys.readouterr().out
