"""What a run produced: :class:`RunSummary`, the object ``run_eval`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED, VALID


@dataclass
class RunSummary:
    """What a run produced. ``exit_code`` is 0 for a VALID run and 3 for an INVALID one.

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
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)
    git_commits: list[str] = field(default_factory=list)

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
        """The one-line summary ``goldenkit run`` prints."""
        c = self.counts
        pr = self.pass_rate
        rate = "n/a" if pr is None else f"{pr:.1%}"
        head = f"run {self.run_id}: {self.validity}"
        if self.invalid_reason:
            head += f" ({self.invalid_reason})"
        commits = ""
        if len(self.git_commits) > 1:
            commits = f"; resumed across git commits {', '.join(c[:12] for c in self.git_commits)}"
        elif self.git_commits:
            commits = f"; git commit {self.git_commits[0][:12]}"
        return (
            f"{head}; {c.get('total', 0)}/{c.get('expected', 0)} outcomes: "
            f"PASS {c.get(PASS, 0)}, FAIL {c.get(FAIL, 0)}, ERROR {c.get(ERROR, 0)}, "
            f"SKIPPED {c.get(SKIPPED, 0)}; pass rate {rate}; "
            f"error rate {self.error_rate:.1%}; {self.calls} calls in {self.elapsed_s:.1f}s{commits}; "
            f"results in {self.path}"
        )


__all__ = ["RunSummary"]
