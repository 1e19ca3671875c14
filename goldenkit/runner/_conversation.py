"""Simulated conversations: the runner drives a scenario case turn by turn.

For a case with a :class:`~goldenkit.records.Scenario`, one row x repeat is a
conversation (:class:`ConversationDriver`):

1. the first user turn is the scenario's starting prompt;
2. the agent answers it (one turn of an :class:`~goldenkit.providers._simulator.AgentSession`:
   the provider's own session, or the history-carrying default);
3. unless the conversation has had its last turn (the case's ``max_turns``, else
   the run's, default 5), the next user message comes from the recording (a
   replayed conversation: its recorded user turns, while the transcript matches)
   or else from the user simulator, which sees the plan and the whole transcript;
4. it ends when the simulator says stop (None), when its message contains the
   scenario's ``stop`` phrase, when a recording ends, or at ``max_turns``.

Every agent turn and every simulator call goes through the run's seam
(:class:`goldenkit.runner._calls.ModelCalls`: its limiter and budget, its deadline) and is
retried like any call (only ``transient`` errors, with backoff; a 429 asking too long
a wait is ``infrastructure``; a refused request, a context length or a content filter,
is never retried). What still fails ends the conversation as an ERROR of the row, of
the error's kind: the agent's error names its turn and how often that turn was tried;
a simulator failure has ``error_kind`` ``simulator``; a replay that departs from its
recording is ``infrastructure``. The ERROR keeps the transcript up to the failure (the
turns that completed, and the failing turn's tool calls so far) as its trajectory.
Each repeat is its own conversation (the simulator gets the repeat, so a seeded
model simulator uses ``seed + repeat``).

The Response holds every turn (:class:`~goldenkit.records.TurnOutput` with its
``user`` message), so the outcome's trajectory is the whole transcript;
``raw["conversation"]`` says why it ended.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from goldenkit._registry import publish
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers import RECORDING_ENDS, SimulatorError, UserSimulator, open_session, transcript_messages
from goldenkit.records import Case, Response, Scenario, TurnOutput
from goldenkit.runner._calls import CallResult, ModelCalls
from goldenkit.schema import SIMULATOR_ROLE, TOKEN_COUNTS, add_usage

DEFAULT_MAX_TURNS = 5
T = TypeVar("T")


def check_max_turns(value: Any) -> int:
    """Validate ``--max-turns`` (a positive integer)."""

    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_turns must be a positive integer, not {value!r}")
    return value


def scenario_rows(cases: dict[str, Case]) -> list[str]:
    """The ids of the rows whose case is a simulated conversation."""
    return [rid for rid, c in cases.items() if c.scenario is not None]


class ConversationDriver:
    """Drives the scenario cases of one run (see the module doc); ``simulator`` None: replay only."""

    def __init__(self, simulator: UserSimulator | None, max_turns: int = DEFAULT_MAX_TURNS) -> None:
        self.simulator = simulator
        self.max_turns = check_max_turns(max_turns)

    async def aclose(self) -> None:
        """Close the simulator (its HTTP clients)."""
        if self.simulator is not None:
            await self.simulator.aclose()

    def turns_for(self, scenario: Scenario) -> int:
        """The case's own limit wins over the run's."""
        return scenario.max_turns if scenario.max_turns is not None else self.max_turns

    async def run(self, run: Any, provider: Any, case: Case, repeat: int) -> CallResult:
        """One conversation: ``(response, error, attempts, latency ms)`` as :meth:`RunExecution.call` returns."""
        scenario = case.scenario
        if scenario is None:
            raise ProviderError(f"row {case.id} has no scenario", kind="infrastructure")
        t0 = time.perf_counter()
        calls = [0]  # attempts of this conversation (agent turns and simulator calls)
        session = open_session(provider, case, repeat)
        done: list[TurnOutput] = []
        spent: dict[str, Any] = {}  # the candidate's token counts, summed; "simulator": the simulator's usage
        model: str | None = None
        raw: dict[str, Any] = {}
        user: str | None = scenario.starting_prompt
        stopped = "max_turns"
        try:
            for k in range(self.turns_for(scenario)):
                if k > 0:
                    user, why = await self._next_user(
                        run, session, scenario, done, repeat=repeat, k=k, calls=calls, spent=spent
                    )
                    if user is None:
                        stopped = why
                        break
                resp = await self._retrying(
                    run, provider, _sender(session, str(user), list(done)), f"turn {k + 1}", calls
                )
                out = resp.turns[-1] if resp.turns else TurnOutput(text="")
                out.user = user
                done.append(out)
                for key in TOKEN_COUNTS:
                    spent[key] = _add(spent.get(key), getattr(resp, key))
                model = resp.model or model
                if isinstance(resp.raw, dict) and "final_state" in resp.raw:
                    raw["final_state"] = resp.raw["final_state"]  # the session's state after the last turn
        except ProviderError as err:
            failed = _with_transcript(err, done, user, spent)
            return None, failed, max(1, calls[0]), (time.perf_counter() - t0) * 1000.0
        finally:
            await session.aclose()
        raw["conversation"] = {"turns": len(done), "stopped": stopped}
        response = _spent(Response(turns=done, model=model, raw=raw), spent)
        return response, None, calls[0], (time.perf_counter() - t0) * 1000.0

    async def _next_user(
        self,
        run: Any,
        session: Any,
        scenario: Scenario,
        done: list[TurnOutput],
        *,
        repeat: int,
        k: int,
        calls: list[int],
        spent: dict[str, Any],
    ) -> tuple[str | None, str]:
        """The user message of turn ``k`` (0-based) and, when there is none, why the conversation stops."""
        recorded = session.recorded_user(k)
        if recorded == RECORDING_ENDS:
            return None, "recording"
        if recorded is not None:
            return recorded, ""
        if self.simulator is None:
            raise SimulatorError(f"turn {k + 1}: no user simulator (pass --user-simulator)")
        sim = self.simulator
        transcript = transcript_messages(done)
        before, usage = calls[0], None
        try:
            text, usage = await self._retrying(
                run,
                sim,
                lambda: sim.ask(scenario, transcript, repeat=repeat),
                f"simulator before turn {k + 1}",
                calls,
                spent=_usage,  # its tokens and money count against the run's budget
            )
        finally:  # the simulator's, apart: its calls are its attempts (retries, a failure included)
            spent[SIMULATOR_ROLE] = add_usage(spent.get(SIMULATOR_ROLE), {**(usage or {}), "calls": calls[0] - before})
        if text is None:
            return None, "simulator"
        if scenario.stop is not None and scenario.stop in text:
            return None, "stop"
        return text, ""

    async def _retrying(
        self,
        run: Any,
        target: Any,
        make: Callable[[], Awaitable[T]],
        where: str,
        calls: list[int],
        *,
        spent: Callable[[Any], Any] | None = None,
    ) -> T:
        """``make()`` through the run's seam (its limiter, deadline and retries, ``spent`` charged to its budget:
        :meth:`goldenkit.runner._calls.ModelCalls.retrying`); what still fails is raised, naming ``where``."""
        seam: ModelCalls = run.seam
        value, err, tries, _ = await seam.retrying(target, make, seam.deadline(target), spent=spent)
        calls[0] += tries
        if err is None:
            return value  # type: ignore[return-value]  # None only with an error
        err.attempts = tries
        # a simulator's error stays one (its kind, ``simulator``, is the outcome's error_kind)
        raise _named(err, where, SimulatorError if isinstance(target, UserSimulator) else type(err))


def _usage(asked: tuple[str | None, dict[str, Any] | None]) -> dict[str, Any] | None:
    """What one simulator call spent (:meth:`UserSimulator.ask`'s usage; None: it asked no model)."""
    return asked[1]


def _sender(session: Any, user: str, done: list[TurnOutput]) -> Callable[[], Awaitable[Response]]:
    """A fresh call of one agent turn (each retry makes a new one)."""
    return lambda: session.send(user, done)


def _named(err: ProviderError, where: str, cls: type[ProviderError]) -> ProviderError:
    """``err`` (its kind, status, attempts, partial transcript) with ``where`` in front of its message;
    of class ``cls`` (a simulator's error stays a :class:`SimulatorError`)."""
    out = err.with_message(f"{where}: {err}")
    if not isinstance(out, cls):
        wrapped = cls(str(out), status=err.status, url=err.url, retry_after=err.retry_after)
        wrapped.attempts, wrapped.partial = err.attempts, err.partial
        return wrapped
    return out


def _with_transcript(
    err: ProviderError, done: list[TurnOutput], user: str | None, spent: dict[str, Any]
) -> ProviderError:
    """``err`` carrying the conversation's transcript up to it: the turns ``done``, then what the
    failing turn (answering ``user``) produced before it failed (its tool calls and results); and what
    the conversation ``spent`` before it failed (the outcome's token counts and usage: they were paid)."""
    failing = list(err.partial.turns) if isinstance(err.partial, Response) else []
    if not done and not failing and not spent:
        return err
    for turn in failing:
        turn.user = user if turn.user is None else turn.user
    out = err.with_message(str(err))
    out.partial = _spent(Response(turns=[*done, *failing]), spent)
    return out


def _spent(response: Response, spent: dict[str, Any]) -> Response:
    """``response`` with the conversation's token counts (the candidate's turns) and the simulator's usage."""
    for key in TOKEN_COUNTS:
        setattr(response, key, spent.get(key))
    response.usage = {SIMULATOR_ROLE: spent[SIMULATOR_ROLE]} if spent.get(SIMULATOR_ROLE) else None
    return response


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else (a if b is None else a + b)


__all__ = ["DEFAULT_MAX_TURNS", "ConversationDriver", "check_max_turns", "scenario_rows"]

publish(globals())
