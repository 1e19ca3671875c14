"""The bundled support-agent dataset: reproducible, the promised shape, and self-consistent.

Later work (recorded fixtures, the demo's worked example) is keyed by the row
ids and the holdout split, so this test pins both.
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from goldenkit.dataset import read_dataset
from goldenkit.graders._contract import ContractGrader
from goldenkit.graders._trajectory import TrajectoryGrader
from goldenkit.providers._base import Response, TurnOutput
from goldenkit.records import ToolCall

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "datasets" / "support-agent"
SCRIPT = ROOT / "scripts" / "make_support_dataset.py"
FILES = ("dataset.jsonl", "dataset.json", "goldenkit.toml")

PREFIX = {
    "refunds": "refund",
    "order_status": "order",
    "shipping": "ship",
    "returns": "return",
    "billing": "bill",
    "account": "acct",
    "cancellations": "cancel",
    "product_info": "product",
    "warranty": "warranty",
    "complaints": "complaint",
    "escalation": "esc",
    "policy_safety": "safety",
}
# SHA-256 of the sorted ids joined by "\n": changing an id or moving a row between
# splits breaks every recording keyed by them, so it must be a deliberate act.
ALL_IDS_SHA256 = "88c0057040ec89734643395ea94e3a6618606ce937829e82b0023fc91f2841be"
HOLDOUT_IDS_SHA256 = "f131a447bf02baac616a3d4e958806a60760287e4c17cc3f77535a97a785d83d"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with (DATASET / "dataset.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def dataset():
    return read_dataset(DATASET)


def test_generator_reproduces_committed_files_byte_for_byte(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path)], check=True, capture_output=True)
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (DATASET / name).read_bytes(), (
            f"{name} differs from the generator's output"
        )


def test_counts(rows: list[dict]) -> None:
    by = collections.Counter((r["slice"], r["split"]) for r in rows)
    slices = {r["slice"] for r in rows}
    assert slices == set(PREFIX)
    assert len(slices) == 12
    assert sum(v for (s, sp), v in by.items() if sp == "holdout") == 400
    assert by[("refunds", "holdout")] == 60
    assert sum(v for (s, sp), v in by.items() if sp == "dev") >= 200
    # every slice has rows in both splits
    assert all(by[(s, "holdout")] > 0 and by[(s, "dev")] > 0 for s in slices)


def test_ids_are_stable_and_follow_slice_and_index(rows: list[dict]) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    per_slice = collections.defaultdict(list)
    for r in rows:
        m = re.fullmatch(r"([a-z]+)-(\d{4})", r["id"])
        assert m, r["id"]
        assert m.group(1) == PREFIX[r["slice"]], r["id"]
        per_slice[r["slice"]].append(int(m.group(2)))
    for s, idx in per_slice.items():
        assert sorted(idx) == list(range(1, len(idx) + 1)), s
    digest = hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()
    holdout = hashlib.sha256("\n".join(sorted(r["id"] for r in rows if r["split"] == "holdout")).encode()).hexdigest()
    assert digest == ALL_IDS_SHA256
    assert holdout == HOLDOUT_IDS_SHA256


def test_provenance_tags_and_manifest(rows: list[dict], dataset) -> None:
    sources = collections.Counter(r["source"] for r in rows)
    assert set(sources) == {"prod-2026-09", "prod-2026-10", "synthetic", "redteam"}
    tags = collections.Counter(t for r in rows for t in r["tags"])
    for t in ("multi_turn", "tool_error", "angry_customer", "non_english", "hallucinate-policy", "adversarial"):
        assert tags[t] >= 10, t
    assert all(re.fullmatch(r"2026-\d\d-\d\d", r["added"]) for r in rows)
    assert all(r["source"] == "redteam" for r in rows if "adversarial" in r["tags"])
    m = dataset.manifest
    assert m["name"] == "support-agent" and dataset.name == "support-agent"
    assert m["case_format"] == "contract"
    assert m["changelog"] and {"version", "date", "why"} <= set(m["changelog"][-1])
    assert m["changelog"][-1]["version"] == m["version"] == dataset.version


def test_goldenkit_toml() -> None:
    cfg = tomllib.loads((DATASET / "goldenkit.toml").read_text(encoding="utf-8"))
    assert cfg["graders"]["use"] == ["contract", "trajectory"]
    assert cfg["run"]["repeats"] == 3
    assert cfg["gate"]["critical"] == ["refunds"]
    assert cfg["gate"]["rule"] == "majority"
    # the gate module accepts the table as it stands
    from goldenkit.gate import GatePolicy

    policy = GatePolicy.from_config(cfg["gate"])
    assert policy.critical == ("refunds",) and policy.regression
    assert cfg["gate"]["alpha"] == 0.05
    assert cfg["gate"]["max_error_rate"] == 0.02


def test_every_row_loads_and_normalizes(dataset, rows: list[dict]) -> None:
    from goldenkit.formats import normalize_case

    assert len(dataset.rows) == len(rows)
    assert dataset.case_format == "contract"
    assert list(dataset.rows["id"]) == [r["id"] for r in rows]
    for r in rows:
        case = normalize_case(r["case"], "contract", row_id=r["id"])
        assert case.shape == "contract"
        assert case.turns and all(t.user for t in case.turns)
        assert case.reference
        assert case.expect.get("refusal") in (True, False), r["id"]
        n_turns = len(r["case"].get("turns", [])) or 1
        assert len(case.turns) == n_turns
    # the cached accessor agrees
    assert (
        dataset.case("refund-0001").expect == normalize_case(rows[0]["case"], "contract", row_id="refund-0001").expect
    )


def test_refund_rows_need_lookup_order_before_a_window(rows: list[dict]) -> None:
    refunds = [r for r in rows if r["slice"] == "refunds"]
    for r in refunds:
        expect = r["case"]["expect"]
        rules = expect["tool_before_text"]
        assert rules[0]["tool"] == "lookup_order"
        pat = re.compile(rules[0]["pattern"])
        for quote in ("30-day", "within 14 days", "30 days", "30 días", "30 Tagen", "30 jours"):
            assert pat.search(quote), quote
        assert not pat.search("5-10 business days")
        assert expect["tools"][0]["name"] == "lookup_order"


def _golden_response(raw: dict) -> Response:
    """The reference answer with the expected tool calls (made in the last turn)."""
    calls = [ToolCall(t["name"], dict(t.get("args") or {})) for t in raw["expect"].get("tools", [])]
    n = len(raw.get("turns", [])) or 1
    first = [TurnOutput(text="Sure - could you give me the order number?") for _ in range(n - 1)]
    return Response(turns=first + [TurnOutput(text=raw["reference"], tool_calls=calls)])


def test_reference_answers_pass_their_own_expectations(dataset, rows: list[dict]) -> None:
    graders = (ContractGrader(), TrajectoryGrader())
    failures = []
    for r in rows:
        case = dataset.case(r["id"])
        resp = _golden_response(r["case"])
        for g in graders:
            res = g.grade(case, resp)
            if res.passed is False:
                failures.append(f"{r['id']} {g.name}: {res.reason}")
    assert not failures, "\n".join(failures[:10])


def test_expectations_catch_the_known_failure_modes(dataset, rows: list[dict]) -> None:
    """Quoting the window without lookup_order fails; leaking an internal note fails; refusing a normal row fails."""
    traj, contract = TrajectoryGrader(), ContractGrader()
    r = next(
        x
        for x in rows
        if x["slice"] == "refunds"
        and "in_window" in x["tags"]
        and "multi_turn" not in x["tags"]
        and "non_english" not in x["tags"]
    )
    case = dataset.case(r["id"])
    no_lookup = Response(turns=[TurnOutput(text=r["case"]["reference"])])
    res = traj.grade(case, no_lookup)
    assert res.passed is False and "tool_before_text" in res.reason
    noted = next(
        x
        for x in rows
        if any(
            isinstance(t["response"], dict) and t["response"].get("internal_notes") for t in x["case"]["tool_responses"]
        )
        and x["slice"] == "order_status"
    )
    note = next(
        t["response"]["internal_notes"] for t in noted["case"]["tool_responses"] if t["response"].get("internal_notes")
    )
    leak = Response(turns=[TurnOutput(text=noted["case"]["reference"] + " Note on file: " + note)] * 1)
    assert contract.grade(dataset.case(noted["id"]), leak).passed is False
    refused = Response(turns=[TurnOutput(text="I'm sorry, but I can't help with that.")])
    assert contract.grade(case, refused).passed is False
