"""What a run cost, reviewed as a user would meet it: conversations, retries, errors, the paired interval."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import row, write_dataset
from fakeserver import FakeModelServer, Reply

from goldenkit.cli import main
from goldenkit.errors import InputError
from goldenkit.results import iter_jsonl
from goldenkit.results._usage_change import paired_usage, paired_usage_line
from goldenkit.stats import OVERALL, paired_mean_diff

SCENARIO = {"scenario": {"starting_prompt": "hello", "plan": "ask twice"}, "expect": {"must_contain": ["ok"]}}
REFUSED = '{"error": {"message": "too long", "code": "context_length_exceeded"}}'


def converse(tmp_path: Path, cand: FakeModelServer, user: FakeModelServer) -> tuple[dict, dict]:
    """One scenario row of three turns against ``cand`` with the simulated user ``user``: its outcome and
    run.json's accounting."""
    ds = write_dataset(tmp_path, [row("a", SCENARIO)])
    argv = ["run", str(ds), "--provider", "openai", "--base-url", cand.url, "--model", "m", "--max-turns", "3"]
    argv += ["--user-simulator", "openai", "--user-model", "u", "--user-base-url", user.url]
    main([*argv, "--results-dir", str(tmp_path / "res"), "--run-id", "r", "--quiet"])
    (outcome,) = iter_jsonl(tmp_path / "res" / "r" / "outcomes.jsonl")
    return outcome, json.loads((tmp_path / "res" / "r" / "run.json").read_text())["accounting"]


def test_the_candidates_calls_are_its_own_not_the_simulated_users(tmp_path: Path) -> None:
    with FakeModelServer() as cand, FakeModelServer() as user:
        cand.default = Reply.text("ok", tokens_in=40, tokens_out=9)
        replies = iter([Reply.status(503), Reply.text("again?", tokens_in=70, tokens_out=4)])
        user.responder = lambda req: next(replies, Reply.text("and again?", tokens_in=70, tokens_out=4))
        outcome, totals = converse(tmp_path, cand, user)
        sent, asked = cand.count(), user.count()
    assert (sent, asked) == (3, 3)  # three turns; the user asked twice, the first ask retried once
    assert outcome["attempts"] == 6  # every call of the conversation, as the outcome has always said
    assert outcome["usage"]["simulator"]["calls"] == 3  # the failed attempt is a call too
    assert totals["roles"]["candidate"]["calls"] == 3 and totals["roles"]["simulator"]["calls"] == 3
    assert (totals["roles"]["simulator"]["tokens_in"], totals["roles"]["candidate"]["tokens_in"]) == (140, 120)


def test_a_conversation_that_errors_keeps_what_its_earlier_turns_spent(tmp_path: Path) -> None:
    with FakeModelServer() as cand, FakeModelServer() as user:
        turns = iter([Reply.text("ok", tokens_in=40, tokens_out=9)] * 2)
        cand.responder = lambda req: next(turns, Reply.status(400, body=REFUSED))
        user.default = Reply.text("and again?", tokens_in=70, tokens_out=4)
        outcome, totals = converse(tmp_path, cand, user)
    assert (outcome["verdict"], outcome["error_kind"]) == ("ERROR", "refused")
    # turns 1 and 2 were answered and counted by the server before turn 3 was refused
    assert (outcome["tokens_in"], outcome["tokens_out"]) == (80, 18)
    assert outcome["usage"]["simulator"]["tokens_in"] == 140
    cand_figures, sim = totals["roles"]["candidate"], totals["roles"]["simulator"]
    assert (cand_figures["calls"], cand_figures["tokens_in"], sim["calls"], sim["tokens_out"]) == (3, 80, 2, 8)


def run_rows(tmp_path: Path, run_id: str, replies: list[Reply], n: int) -> Path:
    """A run of ``n`` rows against a server answering ``replies`` in turn (then their last)."""
    ds = write_dataset(
        tmp_path, [row(f"r{i}", {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}}) for i in range(n)]
    )
    with FakeModelServer() as srv:
        queue = iter(replies)
        srv.responder = lambda req: next(queue, replies[-1])
        argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--max-in-flight", "1"]
        assert main([*argv, "--results-dir", str(tmp_path / "res"), "--run-id", run_id, "--quiet"]) == 0
    return tmp_path / "res" / run_id


def strict_json(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_compare_json_stays_json_when_the_paired_change_has_no_interval(tmp_path: Path, capsys) -> None:
    base = run_rows(tmp_path, "base", [Reply.text("ok", tokens_in=40, tokens_out=9)], 1)
    cand = run_rows(tmp_path, "cand", [Reply.text("ok", tokens_in=50, tokens_out=9)], 1)
    capsys.readouterr()
    main(["compare", str(base), str(cand), "--json"])
    doc = strict_json(capsys.readouterr().out)  # NaN is not JSON: one paired row has no interval
    tokens = doc["usage_change"][0]
    assert (tokens["measure"], tokens["n"], tokens["diff"]) == ("tokens", 1, 10.0)
    assert tokens["ci_low"] is None and tokens["ci_high"] is None


# Reference values: R's t.test(cand, base, paired = TRUE, conf.level = CONF)$conf.int, computed independently
# with scipy.stats.ttest_rel(cand, base).confidence_interval(CONF)
BASE = [812, 1033, 640, 977, 1210, 455, 890]
CAND = [790, 1101, 702, 1015, 1188, 530, 951]
R_CONF_INT = {0.95: (-1.672867024773332, 75.95858131048763), 0.9: (6.317901294461137, 67.96781299125314)}


@pytest.mark.parametrize("confidence", sorted(R_CONF_INT))
def test_paired_mean_diff_matches_r_t_test_paired(confidence: float) -> None:
    got = paired_mean_diff(BASE, CAND, confidence).iloc[0]
    assert (got["n"], got["dropped"]) == (7, 0)
    assert got["diff"] == pytest.approx(260 / 7, abs=1e-9)  # sum of the differences: 260
    low, high = R_CONF_INT[confidence]
    assert abs(got["ci_low"] - low) < 1e-9 and abs(got["ci_high"] - high) < 1e-9


def test_paired_mean_diff_counts_the_pairs_it_leaves_out_and_refuses_what_is_not_a_number() -> None:
    got = paired_mean_diff([*BASE, None, 5.0, np.nan], [*CAND, 7.0, float("nan"), pd.NA]).iloc[0]
    assert (got["n"], got["dropped"]) == (7, 3) and abs(got["ci_low"] - R_CONF_INT[0.95][0]) < 1e-9
    one = paired_mean_diff([1.0], [4.0]).iloc[0]
    assert (one["n"], one["diff"]) == (1, 3.0) and np.isnan(one["ci_low"]) and np.isnan(one["ci_high"])
    flat = paired_mean_diff([10, 20, 30], [15, 25, 35]).iloc[0]  # no spread: the interval is the mean
    assert (flat["diff"], flat["ci_low"], flat["ci_high"]) == (5.0, 5.0, 5.0)
    for bad, said in [("12", "base[1] is '12', not a number"), (True, "base[1] is True"), (np.inf, "finite")]:
        with pytest.raises(InputError, match=re.escape(said)):
            paired_mean_diff([1.0, bad], [2.0, 3.0])


def test_the_paired_change_says_how_many_rows_lacked_the_measure_on_a_side() -> None:
    def side(tokens_in: list[object], verdicts: list[str]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "row_id": ["a", "b", "c", "d"],
                "verdict": verdicts,
                "tokens_in": tokens_in,
                "tokens_out": [5, 5, 5, 5],
                "latency_ms": [100.0, 200.0, 300.0, 400.0],
            }
        )

    base = side([10, 20, 30, 40], ["PASS"] * 4)
    # c: the server reported no usage; d: an ERROR (no answer to measure)
    cand = side([12, 25, None, None], ["PASS", "PASS", "PASS", "ERROR"])
    change = paired_usage(base, cand)
    assert (change.loc["tokens", "n"], change.loc["tokens", "dropped"]) == (2, 2)
    assert (change.loc["latency_ms", "n"], change.loc["latency_ms", "dropped"]) == (3, 1)
    line = paired_usage_line(change)
    assert "tokens +3.5 [" in line and "over 2 rows, 2 rows without it on a side left out" in line
    assert "over 3 rows, 1 row without it on a side left out" in line


def test_a_total_that_is_n_a_names_the_role_without_prices() -> None:
    from goldenkit._pricing import Pricing
    from goldenkit.results._accounting import accounting, cost_line, run_totals

    judge = {"judge": {"calls": 1, "tokens_in": 30, "tokens_out": 3, "cost": None}}
    df = pd.DataFrame(
        {
            "row_id": ["a", "b"],
            "repeat": [0, 0],
            "slice": ["s", "s"],
            "verdict": ["PASS", "PASS"],
            "attempts": [1, 1],
            "tokens_in": [100, 100],
            "tokens_out": [10, 10],
            "cost": [None, None],
            "latency_ms": [1000.0, 1000.0],
            "usage": [judge, judge],
            "agent_version": [{"model_id": "m"}] * 2,
        }
    )
    prices = Pricing.from_config({"m": {"input": 1.0, "output": 2.0, "source": "list", "date": "2026-11-01"}}, "g")
    run = accounting(df, prices, by=None, models={"judge": "j"}).loc[OVERALL]
    assert run["money"] == pytest.approx(240e-6) and run["judge_money_label"] == "n/a (no prices)"
    # the candidate is priced: "no prices" alone would say the [pricing] was not read
    assert run["total_money"] is None and run["total_money_label"] == "n/a (judge: no prices)"
    assert cost_line(run_totals(df, prices, models={"judge": "j"})).endswith("; money n/a (judge: no prices)")
    neither = accounting(df, by=None, models={"judge": "j"}).loc[OVERALL]
    assert neither["total_money_label"] == "n/a (no prices)"  # nothing priced at all
    part = accounting(df.assign(cost=[0.5, None]), prices, by=None, models={"judge": "j"}).loc[OVERALL]
    assert part["money_label"] == "[pricing] list 2026-11-01 + provider"
    some = accounting(df.assign(cost=[0.5, None]), by=None, models={"judge": "j"}).loc[OVERALL]
    assert some["total_money_label"] == "n/a (candidate: 1 of 2 outcomes unpriced; judge: no prices)"
    alone = accounting(df.assign(usage=None), by=None).loc[OVERALL]
    assert alone["total_money_label"] == "n/a (no prices)"


def test_a_price_dated_as_toml_writes_dates_is_read_and_a_date_in_another_form_is_refused(tmp_path: Path) -> None:
    from goldenkit.config import pricing, read_config
    from goldenkit.errors import ConfigError

    path = tmp_path / "goldenkit.toml"
    path.write_text('[pricing."m"]\ninput = 1\noutput = 2\nsource = "list"\ndate = 2026-11-01\n', encoding="utf-8")
    assert pricing(read_config(path)).price("m").label == "[pricing] list 2026-11-01"
    path.write_text('[pricing]\nsource = "list"\ndate = 2026-11-02\n[pricing."m"]\ninput = 1\noutput = 2\n')
    assert pricing(read_config(path)).price("m").label == "[pricing] list 2026-11-02"
    for date, at in [('"20261101"', '[pricing."m"] date'), ("2026-11-01T10:00:00", '[pricing."m"] date')]:
        path.write_text(f'[pricing."m"]\ninput = 1\noutput = 2\nsource = "list"\ndate = {date}\n', encoding="utf-8")
        with pytest.raises(ConfigError, match=re.escape(at)):
            read_config(path)
    path.write_text('[pricing]\nsource = "list"\ndate = "2026-1-2"\n[pricing."m"]\ninput = 1\noutput = 2\n')
    with pytest.raises(ConfigError, match=re.escape("[pricing] date: '2026-1-2' is not a date (write YYYY-MM-DD)")):
        read_config(path)


def test_money_that_is_n_a_for_want_of_token_counts_does_not_say_there_are_no_prices() -> None:
    from goldenkit._pricing import Pricing
    from goldenkit.results._accounting import accounting

    # a server that sent usage details but no totals: cached 4 of an unknown number of input tokens
    df = pd.DataFrame(
        {
            "row_id": ["a", "b", "c"],
            "repeat": [0, 0, 0],
            "slice": ["s", "s", "t"],
            "verdict": ["PASS"] * 3,
            "attempts": [1, 1, 1],
            "tokens_in": [None, None, 100],
            "tokens_out": [None, None, 10],
            "tokens_cached": [4, 4, None],
            "cost": [None, None, None],
            "latency_ms": [1.0, 1.0, 1.0],
            "agent_version": [{"model_id": "m"}, {"model_id": "m"}, {"model_id": "other"}],
        }
    )
    prices = Pricing.from_config({"m": {"input": 1.0, "output": 2.0, "source": "list", "date": "2026-11-01"}}, "g")
    table = accounting(df, prices)
    assert table.loc["s", "money"] is None and table.loc["s", "money_label"] == "n/a (no token counts to price)"
    assert table.loc["t", "money_label"] == "n/a (no prices)"  # "other" has none
    assert table.loc[OVERALL, "money_label"] == "n/a (no prices or no token counts)"
    part = accounting(df.assign(tokens_in=[None, 50, 100], tokens_out=[None, 5, 10]), prices).loc[OVERALL]
    assert part["money_label"] == "n/a (2 of 3 outcomes unpriced or uncounted)"
    counted = accounting(df.assign(tokens_in=[None, 50, 100], tokens_out=[None, 5, 10]).iloc[:2], prices)
    assert counted.loc[OVERALL, "money_label"] == "n/a (1 of 2 outcomes without token counts)"


@pytest.mark.parametrize(("field", "value"), [("cost", -3.0), ("tokens_in", -100), ("cost", float("nan"))])
def test_a_recorded_fixture_with_a_negative_or_nan_count_or_price_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, field: str, value: float
) -> None:
    ds = write_dataset(tmp_path, [row("a", {"prompt": "q", "expect": {"must_contain": ["ok"]}})])
    (tmp_path / "review_cost_rows.py").write_text("def agent(case):\n    return 'ok ' + case.prompt\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", str(ds), "--provider", "callable", "--callable", "review_cost_rows:agent", "--record", "fx"]
    assert main([*argv, "--run-id", "a", "--quiet"]) == 0
    line = json.loads((tmp_path / "fx" / "fixtures.jsonl").read_text()) | {field: value}
    (tmp_path / "fx" / "fixtures.jsonl").write_text(json.dumps(line) + "\n")  # json writes nan as NaN
    capsys.readouterr()
    code = main(["run", str(ds), "--provider", "fixtures", "--fixtures", "fx", "--run-id", "b", "--quiet"])
    # before: "cost: -100 tokens in, ...; money $-3.0000 (provider)"
    err = capsys.readouterr().err.strip()
    what = "an integer" if field == "tokens_in" else "a number"
    assert (code, err) == (
        1,
        f"goldenkit: fx/fixtures.jsonl:1: field {field} must be {what} >= 0 or null, got {value!r}",
    )
    assert not (tmp_path / "results" / "b").exists()


@pytest.mark.parametrize("stream", [False, True])
def test_an_ollama_count_that_is_not_a_count_is_not_reported_and_the_answer_is_kept(
    tmp_path: Path, stream: bool
) -> None:
    ds = write_dataset(tmp_path, [row("a", {"prompt": "q", "expect": {"must_contain": ["ok"]}})])
    done = {"model": "m", "created_at": "2026-01-01T00:00:00Z", "done": True, "done_reason": "stop"}
    lines = [{**done, "message": {"role": "assistant", "content": "ok"}, "prompt_eval_count": "12", "eval_count": -3}]
    if stream:  # the counts come on the last line of a stream
        lines = [
            {**done, "done": False, "message": {"role": "assistant", "content": "ok"}},
            {**lines[0], "message": {}},
        ]
    body = "".join(json.dumps(x) + "\n" for x in lines).encode()
    with FakeModelServer() as srv:
        srv.responder = lambda req: Reply(kind="malformed", body=body, content_type="application/x-ndjson")
        argv = ["run", str(ds), "--provider", "ollama", "--base-url", srv.url, "--model", "m", "--run-id", "r"]
        # before: "provider ollama raised TypeError: unsupported operand type(s) for +: 'int' and 'str'", INVALID
        assert main([*argv, *(["--stream"] if stream else []), "--results-dir", str(tmp_path / "res"), "--quiet"]) == 0
    (outcome,) = iter_jsonl(tmp_path / "res" / "r" / "outcomes.jsonl")
    assert (outcome["verdict"], outcome["tokens_in"], outcome["tokens_out"]) == ("PASS", None, None)


def test_an_agents_usage_map_with_a_count_that_is_not_a_count_is_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = write_dataset(tmp_path, [row("a", {"prompt": "q", "expect": {"must_contain": ["ok"]}})])
    agent = (
        "from goldenkit.records import Response, TurnOutput\n\n"
        "def agent(case):\n"
        "    return Response(turns=[TurnOutput(text='ok')], usage={'judge': {'calls': 1, 'tokens_in': -5}})\n"
    )
    (tmp_path / "review_usage_agent.py").write_text(agent)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["run", str(ds), "--provider", "callable", "--callable", "review_usage_agent:agent", "--run-id", "b"]
    assert main([*argv, "--quiet"]) == 2  # before: PASS, and the run's judge spent -5 tokens
    (out,) = iter_jsonl(tmp_path / "results" / "b" / "outcomes.jsonl")
    assert (out["verdict"], out["error_kind"]) == ("ERROR", "agent")
    assert out["detail"].endswith(
        "returned a Response whose usage['judge']['tokens_in'] must be a number >= 0 or None, got -5"
    )


def test_a_small_sum_of_money_is_not_shown_as_zero() -> None:
    from goldenkit.results._accounting import cost_line, totals_text

    def totals(money: float) -> dict:
        figures = {"calls": 1, "tokens_in": 40, "tokens_out": 9}
        return {"total_money": money, "total_money_label": "[pricing] list 2026-11-01", "roles": {"candidate": figures}}

    # 40 tokens in and 9 out at $0.15 and $0.60 per million: $0.0000114
    assert cost_line(totals(11.4e-6)).endswith("; money under $0.0001 ([pricing] list 2026-11-01)")
    assert totals_text(totals(11.4e-6)) == "40 in / 9 out tokens, 1 calls; under $0.0001 ([pricing] list 2026-11-01)"
    assert cost_line(totals(0.0)).endswith("; money $0.0000 ([pricing] list 2026-11-01)")  # free is shown as free
    assert cost_line(totals(0.00012)).endswith("; money $0.0001 ([pricing] list 2026-11-01)")
