"""Multi-turn conversations and the tool loop for chat providers (OpenAI-compatible, Ollama).

:func:`run_conversation` drives one case through a chat backend (anything with
``async send(messages, tools) -> ChatReply``):

* Every user turn is sent with the conversation so far: the system instruction,
  the case's prior history, then each earlier turn. With ``history="actual"``
  (the default) an earlier turn is the model's own exchange (its answer, and any
  tool calls and tool results on the way); with ``history="expected"`` it is the
  dataset's user message and *expected* answer (the model's actual answer stands
  in when a turn has none), so each turn is graded from a gold context.
* A user turn's images (``Turn.images``) travel on its message (``Message.images``);
  each wire format encodes them (OpenAI ``image_url`` parts, Ollama ``images``).
* The case's tool declarations are sent with every request.
* When the model asks for tools, each call is answered from the case's recorded
  tool responses (:class:`RecordedTools`) and the model is sent back round, until
  it answers in text or ``max_tool_steps`` rounds of tool answers have been
  given. A call with no recorded response is answered with a clear tool error
  that the model sees (``{"error": "no recorded response for tool ..."}``) and
  that the trajectory keeps. A turn cut off by the step limit ends with an empty
  answer and an ``intermediate`` note saying so.
* Every call, tool answer and intermediate text is kept in the turn's
  :class:`~goldenkit.providers._base.TurnOutput` (the whole trajectory goes into
  the outcome); token counts are summed over every request.
* A request that fails (a :class:`~goldenkit.errors.ProviderError`) ends the
  conversation; the error carries what came before it (``partial``: a Response
  of the turns that completed, and of the failing turn its tool calls and results
  so far, with a note naming the failure), so the ERROR outcome's trajectory shows
  where it broke.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from goldenkit._constraints import RUN_TABLE
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import Case, Message, ToolCall, ToolResponse
from goldenkit.schema import TOKEN_COUNTS

#: ``--history``'s choices and ``--max-tool-steps``' default, as the run options' table declares them.
HISTORY_MODES: tuple[str, ...] = RUN_TABLE["history"].choices or ()
DEFAULT_MAX_TOOL_STEPS: int = RUN_TABLE["max_tool_steps"].default
#: Author of the notes the loop itself adds to a turn's ``intermediate`` list.
LOOP_AUTHOR = "goldenkit"


class ChatSender(Protocol):
    """A chat backend: ``send`` returns a reply with ``text``, ``tool_calls``, ``tokens_in``,
    ``tokens_out``, ``model`` and ``raw`` (the chat providers' ``ChatReply``)."""

    async def send(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]]) -> Any: ...


def check_history(value: Any) -> str:
    """Validate the ``history`` provider setting."""
    if value not in HISTORY_MODES:
        raise ConfigError(f"history must be one of {', '.join(HISTORY_MODES)}, not {value!r}")
    return str(value)


def check_max_tool_steps(value: Any) -> int:
    """Validate the ``max_tool_steps`` provider setting (a positive integer)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_tool_steps must be a positive integer, not {value!r}")
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class ToolAnswer:
    """How one tool call was answered: the response sent to the model and, if none was recorded, the error."""

    response: Any
    error: str | None = None

    def content(self) -> str:
        """The tool message content: a string as is, anything else as JSON."""
        return self.response if isinstance(self.response, str) else _canonical(self.response)


class RecordedTools:
    """A case's recorded tool responses, looked up by tool name and args.

    Sources, in order of preference for a call made during turn ``i``: the
    responses recorded for turn ``i``, then those of any turn, then ``extra``
    (e.g. a tool-fixture file shared by every case). Within a source an exact
    match (same name, equal args; key order and int/float spelling do not
    matter) beats a record without args (``args`` None: any call of that tool).
    When the same call was recorded several times (say a status polled twice),
    successive calls get the records in order and then the last one again.
    """

    def __init__(self, case: Case, extra: Iterable[ToolResponse] = ()) -> None:
        self._per_turn = [list(t.tool_responses) for t in case.turns]
        every: list[ToolResponse] = []
        seen: set[int] = set()
        for rs in self._per_turn:
            for r in rs:
                if id(r) not in seen:
                    seen.add(id(r))
                    every.append(r)
        self._every = every
        self._extra = list(extra)
        self._used: dict[tuple[int, ...], int] = {}

    def _pick(self, records: Sequence[ToolResponse], name: str, args: dict[str, Any]) -> ToolResponse | None:
        exact = [r for r in records if r.name == name and r.args is not None and dict(r.args) == args]
        if exact:
            key = tuple(id(r) for r in exact)  # equal args (1 == 1.0) share one cursor
            n = self._used.get(key, 0)
            self._used[key] = n + 1
            return exact[min(n, len(exact) - 1)]
        wild = [r for r in records if r.name == name and r.args is None]
        return wild[0] if wild else None

    def answer(self, call: ToolCall, turn: int) -> ToolAnswer:
        """The recorded response to ``call`` made in turn ``turn`` (0-based), or a tool error."""
        args = dict(call.args or {})
        sources: list[Sequence[ToolResponse]] = []
        if 0 <= turn < len(self._per_turn):
            sources.append(self._per_turn[turn])
        sources += [self._every, self._extra]
        for records in sources:
            found = self._pick(records, call.name, args)
            if found is not None:
                return ToolAnswer(found.response)
        message = f"no recorded response for tool {call.name} with args {_canonical(args)}"
        return ToolAnswer({"error": message}, error=message)


def read_tool_responses(path: str | Path) -> list[ToolResponse]:
    """Tool responses from a file shared by every case: a JSON list or JSONL of ``{"name", "args", "response"}``."""
    p = Path(path)
    return _parse_tool_responses(p, _read_bytes(p))


def _read_bytes(p: Path) -> bytes:
    try:
        return p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read tool responses: {exc.strerror or exc}") from None


def _parse_tool_responses(p: Path, data: bytes) -> list[ToolResponse]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}:{lineno}: tool responses are not UTF-8 text") from None
    records: list[tuple[int, Any]] = []
    if text.lstrip().startswith("["):
        try:
            records = list(enumerate(json.loads(text), start=1))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{p}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    else:
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                records.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{p}:{n}: invalid JSON: {exc.msg}") from None
    out = []
    for n, rec in records:
        if not isinstance(rec, dict) or not isinstance(rec.get("name"), str) or "response" not in rec:
            raise ConfigError(f"{p}:{n}: a tool response needs a string 'name' and a 'response'")
        args = rec.get("args")
        if args is not None and not isinstance(args, dict):
            raise ConfigError(f"{p}:{n}: 'args' must be an object or absent")
        out.append(ToolResponse(rec["name"], args, rec["response"]))
    return out


class ConversationOptions:
    """The conversation settings a chat provider takes and records in run.json.

    ``history``: ``"actual"`` (default) or ``"expected"``; ``max_tool_steps``:
    rounds of tool answers per turn (default 8); ``tool_responses``: optional
    path of a tool-response file shared by every case (:func:`read_tool_responses`),
    read once here so a bad file fails before the run starts.
    """

    def __init__(
        self,
        history: str = "actual",
        max_tool_steps: int = DEFAULT_MAX_TOOL_STEPS,
        tool_responses: str | Path | None = None,
    ) -> None:
        self.history = check_history(history)
        self.max_tool_steps = check_max_tool_steps(max_tool_steps)
        self.tool_responses = str(tool_responses) if tool_responses is not None else None
        self._records: list[ToolResponse] = []
        self._sha256: str | None = None
        if tool_responses is not None:
            # one read: the hash run.json records is of the very bytes the records came from
            data = _read_bytes(Path(tool_responses))
            self._records = _parse_tool_responses(Path(tool_responses), data)
            self._sha256 = hashlib.sha256(data).hexdigest()

    def settings(self) -> dict[str, Any]:
        """What run.json records (the file by path and by content hash)."""
        out: dict[str, Any] = {"history": self.history, "max_tool_steps": self.max_tool_steps}
        if self.tool_responses is not None:
            out["tool_responses"] = {"path": self.tool_responses, "sha256": self._sha256}
        return out

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`run_conversation`."""
        return {"history": self.history, "max_tool_steps": self.max_tool_steps, "tool_responses": self._records}


def initial_messages(case: Case, system: str | None = None) -> list[Message]:
    """System instruction (``system`` overrides the case's) and the case's prior history."""
    out: list[Message] = []
    sys_text = system if system is not None else case.system
    if sys_text:
        out.append(Message(role="system", content=sys_text))
    out.extend(case.history)
    return out


def expected_exchanges(case: Case, outputs: Sequence[TurnOutput]) -> list[Message]:
    """The first ``len(outputs)`` turns as the dataset has them, for ``history="expected"``.

    Each turn is its user message and its expected answer; a turn without one
    has the actual answer (``outputs[j].text``) stand in.
    """
    out: list[Message] = []
    for turn, done in zip(case.turns, outputs, strict=False):
        answer = turn.expected_response if turn.expected_response is not None else done.text
        out += [Message(role="user", content=turn.user, images=turn.images), Message(role="assistant", content=answer)]
    return out


async def run_conversation(
    case: Case,
    backend: ChatSender,
    *,
    system: str | None = None,
    history: str = "actual",
    max_tool_steps: int = DEFAULT_MAX_TOOL_STEPS,
    tool_responses: Iterable[ToolResponse] = (),
) -> Response:
    """Send every user turn of ``case`` with the conversation so far, answering tool calls; see the module doc."""
    check_history(history)
    check_max_tool_steps(max_tool_steps)
    recorded: RecordedTools | None = None  # made at the first tool call (most conversations have none)
    base = initial_messages(case, system)
    exchanges: list[list[Message]] = []  # per earlier turn: the messages actually exchanged
    turns: list[TurnOutput] = []
    tokens: dict[str, int | None] = dict.fromkeys(TOKEN_COUNTS)
    model: str | None = None
    ttft_ms: float | None = None  # of the case's first request
    raws: list[Any] = []
    for i, turn in enumerate(case.turns):
        prior: list[Message] = list(base)
        if history == "expected":
            prior += expected_exchanges(case, turns)
        else:
            for done in exchanges:
                prior += done
        current: list[Message] = [Message(role="user", content=turn.user, images=turn.images)]
        out = TurnOutput(text="")
        steps = 0
        while True:
            try:
                reply = await backend.send(prior + current, case.tools)
            except ProviderError as err:
                raise _broken(err, turns, out, i) from None
            if not raws:
                ttft_ms = getattr(reply, "ttft_ms", None)
            raws.append(reply.raw)
            for key in TOKEN_COUNTS:  # a count no reply reported stays None, never 0
                got = getattr(reply, key, None)
                if got is not None:
                    tokens[key] = (tokens[key] or 0) + got
            model = reply.model or model
            if not reply.tool_calls:
                out.text = reply.text
                current.append(Message(role="assistant", content=reply.text))
                break
            if reply.text:
                out.intermediate.append(("assistant", reply.text))
            calls = [
                c if c.id else ToolCall(c.name, dict(c.args or {}), f"call_{i}_{steps}_{k}")
                for k, c in enumerate(reply.tool_calls)
            ]
            current.append(Message(role="assistant", content=reply.text, tool_calls=tuple(calls)))
            if recorded is None:
                recorded = RecordedTools(case, tool_responses)
            current += _answer_calls(recorded, calls, i, out)
            steps += 1
            if steps >= max_tool_steps:
                out.intermediate.append(
                    (LOOP_AUTHOR, f"stopped after {max_tool_steps} tool steps without a text answer")
                )
                break
        exchanges.append(current)
        turns.append(out)
    response = Response(turns=turns, model=model, raw=raws[0] if len(raws) == 1 else raws, ttft_ms=ttft_ms)
    for key, count in tokens.items():
        setattr(response, key, count)
    return response


def _answer_calls(recorded: RecordedTools, calls: list[ToolCall], turn: int, out: TurnOutput) -> list[Message]:
    """Answer each call from the recorded tool responses: the tool messages, each call and answer kept in ``out``."""
    messages = []
    for c in calls:
        ans = recorded.answer(c, turn)
        out.tool_calls.append(c)
        entry: dict[str, Any] = {"name": c.name, "args": dict(c.args or {}), "response": ans.response}
        if ans.error is not None:
            entry["error"] = ans.error
        out.tool_responses.append(entry)
        messages.append(Message(role="tool", content=ans.content(), name=c.name, tool_call_id=c.id))
    return messages


def _broken(err: ProviderError, turns: list[TurnOutput], current: TurnOutput, index: int) -> ProviderError:
    """``err`` carrying the conversation up to it (see the module doc); named by its turn when there were several."""
    done = list(turns)
    if current.tool_calls or current.intermediate:
        current.intermediate.append((LOOP_AUTHOR, f"the turn failed: {err}"))
        done.append(current)
    out = err.with_message(f"turn {index + 1}: {err}") if index > 0 else err
    out.partial = Response(turns=done) if done else None
    return out


__all__ = [
    "DEFAULT_MAX_TOOL_STEPS",
    "HISTORY_MODES",
    "LOOP_AUTHOR",
    "ChatSender",
    "ConversationOptions",
    "RecordedTools",
    "ToolAnswer",
    "check_history",
    "check_max_tool_steps",
    "expected_exchanges",
    "initial_messages",
    "read_tool_responses",
    "run_conversation",
]
