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
An image the model must see (an inspect ``ContentImage``, a genai ``inline_data`` /
``file_data`` part) is an :class:`ImagePart` on the user turn (``Turn.images``) or
history message (``Message.images``) that carries it; ``Case.images`` lists them all.

>>> Response.from_text("hi").text
'hi'
>>> grader_results('{"contract": {"passed": true}, "judge": null}')
{'contract': {'passed': True}}
"""

from __future__ import annotations

import base64
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
class ImagePart:
    """An image (or other media part) sent with a user message: ``mime_type`` and either
    the bytes (``data``) or a ``url`` (http(s), gs://; a data URI is decoded into ``data``).

    ADK and Vertex media parts of another type (audio, PDF) are kept as ImageParts with
    their mime type, so a provider that cannot send them refuses the row instead of
    dropping the part (:attr:`is_image` tells them apart).

    >>> ImagePart("image/png", data=b"PNG").data_uri()
    'data:image/png;base64,UE5H'
    """

    mime_type: str
    data: bytes | None = None
    url: str | None = None

    @property
    def is_image(self) -> bool:
        return self.mime_type.lower().startswith("image/")

    def base64(self) -> str:
        """The bytes as standard base64 (empty for a URL part)."""

        return base64.b64encode(self.data or b"").decode("ascii")

    def data_uri(self) -> str:
        """``data:<mime>;base64,...`` for bytes; the URL itself for a URL part."""
        if self.data is None:
            return self.url or ""
        return f"data:{self.mime_type};base64,{self.base64()}"

    def describe(self) -> str:
        """A short description for messages: ``image/png, 1234 bytes`` or ``image/jpeg at URL``."""
        if self.data is not None:
            return f"{self.mime_type}, {len(self.data)} bytes"
        return f"{self.mime_type} at {self.url}"

    def to_dict(self) -> dict[str, Any]:
        """The contract-shape spelling: ``{"mime_type", "data": base64}`` or ``{"mime_type", "url"}``."""
        if self.data is not None:
            return {"mime_type": self.mime_type, "data": self.base64()}
        return {"mime_type": self.mime_type, "url": self.url}


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
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn and what is expected of the agent's answer to it."""

    user: str
    expected_response: str | None = None
    expected_tools: tuple[ToolCall, ...] = ()
    tool_responses: tuple[ToolResponse, ...] = ()
    intermediate_responses: tuple[tuple[str, str], ...] = ()
    images: tuple[ImagePart, ...] = ()  # sent with the user text, in order


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
class Scenario:
    """A simulated-user scenario: the user's first message and the plan a user simulator follows.

    ``max_turns`` caps the agent turns of this case (it wins over the run's
    ``--max-turns``); ``stop`` is a phrase that, when the simulator's message
    contains it, ends the conversation (the simulator's own stop signal ends it too).
    Every shape normalizes to it: contract ``scenario: {starting_prompt, plan,
    max_turns?, stop?}``, ADK ``conversation_scenario`` and Vertex ``user_scenario``
    (``starting_prompt``, ``conversation_plan``).
    """

    starting_prompt: str
    plan: str
    max_turns: int | None = None
    stop: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"starting_prompt": self.starting_prompt, "plan": self.plan}
        if self.max_turns is not None:
            out["max_turns"] = self.max_turns
        if self.stop is not None:
            out["stop"] = self.stop
        return out


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
    scenario: Scenario | None = None

    @property
    def prompt(self) -> str:
        """The first user turn's text (the whole prompt of a single-turn case)."""
        return self.turns[0].user if self.turns else ""

    @property
    def images(self) -> tuple[ImagePart, ...]:
        """Every image the case sends: the history messages', then each turn's (empty for text-only cases)."""
        out: list[ImagePart] = []
        for m in self.history:
            out += m.images
        for t in self.turns:
            out += t.images
        return tuple(out)

    @property
    def expected_trajectory(self) -> list[list[ToolCall]]:
        """Expected tool calls per turn."""
        return [list(t.expected_tools) for t in self.turns]


@dataclass(slots=True)
class TurnOutput:
    """What the system under test produced for one user turn.

    In a simulated conversation ``user`` is the user message the turn answers (the
    starting prompt, then the simulator's messages), so a trajectory is the whole
    transcript; it is left out of :meth:`to_dict` when None, as before.
    """

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_responses: list[dict[str, Any]] = field(default_factory=list)
    intermediate: list[tuple[str, str]] = field(default_factory=list)
    user: str | None = None  # the user message this turn answers, in a simulated conversation

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.user is None else {"user": self.user}
        out.update(
            text=self.text,
            tool_calls=[c.to_dict() for c in self.tool_calls],
            tool_responses=self.tool_responses,
            intermediate=[list(x) for x in self.intermediate],
        )
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TurnOutput:
        user = d.get("user")
        return cls(
            text=d.get("text") or "",
            tool_calls=[ToolCall(c["name"], dict(c.get("args") or {})) for c in d.get("tool_calls") or []],
            tool_responses=list(d.get("tool_responses") or []),
            intermediate=[(str(a), str(b)) for a, b in d.get("intermediate") or []],
            user=user if isinstance(user, str) else None,
        )


@dataclass(slots=True)
class Response:
    """A provider's answer to a whole case (every turn).

    ``turns`` holds one TurnOutput per user turn sent. ``text`` is the final
    answer (the last turn's text). Token counts are None when the provider does
    not report them; ``cost`` is None unless the provider returns a price.
    ``ttft_ms`` is the time to the first token of a streamed call (None unstreamed).
    ``tokens_cached`` (input tokens read from the server's cache) and ``tokens_reasoning``
    (output tokens spent thinking) are part of ``tokens_in`` and ``tokens_out``; ``usage`` is the
    other roles' usage the answer took (``{"simulator": {...}}``, :data:`goldenkit.schema.USAGE_COUNTS`).
    """

    turns: list[TurnOutput]
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    model: str | None = None
    raw: Any = None
    ttft_ms: float | None = None
    retrieved: list[str] | None = None  # ids the agent retrieved, in order (None: not reported)
    tokens_cached: int | None = None
    tokens_reasoning: int | None = None
    usage: dict[str, dict[str, Any]] | None = None

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


def transcript_text(trajectory: Any) -> str | None:
    """A simulated conversation's transcript, turn by turn, as text; None when ``trajectory`` (an
    outcome's trajectory: a list of turn dicts, or its JSON text) is not one (its turns carry no ``user``).

    >>> print(transcript_text([{"user": "hi", "text": "hello", "tool_calls": [{"name": "f", "args": {}}],
    ...                         "tool_responses": [{"name": "f", "response": 1}]}]))
    [turn 1] user: hi
    [turn 1] agent calls f {} -> 1
    [turn 1] agent: hello
    """
    if isinstance(trajectory, str):
        try:
            trajectory = json.loads(trajectory)
        except ValueError:
            return None
    if not isinstance(trajectory, list) or not trajectory:
        return None
    if not all(isinstance(t, Mapping) and isinstance(t.get("user"), str) for t in trajectory):
        return None
    lines = []
    for i, turn in enumerate(trajectory, start=1):
        lines.append(f"[turn {i}] user: {turn['user']}")
        results = list(turn.get("tool_responses") or [])
        for k, call in enumerate(turn.get("tool_calls") or []):
            args = json.dumps(call.get("args") or {}, sort_keys=True, ensure_ascii=False, default=str)
            got = results[k].get("response") if k < len(results) and isinstance(results[k], Mapping) else None
            shown = json.dumps(got, sort_keys=True, ensure_ascii=False, default=str)
            lines.append(f"[turn {i}] agent calls {call.get('name')} {args} -> {shown}")
        lines.append(f"[turn {i}] agent: {turn.get('text') or ''}")
    return "\n".join(lines)


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
    "ImagePart",
    "Message",
    "Response",
    "Rubric",
    "Scenario",
    "ToolCall",
    "ToolResponse",
    "Turn",
    "TurnOutput",
    "expects_refusal",
    "grader_results",
    "transcript_text",
]

# Root names: their public home is the root (goldenkit._registry.publish, whose layer is above this one).
Case.__module__ = Response.__module__ = "goldenkit"
