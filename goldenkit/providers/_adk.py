"""The ``adk`` provider: a Google ADK agent as the system under test.

``--provider adk --agent package.module:root_agent`` imports the agent once and
runs every row x repeat on a fresh ``InMemoryRunner`` with its own session, so
no session, memory or artifact state leaks between rows and the result of a row
does not depend on the order the runner schedules rows in.

The session comes from the case's ``session`` (ADK ``session_input``):
``app_name``, ``user_id`` and a deep copy of ``state``; missing values default
to :data:`DEFAULT_APP_NAME` / :data:`DEFAULT_USER_ID` / ``{}``. The case's
prior ``history`` (if any) is appended to the session as events, then the user
turns are sent in order. Per turn the provider keeps what ADK's own evaluator
reads from the events of that invocation:

* ``text``: the final response, chosen as ADK's ``EvaluationGenerator`` does
  (the last event that ``is_final_response()`` and has content; a later final
  event without text does not replace one with text), its text parts joined
  with ``"\\n"``;
* ``tool_calls``: every function call of the invocation, in order (name, args);
* ``tool_responses``: every function response, ``{"name", "args", "response"}``
  with ``args`` taken from the call with the same id;
* ``intermediate``: ``(author, text)`` of every other event with text
  (a model's text beside a function call, a sub-agent's answer before a transfer).

With ``history = "actual"`` the session's state after the last turn is
``Response.raw["final_state"]`` (for ADK ``final_session_state``; the
``"expected"`` mode runs fresh sessions and reports none).

Token counts are the sums of ``usage_metadata.prompt_token_count`` and
``candidates_token_count`` over the model responses; None when no event
reports usage.

Errors: a model error (an event with ``error_code``, or an exception from the model
such as ``google.genai.errors.APIError``) and a tool exception become a
:class:`~goldenkit.errors.ProviderError` of the kind :mod:`goldenkit.providers._adk_events`
gives it: ``transient`` (408, 429, 5xx and their gRPC names, timeouts, connection errors;
retried), ``infrastructure`` (401/403, other statuses, network or OS errors inside the
agent), ``refused`` (a safety block, a context length), ``agent`` (the agent's own code).

A turn's images (:class:`goldenkit.records.ImagePart`) go with its text in the same
message: bytes as an ``inline_data`` Part, a URL as a ``file_data`` Part.

The case's system instruction is not applied (the agent has its own
instruction); its tool declarations and recorded tool responses are not used
either: the agent calls its own tools.

``history`` (a provider setting, written to run.json): ``"actual"`` (default)
runs the turns one after another in one session, so each turn sees the
agent's own earlier answers; ``"expected"`` runs each turn in a fresh session
whose history is the dataset's earlier user turns and expected answers (the
agent's actual answer stands in for a turn without an expected one).

google-adk is an optional dependency (``pip install goldenkit[adk]``); it is
imported only when an ``adk`` provider is built.

A simulated conversation (a scenario row run with ``--user-simulator``) is one
:class:`AdkConversation`: a fresh runner and session for the row x repeat, kept open
across its turns, so the agent sees its own state; each turn's state is reported
(``Response.raw["final_state"]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from goldenkit._artifacts import module_source_sha256
from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._adk_events import TurnCollector, as_content, error_from_exception, jsonable
from goldenkit.providers._base import Provider, Response, TurnOutput
from goldenkit.providers._conversation import HISTORY_MODES, expected_exchanges
from goldenkit.records import Case, ImagePart, Message
from goldenkit.schema import TOKEN_COUNTS

DEFAULT_APP_NAME = "goldenkit"
DEFAULT_USER_ID = "goldenkit_user"


def _require_adk() -> Any:
    """Import google.adk or explain how to install it."""
    try:
        import google.adk  # noqa: F401
        from google.adk import runners
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ConfigError(f"the adk provider needs google-adk: pip install 'goldenkit[adk]' ({exc})") from None
    return runners


def load_agent(spec: str) -> Any:
    """Resolve ``spec`` to an ADK agent, ``App`` or agent factory.

    ``spec`` is ``module.path:attribute`` (``attribute`` may be dotted), a
    ``path/to/file.py:attribute``, or a bare ``module.path``, which looks for
    ``root_agent`` in the module and then in its ``agent`` submodule (the ADK
    project layout). The current directory is importable, as with ``python -m``.
    """
    if not spec or not isinstance(spec, str):
        raise ConfigError("the adk provider needs --agent module.path:root_agent")
    module_name, _, attr = spec.partition(":")
    if str(Path.cwd()) not in sys.path and "" not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise ConfigError(f"--agent {spec}: file {module_name} not found")
            mod_spec = importlib.util.spec_from_file_location(f"goldenkit_agent_{path.stem}", path)
            if mod_spec is None or mod_spec.loader is None:
                raise ConfigError(f"--agent {spec}: cannot import {module_name}")
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[mod_spec.name] = module
            mod_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"--agent {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    if attr:
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise ConfigError(f"--agent {spec}: {module_name} has no attribute {attr!r}")
            obj = getattr(obj, part)
        return obj
    if hasattr(module, "root_agent"):
        return module.root_agent
    sub = getattr(module, "agent", None)
    if sub is None:
        try:
            sub = importlib.import_module(f"{module_name}.agent")
        except ImportError:
            sub = None
    if sub is not None and hasattr(sub, "root_agent"):
        return sub.root_agent
    raise ConfigError(f"--agent {spec}: no root_agent in {module_name} (name it: {module_name}:ATTRIBUTE)")


class AdkProvider(Provider):
    """Runs an ADK agent in-process, one fresh InMemoryRunner and session per row x repeat.

    ``agent`` is a ``module:attribute`` spec (see :func:`load_agent`) or the
    object itself: an ADK ``BaseAgent``, an ``App``, or a zero-argument
    callable (sync or async) returning either, which is then called for every
    row x repeat so that even module-level tool state cannot leak between rows.
    """

    name = "adk"
    mode = "live"

    def __init__(
        self,
        agent: Any = None,
        *,
        history: str = "actual",
        app_name: str | None = None,
        user_id: str | None = None,
    ) -> None:
        self._runners = _require_adk()
        if agent is None:
            raise ConfigError("the adk provider needs --agent module.path:root_agent")
        if history not in HISTORY_MODES:
            raise ConfigError(f"adk provider: history must be one of {', '.join(HISTORY_MODES)}, not {history!r}")
        self._spec = (
            agent
            if isinstance(agent, str)
            else f"{type(agent).__module__}:{getattr(agent, 'name', type(agent).__name__)}"
        )
        target = load_agent(agent) if isinstance(agent, str) else agent
        self._target = target
        self._history = history
        self._app_name = app_name
        self._user_id = user_id
        self._timeout: float | None = None
        from google.adk.agents.base_agent import BaseAgent
        from google.adk.apps.app import App

        self._is_factory = not isinstance(target, BaseAgent | App) and callable(target)
        if not self._is_factory and not isinstance(target, BaseAgent | App):
            raise ConfigError(f"--agent {self._spec}: not an ADK agent, App or agent factory ({type(target).__name__})")
        self._settings = self._describe(None if self._is_factory else target)

    # -- identity -----------------------------------------------------------------------------------

    def _describe(self, target: Any) -> dict[str, Any]:
        settings: dict[str, Any] = {"agent": self._spec, "history": self._history}
        if self._app_name:
            settings["app_name"] = self._app_name
        if self._user_id:
            settings["user_id"] = self._user_id
        if target is None:
            settings["factory"] = True
            return settings
        root = getattr(target, "root_agent", None) or target
        settings["agent_name"] = getattr(root, "name", None)
        if (source := module_source_sha256(self._spec)) is not None:  # the agent's identity follows its code
            settings["source_sha256"] = source
        model = getattr(root, "model", None)
        if model is not None and not isinstance(model, str):
            model = getattr(model, "model", None) or type(model).__name__
        if model:
            settings["model"] = model
        instructions = []
        for ag in _walk_agents(root):
            ins = getattr(ag, "instruction", None)
            if isinstance(ins, str):
                instructions.append(f"{ag.name}\n{ins}")
        if instructions:
            settings["instruction_sha256"] = hashlib.sha256("\n\n".join(instructions).encode()).hexdigest()
        return settings

    def image_refusal(self, image: ImagePart) -> str | None:
        return None  # inline_data / file_data Parts: the agent's model decides what it can read

    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        """``timeout``: the longest wait for the agent's next event (a model answer, a tool result)
        before the row fails as a transient error; None waits as long as the agent takes."""
        self._timeout = timeout

    # -- running --------------------------------------------------------------------------------------

    async def _resolve_target(self) -> Any:
        if not self._is_factory:
            return self._target
        obj = self._target()
        if inspect.isawaitable(obj):
            obj = await obj
        if isinstance(obj, tuple):  # ADK's get_agent_async convention: (agent, exit_stack)
            obj = obj[0]
        return obj

    def _new_runner(self, target: Any, app_name: str) -> Any:
        from google.adk.apps.app import App

        if isinstance(target, App):
            return self._runners.InMemoryRunner(app=target, app_name=app_name)
        return self._runners.InMemoryRunner(agent=target, app_name=app_name)

    def _session_input(self, case: Case) -> tuple[str, str, dict[str, Any], str | None]:
        s = case.session or {}
        app_name = self._app_name or s.get("app_name") or DEFAULT_APP_NAME
        user_id = self._user_id or s.get("user_id") or DEFAULT_USER_ID
        state = copy.deepcopy(s.get("state") or {})
        session_id = s.get("session_id")
        return str(app_name), str(user_id), state, session_id

    def model_of(self, target: Any) -> str | None:
        """The model the agent runs (a factory's agent is described when it is built)."""
        model = (self._describe(target) if self._is_factory else self._settings).get("model")
        return None if model is None else str(model)

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        if not case.turns:
            raise ProviderError(f"case {case.id}: no user turn to send", kind="infrastructure")
        target = await self._resolve_target()
        model = self.model_of(target)
        if self._history == "expected" and len(case.turns) > 1:
            outputs: list[TurnOutput] = []
            each: list[TurnCollector] = []
            for i in range(len(case.turns)):
                prior = [*case.history, *expected_exchanges(case, outputs)]
                collected = await self._run(case, target, [case.turns[i].user], prior, [case.turns[i].images])
                outputs.append(collected[0].output())
                each.append(collected[0])
            ids = [c.invocation_id for c in each]
            return _counted(
                Response(turns=outputs, model=model, raw={"invocation_ids": ids, "history": "expected"}), each
            )
        collected = await self._run(
            case, target, [t.user for t in case.turns], list(case.history), [t.images for t in case.turns]
        )
        return _counted(
            Response(
                turns=[c.output() for c in collected],
                model=model,
                raw={
                    "invocation_ids": [c.invocation_id for c in collected],
                    "history": "actual",
                    "final_state": collected[-1].final_state if collected else None,
                },
            ),
            collected,
        )

    async def _run(
        self,
        case: Case,
        target: Any,
        users: Sequence[str],
        prior: Sequence[Message],
        images: Sequence[Sequence[ImagePart]] = (),
    ) -> list[TurnCollector]:
        app_name, user_id, _, _ = self._session_input(case)
        runner = self._new_runner(target, app_name)
        collected: list[TurnCollector] = []
        try:
            session = await self._open_session(runner, case, prior)
            for n, text in enumerate(users):
                turn_images = images[n] if n < len(images) else ()
                collected.append(await self._turn(runner, user_id, session.id, text, n + 1, turn_images))
            done = await runner.session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id)
            if collected and done is not None:
                collected[-1].final_state = jsonable(dict(done.state))
        finally:
            await _close_runner(runner)
        return collected

    async def _open_session(self, runner: Any, case: Case, prior: Sequence[Message]) -> Any:
        """A new session from the case's session input, with ``prior`` appended as events."""
        from google.adk.events.event import Event

        app_name, user_id, state, session_id = self._session_input(case)
        session = await runner.session_service.create_session(
            app_name=app_name, user_id=user_id, state=state, session_id=session_id
        )
        agent_name = getattr(getattr(runner, "agent", None), "name", None) or "agent"
        for n, m in enumerate(prior):
            if m.role not in ("user", "assistant") or not (m.content or m.images):
                continue
            role, author = ("user", "user") if m.role == "user" else ("model", agent_name)
            content = as_content(role, m.content, m.images)
            await runner.session_service.append_event(
                session, Event(author=author, invocation_id=f"history-{n}", content=content)
            )
        return session

    async def _turn(
        self, runner: Any, user_id: str, session_id: str, text: str, n: int, images: Sequence[ImagePart] = ()
    ) -> TurnCollector:
        """Run one user turn (the ``n``-th, 1-based) in the session, with its images; its events collected."""
        col = TurnCollector()
        message = as_content("user", text, images)
        events = runner.run_async(user_id=user_id, session_id=session_id, new_message=message)
        try:
            async with contextlib.aclosing(events):
                while col.error is None:
                    try:
                        event = await asyncio.wait_for(anext(events), self._timeout)
                    except StopAsyncIteration:
                        break
                    col.add(event)
        except ProviderError:
            raise
        except TimeoutError:
            raise ProviderError(
                f"adk agent made no progress for {self._timeout:g} s (turn {n})", kind="transient"
            ) from None
        except Exception as exc:  # the agent's model or one of its tools raised
            where = "tool" if col.pending_calls else ("model" if getattr(exc, "code", None) is not None else "agent")
            raise error_from_exception(exc, where) from None
        if col.error is not None:
            raise col.error
        return col

    def open_conversation(self, case: Case, repeat: int) -> AdkConversation:
        """A simulated conversation: one fresh runner and session for the whole row x repeat."""
        return AdkConversation(self, case)


class AdkConversation:
    """One ADK session kept open across the turns of a simulated conversation.

    A turn whose attempt failed after the session recorded its message (ADK appends the user's
    message before the agent runs) is not sent again into that session: the first turn starts
    over on a new runner and session, a later turn is an ``infrastructure`` error (a retry would give the
    agent the message twice). A failed attempt the session did not record is retried in it.
    """

    def __init__(self, provider: AdkProvider, case: Case) -> None:
        self.provider, self.case = provider, case
        self._runner: Any = None
        self._session: Any = None
        self._model: str | None = None
        self._events = 0  # the session's events after the last turn that completed
        self._failed: str | None = None  # why the last attempt failed, until the next one

    async def send(self, user: str, done: Sequence[TurnOutput]) -> Response:
        p = self.provider
        if self._failed is not None:
            await self._before_retry(len(done) + 1)
        if self._runner is None:  # set up once both the runner and its session exist (a retry starts over)
            target = await p._resolve_target()
            self._model = p.model_of(target)
            runner = p._new_runner(target, p._session_input(self.case)[0])
            try:
                self._session = await p._open_session(runner, self.case, list(self.case.history))
            except BaseException:
                await _close_runner(runner)
                raise
            self._runner, self._events = runner, len(self._session.events)
        try:
            col = await p._turn(self._runner, p._session_input(self.case)[1], self._session.id, user, len(done) + 1)
        except BaseException as exc:  # a cancel (the run's deadline) too
            self._failed = one_line(str(exc), 200) or type(exc).__name__
            raise
        got = await self._stored()
        self._events = len(got.events) if got is not None else self._events
        state = jsonable(dict(got.state)) if got is not None else None
        return _counted(Response(turns=[col.output()], model=self._model, raw={"final_state": state}), [col])

    async def _stored(self) -> Any:
        app_name, user_id, _, _ = self.provider._session_input(self.case)
        return await self._runner.session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=self._session.id
        )

    async def _before_retry(self, turn: int) -> None:
        failed, self._failed = self._failed, None
        got = await self._stored() if self._runner is not None else None
        if got is None or len(got.events) == self._events:
            return  # nothing of the failed attempt was recorded: the same session takes the retry
        if turn == 1:
            await self.aclose()  # nothing to keep: a new runner and session
            return
        raise ProviderError(
            f"not retried after {failed}: the agent's session already holds the message of turn {turn}, "
            "and a retry would send it twice",
            kind="infrastructure",  # a transient failure that cannot be retried: nobody's answer
        )

    def recorded_user(self, turn: int) -> str | None:
        return None

    async def aclose(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await _close_runner(runner)


async def _close_runner(runner: Any) -> None:
    try:
        await runner.close()
    except Exception:  # closing never turns an answer into an error
        pass


def _walk_agents(root: Any) -> list[Any]:
    seen: list[Any] = []
    stack = [root]
    while stack:
        ag = stack.pop()
        if ag is None or any(ag is s for s in seen):
            continue
        seen.append(ag)
        stack.extend(reversed(list(getattr(ag, "sub_agents", None) or [])))
    return seen


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


def _sum(values: Sequence[int | None]) -> int | None:
    return functools.reduce(_add, values, None)  # None when every value is None


def _counted(response: Response, collected: Sequence[TurnCollector]) -> Response:
    """``response`` with the token counts of its invocations summed (None when none reported a count)."""
    for key in TOKEN_COUNTS:
        setattr(response, key, _sum([getattr(c, key) for c in collected]))
    return response


def adk_provider(
    agent: Any = None,
    history: str | None = None,
    app_name: str | None = None,
    user_id: str | None = None,
    timeout: float | None = None,
) -> AdkProvider:
    """``get_provider("adk", agent=..., history=..., app_name=..., user_id=...)``; other run options
    (model, base URL, tool responses) do not apply: the agent brings its own model and tools."""
    provider = AdkProvider(agent, history=history or "actual", app_name=app_name, user_id=user_id)
    if timeout is not None:
        provider.configure(timeout=timeout)
    return provider


__all__ = ["DEFAULT_APP_NAME", "DEFAULT_USER_ID", "HISTORY_MODES", "AdkProvider", "adk_provider", "load_agent"]

publish(globals())
