"""The adk provider: a real ADK agent (scripted model, real tools) run in-process.

Checks per-turn capture (final text, tool calls and responses, intermediate
texts, token usage), the session built from the case (app_name, user_id, state)
and its isolation between rows and repeats whatever the scheduling order, the
``history`` setting, and how model and tool errors become ProviderErrors.
"""

from __future__ import annotations

import asyncio
import random
import sys
from typing import Any

import pytest

pytest.importorskip("google.adk")

from adk_scripted.scripted_llm import OUTPUT_TOKENS, ScriptedLlm  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.tools.tool_context import ToolContext  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402

from goldenkit.errors import ConfigError, ProviderError  # noqa: E402
from goldenkit.providers import get_provider, provider_names  # noqa: E402
from goldenkit.providers._adk import DEFAULT_APP_NAME, DEFAULT_USER_ID, AdkProvider, load_agent  # noqa: E402
from goldenkit.records import Case, Message, Turn  # noqa: E402


def bump(tool_context: ToolContext) -> dict[str, Any]:
    """Increment the session's counter and report where it ran."""
    tool_context.state["count"] = tool_context.state.get("count", 0) + 1
    session = tool_context.session
    return {
        "count": tool_context.state["count"],
        "app": session.app_name,
        "user": session.user_id,
        "seed": tool_context.state.get("seed"),
    }


def explode(x: int) -> int:
    """A tool that fails."""
    raise ValueError(f"cannot handle {x}")


SCRIPT = {
    "count": [{"text": "counting", "calls": [("bump", {})]}, {"text": "counted"}],
    "hello": [{"text": "hi there"}],
    "quota": [{"error": ("429", "Resource exhausted, retry later")}],
    "overloaded": [
        {
            "raise": genai_errors.ServerError(
                503, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
            )
        }
    ],
    "bad request": [
        {
            "raise": genai_errors.ClientError(
                400, {"error": {"code": 400, "message": "bad schema", "status": "INVALID_ARGUMENT"}}
            )
        }
    ],
    "blocked": [{"error": ("SAFETY", "blocked by safety filters")}],
    "use broken tool": [{"calls": [("explode", {"x": 3})]}, {"text": "never"}],
    "slow": [{"sleep": 5, "text": "too late"}],
    "two calls": [{"calls": [("bump", {}), ("bump", {})]}, {"text": "twice"}],
}


class EchoHistoryLlm(ScriptedLlm):
    """Answers with the texts of the model turns it was sent (to see the history)."""

    async def generate_content_async(self, llm_request, stream=False):  # type: ignore[override]
        from google.adk.models.llm_response import LlmResponse
        from google.genai import types

        said = [p.text for c in llm_request.contents if c.role == "model" for p in c.parts or [] if p.text]
        users = [p.text for c in llm_request.contents if c.role == "user" for p in c.parts or [] if p.text]
        yield LlmResponse(
            content=types.Content(
                role="model", parts=[types.Part(text=f"<model: {' | '.join(said)}; user: {' | '.join(users)}>")]
            )
        )


def make_agent() -> LlmAgent:
    return LlmAgent(
        name="unit_agent",
        model=ScriptedLlm(model="unit-llm", script=SCRIPT),
        instruction="Unit test agent.",
        tools=[bump, explode],
    )


root_agent = make_agent()


def run(provider: AdkProvider, case: Case, repeat: int = 0):
    return asyncio.run(provider.complete(case, repeat=repeat))


def case(*users: str, session: dict[str, Any] | None = None, **kw: Any) -> Case:
    return Case(id="c", shape="adk", turns=tuple(Turn(u) for u in users), session=session, **kw)


def test_registered_and_built_by_name():
    assert "adk" in provider_names()
    p = get_provider("adk", agent=root_agent)
    assert isinstance(p, AdkProvider)
    s = p.settings()
    assert s["agent_name"] == "unit_agent" and s["model"] == "unit-llm" and s["history"] == "actual"
    assert len(s["instruction_sha256"]) == 64
    assert p.mode == "live"


def test_captures_each_turn_text_tools_responses_intermediate_and_tokens():
    p = AdkProvider(root_agent)
    r = run(p, case("hello", "count", "hello"))
    assert [t.text for t in r.turns] == ["hi there", "counted", "hi there"]
    assert r.text == "hi there"
    first, second, third = r.turns
    assert first.tool_calls == [] and first.tool_responses == [] and first.intermediate == []
    assert [(c.name, c.args) for c in second.tool_calls] == [("bump", {})]
    assert second.tool_responses == [
        {
            "name": "bump",
            "args": {},
            "response": {"count": 1, "app": DEFAULT_APP_NAME, "user": DEFAULT_USER_ID, "seed": None},
        }
    ]
    assert second.intermediate == [("unit_agent", "counting")]
    assert third.tool_calls == []
    # 4 model calls (hello, count x2, hello), each reporting OUTPUT_TOKENS output tokens; prompt tokens are the
    # number of contents sent: 1, then 3 and 5 (user, model call, tool response), then 7.
    assert r.tokens_out == 4 * OUTPUT_TOKENS
    assert r.tokens_in == 1 + 3 + 5 + 7
    assert r.model == "unit-llm"
    assert r.trajectory()[1]["tool_calls"] == [{"name": "bump", "args": {}}]


def test_session_from_case_and_no_state_leaks_between_rows_whatever_the_order():
    p = AdkProvider(root_agent)
    session = {"app_name": "shop", "user_id": "u-7", "state": {"seed": "s1", "count": 10}}
    cases = [case("count", "count", session=session) for _ in range(12)] + [case("count") for _ in range(12)]
    order = list(range(len(cases)))
    random.Random(5).shuffle(order)

    async def all_rows():
        return await asyncio.gather(*[p.complete(cases[i], repeat=i % 3) for i in order])

    results = dict(zip(order, asyncio.run(all_rows()), strict=True))
    for i in range(12):
        responses = [t.tool_responses[0]["response"] for t in results[i].turns]
        assert responses == [
            {"count": 11, "app": "shop", "user": "u-7", "seed": "s1"},
            {"count": 12, "app": "shop", "user": "u-7", "seed": "s1"},
        ]
    for i in range(12, 24):
        assert results[i].turns[0].tool_responses[0]["response"]["count"] == 1
    assert session["state"] == {"seed": "s1", "count": 10}  # the case itself is never mutated


def test_prior_history_is_seeded_into_the_session():
    agent = LlmAgent(name="echo", model=EchoHistoryLlm(model="echo"), instruction="e")
    r = run(AdkProvider(agent), case("now", history=(Message("user", "before"), Message("assistant", "earlier"))))
    assert r.text == "<model: earlier; user: before | now>"


def test_history_expected_uses_the_dataset_answers():
    agent = LlmAgent(name="echo", model=EchoHistoryLlm(model="echo"), instruction="e")
    c = Case(id="h", shape="adk", turns=(Turn("one", expected_response="GOLD ONE"), Turn("two"), Turn("three")))
    actual = run(AdkProvider(agent), c)
    assert actual.turns[1].text == "<model: <model: ; user: one>; user: one | two>"
    expected = run(AdkProvider(agent, history="expected"), c)
    assert expected.turns[0].text == "<model: ; user: one>"
    assert expected.turns[1].text == "<model: GOLD ONE; user: one | two>"
    # turn two has no expected answer: the agent's own answer to it stands in
    assert expected.turns[2].text == "<model: GOLD ONE | <model: GOLD ONE; user: one | two>; user: one | two | three>"
    assert AdkProvider(agent, history="expected").settings()["history"] == "expected"
    with pytest.raises(ConfigError, match="history must be one of"):
        AdkProvider(agent, history="gold")


@pytest.mark.parametrize(
    ("user", "transient", "status", "fragment"),
    [
        ("quota", True, 429, "adk model error: 429: Resource exhausted"),
        ("overloaded", True, 503, "UNAVAILABLE"),
        ("bad request", False, 400, "INVALID_ARGUMENT"),
        ("blocked", False, None, "SAFETY: blocked by safety filters"),
        ("use broken tool", False, None, "adk tool error: ValueError: cannot handle 3"),
    ],
)
def test_model_and_tool_errors_become_provider_errors(user, transient, status, fragment):
    with pytest.raises(ProviderError) as info:
        run(AdkProvider(root_agent), case("hello", user))
    err = info.value
    assert err.transient is transient
    assert err.status == status
    assert fragment in str(err)
    assert "\n" not in str(err)


def test_factory_builds_a_fresh_agent_per_row():
    built: list[LlmAgent] = []

    async def factory():
        built.append(make_agent())
        return built[-1]

    p = AdkProvider(factory)
    assert p.settings()["factory"] is True
    run(p, case("hello"))
    run(p, case("hello"), repeat=1)
    assert len(built) == 2 and built[0] is not built[1]


def test_factory_agent_reports_its_model_in_both_history_modes():
    def factory():
        return LlmAgent(name="echo", model=EchoHistoryLlm(model="echo-llm"), instruction="e")

    two_turns = case("one", "two")
    assert run(AdkProvider(factory), two_turns).model == "echo-llm"
    assert run(AdkProvider(factory, history="expected"), two_turns).model == "echo-llm"


def test_agent_spec_forms(tmp_path, monkeypatch):
    assert load_agent(f"{__name__}:root_agent") is root_agent
    assert load_agent("adk_scripted").name == "scripted_root"  # package with an agent submodule
    f = tmp_path / "my_agent.py"
    f.write_text(f"from {__name__} import make_agent\nthing = make_agent()\n", encoding="utf-8")
    assert load_agent(f"{f}:thing").name == "unit_agent"
    with pytest.raises(ConfigError, match="no attribute 'nope'"):
        load_agent(f"{__name__}:nope")
    with pytest.raises(ConfigError, match="cannot import"):
        load_agent("no_such_module_xyz:root_agent")
    with pytest.raises(ConfigError, match="needs --agent"):
        get_provider("adk")
    with pytest.raises(ConfigError, match="not an ADK agent"):
        AdkProvider(f"{__name__}:SCRIPT")


def test_missing_google_adk_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.adk", None)
    with pytest.raises(ConfigError, match=r"pip install 'goldenkit\[adk\]'"):
        AdkProvider(root_agent)


def test_case_without_turns_is_a_permanent_error():
    with pytest.raises(ProviderError, match="no user turn") as info:
        run(AdkProvider(root_agent), Case(id="empty", shape="adk", turns=()))
    assert info.value.transient is False


def test_an_agent_that_stalls_past_the_timeout_is_a_transient_error():
    p = get_provider("adk", agent=root_agent, timeout=0.3)
    with pytest.raises(ProviderError, match=r"no progress for 0.3 s \(turn 2\)") as info:
        run(p, case("hello", "slow"))
    assert info.value.transient is True


def test_options_that_do_not_apply_to_an_agent_are_refused():
    with pytest.raises(TypeError):
        get_provider("adk", agent=root_agent, model="gpt-x")


def test_an_adk_app_runs_with_its_plugins():
    from google.adk.apps.app import App
    from google.adk.plugins.base_plugin import BasePlugin

    seen: list[str] = []

    class Spy(BasePlugin):
        async def before_model_callback(self, *, callback_context, llm_request):
            seen.append(callback_context.agent_name)
            return None

    app = App(name="shop_app", root_agent=make_agent(), plugins=[Spy(name="spy")])
    p = AdkProvider(app)
    assert p.settings()["agent_name"] == "unit_agent"
    r = run(p, case("hello", session={"app_name": "shop_app"}))
    assert r.text == "hi there"
    assert seen == ["unit_agent"]


def test_tool_results_that_are_not_json_are_kept_as_text():
    from datetime import date

    def when() -> dict:
        """A date object in the result."""
        return {"day": date(2026, 1, 2)}

    agent = LlmAgent(
        name="dates",
        model=ScriptedLlm(model="d", script={"when": [{"calls": [("when", {})]}, {"text": "soon"}]}),
        tools=[when],
    )
    r = run(AdkProvider(agent), case("when"))
    assert r.turns[0].tool_responses == [{"name": "when", "args": {}, "response": {"day": "2026-01-02"}}]


class FailsOnceLlm(EchoHistoryLlm):
    """Echoes the history, but the first request whose last message is ``flaky`` fails (503, transient)."""

    failed: bool = False

    async def generate_content_async(self, llm_request, stream=False):  # type: ignore[override]
        last = [p.text for p in (llm_request.contents[-1].parts or []) if p.text]
        if last == ["flaky"] and not self.failed:
            self.failed = True
            raise genai_errors.ServerError(503, {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def test_a_conversation_turn_that_failed_after_the_session_recorded_it_is_never_sent_twice():
    """ADK records the user's message before its model is called: a retry on that session would repeat it."""

    async def conversation(first: str) -> tuple[list[str], ProviderError, str]:
        agent = LlmAgent(name="echo", model=FailsOnceLlm(model="echo"), instruction="e")
        conv = AdkProvider(agent).open_conversation(case(first), 0)
        texts, done = [], []
        try:
            for user in (first, "flaky"):
                for _attempt in range(2):  # the runner's retry of a transient error
                    try:
                        out = (await conv.send(user, done)).turns[0]
                        break
                    except ProviderError as exc:
                        if not exc.transient:
                            return texts, exc, user
                        err = exc
                done.append(out)
                texts.append(out.text)
        finally:
            await conv.aclose()
        return texts, err, ""

    # the first turn fails once: the retry starts over on a new session, which sees the message once
    texts, err, _ = asyncio.run(conversation("flaky"))
    assert err.transient and "503" in str(err)
    assert texts[0] == "<model: ; user: flaky>"
    # a later turn fails once: its retry is refused (a permanent error naming the first failure)
    texts, err, at = asyncio.run(conversation("hello"))
    assert texts == ["<model: ; user: hello>"] and at == "flaky"
    assert str(err).startswith("not retried after") and "UNAVAILABLE" in str(err) and "of turn 2" in str(err)
    assert "would send it twice" in str(err)


def test_a_run_records_a_conversation_turn_it_could_not_retry_as_an_error(tmp_path):
    """Through the runner: the transient failure of turn 2 is not retried into the session; the row is ERROR."""
    import json

    from goldenkit.dataset import read_dataset
    from goldenkit.providers._simulator import CallableSimulator
    from goldenkit.results import read_run
    from goldenkit.runner import run_eval

    scenario = {"scenario": {"starting_prompt": "hello", "plan": "p"}, "expect": {"must_contain": ["user"]}}
    (tmp_path / "ds.jsonl").write_text(json.dumps({"id": "a", "slice": "s", "split": "dev", "case": scenario}) + "\n")
    agent = LlmAgent(name="echo", model=FailsOnceLlm(model="echo"), instruction="e")
    users = iter(["flaky"])
    simulator = CallableSimulator(lambda scenario, transcript: next(users, None))
    summary = run_eval(
        read_dataset(tmp_path / "ds.jsonl"),
        AdkProvider(agent),
        ["contract"],
        progress=False,
        results_dir=tmp_path / "results",
        user_simulator=simulator,
        backoff_base=0.01,
    )
    outcome = read_run(summary.path).outcomes().iloc[0]
    assert outcome["verdict"] == "ERROR" and outcome["error_kind"] == "infrastructure"
    assert outcome["detail"].startswith("turn 2: not retried after")
    assert outcome["attempts"] == 4  # turn 1, the simulator, turn 2 and the one attempt that was refused
