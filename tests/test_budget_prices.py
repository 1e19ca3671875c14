"""Which prices a budget trusts: the user's own configuration, never a dataset's goldenkit.toml.

A goldenkit.toml beside the dataset travels with the data; at price 0 it would let ``--max-cost 0.01``
run any number of tokens. ``--max-cost`` (and the money a budget counts) reads ``[pricing]`` only from the
file named with ``--config`` or the working folder's goldenkit.toml (:func:`goldenkit.config.budget_pricing`);
a dataset's prices are still shown, labelled as the dataset's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.config import DATASET_PRICES, budget_pricing, load_config, pricing
from goldenkit.errors import ConfigError

FREE = '[graders]\nuse = ["contract"]\n[pricing."m"]\ninput = 0\noutput = 0\nsource = "free"\ndate = "2026-11-01"\n'
PRICED = FREE.replace("input = 0", "input = 1.0").replace("output = 0", "output = 2.0").replace("free", "list")


def _dataset(root: Path, toml: str | None) -> Path:
    rows = numbered_rows(4, lambda i: {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}})
    return write_dataset(root, rows, toml=toml)


def _run(root: Path, srv: FakeModelServer, ds: Path, *extra: str) -> int:
    argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
    return main([*argv, "--results-dir", str(root / "res"), "--run-id", "b", *extra])


def _manifest(root: Path) -> dict[str, Any]:
    return json.loads((root / "res" / "b" / "run.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture
def server():
    with FakeModelServer(default=Reply.slow(0.0, "yes", tokens_in=600_000, tokens_out=600_000)) as srv:
        yield srv


def test_a_datasets_free_prices_cannot_lift_max_cost(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, FREE)
    assert _run(tmp_path, server, ds, "--max-cost", "0.01") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(ds / "goldenkit.toml") in err[0] and "dataset's goldenkit.toml" in err[0] and "--config" in err[0]
    assert server.count() == 0 and not (tmp_path / "res").exists()  # refused before anything is written


def test_the_same_prices_given_with_config_are_trusted(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, FREE)
    (tmp_path / "mine.toml").write_text(PRICED)
    assert (
        _run(tmp_path, server, ds, "--config", str(tmp_path / "mine.toml"), "--max-cost", "1", "--max-in-flight", "1")
        == 3
    )
    assert "--max-cost 1 reached" in capsys.readouterr().out
    assert server.count() == 1  # 600k in at $1 and 600k out at $2 per million: $1.80, the first call spends it
    assert _manifest(tmp_path)["budget"]["spent"]["cost"] == pytest.approx(1.8)


def test_the_working_folders_prices_are_trusted_when_the_dataset_has_no_file(
    tmp_path: Path, server: FakeModelServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path / "data", None)
    (tmp_path / "goldenkit.toml").write_text(PRICED)
    monkeypatch.chdir(tmp_path)
    assert _run(tmp_path, server, ds, "--max-cost", "1", "--max-in-flight", "1") == 3
    assert "--max-cost 1 reached" in capsys.readouterr().out and server.count() == 1


def test_the_working_folder_that_is_the_datasets_own_is_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = _dataset(tmp_path, FREE)
    monkeypatch.chdir(ds)
    cfg = load_config(None, dataset_dir=ds)
    with pytest.raises(ConfigError, match=r"dataset's goldenkit\.toml.*--config"):
        budget_pricing(cfg, max_cost=True)
    assert not budget_pricing(cfg, max_cost=False)  # a --max-calls run counts no money at the dataset's prices
    assert budget_pricing(load_config(ds / "goldenkit.toml", dataset_dir=ds), max_cost=True).price("m") is not None


def test_a_datasets_prices_are_shown_labelled_as_the_datasets(
    tmp_path: Path, server: FakeModelServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _dataset(tmp_path, PRICED)
    price = pricing(load_config(None, dataset_dir=ds)).price("m")
    assert price is not None and price.label == f"[pricing] list 2026-11-01 ({DATASET_PRICES})"
    assert _run(tmp_path, server, ds, "--max-calls", "2") == 3
    out = capsys.readouterr().out
    assert f"({DATASET_PRICES})" in out  # the run's cost line names where its money came from
    man = _manifest(tmp_path)
    assert (man["budget"]["spent"]["cost"], man["budget"]["spent"]["unpriced"]) == (0, 2)  # not counted
    label = man["accounting"]["roles"]["candidate"]["money_label"]
    assert label == f"[pricing] list 2026-11-01 ({DATASET_PRICES})"
