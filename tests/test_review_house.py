"""What a review of the house's third pass (issue 39) found, each pinned where it was fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldenkit.config import read_config
from goldenkit.errors import ConfigError


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        # the whole table refused: its key, then what it must be (the description holds " = " itself)
        ("[metrics]\nweights = 3\n", "[metrics] weights must be a table of metric = weight, got 3"),
        # one entry of the table refused: the key, the entry and why
        ("[metrics.weights]\nx = -1\n", "[metrics] weights.x = -1: must be a finite number >= 0, got -1"),
        ("[judge]\noptions = 'x'\n", "[judge] options must be a table of the judge provider's options, got 'x'"),
    ],
)
def test_a_table_valued_key_refused_reads_as_one_line(tmp_path: Path, toml: str, said: str) -> None:
    path = tmp_path / "goldenkit.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_config(path)
    assert str(err.value) == f"{path}: {said}"
