"""Which rows the configured graders can check, and which have nothing to grade.

A row is **checkable** by a grader when the case selects it (a case's own
``"graders": [...]`` narrows the set, :func:`~goldenkit.graders._base.selected_for`)
and the grader finds something to check in the case (its ``applies``), from the
case fields that grader reads:

==============  =============================================================
grader          checkable when the case has
==============  =============================================================
``contract``    a contract check in ``expect`` (or per turn in ``expect.turns``)
``trajectory``  an expected tool trajectory (ADK turns' tool uses, ``expect.tools``,
                ``expect.turns[i].tools``, ``tool_before_text``), and criteria
                that ask for it (ADK ``tool_trajectory_avg_score``)
``reference``   a reference answer, and criteria that ask for it
                (ADK ``response_match_score``)
``rubrics``     at least one rubric (ADK, Vertex ``rubric_groups``, ``expect.rubrics``)
``retrieval``   ``expect.retrieval`` / ``expect.rag``
``state``       an expected final session state (ADK ``final_session_state``)
``judge``       every row: the judge grades any answer against its one pinned rubric
                (the rubric file is the criterion; it needs nothing from the case)
your own        every row, unless its class overrides ``Grader.applies``
==============  =============================================================

A soft grader (an uncalibrated judge or rubric grader) counts as checking a
row: its result is recorded and read (the judge accept rate, the rubric
verdicts), though it never decides the row, whose verdict is then SKIPPED
unless a hard grader checks it too. The report names those rows apart
(``soft_only``), because calibrating the judge (``hard = true``) or adding a
contract turns them into PASS/FAIL evidence; they are not refused. A grader
whose ``applies`` raises on a case counts as checking it: grading that case
will then be a grader error (an ERROR outcome), never a silent pass.

:func:`gradability` gives the report; ``goldenkit dataset validate`` and
``goldenkit dataset import`` print it (:func:`describe`), and a run refuses,
before the first call, a selection where more than ``max_ungradable`` (a share
of the selected rows, default 0) has nothing to grade (:func:`check_gradable`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from goldenkit._registry import publish
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.graders._base import Grader, selected_for
from goldenkit.records import Case

__all__ = ["Gradability", "check_gradable", "checkers", "describe", "describe_soft_only", "gradability", "shown_ids"]

_SHOWN = 10  # row ids named in a one-line message


def checkers(graders: Iterable[Grader], case: Case) -> tuple[list[str], list[str]]:
    """The names of the hard and of the soft graders that can check ``case`` (see the module doc)."""
    hard: list[str] = []
    soft: list[str] = []
    for g in graders:
        if not selected_for(case, g.name):
            continue
        try:
            applies = bool(g.applies(case))
        except Exception:  # grading will be a grader error (ERROR), which is said; count it as checked
            applies = True
        if applies:
            (hard if g.hard else soft).append(g.name)
    return hard, soft


@dataclass(frozen=True)
class Gradability:
    """What the graders can check in a set of rows.

    ``ungradable``: the row ids no configured grader can check, in row order (their
    verdict would be SKIPPED, with nothing recorded); ``soft_only``: the rows only
    soft graders check (``{row id: [soft grader names]}``: recorded, verdict SKIPPED);
    ``rows``: how many rows were looked at.
    """

    rows: int
    ungradable: tuple[str, ...]
    soft_only: Mapping[str, tuple[str, ...]]
    graders: tuple[str, ...]

    @property
    def share(self) -> float:
        """The share of the rows with nothing to grade (0 for no rows)."""
        return len(self.ungradable) / self.rows if self.rows else 0.0


def gradability(graders: Iterable[Grader], cases: Mapping[str, Case]) -> Gradability:
    """Which of ``cases`` (row id -> case, in row order) ``graders`` can check.

    >>> from goldenkit.graders._contract import ContractGrader
    >>> from goldenkit.records import Turn
    >>> cases = {
    ...     "a": Case(id="a", shape="contract", turns=(Turn("hi"),), expect={"must_contain": ["hello"]}),
    ...     "b": Case(id="b", shape="contract", turns=(Turn("hi"),)),
    ... }
    >>> gradability([ContractGrader()], cases).ungradable
    ('b',)
    """
    graders = list(graders)
    ungradable: list[str] = []
    soft_only: dict[str, tuple[str, ...]] = {}
    for rid, case in cases.items():
        hard, soft = checkers(graders, case)
        if soft and not hard:
            soft_only[rid] = tuple(soft)
        elif not hard:
            ungradable.append(rid)
    return Gradability(
        rows=len(cases), ungradable=tuple(ungradable), soft_only=soft_only, graders=tuple(g.name for g in graders)
    )


def shown_ids(ids: Iterable[str]) -> str:
    """Up to ten row ids for a one-line message, then how many more."""
    ids = list(ids)
    shown = ", ".join(ids[:_SHOWN])
    return shown + (f", ... ({len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else "")


def describe(report: Gradability) -> str | None:
    """One line naming the rows with nothing to grade, or None when every row is gradable.

    >>> print(describe(Gradability(3, ("b",), {}, ("contract",))))
    nothing to grade in 1 of 3 rows (no expectation the configured graders contract can check): b
    """
    if not report.ungradable:
        return None
    n, total = len(report.ungradable), report.rows
    graders = ", ".join(report.graders) or "none"
    return (
        f"nothing to grade in {n} of {total} rows (no expectation the configured graders {graders} can check): "
        f"{shown_ids(report.ungradable)}"
    )


def describe_soft_only(report: Gradability) -> str | None:
    """One line naming the rows only soft graders check (verdict SKIPPED), or None when there are none.

    >>> describe_soft_only(Gradability(2, (), {"a": ("judge",)}, ("contract", "judge")))[:56]
    'only soft graders (judge) check 1 of 2 rows: recorded, b'
    """
    if not report.soft_only:
        return None
    soft = ", ".join(sorted({name for names in report.soft_only.values() for name in names}))
    return (
        f"only soft graders ({soft}) check {len(report.soft_only)} of {report.rows} rows: recorded, but their "
        "verdict is SKIPPED (make the grader hard with a calibration, or add a contract): "
        f"{shown_ids(report.soft_only)}"
    )


def check_gradable(report: Gradability, max_ungradable: float) -> None:
    """Refuse (a DatasetError, exit 1) when more than ``max_ungradable`` of the rows have nothing to grade.

    ``max_ungradable`` is a share in [0, 1]: 0 (the default of a run) refuses any such row.
    """
    if not 0.0 <= max_ungradable <= 1.0:
        raise ConfigError(f"max_ungradable must be a share between 0 and 1 (got {max_ungradable})")
    if report.share <= max_ungradable:
        return
    line = describe(report) or ""
    raise DatasetError(
        f"{line}; their verdicts would be SKIPPED, not evidence ({report.share:.1%} > max_ungradable "
        f"{max_ungradable:g}): add expectations, choose graders that check them, or allow them with --max-ungradable"
    )


publish(globals())
