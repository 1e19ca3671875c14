"""Column names and on-disk records shared by every stage.

Every record goldenkit writes carries ``schema_version``. The outcome record is
one JSON object per row x repeat in ``outcomes.jsonl`` (and one row of
``outcomes.parquet``); its keys are :data:`OUTCOME_FIELDS`.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

# A dataset folder: the rows and the manifest (name, version, changelog).
DATA_FILE = "dataset.jsonl"
MANIFEST_FILE = "dataset.json"

# Dataset rows (DataFrame columns of Dataset.rows), in order.
ROW_COLUMNS = ("id", "slice", "tags", "split", "source", "added", "case")
SPLITS = ("dev", "holdout")
RED_TAG = "red"  # the tag of a red row: an expected failure (goldenkit.dataset.red)

# Verdicts of one outcome (row x repeat).
PASS = "PASS"
FAIL = "FAIL"
ERROR = "ERROR"
SKIPPED = "SKIPPED"
VERDICTS = (PASS, FAIL, ERROR, SKIPPED)

# Per-row comparison statuses (baseline -> candidate).
NEW_FAILURE = "NEW_FAILURE"
RECOVERED = "RECOVERED"
UNCHANGED_PASS = "UNCHANGED_PASS"
UNCHANGED_FAIL = "UNCHANGED_FAIL"
NEW_ERROR = "NEW_ERROR"
ERROR_CLEARED = "ERROR_CLEARED"
UNCHANGED_ERROR = "UNCHANGED_ERROR"
SKIPPED_TO_ERROR = "SKIPPED_TO_ERROR"  # SKIPPED in the base, ERROR in the candidate
ERROR_TO_SKIPPED = "ERROR_TO_SKIPPED"  # ERROR in the base, SKIPPED in the candidate
UNCHANGED_SKIPPED = "SKIPPED"  # SKIPPED on a side, no error on either

# Run validity (run.json "validity").
VALID = "VALID"
INVALID = "INVALID"

# The outcome record (outcomes.jsonl / outcomes.parquet), in order.
#   agent_version: {"git_commit", "model_id", "prompt_sha256"}
#   graders: {grader name: {"passed", "score", "reason", "error"}}
#   trajectory: [{"text", "tool_calls": [{"name", "args"}], "tool_responses", "intermediate"}] per turn
#   error_kind: "transient" | "permanent" | None (ERROR outcomes only)
OUTCOME_FIELDS = (
    "schema_version",
    "run_id",
    "dataset_name",
    "dataset_version",
    "dataset_sha256",
    "agent_version",
    "judge_version",
    "row_id",
    "slice",
    "split",
    "tags",
    "repeat",
    "verdict",
    "detail",
    "error_kind",
    "graders",
    "response",
    "trajectory",
    "latency_ms",
    "ttft_ms",
    "attempts",
    "tokens_in",
    "tokens_out",
    "cost",
    "started_at",
)

RUN_FILE = "run.json"
OUTCOMES_JSONL = "outcomes.jsonl"
OUTCOMES_PARQUET = "outcomes.parquet"

# Provider settings that say where/how to connect, not how the agent or judge behaves:
# left out of the agent version's prompt_sha256 and of the judge version.
TRANSPORT_SETTINGS = frozenset({"base_url", "host", "api_key_env", "timeout", "max_connections", "fixtures"})
