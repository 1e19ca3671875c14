"""The rubric grader: every rubric of a case judged, one judge call each, by the pinned LLM judge.

A case's rubrics (:attr:`goldenkit.records.Case.rubrics`: ADK ``rubrics`` on the
case or an invocation and the ``rubrics`` of a rubric-based criterion, Vertex
``rubric_groups``, contract ``expect.rubrics: [{id, text}]``) are each put to
the judge as "the rubric above", with the conversation and the answer quoted as
the judge grader quotes them (:func:`goldenkit.graders._judge.build_judge_prompt`:
nonce markers, the reply read by :func:`~goldenkit.graders._judge.parse_judge`).
A rubric is PASS (ACCEPT), FAIL (REJECT) or PENDING, with the judge's reason.

The row: the share of rubrics met against a threshold (default 1.0: all of them;
``[graders.rubrics] threshold``, a case's ADK rubric criterion ``threshold`` or
contract ``expect.rubric_threshold``). In order:

1. FAIL when the threshold cannot be reached any more (the rubrics met plus the
   undecided ones are too few): a FAIL stays a FAIL whatever else errored;
2. an error result when a judge call failed (an ERROR is never a FAIL, and a
   PASS never hides it);
3. PASS when the share met reaches the threshold (a PENDING rubric left over
   cannot change that);
4. else undecided (``passed=None``, like a PENDING judge): PENDING rubrics could
   still decide it.

**Version, calibration, calls.** The grader is a :class:`JudgeGrader`: its
``judge_version`` is the judge model + the SHA-256 of the pinned instructions
(the built-in :data:`RUBRIC_INSTRUCTIONS`, or the ``prompt`` file) + the
parameters; it is soft unless ``hard = true`` and a calibration report for this
version allows it; the contract still wins (:func:`goldenkit.graders._base.combine`).
Inside a run its calls go through the run's seam (the ``call`` its ``agrade`` is given).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit._config_tables import RUBRICS_KEYS
from goldenkit._findings import Finding, value_free
from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets
from goldenkit.errors import ConfigError
from goldenkit.graders._base import GradeResult, ModelCall, ask_model, options_version, selected_for
from goldenkit.graders._judge import JudgeGrader, build_judge_prompt, parse_judge
from goldenkit.providers import Provider
from goldenkit.records import Case, Response, Rubric, Turn
from goldenkit.schema import add_usage

__all__ = ["RUBRIC_INSTRUCTIONS", "RubricGrader", "rubric_outcome"]

#: The pinned preamble of every rubric judgement (its hash is part of the grader's version).
RUBRIC_INSTRUCTIONS = """\
# Rubric
You decide whether the assistant's answer meets ONE criterion, given below. Judge only this
criterion, not the answer's overall quality. ACCEPT when the answer meets it, REJECT when it
does not, PENDING when the conversation does not let you tell."""

_RUBRIC_METRICS = (
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1",
)


def _criterion_text(rubric: Rubric, n_turns: int) -> str:
    where = f" (it applies to turn {rubric.turn + 1} of {n_turns})" if rubric.turn is not None else ""
    return f"\n\n## Criterion {rubric.id}{where}\n{rubric.text.strip()}"


def rubric_outcome(verdicts: list[tuple[str, str, str]], threshold: float) -> GradeResult:
    """The row's result from ``(rubric id, PASS|FAIL|PENDING|ERROR, reason)`` per rubric (see the module doc).

    >>> rubric_outcome([("r1", "PASS", ""), ("r2", "FAIL", "no date")], 1.0).reason
    '1/2 rubrics met (threshold 1); r2 FAIL: no date'
    >>> rubric_outcome([("r1", "PASS", ""), ("r2", "PENDING", "unreadable")], 0.5).passed
    True
    """
    n = len(verdicts)
    if n == 0:
        return GradeResult(passed=None, reason="no rubrics")
    met = sum(1 for _, v, _ in verdicts if v == "PASS")
    open_ = sum(1 for _, v, _ in verdicts if v in ("PENDING", "ERROR"))
    share = met / n
    head = f"{met}/{n} rubrics met (threshold {threshold:g})"
    details = [f"{rid} {v}" + (f": {why}" if why else "") for rid, v, why in verdicts if v != "PASS"]
    reason = "; ".join([head] + details)
    if (met + open_) / n < threshold:
        return GradeResult(passed=False, score=share, reason=reason)
    if any(v == "ERROR" for _, v, _ in verdicts):
        return GradeResult(passed=None, score=share, reason=reason, error=True)
    if share >= threshold:
        return GradeResult(passed=True, score=share, reason=reason if details else head)
    return GradeResult(passed=None, score=share, reason="PENDING: " + reason)


class RubricGrader(JudgeGrader):
    """Per-case rubrics judged one by one (see the module doc).

    Takes the judge's arguments (``provider``, ``model``, ``options``, ``hard``,
    ``calibration``, ``generator_model``, ``allow_self_judge``,
    ``max_response_chars``), plus ``threshold`` (default 1.0) and ``prompt``
    (a file replacing :data:`RUBRIC_INSTRUCTIONS`).
    """

    name = "rubrics"

    def __init__(
        self,
        provider: Provider | str,
        *,
        prompt: str | Path | None = None,
        threshold: float = RUBRICS_KEYS["threshold"].default,
        **judge: Any,
    ) -> None:
        for key in ("rubric", "rubric_text"):
            if key in judge:
                raise ConfigError(f"rubrics: {key!r} is not an option here (the rubrics come from the cases)")
        text = RUBRIC_INSTRUCTIONS
        if prompt is not None:
            try:
                text = Path(prompt).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"rubrics: cannot read prompt {prompt}: {exc}") from None
        self.threshold = unit_threshold(threshold, "graders.rubrics.threshold")
        super().__init__(provider, rubric_text=text, **judge)
        self.version = options_version(
            self.judge_version,
            {"threshold": None if self.threshold == RUBRICS_KEYS["threshold"].default else self.threshold},
        )

    def applies(self, case: Case) -> bool:
        return bool(case.rubrics)

    def case_threshold(self, case: Case) -> float:
        """The case's own threshold (contract ``expect.rubric_threshold``, an ADK rubric criterion's), else ours."""
        own = (case.expect or {}).get("rubric_threshold")
        for metric in _RUBRIC_METRICS:
            crit = (case.criteria or {}).get(metric)
            if own is None and isinstance(crit, Mapping) and crit.get("threshold") is not None:
                own = crit["threshold"]
        if own is None:
            return self.threshold
        return unit_threshold(own, f"case {case.id}: rubric threshold")

    def rubric_prompt(self, case: Case, response: Response, rubric: Rubric) -> tuple[Case, list[str]]:
        """The case sent to the judge for one rubric, and the quoted answers."""
        text = self.rubric + _criterion_text(rubric, len(case.turns))
        system, user, answers = build_judge_prompt(case, response, text, max_chars=self.max_response_chars)
        judge_case = Case(id=f"rubric:{case.id}:{rubric.id}", shape="contract", turns=(Turn(user=user),), system=system)
        return judge_case, answers

    async def _judge_one(
        self, case: Case, response: Response, rubric: Rubric, spent: list[dict[str, Any]], call: ModelCall | None
    ) -> tuple[str, str, str]:
        judge_case, answers = self.rubric_prompt(case, response, rubric)
        try:
            reply = await ask_model(self.provider, judge_case, call, spent)  # its usage in spent, answered or not
        except Exception as exc:  # the judge's failure is an ERROR of this rubric, never a FAIL
            return rubric.id, "ERROR", "judge call failed: " + (" ".join(str(exc).split()) or type(exc).__name__)
        verdict = parse_judge(reply.text, quoted=answers)
        why = mask_secrets("; ".join(verdict.reasons) if verdict.decision != "PENDING" else verdict.note)
        if len(why) > 200:
            why = why[:199] + "…"
        label = {"ACCEPT": "PASS", "REJECT": "FAIL"}.get(verdict.decision, "PENDING")
        return rubric.id, label, why

    async def agrade(self, case: Case, response: Response, call: ModelCall | None = None) -> GradeResult:
        if not selected_for(case, self.name):
            return GradeResult(passed=None, reason="not selected for this case")
        if not case.rubrics:
            return GradeResult(passed=None, reason="no rubrics")
        threshold = self.case_threshold(case)
        spent: list[dict[str, Any]] = []  # each judge call's usage
        verdicts = await asyncio.gather(*(self._judge_one(case, response, r, spent, call) for r in case.rubrics))
        result = replace(rubric_outcome(list(verdicts), threshold), usage=functools.reduce(add_usage, spent, None))
        text = {r.id: r.text for r in case.rubrics}  # a rubric's finding names it by its text
        found = [Finding(self.name, "rubric", value_free(text.get(rid, rid))) for rid, v, _ in verdicts if v == "FAIL"]
        return replace(result, findings=tuple(dict.fromkeys(found))) if found else result


publish(globals())
