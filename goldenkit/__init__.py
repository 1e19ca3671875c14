"""goldenkit: evaluate LLM models and agents on versioned golden datasets."""

from goldenkit.cases import Case, Message, ToolCall, ToolResponse, Turn
from goldenkit.errors import (
    ComparisonInvalid,
    ConfigError,
    DatasetError,
    GateFailed,
    GoldenkitError,
    InfrastructureError,
    InputError,
    ProviderError,
    ResultsError,
    UsageError,
)
from goldenkit.dataset import Dataset, canonical_sha256, read_dataset
from goldenkit.formats import import_dataset, normalize_case
from goldenkit.graders import JudgeVerdict, build_graders, parse_judge, rouge1_f, trajectory_score
from goldenkit.graders.base import GradeResult, Grader, get_grader, register_grader
from goldenkit.metrics import run_metrics
from goldenkit.providers.base import Provider, Response, TurnOutput, get_provider, register_provider
from goldenkit.results import Run, outcomes_df, read_run
from goldenkit.runner import RunSummary, arun_eval, run_eval
from goldenkit.sampling import assign_splits, stratified_sample, weekly_seed
from goldenkit.stats import (
    clustered_se,
    collapse_repeats,
    flaky_rows,
    holm,
    mcnemar_exact,
    min_detectable_effect,
    paired_diff_ci,
    rows_needed,
    slice_table,
    wilson_ci,
)
from goldenkit.compare import Comparison, compare_runs
from goldenkit.gate import GateDecision, GatePolicy, evaluate_gate
from goldenkit.baselines import read_baseline, save_baseline
from goldenkit.audit import apply_audit
from goldenkit.notebooks import run_notebook

__version__ = "0.1.0"

__all__ = [
    "Case",
    "Comparison",
    "ComparisonInvalid",
    "ConfigError",
    "Dataset",
    "DatasetError",
    "GateDecision",
    "GateFailed",
    "GatePolicy",
    "GoldenkitError",
    "GradeResult",
    "Grader",
    "InfrastructureError",
    "InputError",
    "JudgeVerdict",
    "Message",
    "Provider",
    "ProviderError",
    "Response",
    "ResultsError",
    "Run",
    "RunSummary",
    "ToolCall",
    "ToolResponse",
    "Turn",
    "TurnOutput",
    "UsageError",
    "apply_audit",
    "arun_eval",
    "assign_splits",
    "build_graders",
    "canonical_sha256",
    "clustered_se",
    "collapse_repeats",
    "compare_runs",
    "evaluate_gate",
    "flaky_rows",
    "get_grader",
    "get_provider",
    "holm",
    "import_dataset",
    "mcnemar_exact",
    "min_detectable_effect",
    "normalize_case",
    "outcomes_df",
    "paired_diff_ci",
    "parse_judge",
    "read_baseline",
    "read_dataset",
    "read_run",
    "register_grader",
    "register_provider",
    "rouge1_f",
    "rows_needed",
    "run_eval",
    "run_metrics",
    "run_notebook",
    "save_baseline",
    "slice_table",
    "stratified_sample",
    "trajectory_score",
    "weekly_seed",
    "wilson_ci",
]
