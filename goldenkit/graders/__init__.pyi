"""goldenkit.graders's public names, listed once: each name and the module it lives in."""

from goldenkit.graders._base import (
    FunctionGrader as FunctionGrader,
    Grader as Grader,
    GradeResult as GradeResult,
    agrade_case as agrade_case,
    case_grader_names as case_grader_names,
    combine as combine,
    get_grader as get_grader,
    grade_case as grade_case,
    grader_names as grader_names,
    register_grader as register_grader,
)
from goldenkit.graders._build import (
    DEFAULT_USE as DEFAULT_USE,
    build_graders as build_graders,
    judge_version_of as judge_version_of,
    register_function as register_function,
)
from goldenkit.graders._calibration import (
    CalibrationReport as CalibrationReport,
    calibration_report as calibration_report,
    judge_labels as judge_labels,
    read_labels as read_labels,
)
from goldenkit.graders._contract import (
    ContractGrader as ContractGrader,
    contract_expectations as contract_expectations,
)
from goldenkit.graders._gradable import (
    check_gradable as check_gradable,
    describe as describe,
    describe_soft_only as describe_soft_only,
    gradability as gradability,
    shown_ids as shown_ids,
)
from goldenkit.graders._judge import (
    JudgeGrader as JudgeGrader,
    JudgeVerdict as JudgeVerdict,
    parse_judge as parse_judge,
)
from goldenkit.graders._match import (
    ReferenceMatchGrader as ReferenceMatchGrader,
    rouge1_f as rouge1_f,
)
from goldenkit.graders._retrieval import (
    RetrievalGrader as RetrievalGrader,
)
from goldenkit.graders._rubrics import (
    RUBRIC_INSTRUCTIONS as RUBRIC_INSTRUCTIONS,
    RubricGrader as RubricGrader,
)
from goldenkit.graders._state import (
    StateGrader as StateGrader,
)
from goldenkit.graders._trajectory import (
    TrajectoryGrader as TrajectoryGrader,
    trajectory_score as trajectory_score,
)
