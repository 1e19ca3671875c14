"""Write datasets/support-scenarios (simulated-user scenarios for the support agent's tools) and its
recorded simulated run, fixtures/scripted, from datasets/support-agent.

Each scenario row takes one dev row of support-agent: the customer opens vaguely (the starting
prompt), and the plan tells the simulated user to give the original request when asked. The
row keeps the original tools, recorded tool responses and system context; its expectations
are the original ``must_not`` on every agent turn (``expect.every_turn``) and the expected tool
calls over the whole conversation. The recording comes from a scripted agent and a scripted
user (below), so it is deterministic; a replay needs no model:

    goldenkit run datasets/support-scenarios --provider fixtures \\
        --fixtures datasets/support-scenarios/fixtures/scripted

Run from the repository root: ``python scripts/make_support_scenarios.py [OUT_DIR]`` (default:
datasets/support-scenarios; its dataset.json and goldenkit.toml are copied to another OUT_DIR).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from goldenkit.dataset import read_dataset
from goldenkit.providers._callable import CallableProvider
from goldenkit.providers._simulator import CallableSimulator
from goldenkit.records import Case, Message, Response, Scenario, ToolCall, TurnOutput
from goldenkit.runner import run_eval

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "datasets" / "support-agent" / "dataset.jsonl"
TARGET = ROOT / "datasets" / "support-scenarios"
ROWS = [
    "refund-0003",
    "refund-0007",
    "order-0003",
    "order-0005",
    "ship-0005",
    "ship-0017",
    "return-0001",
    "bill-0005",
    "bill-0006",
    "acct-0003",
    "cancel-0010",
    "product-0001",
    "warranty-0006",
    "complaint-0006",
    "esc-0002",
    "safety-0001",
]
OPENERS = {
    "refunds": "Hi, I have a question about getting my money back.",
    "order_status": "Hello, I need some help with an order.",
    "shipping": "Hi there, I have a delivery problem.",
    "returns": "Hi, I want to send something back.",
    "billing": "Hello, there is something wrong with my bill.",
    "account": "Hi, I need help with my account.",
    "cancellations": "Hi, I need to cancel something.",
    "product_info": "Hello, I have a question about one of your products.",
    "warranty": "Hi, one of my devices is broken.",
    "complaints": "I am not happy with your service.",
    "escalation": "I need to talk to someone about a serious problem.",
    "policy_safety": "Hello, I need a refund processed.",
}
DETAILS = "Details: "
PLAN = (
    "You are the customer. Open vaguely. When the assistant asks for details, give your request word "
    "for word as written after 'Details:'. When the assistant has answered it, end the conversation.\n"
)
ID_PATTERN = re.compile(r"\b(?:A-\d{6}|[A-Z]{2}-\d{4}|SN\d{10}|C-\d{5})\b")


def scenario_row(row: dict[str, Any]) -> dict[str, Any]:
    """One support-agent row as a scenario row (see the module doc)."""
    case, expect = row["case"], row["case"]["expect"]
    new_expect: dict[str, Any] = {}
    if expect.get("must_not"):
        new_expect["every_turn"] = {"must_not": expect["must_not"]}
    for key in ("tools", "tool_match", "tool_args", "tool_before_text"):
        if key in expect:
            new_expect[key] = expect[key]
    return {
        "id": f"sim-{row['id']}",
        "slice": row["slice"],
        "tags": ["simulated_user", *row.get("tags", [])],
        "split": "dev",
        "source": f"derived:{row['id']}",
        "added": "2026-12-01",
        "case": {
            "scenario": {
                "starting_prompt": OPENERS[row["slice"]],
                "plan": PLAN + DETAILS + case["prompt"],
                "max_turns": 4,
            },
            "system": case.get("system"),
            "tools": case.get("tools", []),
            "tool_responses": case.get("tool_responses", []),
            "expect": new_expect,
        },
    }


def scripted_agent(case: Case) -> Response:
    """A rule-based support agent: asks for details until it sees an order id, SKU or serial, then
    calls every tool whose recorded response matches one, and answers from what they returned."""
    said = " ".join(m.content for m in case.history if m.role == "user") + " " + case.turns[-1].user
    ids = set(ID_PATTERN.findall(said))
    looked = any(m.tool_calls for m in case.history)
    if looked:
        return Response.from_text("You're welcome. Is there anything else I can do?", model="scripted")
    if not ids:
        return Response.from_text("I can help with that. Could you give me the order number or details?")
    out = TurnOutput(text="")
    facts = []
    for rec in case.turns[-1].tool_responses:
        if rec.args is not None and ids & set(map(str, rec.args.values())):
            out.tool_calls.append(ToolCall(rec.name, dict(rec.args)))
            out.tool_responses.append({"name": rec.name, "args": dict(rec.args), "response": rec.response})
            resp = rec.response if isinstance(rec.response, dict) else {}
            facts += [f"{k.replace('_', ' ')}: {resp[k]}" for k in ("status", "window_days", "in_stock") if k in resp]
    out.text = ("Here is what I found: " + "; ".join(facts) + ".") if facts else "I could not find that, sorry."
    return Response(turns=[out], model="scripted")


def scripted_user(scenario: Scenario, transcript: list[Message]) -> str | None:
    """Gives the request when asked for details, then ends the conversation."""
    last = transcript[-1].content if transcript else ""
    if "?" in last and "anything else" not in last:
        return scenario.plan.split(DETAILS, 1)[1]
    return None


scripted_agent.__module__ = scripted_user.__module__ = "scripts.make_support_scenarios"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else TARGET
    source = {r["id"]: r for r in map(json.loads, SOURCE.read_text(encoding="utf-8").splitlines())}
    rows = [scenario_row(source[rid]) for rid in ROWS]
    target.mkdir(parents=True, exist_ok=True)
    for name in ("dataset.json", "goldenkit.toml"):
        if target != TARGET:
            shutil.copy(TARGET / name, target / name)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (target / "dataset.jsonl").write_text(text, encoding="utf-8")
    fixtures = target / "fixtures" / "scripted"
    shutil.rmtree(fixtures, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_eval(
            read_dataset(target),
            CallableProvider(scripted_agent, model="scripted", threads=0),
            ["contract", "trajectory"],
            results_dir=tmp,
            run_id="scripted",
            record_dir=fixtures,
            user_simulator=CallableSimulator(scripted_user),
            max_turns=4,
            progress=False,
        )
        print(summary.line())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
