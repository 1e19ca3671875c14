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

from goldenkit.graders.base import (
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
from goldenkit.registry import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.graders.build import DEFAULT_USE, build_graders, judge_version_of, register_function
    from goldenkit.graders.calibration import CalibrationReport, calibration_report, read_labels
    from goldenkit.graders.contract import ContractGrader, contract_expectations
    from goldenkit.graders.judge import JudgeGrader, JudgeVerdict, parse_judge
    from goldenkit.graders.match import ReferenceMatchGrader, rouge1_f
    from goldenkit.graders.retrieval import RetrievalGrader
    from goldenkit.graders.rubrics import RubricGrader
    from goldenkit.graders.state import StateGrader
    from goldenkit.graders.trajectory import TrajectoryGrader, trajectory_score

# The graders themselves load on first use (a run imports only those it grades with;
# calibration, which needs statsmodels, only when asked for).
_LAZY: dict[str, str] = {
    "DEFAULT_USE": ".build",
    "build_graders": ".build",
    "judge_version_of": ".build",
    "register_function": ".build",
    "CalibrationReport": ".calibration",
    "calibration_report": ".calibration",
    "read_labels": ".calibration",
    "ContractGrader": ".contract",
    "contract_expectations": ".contract",
    "JudgeGrader": ".judge",
    "JudgeVerdict": ".judge",
    "parse_judge": ".judge",
    "ReferenceMatchGrader": ".match",
    "rouge1_f": ".match",
    "RetrievalGrader": ".retrieval",
    "RubricGrader": ".rubrics",
    "StateGrader": ".state",
    "TrajectoryGrader": ".trajectory",
    "trajectory_score": ".trajectory",
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
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
