"""goldenkit.results's public names, listed once: each name and the module it lives in."""

from goldenkit.results._accounting import (
    accounting as accounting,
    cost_line as cost_line,
    outcome_cost as outcome_cost,
    role_models as role_models,
    run_pricing as run_pricing,
    run_totals as run_totals,
    run_totals_of as run_totals_of,
    totals_text as totals_text,
)
from goldenkit.results._jsonl import (
    MAX_PENDING_LINES as MAX_PENDING_LINES,
    OutcomeLine as OutcomeLine,
    OutcomeWriter as OutcomeWriter,
    iter_jsonl as iter_jsonl,
    latest_per_pair as latest_per_pair,
    loads_line as loads_line,
    repair_jsonl as repair_jsonl,
    scan_jsonl as scan_jsonl,
)
from goldenkit.results._judge_evidence import (
    JUDGE as JUDGE,
    LabelRound as LabelRound,
    add_round as add_round,
    complete_rounds as complete_rounds,
    judge_difference as judge_difference,
    judge_estimates as judge_estimates,
    judge_rows as judge_rows,
    read_rounds as read_rounds,
)
from goldenkit.results._judge_figures import (
    judge_graded as judge_graded,
    judge_notes as judge_notes,
    judge_pair as judge_pair,
)
from goldenkit.results._judge_next import (
    LabelPlan as LabelPlan,
    label_plan as label_plan,
)
from goldenkit.results._labels import (
    LABELS_FILE as LABELS_FILE,
    HumanLabel as HumanLabel,
    add_labels as add_labels,
    labelled as labelled,
    read_labels as read_labels,
)
from goldenkit.results._latest import (
    LATEST as LATEST,
    update_latest as update_latest,
)
from goldenkit.results._light import (
    LIGHT_COLUMNS as LIGHT_COLUMNS,
    light_outcomes as light_outcomes,
)
from goldenkit.results._manifest import (
    SEQUENTIAL as SEQUENTIAL,
    read_manifest as read_manifest,
    record_end as record_end,
    run_key_of as run_key_of,
    run_record as run_record,
    sequential_line as sequential_line,
    sequential_rows as sequential_rows,
    stored_json as stored_json,
    write_json_atomic as write_json_atomic,
    write_run_record as write_run_record,
)
from goldenkit.results._parquet import (
    OUTCOME_SCHEMA as OUTCOME_SCHEMA,
    RECORD_BATCH as RECORD_BATCH,
    ROW_GROUP as ROW_GROUP,
    outcomes_table as outcomes_table,
    write_parquet as write_parquet,
    write_parquet_batches as write_parquet_batches,
)
from goldenkit.results._run import (
    Run as Run,
    outcomes_df as outcomes_df,
    read_run as read_run,
)
from goldenkit.results._usage_change import (
    paired_usage_line as paired_usage_line,
    runs_usage_change as runs_usage_change,
)
