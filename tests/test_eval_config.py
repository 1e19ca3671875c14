"""``--criteria FILE``: ADK eval configs and test_config.json files for import and run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from _shared import needs_shared, shared_dir, shared_path

from goldenkit.cli import main
from goldenkit.errors import ConfigError, InputError
from goldenkit.formats import import_dataset
from goldenkit.formats._eval_config import GRADED_BY, apply_criteria, check_graders, read_eval_config
from goldenkit.records import Case, Rubric, Turn

ADK = shared_dir("interop", "google__adk-python")
needs_adk = needs_shared("interop", "google__adk-python")
SUPPORT = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
ROLL_DIE = ADK / "tests__integration__fixture__hello_world_agent__roll_die.test.json"
HELLO_CONFIG = ADK / "tests__integration__fixture__hello_world_agent__test_config.json"
HOME_CONFIG = ADK / "tests__integration__fixture__home_automation_agent__test_config.json"
TRIP_CONFIG = ADK / "tests__integration__fixture__trip_planner_agent__test_config.json"

# The shape of ADK's EvalConfig docstring example plus the rubric, hallucination and safety criteria.
EVAL_CONFIG = {
    "criteria": {
        "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
        "response_match_score": 0.5,
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"judge_model": "m", "num_samples": 5}},
        "rubric_based_final_response_quality_v1": {
            "threshold": 0.8,
            "rubrics": [{"rubric_id": "polite", "rubric_content": {"text_property": "The answer is polite."}}],
        },
        "hallucinations_v1": {"threshold": 0.9, "evaluate_intermediate_nl_responses": True},
        "safety_v1": 0.8,
    },
    "user_simulator_config": {"model": "m", "max_allowed_invocations": 5},
}
UNGRADED = ["final_response_match_v2", "hallucinations_v1", "safety_v1"]


def write_config(tmp_path: Path, doc: dict = EVAL_CONFIG, name: str = "eval_config.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(doc, indent=2))
    return f


def test_the_fixture_is_a_valid_adk_eval_config(tmp_path):
    from google.adk.evaluation.eval_config import EvalConfig

    parsed = EvalConfig.model_validate_json(write_config(tmp_path).read_text())
    assert set(parsed.criteria) == set(EVAL_CONFIG["criteria"])


@needs_adk
@pytest.mark.parametrize(
    ("path", "graders"),
    [
        (HELLO_CONFIG, {"tool_trajectory_avg_score": "trajectory", "response_match_score": "reference"}),
        (HOME_CONFIG, {"tool_trajectory_avg_score": "trajectory"}),
        (TRIP_CONFIG, {"response_match_score": "reference"}),
    ],
)
def test_real_test_config_files_are_read(path, graders):
    config = read_eval_config(path)
    assert config.graders() == graders
    assert config.ignored == () and config.warnings() == []
    assert config.file == path.name and len(config.sha256) == 64


def test_criteria_goldenkit_cannot_grade_are_an_error_naming_each(tmp_path):
    f = write_config(tmp_path)
    with pytest.raises(ConfigError) as info:
        read_eval_config(f)
    msg = str(info.value)
    assert msg.startswith("eval_config.json: goldenkit cannot grade criteria final_response_match_v2, ")
    assert all(name in msg for name in UNGRADED) and "--ignore-criteria" in msg
    config = read_eval_config(f, ignore=UNGRADED)
    assert config.graders() == {
        "tool_trajectory_avg_score": "trajectory",
        "response_match_score": "reference",
        "rubric_based_final_response_quality_v1": "rubrics",
    }
    warnings = config.warnings()
    assert [w for w in warnings if "not graded" in w] == [
        f"eval_config.json: criterion {name} is not graded (--ignore-criteria)" for name in UNGRADED
    ]
    assert "eval_config.json: user_simulator_config is not used by goldenkit" in warnings
    assert config.record() == {"file": "eval_config.json", "sha256": config.sha256, "ignored": UNGRADED}


@pytest.mark.parametrize(
    ("doc", "ignore", "message"),
    [
        ({"criteria": {"safety_v1": 0.8}}, ["safety"], "which the file does not have"),
        ({"criteria": {"response_match_score": 0.8}}, ["response_match_score"], "which goldenkit grades"),
        ({"criteria": {}}, [], "no criteria object"),
        ({"metrics": {}}, [], "no criteria object"),
        ({"criteria": {"response_match_score": "high"}}, [], "must be a threshold"),
        (
            {"criteria": {"rubric_based_final_response_quality_v1": {"threshold": 1, "rubrics": [{"rubric_id": "x"}]}}},
            [],
            "has no rubric_content.text_property",
        ),
        (
            {
                "criteria": {"my_custom_metric": 0.5},
                "custom_metrics": {"my_custom_metric": {"code_config": {"name": "a.b"}}},
            },
            [],
            "cannot grade criteria my_custom_metric",
        ),
    ],
)
def test_bad_criteria_files(tmp_path, doc, ignore, message):
    with pytest.raises(ConfigError, match=message):
        read_eval_config(write_config(tmp_path, doc), ignore=ignore)


@pytest.mark.parametrize(
    ("line3", "line4", "where"),
    [
        ('"response_match_score": 0.5', '"x": 1', 4),  # missing comma: the next member's line
        ('"response_match_score": 0.5,', '"x": nope', 4),  # a bare word: its own line
        # a trailing comma: Python 3.13's parser names the comma's line, older ones the brace after it
        ('"response_match_score": 0.5,', "", 3 if sys.version_info >= (3, 13) else 4),
    ],
    ids=["missing-comma", "bare-word", "trailing-comma"],
)
def test_invalid_json_names_the_file_and_line(tmp_path, line3, line4, where):
    f = tmp_path / "eval_config.json"
    members = [f"    {line3}"] + ([f"    {line4}"] if line4 else [])
    f.write_text("\n".join(["{", '  "criteria": {', *members, "  }", "}", ""]))
    with pytest.raises(InputError, match=rf"^eval_config\.json:{where}: invalid JSON: "):
        read_eval_config(f)


def test_apply_criteria_replaces_adk_metrics_and_rubrics_but_keeps_the_rest(tmp_path):
    config = read_eval_config(write_config(tmp_path), ignore=UNGRADED)
    case = Case(
        "c1",
        "adk",
        (Turn("hi"),),
        criteria={"tool_trajectory_avg_score": 0.2, "simulated_user": {"note": "x"}},
        rubrics=(
            Rubric("old", "old criterion", source="adk:rubric_based_final_response_quality_v1"),
            Rubric("own", "on the case", source="adk"),
        ),
    )
    new = apply_criteria({"c1": case}, config)["c1"]
    assert new.criteria["tool_trajectory_avg_score"] == {"threshold": 1.0, "match_type": "IN_ORDER"}
    assert new.criteria["simulated_user"] == {"note": "x"}
    assert [r.id for r in new.rubrics] == ["own", "polite"]
    with pytest.raises(ConfigError, match="rubric_based_final_response_quality_v1 needs the rubrics grader"):
        check_graders(config, ["contract", "trajectory", "reference"])
    check_graders(config, ["trajectory", "reference", "rubrics"])
    assert set(GRADED_BY.values()) == {"trajectory", "reference", "rubrics"}


@needs_adk
def test_import_with_criteria_replaces_test_config(tmp_path, capsys):
    out = tmp_path / "ds"
    assert (
        main(["dataset", "import", str(ROLL_DIE), "-o", str(out), "--format", "adk", "--criteria", str(HOME_CONFIG)])
        == 0
    )
    rows = [json.loads(x) for x in (out / "dataset.jsonl").read_text().splitlines()]
    assert rows and all(r["case"]["criteria"] == {"tool_trajectory_avg_score": 1.0} for r in rows)
    assert {r["case"]["criteria_source"] for r in rows} == {HOME_CONFIG.name}
    manifest = json.loads((out / "dataset.json").read_text())
    file_info = manifest["imported_from"]["files"][0]
    assert file_info["criteria_file"]["file"] == HOME_CONFIG.name and len(file_info["criteria_file"]["sha256"]) == 64
    # without --criteria: ADK's default (no test_config.json is beside the file under its own name)
    plain = import_dataset(ROLL_DIE, tmp_path / "plain", "adk")
    assert json.loads((plain / "dataset.jsonl").read_text().splitlines()[0])["case"]["criteria_source"] == "default"


@needs_adk
def test_import_with_criteria_does_not_read_a_test_config_beside_the_file(tmp_path):
    """--criteria replaces test_config.json: a malformed one beside the file is not read (without it, it is)."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROLL_DIE, src / ROLL_DIE.name)
    (src / "test_config.json").write_text("{not json")
    plain = main(["dataset", "import", str(src / ROLL_DIE.name), "-o", str(tmp_path / "a"), "--format", "adk"])
    assert plain == 1
    out = tmp_path / "b"
    argv = ["dataset", "import", str(src / ROLL_DIE.name), "-o", str(out), "--format", "adk"]
    assert main([*argv, "--criteria", str(HOME_CONFIG)]) == 0
    rows = [json.loads(x) for x in (out / "dataset.jsonl").read_text().splitlines()]
    assert rows and {r["case"]["criteria_source"] for r in rows} == {HOME_CONFIG.name}


@needs_adk
def test_import_refuses_ungradable_criteria_and_other_formats(tmp_path, capsys):
    f = write_config(tmp_path)
    code = main(
        ["dataset", "import", str(ROLL_DIE), "-o", str(tmp_path / "a"), "--format", "adk", "--criteria", str(f)]
    )
    err = capsys.readouterr().err
    assert code == 1 and "hallucinations_v1" in err and "Traceback" not in err
    assert not (tmp_path / "a").exists()
    code = main(
        [
            "dataset",
            "import",
            str(ROLL_DIE),
            "-o",
            str(tmp_path / "b"),
            "--format",
            "adk",
            "--criteria",
            str(f),
            "--ignore-criteria",
            ",".join(UNGRADED),
        ]
    )
    assert code == 0
    assert "warning: eval_config.json: criterion safety_v1 is not graded" in capsys.readouterr().err
    src = shared_path(
        "interop", "qa-guru__java-ai-golden", "src__main__resources__eval__generation__golden-generation.jsonl"
    )
    code = main(
        [
            "dataset",
            "import",
            str(src),
            "-o",
            str(tmp_path / "c"),
            "--format",
            "golden",
            "--criteria",
            str(f),
            "--ignore-criteria",
            ",".join(UNGRADED),
        ]
    )
    assert code == 1 and "applies to --format adk" in capsys.readouterr().err


AGENT = """
from goldenkit.records import Response, TurnOutput

def perfect(case):
    return Response(turns=[TurnOutput(text=t.expected_response or "", tool_calls=list(t.expected_tools))
                           for t in case.turns])
"""


def _graders_of(run_dir: Path) -> dict[str, dict]:
    rec = json.loads((run_dir / "outcomes.jsonl").read_text().splitlines()[0])
    return rec["graders"]


@needs_adk
def test_run_with_criteria_grades_what_the_file_asks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "perfect_agent.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = import_dataset(ROLL_DIE, tmp_path / "ds", "adk")  # ADK's default criteria: trajectory and response
    base = [
        "run",
        str(ds),
        "--provider",
        "callable",
        "--callable",
        "perfect_agent:perfect",
        "--quiet",
        "--graders",
        "trajectory,reference",
    ]
    assert main([*base, "--run-id", "default"]) == 0
    default = _graders_of(tmp_path / "results" / "default")
    # one invocation's expected text is empty, so ROUGE-1 is 2/3: below ADK's default 0.8 ...
    assert default["trajectory"]["passed"] is True and default["reference"]["passed"] is False
    assert default["reference"]["score"] == pytest.approx(2 / 3) and "< 0.8" in default["reference"]["reason"]

    assert main([*base, "--run-id", "trip", "--criteria", str(TRIP_CONFIG)]) == 0  # response only
    trip = _graders_of(tmp_path / "results" / "trip")
    assert trip["reference"]["passed"] is True  # ... and above the file's 0.5
    assert trip["reference"]["score"] == pytest.approx(2 / 3)
    assert trip.get("trajectory") is None or trip["trajectory"]["passed"] is None
    run = json.loads((tmp_path / "results" / "trip" / "run.json").read_text())
    assert run["criteria"]["file"] == TRIP_CONFIG.name and run["criteria"]["ignored"] == []
    assert json.loads((tmp_path / "results" / "default" / "run.json").read_text())["criteria"] is None

    # resuming with another criteria file is refused; comparing runs of different criteria too
    assert main([*base, "--run-id", "trip", "--criteria", str(HOME_CONFIG)]) == 1
    assert "criteria" in capsys.readouterr().err
    code = main(["compare", str(tmp_path / "results" / "default"), str(tmp_path / "results" / "trip")])
    assert code == 4
    assert "criteria files differ: the cases' own vs " + TRIP_CONFIG.name in capsys.readouterr().err


@needs_adk
def test_run_refuses_criteria_without_their_grader_or_ungradable(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "perfect_agent.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = import_dataset(ROLL_DIE, tmp_path / "ds", "adk")
    base = ["run", str(ds), "--provider", "callable", "--callable", "perfect_agent:perfect", "--quiet"]
    assert main([*base, "--graders", "contract", "--criteria", str(HOME_CONFIG), "--run-id", "a"]) == 1
    assert "tool_trajectory_avg_score needs the trajectory grader" in capsys.readouterr().err
    f = write_config(tmp_path, {"criteria": {"tool_trajectory_avg_score": 1.0, "hallucinations_v1": 0.5}})
    assert main([*base, "--graders", "trajectory", "--criteria", str(f), "--run-id", "b"]) == 1
    assert "cannot grade criteria hallucinations_v1" in capsys.readouterr().err
    assert not (tmp_path / "results" / "a").exists() and not (tmp_path / "results" / "b").exists()
    assert (
        main(
            [
                *base,
                "--graders",
                "trajectory",
                "--criteria",
                str(f),
                "--ignore-criteria",
                "hallucinations_v1",
                "--run-id",
                "c",
            ]
        )
        == 0
    )
    assert "criterion hallucinations_v1 is not graded" in capsys.readouterr().err
    run = json.loads((tmp_path / "results" / "c" / "run.json").read_text())
    assert run["criteria"]["ignored"] == ["hallucinations_v1"]
    assert main([*base, "--ignore-criteria", "x", "--run-id", "d"]) == 1


def test_the_history_protocol_tells_criteria_apart_and_keeps_old_ids() -> None:
    """Runs graded with another ADK eval config are not trended together; runs without one keep their id."""
    from goldenkit.history._run_index import protocol_id

    old = {"repeats": 1, "graders": {"reference": "1"}}
    a = {**old, "criteria": {"file": "a.json", "sha256": "a" * 64, "ignored": []}}
    b = {**old, "criteria": {"file": "b.json", "sha256": "b" * 64, "ignored": []}}
    assert protocol_id(old) == protocol_id({**old, "criteria": None})
    assert len({protocol_id(old), protocol_id(a), protocol_id(b)}) == 3


def test_ignore_criteria_without_a_criteria_file_is_a_usage_error(tmp_path, capsys):
    run = ["run", str(SUPPORT), "--provider", "callable", "--callable", "json:dumps"]
    argv = {
        "run": [*run, "--results-dir", str(tmp_path / "results")],
        "dataset import": ["dataset", "import", str(ROLL_DIE), "-o", str(tmp_path / "o"), "--format", "adk"],
    }
    for command, args in argv.items():
        assert main([*args, "--ignore-criteria", "safety_v1"]) == 1
        assert f"goldenkit {command}: --ignore-criteria needs --criteria FILE" in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and not (tmp_path / "results").exists()
