"""goldenkit's public API, listed once: each public name and the module it lives in.

Type checkers and editors read this stub; at run time ``goldenkit/__init__.py`` reads the same
lines (:func:`goldenkit._registry.attach_stub`) and imports each name from its module on first
use, so ``import goldenkit`` stays cheap. A new public name is one line here.
"""

__version__: str

from goldenkit.audit import (
    apply_audit as apply_audit,
)
from goldenkit.baselines import (
    read_baseline as read_baseline,
    save_baseline as save_baseline,
)
from goldenkit.compare import (
    Comparison as Comparison,
    compare_runs as compare_runs,
    why as why,
)
from goldenkit.dataset import (
    Dataset as Dataset,
    canonical_sha256 as canonical_sha256,
    read_dataset as read_dataset,
)
from goldenkit.errors import (
    ComparisonInvalid as ComparisonInvalid,
    ConfigError as ConfigError,
    DatasetError as DatasetError,
    GateFailed as GateFailed,
    GoldenkitError as GoldenkitError,
    InfrastructureError as InfrastructureError,
    InputError as InputError,
    ProviderError as ProviderError,
    ResultsError as ResultsError,
    UsageError as UsageError,
)
from goldenkit.formats import (
    import_dataset as import_dataset,
    normalize_case as normalize_case,
)
from goldenkit.gate import (
    GateDecision as GateDecision,
    GatePolicy as GatePolicy,
    evaluate_gate as evaluate_gate,
)
from goldenkit.graders import (
    Grader as Grader,
    GradeResult as GradeResult,
    JudgeVerdict as JudgeVerdict,
    build_graders as build_graders,
    get_grader as get_grader,
    parse_judge as parse_judge,
    register_grader as register_grader,
    rouge1_f as rouge1_f,
    trajectory_score as trajectory_score,
)
from goldenkit.harnesses import (
    import_run as import_run,
)
from goldenkit.history import (
    query as query,
    runs_df as runs_df,
    trend as trend,
)
from goldenkit.leaderboards import (
    Leaderboard as Leaderboard,
    leaderboard as leaderboard,
    pass_at_k as pass_at_k,
)
from goldenkit.metrics import (
    run_metrics as run_metrics,
)
from goldenkit.notebooks import (
    run_notebook as run_notebook,
)
from goldenkit.pages import (
    build_site as build_site,
)
from goldenkit.providers import (
    Provider as Provider,
    Response as Response,
    TurnOutput as TurnOutput,
    get_provider as get_provider,
    register_provider as register_provider,
)
from goldenkit.records import (
    Case as Case,
    ImagePart as ImagePart,
    Message as Message,
    ToolCall as ToolCall,
    ToolResponse as ToolResponse,
    Turn as Turn,
)
from goldenkit.report import (
    explore as explore,
)
from goldenkit.results import (
    Run as Run,
    outcomes_df as outcomes_df,
    read_run as read_run,
)
from goldenkit.runner import (
    RunInterrupted as RunInterrupted,
    RunOptions as RunOptions,
    RunSummary as RunSummary,
    arun_eval as arun_eval,
    explain_clusters as explain_clusters,
    merge_shards as merge_shards,
    regrade as regrade,
    run_eval as run_eval,
    shard_of as shard_of,
)
from goldenkit.sampling import (
    assign_splits as assign_splits,
    stratified_sample as stratified_sample,
    weekly_seed as weekly_seed,
)
from goldenkit.stats import (
    clustered_se as clustered_se,
    collapse_repeats as collapse_repeats,
    flaky_rows as flaky_rows,
    holm as holm,
    mcnemar_exact as mcnemar_exact,
    min_detectable_effect as min_detectable_effect,
    paired_diff_ci as paired_diff_ci,
    rows_needed as rows_needed,
    sequential_paired_test as sequential_paired_test,
    slice_table as slice_table,
    wilson_ci as wilson_ci,
)
