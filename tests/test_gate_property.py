"""The gate's invariant, searched for a counterexample by hypothesis.

Whenever the gate exits 0 with regression on: both sides are VALID and
complete, their protocol keys are equal, the overall table and every critical
slice have at least ``min_paired_share`` of the baseline's rows paired (PASS or
FAIL on both sides), and every row the ledger counts as paired is decided on
both sides by an independent, naive collapse that tries every value the
errored repeats could have had. Pairs of runs are generated with every verdict,
every error kind, skipped and missing rows, errored repeats, several slices and
critical sets, on both sides.
"""

from __future__ import annotations

import itertools
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, given, settings, strategies as st
from run_factory import FakeRun, manifest, outcomes

from goldenkit.compare import protocol_key
from goldenkit.gate import GatePolicy, evaluate_gate
from goldenkit.gate._regression import drop_interval
from goldenkit.schema import ERROR_KINDS

SLICES = ("a", "b", "c")
RULES = ("majority", "all", "any")


def naive(verdicts: list[str], rule: str) -> str:
    """PASS / FAIL when every assignment of the errored repeats agrees, else UNDECIDED (ERROR: none graded)."""
    if all(v == "SKIPPED" for v in verdicts):
        return "SKIPPED"
    graded = [v for v in verdicts if v in ("PASS", "FAIL")]
    errors = sum(v == "ERROR" for v in verdicts)
    if not graded:
        return "ERROR"
    seen = set()
    for fill in itertools.product(("PASS", "FAIL"), repeat=errors):
        full = graded + list(fill)
        passes = sum(v == "PASS" for v in full)
        if rule == "majority":
            seen.add("PASS" if passes > len(full) / 2 else "FAIL")
        elif rule == "all":
            seen.add("PASS" if passes == len(full) else "FAIL")
        else:
            seen.add("PASS" if passes > 0 else "FAIL")
    return seen.pop() if len(seen) == 1 else "UNDECIDED"


verdict = st.sampled_from(["PASS", "PASS", "PASS", "FAIL", "ERROR"])


@st.composite
def side(draw: Any, row_ids: list[tuple[str, str]], repeats: int) -> tuple[list[Any], dict[str, str]]:
    rows, kinds = [], {}
    for rid, sl in row_ids:
        if draw(st.integers(0, 19)) == 0:
            continue  # the side lost this row
        if draw(st.integers(0, 14)) == 0:
            rows.append((rid, sl, ["SKIPPED"] * repeats))
            continue
        rows.append((rid, sl, [draw(verdict) for _ in range(repeats)]))
        kinds[rid] = draw(st.sampled_from(ERROR_KINDS))
    return rows, kinds


def frame(rows: list[Any], kinds: dict[str, str], run_id: str) -> pd.DataFrame:
    df = outcomes(rows, run_id=run_id)
    is_err = df["verdict"] == "ERROR"
    df.loc[is_err, "error_kind"] = df.loc[is_err, "row_id"].map(kinds)
    return df


@st.composite
def scenario(draw: Any) -> dict[str, Any]:
    repeats = draw(st.integers(1, 3))
    ids = [(f"{s}{i}", s) for s in SLICES for i in range(draw(st.integers(1, 6)))]
    base_rows, base_kinds = draw(side(ids, repeats))
    cand_rows, cand_kinds = draw(side(ids, repeats))
    bm, cm = manifest("base", repeats=repeats), manifest("cand", repeats=repeats, model_id="model-b")
    for m in (bm, cm):
        m["validity"] = draw(st.sampled_from(["VALID"] * 5 + ["INVALID"]))
        m["complete"] = draw(st.sampled_from([True] * 5 + [False]))
    if draw(st.integers(0, 5)) == 0:
        cm["grader_hard"] = {"contract": False}
    if draw(st.integers(0, 5)) == 0:
        cm["repeats"] = repeats + 1
    policy = GatePolicy(
        rule=draw(st.sampled_from(RULES)),
        critical=tuple(draw(st.lists(st.sampled_from(SLICES), unique=True, max_size=2))),
        min_paired_share=draw(st.sampled_from([0.5, 0.9, 1.0])),
        max_error_rate=draw(st.sampled_from([0.02, 1.0])),
        max_slice_error_rate=draw(st.sampled_from([0.05, 1.0])),
        max_new_permanent_errors=draw(st.sampled_from([0, 100])),
        # a few rows show non-inferiority only at a wide margin: draw ones they can show, and none
        non_inferiority_margin=draw(st.sampled_from([None, 0.05, 0.6, 0.9, 0.99])),
    )
    base = FakeRun(bm, frame(base_rows, base_kinds, "base"))
    cand = FakeRun(cm, frame(cand_rows, cand_kinds, "cand"))
    return {"base": base, "cand": cand, "policy": policy, "base_rows": base_rows, "cand_rows": cand_rows}


def _naive_table(rows: list[Any], rule: str) -> dict[str, tuple[str, str]]:
    return {rid: (sl, naive(list(v), rule)) for rid, sl, v in rows}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario())
def test_exit_0_implies_valid_comparable_sides_with_enough_paired_rows(sc: dict[str, Any]) -> None:
    base, cand, policy = sc["base"], sc["cand"], sc["policy"]
    decision = evaluate_gate(cand, policy=policy, baseline=base)
    b = _naive_table(sc["base_rows"], policy.rule)
    c = _naive_table(sc["cand_rows"], policy.rule)
    decided = ("PASS", "FAIL")
    if decision.comparison is not None:  # the ledger agrees with the naive collapse, row by row
        led = decision.comparison.ledger.rows.set_index("row_id")
        for rid, (_, v) in b.items():
            assert led.at[rid, "base_status"] == v
            assert led.at[rid, "cand_status"] == c.get(rid, ("", "MISSING"))[1]
            assert bool(led.at[rid, "paired"]) == (v in decided and c.get(rid, ("", ""))[1] in decided)
    if decision.exit_code != 0:
        return
    for m in (base.manifest, cand.manifest):
        assert m["validity"] == "VALID" and m["complete"] is True
    assert protocol_key(base.manifest, rule=policy.rule) == protocol_key(cand.manifest, rule=policy.rule)
    groups: dict[str, list[bool]] = {"(overall)": []}
    for rid, (sl, v) in b.items():
        paired = v in decided and c.get(rid, ("", ""))[1] in decided
        groups["(overall)"].append(paired)
        groups.setdefault(sl, []).append(paired)
    for name in ("(overall)", *policy.critical):
        got = groups.get(name, [])
        assert got and sum(got) / len(got) >= policy.min_paired_share, (name, got)
    if policy.non_inferiority_margin is None:
        return
    # exit 0 implies non-inferiority shown, overall and on every critical slice, on the naive cells
    for name in ("(overall)", *policy.critical):
        cells = {k: 0 for k in (("PASS", "PASS"), ("FAIL", "PASS"), ("PASS", "FAIL"), ("FAIL", "FAIL"))}
        for rid, (sl, v) in b.items():
            w = c.get(rid, ("", ""))[1]
            if (v, w) in cells and name in ("(overall)", sl):
                cells[(v, w)] += 1
        _, upper = drop_interval(*cells.values(), policy.alpha)
        assert upper < policy.non_inferiority_margin, (name, cells)
