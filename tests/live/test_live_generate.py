"""``goldenkit dataset generate`` against the live server.

The CI model has random weights: its answers are never a JSON array of
scenarios, so a generation must end in the bounded-retry failure (exit 3, the
model's raw text quoted on one line) with nothing written. A real model gets
the same command and, given a capable model, writes a new version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from livekit import LiveConfig, require_live, show, write_dataset

from goldenkit.cli import main
from goldenkit.dataset import read_dataset

pytestmark = pytest.mark.live
require_live()

AGENT_TOML = """\
name = "shop-agent"
instruction = "You are the support agent of an online shop. Look orders up before answering."

[environment]
orders = [{id = "A-1", item = "duvet cover", status = "delivered"}]

[[tools]]
name = "lookup_order"
description = "Look up an order by number."
parameters = {type = "object", properties = {order_id = {type = "string"}}, required = ["order_id"]}
"""


def test_live_generate(live: LiveConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = write_dataset(tmp_path, [{"id": "r1", "case": {"prompt": "Where is my order A-1?"}}], name="shop")
    agent = tmp_path / "agent.toml"
    agent.write_text(AGENT_TOML, encoding="utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    args = ["dataset", "generate", str(ds), "--agent-config", str(agent), "--count", "2", *live.cli_args()]
    args += ["--model-seed", "17", "--temperature", "0", "--max-tokens", "48", "--attempts", "2", "--timeout", "120"]
    code = main(args)
    out = capsys.readouterr()
    show("dataset generate", code=code, stdout=out.out.strip(), stderr=out.err.strip()[:300])
    if code == 0 and not live.random_model:  # a capable model wrote scenarios: the new version reads
        new = read_dataset(ds.with_name("shop-1.1.0"))
        assert new.version == "1.1.0" and 2 <= len(new) <= 3
        return
    assert code == 3, out.err
    assert out.out == "" and out.err.count("\n") == 1
    match = re.fullmatch(
        rf"goldenkit: {live.provider} model {re.escape(live.model)} gave no valid scenarios in 2 attempt\(s\); "
        r"last problem: (.+); last output \((\d+) chars\): (\".*\")(\.\.\.)?\n",
        out.err,
    )
    assert match is not None, out.err
    raw = json.loads(match.group(3))
    assert isinstance(raw, str) and raw.strip()  # the model's own text, quoted
    assert len(raw) == min(int(match.group(2)), 2000)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no new version, no temporary folder
    assert read_dataset(ds).version == "1.0.0"
