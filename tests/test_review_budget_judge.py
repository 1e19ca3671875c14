"""A hostile review of budgets and of the gate on judge-graded rules, through the command line.

Each test is a problem found by using goldenkit as a hostile user would: a budget the server's replies
cannot count, a labels.jsonl edited by hand, a self-preferring judge hidden behind a trivial labelled rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main

PRICED = (
    '[graders]\nuse = ["contract"]\n[pricing."m"]\ninput = 1.0\noutput = 2.0\nsource = "list"\ndate = "2026-11-01"\n'
)
#: A chat completion without a usage block: the server reports neither tokens nor a price.
NO_USAGE = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "yes"}, "finish_reason": "stop"}],
    }
)


@pytest.mark.parametrize(
    ("flag", "value", "refused"),
    [
        ("--max-tokens-total", "10", "--max-tokens-total 10 cannot be counted: 1 call(s) returned no token counts"),
        ("--max-cost", "0.00001", "--max-cost 1e-05 cannot be counted: 1 call(s) returned no price and no token"),
    ],
)
def test_a_budget_the_replies_cannot_count_stops_the_run_instead_of_running_it_unbounded(
    tmp_path: Path, flag: str, value: str, refused: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = write_dataset(
        tmp_path, numbered_rows(20, lambda i: {"prompt": f"say yes {i}", "expect": {"must_contain": ["yes"]}})
    )
    (tmp_path / "priced.toml").write_text(PRICED)
    with FakeModelServer(default=Reply.status(200, body=NO_USAGE)) as srv:
        argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
        argv += ["--results-dir", str(tmp_path / "res"), "--run-id", "b", "--config", str(tmp_path / "priced.toml")]
        code = main([*argv, "--max-in-flight", "1", flag, value])
        assert (code, srv.count()) == (3, 1)  # the first reply said nothing to count: no second call
    out = capsys.readouterr().out
    assert refused in out and "resume with --run-id b and without that budget" in out
    man: dict[str, Any] = json.loads((tmp_path / "res" / "b" / "run.json").read_text())
    assert man["stopped_because"] == "budget" and man["budget"]["spent"]["uncounted"] == 1
