"""The ``[gate]`` table declared once (goldenkit.gate._policy.GATE_KEYS): goldenkit.toml's check, the
policy's defaults and the documentation's listing all come from it."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

import goldenkit.gate._policy as policy_mod
from goldenkit._constraint_types import Flag, Number, TableKey
from goldenkit.config import read_config, section
from goldenkit.errors import ConfigError
from goldenkit.gate import GatePolicy
from goldenkit.gate._policy import GATE_KEYS, gate_keys_listing


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key added to the table, and to nothing else."""
    keys = {
        **GATE_KEYS,
        "dummy_rows": TableKey(Number(integer=True, low=2), 7, "a key only the table knows", "3"),
        "dummy_flag": TableKey(Flag(), False, "another", "true"),
    }
    monkeypatch.setattr(policy_mod, "GATE_KEYS", keys)


def _policy(tmp_path: Path, body: str) -> GatePolicy:
    path = tmp_path / "goldenkit.toml"
    path.write_text(f"[gate]\n{body}\n", encoding="utf-8")
    return GatePolicy.from_config(section(read_config(path), "gate"), where=f"{path} [gate]")


def test_a_key_added_to_the_table_is_checked_from_goldenkit_toml_and_held_by_the_policy(
    tmp_path: Path, dummy: None
) -> None:
    p = _policy(tmp_path, "dummy_rows = 4\nmin_pass_rate = 0.5")
    assert p.value("dummy_rows") == 4 and p.other_keys == {"dummy_rows": 4} and p.min_pass_rate == 0.5
    assert p.value("dummy_flag") is False  # absent: its default from the table
    with pytest.raises(ConfigError, match=r"goldenkit.toml \[gate\]: dummy_rows must be an integer >= 2, got 1$"):
        _policy(tmp_path, "dummy_rows = 1")
    with pytest.raises(ConfigError, match=r"\[gate\]: dummy_flag must be true or false, got 'yes'"):
        _policy(tmp_path, 'dummy_flag = "yes"')
    listing = gate_keys_listing()
    assert "dummy_rows = 3" in listing and "# a key only the table knows (default 7)" in listing


def test_without_the_key_in_the_table_it_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown key\(s\) dummy_rows; known: "):
        _policy(tmp_path, "dummy_rows = 4")


def test_the_policy_fields_are_the_table_and_take_its_defaults() -> None:
    declared = {f.name for f in fields(GatePolicy)} - {"other_keys"}
    assert declared == set(GATE_KEYS)
    p = GatePolicy()
    for name, key in GATE_KEYS.items():
        assert getattr(p, name) == key.default, name
        assert p.value(name) == key.default
    assert GatePolicy().slices is not GatePolicy().slices  # a fresh table per policy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_paired_rows": 0}, "GatePolicy: min_paired_rows must be an integer >= 1, got 0"),
        ({"critical": "refunds"}, "GatePolicy: critical must be a list of slice names, got 'refunds'"),
        ({"judge_min_pass_rate": 1.2}, r"GatePolicy: judge_min_pass_rate must be a finite number in \(0, 1\]"),
        ({"accept_self_preference": 1}, "GatePolicy: accept_self_preference must be true or false, got 1"),
        ({"rule": "most"}, "GatePolicy: rule must be majority, all, any or at_least:K, got 'most'"),
    ],
)
def test_a_policy_built_in_python_is_checked_by_the_same_table(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        GatePolicy(**kwargs)  # type: ignore[arg-type]


def test_the_values_are_kept_as_the_constraint_gives_them(tmp_path: Path) -> None:
    p = _policy(tmp_path, 'critical = ["a", "b", "a"]\nnon_inferiority_margin = false\nmin_paired_rows = 2.0')
    assert p.critical == ("a", "b") and p.non_inferiority_margin is None and p.min_paired_rows == 2
    assert isinstance(p.min_paired_rows, int)
    with pytest.raises(ConfigError, match=r"\[gate\].slices.refunds: min_pass_rate must be a finite number in"):
        _policy(tmp_path, "[gate.slices.refunds]\nmin_pass_rate = 2")
    with pytest.raises(ConfigError, match=r"alpha must be a finite number in \(0, 0.5\), got 0.5 \(its bounds"):
        _policy(tmp_path, "alpha = 0.5")


def test_the_documentation_lists_every_key_with_its_default() -> None:
    import goldenkit.gate

    doc = goldenkit.gate.__doc__ or ""
    assert gate_keys_listing() in doc and "{GATE_KEYS}" not in doc
    for name, key in GATE_KEYS.items():
        if not isinstance(key.default, dict):
            assert f"\n    {name} = {key.example}" in doc, name
