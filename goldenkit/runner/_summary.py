"""What a run produced: :class:`RunSummary`, the object ``run_eval`` returns, or :class:`RunInterrupted`;
and what it cost (:func:`run_accounting`, run.json's ``accounting``)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import EXIT_GATE_FAILED, EXIT_INFRASTRUCTURE, EXIT_OK, ResultsError
from goldenkit.results import cost_line, read_manifest, run_pricing, run_totals
from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED, TOKEN_COUNTS, VALID, RunRecord


@dataclass
class RunSummary:
    """What a run produced. ``exit_code``: 0 for a VALID run with a graded outcome, 2 for a VALID run
    without one (empty, or every outcome SKIPPED or ERROR: no evidence, no green), 3 for an INVALID one.
    ``counts["candidate_errors"]``: the ERROR outcomes that are the candidate's own (agent, refused),
    shown in :meth:`line`; they never make a run INVALID (:mod:`goldenkit.runner._validity`).
    A shard is judged by its merge: an empty shard of a small dataset exits 0.

    ``git_commits``: the working directory's commit at each invocation (distinct, in
    order); a resume at a new commit is allowed and shown in :meth:`line`.
    """

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
    manifest: RunRecord = field(repr=False)
    git_commits: list[str] = field(default_factory=list)
    #: the first of the candidate's own errors this invocation met (agent, refused), said in :meth:`line`
    candidate_error: str | None = None

    @property
    def pass_rate(self) -> float | None:
        """PASS / (PASS + FAIL); None for an INVALID run or when nothing was graded.

        ERROR and SKIPPED never enter the denominator.
        """
        if self.validity != VALID:
            return None
        return self.counts.get(PASS, 0) / self.graded if self.graded else None

    @property
    def graded(self) -> int:
        """Outcomes with a verdict that decides: PASS or FAIL."""
        return self.counts.get(PASS, 0) + self.counts.get(FAIL, 0)

    @property
    def exit_code(self) -> int:
        if self.validity != VALID or not self.complete:  # never 0 unless VALID and complete
            return EXIT_INFRASTRUCTURE
        return EXIT_OK if self.graded or self.shard else EXIT_GATE_FAILED

    @property
    def shard(self) -> bool:
        """Whether this is one shard of a run (``--shard K/N``), whose evidence the merge judges."""
        return self.manifest.get("shard") is not None

    def line(self) -> str:
        """The one-line summary ``goldenkit run`` prints."""
        c = self.counts
        pr = self.pass_rate
        rate = "n/a" if pr is None else f"{pr:.1%}"
        head = f"run {self.run_id}: {self.validity}"
        if self.invalid_reason:
            head += f" ({self.invalid_reason})"
        elif self.validity == VALID and not self.graded and not self.shard:
            head += " but not evidence (no outcome is PASS or FAIL: exit 2)"
        commits = ""
        if len(self.git_commits) > 1:
            commits = f"; resumed across git commits {', '.join(c[:12] for c in self.git_commits)}"
        elif self.git_commits:
            commits = f"; git commit {self.git_commits[0][:12]}"
        own = c.get("candidate_errors", 0)
        errors = f"{c.get(ERROR, 0)} ({own} the candidate's own)" if own else f"{c.get(ERROR, 0)}"
        if own and self.candidate_error:
            errors = f"{c.get(ERROR, 0)} ({own} the candidate's own, e.g. {one_line(self.candidate_error, 160)})"
        return (
            f"{head}; {c.get('total', 0)}/{c.get('expected', 0)} outcomes: "
            f"PASS {c.get(PASS, 0)}, FAIL {c.get(FAIL, 0)}, ERROR {errors}, "
            f"SKIPPED {c.get(SKIPPED, 0)}; pass rate {rate}; "
            f"error rate {self.error_rate:.1%}; {self.calls} calls in {self.elapsed_s:.1f}s{commits}; "
            f"results in {self.path}"
        )

    def resumed_line(self) -> str:
        """``resumed: 108 of 108 outcomes reused, 0 new calls``: what a resume took from the run's earlier
        invocations (``resumed``) and how many calls it made (a resume with nothing to do leaves
        ``results/latest`` where it was, :meth:`goldenkit.runner._run.RunExecution.finish`)."""
        return f"resumed: {self.resumed} of {self.counts.get('expected', 0)} outcomes reused, {self.calls} new calls"

    def cost_line(self) -> str:
        """``cost: 12,345 tokens in, 2,100 out, 108 calls, p50 1.2 s; money n/a (no prices)``: the run's
        totals (run.json ``accounting``, :func:`goldenkit.results._accounting.cost_line`)."""
        totals = self.manifest.get("accounting")
        return cost_line(totals) if isinstance(totals, dict) else "cost: not counted"


#: The outcome fields the run's accounting reads (goldenkit.results._accounting).
ACCOUNTING_FIELDS = (
    "row_id",
    "repeat",
    "slice",
    "verdict",
    "attempts",
    *TOKEN_COUNTS,
    "cost",
    "usage",
    "latency_ms",
    "ttft_ms",
    "agent_version",
)


def run_accounting(
    batches: Iterable[Iterable[Mapping[str, Any]]], manifest: Mapping[str, Any], run_dir: Path
) -> dict[str, Any]:
    """run.json's ``accounting``: the totals of the run's final outcomes (``batches`` of records) at the
    ``[pricing]`` of the goldenkit.toml the run recorded (:func:`goldenkit.results._accounting.run_totals`,
    :func:`~goldenkit.results._accounting.run_pricing`)."""
    import pandas as pd

    cols: dict[str, list[Any]] = {k: [] for k in ACCOUNTING_FIELDS}
    for batch in batches:
        for rec in batch:
            for key, values in cols.items():
                values.append(rec.get(key))
    return run_totals(pd.DataFrame(cols), run_pricing(manifest, run_dir), manifest=manifest)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or an interrupted notebook cell) stopped run ``run_id``: what it kept, and how to resume.

    A :class:`KeyboardInterrupt`, so whatever catches that still does. ``kept``
    and ``expected`` are the run's outcome counts as it wrote them on stopping
    (None when it stopped before writing any count); ``path`` is its folder.
    """

    def __init__(self, run_id: str, path: Path, kept: int | None = None, expected: int | None = None) -> None:
        self.run_id, self.path, self.kept, self.expected = run_id, path, kept, expected
        super().__init__(self.line())

    @classmethod
    def read(cls, results_dir: str | os.PathLike[str], run_id: str) -> RunInterrupted:
        """What the run folder ``results_dir/run_id`` says it kept (its run.json counts)."""
        path = Path(results_dir) / run_id
        try:
            counts = read_manifest(path).get("counts")
        except (OSError, ResultsError):
            counts = None
        if not isinstance(counts, dict):
            return cls(run_id, path)
        return cls(run_id, path, int(counts.get("total") or 0), int(counts.get("expected") or 0))

    def line(self, argv: Sequence[str] | None = None) -> str:
        """``interrupted: 144 of 300 outcomes kept in results/slow-2; resume with: ...``: the command
        ``goldenkit`` + ``argv`` with ``--run-id`` set to this run's, or without ``argv`` the run id to reuse."""
        if self.kept is None:
            kept = f"interrupted before run {self.run_id} counted its outcomes (those written are kept in {self.path})"
        else:
            kept = f"interrupted: {self.kept} of {self.expected} outcomes kept in {self.path}"
        if argv is None:
            return f"{kept}; resume with the same call and run_id={self.run_id!r}"
        return f"{kept}; resume with: {resume_command(argv, self.run_id)}"


def resume_command(argv: Sequence[str], run_id: str) -> str:
    """``goldenkit`` + ``argv`` (the command's arguments) with ``--run-id run_id``, quoted for a shell."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg.startswith("--run-id="):
            skip = False
            continue
        skip = arg == "--run-id"
        if not skip:
            out.append(arg)
    return shlex.join(["goldenkit", *out, "--run-id", run_id])


__all__ = ["ACCOUNTING_FIELDS", "RunInterrupted", "RunSummary", "resume_command", "run_accounting"]

publish(globals())
