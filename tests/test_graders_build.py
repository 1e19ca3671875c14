"""Choosing graders from goldenkit.toml, per-row selection, and user-registered graders."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from goldenkit.config import read_config
from goldenkit.errors import ConfigError
from goldenkit.graders import (
    ContractGrader,
    Grader,
    GradeResult,
    JudgeGrader,
    ReferenceMatchGrader,
    TrajectoryGrader,
    build_graders,
    grade_case,
    judge_version_of,
    register_function,
    register_grader,
)
from goldenkit.providers._base import Response
from goldenkit.records import Case, Turn


def judge_reply(case, repeat=0) -> str:
    """A stand-in judge model for the callable provider."""
    return '{"decision": "ACCEPT", "score": 1, "reasons": ["fine"]}'


def test_default_graders() -> None:
    gs = build_graders({})
    assert [type(g) for g in gs] == [ContractGrader, TrajectoryGrader, ReferenceMatchGrader]
    assert [g.name for g in gs] == ["contract", "trajectory", "reference"]
    assert all(g.version for g in gs) and judge_version_of(gs) is None


def test_options_tables_and_errors(tmp_path: Path) -> None:
    toml = tmp_path / "goldenkit.toml"
    toml.write_text(
        '[graders]\nuse = ["contract", "reference"]\n'
        '[graders.contract]\nrefusal_patterns = ["^Отказ\\\\."]\n'
        "[graders.reference]\nthreshold = 0.5\n",
        encoding="utf-8",
    )
    contract, reference = build_graders(read_config(toml))
    assert [p.pattern for p in contract.refusal_patterns] == ["^Отказ\\."]
    assert reference.threshold == 0.5 and reference.version.startswith("1+")
    with pytest.raises(ConfigError, match=r"\[graders.contract\] refusal: unknown option \(did you mean refusal_"):
        build_graders({"graders": {"use": ["contract"], "contract": {"refusal": 1}}})
    with pytest.raises(ConfigError, match="unknown grader 'bleu'"):
        build_graders({"graders": {"use": ["bleu"]}})
    with pytest.raises(ConfigError, match="must be a list of grader names"):
        build_graders({"graders": {"use": "contract"}})
    with pytest.raises(ConfigError, match="names 'contract' twice"):
        build_graders({"graders": {"use": ["contract", "contract"]}})


def judge_config(tmp_path: Path, **judge) -> dict:
    rubric = tmp_path / "rubric.md"
    rubric.write_text("Accept helpful, correct answers.\n", encoding="utf-8")
    section = {
        "provider": "callable",
        "model": "judge-1",
        "rubric": "rubric.md",
        "options": {"callable": "test_graders_build:judge_reply"},
        **judge,
    }
    return {"_path": str(tmp_path / "goldenkit.toml"), "graders": {"use": ["contract", "judge"]}, "judge": section}


def test_judge_from_config(tmp_path: Path) -> None:
    gs = build_graders(judge_config(tmp_path), generator_model="gen-model")
    judge = gs[1]
    assert isinstance(judge, JudgeGrader) and not judge.hard
    assert judge_version_of(gs) == judge.judge_version and judge.judge_version.startswith("judge-1+rubric.")
    case = Case(id="c", shape="contract", turns=(Turn(user="q"),), expect={"must_contain": ["x"]})
    r = grade_case(gs, case, Response.from_text("x"))
    assert r["judge"] == GradeResult(True, 1.0, "ACCEPT: fine")


def test_judge_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="self-preference"):
        build_graders(judge_config(tmp_path), generator_model="judge-1")
    with pytest.raises(ConfigError, match=r"\[judge\] provider is required"):
        build_graders({"graders": {"use": ["judge"]}})
    with pytest.raises(ConfigError, match=r"\[judge\] temperature: unknown key.*go in \[judge.options\]"):
        build_graders(judge_config(tmp_path, temperature=0))
    with pytest.raises(ConfigError, match="pinned 0000"):
        build_graders(judge_config(tmp_path, rubric_sha256="0000"))
    pin = hashlib.sha256(b"Accept helpful, correct answers.\n").hexdigest()
    assert build_graders(judge_config(tmp_path, rubric_sha256=pin))[1].rubric_sha256 == pin


def test_hard_judge_with_calibration_file(tmp_path: Path) -> None:
    version = build_graders(judge_config(tmp_path))[1].judge_version
    report = tmp_path / "cal.json"
    report.write_text(json.dumps({"judge_version": version, "hard_allowed": True}), encoding="utf-8")
    judge = build_graders(judge_config(tmp_path, hard=True, calibration="cal.json"))[1]
    assert judge.hard is True
    report.write_text(json.dumps({"judge_version": version, "hard_allowed": False, "why": "n = 12 < 30"}))
    with pytest.raises(ConfigError, match="does not allow a hard judge: n = 12 < 30"):
        build_graders(judge_config(tmp_path, hard=True, calibration="cal.json"))


def test_user_graders_function_and_class() -> None:
    def short_answer(case: Case, response: Response) -> bool:
        return len(response.text) <= 20

    register_function("short", short_answer, version="2", replace=True)

    class Polite(Grader):
        name = "polite"
        version = "1.1"

        def __init__(self, word: str = "please") -> None:
            self.word = word

        def grade(self, case: Case, response: Response) -> GradeResult:
            ok = self.word in response.text
            return GradeResult(ok, float(ok), "" if ok else f"polite: missing {self.word!r}")

    register_grader("polite", Polite, replace=True)
    short, polite = build_graders({"graders": {"use": ["short", "polite"], "polite": {"word": "thanks"}}})
    case = Case(id="c", shape="contract", turns=(Turn(user="q"),))
    r = grade_case([short, polite], case, Response.from_text("no thanks, this answer is long"))
    assert r["short"] == GradeResult(False, 0.0, "short returned False")
    assert r["polite"].passed is True and (short.version, polite.version) == ("2", "1.1")


def test_per_row_selection_and_crashing_grader() -> None:
    def crash(case: Case, response: Response) -> bool:
        raise KeyError("boom")

    register_function("crash", crash, replace=True)
    gs = build_graders({"graders": {"use": ["contract", "crash"]}})
    only_crash = Case(
        id="c", shape="contract", turns=(Turn(user="q"),), expect={"must_contain": ["x"]}, raw={"graders": ["crash"]}
    )
    r = grade_case(gs, only_crash, Response.from_text("y"))
    assert r["contract"] == GradeResult(None, reason="not selected for this case")
    assert r["crash"].error and r["crash"].reason == "KeyError: 'boom'"
