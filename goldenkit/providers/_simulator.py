"""User simulators: who writes the user's next message in a simulated conversation.

A scenario case (:class:`~goldenkit.records.Scenario`) starts from its starting
prompt; after each agent reply a :class:`UserSimulator` sees the plan and the
whole transcript (a list of :class:`~goldenkit.records.Message`: ``user``,
``assistant`` with its ``tool_calls``, and one ``tool`` message per tool result)
and returns the next user message, or None to stop. The runner
(:mod:`goldenkit.runner._conversation`) drives the turns; a simulator only answers.

Simulators:

* ``callable``: ``fn(scenario, transcript) -> str | None`` (sync or async; a
  ``repeat`` keyword is passed when ``fn`` takes it), for scripted users;
* ``openai`` / ``ollama``: a chat model behind the existing HTTP client, asked
  with the pinned prompt :data:`SIMULATOR_SYSTEM_PROMPT` + :data:`SIMULATOR_USER_PROMPT`.
  The model replies :data:`STOP_TOKEN` to end the conversation. With a ``seed``,
  repeat ``r`` is asked with ``seed + r`` so every repeat is its own conversation.

Each simulator has a :meth:`~UserSimulator.version` (provider, model, the pinned
prompt's SHA-256, settings): the run key's ``simulator_version``, so runs with
different simulators are not comparable. A failure is a :class:`SimulatorError`,
whose ``kind`` (the outcome's ``error_kind``) is ``"simulator"``.

>>> render_transcript([Message("user", "hi"), Message("assistant", "hello")])
'USER: hi\\nASSISTANT: hello'
"""

from __future__ import annotations

import hashlib
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Protocol

from goldenkit._registry import publish
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import get_provider
from goldenkit.providers._callable import load_callable
from goldenkit.providers._failures import exception_error
from goldenkit.records import Case, Message, Response, Scenario, ToolCall, Turn, TurnOutput
from goldenkit.schema import usage_of

SIMULATOR_NAMES = ("callable", "openai", "ollama")
STOP_TOKEN = "<STOP>"

#: The pinned prompt of the model simulators (its hash is part of ``simulator_version``).
SIMULATOR_SYSTEM_PROMPT = (
    "You play the USER in a conversation with an AI assistant, to test the assistant.\n"
    "Follow this plan for the conversation:\n{plan}\n\n"
    "Rules: write only the user's next message, in the user's voice, with no quotes, labels or "
    "explanations. Never answer as the assistant. When the plan is done, or the conversation "
    f"cannot usefully go on, reply with exactly {STOP_TOKEN}."
)
SIMULATOR_USER_PROMPT = "The conversation so far:\n\n{transcript}\n\nWrite the user's next message."
PROMPT_SHA256 = hashlib.sha256(f"{SIMULATOR_SYSTEM_PROMPT}\n\n{SIMULATOR_USER_PROMPT}".encode()).hexdigest()


class SimulatorError(ProviderError):
    """The user simulator failed (an ERROR of the row, never a FAIL); ``kind`` is ``"simulator"``.

    ``transient`` says whether the runner retries it (a simulator's 503 is retried, and the
    outcome still says ``simulator`` when it keeps failing)."""

    default_kind = "simulator"

    def __init__(self, message: str, *, transient: bool = False, **kw: Any) -> None:
        kw.pop("kind", None)
        kw.pop("final_kind", None)
        super().__init__(message, kind="simulator", transient=transient, **kw)


def transcript_messages(turns: Sequence[TurnOutput]) -> list[Message]:
    """The conversation so far as Messages: per turn the user message, each tool call with its
    result (an ``assistant`` message carrying the call, then a ``tool`` message), and the answer."""
    out: list[Message] = []
    for i, turn in enumerate(turns):
        if turn.user is not None:
            out.append(Message(role="user", content=turn.user))
        for k, call in enumerate(turn.tool_calls):
            cid = call.id or f"call_{i}_{k}"
            out.append(Message(role="assistant", content="", tool_calls=(ToolCall(call.name, dict(call.args), cid),)))
            if k < len(turn.tool_responses):
                resp = turn.tool_responses[k].get("response")
                content = resp if isinstance(resp, str) else json.dumps(resp, sort_keys=True, ensure_ascii=False)
                out.append(Message(role="tool", content=content, name=call.name, tool_call_id=cid))
        out.append(Message(role="assistant", content=turn.text))
    return out


def render_transcript(transcript: Sequence[Message]) -> str:
    """The transcript as the text the model simulators read (tool calls and results included)."""
    lines = []
    for m in transcript:
        if m.role == "tool":
            lines.append(f"TOOL RESULT ({m.name}): {m.content}")
            continue
        for c in m.tool_calls:
            lines.append(f"ASSISTANT CALLS TOOL {c.name} {json.dumps(c.args, sort_keys=True, ensure_ascii=False)}")
        if m.content or not m.tool_calls:
            lines.append(f"{m.role.upper()}: {m.content}")
    return "\n".join(lines)


class UserSimulator(ABC):
    """Writes the next user message of a simulated conversation (see the module doc)."""

    name: ClassVar[str] = "simulator"
    bounds_calls: ClassVar[bool] = False  # True: every call is bounded by the HTTP timeouts
    model: str | None = None  # the model it asks (None: none): its usage is priced as this model's

    @abstractmethod
    async def next_message(self, scenario: Scenario, transcript: Sequence[Message], *, repeat: int = 0) -> str | None:
        """The next user message, or None to end the conversation."""

    async def ask(
        self, scenario: Scenario, transcript: Sequence[Message], *, repeat: int = 0
    ) -> tuple[str | None, dict[str, Any] | None]:
        """The next user message and the usage of asking for it (:data:`goldenkit.schema.USAGE_COUNTS`;
        None: not a model, or nothing reported): what a run calls."""
        return await self.next_message(scenario, transcript, repeat=repeat), None

    @abstractmethod
    def version(self) -> dict[str, Any]:
        """``{"provider", "model", "prompt_sha256", "settings"}``: the run key's ``simulator_version``."""

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        return None

    async def aclose(self) -> None:
        return None


class CallableSimulator(UserSimulator):
    """``fn(scenario, transcript) -> str | None`` as the simulated user (``fn`` or ``"module:function"``)."""

    name = "callable"

    def __init__(self, fn: str | Callable[..., Any]) -> None:

        self.spec = fn if isinstance(fn, str) else f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', fn)}"
        self.fn = load_callable(fn) if isinstance(fn, str) else fn
        try:
            params = inspect.signature(self.fn).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self._takes_repeat = "repeat" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def version(self) -> dict[str, Any]:
        return {"provider": "callable", "model": None, "prompt_sha256": None, "settings": {"callable": self.spec}}

    async def next_message(self, scenario: Scenario, transcript: Sequence[Message], *, repeat: int = 0) -> str | None:
        try:
            out = (
                self.fn(scenario, list(transcript), repeat=repeat)
                if self._takes_repeat
                else self.fn(scenario, list(transcript))
            )
            if inspect.isawaitable(out):
                out = await out
        except ProviderError as exc:
            raise SimulatorError(str(exc), transient=exc.transient, status=exc.status) from exc
        except Exception as exc:  # the scripted user failed: data about this row (retried when it may pass)
            inner = exception_error(exc, f"callable {self.spec} raised")
            raise SimulatorError(str(inner), transient=inner.transient) from exc
        if out is not None and not isinstance(out, str):
            raise SimulatorError(
                f"callable {self.spec} returned {type(out).__name__}, expected str or None", transient=False
            )
        return out


class ChatSimulator(UserSimulator):
    """A chat model (``openai`` or ``ollama``) as the simulated user, asked with the pinned prompt."""

    bounds_calls = True

    def __init__(
        self,
        provider: str,
        *,
        model: str | None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        max_tokens: int | None = 256,
    ) -> None:
        if provider not in ("openai", "ollama"):
            raise ConfigError(f"--user-simulator {provider!r}: expected one of {', '.join(SIMULATOR_NAMES)}")
        if not model:
            raise ConfigError(f"--user-simulator {provider}: --user-model is required")
        self.name = provider  # type: ignore[misc]
        self.model = model
        self.options: dict[str, Any] = {"model": model, "temperature": temperature, "max_tokens": max_tokens}
        self.options["api_key_env"] = api_key_env
        self.options["base_url" if provider == "openai" else "host"] = base_url
        self.seed = seed
        self._timeout: float | None = None
        self._chats: dict[int | None, Any] = {}  # one client per seed: repeat r is asked with seed + r
        self._describe = self._build(None).settings()  # not kept: the run's timeout (configure) comes later

    def _build(self, seed: int | None) -> Any:

        opts = dict(self.options, seed=seed)
        if self._timeout is not None:
            opts["timeout"] = self._timeout
        return get_provider(self.name, **opts)

    def _chat(self, seed: int | None) -> Any:
        chat = self._chats.get(seed)
        if chat is None:
            chat = self._chats[seed] = self._build(seed)
        return chat

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        self._timeout = timeout

    def version(self) -> dict[str, Any]:
        keep = ("base_url", "host", "temperature", "max_tokens", "api_key_env")
        settings = {k: self._describe.get(k) for k in keep if k in self._describe}
        settings["seed"] = self.seed
        return {
            "provider": self.name,
            "model": self.options["model"],
            "prompt_sha256": PROMPT_SHA256,
            "settings": settings,
        }

    async def next_message(self, scenario: Scenario, transcript: Sequence[Message], *, repeat: int = 0) -> str | None:
        return (await self.ask(scenario, transcript, repeat=repeat))[0]

    async def ask(
        self, scenario: Scenario, transcript: Sequence[Message], *, repeat: int = 0
    ) -> tuple[str | None, dict[str, Any] | None]:
        messages = [
            Message("system", SIMULATOR_SYSTEM_PROMPT.format(plan=scenario.plan or "(no plan given)")),
            Message("user", SIMULATOR_USER_PROMPT.format(transcript=render_transcript(transcript))),
        ]
        chat = self._chat(None if self.seed is None else self.seed + repeat)
        try:
            reply = await chat.send(messages, [])
        except ProviderError as exc:
            raise SimulatorError(
                str(exc), transient=exc.transient, status=exc.status, url=exc.url, retry_after=exc.retry_after
            ) from exc
        text = (reply.text or "").strip()
        usage = usage_of(reply)
        if STOP_TOKEN in text:
            return None, usage
        if not text:
            raise SimulatorError(f"simulator {self.name} ({self.options['model']}) sent an empty message")
        return text, usage

    async def aclose(self) -> None:
        chats, self._chats = list(self._chats.values()), {}
        for chat in chats:
            await chat.aclose()


class AgentSession(Protocol):
    """One simulated conversation with the agent (one row x repeat).

    ``send(user, done)`` runs one agent turn answering ``user`` after the turns
    ``done``, and returns a Response of one turn. ``recorded_user(k)`` is the
    recorded user message of turn ``k`` (a replay),
    :data:`goldenkit.providers._fixtures.RECORDING_ENDS` when the recording ends
    before turn ``k``, or None when nothing is recorded.
    """

    async def send(self, user: str, done: Sequence[TurnOutput]) -> Response: ...

    def recorded_user(self, turn: int) -> str | None: ...

    async def aclose(self) -> None: ...


class HistorySession:
    """An agent conversation for any provider: each turn is one ``complete`` call on a case of
    one turn whose history is the case's own followed by the transcript so far (chat providers
    send it as messages; tool calls and their results included)."""

    def __init__(self, provider: Any, case: Case, repeat: int) -> None:
        self.provider, self.case, self.repeat = provider, case, repeat
        self._tools = case.turns[0].tool_responses if case.turns else ()

    async def send(self, user: str, done: Sequence[TurnOutput]) -> Response:
        turn_case = replace(
            self.case,
            turns=(Turn(user=user, tool_responses=self._tools),),
            history=(*self.case.history, *transcript_messages(done)),
        )
        resp: Response = await self.provider.complete(turn_case, repeat=self.repeat)
        return resp

    def recorded_user(self, turn: int) -> str | None:
        return None

    async def aclose(self) -> None:
        return None


def open_session(provider: Any, case: Case, repeat: int) -> AgentSession:
    """The provider's own conversation (``provider.open_conversation(case, repeat)``: fixtures
    replay, ADK sessions) when it has one, else a :class:`HistorySession`."""
    opener = getattr(provider, "open_conversation", None)
    if opener is not None:
        session: AgentSession = opener(case, repeat)
        return session
    return HistorySession(provider, case, repeat)


def get_simulator(
    name: str,
    *,
    callable_spec: str | Callable[..., Any] | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = None,
    seed: int | None = None,
) -> UserSimulator:
    """The simulator ``name`` (``callable``, ``openai`` or ``ollama``) built from the CLI's ``--user-*`` options."""
    if name == "callable":
        if callable_spec is None:
            raise ConfigError("--user-simulator callable: --user-callable MOD:FN is required")
        return CallableSimulator(callable_spec)
    if name in ("openai", "ollama"):
        return ChatSimulator(
            name, model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature, seed=seed
        )
    raise ConfigError(f"--user-simulator {name!r}: expected one of {', '.join(SIMULATOR_NAMES)}")


__all__ = [
    "PROMPT_SHA256",
    "SIMULATOR_NAMES",
    "SIMULATOR_SYSTEM_PROMPT",
    "SIMULATOR_USER_PROMPT",
    "STOP_TOKEN",
    "AgentSession",
    "CallableSimulator",
    "ChatSimulator",
    "HistorySession",
    "SimulatorError",
    "UserSimulator",
    "get_simulator",
    "open_session",
    "render_transcript",
    "transcript_messages",
]

publish(globals())
