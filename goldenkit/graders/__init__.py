"""Graders: contract, trajectory, reference match, retrieval, state, rubrics and LLM judge.

The built-in graders, by name: ``contract`` (:class:`ContractGrader`),
``trajectory`` (:class:`TrajectoryGrader`), ``reference``
(:class:`ReferenceMatchGrader`), ``judge`` (:class:`JudgeGrader`), ``rubrics``
(:class:`RubricGrader`), ``retrieval`` (:class:`RetrievalGrader`) and ``state``
(:class:`StateGrader`); each module is imported the first time its name or one
of its names here is asked for. Users add their own with
:func:`register_grader` (a class or factory) or :func:`register_function` (a
plain function), and choose graders per dataset with :func:`build_graders`
(``[graders] use`` in goldenkit.toml). The grading rules are public functions
too: :func:`trajectory_score`, :func:`rouge1_f` and :func:`parse_judge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes
from goldenkit.graders._base import (
    FunctionGrader,
    Grader,
    GradeResult,
    agrade_case,
    case_grader_names,
    combine,
    get_grader,
    grade_case,
    grader_names,
    register_grader,
)

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.graders._build import DEFAULT_USE, build_graders, judge_version_of, register_function
    from goldenkit.graders._calibration import CalibrationReport, calibration_report, read_labels
    from goldenkit.graders._contract import ContractGrader, contract_expectations
    from goldenkit.graders._judge import JudgeGrader, JudgeVerdict, parse_judge
    from goldenkit.graders._match import ReferenceMatchGrader, rouge1_f
    from goldenkit.graders._retrieval import RetrievalGrader
    from goldenkit.graders._rubrics import RubricGrader
    from goldenkit.graders._state import StateGrader
    from goldenkit.graders._trajectory import TrajectoryGrader, trajectory_score

# The graders themselves load on first use (a run imports only those it grades with;
# calibration, which needs statsmodels, only when asked for).
_LAZY: dict[str, str] = {
    "DEFAULT_USE": "._build",
    "build_graders": "._build",
    "judge_version_of": "._build",
    "register_function": "._build",
    "CalibrationReport": "._calibration",
    "calibration_report": "._calibration",
    "read_labels": "._calibration",
    "ContractGrader": "._contract",
    "contract_expectations": "._contract",
    "JudgeGrader": "._judge",
    "JudgeVerdict": "._judge",
    "parse_judge": "._judge",
    "ReferenceMatchGrader": "._match",
    "rouge1_f": "._match",
    "RetrievalGrader": "._retrieval",
    "RubricGrader": "._rubrics",
    "RUBRIC_INSTRUCTIONS": "._rubrics",
    "StateGrader": "._state",
    "TrajectoryGrader": "._trajectory",
    "trajectory_score": "._trajectory",
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    "RUBRIC_INSTRUCTIONS",
    "CalibrationReport",
    "ContractGrader",
    "DEFAULT_USE",
    "FunctionGrader",
    "GradeResult",
    "Grader",
    "JudgeGrader",
    "JudgeVerdict",
    "ReferenceMatchGrader",
    "RetrievalGrader",
    "RubricGrader",
    "StateGrader",
    "TrajectoryGrader",
    "agrade_case",
    "build_graders",
    "calibration_report",
    "case_grader_names",
    "combine",
    "contract_expectations",
    "get_grader",
    "grade_case",
    "grader_names",
    "judge_version_of",
    "parse_judge",
    "read_labels",
    "register_function",
    "register_grader",
    "rouge1_f",
    "trajectory_score",
]
