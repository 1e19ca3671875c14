"""What a run cost: usage as servers report it, kept per outcome by role, added up in one place."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit._pricing import Pricing
from goldenkit.cli import main
from goldenkit.results import iter_jsonl, read_run
from goldenkit.results._accounting import (
    NO_PRICES,
    accounting,
    cost_line,
    role_models,
    run_totals,
    run_totals_of,
    totals_text,
)
from goldenkit.results._usage_change import paired_usage, paired_usage_line
from goldenkit.stats import OVERALL, paired_mean_diff

PRICES = {
    "m": {"input": 1.0, "output": 2.0, "source": "list", "date": "2026-11-01"},
    "j": {"input": 10.0, "output": 10.0, "source": "judge list", "date": "2026-11-02"},
}
DETAILS = {"prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 3}}


def hand_run() -> pd.DataFrame:
    """Three rows x two repeats, figures small enough to add up by hand (see the test's comments)."""
    judge = {"judge": {"calls": 1, "tokens_in": 30, "tokens_out": 3, "tokens_cached": None, "cost": None}}
    recs = [
        # row, slice, repeat, verdict, attempts, tokens in, out, cost, latency, usage
        ("a", "x", 0, "PASS", 1, 100, 10, None, 1000.0, judge),
        ("a", "x", 1, "PASS", 2, 120, 12, None, 2000.0, None),
        ("b", "x", 0, "FAIL", 1, 200, 20, None, 3000.0, None),
        ("b", "x", 1, "FAIL", 1, 200, 20, None, 4000.0, None),
        ("c", "y", 0, "PASS", 1, 50, 5, 0.01, 500.0, None),
        ("c", "y", 1, "ERROR", 3, None, None, None, 9000.0, None),  # three calls, no usage reported
    ]
    cols = "row_id slice repeat verdict attempts tokens_in tokens_out cost latency_ms usage".split()
    df = pd.DataFrame(recs, columns=cols)
    df["agent_version"] = [{"model_id": "m"}] * len(df)
    return df


def test_per_run_per_slice_and_per_passing_row_figures_are_exact_on_a_hand_computed_run() -> None:
    table = accounting(hand_run(), Pricing.from_config(PRICES, "g.toml"), models={"judge": "j"})
    run, x, y = table.loc[OVERALL], table.loc["x"], table.loc["y"]
    assert (run["tokens_in"], run["tokens_out"], run["calls"]) == (670, 67, 9)  # 100+120+200+200+50; attempts
    assert run["tokens_cached"] is None and run["tokens_reasoning"] is None  # never reported: null, not 0
    # latency over answered outcomes: 500, 1000, 2000, 3000, 4000 (the ERROR's 9000 left out)
    assert run["latency_p50_ms"] == 2000.0 and run["latency_p95_ms"] == pytest.approx(3800.0)
    assert run["ttft_p50_ms"] is None  # nothing streamed
    # candidate money: c's provider price, the rest at [pricing] m: (100+20) + (120+24) + 2 x (200+40) per 1e6
    assert run["money"] == pytest.approx(0.01 + 744e-6)
    assert run["money_label"] == "[pricing] list 2026-11-01 + provider"
    assert (run["judge_calls"], run["judge_tokens_in"], run["judge_tokens_out"]) == (1, 30, 3)
    assert run["judge_money"] == pytest.approx(330e-6) and run["judge_money_label"] == "[pricing] judge list 2026-11-02"
    assert run["simulator_calls"] is None and run["simulator_money"] is None  # no simulated user
    assert run["total_money"] == pytest.approx(0.01 + 744e-6 + 330e-6)
    # rows: a PASS, b FAIL, c P,E -> UNDECIDED under majority: one passing row
    assert (run["rows"], run["passing_rows"]) == (3, 1)
    assert run["tokens_per_passing_row"] == 737.0
    assert run["money_per_passing_row"] == pytest.approx(0.01 + 744e-6)  # the candidate's, as the tokens
    assert (x["tokens_in"], x["calls"], x["passing_rows"], x["latency_p50_ms"]) == (620, 5, 1, 2500.0)
    assert x["tokens_per_passing_row"] == 682.0
    assert (y["tokens_in"], y["calls"], y["passing_rows"]) == (50, 4, 0)
    assert y["tokens_per_passing_row"] is None and y["money_per_passing_row"] is None  # nothing passed


def test_money_is_n_a_without_prices_and_never_a_sum_over_part_of_the_calls() -> None:
    df = hand_run()
    bare = accounting(df.assign(cost=None), by=None).loc[OVERALL]
    assert bare["money"] is None and bare["money_label"] == NO_PRICES == "n/a (no prices)"
    assert bare["total_money"] is None and bare["total_money_label"] == NO_PRICES
    # one outcome priced by its provider, four with tokens and no price: n/a, saying how many
    part = accounting(df, by=None).loc[OVERALL]
    assert part["money"] is None and part["money_label"] == "n/a (4 of 5 outcomes unpriced)"
    # every price from the provider: money, labelled provider
    paid = accounting(df[df["cost"].notna()], by=None).loc[OVERALL]
    assert paid["money"] == pytest.approx(0.01) and paid["money_label"] == "provider"
    line = cost_line(run_totals(df.assign(cost=None, usage=None)))
    assert line == "cost: 670 tokens in, 67 out, 9 calls, p50 2.0 s; money n/a (no prices)"


def test_role_models_read_the_judge_and_the_simulator_from_run_json() -> None:
    man = {"judge_version": "j-1+rubric.0123456789ab+params.0123456789ab", "simulator_version": {"model": "u"}}
    assert role_models(man) == {"judge": "j-1", "simulator": "u"}
    assert role_models({"judge_version": "a+rubric.1+params.2,b+rubric.1+params.2"}) == {
        "judge": None,
        "simulator": None,
    }


# ------------------------------------------------------------------------ usage as the servers report it


def run_cli(tmp_path: Path, url: str, *extra: str, provider: str = "openai", toml: str = "", run_id: str = "r") -> int:
    ds = write_dataset(
        tmp_path, [row(f"r{i}", {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}}) for i in range(2)]
    )
    config = tmp_path / "goldenkit.toml"
    config.write_text(toml, encoding="utf-8")
    return main(
        [
            "run",
            str(ds),
            "--provider",
            provider,
            "--base-url",
            url,
            "--model",
            "m",
            "--graders",
            "contract",
            "--config",
            str(config),
        ]
        + ["--results-dir", str(tmp_path / "res"), "--run-id", run_id, "--quiet", *extra]
    )


def outcomes(tmp_path: Path) -> list[dict]:
    return sorted(iter_jsonl(tmp_path / "res" / "r" / "outcomes.jsonl"), key=lambda o: o["row_id"])


@pytest.mark.parametrize("stream", [False, True])
def test_openai_usage_details_are_recorded_streamed_or_not(tmp_path: Path, capsys, stream: bool) -> None:
    toml = "".join(
        f'[pricing."{m}"]\n' + "".join(f"{k} = {json.dumps(v)}\n" for k, v in p.items()) for m, p in PRICES.items()
    )
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok", tokens_in=40, tokens_out=9, usage=DETAILS)
        assert run_cli(tmp_path, srv.url, *(["--stream"] if stream else []), toml=toml) == 0
        assert srv.requests[0].json.get("stream_options") == ({"include_usage": True} if stream else None)
    for o in outcomes(tmp_path):
        assert (o["tokens_in"], o["tokens_out"], o["tokens_cached"], o["tokens_reasoning"]) == (40, 9, 4, 3)
        assert o["cost"] is None and o["usage"] is None  # no provider price; no judge, no simulated user
        assert (o["ttft_ms"] is not None) is stream
    parquet = read_run(tmp_path / "res" / "r").outcomes()
    assert parquet["tokens_cached"].tolist() == [4, 4] and parquet["tokens_reasoning"].tolist() == [3, 3]
    totals = json.loads((tmp_path / "res" / "r" / "run.json").read_text())["accounting"]
    assert totals["roles"]["candidate"]["tokens_in"] == 80 and totals["roles"]["candidate"]["tokens_cached"] == 8
    # (36 uncached x 1 + 4 cached at the input price x 1 + 9 x 2) per 1e6, twice
    assert (
        totals["total_money"] == pytest.approx(2 * 58e-6) and totals["total_money_label"] == "[pricing] list 2026-11-01"
    )
    shown = "80 in / 18 out tokens, 2 calls; $0.0001 ([pricing] list 2026-11-01)"
    assert totals_text(run_totals_of(tmp_path / "res" / "r")) == shown  # the pages' cost column
    out = capsys.readouterr().out
    assert "cost: 80 tokens in (8 cached), 18 out (6 reasoning), 2 calls, p50 " in out
    assert "; money $0.0001 ([pricing] list 2026-11-01)" in out


def test_a_server_that_reports_no_usage_leaves_the_counts_null_and_money_n_a(tmp_path: Path, capsys) -> None:
    with FakeModelServer() as srv:
        srv.responder = lambda req: Reply(
            kind="malformed",
            body=json.dumps(
                {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}
            ).encode(),
        )
        assert run_cli(tmp_path, srv.url) == 0
    assert all(o["tokens_in"] is None and o["tokens_cached"] is None for o in outcomes(tmp_path))
    assert "cost: tokens in n/a, out n/a, 2 calls, p50 " in capsys.readouterr().out


@pytest.mark.parametrize("stream", [False, True])
def test_ollama_counts_are_recorded_streamed_or_not(tmp_path: Path, stream: bool) -> None:
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok", tokens_in=21, tokens_out=7)
        assert run_cli(tmp_path, srv.url, *(["--stream"] if stream else []), provider="ollama") == 0
    assert [(o["tokens_in"], o["tokens_out"], o["tokens_cached"]) for o in outcomes(tmp_path)] == [(21, 7, None)] * 2
    totals = json.loads((tmp_path / "res" / "r" / "run.json").read_text())["accounting"]
    assert totals["roles"]["candidate"]["tokens_out"] == 14 and totals["total_money_label"] == NO_PRICES


def test_the_judges_usage_is_recorded_apart_from_the_candidates(tmp_path: Path) -> None:
    verdict = '{"decision": "ACCEPT", "score": 1, "reasons": ["fine"]}'
    with FakeModelServer() as cand, FakeModelServer() as judge:
        cand.default = Reply.text("ok", tokens_in=40, tokens_out=9)
        judge.default = Reply.text(verdict, tokens_in=300, tokens_out=20, usage=DETAILS)
        (tmp_path / "rubric.md").write_text("Accept answers that say ok.", encoding="utf-8")
        toml = (
            '[graders]\nuse = ["contract", "judge"]\n[judge]\nprovider = "openai"\nmodel = "j"\n'
            f'rubric = "{tmp_path / "rubric.md"}"\n'
            f'[judge.options]\nbase_url = "{judge.url}"\n'
            '[pricing."j"]\ninput = 10.0\noutput = 10.0\nsource = "judge list"\ndate = "2026-11-02"\n'
        )
        assert run_cli(tmp_path, cand.url, "--graders", "contract,judge", toml=toml) == 0
    for o in outcomes(tmp_path):
        assert (o["tokens_in"], o["tokens_out"]) == (40, 9)  # the candidate's own
        assert o["usage"]["judge"] == {
            "calls": 1,
            "tokens_in": 300,
            "tokens_out": 20,
            "tokens_cached": 4,
            "tokens_reasoning": 3,
            "cost": None,
        }
    totals = json.loads((tmp_path / "res" / "r" / "run.json").read_text())["accounting"]
    assert totals["roles"]["judge"]["tokens_in"] == 600 and totals["roles"]["candidate"]["tokens_in"] == 80
    assert totals["roles"]["judge"]["money"] == pytest.approx(2 * (296 * 10 + 4 * 10 + 20 * 10) / 1e6)
    assert totals["roles"]["candidate"]["money_label"] == NO_PRICES  # m has no price here: the total is n/a
    assert totals["total_money"] is None
    parquet = read_run(tmp_path / "res" / "r").outcomes()
    assert parquet["usage"].iloc[0]["judge"]["tokens_in"] == 300


# ------------------------------------------------------------------------ the paired change per row


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_mean_diff_is_scipys_paired_t_interval(seed: int) -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    base = rng.normal(500, 80, 40)
    cand = base + rng.normal(25, 30, 40)
    got = paired_mean_diff(base, cand, confidence=0.9).iloc[0]
    ci = sps.ttest_rel(cand, base).confidence_interval(0.9)  # R: t.test(cand, base, paired = TRUE, conf.level = 0.9)
    assert got["n"] == 40 and got["diff"] == pytest.approx(float(np.mean(cand - base)))
    assert (got["ci_low"], got["ci_high"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    one = paired_mean_diff([1.0, None], [3.0, 4.0]).iloc[0]  # a pair missing a side is left out
    assert one["n"] == 1 and one["diff"] == 2.0 and np.isnan(one["ci_low"])


def test_paired_usage_pairs_rows_over_their_answered_repeats() -> None:
    base = hand_run()
    cand = base.assign(tokens_in=base["tokens_in"] + 10, latency_ms=base["latency_ms"] * 2)
    change = paired_usage(base, cand)
    tokens, latency = change.loc["tokens"], change.loc["latency_ms"]
    # rows a, b, c each have answered repeats on both sides: +10 tokens in every repeat
    assert tokens["n"] == 3 and tokens["diff"] == pytest.approx(10.0) and tokens["ci_low"] == pytest.approx(10.0)
    # per row mean latency (c: its ERROR's 9000 left out): a 1500, b 3500, c 500, doubled
    assert latency["base_mean"] == pytest.approx((1500 + 3500 + 500) / 3) and latency["diff"] == pytest.approx(
        (1500 + 3500 + 500) / 3
    )
    line = paired_usage_line(change)
    assert line.startswith(
        "usage per row, candidate - base (paired t, 95% CI): tokens +10.0 [+10.0, +10.0] over 3 rows"
    )


def test_compare_prints_the_paired_change_in_tokens_and_latency(tmp_path: Path, capsys) -> None:
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok", tokens_in=40, tokens_out=9)
        assert run_cli(tmp_path / "a", srv.url, run_id="base") == 0
        srv.default = Reply.text("ok", tokens_in=70, tokens_out=9)
        assert run_cli(tmp_path / "b", srv.url, run_id="cand") == 0
    capsys.readouterr()
    runs = [str(tmp_path / "a" / "res" / "base"), str(tmp_path / "b" / "res" / "cand")]
    main(["compare", *runs])
    assert "usage per row, candidate - base (paired t, 95% CI): tokens +30.0 [+30.0, +30.0] over 2 rows" in (
        capsys.readouterr().out
    )
    main(["compare", *runs, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(u["measure"], u["n"], u["diff"]) for u in doc["usage_change"]][0] == ("tokens", 2, 30.0)


def test_the_simulated_users_usage_is_recorded_apart_from_the_candidates(tmp_path: Path) -> None:
    scenario = {"scenario": {"starting_prompt": "hello", "plan": "ask twice"}, "expect": {"must_contain": ["ok"]}}
    ds = write_dataset(tmp_path, [row("a", scenario)])
    with FakeModelServer() as cand, FakeModelServer() as user:
        cand.default = Reply.text("ok", tokens_in=40, tokens_out=9)
        user.default = Reply.text("and again?", tokens_in=70, tokens_out=4, usage=DETAILS)
        argv = ["run", str(ds), "--provider", "openai", "--base-url", cand.url, "--model", "m"]
        argv += ["--user-simulator", "openai", "--user-model", "u", "--user-base-url", user.url, "--max-turns", "3"]
        assert main([*argv, "--results-dir", str(tmp_path / "res"), "--run-id", "r", "--quiet"]) == 0
        assert user.count() == 2  # before turns 2 and 3
    (o,) = outcomes(tmp_path)
    assert (o["tokens_in"], o["tokens_out"]) == (120, 27)  # the candidate's three turns
    assert o["usage"] == {
        "simulator": {
            "calls": 2,
            "tokens_in": 140,
            "tokens_out": 8,
            "tokens_cached": 8,
            "tokens_reasoning": 6,
            "cost": None,
        }
    }
    totals = json.loads((tmp_path / "res" / "r" / "run.json").read_text())["accounting"]
    assert totals["roles"]["simulator"]["calls"] == 2 and totals["roles"]["candidate"]["tokens_in"] == 120


def test_adk_usage_metadata_counts_cached_and_thought_tokens() -> None:
    from types import SimpleNamespace

    from goldenkit.providers._adk_events import TurnCollector

    def meta(**kw: object) -> SimpleNamespace:
        counts = dict.fromkeys(
            ("prompt_token_count", "candidates_token_count", "cached_content_token_count", "thoughts_token_count")
        )
        return SimpleNamespace(**{**counts, **kw})

    col = TurnCollector()
    col.add_usage(meta(prompt_token_count=100, candidates_token_count=10, cached_content_token_count=60))
    col.add_usage(meta(prompt_token_count=120, candidates_token_count=5, thoughts_token_count=30))
    # Gemini counts thoughts apart from the candidates: both are output tokens, the thoughts reasoning too
    assert (col.tokens_in, col.tokens_out, col.tokens_cached, col.tokens_reasoning) == (220, 45, 60, 30)
    bare = TurnCollector()
    bare.add_usage(meta())
    assert (bare.tokens_in, bare.tokens_out, bare.tokens_cached, bare.tokens_reasoning) == (None, None, None, None)


def test_merged_shards_count_what_the_whole_run_cost(tmp_path: Path) -> None:
    with FakeModelServer() as srv:
        srv.default = Reply.text("ok", tokens_in=40, tokens_out=9)
        for k in (1, 2):  # the same dataset and results folder: run_cli writes it again, identical
            assert run_cli(tmp_path, srv.url, "--shard", f"{k}/2", run_id=f"s{k}") == 0
    res = tmp_path / "res"
    assert main(["merge", "all", "s1", "s2", "--results-dir", str(res)]) == 0
    totals = json.loads((res / "all" / "run.json").read_text())["accounting"]
    parts = [json.loads((res / s / "run.json").read_text())["accounting"] for s in ("s1", "s2")]
    calls = [p["roles"]["candidate"]["calls"] for p in parts if p["roles"]]
    assert totals["roles"]["candidate"]["tokens_in"] == 80 and totals["roles"]["candidate"]["calls"] == sum(calls) == 2


def test_the_compare_report_shows_the_paired_change_or_says_a_baseline_keeps_no_usage() -> None:
    from goldenkit import report

    class Side:
        def __init__(self, df: pd.DataFrame) -> None:
            self.df = df

        def outcomes(self, columns: list[str]) -> pd.DataFrame:
            return self.df[columns]

    base = hand_run()
    table = report.usage_change_table(Side(base), Side(base.assign(tokens_out=base["tokens_out"] * 2)))
    # tokens out doubled: per row a 11 -> 22, b 20 -> 40, c 5 -> 10 more tokens, mean +12.0
    assert table.loc["tokens (in + out)", "change (candidate − base)"] == 12.0
    assert table.loc["latency ms", "change (candidate − base)"] == 0.0
    assert "keeps verdicts, not usage" in report.usage_change_table(object(), Side(base))
