"""Python and the command line grade alike: ``run_eval`` / ``regrade`` take paths and the dataset's [graders].

The project is the guide's shop (docs/first-dataset.md); its notebook recipe ("From Python
(a notebook)") is executed as written and its protocol key compared with a CLI run's.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import sys
from pathlib import Path

import pytest
from factories import GUIDE, blocks, write_guide_project
from test_config_travel import AGENT

import goldenkit as gk
from goldenkit.cli import main
from goldenkit.compare import protocol_key
from goldenkit.runner._regrade import aregrade, regrade

SECTION = "## From Python (a notebook)"


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The guide's shop project, with the command line's runs v1 (agent version 1) and v2 (version 2)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, AGENT, raising=False)
    monkeypatch.chdir(write_guide_project(tmp_path))
    for run_id, fn in (("v1", "answer"), ("v2", "answer_v2")):
        argv = ["run", "shop", "--provider", "callable", "--callable", f"{AGENT}:{fn}", "--run-id", run_id, "--quiet"]
        assert main(argv) == 0
    return tmp_path


def recipe() -> list[str]:
    """The python blocks of the guide's notebook section, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/first-dataset.md has no section {SECTION!r}"
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end != -1 else len(text)]
    return [b.text for b in blocks(section) if b.lang == "python"]


def key_of(run_id: str) -> dict[str, object]:
    return protocol_key(gk.read_run(run_id).manifest)


def test_the_notebook_recipe_gets_the_protocol_key_of_the_command_line(shop: Path) -> None:
    code = recipe()
    assert code, "the notebook section shows no python"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for i, block in enumerate(code):
            exec(compile(block, f"first-dataset.md notebook block {i + 1}", "exec"), {"__name__": "__notebook__"})
    assert "same protocol as the command line's v1: True" in out.getvalue()
    assert key_of("v1-notebook") == key_of("v1")
    assert gk.read_run("v1-notebook").manifest["graders"].keys() == {"contract", "trajectory"}
    assert main(["compare", "v1", "v1-notebook"]) == 0  # comparable, and nothing changed


@pytest.mark.parametrize("given", ["shop", "shop/dataset.jsonl", "dataset"])
def test_run_eval_takes_the_dataset_or_its_path_and_grades_with_its_graders(shop: Path, given: str) -> None:
    dataset = gk.read_dataset("shop") if given == "dataset" else Path(given) if "/" in given else given
    agent = gk.get_provider("callable", callable=f"{AGENT}:answer_v2")
    summary = gk.run_eval(dataset, agent, run_id="py-v2", progress=False)
    # version 2 never looks an order up: the trajectory grader of [graders] fails the refund rows, as on the CLI
    assert key_of("py-v2") == key_of("v2")
    assert "PASS 13, FAIL 7" in summary.line()
    mine, cli = gk.read_run("py-v2").manifest["counts"], gk.read_run("v2").manifest["counts"]
    assert mine == cli and mine["FAIL"] == 7
    recorded = gk.read_run("py-v2").manifest["config"]["extra"]
    assert recorded["config_file"] == str(shop / "shop" / "goldenkit.toml")


def test_graders_given_or_a_named_config_replace_the_datasets(shop: Path) -> None:
    agent = gk.get_provider("callable", callable=f"{AGENT}:answer_v2")  # ship-04 expects only a tool call:
    gk.run_eval("shop", agent, ["contract"], run_id="contract-only", progress=False, max_ungradable=0.05)
    assert gk.read_run("contract-only").manifest["graders"].keys() == {"contract"}
    other = shop / "other.toml"
    other.write_text('[graders]\nuse = ["contract"]\n')
    gk.run_eval("shop", agent, run_id="named", config=other, progress=False, max_ungradable=0.05)
    man = gk.read_run("named").manifest
    assert man["graders"].keys() == {"contract"} and man["config"]["extra"]["config_file"] == str(other)
    assert key_of("named") == key_of("contract-only")


def test_regrade_is_typed_like_run_eval_and_takes_paths(shop: Path) -> None:
    assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(regrade).parameters.values())
    assert list(inspect.signature(regrade).parameters) == list(inspect.signature(aregrade).parameters)
    summary = regrade(Path("results") / "v2", "v2-again", dataset="shop/dataset.jsonl", progress=False)
    assert summary.exit_code == 0
    again = gk.read_run("v2-again").manifest
    assert again["graders"] == gk.read_run("v2").manifest["graders"]  # the dataset's [graders], not contract alone
    assert again["counts"] == gk.read_run("v2").manifest["counts"]
    regrade("v2", "v2-contract", ["contract"], dataset=Path("shop"), progress=False, max_ungradable=0.05)
    assert gk.read_run("v2-contract").manifest["graders"].keys() == {"contract"}


def test_the_run_table_of_the_datasets_config_applies_from_python_as_on_the_command_line(shop: Path) -> None:
    """[run] repeats = 3 beside the dataset: run_eval makes 3 repeats as goldenkit run does (the same protocol
    key); a keyword given by the caller wins; a bad value names the file."""
    toml = shop / "shop" / "goldenkit.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n[run]\nrepeats = 3\nper_slice = 2\n", encoding="utf-8")
    argv = ["run", "shop", "--provider", "callable", "--callable", f"{AGENT}:answer", "--run-id", "cli3", "--quiet"]
    assert main(argv) == 0
    agent = gk.get_provider("callable", callable=f"{AGENT}:answer")
    gk.run_eval("shop", agent, run_id="py3", progress=False)
    assert key_of("py3") == key_of("cli3") and gk.read_run("py3").manifest["repeats"] == 3
    gk.run_eval("shop", agent, run_id="py1", progress=False, repeats=1)
    assert gk.read_run("py1").manifest["repeats"] == 1
    toml.write_text(toml.read_text(encoding="utf-8").replace("repeats = 3", "repeats = 0"), encoding="utf-8")
    with pytest.raises(
        gk.errors.ConfigError, match=r"goldenkit.toml: \[run\] repeats must be an integer in \[1, 1000\], got 0$"
    ):
        gk.run_eval("shop", agent, run_id="bad", progress=False)
    assert not (shop / "results" / "bad").exists()
