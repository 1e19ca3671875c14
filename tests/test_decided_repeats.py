"""Decided repeats stop: ``goldenkit run --stop-decided-repeats`` calls a row's repeats in order and no
more once the collapse rule's verdict cannot change; the collapsed verdicts are the full run's."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from factories import numbered_rows, write_dataset

from goldenkit.cli import main
from goldenkit.compare import protocol_key
from goldenkit.compare._ledger import missing_repeats
from goldenkit.records import Case
from goldenkit.results import read_run
from goldenkit.stats import collapse_repeats, decided_rows, row_decided

ROWS = 60


def _u(*parts: object) -> float:
    """A uniform number in [0, 1) from the parts (seeded: the same parts, the same number)."""
    h = hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()
    return int(h[:12], 16) / 16**12


def flaky(case: Case, repeat: int = 0) -> str:
    """Row i passes each repeat with its own probability (some always, some never, some in between)."""
    prompt = case.turns[-1].user
    p = _u("p", prompt)
    p = 1.0 if p > 0.6 else 0.0 if p < 0.25 else p
    return "yes" if _u("call", prompt, repeat) < p else "no"


def dataset(tmp_path: Path, rows: int = ROWS, config: str = "") -> Path:
    cases = numbered_rows(
        rows, lambda i: {"prompt": f"question {i}", "expect": {"must_contain": ["yes"]}}, slice=lambda i: "ab"[i % 2]
    )
    return write_dataset(tmp_path, cases, name="d", toml=config)


def run(ds: Path, run_id: str, *extra: str) -> int:
    agent = ["--provider", "callable", "--callable", "test_decided_repeats:flaky"]
    return main(["run", str(ds), *agent, "--repeats", "3", "--quiet", "--run-id", run_id, *extra])


def collapsed(run_id: str, rule: str = "majority") -> dict[str, str]:
    out = read_run(Path("results") / run_id).outcomes(columns=["row_id", "repeat", "verdict"])
    c = collapse_repeats(out, rule)
    return dict(zip(c["row_id"], c["verdict"].astype(str), strict=True))


def test_the_rule_in_one_place() -> None:
    """Majority over 3 stops at P,P or F,F; all at the first F; any at the first P; at_least:K likewise;
    an errored repeat is as unknown as one not called."""
    assert row_decided(["PASS", "PASS"], "majority", 3) and row_decided(["FAIL", "FAIL"], "majority", 3)
    assert not row_decided(["PASS", "FAIL"], "majority", 3) and not row_decided(["PASS", "ERROR"], "majority", 3)
    assert row_decided(["PASS", "FAIL", "PASS"], "majority", 3)
    assert row_decided(["FAIL"], "all", 3) and not row_decided(["PASS", "PASS"], "all", 3)
    assert row_decided(["PASS"], "any", 3) and not row_decided(["FAIL", "FAIL"], "any", 3)
    assert row_decided(["PASS", "PASS"], "at_least:2", 3) and row_decided(["FAIL", "FAIL"], "at_least:2", 3)
    assert not row_decided(["FAIL", "PASS"], "at_least:2", 3)
    assert row_decided(["SKIPPED", "SKIPPED", "SKIPPED"], "majority", 3)  # nothing left to call
    assert not row_decided(["SKIPPED"], "majority", 3)


@pytest.mark.parametrize(
    ("rule", "repeats"),
    [("majority", 3), ("all", 3), ("any", 3), ("at_least:2", 3), ("majority", 4), ("at_least:3", 4)],
)
def test_the_decided_verdict_is_the_full_verdict(rule: str, repeats: int) -> None:
    """Every sequence of repeats: once decided after k of them, the collapse of those k is the full collapse."""
    import itertools

    import pandas as pd

    for seq in itertools.product(["PASS", "FAIL", "ERROR", "SKIPPED"], repeat=repeats):
        full = collapse_repeats(pd.DataFrame({"row_id": "r", "repeat": range(repeats), "verdict": seq}), rule)
        for k in range(1, repeats + 1):
            if row_decided(list(seq[:k]), rule, repeats):
                part = collapse_repeats(pd.DataFrame({"row_id": "r", "repeat": range(k), "verdict": seq[:k]}), rule)
                assert str(part["verdict"][0]) == str(full["verdict"][0]), (seq, k)
                assert bool(part["undecided"][0]) == bool(full["undecided"][0]), (seq, k)
                break
    n = np.array([2, 0, 1])
    assert decided_rows(n, 2 - n, np.zeros(3, int), np.ones(3, int), "majority").tolist() == [True, True, False]


@pytest.mark.parametrize("rule", ["majority", "all"])
def test_stopped_repeats_give_the_full_runs_verdicts_with_fewer_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], rule: str
) -> None:
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path, config=f'[gate]\nrule = "{rule}"\n')
    assert run(ds, "full") == 0
    assert run(ds, "stopped", "--stop-decided-repeats") == 0
    assert collapsed("stopped", rule) == collapsed("full", rule)
    man = read_run(Path("results") / "stopped").manifest
    full = read_run(Path("results") / "full").manifest
    assert man["complete"] is True and man["validity"] == "VALID"
    assert man["counts"]["total"] < full["counts"]["total"] == 3 * ROWS
    assert man["counts"]["total"] + man["decided_repeats"]["not_needed"] == 3 * ROWS
    assert man["decided_repeats"]["rule"] == rule and man["stop_decided_repeats"] == rule
    assert protocol_key(man)["stop_decided"] == rule and "stop_decided" not in protocol_key(full)
    c = collapse_repeats(read_run(Path("results") / "stopped").outcomes(columns=["row_id", "repeat", "verdict"]), rule)
    assert missing_repeats(man, c) is None  # rows short of repeats by decision are not short
    capsys.readouterr()
    assert main(["compare", "full", "stopped", "--rule", rule]) == 0  # comparable, nothing missing
    out = capsys.readouterr().out
    assert "MISSING" not in out and "b = broke" in out
    assert f"the candidate stopped decided repeats (rule {rule}): its verdicts are a full run's" in out


def test_a_stopped_run_read_under_another_rule_is_not_comparable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path, config='[gate]\nrule = "all"\n')
    assert run(ds, "full") == 0 and run(ds, "stopped", "--stop-decided-repeats") == 0
    assert main(["compare", "full", "stopped", "--rule", "majority"]) == 4
    assert "stopped decided repeats under rule all" in capsys.readouterr().err


def test_a_run_short_of_undecided_repeats_is_still_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule excuses only decided rows: drop a deciding repeat and the run is short again."""
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path)
    assert run(ds, "stopped", "--stop-decided-repeats") == 0
    r = read_run(Path("results") / "stopped")
    out = r.outcomes(columns=["row_id", "repeat", "verdict"])
    two = out.groupby("row_id")["repeat"].transform("count") == 2
    victim = out[two].iloc[[-1]].index  # the second repeat of a row decided at P,P or F,F
    assert missing_repeats(r.manifest, collapse_repeats(out.drop(victim))) is not None
    assert missing_repeats(r.manifest, collapse_repeats(out)) is None


def test_resumed_without_the_option_the_run_is_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path)
    assert run(ds, "r", "--stop-decided-repeats") == 0
    assert read_run(Path("results") / "r").manifest["counts"]["total"] < 3 * ROWS
    assert run(ds, "r") == 0
    man = read_run(Path("results") / "r").manifest
    assert man["counts"]["total"] == 3 * ROWS and man["complete"] is True
    assert "stop_decided_repeats" not in man and "stop_decided" not in man["protocol"]
    assert "not_needed" not in man["counts"]
