"""The records every layer shares: cases, what a system under test answered, grader results.

These are plain data, imported by every layer and importing nothing of goldenkit:

* a normalized eval case (:class:`Case`, its :class:`Turn` s, :class:`ToolCall` s,
  :class:`ToolResponse` s and :class:`Message` s); every dataset shape normalizes to it
  (see :mod:`goldenkit.formats`), and providers and graders read only it;
* a provider's answer (:class:`Response`, one :class:`TurnOutput` per user turn);
* the decoder of an outcome's ``graders`` cell (:func:`grader_results`) and a
  case's refusal expectation (:func:`expects_refusal`), so the analysis reads both
  without importing graders.

A dataset row's ``case`` is an ADK eval case, a Vertex GenAI eval case or a
contract (golden-style) case. A :class:`Case` holds the user turns to send, in
order (each with what is expected of that turn: the reference answer and the
tool calls, and the recorded tool responses a runner may answer tool calls
from), the system instruction and any prior history, the tool declarations to
offer the model, the contract expectations (``expect``) and per-case grading
criteria, and the rubrics an LLM judge checks the answer against (ADK ``rubrics``,
Vertex ``rubric_groups``, contract ``expect.rubrics``), each as a :class:`Rubric`.
The raw record stays in ``Case.raw``: normalizing never drops information.

>>> Response.from_text("hi").text
'hi'
>>> grader_results('{"contract": {"passed": true}, "judge": null}')
{'contract': {'passed': True}}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CASE_SHAPES = ("adk", "vertex", "contract")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool (function) call: ``name`` and ``args``; ``id`` is ignored when matching."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


@dataclass(frozen=True, slots=True)
class ToolResponse:
    """A recorded tool response, keyed by the call it answers (name and args)."""

    name: str
    args: dict[str, Any] | None
    response: Any


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message: role is ``system``, ``user``, ``assistant`` or ``tool``.

    A ``tool`` message answers one call: ``name`` is the tool's name and
    ``tool_call_id`` the id of the assistant's call it answers (when there is one).
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    name: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn and what is expected of the agent's answer to it."""

    user: str
    expected_response: str | None = None
    expected_tools: tuple[ToolCall, ...] = ()
    tool_responses: tuple[ToolResponse, ...] = ()
    intermediate_responses: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Rubric:
    """One criterion an LLM judge checks: ``id``, the criterion's ``text``, and the 0-based
    ``turn`` it applies to (None: the whole conversation). ``source`` says where it came from
    (``adk``, ``adk-invocation``, ``vertex:<group>``, ``contract``)."""

    id: str
    text: str
    turn: int | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class Case:
    """A normalized eval case.

    ``reference`` is the expected final answer (the last turn's, when turns carry
    one). ``expect`` holds the contract expectations (must_contain, must_not,
    regex, refusal, tools, ...). ``criteria`` carries per-case grading settings
    such as ADK ``test_config.json`` thresholds. ``session`` is ADK's
    session_input (app_name, user_id, state); ``final_state`` the state the
    session should end with (ADK ``final_session_state``, contract
    ``expect.final_state``; None: nothing expected).
    """

    id: str
    shape: str
    turns: tuple[Turn, ...]
    system: str | None = None
    history: tuple[Message, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    reference: str | None = None
    expect: dict[str, Any] = field(default_factory=dict)
    criteria: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    rubrics: tuple[Rubric, ...] = ()
    final_state: dict[str, Any] | None = None

    @property
    def prompt(self) -> str:
        """The first user turn's text (the whole prompt of a single-turn case)."""
        return self.turns[0].user if self.turns else ""

    @property
    def expected_trajectory(self) -> list[list[ToolCall]]:
        """Expected tool calls per turn."""
        return [list(t.expected_tools) for t in self.turns]


@dataclass(slots=True)
class TurnOutput:
    """What the system under test produced for one user turn."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_responses: list[dict[str, Any]] = field(default_factory=list)
    intermediate: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "tool_responses": self.tool_responses,
            "intermediate": [list(x) for x in self.intermediate],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TurnOutput:
        return cls(
            text=d.get("text") or "",
            tool_calls=[ToolCall(c["name"], dict(c.get("args") or {})) for c in d.get("tool_calls") or []],
            tool_responses=list(d.get("tool_responses") or []),
            intermediate=[(str(a), str(b)) for a, b in d.get("intermediate") or []],
        )


@dataclass(slots=True)
class Response:
    """A provider's answer to a whole case (every turn).

    ``turns`` holds one TurnOutput per user turn sent. ``text`` is the final
    answer (the last turn's text). Token counts are None when the provider does
    not report them; ``cost`` is None unless the provider returns a price.
    ``ttft_ms`` is the time to the first token of a streamed call (None unstreamed).
    """

    turns: list[TurnOutput]
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    model: str | None = None
    raw: Any = None
    ttft_ms: float | None = None
    retrieved: list[str] | None = None  # ids the agent retrieved, in order (None: not reported)

    @property
    def text(self) -> str:
        return self.turns[-1].text if self.turns else ""

    @property
    def tool_calls(self) -> list[list[ToolCall]]:
        """Actual tool calls per turn."""
        return [list(t.tool_calls) for t in self.turns]

    @classmethod
    def from_text(cls, text: str, **kwargs: Any) -> Response:
        return cls(turns=[TurnOutput(text=text)], **kwargs)

    def trajectory(self) -> list[dict[str, Any]]:
        """The whole trajectory as JSON-ready dicts (what an outcome keeps)."""
        return [t.to_dict() for t in self.turns]


def grader_results(value: Any) -> dict[str, dict[str, Any]]:
    """The graders cell of one outcome as ``{name: {passed, score, reason, error}}``.

    The cell may be a dict, an Arrow map read from Parquet (a list of pairs),
    JSON text, or empty (None, NaN); a grader whose result is null is left out.
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return {}
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else {}
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        items = value.items()
    else:  # a Parquet map comes back as a list of (key, value) pairs
        items = ((k, v) for k, v in value)
    return {str(k): dict(v) for k, v in items if v is not None}


def expects_refusal(expect: Mapping[str, Any] | None) -> bool:
    """True when a contract's expectations say the answer must refuse (``refusal: true``, alias ``refuse``).

    With both keys given, the later one counts (as the contract grader resolves aliases).

    >>> expects_refusal({"refuse": True}), expects_refusal({"refusal": False}), expects_refusal(None)
    (True, False, False)
    """
    flag = None
    for key, value in (expect or {}).items():
        if key in ("refusal", "refuse"):
            flag = value
    return flag is True


__all__ = [
    "CASE_SHAPES",
    "Case",
    "Message",
    "Response",
    "Rubric",
    "ToolCall",
    "ToolResponse",
    "Turn",
    "TurnOutput",
    "expects_refusal",
    "grader_results",
]
