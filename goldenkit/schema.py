"""Column names and on-disk records shared by every stage.

Every record goldenkit writes carries ``schema_version``. The outcome record is
one JSON object per row x repeat in ``outcomes.jsonl`` (and one row of
``outcomes.parquet``); its keys are :data:`OUTCOME_FIELDS`.
"""

from __future__ import annotations

from collections.abc import Iterable

SCHEMA_VERSION = 1

# A dataset folder: the rows and the manifest (name, version, changelog).
DATA_FILE = "dataset.jsonl"
MANIFEST_FILE = "dataset.json"

# Dataset rows (DataFrame columns of Dataset.rows), in order.
ROW_COLUMNS = ("id", "slice", "tags", "split", "source", "added", "case")
SPLITS = ("dev", "holdout")
RED_TAG = "red"  # the tag of a red row: an expected failure (goldenkit.dataset._red)

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
MISSING_ROW = "MISSING"  # a baseline row the candidate has no outcome for (an incomplete run, a shard)

# The error taxonomy (an outcome's error_kind). Whose fault an ERROR is decides its exit code:
# only the candidate's own errors (refused, agent) count against it (exit 2 when new); the others
# are nobody's answer and are never quality (exit 3 when they take a slice's evidence).
TRANSIENT = "transient"  # might succeed if tried again: 429 with a short wait, 5xx, dropped connection, deadline
INFRASTRUCTURE = "infrastructure"  # an answer nobody gave: auth, quota, TLS, proxy/gateway pages, cut streams
REFUSED = "refused"  # the candidate's own request refused by the model: context length, content filter
AGENT = "agent"  # an in-process agent's or callable's own code raised (not a network or OS error)
GRADER = "grader"  # a hard grader (or judge) could not grade
SIMULATOR = "simulator"  # the user simulator failed
ERROR_KINDS = (TRANSIENT, INFRASTRUCTURE, REFUSED, AGENT, GRADER, SIMULATOR)
CANDIDATE_ERROR_KINDS = frozenset({REFUSED, AGENT})


def error_kind(value: object) -> str:
    """The taxonomy's name for a recorded ``error_kind`` (older runs wrote ``permanent``/``transient``).

    ``permanent`` (the name before the taxonomy, meaning the request itself was
    refused) reads as ``refused``; an unknown or missing kind reads as
    ``infrastructure``, never as the candidate's fault.

    >>> [error_kind(k) for k in ("permanent", "transient", "agent", None, "weird")]
    ['refused', 'transient', 'agent', 'infrastructure', 'infrastructure']
    """
    if value == "permanent":
        return REFUSED
    return value if isinstance(value, str) and value in ERROR_KINDS else INFRASTRUCTURE


def counts_against_candidate(kind: object) -> bool:
    """Whether an ERROR of this kind is the candidate's own (exit 2 when new), not an outage (exit 3).

    >>> counts_against_candidate("refused"), counts_against_candidate("infrastructure")
    (True, False)
    """
    return error_kind(kind) in CANDIDATE_ERROR_KINDS


# Run validity (run.json "validity").
VALID = "VALID"
INVALID = "INVALID"

# The outcome record (outcomes.jsonl / outcomes.parquet), in order.
#   agent_version: {"git_commit", "model_id", "prompt_sha256"}
#   graders: {grader name: {"passed", "score", "reason", "error", "findings"?}} (goldenkit._findings)
#   trajectory: [{"text", "tool_calls": [{"name", "args"}], "tool_responses", "intermediate"}] per turn
#   error_kind: one of ERROR_KINDS (ERROR outcomes and grader errors only), else None
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
    "tokens_cached",
    "tokens_reasoning",
    "cost",
    "usage",
    "started_at",
)

# Usage (goldenkit.results._accounting). The candidate's own counts are the outcome's ``tokens_in``,
# ``tokens_out``, ``tokens_cached`` (input tokens the server read from its cache: part of ``tokens_in``),
# ``tokens_reasoning`` (output tokens spent thinking: part of ``tokens_out``) and ``cost`` (the provider's
# price only), as the server reported them: a count it did not report is null, never 0. Its calls are the
# outcome's ``attempts``. The other roles' usage is the outcome's ``usage``: {role: {USAGE_COUNTS}}.
CANDIDATE = "candidate"
JUDGE = "judge"  # every model-graded grader (judge, rubrics)
SIMULATOR_ROLE = "simulator"  # the simulated user of a scenario case
ROLES = (CANDIDATE, JUDGE, SIMULATOR_ROLE)
TOKEN_COUNTS = ("tokens_in", "tokens_out", "tokens_cached", "tokens_reasoning")  # a Response's, an outcome's
USAGE_COUNTS = ("calls", *TOKEN_COUNTS, "cost")


def usage_of(reply: object, calls: int = 1) -> dict[str, object]:
    """The usage of ``calls`` model calls that gave ``reply`` (a Response or a chat reply): its token
    counts and cost as reported (None where not), as one role's entry of an outcome's ``usage``."""
    return {"calls": calls, **{key: getattr(reply, key, None) for key in USAGE_COUNTS if key != "calls"}}


def outcome_usage(
    usage: dict[str, dict[str, object]] | None, judge: Iterable[dict[str, object] | None]
) -> dict[str, dict[str, object]] | None:
    """An outcome's ``usage``: the roles a Response brought (the simulator's) and the judges' usage
    summed as the ``judge`` role; None when no role used a model."""
    out = dict(usage or {})
    for one in judge:
        summed = add_usage(out.get(JUDGE), one)
        if summed is not None:
            out[JUDGE] = summed
    return out or None


def add_usage(a: dict[str, object] | None, b: dict[str, object] | None) -> dict[str, object] | None:
    """The sum of two usages (dicts of :data:`USAGE_COUNTS`), count by count; a count neither reported
    stays None (a missing count is never 0).

    >>> add_usage({"calls": 1, "tokens_in": 5, "cost": None}, {"calls": 1, "tokens_in": None})
    {'calls': 2, 'tokens_in': 5, 'tokens_out': None, 'tokens_cached': None, 'tokens_reasoning': None, 'cost': None}
    >>> add_usage(None, None) is None
    True
    """
    if a is None and b is None:
        return None
    out: dict[str, object] = {}
    for key in USAGE_COUNTS:
        x, y = (a or {}).get(key), (b or {}).get(key)
        out[key] = y if x is None else x if y is None else x + y  # type: ignore[operator]
    return out


RUN_FILE = "run.json"
OUTCOMES_JSONL = "outcomes.jsonl"
OUTCOMES_PARQUET = "outcomes.parquet"

# Provider settings that say where/how to connect, not how the agent or judge behaves:
# left out of the agent version's prompt_sha256 and of the judge version.
TRANSPORT_SETTINGS = frozenset({"base_url", "host", "api_key_env", "timeout", "max_connections", "fixtures"})
