"""One meaning per flag, across every command's parser.

``--seed`` is the row sample's seed in ``dataset sample``; the model's seed is
``--model-seed`` in ``run`` and ``dataset generate`` (nothing was released, so no old
spelling is kept). A folder or file a command writes is ``-o/--output`` everywhere, with
``--out`` kept as an alias where it was the spelling.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import build_parser, main
from goldenkit.results import read_run


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.Action]]:
    """``("dataset generate", action)`` for every option of every (sub)command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))
        elif action.option_strings:
            yield " ".join(path), action


def test_every_output_option_is_dash_o_and_dash_dash_output() -> None:
    outputs = {
        command: set(action.option_strings)
        for command, action in commands(build_parser())
        if any(s.startswith("--out") for s in action.option_strings) or action.dest in {"out", "output"}
    }
    assert {"dataset generate", "dataset sample", "dataset import", "report", "judge calibrate"} <= set(outputs)
    wrong = {command: spelled for command, spelled in outputs.items() if not {"-o", "--output"} <= spelled}
    assert wrong == {}
    # --out survives only as an alias of -o/--output, where it was the spelling
    assert {command for command, spelled in outputs.items() if "--out" in spelled} == {
        "dataset generate",
        "judge calibrate",
    }


def test_seed_is_the_sample_seed_only_in_dataset_sample() -> None:
    seeds = {command: action for command, action in commands(build_parser()) if "--seed" in action.option_strings}
    assert set(seeds) == {"dataset sample", "judge next"}  # both seed a draw of rows
    assert seeds["dataset sample"].required and seeds["dataset sample"].help == "sampling seed (e.g. a weekly seed)"
    model_seeds = {
        command: action for command, action in commands(build_parser()) if "--model-seed" in action.option_strings
    }
    assert set(model_seeds) == {"run", "benchmark", "dataset generate"}  # benchmark takes run's options
    assert {action.dest for action in model_seeds.values()} == {"seed"}


@pytest.mark.parametrize("spelling", ["-o", "--output", "--out"])
def test_generate_and_calibrate_write_where_any_spelling_says(spelling: str) -> None:
    parser = build_parser()
    generate = parser.parse_args(["dataset", "generate", "ds", "--agent-config", "a", "--count", "1", spelling, "D"])
    assert generate.out == "D"
    assert parser.parse_args(["judge", "calibrate", "labels.jsonl", spelling, "r.json"]).out == "r.json"


def _dataset(root: Path) -> Path:
    case = {"prompt": "", "expect": {"must_contain": ["yes"]}}
    rows = [row(f"r{i}", case | {"prompt": f"q{i}"}) for i in (1, 2)]
    return write_dataset(root, rows, name="tiny")


def test_the_model_seed_is_sent_and_part_of_the_agent_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model-seed 7 sends seed 7 and records it in the agent version; another seed does not; --seed is no
    option of run (exit 1)."""
    monkeypatch.chdir(tmp_path)
    ds = _dataset(tmp_path)
    versions = {}
    with FakeModelServer(default=Reply.text("yes")) as srv:
        for run_id, seed in [("a", "7"), ("b", "7"), ("other", "8")]:
            argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--run-id", run_id]
            assert main([*argv, "--model-seed", seed, "--results-dir", str(tmp_path / "results")]) == 0
            versions[run_id] = read_run(tmp_path / "results" / run_id).manifest["agent_version"]["prompt_sha256"]
            assert {r.json["seed"] for r in srv.requests[-2:]} == {int(seed)}
        capsys.readouterr()
        assert main(["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--seed", "7"]) == 1
    assert "--seed" in capsys.readouterr().err
    assert versions["a"] == versions["b"] != versions["other"]
