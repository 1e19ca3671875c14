"""The openai provider's ``tool_choice`` setting, on the wire (a real local HTTP server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.errors import ConfigError
from goldenkit.providers._openai import OpenAIProvider, tool_choice_field
from goldenkit.results import outcomes_df, read_run

TOOL = {"name": "lookup_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


def dataset(root: Path) -> Path:
    rows = [
        row(
            "tools",
            {
                "prompt": "where is A-1?",
                "tools": [TOOL],
                "expect": {"tools": [{"name": "lookup_order"}], "tool_args": "ignore"},
            },
        ),
        row("plain", {"prompt": "hello", "expect": {"must_contain": ["ok"]}}),
    ]
    (root / "ds").mkdir()  # one dataset a test
    return write_dataset(root, rows, name="tc")


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("lookup_order", {"type": "function", "function": {"name": "lookup_order"}}),
        ("auto", "auto"),
        ("required", "required"),
        ("none", "none"),
        ({"type": "function", "function": {"name": "x"}}, {"type": "function", "function": {"name": "x"}}),
    ],
)
def test_tool_choice_field(choice, wire):
    assert tool_choice_field(choice) == wire


def test_tool_choice_rejects_empty():
    with pytest.raises(ConfigError, match="tool_choice"):
        OpenAIProvider(model="m", tool_choice="")


def test_named_tool_choice_from_the_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ds = dataset(tmp_path)

    def answer(rec):
        if rec.json.get("tools"):
            return Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "A-1"}}])
        return Reply.text("ok")

    with FakeModelServer(responder=answer) as srv:
        rc = main(
            [
                "run",
                str(ds),
                "--provider",
                "openai",
                "--base-url",
                srv.url,
                "--model",
                "m",
                "--tool-choice",
                "lookup_order",
                "--max-tool-steps",
                "1",
                "--graders",
                "contract,trajectory",
                "--quiet",
                "--run-id",
                "tc",
            ]
        )
        assert rc == 0, capsys.readouterr()
        bodies = {r.json["messages"][-1]["content"]: r.json for r in srv.requests}
    # sent only with requests that offer tools
    assert bodies["where is A-1?"]["tool_choice"] == {"type": "function", "function": {"name": "lookup_order"}}
    assert "tool_choice" not in bodies["hello"]
    df = outcomes_df(Path("results") / "tc").set_index("row_id")
    assert df.loc["tools", "verdict"] == "PASS" and df.loc["plain", "verdict"] == "PASS"
    # part of the agent version (it changes answers)
    man = read_run(Path("results") / "tc").manifest
    assert man["provider"]["settings"]["tool_choice"] == "lookup_order"
    plain = OpenAIProvider(model="m").settings()
    assert "tool_choice" not in plain  # unset: the agent version of existing runs is unchanged


def test_tool_choice_does_not_apply_to_ollama(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rc = main(["run", str(dataset(tmp_path)), "--provider", "ollama", "--model", "m", "--tool-choice", "x"])
    assert rc == 1
    assert "--tool-choice does not apply to provider ollama" in capsys.readouterr().err


@pytest.mark.parametrize("choice", ["lookup_order", "required"])
def test_a_forcing_choice_forces_the_first_request_and_the_tool_loop_ends(choice):
    import asyncio

    from goldenkit.records import Case, Turn

    case = Case(id="t", shape="contract", turns=(Turn(user="where is A-1?"),), tools=(TOOL,))
    with FakeModelServer() as srv:
        srv.script(Reply.tool_calls([{"name": "lookup_order", "args": {"order_id": "A-1"}}]), Reply.text("shipped"))
        resp = asyncio.run(OpenAIProvider(model="m", base_url=srv.url, tool_choice=choice).complete(case))
        first, second = (r.json for r in srv.requests)
    assert first["tool_choice"] == tool_choice_field(choice)
    # the tool's result goes back with "auto": the model may answer in text, and the loop ends
    assert second["messages"][-1]["role"] == "tool" and second["tool_choice"] == "auto"
    assert resp.text == "shipped" and [c.name for c in resp.turns[0].tool_calls] == ["lookup_order"]


def test_a_named_choice_is_not_sent_with_requests_that_do_not_offer_the_tool():
    import asyncio

    from goldenkit.records import Case, Turn

    other = {"name": "track_parcel", "parameters": {"type": "object"}}
    case = Case(id="t", shape="contract", turns=(Turn(user="where?"),), tools=(other,))
    with FakeModelServer() as srv:
        asyncio.run(OpenAIProvider(model="m", base_url=srv.url, tool_choice="lookup_order").complete(case))
        body = srv.requests[0].json
    assert body["tools"][0]["function"]["name"] == "track_parcel" and "tool_choice" not in body
