"""Each table of goldenkit.toml declared once: a key added to its declaration (goldenkit._config_tables) is
accepted when the file is read, checked there with one line naming the file, the table and the key, and
defaulted when absent; the run options' table gives CallLimits its defaults and the providers their lists."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import goldenkit._constraints as constraints
from goldenkit._config_tables import (
    BENCHMARK_KEYS,
    DECLARED,
    GRADERS_KEYS,
    JUDGE_KEYS,
    METRICS_KEYS,
    RUBRICS_KEYS,
    keys_listing,
)
from goldenkit._constraint_types import Number, TableKey
from goldenkit._constraints import RUN_TABLE, RunOption, handed_to
from goldenkit.config import read_config, table_values
from goldenkit.errors import ConfigError
from goldenkit.graders import build_graders
from goldenkit.metrics import metric_weights
from goldenkit.providers import PROVIDER_OPTIONS, SIMULATOR_OPTIONS, TRANSPORT_OPTIONS
from goldenkit.runner._calls import CallLimits

DUMMY = TableKey(Number(integer=True, low=2), 7, "a key only the declaration knows", "3")

# (the table's dotted name, its declaration, the TOML that opens it)
TABLES = [
    ("judge", JUDGE_KEYS, "[judge]"),
    ("graders", GRADERS_KEYS, "[graders]"),
    ("graders.rubrics", RUBRICS_KEYS, "[graders.rubrics]"),
    ("metrics", METRICS_KEYS, "[metrics]"),
    ("benchmark", BENCHMARK_KEYS, "[benchmark]"),
]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "goldenkit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_declared_table_is_tested_here() -> None:
    assert {name for name, _, _ in TABLES} | {"graders.judge"} == set(DECLARED)
    assert DECLARED["graders.judge"] is JUDGE_KEYS  # [graders.judge] is read under [judge], as [judge]


@pytest.mark.parametrize(("name", "keys", "head"), TABLES, ids=[t[0] for t in TABLES])
def test_a_key_added_to_a_table_is_accepted_checked_and_defaulted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, keys: dict[str, TableKey], head: str
) -> None:
    path = _write(tmp_path, f"{head}\ndummy_rows = 4\n")
    with pytest.raises(ConfigError, match=rf"\[{name}\] dummy_rows: unknown key"):
        read_config(path)  # not declared: refused, as any unknown key
    monkeypatch.setitem(keys, "dummy_rows", DUMMY)
    assert table_values(read_config(path), name)["dummy_rows"] == 4  # accepted, as its constraint gives it
    _write(tmp_path, f"{head}\ndummy_rows = 1\n")
    with pytest.raises(ConfigError) as refused:
        read_config(path)  # checked when the file is read, before any work
    assert str(refused.value) == f"{path}: [{name}] dummy_rows must be an integer >= 2, got 1"
    _write(tmp_path, f"{head}\n")
    assert table_values(read_config(path), name)["dummy_rows"] == 7  # absent: its default
    assert table_values({}, name)["dummy_rows"] == 7  # no file at all: every key at its default
    assert "dummy_rows = 3" in keys_listing(name) and "(default 7)" in keys_listing(name)


def test_a_misspelled_key_gets_a_did_you_mean_naming_file_and_table(tmp_path: Path) -> None:
    cases = [
        ('[judge]\nprovider = "openai"\nmax_reponse_chars = 10\n', "[judge] max_reponse_chars: unknown key (did you "),
        (
            "[graders.rubrics]\nthreshhold = 0.5\n",
            "[graders.rubrics] threshhold: unknown key (did you mean threshold?)",
        ),
        ("[metrics]\nweight = 2\n", "[metrics] weight: unknown key (did you mean weights?)"),
        ('[graders]\nuses = ["contract"]\n', "[graders] uses: unknown key (did you mean use?)"),
    ]
    for text, said in cases:
        path = _write(tmp_path, text)
        with pytest.raises(ConfigError) as refused:
            read_config(path)
        assert str(refused.value).startswith(f"{path}: {said}"), str(refused.value)


def test_the_readers_take_the_checked_values_and_the_defaults(tmp_path: Path) -> None:
    cfg = read_config(
        _write(tmp_path, '[judge]\nprovider = "openai"\nmodel = "j"\n[metrics.weights]\nhallucination_rate = 2\n')
    )
    judge = table_values(cfg, "judge")
    assert judge["max_response_chars"] == 20000 and judge["hard"] is False and judge["options"] == {}
    assert metric_weights(cfg) == {"hallucination_rate": 2.0}
    assert [g.name for g in build_graders({})] == list(GRADERS_KEYS["use"].default)
    for bad, said in [
        ("[judge]\nmax_response_chars = 0\n", "[judge] max_response_chars must be an integer >= 1, got 0"),
        ('[graders]\nuse = ["contract", "contract"]\n', "[graders] use names 'contract' twice"),
        ("[graders.rubrics]\nthreshold = 2\n", "[graders.rubrics] threshold must be a finite number in [0, 1], got 2"),
        (
            "[metrics.weights]\nhallucination_rate = -1\n",
            "[metrics] weights.hallucination_rate = -1: must be a finite number >= 0",
        ),
        (
            '[[benchmark.agents]]\nname = "a"\ntemperature = 9\n',
            "[[benchmark.agents]] #1: temperature must be a finite",
        ),
    ]:
        path = _write(tmp_path, bad)
        with pytest.raises(ConfigError) as refused:
            read_config(path)
        assert str(refused.value).startswith(f"{path}: {said}"), str(refused.value)
        assert "\n" not in str(refused.value)


def test_a_config_from_python_is_checked_by_the_same_declaration() -> None:
    with pytest.raises(ConfigError, match=r"^g.toml: \[judge\] hard must be true or false, got 'yes'$"):
        build_graders({"_path": "g.toml", "graders": {"use": ["judge"]}, "judge": {"provider": "x", "hard": "yes"}})
    rubrics = {"graders": {"use": ["rubrics"], "rubrics": {"max_response_chars": 0}}, "judge": {"provider": "x"}}
    with pytest.raises(ConfigError, match=r"\[graders.rubrics\] max_response_chars must be an integer >= 1"):
        build_graders(rubrics)


def test_call_limits_take_their_defaults_from_the_run_options_table() -> None:
    for f in dataclasses.fields(CallLimits):
        assert f.name in RUN_TABLE, f.name  # every field is a run option
        assert f.default == RUN_TABLE[f.name].default, f.name


def test_the_provider_option_lists_are_the_tables_column(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TRANSPORT_OPTIONS == handed_to("transport") and SIMULATOR_OPTIONS == handed_to("simulator")
    assert PROVIDER_OPTIONS == (*handed_to("provider"), *TRANSPORT_OPTIONS)
    assert SIMULATOR_OPTIONS == tuple(k for k in RUN_TABLE if k.startswith("user_") and k != "user_simulator")
    added = {**RUN_TABLE, "dummy_depth": RunOption(constraints.AGENT, "a provider option", Number(True), to="provider")}
    monkeypatch.setattr(constraints, "RUN_TABLE", added)
    assert handed_to("provider")[-1] == "dummy_depth" and "dummy_depth" not in handed_to("transport")


def test_the_run_table_is_checked_when_the_file_is_read_for_every_caller(tmp_path: Path) -> None:
    for bad, said in [
        ("[run]\nmax_in_flite = 4\n", "unknown [run] key(s): max_in_flite (did you mean max_in_flight?)"),
        ("[run]\nmodel_seed = 1\n", "unknown [run] key(s): model_seed (did you mean seed? the key of --model-seed)"),
        ("[run]\nmax_in_flight = 0\n", "[run] max_in_flight must be an integer >= 1, got 0"),
        ('[run]\nexecutor = "cluster"\n', "[run] executor must be one of local, ray, got 'cluster'"),
    ]:
        path = _write(tmp_path, bad)
        with pytest.raises(ConfigError) as refused:
            read_config(path)  # a run from Python reads it so too, before anything is written
        assert str(refused.value) == f"{path}: {said}"
