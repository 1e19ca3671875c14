"""goldenkit: evaluate LLM models and agents on versioned golden datasets."""

from __future__ import annotations

import typing as _typing

from goldenkit.cases import (
    Case,
    ImagePart,
    Message,
    ToolCall,
    ToolResponse,
    Turn,
)
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
from goldenkit.registry import lazy_attributes as _lazy_attributes

if _typing.TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.audit import (
        apply_audit,
    )
    from goldenkit.baselines import (
        read_baseline,
        save_baseline,
    )
    from goldenkit.compare import (
        Comparison,
        compare_runs,
        why,
    )
    from goldenkit.dataset import (
        Dataset,
        canonical_sha256,
        read_dataset,
    )
    from goldenkit.formats import (
        import_dataset,
        normalize_case,
    )
    from goldenkit.gate import (
        GateDecision,
        GatePolicy,
        evaluate_gate,
    )
    from goldenkit.graders import (
        JudgeVerdict,
        build_graders,
        parse_judge,
        rouge1_f,
        trajectory_score,
    )
    from goldenkit.graders.base import (
        Grader,
        GradeResult,
        get_grader,
        register_grader,
    )
    from goldenkit.harnesses import (
        import_run,
    )
    from goldenkit.history import (
        query,
        runs_df,
        trend,
    )
    from goldenkit.leaderboards.passk import (
        pass_at_k,
    )
    from goldenkit.leaderboards.ranking import (
        Leaderboard,
        leaderboard,
    )
    from goldenkit.metrics import (
        run_metrics,
    )
    from goldenkit.notebooks import (
        run_notebook,
    )
    from goldenkit.pages import (
        build_site,
    )
    from goldenkit.providers.base import (
        Provider,
        Response,
        TurnOutput,
        get_provider,
        register_provider,
    )
    from goldenkit.report.explore import explore
    from goldenkit.results import (
        Run,
        outcomes_df,
        read_run,
    )
    from goldenkit.runner import (
        RunInterrupted,
        RunSummary,
        arun_eval,
        merge_shards,
        run_eval,
        shard_of,
    )
    from goldenkit.runner.regrade import regrade
    from goldenkit.sampling import (
        assign_splits,
        stratified_sample,
        weekly_seed,
    )
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

__version__ = "0.1.0"

# Everything else is imported on first use (PEP 562): ``import goldenkit`` stays cheap, so
# `goldenkit run` reaches its first model call without loading statsmodels, scipy or nltk.
_LAZY: dict[str, str] = {
    "Comparison": "goldenkit.compare",
    "Dataset": "goldenkit.dataset",
    "GateDecision": "goldenkit.gate",
    "GatePolicy": "goldenkit.gate",
    "GradeResult": "goldenkit.graders.base",
    "Grader": "goldenkit.graders.base",
    "JudgeVerdict": "goldenkit.graders",
    "Leaderboard": "goldenkit.leaderboards.ranking",
    "Provider": "goldenkit.providers.base",
    "Response": "goldenkit.providers.base",
    "Run": "goldenkit.results",
    "RunInterrupted": "goldenkit.runner",
    "RunSummary": "goldenkit.runner",
    "TurnOutput": "goldenkit.providers.base",
    "apply_audit": "goldenkit.audit",
    "arun_eval": "goldenkit.runner",
    "assign_splits": "goldenkit.sampling",
    "build_graders": "goldenkit.graders",
    "canonical_sha256": "goldenkit.dataset",
    "clustered_se": "goldenkit.stats",
    "collapse_repeats": "goldenkit.stats",
    "compare_runs": "goldenkit.compare",
    "evaluate_gate": "goldenkit.gate",
    "explore": "goldenkit.report.explore",
    "flaky_rows": "goldenkit.stats",
    "get_grader": "goldenkit.graders.base",
    "get_provider": "goldenkit.providers.base",
    "holm": "goldenkit.stats",
    "import_dataset": "goldenkit.formats",
    "import_run": "goldenkit.harnesses",
    "mcnemar_exact": "goldenkit.stats",
    "merge_shards": "goldenkit.runner",
    "min_detectable_effect": "goldenkit.stats",
    "leaderboard": "goldenkit.leaderboards.ranking",
    "normalize_case": "goldenkit.formats",
    "outcomes_df": "goldenkit.results",
    "query": "goldenkit.history",
    "runs_df": "goldenkit.history",
    "trend": "goldenkit.history",
    "build_site": "goldenkit.pages",
    "paired_diff_ci": "goldenkit.stats",
    "parse_judge": "goldenkit.graders",
    "pass_at_k": "goldenkit.leaderboards.passk",
    "read_baseline": "goldenkit.baselines",
    "read_dataset": "goldenkit.dataset",
    "read_run": "goldenkit.results",
    "regrade": "goldenkit.runner.regrade",
    "register_grader": "goldenkit.graders.base",
    "register_provider": "goldenkit.providers.base",
    "rouge1_f": "goldenkit.graders",
    "rows_needed": "goldenkit.stats",
    "run_eval": "goldenkit.runner",
    "run_metrics": "goldenkit.metrics",
    "run_notebook": "goldenkit.notebooks",
    "save_baseline": "goldenkit.baselines",
    "shard_of": "goldenkit.runner",
    "slice_table": "goldenkit.stats",
    "stratified_sample": "goldenkit.sampling",
    "trajectory_score": "goldenkit.graders",
    "weekly_seed": "goldenkit.sampling",
    "why": "goldenkit.compare",
    "wilson_ci": "goldenkit.stats",
}


__getattr__ = _lazy_attributes(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
    "ImagePart",
    "InfrastructureError",
    "InputError",
    "JudgeVerdict",
    "Leaderboard",
    "Message",
    "Provider",
    "ProviderError",
    "Response",
    "ResultsError",
    "Run",
    "RunInterrupted",
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
    "build_site",
    "canonical_sha256",
    "clustered_se",
    "collapse_repeats",
    "compare_runs",
    "evaluate_gate",
    "explore",
    "flaky_rows",
    "get_grader",
    "get_provider",
    "holm",
    "import_dataset",
    "import_run",
    "leaderboard",
    "mcnemar_exact",
    "merge_shards",
    "min_detectable_effect",
    "normalize_case",
    "outcomes_df",
    "paired_diff_ci",
    "parse_judge",
    "pass_at_k",
    "query",
    "read_baseline",
    "read_dataset",
    "read_run",
    "register_grader",
    "register_provider",
    "regrade",
    "rouge1_f",
    "rows_needed",
    "run_eval",
    "run_metrics",
    "run_notebook",
    "runs_df",
    "save_baseline",
    "shard_of",
    "slice_table",
    "stratified_sample",
    "trajectory_score",
    "trend",
    "weekly_seed",
    "why",
    "wilson_ci",
]
