"""Each run option is declared once, in goldenkit._constraints.RUN_TABLE: a new entry there is a flag of
``goldenkit run`` with its help and default, a ``[run]`` key checked as it takes, and an option the protocol
key's classification (tests/test_protocol_key.py) asks about; RunOptions' fields, defaults and checks are
the table's; no flag of ``goldenkit run`` is declared outside it."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
import test_protocol_key

from goldenkit._constraint_types import Number
from goldenkit._constraints import NONE, RUN_TABLE, RunOption
from goldenkit.cli import build_parser, main
from goldenkit.commands._run import resolve_options
from goldenkit.errors import ConfigError
from goldenkit.runner import RunOptions

DUMMY = RunOption(
    NONE, "turns the dummy knob (default {default})", Number(integer=True, low=1, optional=True), 4, group="execution"
)


def _run_parser() -> argparse.ArgumentParser:
    parser = build_parser("run")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]  # type: ignore[no-any-return]


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> RunOption:
    monkeypatch.setitem(RUN_TABLE, "dummy_knob", DUMMY)
    return DUMMY


def test_a_new_option_is_a_flag_with_its_help_and_default(dummy: RunOption) -> None:
    help_text = " ".join(_run_parser().format_help().split())
    assert "--dummy-knob DUMMY_KNOB turns the dummy knob (default 4)" in help_text
    args = _run_parser().parse_args(["ds", "--dummy-knob", "7"])
    assert args.dummy_knob == 7
    assert resolve_options(args, {})["dummy_knob"] == 7  # the command line wins
    assert resolve_options(_run_parser().parse_args(["ds"]), {})["dummy_knob"] == 4  # the table's default


def test_a_new_option_is_a_run_key_checked_in_one_line(dummy: RunOption, tmp_path: Path) -> None:
    args = _run_parser().parse_args(["ds"])
    assert resolve_options(args, {"run": {"dummy_knob": 2}})["dummy_knob"] == 2
    with pytest.raises(ConfigError) as exc:
        resolve_options(args, {"run": {"dummy_knob": 0}, "_path": "conf/goldenkit.toml"})
    assert str(exc.value) == "conf/goldenkit.toml: [run] dummy_knob must be an integer >= 1, got 0"


def test_a_bad_value_of_a_new_option_is_refused_on_the_command_line_and_in_the_file(
    dummy: RunOption, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text("[run]\ndummy_knob = 0\n")
    (tmp_path / "ds.jsonl").write_text('{"id": "a", "slice": "s", "case": {"prompt": "q"}}\n')
    assert main(["run", str(tmp_path / "ds.jsonl"), "--config", str(cfg), "--provider", "fixtures"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{cfg}: [run] dummy_knob must be an integer >= 1, got 0") and "\n" not in err
    assert main(["run", str(tmp_path / "ds.jsonl"), "--dummy-knob", "0"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "goldenkit: goldenkit run: argument --dummy-knob: must be an integer >= 1, got '0'"


def test_a_new_option_must_be_classified_for_the_protocol_key(
    dummy: RunOption, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(AssertionError, match="dummy_knob"):
        test_protocol_key.test_every_run_option_and_run_key_is_classified()
    monkeypatch.setitem(test_protocol_key.OPTIONS, "dummy_knob", ["--dummy-knob", "2"])
    test_protocol_key.test_every_run_option_and_run_key_is_classified()
    monkeypatch.setitem(RUN_TABLE, "dummy_knob", dataclasses.replace(dummy, protocol="maybe"))
    with pytest.raises(AssertionError, match="dummy_knob"):
        test_protocol_key.test_every_run_option_and_run_key_is_classified()
    with pytest.raises(TypeError):
        RunOption(help="a knob without a class")  # type: ignore[call-arg]


def test_every_flag_of_run_is_declared_in_the_table() -> None:
    flags = {a.dest: a.option_strings for a in _run_parser()._actions if a.option_strings and a.dest != "help"}
    declared = {n: [o.flag or f"--{n.replace('_', '-')}"] for n, o in RUN_TABLE.items() if o.flag is not None}
    assert flags == declared


def test_run_options_fields_defaults_and_checks_are_the_tables() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(RunOptions)}
    table = {(o.field if isinstance(o.field, str) else n): o.default for n, o in RUN_TABLE.items() if o.field}
    assert fields == table
    checked = [name for name, option in RUN_TABLE.items() if option.field is True and option.ranged]
    assert {"repeats", "timeout", "run_id", "label", "abort_after_errors"} <= set(checked)
    for name in checked:
        with pytest.raises(ConfigError, match=rf"^RunOptions\.{name} must be"):
            RunOptions(**{name: float("nan")})


def test_every_run_key_has_a_check() -> None:
    unchecked = [name for name, option in RUN_TABLE.items() if option.key and option.takes is None]
    assert unchecked == []
