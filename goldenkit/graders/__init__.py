"""Graders: contract, trajectory, reference match and LLM judge.

Built-in graders register themselves here under their names: ``contract``,
``trajectory``. Users add their own with :func:`register_grader` (a class or
factory) or wrap a plain function in :class:`FunctionGrader`.
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
from goldenkit.graders.contract import ContractGrader, contract_expectations
from goldenkit.graders.trajectory import TrajectoryGrader, trajectory_score

register_grader("contract", ContractGrader, replace=True)
register_grader("trajectory", TrajectoryGrader, replace=True)

__all__ = [
    "ContractGrader",
    "FunctionGrader",
    "GradeResult",
    "Grader",
    "TrajectoryGrader",
    "agrade_case",
    "case_grader_names",
    "combine",
    "contract_expectations",
    "get_grader",
    "grade_case",
    "grader_names",
    "register_grader",
    "trajectory_score",
]
