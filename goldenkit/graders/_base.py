"""What a grader is, and how grader results become one verdict.

Every grader exposes ``grade(case, response) -> GradeResult`` (an LLM judge
also ``agrade``, since it calls a model). A grader has a ``name`` and a
``version`` (both written to run.json and outcomes) and is ``hard`` (decides
PASS/FAIL) or soft (reported, never decides).

:func:`combine` turns the results into the row verdict: FAIL when any hard
grader failed, else ERROR when a hard grader could not grade, else PASS when a
hard grader passed; a grader that could not run (``error``) never turns a row
into FAIL and never lets it PASS.

:func:`grade_case` / :func:`agrade_case` run a list of graders on one
response, honouring a case's own ``"graders": [...]`` selection and turning a
grader that raises into an error result. :func:`options_version` gives
graders a version that changes with their non-default options.
"""

from __future__ import annotations

import functools
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from goldenkit._findings import Finding
from goldenkit._registry import Registry, publish
from goldenkit.records import Case, Response
from goldenkit.schema import add_usage, usage_of


@dataclass(frozen=True)
class GradeResult:
    """One grader's judgement. ``passed`` is None when the grader did not apply
    or could not decide (``error`` says why it could not run). ``findings``: each
    failing check as data (:mod:`goldenkit._findings`), stored beside the
    reason when there are any; they never change the verdict."""

    passed: bool | None
    score: float | None = None
    reason: str = ""
    error: bool = False
    findings: tuple[Finding, ...] = field(default=(), compare=False)
    usage: dict[str, Any] | None = field(default=None, compare=False)  # a model grader's calls (schema.usage_of)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"passed": self.passed, "score": self.score, "reason": self.reason, "error": self.error}
        if self.findings:
            out["findings"] = [f.to_dict() for f in self.findings]
        return out


class ModelCall(Protocol):
    """How a grader sends a model call: ``await call(provider, case, spent=usages)`` -> the response, or the
    error raised after the retries (inside a run, :meth:`goldenkit.runner._calls.ModelCalls.response`). Every
    call, answered or failed, appends its usage to ``spent`` (:func:`goldenkit.schema.usage_of`: ``calls`` is
    its attempts, retries included)."""

    def __call__(self, provider: Any, case: Case, *, spent: list[dict[str, Any]] | None = None) -> Awaitable[Response]:
        """The response of ``provider`` to ``case`` (see the class doc)."""


async def ask_model(provider: Any, case: Case, call: ModelCall | None, spent: list[dict[str, Any]]) -> Response:
    """A model grader's call of ``provider`` on ``case``: through ``call`` (the run's seam) when given, else
    ``provider.complete`` once. Its usage is appended to ``spent`` whether it answered or failed (a failed
    call was still made: it counts in ``calls``, with no token counts); the error is raised."""
    if call is not None:
        return await call(provider, case, spent=spent)
    try:
        reply: Response = await provider.complete(case, repeat=0)
    except Exception:
        spent.append(usage_of(None))
        raise
    spent.append(usage_of(reply))
    return reply


def usage_sum(spent: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The usage of a grader's calls (:func:`ask_model`'s ``spent``), summed; None when it made none."""
    return functools.reduce(add_usage, spent, None)


class Grader(ABC):
    """Base class of graders."""

    name: str = "grader"
    version: str = "1"
    hard: bool = True

    @abstractmethod
    def grade(self, case: Case, response: Response) -> GradeResult:
        """Grade one response to one case."""

    async def agrade(self, case: Case, response: Response, call: ModelCall | None = None) -> GradeResult:
        """:meth:`grade` for the event loop. ``call``: how a grader that asks a model (the judge) sends its
        calls -- inside a run, the run's seam (:class:`goldenkit.runner._calls.ModelCalls`), so they count
        against that run's limiter and budget; None: the grader calls its provider directly."""
        return self.grade(case, response)

    def applies(self, case: Case) -> bool:
        """Whether this grader has anything to check on ``case``."""
        return True

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"


GraderFactory = Callable[..., Grader]
BUILTINS = {
    "contract": "goldenkit.graders._contract:ContractGrader",
    "trajectory": "goldenkit.graders._trajectory:TrajectoryGrader",
    "reference": "goldenkit.graders._match:ReferenceMatchGrader",
    "judge": "goldenkit.graders._judge:JudgeGrader",
    "rubrics": "goldenkit.graders._rubrics:RubricGrader",
    "retrieval": "goldenkit.graders._retrieval:RetrievalGrader",
    "state": "goldenkit.graders._state:StateGrader",
}
_REGISTRY: Registry[GraderFactory] = Registry("grader", BUILTINS)


def register_grader(name: str, factory: GraderFactory, *, replace: bool = False) -> None:
    """Make ``factory(**options) -> Grader`` available under ``name`` (a built-in's name needs ``replace``).

    A plain function ``f(case, response) -> GradeResult | bool`` can be wrapped with
    :class:`FunctionGrader`.
    """
    _REGISTRY.register(name, factory, replace=replace)


def get_grader(name: str, **options: Any) -> Grader:
    """Build the grader registered under ``name`` (a built-in is imported on first use)."""
    return _REGISTRY.get(name)(**options)


def grader_names() -> list[str]:
    """Every grader's name (this imports every built-in)."""
    return _REGISTRY.names()


class FunctionGrader(Grader):
    """Wrap ``fn(case, response) -> GradeResult | bool`` as a grader."""

    def __init__(
        self, fn: Callable[[Case, Response], GradeResult | bool], *, name: str, version: str = "1", hard: bool = True
    ) -> None:
        self._fn = fn
        self.name = name
        self.version = version
        self.hard = hard

    def grade(self, case: Case, response: Response) -> GradeResult:
        out = self._fn(case, response)
        if isinstance(out, GradeResult):
            return out
        return GradeResult(
            passed=bool(out), score=1.0 if out else 0.0, reason="" if out else f"{self.name} returned False"
        )


def combine(results: Mapping[str, GradeResult], hard: Mapping[str, bool]) -> tuple[str, str]:
    """The row verdict (``"PASS"``, ``"FAIL"``, ``"ERROR"`` or ``"SKIPPED"``) and its one-line detail.

    Hard graders decide; soft graders (a judge that is not allowed to act as a
    hard grader) are recorded only, so a judge ACCEPT never rescues a contract
    FAIL and a soft judge REJECT never sinks a PASS. In order:

    1. FAIL when any hard grader failed (a FAIL stays a FAIL, whatever else errored);
    2. ERROR when a hard grader could not grade (``error``): a PASS never hides a
       grading error, and an ERROR is never a FAIL;
    3. PASS when at least one hard grader passed;
    4. SKIPPED otherwise (no hard grader applied: nothing was checked).

    >>> ok, bad = GradeResult(True), GradeResult(False, reason="missing A-1")
    >>> err = GradeResult(None, reason="timed out", error=True)
    >>> combine({"contract": ok, "judge": err}, {"contract": True, "judge": True})
    ('ERROR', 'judge error: timed out')
    >>> combine({"contract": bad, "judge": err}, {"contract": True, "judge": True})
    ('FAIL', 'contract: missing A-1')
    >>> combine({"contract": ok, "judge": err}, {"contract": True, "judge": False})
    ('PASS', '')
    """
    failed = [(n, r) for n, r in results.items() if hard.get(n, True) and r.passed is False]
    if failed:
        return "FAIL", "; ".join(f"{n}: {r.reason}" for n, r in failed)
    errored = [(n, r) for n, r in results.items() if hard.get(n, True) and r.error]
    if errored:
        return "ERROR", "; ".join(f"{n} error: {r.reason}" for n, r in errored)
    if any(hard.get(n, True) and r.passed is True for n, r in results.items()):
        return "PASS", ""
    return "SKIPPED", "no hard grader applied"


def options_version(base: str, options: Mapping[str, Any]) -> str:
    """A grader version: ``base`` alone, or ``base+<8 hex>`` naming the non-default options.

    Options left at their default are passed as None and do not count, so a
    grader with default settings keeps a stable version, and two runs graded
    with different settings get different versions (and are not comparable).
    """
    chosen = {k: v for k, v in options.items() if v is not None}
    if not chosen:
        return base
    blob = json.dumps(chosen, sort_keys=True, default=str, ensure_ascii=False).encode("utf-8")
    return f"{base}+{hashlib.sha256(blob).hexdigest()[:8]}"


def case_grader_names(case: Case) -> list[str] | None:
    """The graders a case asks for (``"graders": [...]`` in the case, its ``expect`` or ``criteria``), or None.

    None means the case does not restrict graders: every configured grader runs.
    """
    for source in (case.raw, case.expect, case.criteria):
        if not source or not (type(source) is dict or isinstance(source, Mapping)):
            continue
        names = source.get("graders")
        if names is not None:
            if isinstance(names, str):
                return [names]
            return [str(n) for n in names]
    return None


def selected_for(case: Case, name: str) -> bool:
    """Whether the grader called ``name`` should grade ``case`` (see :func:`case_grader_names`)."""
    names = case_grader_names(case)
    return names is None or name in names


def final_reference(case: Case) -> str | None:
    """The reference for the final answer: ``case.reference``, else the last turn's expected response."""
    if case.reference is not None or not case.turns:
        return case.reference
    return case.turns[-1].expected_response


_NOT_SELECTED = GradeResult(passed=None, reason="not selected for this case")


def _error_result(exc: BaseException) -> GradeResult:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return GradeResult(passed=None, reason=f"{type(exc).__name__}: {msg}", error=True)


def grade_case(graders: Iterable[Grader], case: Case, response: Response) -> dict[str, GradeResult]:
    """Run every grader on one response: ``{grader name: GradeResult}``.

    A grader the case does not select gets ``passed=None``; a grader that
    raises gets an error result (``error=True``) instead of stopping the row.
    """
    names = case_grader_names(case)  # once per response, not once per grader
    out: dict[str, GradeResult] = {}
    for g in graders:
        if names is not None and g.name not in names:
            out[g.name] = _NOT_SELECTED
            continue
        try:
            out[g.name] = g.grade(case, response)
        except Exception as exc:  # a grader bug or bad case data must not kill the run
            out[g.name] = _error_result(exc)
    return out


async def agrade_case(
    graders: Iterable[Grader], case: Case, response: Response, *, call: ModelCall | None = None
) -> dict[str, GradeResult]:
    """:func:`grade_case` for the event loop: graders that call a model (the judge) are awaited, each given
    ``call`` (:meth:`Grader.agrade`)."""
    names = case_grader_names(case)
    out: dict[str, GradeResult] = {}
    for g in graders:
        if names is not None and g.name not in names:
            out[g.name] = _NOT_SELECTED
            continue
        try:
            out[g.name] = await g.agrade(case, response, call)
        except Exception as exc:
            out[g.name] = _error_result(exc)
    return out


publish(globals())
