"""Graders: contract, trajectory, reference match and LLM judge.

Built-in graders register themselves here under their names: ``contract``
(:class:`ContractGrader`), ``trajectory`` (:class:`TrajectoryGrader`),
``reference`` (:class:`ReferenceMatchGrader`), ``judge``
(:class:`JudgeGrader`), ``rubrics`` (:class:`RubricGrader`), ``retrieval``
(:class:`RetrievalGrader`) and ``state`` (:class:`StateGrader`). Users add
their own with :func:`register_grader` (a class or factory) or :func:`register_function` (a plain function), and choose
graders per dataset with :func:`build_graders` (``[graders] use`` in
goldenkit.toml). The grading rules are public functions too:
:func:`trajectory_score`, :func:`rouge1_f` and :func:`parse_judge`.
"""

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
from goldenkit.graders.build import DEFAULT_USE, build_graders, judge_version_of, register_function
from goldenkit.graders.contract import ContractGrader, contract_expectations
from goldenkit.graders.judge import JudgeGrader, JudgeVerdict, parse_judge
from goldenkit.graders.match import ReferenceMatchGrader, rouge1_f
from goldenkit.graders.retrieval import RetrievalGrader
from goldenkit.graders.rubrics import RubricGrader
from goldenkit.graders.state import StateGrader
from goldenkit.graders.trajectory import TrajectoryGrader, trajectory_score

# Judge calibration needs statsmodels; it is loaded on first use so that a run
# (which only grades) starts without importing it.
_LAZY = {"CalibrationReport", "calibration_report", "read_labels"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from goldenkit.graders import calibration

        return getattr(calibration, name)
    raise AttributeError(f"module 'goldenkit.graders' has no attribute {name!r}")


register_grader("contract", ContractGrader, replace=True)
register_grader("trajectory", TrajectoryGrader, replace=True)
register_grader("reference", ReferenceMatchGrader, replace=True)
register_grader("judge", JudgeGrader, replace=True)
register_grader("rubrics", RubricGrader, replace=True)
register_grader("retrieval", RetrievalGrader, replace=True)
register_grader("state", StateGrader, replace=True)

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
