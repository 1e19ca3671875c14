"""Every option of ``goldenkit run`` and every ``[run]`` key, changed one at a time: the protocol key
(run.json ``protocol_sha256``) changes exactly for those that can change a verdict.

Each option is classified in :data:`OPTIONS`: ``protocol`` (it changes what is checked or how repeats
become verdicts: the key must change), ``agent`` (it changes the system under test: the agent's version
changes, the protocol key must not, that is what a comparison compares) or ``none`` (concurrency,
timeouts, retries, transport, progress, paths: neither may change). Runs go through the CLI against a
local OpenAI-compatible server. A new option of ``goldenkit run`` fails the first test until it is
classified here. ``goldenkit benchmark`` builds its runs with the same function: the last test gives
both the same arguments and compares their protocol keys.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from fakeserver import FakeModelServer, Reply

from goldenkit._constraints import AGENT, NONE, PROTOCOL, RUN_TABLE
from goldenkit.cli import build_parser, main
from goldenkit.compare import protocol_differences, protocol_key

#: dest -> the command-line change, or the reason it is checked another way; its class is the run option's
#: (goldenkit._constraints.RUN_TABLE, where every option is declared with it)
OPTIONS: dict[str, list[str] | str] = {
    "provider": "the system under test itself: another provider is another agent (model id, prompt hash)",
    "base_url": ["--base-url", "{url}/v1"],
    "model": ["--model", "m2"],
    "api_key_env": ["--api-key-env", "GK_PROTOCOL_TEST_KEY"],
    "fixtures": "the fixtures provider's recording is another system under test (its recorded version)",
    "callable": "the callable provider's function is another system under test (its spec and source)",
    "agent": "the ADK provider's agent is another system under test",
    "system": ["--system", "Be brief."],
    "temperature": ["--temperature", "0.5"],
    "seed": ["--model-seed", "3"],
    "max_tokens": ["--max-tokens", "9"],
    "tool_choice": ["--tool-choice", "none"],
    "history": ["--history", "expected"],
    "max_tool_steps": ["--max-tool-steps", "2"],
    "tool_responses": ["--tool-responses", "{tools}"],
    "artifacts": ["--artifact", "{artifact}"],
    "vision": ["--no-vision"],
    "repeats": ["--repeats", "2"],
    "max_in_flight": ["--max-in-flight", "2"],
    "rpm": ["--rpm", "60000"],
    "timeout": ["--timeout", "30"],
    "max_retries": ["--max-retries", "1"],
    "max_retry_after": ["--max-retry-after", "5"],
    "max_error_rate": ["--max-error-rate", "0.5"],
    "executor": "where the run executes (a Ray cluster), never what it checks: tests/test_ray.py",
    "ray_address": "a Ray cluster's address (--executor ray)",
    "ray_workers": "a Ray cluster's workers (--executor ray)",
    "ca_bundle": "the CA of an https server: transport (tests/test_proxy_tls.py)",
    "no_proxy": ["--no-proxy"],
    "stream": ["--stream"],
    "max_reply_bytes": ["--max-reply-bytes", "100000"],
    "split": ["--split", "holdout"],
    "per_slice": ["--per-slice", "1"],
    "sample_seed": ["--per-slice", "1", "--sample-seed", "7"],
    "red": ["--red"],
    "shard": ["--shard", "1/2"],
    "max_ungradable": ["--max-ungradable", "0.5"],
    "run_id": "every run below has its own",
    "label": ["--label", "nightly candidate"],
    "results_dir": ["--results-dir", "{other_results}"],
    "retry_errors": ["--retry-errors"],
    "record": ["--record", "{record}"],
    "config": ["--config", "{gate_only_config}"],
    "graders": ["--graders", "contract,reference"],
    "criteria": "an ADK criteria file: checked on the manifest below",
    "ignore_criteria": "what a criteria file leaves ungraded: checked on the manifest below",
    "quiet": ["--quiet"],
    "user_simulator": "the user simulator of scenario rows: checked on the manifest below",
    "user_callable": "the user simulator of scenario rows: checked on the manifest below",
    "user_model": "the user simulator of scenario rows: checked on the manifest below",
    "user_base_url": "where the user simulator is served (transport, not its version)",
    "user_api_key_env": "the user simulator's key (transport)",
    "user_temperature": "the user simulator of scenario rows: checked on the manifest below",
    "user_seed": "the user simulator of scenario rows: checked on the manifest below",
    "max_turns": "the simulated conversation's turn limit: checked on the manifest below",
    "stop_decided_repeats": (
        "recorded in the protocol key (stop_decided), yet no difference: under its rule the verdicts are a full "
        "run's (tests/test_decided_repeats.py)"
    ),
    "sequential": "stops decided repeats too (above); the rest is tests/test_sequential_gate.py",
    "baseline": "--sequential only: tests/test_sequential_gate.py",
    "max_rows": "--sequential only: tests/test_sequential_gate.py",
    "sequential_seed": "--sequential only: tests/test_sequential_gate.py",
    "max_calls": ["--max-calls", "1000"],  # a budget stops a run; it never changes a verdict
    "max_tokens_total": ["--max-tokens-total", "1000000"],
    "max_cost": "a budget that needs [pricing]: tests/test_budgets.py compares the keys",
    "estimate": "writes no run: tests/test_estimate.py",
    "like": "--estimate only: tests/test_estimate.py",
}
#: ``[run]`` keys given as goldenkit.toml values (the same dest; a value the flag above would give; model,
#: provider and base_url are given on the command line below, which wins over the file)
RUN_VALUES: dict[str, Any] = {
    "system": "Be brief.",
    "temperature": 0.5,
    "seed": 3,
    "max_tokens": 9,
    "tool_choice": "none",
    "history": "expected",
    "max_tool_steps": 2,
    "repeats": 2,
    "max_in_flight": 2,
    "rpm": 60000.0,
    "timeout": 30.0,
    "max_retries": 1,
    "max_retry_after": 5.0,
    "max_error_rate": 0.5,
    "no_proxy": True,
    "stream": True,
    "max_reply_bytes": 100000,
    "split": "holdout",
    "per_slice": 1,
    "red": True,
    "max_ungradable": 0.5,
    "vision": False,
    "max_calls": 1000,
    "max_tokens_total": 1000000,
    "label": "nightly candidate",
}


def _run_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]  # type: ignore[no-any-return]


def test_every_run_option_and_run_key_is_classified() -> None:
    dests = {a.dest for a in _run_parser()._actions if a.option_strings and a.dest not in ("help", "dataset")}
    assert dests == set(OPTIONS), f"test: {sorted(dests - set(OPTIONS))}; gone: {sorted(set(OPTIONS) - dests)}"
    keys = {name for name, option in RUN_TABLE.items() if option.key}
    assert dests | keys <= set(RUN_TABLE) and keys <= set(OPTIONS), sorted(keys - set(OPTIONS))
    bad = {name: o.protocol for name, o in RUN_TABLE.items() if o.protocol not in (PROTOCOL, AGENT, NONE)}
    assert not bad, f"classify each run option as {PROTOCOL}, {AGENT} or {NONE}: {bad}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("protocol")
    ds = root / "ds"
    ds.mkdir()
    man = {"name": "tiny", "version": "1.0.0", "changelog": [{"version": "1.0.0", "date": "2026-01-01", "why": "t"}]}
    (ds / "dataset.json").write_text(json.dumps(man))
    rows = [
        {
            "id": f"r{i}",
            "slice": "a" if i % 2 else "b",
            "split": "holdout" if i < 4 else "dev",
            "tags": ["red"] if i == 5 else [],
            "case": {"prompt": f"q{i}", "expect": {"must_contain": ["ok"], "reference": "ok"}},
        }
        for i in range(6)
    ]
    (ds / "dataset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "goldenkit.toml").write_text('[graders]\nuse = ["contract"]\n')
    (root / "gate.toml").write_text('[graders]\nuse = ["contract"]\n[gate]\nmin_pass_rate = 0.5\n')
    (root / "tools.json").write_text(json.dumps([{"name": "t", "args": {}, "response": "x"}]))
    (root / "prompt.md").write_text("the agent's prompt")
    with FakeModelServer(default=Reply.text("ok")) as srv:
        yield root, ds, srv


def _run(world: Any, extra: list[str], run_id: str, config: str | None = None) -> dict[str, Any]:
    root, ds, srv = world
    fill = {
        "url": srv.url,
        "tools": str(root / "tools.json"),
        "artifact": str(root / "prompt.md"),
        "other_results": str(root / "other"),
        "record": str(root / "rec" / run_id),
        "gate_only_config": str(root / "gate.toml"),
    }
    argv = [a.format(**fill) for a in extra]
    results = fill["other_results"] if "--results-dir" in argv else str(root / "results")
    base = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m1", "--quiet"]
    if "--config" not in argv:
        base += ["--config", config or str(root / "goldenkit.toml")]
    if "--results-dir" not in argv:
        base += ["--results-dir", results]
    code = main([*base, *argv, "--run-id", run_id])
    assert code in (0, 2), (extra, code)
    return json.loads((Path(results) / run_id / "run.json").read_text())  # type: ignore[no-any-return]


def _agent(man: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in (man.get("agent_version") or {}).items() if k != "git_commit"}


def _check(ref: dict[str, Any], got: dict[str, Any], klass: str, what: str) -> None:
    same_protocol = ref["protocol_sha256"] == got["protocol_sha256"]
    assert got["protocol"] == protocol_key(got), what  # the stored key is the one function's
    if klass == PROTOCOL:
        assert not same_protocol, f"{what} changes a verdict but not the protocol key"
        assert protocol_differences(ref["protocol"], got["protocol"]), what
    elif klass == AGENT:
        assert same_protocol, f"{what}: {protocol_differences(ref['protocol'], got['protocol'])}"
        assert _agent(ref) != _agent(got), f"{what} changes the agent but not its version"
    else:
        assert same_protocol, f"{what}: {protocol_differences(ref['protocol'], got['protocol'])}"
        assert _agent(ref) == _agent(got), f"{what} changes no verdict yet changes the agent's version"


@pytest.mark.parametrize("dest", sorted(d for d, how in OPTIONS.items() if isinstance(how, list)))
def test_a_run_option_changes_the_key_exactly_when_it_can_change_a_verdict(
    dest: str, world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GK_PROTOCOL_TEST_KEY", "not-a-real-key-0")
    klass, argv = RUN_TABLE[dest].protocol, OPTIONS[dest]
    assert isinstance(argv, list)
    ref = _run(world, [], f"ref-{dest}")
    again = f"ref-{dest}" if dest == "retry_errors" else f"flag-{dest}"  # --retry-errors resumes a run
    _check(ref, _run(world, argv, again), klass, f"--{dest}")


@pytest.mark.parametrize("key", sorted(RUN_VALUES))
def test_a_run_key_changes_the_key_exactly_when_its_flag_does(key: str, world: Any) -> None:
    root = world[0]
    value = json.dumps(RUN_VALUES[key]) if not isinstance(RUN_VALUES[key], bool) else str(RUN_VALUES[key]).lower()
    cfg = root / f"run-{key}.toml"
    cfg.write_text(f'[graders]\nuse = ["contract"]\n[run]\n{key} = {value}\n')
    ref = _run(world, [], f"refk-{key}")
    _check(ref, _run(world, [], f"key-{key}", config=str(cfg)), RUN_TABLE[key].protocol, f"[run] {key}")


def test_grader_options_and_manifest_only_settings_change_the_key(world: Any) -> None:
    root = world[0]
    ref = _run(world, ["--graders", "contract,reference"], "g-ref")
    (root / "thr.toml").write_text('[graders]\nuse = ["contract", "reference"]\n[graders.reference]\nthreshold = 0.9\n')
    _check(ref, _run(world, [], "g-thr", config=str(root / "thr.toml")), PROTOCOL, "[graders.reference] threshold")
    # settings whose runs need other inputs (criteria files, scenario rows): the same function on the manifest
    man = ref
    crit = {"file": "c.json", "sha256": "c" * 64, "ignored": []}
    changed = {
        "criteria": {**man, "criteria": crit},
        "ignore_criteria": {**man, "criteria": {**crit, "ignored": ["response_match_score"]}},
        "user simulator": {**man, "simulator_version": {"provider": "callable", "fn": "m:f", "max_turns": 5}},
        "max_turns": {**man, "simulator_version": {"provider": "callable", "fn": "m:f", "max_turns": 3}},
        "hard": {**man, "grader_hard": {"contract": False, "reference": True}},
    }
    for what, m in changed.items():
        assert protocol_differences(protocol_key(man), protocol_key(m)), what
    assert protocol_differences(protocol_key(changed["criteria"]), protocol_key(changed["ignore_criteria"])), (
        "what a criteria file ignores"
    )
    assert protocol_differences(protocol_key(changed["user simulator"]), protocol_key(changed["max_turns"]))


def test_benchmark_builds_its_runs_as_run_does(world: Any) -> None:
    root, ds, srv = world
    opts = [
        "--provider",
        "openai",
        "--base-url",
        srv.url,
        "--per-slice",
        "1",
        "--red",
        "--no-vision",
        "--artifact",
        str(root / "prompt.md"),
        "--max-retry-after",
        "5",
        "--max-ungradable",
        "0.5",
        "--config",
        str(root / "goldenkit.toml"),
        "--quiet",
        "--results-dir",
        str(root / "bench"),
    ]
    assert main(["run", str(ds), *opts, "--model", "m1", "--run-id", "solo"]) in (0, 2)
    assert main(["benchmark", str(ds), *opts, "--models", "m1,m2", "--run-prefix", "b"]) in (0, 2)
    runs = {p.parent.name: json.loads(p.read_text()) for p in (root / "bench").glob("*/run.json")}
    assert {"solo", "b-m1", "b-m2"} <= set(runs)
    assert runs["solo"]["protocol_sha256"] == runs["b-m1"]["protocol_sha256"] == runs["b-m2"]["protocol_sha256"]
    assert _agent(runs["solo"]) == _agent(runs["b-m1"]) != _agent(runs["b-m2"])
    assert runs["b-m1"]["config"]["max_retry_after"] == 5.0 and runs["b-m1"]["vision"] is False


def test_a_callable_agent_version_follows_its_code(world: Any, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    ds = world[1]
    (tmp_path / "my_agent.py").write_text("def answer(case):\n    return 'ok'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    argv = [
        sys.executable,
        "-m",
        "goldenkit.cli",
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "my_agent:answer",
        "--results-dir",
        str(tmp_path / "r"),
        "--run-id",
        "c",
        "--quiet",
        "--config",
        str(world[0] / "goldenkit.toml"),
    ]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert json.loads((tmp_path / "r" / "c" / "run.json").read_text())["provider"]["settings"]["source_sha256"]
    # the same run id resumes while the code is unchanged, and is refused once the function changed
    assert subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120).returncode == 0
    (tmp_path / "my_agent.py").write_text("def answer(case):\n    return 'ok, and more'\n")
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "cannot resume run c: its run key differs (agent_version" in again.stderr
