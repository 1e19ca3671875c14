"""Tool trajectories: the calls an agent made against the calls it should have made.

The rules are ADK's ``tool_trajectory_avg_score`` (TrajectoryEvaluator):

* Two calls match when their names are equal and their ``args`` are equal
  (dict equality: key order does not matter; ``id`` is ignored).
* Per turn, with ``match``:
  ``EXACT``     the same calls in the same order, no more and no fewer
                (expected ``[]`` passes only when nothing was called);
  ``IN_ORDER``  the expected calls appear, in order, as a subsequence of the
                actual ones (greedy; extra calls anywhere are allowed);
  ``ANY_ORDER`` every expected call consumes one distinct matching actual call.
  Expected ``[]`` passes under IN_ORDER and ANY_ORDER.
* A turn scores 1.0 or 0.0; the case score is the mean over turns; the case
  passes when the score is >= the threshold (default 1.0: every turn matches).
* Expected and actual turns are paired with ``zip``: the shorter list wins and
  extra turns are not scored (the ADK behaviour up to mid-2025; newer ADK
  releases reject lists of different length instead). goldenkit keeps the zip
  for the score but names the unscored turns in the grader's reason.
* ``match`` strings are normalized as ADK does: case-insensitive, ``-`` and
  space read as ``_`` (``"in-order"`` is ``IN_ORDER``).

goldenkit adds an ``args`` mode: ``exact`` (ADK), ``subset`` (every expected
key is present in the actual call with an equal value; extra actual keys are
fine) or ``ignore`` (names only, ADK's ``ignore_args=True``), and per-tool,
per-argument policies (``exact``, ``ignore``, ``present``, ``regex:<p>``,
``number:<tol>``, ``subset``; :mod:`goldenkit.graders._args`). Arguments that
were not valid JSON never match, whatever the policy.

Partial credit: ``F1`` scores a unit by the F1 of a one-to-one (multiset)
matching of expected and actual calls, ``ALIGN`` by the longest common
subsequence share 2·lcs / (expected + actual) (:mod:`goldenkit.graders._partial`);
the reason names the missing and extra calls. The threshold (default 1.0) decides.

:class:`TrajectoryGrader` reads expectations from two places:

* ADK (and Vertex) cases: ``case.turns[i].expected_tools`` per turn, with the
  criterion ``tool_trajectory_avg_score`` from ``case.criteria`` (a threshold,
  or ``{"threshold", "match_type", "ignore_args"}``; default EXACT and 1.0).
  If the case has criteria that do not name this metric, or is a
  simulated-user scenario (``criteria.simulated_user``), it does not apply.
* Contract cases: ``expect.tools`` (the whole trajectory, every turn's calls
  concatenated, compared as one unit), ``expect.turns[i].tools`` (per turn),
  ``expect.tool_match`` (default IN_ORDER), ``expect.tool_args`` (default
  exact), ``expect.tool_threshold`` (default 1.0) and the ordering rules
  ``expect.tool_before_text``: ``[{"tool": name, "pattern": regex, "args"?:
  {...}}]`` — whenever an answer text (a turn's final text or an intermediate
  message) matches ``pattern`` (case-insensitive), a call to ``tool`` (whose
  args contain ``args``, if given) must have happened in that turn or an
  earlier one. Within one turn every tool call counts as earlier than that
  turn's final text; the order of intermediate messages relative to calls in
  the same turn is not recorded, so same-turn calls count as earlier for them
  too. Each rule is one more unit of the score.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit._findings import reason_findings
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, InputError
from goldenkit.graders._args import ARG_MODES, BROKEN_ARGS, ArgRules, args_match, parse_arg_rules
from goldenkit.graders._base import Grader, GradeResult, options_version, selected_for
from goldenkit.graders._criteria import criterion, has_criteria, is_simulated
from goldenkit.graders._partial import Partial, align_partial, f1_partial, max_matching
from goldenkit.graders._text import as_list, context, quote
from goldenkit.records import Case, Response

__all__ = [
    "ARG_MODES",
    "MATCH_TYPES",
    "PARTIAL_TYPES",
    "TrajectoryGrader",
    "calls_match",
    "normalize_args_mode",
    "normalize_match",
    "trajectory_score",
    "turn_matches",
    "unit_score",
]

MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER", "F1", "ALIGN")
#: The match types that give partial credit (a unit scores in [0, 1], not 0 or 1).
PARTIAL_TYPES = ("F1", "ALIGN")
_ADK_ENUM = 3  # ADK's MatchType enum values are 0..2 (EXACT, IN_ORDER, ANY_ORDER)
_METRIC = "tool_trajectory_avg_score"


def normalize_match(match: Any) -> str:
    """``"in-order"``, ``"In Order"``, ``1`` → ``"IN_ORDER"`` (ADK's normalization and enum values)."""
    if isinstance(match, int) and not isinstance(match, bool) and 0 <= match < _ADK_ENUM:
        return MATCH_TYPES[match]
    if isinstance(match, str):
        norm = match.strip().upper().replace("-", "_").replace(" ", "_")
        if norm in MATCH_TYPES:
            return norm
    raise InputError(f"unknown trajectory match type {match!r} (expected one of {', '.join(MATCH_TYPES)})")


def normalize_args_mode(args: Any) -> str:
    """``"exact"``, ``"subset"`` or ``"ignore"`` (case-insensitive)."""
    if isinstance(args, str) and args.strip().lower() in ARG_MODES:
        return args.strip().lower()
    raise InputError(f"unknown tool args mode {args!r} (expected one of {', '.join(ARG_MODES)})")


def _call(c: Any) -> tuple[str, dict[str, Any]]:
    """(name, args) of a ToolCall, a genai FunctionCall or a ``{"name", "args"}`` dict."""
    if isinstance(c, Mapping):
        name = c.get("name", c.get("tool_name"))
        args = c.get("args", c.get("tool_input"))
    else:
        name, args = getattr(c, "name", None), getattr(c, "args", None)
    if not isinstance(name, str):
        raise InputError(f"a tool call needs a string name, got {c!r}")
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise InputError(f"tool call {name!r}: args must be an object, got {type(args).__name__}")
    return name, dict(args)


Args = str | ArgRules


def _rules(args: Args) -> ArgRules:
    if isinstance(args, ArgRules):
        return args
    return ArgRules(mode=normalize_args_mode(args))


def calls_match(expected: Any, actual: Any, args: Args = "exact") -> bool:
    """Whether ``actual`` satisfies ``expected``: equal names, and the args under the mode or
    policies ``args`` (see :mod:`goldenkit.graders._args`). Arguments that were not valid
    JSON never match."""
    return _pred(args)(expected, actual)


def _pred(args: Args) -> Callable[[Any, Any], bool]:
    rules = _rules(args)

    def match(e: Any, a: Any) -> bool:
        en, ea = _call(e)
        an, aa = _call(a)
        return en == an and args_match(en, ea, aa, rules)

    return match


def unit_score(expected: Sequence[Any], actual: Sequence[Any], match: str = "EXACT", args: Args = "exact") -> Partial:
    """One unit's score under ``match``: 1.0/0.0 for EXACT, IN_ORDER, ANY_ORDER; F1 or the
    alignment share for F1 and ALIGN; with the missing and extra calls."""
    match = normalize_match(match)
    pred = _pred(args)
    if match == "F1":
        return f1_partial(expected, actual, pred)
    if match == "ALIGN":
        return align_partial(expected, actual, pred)
    ok = turn_matches(expected, actual, match, args)
    part = f1_partial(expected, actual, pred)
    return replace(part, score=1.0 if ok else 0.0)


def turn_matches(expected: Sequence[Any], actual: Sequence[Any], match: str = "EXACT", args: Args = "exact") -> bool:
    """Whether one turn's actual calls satisfy its expected calls (ADK rules, see the module doc).
    For F1 and ALIGN: whether the unit scores 1.0."""
    match = normalize_match(match)
    if match in PARTIAL_TYPES:
        return unit_score(expected, actual, match, args).score == 1.0
    pred = _pred(args)
    if match == "EXACT":
        return len(expected) == len(actual) and all(pred(e, a) for e, a in zip(expected, actual, strict=False))
    if not expected:
        return True
    if match == "IN_ORDER":
        i = 0
        for a in actual:
            if pred(expected[i], a):
                i += 1
                if i == len(expected):
                    return True
        return False
    return not _unmatched(expected, actual, args)[0]


def _unmatched(expected: Sequence[Any], actual: Sequence[Any], args: Args) -> tuple[list[Any], list[Any]]:
    """``(expected calls left unmatched, actual calls left over)`` under a maximum one-to-one matching
    (see :func:`goldenkit.graders._partial.max_matching`; for ``exact`` and ``ignore`` it gives what
    first-fit gives)."""
    owner = max_matching(expected, actual, _pred(args))
    used = {i for i in owner if i is not None}
    return [e for i, e in enumerate(expected) if i not in used], [a for j, a in enumerate(actual) if owner[j] is None]


def _turns(value: Any, what: str) -> list[list[Any]]:
    if not isinstance(value, (list, tuple)) or any(not isinstance(t, (list, tuple)) for t in value):
        raise InputError(f"{what} must be a list of turns, each a list of tool calls")
    return [list(t) for t in value]


def trajectory_score(
    expected: Sequence[Sequence[Any]], actual: Sequence[Sequence[Any]], match: str = "EXACT", args: Args = "exact"
) -> float:
    """ADK's tool_trajectory_avg_score: the mean over turns of 1.0 (match) or 0.0
    (for F1 and ALIGN, of each turn's partial score).

    ``expected`` and ``actual`` are lists of turns, each a list of calls
    (``{"name": str, "args": dict}`` dicts, :class:`~goldenkit.records.ToolCall`
    or genai ``FunctionCall``). Turns are paired with ``zip`` (extra turns on
    either side are not scored). With no turn to score the result is NaN
    (ADK: not evaluated).

    >>> trajectory_score([[{"name": "a", "args": {}}]], [[{"name": "a", "args": {}}, {"name": "b", "args": {}}]],
    ...                  match="in-order")
    1.0
    """
    exp = _turns(expected, "expected")
    act = _turns(actual, "actual")
    match = normalize_match(match)
    rules = _rules(args)
    scores = [unit_score(e, a, match, rules).score for e, a in zip(exp, act, strict=False)]
    if not scores:
        return float("nan")
    return sum(scores) / len(scores)


def _show(calls: Sequence[Any], limit: int = 4) -> str:
    parts = []
    for c in calls[:limit]:
        name, a = _call(c)
        parts.append(f"{name}({', '.join(f'{k}={v!r}' for k, v in a.items())})")
    more = f", +{len(calls) - limit} more" if len(calls) > limit else ""
    return "[" + ", ".join(parts) + more + "]"


def _explain(expected: Sequence[Any], actual: Sequence[Any], match: str, args: ArgRules) -> str:
    """Why one unit failed: the missing expected calls and, for EXACT, the extra ones."""
    missing, pool = _unmatched(expected, actual, args)
    bits = []
    if missing:
        bits.append(f"missing {_show(missing)}")
        near = [a for a in actual if any(_call(a)[0] == _call(m)[0] for m in missing)]
        broken = [a for a in near if any(k in _call(a)[1] for k in BROKEN_ARGS)]
        if broken:
            bits.append(f"called with arguments that are not a JSON object {_show(broken)}")
        elif near and not args.names_only:
            bits.append(f"called with other args {_show(near)}")
    if match == "EXACT" and pool:
        bits.append(f"extra {_show(pool)}")
    if not bits:
        bits.append(f"out of order: expected {_show(expected)}, got {_show(actual)}")
    return "; ".join(bits)


def _unit(expected: Sequence[Any], actual: Sequence[Any], match: str, args: ArgRules) -> tuple[float, str]:
    """(score, why it is below 1: '' when it is 1) of one unit."""
    part = unit_score(expected, actual, match, args)
    if part.score == 1.0:
        return 1.0, ""
    if match not in PARTIAL_TYPES:
        return part.score, _explain(expected, actual, match, args)
    bits = [f"{match} {part.score:.3g} (precision {part.precision:.3g}, recall {part.recall:.3g})"]
    if part.missing:
        bits.append(f"missing {_show(part.missing)}")
    if part.extra:
        bits.append(f"extra {_show(part.extra)}")
    return part.score, "; ".join(bits)


class TrajectoryGrader(Grader):
    """Tool-call trajectory against the expected one (ADK semantics; see the module doc).

    Options (defaults for cases that do not say): ``match`` for ADK-shaped
    cases (default EXACT, as ADK), ``contract_match`` for contract cases
    (default IN_ORDER), ``args`` (a mode, default exact, or a table of per-tool
    argument policies, see :mod:`goldenkit.graders._args`), ``threshold`` (default 1.0).
    """

    name = "trajectory"
    BASE_VERSION = "1"

    def __init__(
        self,
        *,
        match: str = "EXACT",
        contract_match: str = "IN_ORDER",
        args: str | Mapping[str, Any] = "exact",
        threshold: float = 1.0,
        hard: bool = True,
    ) -> None:
        try:
            self.match = normalize_match(match)
            self.contract_match = normalize_match(contract_match)
            self.rules = parse_arg_rules(args, "args")
        except InputError as exc:
            raise ConfigError(f"graders.trajectory: {exc}") from None
        self.args = self.rules.mode
        self.threshold = unit_threshold(threshold, "graders.trajectory.threshold")
        self.hard = hard
        spec = self.rules.spec()
        self.version = options_version(
            self.BASE_VERSION,
            {
                "match": None if self.match == "EXACT" else self.match,
                "contract_match": None if self.contract_match == "IN_ORDER" else self.contract_match,
                "args": None if spec == "exact" else spec,
                "threshold": None if self.threshold == 1.0 else self.threshold,
            },
        )

    # -- what applies -------------------------------------------------------
    @staticmethod
    def _contract_spec(case: Case) -> dict[str, Any] | None:
        expect = case.expect or {}
        per_turn = [t.get("tools") if isinstance(t, Mapping) else None for t in as_list(expect.get("turns"))]
        if expect.get("tools") is None and all(t is None for t in per_turn) and not expect.get("tool_before_text"):
            return None
        return {"tools": expect.get("tools"), "per_turn": per_turn, "rules": as_list(expect.get("tool_before_text"))}

    def _adk_spec(self, case: Case) -> dict[str, Any] | None:
        if is_simulated(case.criteria):
            return None  # a simulated-user scenario has no expected invocations
        named, settings = criterion(case.criteria, _METRIC)
        if named:
            return settings
        if has_criteria(case.criteria):
            return None  # the case's criteria do not ask for this metric
        # ADK's default criteria include tool_trajectory_avg_score (1.0, EXACT).
        if case.shape == "adk" or (case.shape != "contract" and any(t.expected_tools for t in case.turns)):
            return {}
        return None

    def applies(self, case: Case) -> bool:
        return self._contract_spec(case) is not None or self._adk_spec(case) is not None

    # -- grading ------------------------------------------------------------
    def grade(self, case: Case, response: Response) -> GradeResult:
        if not selected_for(case, self.name):
            return GradeResult(passed=None, reason="not selected for this case")
        spec = self._contract_spec(case)
        if spec is not None:
            return self._grade_contract(case, spec, response)
        settings = self._adk_spec(case)
        if settings is not None:
            return self._grade_adk(case, settings, response)
        if is_simulated(case.criteria):
            return GradeResult(passed=None, reason="simulated-user scenario: no expected tool calls")
        if has_criteria(case.criteria):
            return GradeResult(passed=None, reason=f"the case's criteria do not ask for {_METRIC}")
        return GradeResult(passed=None, reason="no tool expectations")

    def _grade_adk(self, case: Case, settings: Mapping[str, Any], response: Response) -> GradeResult:
        try:
            match = normalize_match(settings.get("match_type", self.match))
        except InputError as exc:
            raise InputError(f"case {case.id}: criteria.{_METRIC}: {exc}") from None
        rules = ArgRules(mode="ignore") if settings.get("ignore_args") else self.rules
        threshold = unit_threshold(settings.get("threshold", self.threshold), f"criteria.{_METRIC}.threshold")
        expected = [list(t.expected_tools) for t in case.turns]
        actual = response.tool_calls
        fails = []
        scores = []
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            score, why = _unit(e, a, match, rules)
            scores.append(score)
            if why:
                fails.append(f"turn {i + 1}: {why}")
        notes = []
        if len(expected) != len(actual):
            notes.append(
                f"{len(expected)} expected turns, {len(actual)} actual; "
                f"turns beyond {min(len(expected), len(actual))} are not scored"
            )
        if not scores:
            return GradeResult(passed=None, reason="no turn to score; " + "; ".join(notes))
        score = sum(scores) / len(scores)
        passed = score >= threshold
        head = f"{match} score {score:.3g} {'>=' if passed else '<'} {threshold:g}"
        reason = "; ".join([head] + fails + notes) if (fails or notes) else ""
        return GradeResult(passed, score, reason, findings=reason_findings("trajectory", reason, grader=self.name))

    def _case_rules(self, case: Case) -> tuple[str, ArgRules]:
        expect = case.expect or {}
        try:
            match = normalize_match(expect.get("tool_match", self.contract_match))
            own = expect.get("tool_args")
            rules = self.rules.merged(None if own is None else parse_arg_rules(own, "tool_args"))
        except InputError as exc:
            raise InputError(f"case {case.id}: expect: {exc}") from None
        return match, rules

    def _grade_contract(self, case: Case, spec: Mapping[str, Any], response: Response) -> GradeResult:
        match, rules = self._case_rules(case)
        threshold = unit_threshold((case.expect or {}).get("tool_threshold", self.threshold), "expect.tool_threshold")
        actual = response.tool_calls
        units: list[float] = []
        fails: list[str] = []
        if spec["tools"] is not None:
            flat = [c for turn in actual for c in turn]
            score, why = _unit(list(as_list(spec["tools"])), flat, match, rules)
            units.append(score)
            if why:
                fails.append(f"tools ({match}): {why}")
        for i, exp_turn in enumerate(spec["per_turn"]):
            if exp_turn is None:
                continue
            if i >= len(actual):
                units.append(0.0)
                fails.append(f"turn {i + 1}: no such turn in the response ({len(actual)} turns)")
                continue
            score, why = _unit(list(exp_turn), actual[i], match, rules)
            units.append(score)
            if why:
                fails.append(f"turn {i + 1} ({match}): {why}")
        for rule in spec["rules"]:
            ok, why = _check_rule(rule, response)
            units.append(1.0 if ok else 0.0)
            if not ok:
                fails.append(why)
        if not units:
            return GradeResult(passed=None, reason="no tool expectations")
        score = sum(units) / len(units)
        passed = score >= threshold
        reason = "; ".join(fails)
        return GradeResult(passed, score, reason, findings=reason_findings("trajectory", reason, grader=self.name))


def _check_rule(rule: Any, response: Response) -> tuple[bool, str]:
    """One ``tool_before_text`` rule: (holds?, reason when it does not)."""
    if (
        not isinstance(rule, Mapping)
        or not isinstance(rule.get("tool"), str)
        or not isinstance(rule.get("pattern"), str)
    ):
        raise InputError(f"expect.tool_before_text entries need 'tool' and 'pattern' strings, got {rule!r}")
    tool = rule["tool"]
    try:
        pattern = re.compile(rule["pattern"], 0 if rule.get("case_sensitive") else re.IGNORECASE)
    except re.error as exc:
        raise InputError(f"expect.tool_before_text: invalid pattern {rule['pattern']!r}: {exc}") from None
    want_args = rule.get("args") or {}
    wanted = {"name": tool, "args": want_args}
    called = False
    for i, turn in enumerate(response.turns):
        called = called or any(calls_match(wanted, c, "subset") for c in turn.tool_calls)
        texts = [t for _, t in turn.intermediate] + [turn.text]
        for text in texts:
            m = pattern.search(text or "")
            if m and not called:
                shown = f"{tool}({', '.join(f'{k}={v!r}' for k, v in want_args.items())})" if want_args else tool
                return False, (
                    f"tool_before_text: turn {i + 1} says {quote(m.group(), 40)} in "
                    f"{context(text, m.start(), m.end())} before any call to {shown}"
                )
    return True, ""


publish(globals())
