"""The runner: every row x repeat of a dataset through a provider and the graders, into a run folder.

:func:`run_eval` (sync; safe to call from Jupyter) and :func:`arun_eval` (async)
do, in order:

1. pick the rows (``sample``: split filter and/or stratified sample), resolve the
   graders, derive the run key (dataset sha256 and version, agent version, judge
   version, graders and versions, repeats, sample spec, mode);
2. create ``results/<run_id>/`` or **resume** it: a folder with the same run id
   must have the same run key (else :class:`~goldenkit.errors.ResultsError`), and
   only the row x repeat pairs with no outcome yet are called (with
   ``retry_errors=True`` the pairs whose last outcome is ERROR too; the new
   record supersedes the old one, last record per pair wins);
3. call the provider for each pending pair, each an independent call: at most
   ``max_in_flight`` at once, optionally at most ``rpm`` starts per minute.
   Transient failures are retried up to ``max_retries`` times with exponential
   backoff and full jitter, waiting at least the server's Retry-After. Repeated
   429s halve the concurrency (at most once per second); a run of successes
   raises it by one again, up to ``max_in_flight``;
4. grade each response with every grader (``agrade``; a grader that raises is
   recorded as a grader error, never a crash) and :func:`goldenkit.graders.base.combine`
   the results into PASS / FAIL / SKIPPED (or ERROR when grading itself failed);
   a call that produced nothing is ERROR with a one-line reason (status and URL
   without secrets), ``error_kind`` transient / permanent and the attempts made;
5. append each outcome to ``outcomes.jsonl`` as it completes (those of one event-loop
   pass in one write, see :class:`goldenkit.results.OutcomeWriter`), and at the
   end write ``outcomes.parquet`` and the final run.json: counts, error rate and
   validity. INVALID when the error rate exceeds ``max_error_rate``, when every
   outcome is ERROR (an infrastructure failure, never "0% quality"), or when the
   run stopped early.

A circuit breaker stops launching new calls after ``abort_after_errors``
consecutive provider ERRORs (a server that went away); the run is then
incomplete and INVALID, and resuming it with ``retry_errors=True`` finishes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from goldenkit._text import one_line
from goldenkit.cases import Case
from goldenkit.errors import ConfigError, GoldenkitError, ProviderError, ResultsError
from goldenkit.formats import normalize_case
from goldenkit.graders.base import Grader, agrade_case, combine, get_grader, grade_case
from goldenkit.providers.base import Provider, Response
from goldenkit.results import (
    OutcomeWriter,
    iter_jsonl,
    latest_per_pair,
    repair_jsonl,
    write_json_atomic,
    write_parquet,
)
from goldenkit.schema import (
    ERROR,
    FAIL,
    INVALID,
    OUTCOMES_JSONL,
    OUTCOMES_PARQUET,
    PASS,
    RUN_FILE,
    SCHEMA_VERSION,
    SKIPPED,
    VALID,
)

# Provider settings that say where/how to connect, not how the agent behaves:
# left out of the agent version's prompt_sha256.
TRANSPORT_SETTINGS = frozenset({"base_url", "host", "api_key_env", "timeout", "max_connections", "fixtures"})
_SECRET_KEY = re.compile(r"(^|_)(api_?key|key|token|secret|password|passwd|authorization|auth|credentials?)$", re.I)
# The young-generation GC threshold during a run (CPython's default is 700).
RUN_GC_THRESHOLD = 50_000
# Run-key fields that must agree to resume a run.
RUN_KEY_FIELDS = ("dataset", "agent_version", "judge_version", "graders", "repeats", "sample", "mode")


# ---------------------------------------------------------------- summary


@dataclass
class RunSummary:
    """What a run produced. ``exit_code`` is 0 for a VALID run and 3 for an INVALID one."""

    run_id: str
    path: Path
    counts: dict[str, int]
    error_rate: float
    max_error_rate: float
    validity: str
    invalid_reason: str | None
    complete: bool
    calls: int
    resumed: int
    elapsed_s: float
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def pass_rate(self) -> float | None:
        """PASS / (PASS + FAIL); None for an INVALID run or when nothing was graded.

        ERROR and SKIPPED never enter the denominator.
        """
        if self.validity != VALID:
            return None
        graded = self.counts.get(PASS, 0) + self.counts.get(FAIL, 0)
        return self.counts.get(PASS, 0) / graded if graded else None

    @property
    def exit_code(self) -> int:
        return 0 if self.validity == VALID else 3

    def line(self) -> str:
        c = self.counts
        pr = self.pass_rate
        rate = "n/a" if pr is None else f"{pr:.1%}"
        head = f"run {self.run_id}: {self.validity}"
        if self.invalid_reason:
            head += f" ({self.invalid_reason})"
        return (
            f"{head}; {c.get('total', 0)}/{c.get('expected', 0)} outcomes: "
            f"PASS {c.get(PASS, 0)}, FAIL {c.get(FAIL, 0)}, ERROR {c.get(ERROR, 0)}, "
            f"SKIPPED {c.get(SKIPPED, 0)}; pass rate {rate}; "
            f"error rate {self.error_rate:.1%}; {self.calls} calls in {self.elapsed_s:.1f}s; results in {self.path}"
        )


# ---------------------------------------------------------------- helpers


@dataclass
class _State:
    """What the workers of one invocation share."""

    calls: int = 0
    consecutive_errors: int = 0
    stopped: str | None = None
    first_error: str | None = None
    failure: Exception | None = None  # an error while writing graded outcomes outside a worker


_SECOND: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """Now in UTC as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (every outcome's ``started_at``).

    The date-time text of the current second is formatted once and reused, so a
    call costs a clock read and the milliseconds.
    """
    global _SECOND
    t = time.time()
    sec = int(t)
    cached_sec, text = _SECOND
    if sec != cached_sec:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        _SECOND = (sec, text)
    return f"{text}.{int((t - sec) * 1000):03d}Z"


def new_run_id() -> str:
    """``YYYYMMDD-HHMMSS-xxxxxx`` (UTC time and 6 random hex digits): sortable and unique."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The commit checked out in ``cwd`` (the working directory), or None outside a git repository."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def redact_settings(value: Any) -> Any:
    """Settings with every secret-looking key's value replaced by ``"***"`` (recursively)."""
    if isinstance(value, Mapping):
        return {
            str(k): ("***" if _SECRET_KEY.search(str(k)) and v not in (None, "") else redact_settings(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_settings(v) for v in value]
    return value


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def agent_version(provider: Provider, cwd: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """``{git_commit, model_id, prompt_sha256}`` of the system under test.

    A replaying provider (fixtures) returns the version recorded with its
    answers. Otherwise: the git commit of the working directory (None outside
    git), the provider's model id, and the SHA-256 of the system prompt plus the
    provider settings that shape answers (model, temperature, seed, max_tokens,
    ...; not where it is served from).
    """
    recorded = provider.recorded_agent_version()
    if recorded is not None:
        return {k: recorded.get(k) for k in ("git_commit", "model_id", "prompt_sha256")}
    settings = redact_settings(provider.settings())
    behaviour = {k: v for k, v in settings.items() if k not in TRANSPORT_SETTINGS}
    digest = hashlib.sha256(_canonical({"system": settings.get("system"), "settings": behaviour})).hexdigest()
    return {"git_commit": git_commit(cwd), "model_id": provider.model_id, "prompt_sha256": digest}


def _fmt_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


# ---------------------------------------------------------------- concurrency


class Limiter:
    """At most ``limit`` calls in flight, optional pacing to ``rpm`` starts per minute,
    a global pause (Retry-After), and AIMD adaptation of ``limit`` on 429s."""

    def __init__(self, max_in_flight: int, rpm: float | None = None, *, decrease_every: float = 1.0) -> None:
        if max_in_flight < 1:
            raise ConfigError(f"max_in_flight must be >= 1 (got {max_in_flight})")
        if rpm is not None and rpm <= 0:
            raise ConfigError(f"rpm must be > 0 (got {rpm})")
        self.max = max_in_flight
        self.limit = max_in_flight
        self.in_flight = 0
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next_start = 0.0
        self.pause_until = 0.0
        self._waiters: list[asyncio.Future[None]] = []
        self._ok_streak = 0
        self._last_decrease = -math.inf
        self._decrease_every = decrease_every
        self.decreases = 0
        self.increases = 0
        self.min_limit = max_in_flight

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut  # release() hands its slot over (in_flight already counted)
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self.release()
                elif fut in self._waiters:
                    self._waiters.remove(fut)
                raise
        if self.interval or self.pause_until:
            now = time.monotonic()
            start = max(now, self._next_start, self.pause_until)
            if self.interval:
                self._next_start = start + self.interval
            if start > now:
                await asyncio.sleep(start - now)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            fut = self._waiters.pop(0)
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def on_success(self) -> None:
        if self.limit >= self.max:
            return
        self._ok_streak += 1
        if self._ok_streak >= self.limit and time.monotonic() - self._last_decrease >= self._decrease_every:
            self.limit += 1
            self.increases += 1
            self._ok_streak = 0
            self._wake()

    def on_throttled(self, retry_after: float | None) -> None:
        """A 429: pause new starts for Retry-After, and halve the limit (at most once per period)."""
        now = time.monotonic()
        if retry_after:
            self.pause_until = max(self.pause_until, now + retry_after)
        self._ok_streak = 0
        if now - self._last_decrease >= self._decrease_every and self.limit > 1:
            self.limit = max(1, self.limit // 2)
            self.min_limit = min(self.min_limit, self.limit)
            self.decreases += 1
            self._last_decrease = now

    def stats(self) -> dict[str, int]:
        return {
            "max_in_flight": self.max,
            "final_in_flight": self.limit,
            "min_in_flight": self.min_limit,
            "decreases": self.decreases,
            "increases": self.increases,
        }


def backoff_delay(attempt: int, retry_after: float | None, base: float, cap: float) -> float:
    """Full-jitter exponential backoff after failed ``attempt`` (1-based), never less than Retry-After."""
    delay = random.uniform(0, min(cap, base * (2 ** (attempt - 1))))
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, min(1.0, 0.1 * retry_after + 0.05)))
    return delay


# ---------------------------------------------------------------- progress


class Progress:
    """done / total, PASS / FAIL / ERROR, calls/s, ETA on stderr: a redrawn bar on a
    terminal, a plain line every ``every`` seconds otherwise."""

    def __init__(self, total: int, stream: IO[str] | None, *, every: float = 10.0) -> None:
        self.total = total
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.every = 0.2 if self.tty else every
        self.done = 0
        self.counts: Counter[str] = Counter()
        self.calls = 0
        self.t0 = time.monotonic()
        self._last = 0.0

    def update(self, verdict: str, calls: int) -> None:
        self.done += 1
        self.counts[verdict] += 1
        self.calls += calls
        if self.stream is not None:
            now = time.monotonic()
            if now - self._last >= self.every:
                self._last = now
                self._draw()

    def _text(self) -> str:
        el = max(1e-9, time.monotonic() - self.t0)
        rate = self.calls / el
        per_row = el / self.done if self.done else math.inf
        eta = _fmt_duration(per_row * (self.total - self.done)) if self.done else "--:--"
        c = self.counts
        return (
            f"{self.done}/{self.total} PASS {c[PASS]} FAIL {c[FAIL]} ERROR {c[ERROR]}"
            + (f" SKIPPED {c[SKIPPED]}" if c[SKIPPED] else "")
            + f" | {rate:.1f} calls/s | elapsed {_fmt_duration(el)} ETA {eta}"
        )

    def _draw(self) -> None:
        assert self.stream is not None
        if self.tty:
            width = 24
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r[{bar}] {self._text()}\x1b[K")
        else:
            self.stream.write(f"goldenkit run: {self._text()}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None and self.total:
            self._draw()
            if self.tty:
                self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------- selection


def _select_rows(dataset: Any, sample: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    spec = {"split": None, "per_slice": None, "seed": None}
    if sample:
        unknown = set(sample) - set(spec)
        if unknown:
            raise ConfigError(f"sample: unknown key(s) {', '.join(sorted(unknown))} (known: split, per_slice, seed)")
        spec.update(sample)
    split, per_slice = spec["split"], spec["per_slice"]
    if per_slice is not None:
        from goldenkit.sampling import stratified_sample

        seed = 0 if spec["seed"] is None else spec["seed"]
        spec["seed"] = seed
        dataset = stratified_sample(dataset, int(per_slice), int(seed), split=split)
    elif split is not None:
        rows = dataset.rows
        dataset = dataset.subset(list(rows.loc[rows["split"] == split, "id"]))
    return dataset, spec


def _resolve_graders(graders: Iterable[Grader | str] | None) -> list[Grader]:
    out: list[Grader] = []
    for g in graders if graders is not None else ["contract"]:
        out.append(get_grader(g) if isinstance(g, str) else g)
    names = [g.name for g in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(f"grader(s) listed twice: {', '.join(dup)}")
    return out


def _grades_synchronously(graders: Sequence[Grader]) -> bool:
    """Whether no grader awaits anything (none overrides ``Grader.agrade``, as the judge does):
    then each response is graded with one plain call instead of a coroutine per grader."""
    return all(type(g).agrade is Grader.agrade for g in graders)


# ---------------------------------------------------------------- the run


def _key_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    diffs = []
    for k in RUN_KEY_FIELDS:
        a, b = old.get(k), new.get(k)
        if k == "dataset":
            a = {x: (a or {}).get(x) for x in ("name", "version", "sha256")}
            b = {x: (b or {}).get(x) for x in ("name", "version", "sha256")}
        if _canonical(a) != _canonical(b):
            diffs.append(f"{k}: {json.dumps(a, default=str)} != {json.dumps(b, default=str)}")
    return diffs


def _validity(
    counts: Mapping[str, int], expected: int, max_error_rate: float, stopped: str | None, first_error: str | None
) -> tuple[str, str | None, float]:
    total = counts.get("total", 0)
    errors = counts.get(ERROR, 0)
    rate = errors / total if total else 0.0
    if stopped:
        return INVALID, stopped, rate
    if expected and total == 0:
        return INVALID, "no outcome was written", rate
    if total and errors == total:
        why = f"every call errored ({errors} of {total})"
        if first_error:
            why += f"; e.g. {first_error}"
        return INVALID, why, rate
    if rate > max_error_rate:
        return INVALID, f"error rate {rate:.1%} ({errors} of {total}) exceeds max_error_rate {max_error_rate:.1%}", rate
    if total < expected:
        return INVALID, f"incomplete: {total} of {expected} outcomes", rate
    return VALID, None, rate


@contextlib.contextmanager
def _gc_for_run() -> Iterator[None]:
    """The cyclic GC set for a run, restored afterwards.

    Everything alive when the run starts (imported modules, the dataset) will
    outlive it: it is frozen out of the GC's reach, or full collections rescan
    those hundreds of thousands of objects again and again and stall the event
    loop (measured: about half the throughput against an instant server). And
    the young generation is collected every ``RUN_GC_THRESHOLD`` net allocations
    instead of every 700: each call allocates dozens of short-lived containers
    (requests, futures, frames) that are mostly gone before a collection at this
    threshold (measured: GC time in a run of 5,000 calls 0.23-0.30 s -> 0.07-0.09 s).
    """
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], RUN_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


async def arun_eval(
    dataset: Any,
    provider: Provider,
    graders: Iterable[Grader | str] | None = None,
    *,
    repeats: int = 1,
    max_in_flight: int = 8,
    rpm: float | None = None,
    timeout: float = 60.0,
    max_retries: int = 3,
    run_id: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    sample: Mapping[str, Any] | None = None,
    max_error_rate: float = 0.02,
    record_dir: str | os.PathLike[str] | None = None,
    retry_errors: bool = False,
    progress: bool | IO[str] | None = None,
    judge_version: str | None = None,
    backoff_base: float = 0.5,
    backoff_cap: float = 30.0,
    abort_after_errors: int | None = 50,
    config: Mapping[str, Any] | None = None,
) -> RunSummary:
    """Run ``dataset`` through ``provider`` and ``graders``; see the module docstring.

    ``graders``: Grader objects or registered names (default ``["contract"]``).
    ``sample``: ``{"split": "dev"|"holdout"|None, "per_slice": N|None, "seed": S}``.
    ``progress``: None/True = stderr, False = silent, or a text stream.
    ``config``: extra settings recorded in run.json (secrets redacted).
    """
    if repeats < 1:
        raise ConfigError(f"repeats must be >= 1 (got {repeats})")
    if max_retries < 0:
        raise ConfigError(f"max_retries must be >= 0 (got {max_retries})")
    if timeout <= 0:
        raise ConfigError(f"timeout must be > 0 (got {timeout})")
    if not 0 <= max_error_rate <= 1:
        raise ConfigError(f"max_error_rate must be between 0 and 1 (got {max_error_rate})")
    t_start = time.monotonic()
    grader_objs = _resolve_graders(graders)
    dataset, sample_spec = _select_rows(dataset, sample)
    av = agent_version(provider)
    if judge_version is None:
        jv = sorted({str(v) for g in grader_objs if (v := getattr(g, "judge_version", None))})
        judge_version = ",".join(jv) or None
    key: dict[str, Any] = {
        "dataset": {
            "name": dataset.name,
            "version": dataset.version,
            "sha256": dataset.sha256,
            "path": str(dataset.path) if getattr(dataset, "path", None) is not None else None,
        },
        "agent_version": av,
        "judge_version": judge_version,
        "graders": {g.name: str(g.version) for g in grader_objs},
        "repeats": int(repeats),
        "sample": sample_spec,
        "mode": provider.mode,
    }

    rows = dataset.rows
    row_info: dict[str, tuple[str, str, list[str]]] = {}
    columns = (rows[c].tolist() for c in ("id", "slice", "split", "tags"))  # Python lists: no per-item pandas boxing
    for rid, sl, sp, tags in zip(*columns, strict=True):
        row_info[str(rid)] = (str(sl), str(sp), [str(t) for t in (tags if tags is not None else [])])
    pairs = [(rid, r) for rid in row_info for r in range(repeats)]
    raw_cases = dict(zip(row_info, rows["case"].tolist(), strict=True))
    case_format = getattr(dataset, "case_format", None)
    case_cache: dict[str, Case | GoldenkitError] = {}
    case_order: list[str] = []  # the rows to call, in the order they are called (set below)
    case_pos: dict[str, int] = {}

    def get_case(row_id: str) -> Case:
        """The row's normalized case, once per row.

        Cases are normalized ahead in batches of :data:`_CASE_BATCH` rows, in the
        order the rows are called: one tight loop over many cases costs less CPU
        per case than normalizing each between two HTTP calls (measured: about 15%
        of a whole call's CPU against an instant server). The batch is small enough
        that the pause it takes (under a millisecond) does not hold up replies: with
        256 rows per batch and 256 calls in flight, the median latency against a
        200 ms server rose from 202 to 207 ms. Fast path: normalize the raw case
        directly; on any problem ask the dataset, whose error names file:line (kept
        and raised when that row's turn comes).
        """
        case = case_cache.get(row_id)
        if case is None:
            start = case_pos.get(row_id)
            batch = [row_id] if start is None else case_order[start : start + _CASE_BATCH]
            for rid in batch:
                if rid in case_cache:
                    continue
                try:
                    case_cache[rid] = normalize_case(raw_cases[rid], case_format, row_id=rid)
                except Exception:
                    try:
                        case_cache[rid] = dataset.case(rid)
                    except GoldenkitError as exc:
                        case_cache[rid] = exc
            case = case_cache[row_id]
        if isinstance(case, GoldenkitError):
            raise case
        return case

    expected = len(pairs)

    # -- create or resume the run folder
    run_id = run_id or new_run_id()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", run_id):
        raise ConfigError(f"run id {run_id!r}: use letters, digits, '.', '_' and '-' only")
    run_dir = Path(results_dir) / run_id
    run_file = run_dir / RUN_FILE
    jsonl = run_dir / OUTCOMES_JSONL
    previous: dict[tuple[str, int], dict[str, Any]] = {}
    old_manifest: dict[str, Any] | None = None
    if run_file.exists():
        try:
            old_manifest = json.loads(run_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ResultsError(f"{run_file}: invalid JSON: {exc}") from None
        diffs = _key_differences(old_manifest, key)
        if diffs:
            raise ResultsError(
                f"cannot resume run {run_id}: its run key differs ({'; '.join(diffs)}); use a new --run-id"
            )
        if jsonl.exists():
            repair_jsonl(jsonl)
            for rec in latest_per_pair(iter_jsonl(jsonl)):
                previous[(str(rec["row_id"]), int(rec["repeat"]))] = rec
    elif retry_errors:
        raise ResultsError(f"--retry-errors: no run {run_id} under {results_dir}")
    elif jsonl.exists():
        raise ResultsError(f"{run_dir}: outcomes.jsonl without run.json; not a goldenkit run, use a new --run-id")

    if retry_errors:
        todo = [p for p in pairs if p not in previous or previous[p].get("verdict") == ERROR]
    else:
        todo = [p for p in pairs if p not in previous]
    resumed = expected - len(todo)
    case_order.extend(dict.fromkeys(rid for rid, _ in todo))
    case_pos.update((rid, i) for i, rid in enumerate(case_order))

    settings = redact_settings(provider.settings())
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        **key,
        "provider": {"name": provider.name, "settings": settings},
        "config": {
            "max_in_flight": max_in_flight,
            "rpm": rpm,
            "timeout": timeout,
            "max_retries": max_retries,
            **({"extra": redact_settings(dict(config))} if config else {}),
        },
        "started_at": (old_manifest or {}).get("started_at") or utc_now(),
        "ended_at": None,
        "counts": None,
        "error_rate": None,
        "max_error_rate": max_error_rate,
        "validity": None,
        "invalid_reason": None,
        "complete": False,
        "timings": {"invocations": list(((old_manifest or {}).get("timings") or {}).get("invocations") or [])},
    }
    invocation = {"started_at": utc_now(), "pending": len(todo), "retry_errors": bool(retry_errors)}
    manifest["timings"]["invocations"].append(invocation)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run_file, manifest)

    recorder = None
    if record_dir is not None:
        from goldenkit.providers.fixtures import FIXTURES_FILE, FixtureRecorder

        repair_jsonl(Path(record_dir) / FIXTURES_FILE)
        recorder = FixtureRecorder(
            Path(record_dir),
            {
                "agent": getattr(provider, "spec", None) or provider.name,
                "model_id": av.get("model_id"),
                "system_prompt_sha256": av.get("prompt_sha256"),
                "git_commit": av.get("git_commit"),
                "settings": settings,
                "recorded_run_id": run_id,
            },
        )

    provider.configure(timeout=timeout, max_in_flight=max_in_flight)
    limiter = Limiter(max_in_flight, rpm)
    stream: IO[str] | None
    if progress is False:
        stream = None
    elif progress is None or progress is True:
        stream = sys.stderr
    else:
        stream = progress
    prog = Progress(len(todo), stream)
    replay = provider.mode == "fixtures"
    recorded_latency = getattr(provider, "recorded_latency_ms", None)
    provider_url = getattr(provider, "safe_url", None)
    bounded = provider.bounds_calls  # else each call gets a deadline: timeout x turns + 1 s
    hard = {g.name: bool(g.hard) for g in grader_objs}
    sync_grading = _grades_synchronously(grader_objs)
    base_record = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "dataset_name": dataset.name,
        "dataset_version": dataset.version,
        "dataset_sha256": dataset.sha256,
        "agent_version": av,
        "judge_version": judge_version,
    }
    state = _State()
    new_records: list[dict[str, Any]] = []
    writer = OutcomeWriter(jsonl, coalesce=True)

    async def call(case: Case, repeat: int, n_turns: int) -> tuple[Response | None, ProviderError | None, int, float]:
        attempts = 0
        while True:
            attempts += 1
            await limiter.acquire()
            t0 = time.perf_counter()
            err: ProviderError | None = None
            resp: Response | None = None
            try:
                if bounded:
                    resp = await provider.complete(case, repeat=repeat)
                else:
                    async with asyncio.timeout(timeout * max(1, n_turns) + 1.0):
                        resp = await provider.complete(case, repeat=repeat)
            except ProviderError as exc:
                err = exc
            except TimeoutError:
                where = f" calling {provider_url}" if provider_url else ""
                err = ProviderError(f"timed out after {timeout:g}s{where}", transient=True, url=provider_url)
            except Exception as exc:  # a provider bug: data about this row, not a crash of the run
                err = ProviderError(
                    f"provider {provider.name} raised {type(exc).__name__}: {one_line(str(exc), 200)}", transient=False
                )
            finally:
                limiter.release()
                state.calls += 1
            latency = (time.perf_counter() - t0) * 1000.0
            if err is None:
                limiter.on_success()
                return resp, None, attempts, latency
            if err.status == 429:
                limiter.on_throttled(err.retry_after)
            if not err.transient or replay or attempts > max_retries:
                return None, err, attempts, latency
            await asyncio.sleep(backoff_delay(attempts, err.retry_after, backoff_base, backoff_cap))

    async def run_one(row_id: str, repeat: int) -> None:
        sl, sp, tags = row_info[row_id]
        started_at = utc_now()
        rec = dict(base_record)
        rec.update(row_id=row_id, slice=sl, split=sp, tags=tags, repeat=repeat, started_at=started_at)
        case: Case | None
        resp: Response | None
        err: ProviderError | None
        latency: float | None
        try:
            case = get_case(row_id)
        except GoldenkitError as exc:  # a row whose case cannot be normalized: ERROR, not a crash
            case, resp, latency, attempts = None, None, None, 0
            err = ProviderError(f"bad case: {one_line(str(exc))}", transient=False)
        else:
            resp, err, attempts, latency = await call(case, repeat, len(case.turns))
        if recorder is not None and case is not None:
            recorder.write(row_id, repeat, resp, latency_ms=latency, error=err)
        if replay and recorded_latency is not None:
            latency = recorded_latency(row_id, repeat)
        if resp is None:
            assert err is not None
            reason = one_line(str(err))
            if attempts > 1:
                reason += f" (after {attempts} attempts)"
            rec.update(
                verdict=ERROR,
                detail=reason,
                error_kind=err.kind,
                graders={},
                response=None,
                trajectory=[],
                latency_ms=latency,
                attempts=attempts,
                tokens_in=None,
                tokens_out=None,
                cost=None,
            )
            state.consecutive_errors += 1
            if state.first_error is None:
                state.first_error = reason
            if abort_after_errors and state.consecutive_errors >= abort_after_errors and state.stopped is None:
                state.stopped = (
                    f"stopped after {state.consecutive_errors} consecutive errors (last: {reason}); "
                    f"resume with --run-id {run_id} --retry-errors"
                )
            write_outcome(rec, attempts)
            return
        state.consecutive_errors = 0
        assert case is not None
        if sync_grading:
            graded_later.append((rec, case, resp, latency, attempts))
            if len(graded_later) == 1:
                asyncio.get_running_loop().call_soon(grade_pending)
            return
        record_grades(rec, await agrade_case(grader_objs, case, resp), resp, latency, attempts)

    def write_outcome(rec: dict[str, Any], attempts: int) -> None:
        writer.write(rec)
        new_records.append(rec)
        prog.update(rec["verdict"], attempts)

    def record_grades(
        rec: dict[str, Any], results: Mapping[str, Any], resp: Response, latency: float | None, attempts: int
    ) -> None:
        """Complete ``rec`` with the verdict, the graders' results and the response; write it."""
        verdict, detail = combine(results, hard)
        rec.update(
            verdict=verdict,
            detail=one_line(detail, 1000) if detail else "",
            error_kind="grader" if verdict == ERROR else None,
            graders={n: r.to_dict() for n, r in results.items()},
            response=resp.text,
            trajectory=resp.trajectory(),
            latency_ms=latency,
            ttft_ms=resp.ttft_ms,
            attempts=attempts,
            tokens_in=resp.tokens_in,
            tokens_out=resp.tokens_out,
            cost=resp.cost,
        )
        write_outcome(rec, attempts)

    # Responses to grade: with graders that await nothing, the responses that come back
    # during one pass of the event loop are graded and written together at the start of
    # the next, and the worker goes on to its next call at once. Grading one batch in a
    # tight loop costs less CPU per response than grading each between two HTTP calls
    # (measured: a fifth of a whole call's CPU against an instant server).
    graded_later: list[tuple[dict[str, Any], Case, Response, float | None, int]] = []

    def grade_pending() -> None:
        batch = graded_later[:]
        graded_later.clear()
        try:
            for rec, case, resp, latency, attempts in batch:
                record_grades(rec, grade_case(grader_objs, case, resp), resp, latency, attempts)
        except Exception as exc:  # a failed write: the workers stop and the run raises it
            state.failure = exc
        writer.end_pass()  # the batch's lines now, not one more loop pass later

    queue = iter(todo)

    async def worker() -> None:
        for row_id, repeat in queue:
            if state.stopped:
                return
            if state.failure is not None:
                raise state.failure
            await run_one(row_id, repeat)

    interrupted = True
    with _gc_for_run():
        try:
            await _start_workers(worker, min(max_in_flight, len(todo)))
            interrupted = False
        finally:
            if graded_later:
                grade_pending()  # the responses of the last pass
            lost: OSError | None = None
            try:
                writer.close()  # the lines of the last loop pass go out here
            except OSError as exc:
                lost = exc
            if recorder is not None:
                recorder.close()
            await provider.aclose()
            prog.close()
            # Every outcome of the run: the earlier ones, superseded by this invocation's.
            final = dict(previous)
            for rec in new_records:
                final[(rec["row_id"], int(rec["repeat"]))] = rec
            records = [final[p] for p in pairs if p in final]
            counts = Counter(r["verdict"] for r in records)
            count_d = {v: counts.get(v, 0) for v in (PASS, FAIL, ERROR, SKIPPED)}
            count_d.update(total=len(records), expected=expected)
            stopped = state.stopped if len(records) < expected else None
            if interrupted or lost is not None or state.failure is not None:
                stopped = f"interrupted with {len(records)} of {expected} outcomes; resume with --run-id {run_id}"
            first_error = state.first_error or next((r["detail"] for r in records if r["verdict"] == ERROR), None)
            validity, why, rate = _validity(count_d, expected, max_error_rate, stopped, first_error)
            complete = len(records) == expected and lost is None and state.failure is None
            elapsed = time.monotonic() - t_start
            invocation.update(ended_at=utc_now(), calls=state.calls, elapsed_s=round(elapsed, 3), **limiter.stats())
            manifest.update(
                ended_at=utc_now(),
                counts=count_d,
                error_rate=rate,
                validity=validity,
                invalid_reason=why,
                complete=complete,
            )
            if complete and not interrupted:
                write_parquet(records, run_dir / OUTCOMES_PARQUET)
            else:
                (run_dir / OUTCOMES_PARQUET).unlink(missing_ok=True)
                manifest["complete"] = False
            write_json_atomic(run_file, manifest)
            if lost is not None:
                raise ResultsError(
                    f"{jsonl}: outcomes could not be written ({lost}); free space and resume with --run-id {run_id}"
                ) from lost
            if state.failure is not None and not interrupted:
                raise state.failure

    return RunSummary(
        run_id=run_id,
        path=run_dir,
        counts=count_d,
        error_rate=rate,
        max_error_rate=max_error_rate,
        validity=validity,
        invalid_reason=why,
        complete=manifest["complete"],
        calls=state.calls,
        resumed=resumed,
        elapsed_s=elapsed,
        manifest=manifest,
    )


#: Cases normalized together ahead of their calls (see ``get_case`` in :func:`arun_eval`).
_CASE_BATCH = 64


async def _start_workers(worker: Callable[[], Awaitable[None]], n: int) -> None:
    """Run ``n`` workers to the end, started one loop pass apart.

    Started all at once, every worker would prepare its first call (and open its
    connection) before any request went out: the first wave would leave together
    after all of them, and its replies would come back as one burst that the
    client works through while later replies wait. One pass apart, the first
    request leaves at once and the waves are spread from the start.
    """
    tasks: list[asyncio.Task[None]] = []
    try:
        for _ in range(n):
            tasks.append(asyncio.ensure_future(worker()))
            await asyncio.sleep(0)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise
    if tasks:
        await asyncio.gather(*tasks)


def run_eval(
    dataset: Any, provider: Provider, graders: Iterable[Grader | str] | None = None, **kwargs: Any
) -> RunSummary:
    """Synchronous :func:`arun_eval` (same arguments). Works inside Jupyter's running
    event loop too: the run then gets its own loop in a helper thread."""
    coro = arun_eval(dataset, provider, graders, **kwargs)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="goldenkit-run")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


__all__ = [
    "Limiter",
    "RunSummary",
    "agent_version",
    "arun_eval",
    "backoff_delay",
    "git_commit",
    "new_run_id",
    "redact_settings",
    "run_eval",
]
