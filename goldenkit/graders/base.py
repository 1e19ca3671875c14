"""What a grader is, and how grader results become one verdict.

Every grader exposes ``grade(case, response) -> GradeResult`` (an LLM judge
also ``agrade``, since it calls a model). A grader has a ``name`` and a
``version`` (both written to run.json and outcomes) and is ``hard`` (decides
PASS/FAIL) or soft (reported, never decides).

:func:`combine` turns the results into the row verdict: FAIL when any hard
grader failed, PASS when every hard grader passed, and a grader that could not
run (``error``) never turns a row into FAIL.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from goldenkit.cases import Case
from goldenkit.errors import ConfigError
from goldenkit.providers.base import Response


@dataclass(frozen=True)
class GradeResult:
    """One grader's judgement. ``passed`` is None when the grader did not apply
    or could not decide (``error`` says why it could not run)."""

    passed: bool | None
    score: float | None = None
    reason: str = ""
    error: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "score": self.score, "reason": self.reason, "error": self.error}


class Grader(ABC):
    """Base class of graders."""

    name: str = "grader"
    version: str = "1"
    hard: bool = True

    @abstractmethod
    def grade(self, case: Case, response: Response) -> GradeResult:
        """Grade one response to one case."""

    async def agrade(self, case: Case, response: Response) -> GradeResult:
        return self.grade(case, response)

    def applies(self, case: Case) -> bool:
        """Whether this grader has anything to check on ``case``."""
        return True

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


GraderFactory = Callable[..., Grader]
_REGISTRY: dict[str, GraderFactory] = {}


def register_grader(name: str, factory: GraderFactory, *, replace: bool = False) -> None:
    """Make ``factory(**options) -> Grader`` available under ``name``.

    A plain function ``f(case, response) -> GradeResult | bool`` can be wrapped with
    :class:`FunctionGrader`.
    """
    if name in _REGISTRY and not replace:
        raise ConfigError(f"grader {name!r} is already registered")
    _REGISTRY[name] = factory


def get_grader(name: str, **options: Any) -> Grader:
    _load_builtins()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise ConfigError(f"unknown grader {name!r} (known: {known})") from None
    return factory(**options)


def grader_names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def _load_builtins() -> None:
    import goldenkit.graders  # noqa: F401


class FunctionGrader(Grader):
    """Wrap ``fn(case, response) -> GradeResult | bool`` as a grader."""

    def __init__(self, fn: Callable[[Case, Response], GradeResult | bool], *, name: str, version: str = "1", hard: bool = True) -> None:
        self._fn = fn
        self.name = name
        self.version = version
        self.hard = hard

    def grade(self, case: Case, response: Response) -> GradeResult:
        out = self._fn(case, response)
        if isinstance(out, GradeResult):
            return out
        return GradeResult(passed=bool(out), score=1.0 if out else 0.0, reason="" if out else f"{self.name} returned False")


def combine(results: Mapping[str, GradeResult], hard: Mapping[str, bool]) -> tuple[str, str]:
    """The row verdict (``"PASS"`` or ``"FAIL"``) and its one-line detail.

    Hard graders decide; soft graders (a judge that is not allowed to act as a
    hard grader) are recorded only. A grader that errored or did not apply
    (``passed is None``) does not decide. With no deciding hard grader the
    verdict is PASS only if at least one hard grader passed; otherwise the row
    is SKIPPED (nothing was checked).
    """
    failed = [(n, r) for n, r in results.items() if hard.get(n, True) and r.passed is False]
    if failed:
        return "FAIL", "; ".join(f"{n}: {r.reason}" for n, r in failed)
    passed = [n for n, r in results.items() if hard.get(n, True) and r.passed is True]
    if passed:
        return "PASS", ""
    return "SKIPPED", "no hard grader applied"
