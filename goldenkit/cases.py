"""The one internal case model every dataset shape normalizes to.

A dataset row's ``case`` is an ADK eval case, a Vertex GenAI eval case or a
contract (golden-style) case. Providers and graders never look at those raw
shapes: they read a :class:`Case`, which holds

* the user turns to send, in order (each with what is expected of that turn:
  the reference answer and the tool calls, and the recorded tool responses a
  runner may answer tool calls from),
* the system instruction and any prior history,
* the tool declarations to offer the model,
* the contract expectations (``expect``) and per-case grading criteria,
* the rubrics an LLM judge checks the answer against (ADK ``rubrics``, Vertex
  ``rubric_groups``, contract ``expect.rubrics``), each as a :class:`Rubric`.

The raw record stays in ``Case.raw``: normalizing never drops information.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CASE_SHAPES = ("adk", "vertex", "contract")


@dataclass(frozen=True)
class ToolCall:
    """One tool (function) call: ``name`` and ``args``; ``id`` is ignored when matching."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


@dataclass(frozen=True)
class ToolResponse:
    """A recorded tool response, keyed by the call it answers (name and args)."""

    name: str
    args: dict[str, Any] | None
    response: Any


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Turn:
    """One user turn and what is expected of the agent's answer to it."""

    user: str
    expected_response: str | None = None
    expected_tools: tuple[ToolCall, ...] = ()
    tool_responses: tuple[ToolResponse, ...] = ()
    intermediate_responses: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Rubric:
    """One criterion an LLM judge checks: ``id``, the criterion's ``text``, and the 0-based
    ``turn`` it applies to (None: the whole conversation). ``source`` says where it came from
    (``adk``, ``adk-invocation``, ``vertex:<group>``, ``contract``)."""

    id: str
    text: str
    turn: int | None = None
    source: str = ""


@dataclass(frozen=True)
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


__all__ = ["CASE_SHAPES", "Case", "Message", "Rubric", "ToolCall", "ToolResponse", "Turn"]
