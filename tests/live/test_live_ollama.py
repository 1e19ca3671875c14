"""The Ollama protocol through the same runner path, answered by the real model.

No Ollama can be installed here, so a small local server speaking ``/api/chat``
(:class:`fakeserver.FakeModelServer` with a responder) translates each Ollama
request into an OpenAI chat request to the live server and the reply back into
Ollama's shape (``message``, ``prompt_eval_count``, ``eval_count``). The
Ollama provider's wire format is therefore checked by a real model's answers:
its ``options`` (temperature, seed, num_predict) must arrive as sampling
settings for the answers to be deterministic and short. When the live server
*is* an Ollama (``GOLDENKIT_LIVE_PROVIDER=ollama``) the provider talks to it directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fakeserver import FakeModelServer, Recorded, Reply
from livekit import LiveConfig, require_live, show, write_dataset

from goldenkit.dataset import read_dataset
from goldenkit.providers._ollama import OllamaProvider
from goldenkit.providers._openai import chat_completions_url
from goldenkit.results import outcomes_df
from goldenkit.runner import run_eval
from goldenkit.schema import FAIL, PASS
from goldenkit.stats import flaky_rows

pytestmark = pytest.mark.live
require_live()


def _to_openai(body: dict[str, Any], model: str) -> dict[str, Any]:
    """An Ollama /api/chat body as an OpenAI chat.completions body."""
    messages = []
    for m in body["messages"]:
        out: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            out["tool_calls"] = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": c["function"]["name"], "arguments": json.dumps(c["function"]["arguments"])},
                }
                for i, c in enumerate(m["tool_calls"])
            ]
        if m["role"] == "tool":
            out["tool_call_id"] = "call_0"
        messages.append(out)
    opts = body.get("options") or {}
    req: dict[str, Any] = {"model": model, "messages": messages, "stream": False}
    for src, dst in (("temperature", "temperature"), ("seed", "seed"), ("num_predict", "max_tokens")):
        if src in opts:
            req[dst] = opts[src]
    if body.get("tools"):
        req["tools"] = body["tools"]
    return req


class OllamaShim:
    """``/api/chat`` in front of an OpenAI-compatible server."""

    def __init__(self, live: LiveConfig) -> None:
        self.url = chat_completions_url(live.base_url)
        self.model = live.model
        self.client = httpx.Client(timeout=60)
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, rec: Recorded) -> Reply:
        if rec.path != "/api/chat":
            return Reply.status(404)
        self.bodies.append(rec.json)
        r = self.client.post(self.url, json=_to_openai(rec.json, self.model))
        if r.status_code != 200:
            return Reply.status(r.status_code, body=r.content)
        obj = r.json()
        msg = obj["choices"][0]["message"]
        usage = obj.get("usage") or {}
        kw = {"tokens_in": usage.get("prompt_tokens", 0), "tokens_out": usage.get("completion_tokens", 0)}
        if msg.get("tool_calls"):
            calls = [
                {"name": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                for c in msg["tool_calls"]
            ]
            return Reply.tool_calls(calls, text=msg.get("content") or "", **kw)
        return Reply.text(msg.get("content") or "", **kw)


@pytest.fixture
def ollama_host(live: LiveConfig) -> Iterator[tuple[str, OllamaShim | None]]:
    if live.provider == "ollama":
        yield live.base_url, None
        return
    shim = OllamaShim(live)
    with FakeModelServer(responder=shim) as srv:
        yield srv.url, shim
    shim.client.close()


def _rows(n: int) -> list[dict]:
    letters = "etaoinshrdlu"
    return [
        {
            "id": f"o{i:02d}",
            "case": {
                "system": "Answer briefly.",
                "prompt": f"Item {i}: name something with {letters[i % len(letters)]}.",
                "expect": {"must_contain_any": [letters[i % len(letters)], letters[(i + 5) % len(letters)]]},
            },
        }
        for i in range(n)
    ]


def test_ollama_protocol_seeded_repeats_identical_and_sampled_repeats_vary(live, ollama_host, tmp_path):
    host, shim = ollama_host
    ds = write_dataset(tmp_path, _rows(12))
    seeded = OllamaProvider(model=live.model, host=host, temperature=0, seed=99, max_tokens=20)
    s1 = run_eval(
        read_dataset(ds), seeded, ["contract"], repeats=3, results_dir=tmp_path / "r", run_id="seeded", progress=False
    )
    assert s1.validity == "VALID", s1.line()
    d1 = outcomes_df(s1.path)
    assert len(d1) == 36 and set(d1["verdict"]) <= {PASS, FAIL}
    assert (d1.groupby("row_id")["response"].nunique() == 1).all()
    assert d1["tokens_in"].gt(0).all() and d1["tokens_out"].between(1, 20).all()

    sampled = OllamaProvider(model=live.model, host=host, temperature=0.8, max_tokens=20)
    s2 = run_eval(
        read_dataset(ds), sampled, ["contract"], repeats=3, results_dir=tmp_path / "r", run_id="sampled", progress=False
    )
    assert s2.validity == "VALID", s2.line()
    d2 = outcomes_df(s2.path)
    assert len(d2) == 36
    distinct = d2.groupby("row_id")["response"].nunique()
    assert (distinct > 1).mean() > 0.5
    if shim is not None:
        # what the Ollama provider put on the wire
        first = shim.bodies[0]
        assert first["stream"] is False and first["model"] == live.model
        assert first["options"] == {"temperature": 0, "seed": 99, "num_predict": 20}
        assert [m["role"] for m in first["messages"]] == ["system", "user"]
    show(
        "ollama protocol",
        via="shim" if shim else "ollama",
        seeded_distinct_per_row=int(d1.groupby("row_id")["response"].nunique().max()),
        sampled_rows_varying=int((distinct > 1).sum()),
        flaky_rows=len(flaky_rows(d2)),
        tokens_in=int(d1["tokens_in"].sum() + d2["tokens_in"].sum()),
        tokens_out=int(d1["tokens_out"].sum() + d2["tokens_out"].sum()),
    )
