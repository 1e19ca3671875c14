"""goldenkit.toml and the dataset found from anywhere; the file checked whole; a dataset cannot redirect credentials.

The project is the guide's shop (docs/first-dataset.md: its dataset, goldenkit.toml and
agent, written from the guide's own blocks), run twice with the callable provider.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from factories import write_guide_project
from fakeserver import FakeModelServer

from goldenkit.cli import main
from goldenkit.config import TABLE_KEYS, check_config, config_for_run
from goldenkit.errors import ConfigError
from goldenkit.results import read_run

AGENT = "shop_agent"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shop project in ``tmp_path/proj`` with runs v1 (agent version 1) and v2 (version 2) made there."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, AGENT, raising=False)
    proj = write_guide_project(tmp_path / "proj")
    monkeypatch.chdir(proj)
    for run_id, fn in (("v1", "answer"), ("v2", "answer_v2")):
        argv = ["run", "shop", "--provider", "callable", "--callable", f"{AGENT}:{fn}", "--run-id", run_id, "--quiet"]
        assert main(argv) == 0
    (tmp_path / "elsewhere").mkdir()
    return proj


def gate_exit(run: Path, base: Path, *more: str) -> int:
    return main(["gate", str(run), "--baseline", str(base), *more])


def test_run_json_records_the_dataset_and_config_absolute_and_relative_to_the_run(project: Path) -> None:
    man = json.loads((project / "results" / "v1" / "run.json").read_text())
    toml = project / "shop" / "goldenkit.toml"
    assert man["dataset"]["path"] == str(project / "shop")
    assert man["dataset"]["path_from_run"] == os.path.join("..", "..", "shop")
    extra = man["config"]["extra"]
    assert extra["config_file"] == str(toml)
    assert extra["config_file_from_run"] == os.path.join("..", "..", "shop", "goldenkit.toml")
    assert extra["config_sha256"] == hashlib.sha256(toml.read_bytes()).hexdigest()


def test_gate_compare_regrade_and_report_from_another_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    v1, v2 = project / "results" / "v1", project / "results" / "v2"
    here_gate = gate_exit(v2, v1)
    here_compare = main(["compare", str(v1), str(v2)])
    assert here_gate == 2  # the guide's story: refunds regressed
    capsys.readouterr()
    monkeypatch.chdir(project.parent / "elsewhere")  # no goldenkit.toml, no dataset, no results here
    assert gate_exit(v2, v1) == here_gate
    captured = capsys.readouterr()
    assert f"config: {project / 'shop' / 'goldenkit.toml'}" in captured.out + captured.err
    assert "[FAIL] regression.critical[refunds]" in captured.out
    assert main(["compare", str(v1), str(v2)]) == here_compare
    captured = capsys.readouterr()
    assert "refunds" in captured.out and "from the defaults" not in captured.err  # [gate] rule and alpha found
    assert main(["regrade", str(v1), "--run-id", "v1-again", "--quiet"]) == 0
    again = read_run(project / "results" / "v1-again")
    assert again.manifest["graders"] == read_run(v1).manifest["graders"]
    assert again.manifest["dataset"]["path"] == str(project / "shop")
    from goldenkit.report import gate_decision  # the report notebook's gate

    decision = gate_decision(read_run(v2), None, baseline=read_run(v1))
    assert decision.exit_code == here_gate


@pytest.mark.slow
def test_the_report_renders_from_another_folder(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    v1, v2 = project / "results" / "v1", project / "results" / "v2"
    monkeypatch.chdir(project.parent / "elsewhere")
    assert main(["report", str(v2), "--baseline", str(v1)]) == 0
    page = (v2 / "compare.html").read_text(encoding="utf-8")
    assert "regression.critical[refunds]" in page  # the gate of the recorded goldenkit.toml (refunds is critical)
    assert "not there" not in page and "built-in defaults" not in page


def test_a_moved_checkout_finds_its_files_beside_its_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    moved = project.parent / "moved" / "checkout"
    shutil.copytree(project, moved)
    shutil.rmtree(project)  # the paths the runs recorded are gone
    monkeypatch.chdir(project.parent / "elsewhere")
    v1, v2 = moved / "results" / "v1", moved / "results" / "v2"
    capsys.readouterr()
    assert gate_exit(v2, v1) == 2
    captured = capsys.readouterr()
    assert "recorded by the run, relative to the run folder" in captured.out + captured.err
    assert main(["compare", str(v1), str(v2)]) in (0, 2)
    assert "from the defaults" not in capsys.readouterr().err
    assert main(["regrade", str(v2), "--run-id", "v2-again", "--quiet"]) == 0
    assert read_run(moved / "results" / "v2-again").manifest["dataset"]["path"] == str(moved / "shop")
    # an edit since the run is refused, unless the file is named
    toml = moved / "shop" / "goldenkit.toml"
    toml.write_text(toml.read_text() + "\n# edited\n")
    capsys.readouterr()
    assert gate_exit(v2, v1) == 1
    assert "the goldenkit.toml the run recorded changed since the run" in capsys.readouterr().err
    assert gate_exit(v2, v1, "--config", str(toml)) == 2


def test_a_config_named_elsewhere_is_found_beside_the_dataset_by_name_and_hash(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the run named a copy of the dataset's goldenkit.toml that is gone now: the one beside the dataset is it
    copy = project.parent / "ci-tmp" / "goldenkit.toml"
    copy.parent.mkdir()
    shutil.copy(project / "shop" / "goldenkit.toml", copy)
    argv = ["run", "shop", "--provider", "callable", "--callable", f"{AGENT}:answer_v2", "--run-id", "v2c"]
    assert main([*argv, "--config", str(copy), "--quiet"]) == 0
    shutil.rmtree(copy.parent)
    monkeypatch.chdir(project.parent / "elsewhere")
    run = read_run(project / "results" / "v2c")
    cfg = config_for_run(None, run.manifest, run.path)
    assert cfg["_path"] == str(project / "shop" / "goldenkit.toml")
    assert cfg["_how"] == "beside the run's dataset, same sha256"
    # a different file beside the dataset is not it
    (project / "shop" / "goldenkit.toml").write_text("[gate]\nregression = false\n")
    with pytest.raises(ConfigError, match="changed since the run"):
        config_for_run(None, run.manifest, run.path)
    capsys.readouterr()


# --------------------------------------------------------------------------- goldenkit.toml checked whole


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("[gates]\nmin_pass_rate = 0.8\n", "[gates]: unknown table (did you mean [gate]?)"),
        ("[gate.slice.refunds]\nmin_pass_rate = 0.9\n", "[gate.slice]: unknown table (did you mean [gate.slices]?)"),
        ("[gate.slices.refunds]\nmin_pass = 0.9\n", "[gate.slices.refunds] min_pass: unknown key (did you mean"),
        ('[gate]\nregression = "false"\n', "[gate] regression = 'false' is not a boolean"),
        ('[graders]\nusee = ["contract"]\n', "[graders] usee: unknown key (did you mean use?)"),
        ('[judge]\nprovider = "openai"\nhard = "false"\n', "[judge] hard = 'false' is not a boolean"),
        ('[judge]\nmodle = "m"\n', "[judge] modle: unknown key (did you mean model?)"),
        ("[judge.option]\ntemperature = 0\n", "[judge.option]: unknown table (did you mean [judge.options]?)"),
        ('[graders.contract]\ncase_sensitive = "false"\n', "a quoted 'false' is a string, not a boolean"),
        ("[run]\nrepeat = 3\n", "unknown [run] key(s): repeat (did you mean repeats?)"),
        (
            "[graders.reference]\ntreshold = 0.5\n",
            "[graders.reference] treshold: unknown option (did you mean threshold?)",
        ),
    ],
)
def test_every_command_refuses_a_config_with_an_unknown_name_or_a_quoted_boolean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], toml: str, said: str
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, AGENT, raising=False)
    monkeypatch.chdir(write_guide_project(tmp_path, toml))
    argv = ["run", "shop", "--provider", "callable", "--callable", f"{AGENT}:answer", "--run-id", "r", "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert said in err and "goldenkit.toml" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "results" / "r").exists()


def test_a_policy_command_checks_the_file_whole_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = project / "bad.toml"
    bad.write_text('[gate]\nmin_pass_rate = 0.8\n[gates]\ncritical = ["refunds"]\n')
    capsys.readouterr()
    assert gate_exit(project / "results" / "v2", project / "results" / "v1", "--config", str(bad)) == 1
    assert "[gates]: unknown table (did you mean [gate]?)" in capsys.readouterr().err
    bad.write_text("[gate]\nmin_pass = 0.8\n")  # the gate's own keys: checked where the policy is read
    assert gate_exit(project / "results" / "v2", project / "results" / "v1", "--config", str(bad)) == 1
    assert "[gate]: unknown key(s) min_pass (did you mean min_pass_rate?)" in capsys.readouterr().err


def test_the_known_keys_are_the_owners() -> None:
    from goldenkit._config_tables import JUDGE_KEYS
    from goldenkit.gate._policy import _SLICE_KEYS, GatePolicy

    assert TABLE_KEYS["judge"] is JUDGE_KEYS  # declared once, read by the graders' builder
    assert TABLE_KEYS["gate.slices.*"] == frozenset(_SLICE_KEYS)
    assert "slices" in {f.name for f in fields(GatePolicy)}  # the one [gate] key that is a table
    for good in ({"gate": {"slices": {"refunds": {"min_pass_rate": 0.9}}}}, {"judge": {"options": {"seed": 1}}}):
        check_config(good)  # raises when the declaration refuses what the owners take
    with pytest.raises(ConfigError, match="did you mean"):
        check_config({"benchmark": {"agent": []}})


# --------------------------------------------------------------------------- a dataset cannot redirect credentials

KEY = "sk-test-0123456789abcdef"


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('[run]\nbase_url = "{url}"\n', "[run] base_url"),
        ('[run]\nuser_base_url = "{url}"\n', "[run] user_base_url"),
        ('[run]\napi_key_env = "HOME"\n', "[run] api_key_env"),
        ('[run]\nrecord = "../leaked"\n', "[run] record"),
        ('[run]\nresults_dir = "/tmp/elsewhere"\n', "[run] results_dir"),
        ("[run]\nno_proxy = true\n", "[run] no_proxy"),
        (
            '[graders]\nuse = ["contract", "judge"]\n[judge]\nprovider = "openai"\nmodel = "j"\n'
            '[judge.options]\nbase_url = "{url}"\napi_key_env = "GK_TEST_KEY"\n',
            "[judge.options] base_url",
        ),
        ('[judge]\nprovider = "openai"\n[judge.options]\nheaders = {{x = "1"}}\n', "[judge.options] headers"),
        ('[[benchmark.agents]]\nname = "a"\nbase_url = "{url}"\n', "[benchmark.agents] base_url"),
        ('[run]\nray_address = "ray://10.0.0.1:10001"\n', "[run] ray_address"),
        ('[run]\ncallable = "os:getcwd"\n', "[run] callable"),
        ('[run]\nuser_callable = "os:getcwd"\n', "[run] user_callable"),
        ('[run]\nagent = "shop/agent"\n', "[run] agent"),
    ],
)
def test_a_dataset_config_cannot_say_where_requests_keys_or_files_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], toml: str, key: str
) -> None:
    monkeypatch.setenv("GK_TEST_KEY", KEY)
    with FakeModelServer() as srv:
        monkeypatch.chdir(write_guide_project(tmp_path, toml.format(url=srv.url)))
        argv = ["run", "shop", "--provider", "openai", "--model", "m", "--api-key-env", "GK_TEST_KEY", "--quiet"]
        assert main([*argv, "--run-id", "r"]) == 1
        err = capsys.readouterr().err
        assert f"{key}: a goldenkit.toml found beside the dataset may set grading and gate policy" in err
        assert f"--config {Path('shop') / 'goldenkit.toml'}" in err and len(err.strip().splitlines()) == 1
        assert srv.count() == 0  # nothing was sent: no request, no key
    assert not (tmp_path / "results").exists() and not (tmp_path / "leaked").exists()


def test_a_dataset_config_redirect_is_refused_from_python_and_taken_when_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import goldenkit as gk
    from goldenkit.providers import get_provider

    monkeypatch.setenv("GK_TEST_KEY", KEY)
    with FakeModelServer() as srv:
        toml = (
            '[graders]\nuse = ["contract", "judge"]\n[judge]\nprovider = "openai"\nmodel = "j"\nrubric = "rubric.md"\n'
        )
        toml += f'[judge.options]\nbase_url = "{srv.url}"\napi_key_env = "GK_TEST_KEY"\n'
        proj = write_guide_project(tmp_path, toml)
        (proj / "shop" / "rubric.md").write_text("PASS when the answer is helpful and polite.\n")
        monkeypatch.chdir(proj)
        agent = get_provider("callable", callable=lambda case: "We will email you a reset link.")
        with pytest.raises(ConfigError, match=r"\[judge.options\] base_url: a goldenkit.toml found beside"):
            gk.run_eval(proj / "shop", agent, run_id="py", progress=False)
        assert srv.count() == 0 and not (proj / "results" / "py").exists()
        # named by the user (as --config), the file is the user's: its judge is asked, with the key
        gk.run_eval(proj / "shop", agent, run_id="py", progress=False, config=proj / "shop" / "goldenkit.toml")
        assert srv.count() > 0
        sent = [{k.lower(): v for k, v in r.headers.items()} for r in srv.requests]
        assert all(h.get("authorization") == f"Bearer {KEY}" for h in sent)
