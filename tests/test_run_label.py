"""Runs you can tell apart: ``goldenkit run --label TEXT`` recorded and shown first, else a label derived
from what distinguishes the run (the model and the settings that differ from their defaults, a callable's
function name, a recorded agent's name, an import's harness and file); refused before anything is written
when it is not one short line; never part of the protocol key. Through the command line against a local
OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _shared import needs_shared, shared_dir, shared_path
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit._run_label import run_label
from goldenkit.cli import main
from goldenkit.errors import ConfigError
from goldenkit.history import runs_df
from goldenkit.results import read_run
from goldenkit.runner import RunOptions

SUPPORT = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
INSPECT_LOG = shared_dir("interop", "results", "UKGovernmentBEIS__inspect_ai")


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeModelServer(default=Reply.text("ok")) as srv:
        yield srv


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    rows = numbered_rows(
        4, lambda i: {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}}, slice=lambda i: "ab"[i % 2]
    )
    return write_dataset(tmp_path, rows, name="tiny-ds", toml='[graders]\nuse = ["contract"]\n')


def _run(ds: Path, server: Any, run_id: str, *extra: str) -> dict[str, Any]:
    results = ds.parent / "results"
    argv = ["run", str(ds), "--provider", "openai", "--base-url", server.url, "--model", "tiny"]
    assert main([*argv, *extra, "--run-id", run_id, "--results-dir", str(results), "--quiet"]) == 0
    return json.loads((results / run_id / "run.json").read_text())  # type: ignore[no-any-return]


def test_a_given_label_is_recorded_and_shown_first(
    ds: Path, server: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ds.parent)
    assert _run(ds, server, "a", "--label", "  nightly candidate ")["label"] == "nightly candidate"
    assert _run(ds, server, "b", "--temperature", "0.8", "--model-seed", "1")["label"] is None  # derived when shown
    capsys.readouterr()

    assert main(["leaderboard", "results/a", "results/b"]) == 0  # the text table: the label, then the run id
    lines = capsys.readouterr().out.splitlines()
    assert any(re.search(r"\bnightly candidate \(a\)\s+tiny\s+4/4", line) for line in lines), lines
    assert any(re.search(r"\btiny T=0\.8 seed=1 \(b\)\s+tiny\s+4/4", line) for line in lines), lines

    df = runs_df("results", None)  # the runs index, and SQL over it
    assert list(df.columns[:3]) == ["kind", "label", "run_id"]
    assert dict(zip(df["run_id"], df["label"], strict=True)) == {"a": "nightly candidate", "b": "tiny T=0.8 seed=1"}
    assert main(["query", "SELECT label FROM runs ORDER BY run_id", "--json"]) == 0
    assert [r["label"] for r in json.loads(capsys.readouterr().out)] == ["nightly candidate", "tiny T=0.8 seed=1"]

    run = read_run("results/a")  # the repr and the notebook card
    assert repr(run).startswith("Run('nightly candidate', 'a', VALID, complete,")
    assert "run nightly candidate (a): VALID" in run._repr_html_()

    assert main(["pages", "-o", "site", "--no-render", "--results-dir", "results"]) == 0
    index = (Path("site") / "index.html").read_text(encoding="utf-8")
    assert 'nightly candidate <span class="muted">a</span>' in index
    assert 'tiny T=0.8 seed=1 <span class="muted">b</span>' in index
    history = "".join(p.read_text(encoding="utf-8") for p in Path("site").rglob("*.html") if "tiny-ds" in p.name)
    assert 'nightly candidate <span class="muted">a</span>' in history  # the trend's table, each run labelled


def test_derived_labels_tell_models_settings_and_agents_apart(
    ds: Path, server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = {
        "default": _run(ds, server, "d"),
        "warm": _run(ds, server, "w", "--temperature", "0.8", "--model-seed", "1"),
        "cold": _run(ds, server, "c", "--temperature", "0", "--model-seed", "2", "--max-tokens", "64"),
        "steps": _run(ds, server, "s", "--history", "expected", "--max-tool-steps", "2", "--tool-choice", "none"),
    }
    shown = {
        k: runs_df(tmp_path / "results", None).set_index("run_id").loc[m["run_id"], "label"] for k, m in labels.items()
    }
    assert shown == {
        "default": "tiny",  # every setting at its default: the model alone
        "warm": "tiny T=0.8 seed=1",
        "cold": "tiny T=0 seed=2 max_tokens=64",
        "steps": "tiny tool_choice=none history=expected max_tool_steps=2",
    }

    (tmp_path / "gk_label_agent_mod.py").write_text("def answer(case):\n    return 'ok'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", str(ds), "--provider", "callable", "--callable", "gk_label_agent_mod:answer", "--quiet"]
    assert main([*argv, "--run-id", "fn", "--results-dir", str(tmp_path / "results")]) == 0
    recorded = ["run", str(SUPPORT), "--provider", "fixtures", "--fixtures", str(SUPPORT / "fixtures" / "candidate")]
    recorded += ["--split", "holdout", "--per-slice", "1", "--repeats", "3", "--run-id", "fx"]
    assert main([*recorded, "--results-dir", str(tmp_path / "results"), "--quiet"]) == 0
    df = runs_df(tmp_path / "results", None).set_index("run_id")
    assert df.loc["fn", "label"] == "answer"  # a callable's function name, not "(no model) · prompt ..."
    assert df.loc["fx", "label"] == "candidate"  # the recording's agent


@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_the_defaults_a_label_leaves_out_are_what_the_providers_record(provider: str) -> None:
    """SHOWN_SETTINGS' defaults are the values a provider records when the option is not given: a provider
    built with none of them is labelled by its model alone, and one built with each shows each."""
    from goldenkit.providers import get_provider

    def label(**given: Any) -> str:
        p = get_provider(provider, model="tiny", base_url="http://127.0.0.1:9", **given)
        return run_label({"provider": {"name": provider, "settings": p.settings()}, "run_id": "r"})

    assert label() == "tiny"
    given = {"temperature": 0.5, "seed": 3, "max_tokens": 9, "history": "expected", "max_tool_steps": 2}
    assert label(**given) == "tiny T=0.5 seed=3 max_tokens=9 history=expected max_tool_steps=2"
    assert label(system="You answer in one short sentence, always.") == 'tiny system "You answer in one short..."'


def test_an_adk_agent_is_labelled_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.adk")
    from goldenkit.providers._adk import AdkProvider

    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # tests/adk_scripted: root_agent "scripted_root"
    for history, want in (("actual", "scripted_root"), ("expected", "scripted_root history=expected")):
        settings = AdkProvider(agent="adk_scripted", history=history).settings()
        assert run_label({"provider": {"name": "adk", "settings": settings}, "run_id": "r"}) == want


@needs_shared("interop", "results", "UKGovernmentBEIS__inspect_ai")
def test_an_imported_run_is_labelled_by_its_model_harness_and_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = shared_path("interop", "results", "UKGovernmentBEIS__inspect_ai")
    eval_file = next(p for p in sorted(log.glob("log-sets__set2__*popularity_Cu*.eval")))
    assert main(["import-run", str(eval_file), "--format", "inspect", "--run-id", "imp"]) == 0
    label = runs_df("results", None).set_index("run_id").loc["imp", "label"]
    assert label == f"openai/gpt-5 (inspect {eval_file.name})"


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["--label", "two\nlines"], "argument --label: must be one line of at most 80 characters, but it contains"),
        (["--label", "   "], "argument --label: must be one line of at most 80 characters, not blank"),
        (["--label", "x" * 81], "argument --label: must be one line of at most 80 characters, got 81 characters"),
    ],
)
def test_a_bad_label_is_refused_before_anything_is_written(
    ds: Path, server: Any, argv: list[str], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    results = ds.parent / "results"
    base = ["run", str(ds), "--provider", "openai", "--base-url", server.url, "--model", "tiny"]
    calls = server.count()
    assert main([*base, *argv, "--run-id", "bad", "--results-dir", str(results), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert why in err and len(err.strip().splitlines()) == 1
    assert not results.exists() and server.count() == calls


def test_a_bad_label_in_the_run_table_or_options_names_where_it_was_given(
    ds: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    (ds / "goldenkit.toml").write_text('[graders]\nuse = ["contract"]\n[run]\nlabel = 7\n')
    base = ["run", str(ds), "--provider", "openai", "--base-url", server.url, "--model", "tiny"]
    assert main([*base, "--results-dir", str(ds.parent / "results"), "--quiet"]) == 1
    assert "goldenkit.toml: [run] label must be a text, got 7" in capsys.readouterr().err
    assert not (ds.parent / "results").exists()
    with pytest.raises(ConfigError, match=r"RunOptions.label must be one line .* control character \(U\+0009\)"):
        RunOptions(label="a\tb")


def test_the_label_is_not_in_the_protocol_key_and_a_resume_keeps_or_replaces_it(ds: Path, server: Any) -> None:
    plain, named = _run(ds, server, "p"), _run(ds, server, "n", "--label", "release 4.2")
    assert named["protocol_sha256"] == plain["protocol_sha256"] and named["agent_version"] == plain["agent_version"]
    assert "release" not in json.dumps(named["protocol"])
    assert main(["leaderboard", str(ds.parent / "results" / "p"), str(ds.parent / "results" / "n")]) == 0  # comparable
    assert _run(ds, server, "n")["label"] == "release 4.2"  # a resume without --label keeps the run's
    assert _run(ds, server, "n", "--label", "release 4.2 final")["label"] == "release 4.2 final"


def test_a_merged_run_keeps_the_label_its_shards_were_given(ds: Path, server: Any) -> None:
    for k in (1, 2):
        assert (
            _run(ds, server, f"part{k}", "--label", "sharded nightly", "--shard", f"{k}/2")["label"]
            == "sharded nightly"
        )
    results = ds.parent / "results"
    assert main(["merge", "whole", "part1", "part2", "--results-dir", str(results)]) == 0
    assert read_run(results / "whole").manifest["label"] == "sharded nightly"
