"""Column names and on-disk records shared by every stage.

Every record goldenkit writes carries ``schema_version``. The two records of a run folder are typed
models, each field spelled once here:

* :class:`RunRecord`, run.json, with its ``format_version`` (:data:`FORMAT_VERSION`; a run.json
  without one is format 1, read as it is by :func:`goldenkit.results.read_manifest`, the one reader);
  its run key is :class:`RunKey`; every writer (a run, a regrade, a merge, an import) builds it with
  :func:`goldenkit.results.run_record`;
* :class:`Outcome`, one JSON object per row x repeat in ``outcomes.jsonl`` (and one row of
  ``outcomes.parquet``), in the format its run.json names; its keys are :data:`OUTCOME_FIELDS`, the
  Arrow schema (:data:`goldenkit.results.OUTCOME_SCHEMA`) is derived from its types, a regrade
  copies its :data:`ANSWER_FIELDS` from an outcome it cannot grade again, and the fields every
  outcome of a run shares are built by :func:`outcome_run` from the run key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, NotRequired, TypedDict, get_origin, get_type_hints

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

# The outcome record (outcomes.jsonl / outcomes.parquet): the typed model :class:`Outcome`, its keys in
# order are OUTCOME_FIELDS (the Arrow schema, goldenkit.results.OUTCOME_SCHEMA, is derived from it too).
#   graders: {grader name: GradeRecord} (findings: goldenkit._findings)
#   trajectory: [{"text", "tool_calls": [{"name", "args"}], "tool_responses", "intermediate"}] per turn
#   error_kind: one of ERROR_KINDS (ERROR outcomes and grader errors only), else None
# An outcome line's format is its run.json's ``format_version`` (the line itself keeps ``schema_version``).

#: The mark of a field kept as JSON text in Parquet (free-form nested JSON: every run has the same schema).
JSON_TEXT = "json-text"


class AgentVersion(TypedDict):
    """What identifies the agent (goldenkit.runner._versions.agent_version); ``artifacts_sha256`` since artifacts."""

    git_commit: str | None
    model_id: str | None
    prompt_sha256: str | None
    artifacts_sha256: NotRequired[str | None]


class GradeRecord(TypedDict, total=False):
    """One grader's result in an outcome's ``graders`` (:meth:`goldenkit.graders.GradeResult.to_dict`)."""

    passed: bool | None
    score: float | None
    reason: str | None
    error: bool | None
    findings: Annotated[list[dict[str, Any]] | str | None, JSON_TEXT]  # failing results only


class UsageRecord(TypedDict):
    """One role's usage in an outcome's ``usage`` (:data:`USAGE_COUNTS`; a count not reported is None)."""

    calls: int | None
    tokens_in: int | None
    tokens_out: int | None
    tokens_cached: int | None
    tokens_reasoning: int | None
    cost: float | None


class OutcomeRun(TypedDict):
    """The fields every outcome of a run shares (the runner's base record)."""

    schema_version: int
    run_id: str
    dataset_name: str | None
    dataset_version: str | None
    dataset_sha256: str | None
    agent_version: AgentVersion | None
    judge_version: str | None


def outcome_run(run_id: str, key: RunKey) -> OutcomeRun:
    """The fields every outcome of run ``run_id`` shares, from its run key ``key`` (a run's, a regrade's, an
    import's: one builder)."""
    dataset = key["dataset"] or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "dataset_name": dataset.get("name"),
        "dataset_version": dataset.get("version"),
        "dataset_sha256": dataset.get("sha256"),
        "agent_version": key["agent_version"],
        "judge_version": key["judge_version"],
    }


class OutcomeRow(TypedDict):
    """The dataset row and repeat an outcome is of."""

    row_id: str
    slice: str | None
    split: str | None
    tags: list[str] | None
    repeat: int


class OutcomeAnswer(TypedDict):
    """What the call and the graders gave: the fields a regrade copies from an outcome it cannot grade again."""

    verdict: str
    detail: str | None
    error_kind: str | None
    graders: dict[str, GradeRecord] | None
    response: str | None
    trajectory: Annotated[list[dict[str, Any]] | None, JSON_TEXT]
    latency_ms: float | None
    ttft_ms: float | None
    attempts: int | None
    tokens_in: int | None
    tokens_out: int | None
    tokens_cached: int | None
    tokens_reasoning: int | None
    cost: float | None
    usage: dict[str, UsageRecord] | None


class Outcome(OutcomeRun, OutcomeRow, OutcomeAnswer):
    """One outcome (row x repeat): a line of outcomes.jsonl, a row of outcomes.parquet."""

    started_at: str | None


OUTCOME_FIELDS: tuple[str, ...] = tuple(Outcome.__annotations__)
ANSWER_FIELDS: tuple[str, ...] = tuple(OutcomeAnswer.__annotations__)


def outcome_hints(model: type = Outcome) -> dict[str, Any]:
    """The fields of a record model (:class:`Outcome` or one of its parts) and their types, in order,
    the :data:`JSON_TEXT` marks kept (``typing.Annotated``)."""
    return get_type_hints(model, include_extras=True)


def required_fields(model: type) -> frozenset[str]:
    """The fields every record of ``model`` holds: all but those marked ``NotRequired`` (none of a
    ``total=False`` one). Read from the hints, as ``__required_keys__`` is not under postponed annotations."""
    if not getattr(model, "__total__", True):
        return frozenset()
    return frozenset(k for k, h in outcome_hints(model).items() if get_origin(h) is not NotRequired)


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

#: run.json's format: 2 is the typed record below, stamped ``format_version``; a run.json without the
#: field is format 1 (the same fields, written before the field existed) and reads unchanged
#: (goldenkit.results.read_manifest migrates older formats, in one place, and refuses a newer one).
FORMAT_VERSION = 2


class RunHead(TypedDict):
    """What run.json opens with: its record's versions, the run's id and label."""

    schema_version: int
    format_version: int
    run_id: str
    label: str | None  # ``--label``; None: derived where it is shown (goldenkit._run_label)


class RunKey(TypedDict):
    """The run key (goldenkit.runner's run_key): what a resume must agree on, and what the protocol key
    (goldenkit._protocol_key) is built from."""

    dataset: dict[str, Any] | None  # name, version, sha256, path, path_from_run
    agent_version: AgentVersion
    judge_version: str | None
    graders: dict[str, str]  # name -> version
    grader_hard: dict[str, bool]
    repeats: int
    sample: dict[str, Any] | None  # the sample spec (None: an import, every row the tool ran)
    mode: str  # live, fixtures, regrade, imported
    criteria: dict[str, Any] | None  # the --criteria file (name, sha256, ignored)
    vision: bool
    shard: NotRequired[dict[str, Any]]  # a shard's spec, beside the run key (never inside the protocol)
    simulator_version: NotRequired[dict[str, Any] | None]  # the simulated user's version, once the run has scenarios
    stop_decided_repeats: NotRequired[str]  # the rule a row's repeats stop under once decided
    source: NotRequired[dict[str, Any]]  # an imported run's source (format, file, inputs_sha256, cases)


class ProviderRecord(TypedDict):
    """run.json's ``provider``: its name and its settings, secrets redacted."""

    name: str
    settings: dict[str, Any]


class Timings(TypedDict):
    """run.json's ``timings``: one entry per invocation (started_at, ended_at, calls, ...)."""

    invocations: list[dict[str, Any]]
    merge_elapsed_s: NotRequired[float]  # a merged run's


class RegradedFrom(TypedDict):
    """A regraded run's source: the run it graded again, and the run whose calls made the answers."""

    run_id: str
    path: str
    answers_from: str


class RunRecord(RunHead, RunKey):
    """run.json (goldenkit.results.run_record builds it for every writer: a run, a regrade, a merge, an
    import; goldenkit.results.read_manifest reads it).

    The head, the run key (what a resume must agree on), the protocol key built from it, the provider
    and configuration, and what the run's end fills in (goldenkit.results.record_end). Tables that
    their own module owns stay maps: the protocol key, the counts, the accounting, the budget.
    """

    protocol: dict[str, Any]
    protocol_sha256: str
    provider: ProviderRecord | None
    config: dict[str, Any]
    started_at: str | None
    ended_at: str | None
    counts: dict[str, int] | None
    error_rate: float | None
    max_error_rate: float
    validity: str | None
    invalid_reason: str | None
    complete: bool
    timings: Timings
    notes: NotRequired[list[str]]  # an import's notes on what it could not read
    stopped_because: NotRequired[str]  # crash, budget
    crash: NotRequired[list[dict[str, str]]]  # each worker exception's type and message
    budget: NotRequired[dict[str, Any]]  # a budgeted run's spend (goldenkit.runner._budget)
    decided_repeats: NotRequired[dict[str, Any]]  # rows whose repeats stopped once decided
    sequential: NotRequired[dict[str, Any]]  # a sequential run's record (goldenkit.gate._sequential)
    regraded_from: NotRequired[RegradedFrom]
    merged_from: NotRequired[list[dict[str, Any]]]  # a merged run's shards: run_id and shard spec
    accounting: NotRequired[dict[str, Any]]  # the run's usage and cost, written at its end


RUN_FIELDS: tuple[str, ...] = tuple(RunRecord.__annotations__)
OUTCOMES_JSONL = "outcomes.jsonl"
OUTCOMES_PARQUET = "outcomes.parquet"

# Provider settings that say where/how to connect, not how the agent or judge behaves:
# left out of the agent version's prompt_sha256 and of the judge version.
TRANSPORT_SETTINGS = frozenset({"base_url", "host", "api_key_env", "timeout", "max_connections", "fixtures"})
