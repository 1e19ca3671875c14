"""The live path against a real model server: sampling noise, seeds, record/replay, tools, limits.

Each test prints the numbers it saw (``pytest -s`` shows them). Against the CI
server (a random-weight model) answers are gibberish, so the datasets are built
from checks whose pass probability per answer is between 0 and 1: that is what
makes repeats disagree at temperature 0.8.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from livekit import LiveConfig, make_provider, require_live, show, write_dataset

from goldenkit.cli import main
from goldenkit.compare import compare_runs
from goldenkit.dataset import read_dataset
from goldenkit.results import outcomes_df, read_run
from goldenkit.runner import RUN_KEY_FIELDS, run_eval
from goldenkit.schema import ERROR, FAIL, PASS
from goldenkit.stats import flaky_rows

pytestmark = pytest.mark.live
require_live()

QUIET = {"progress": False}

# Each row passes when the answer contains one given letter. On the CI model the
# answers are random text in which "t", "a" and "h" each appear in about half of
# the answers (measured: 0.48, 0.48, 0.46 over 300 answers at temperature 0.8 and
# max_tokens 24), so a row's three repeats disagree with probability about
# 1 - p^3 - (1 - p)^3 = 0.75.
LETTERS = "tah"


def letter_rows(n: int, *, slices: int = 2) -> list[dict]:
    """Rows that pass when the answer contains a letter (rows differ in letter and prompt)."""
    rows = []
    for i in range(n):
        letter = LETTERS[i % len(LETTERS)]
        rows.append(
            {
                "id": f"r{i:03d}",
                "slice": f"s{i % slices}",
                "case": {
                    "prompt": f"Question {i}: write a short sentence with the letter {letter}.",
                    "expect": {"must_contain_any": [letter]},
                },
            }
        )
    return rows


def run_cli(args: list[str]) -> int:
    return main(["run", *args, "--quiet"])


def _cli_common(live: LiveConfig, results: Path, run_id: str) -> list[str]:
    return [*live.cli_args(), "--results-dir", str(results), "--run-id", run_id, "--max-in-flight", "4"]


# ------------------------------------------------------------------ repeats at temperature 0.8


def test_repeats_at_temperature_0_8_complete_with_tokens_and_flaky_rows(live, tmp_path):
    n_rows, repeats = 40, 3
    ds = write_dataset(tmp_path, letter_rows(n_rows))
    provider = make_provider(live, temperature=0.8, max_tokens=24)
    s = run_eval(
        read_dataset(ds), provider, ["contract"], repeats=repeats, results_dir=tmp_path / "r", max_in_flight=4, **QUIET
    )
    df = outcomes_df(s.path)

    # one outcome per row x repeat, nothing missing, nothing twice
    assert s.validity == "VALID", s.line()
    assert len(df) == n_rows * repeats
    assert not df.duplicated(["row_id", "repeat"]).any()
    assert sorted(df["repeat"].unique()) == [0, 1, 2]
    assert (df.groupby("row_id").size() == repeats).all()
    assert set(df["verdict"]) <= {PASS, FAIL}

    # token usage as reported by the server, on every outcome
    assert df["tokens_in"].notna().all() and df["tokens_out"].notna().all()
    assert (df["tokens_in"] > 0).all() and (df["tokens_out"] >= 1).all()
    assert (df["tokens_out"] <= 24).all()  # max_tokens honoured
    assert df["latency_ms"].gt(0).all()

    # flaky rows: computed here from the raw verdicts, and by the stats layer
    by_row = df.assign(p=df["verdict"].eq(PASS)).groupby("row_id")["p"].agg(["sum", "count"])
    expected_flaky = set(by_row.index[(by_row["sum"] > 0) & (by_row["sum"] < by_row["count"])])
    flaky = flaky_rows(df)
    assert set(flaky["row_id"]) == expected_flaky
    assert (flaky["pass_fraction"].between(0, 1, inclusive="neither")).all()
    distinct = df.groupby("row_id")["response"].nunique()
    show(
        "temperature 0.8 x 3 repeats",
        rows=n_rows,
        outcomes=len(df),
        PASS=int((df["verdict"] == PASS).sum()),
        FAIL=int((df["verdict"] == FAIL).sum()),
        tokens_in=int(df["tokens_in"].sum()),
        tokens_out=int(df["tokens_out"].sum()),
        rows_with_3_distinct_answers=int((distinct == repeats).sum()),
        flaky_rows=len(flaky),
        calls_per_s=round(s.calls / s.elapsed_s, 1),
    )
    # Sampling noise is real: repeats of a row differ.
    assert (distinct > 1).mean() > 0.5
    if live.random_model:
        # On the CI model about 3 rows in 4 are flaky (29 of 40 seen). Even at 1 in 2, fewer
        # than 5 of 40 has probability 1.0e-7 (binomial); a capable model may legitimately
        # always write the letter asked for, so this is asserted for the CI model only.
        assert len(flaky) >= 5


# ------------------------------------------------------------------ temperature 0 and a seed


def test_temperature_0_with_seed_is_identical_and_compares_unchanged(live, tmp_path):
    n_rows, repeats = 24, 3
    ds = write_dataset(tmp_path, letter_rows(n_rows, slices=3))
    runs = []
    for run_id in ("det-a", "det-b"):
        provider = make_provider(live, temperature=0, seed=1234, max_tokens=24)
        s = run_eval(
            read_dataset(ds),
            provider,
            ["contract"],
            repeats=repeats,
            results_dir=tmp_path / "r",
            run_id=run_id,
            **QUIET,
        )
        assert s.validity == "VALID", s.line()
        runs.append(read_run(s.path))
    a, b = (r.outcomes() for r in runs)

    # repeats of a row: one distinct answer; and the same answer in both runs
    assert (a.groupby("row_id")["response"].nunique() == 1).all()
    merged = a.merge(b, on=["row_id", "repeat"], suffixes=("_a", "_b"))
    assert len(merged) == n_rows * repeats
    assert (merged["response_a"] == merged["response_b"]).all()
    assert (merged["verdict_a"] == merged["verdict_b"]).all()
    assert (merged["tokens_out_a"] == merged["tokens_out_b"]).all()
    assert a["response"].nunique() > 1  # different prompts, different answers

    cmp = compare_runs(runs[0], runs[1])
    counts = cmp.status_counts()
    unchanged = counts["UNCHANGED_PASS"] + counts["UNCHANGED_FAIL"]
    assert unchanged == n_rows, counts
    assert cmp.b == 0 and cmp.c == 0
    assert cmp.p_value == 1.0
    assert (cmp.table["p_val"] == 1.0).all()
    assert len(cmp.flips) == 0
    assert flaky_rows(a).empty
    show(
        "temperature 0, seed 1234",
        rows=n_rows,
        repeats=repeats,
        distinct_answers=a["response"].nunique(),
        UNCHANGED_PASS=counts["UNCHANGED_PASS"],
        UNCHANGED_FAIL=counts["UNCHANGED_FAIL"],
        b=cmp.b,
        c=cmp.c,
        p=cmp.p_value,
        slice_p=list(cmp.table["p_val"]),
    )


# ------------------------------------------------------------------ --record, then replay


def test_record_then_replay_gives_identical_verdicts(live, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    n_rows = 20
    ds = write_dataset(tmp_path, letter_rows(n_rows))
    fx = tmp_path / "recorded"
    rc = run_cli(
        [
            str(ds),
            *_cli_common(live, tmp_path / "r", "live-rec"),
            "--temperature",
            "0.8",
            "--max-tokens",
            "24",
            "--repeats",
            "2",
            "--record",
            str(fx),
        ]
    )
    assert rc == 0, capsys.readouterr()
    rc = run_cli(
        [
            str(ds),
            "--provider",
            "fixtures",
            "--fixtures",
            str(fx),
            "--repeats",
            "2",
            "--results-dir",
            str(tmp_path / "r"),
            "--run-id",
            "replay",
        ]
    )
    assert rc == 0, capsys.readouterr()
    live_run, replay = read_run(tmp_path / "r" / "live-rec"), read_run(tmp_path / "r" / "replay")
    lo, ro = live_run.outcomes(), replay.outcomes()
    m = lo.merge(ro, on=["row_id", "repeat"], suffixes=("_live", "_replay"))
    assert len(m) == len(lo) == len(ro) == n_rows * 2
    assert (m["verdict_live"] == m["verdict_replay"]).all()
    assert (m["response_live"] == m["response_replay"]).all()
    assert (m["tokens_in_live"] == m["tokens_in_replay"]).all()
    assert (m["tokens_out_live"] == m["tokens_out_replay"]).all()
    # the recorded latency is replayed too
    assert (m["latency_ms_live"].round(3) == m["latency_ms_replay"].round(3)).all()

    # the run key is the same except for the mode
    differing = [
        k
        for k in RUN_KEY_FIELDS
        if json.dumps(live_run.manifest[k], sort_keys=True, default=str)
        != json.dumps(replay.manifest[k], sort_keys=True, default=str)
    ]
    differing = [k for k in differing if not (k == "dataset" and _same_dataset(live_run.manifest, replay.manifest))]
    assert differing == ["mode"], differing
    assert (live_run.manifest["mode"], replay.manifest["mode"]) == ("live", "fixtures")
    cmp = compare_runs(live_run, replay)
    assert cmp.b == 0 and cmp.c == 0 and cmp.p_value == 1.0
    assert "mode differs (allowed): live vs fixtures" in cmp.notes
    assert cmp.status_counts()["UNCHANGED_PASS"] + cmp.status_counts()["UNCHANGED_FAIL"] == n_rows
    show(
        "record then replay",
        outcomes=len(m),
        PASS=int((m["verdict_live"] == PASS).sum()),
        FAIL=int((m["verdict_live"] == FAIL).sum()),
        identical_verdicts=int((m["verdict_live"] == m["verdict_replay"]).sum()),
        key_differs=differing,
        agent_version=live_run.manifest["agent_version"]["prompt_sha256"][:12],
    )


def _same_dataset(a: dict, b: dict) -> bool:
    return all(a["dataset"].get(k) == b["dataset"].get(k) for k in ("name", "version", "sha256"))


# ------------------------------------------------------------------ tool calls


TOOLS = [
    {
        "name": "lookup_order",
        "description": "Look up an order by its id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    },
    {
        "name": "cancel_order",
        "description": "Cancel an order.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    },
]


def _tool_rows() -> list[dict]:
    base = {"prompt": "Where is my order A-1?", "tools": TOOLS}
    return [
        # the named choice forces lookup_order: the name matches (args ignored) -> PASS
        # (unless max_tokens cut the arguments into invalid JSON, which never matches)
        {"id": "named", "case": {**base, "expect": {"tools": [{"name": "lookup_order"}], "tool_args": "ignore"}}},
        # expects another tool -> FAIL, the reason names what was called instead
        {"id": "other", "case": {**base, "expect": {"tools": [{"name": "cancel_order"}], "tool_args": "ignore"}}},
        # exact args: the gibberish order id does not match -> FAIL naming the args
        {"id": "args", "case": {**base, "expect": {"tools": [{"name": "lookup_order", "args": {"order_id": "A-1"}}]}}},
    ]


def _needs_tool_choice(live: LiveConfig) -> None:
    if live.provider != "openai":
        pytest.skip("a named tool_choice is an OpenAI-protocol field (Ollama has none)")


def test_named_tool_choice_gives_tool_calls_the_trajectory_grader_scores(live, tmp_path):
    _needs_tool_choice(live)
    ds = write_dataset(tmp_path, _tool_rows())
    provider = make_provider(live, temperature=0.8, max_tokens=200, tool_choice="lookup_order", max_tool_steps=1)
    s = run_eval(read_dataset(ds), provider, ["trajectory"], repeats=3, results_dir=tmp_path / "r", **QUIET)
    assert s.validity == "VALID", s.line()
    df = outcomes_df(s.path)
    assert len(df) == 9
    calls = df["trajectory"].map(lambda t: [c["name"] for turn in t for c in turn["tool_calls"]])
    assert (calls.map(lambda c: c == ["lookup_order"])).all(), calls.tolist()
    args = df["trajectory"].map(lambda t: t[0]["tool_calls"][0]["args"])
    valid_json = args.map(lambda a: "_invalid_json" not in a)
    grades = df["graders"].map(lambda g: g["trajectory"])
    v = df.set_index(["row_id", "repeat"])["verdict"]
    named = df["row_id"] == "named"
    # the name matches with args ignored -> PASS; arguments cut off into invalid JSON never match -> FAIL
    assert (df.loc[named & valid_json, "verdict"] == PASS).all()
    assert (df.loc[named & ~valid_json, "verdict"] == FAIL).all()
    assert (v.loc["other"] == FAIL).all()
    if live.random_model:
        assert (v.loc["args"] == FAIL).all()  # a random order id is not "A-1"
    other_reasons = grades[df["row_id"] == "other"].map(lambda g: g["reason"])
    assert other_reasons.str.contains("missing \\[cancel_order", regex=True).all()
    assert grades[named & valid_json].map(lambda g: g["score"] == 1.0).all()
    assert grades[df["row_id"] == "other"].map(lambda g: g["score"] == 0.0).all()
    # the recorded tool answer the loop gave back (no response recorded -> a visible tool error)
    responses = df["trajectory"].map(lambda t: t[0]["tool_responses"][0])
    assert responses.map(lambda r: r["name"] == "lookup_order").all()
    show(
        "named tool_choice lookup_order",
        outcomes=len(df),
        tool_calls=int(calls.map(len).sum()),
        valid_json_args=f"{int(valid_json.sum())}/{len(df)}",
        example_args=json.dumps(args.iloc[0])[:80],
        verdicts=dict(df.groupby("row_id")["verdict"].agg(lambda x: ",".join(x))),
        tokens_out=int(df["tokens_out"].sum()),
    )


def test_tool_arguments_cut_off_by_max_tokens_fail_with_a_reason(live, tmp_path):
    _needs_tool_choice(live)
    rows = [r for r in _tool_rows() if r["id"] == "args"]
    ds = write_dataset(tmp_path, rows)
    provider = make_provider(live, temperature=0.8, max_tokens=6, tool_choice="lookup_order", max_tool_steps=1)
    s = run_eval(read_dataset(ds), provider, ["trajectory"], repeats=4, results_dir=tmp_path / "r", **QUIET)
    df = outcomes_df(s.path)
    assert len(df) == 4  # every repeat has an outcome: nothing crashed
    assert set(df["verdict"]) <= {FAIL, ERROR}
    args = df["trajectory"].map(lambda t: t[0]["tool_calls"][0]["args"] if t and t[0]["tool_calls"] else {})
    cut = args.map(lambda a: "_invalid_json" in a)
    assert cut.all(), args.tolist()  # 6 tokens cannot close {"order_id": "..."}
    reasons = df["graders"].map(lambda g: g["trajectory"]["reason"])
    assert reasons.str.contains("_invalid_json").all()
    assert reasons.str.contains("missing \\[lookup_order\\(order_id='A-1'\\)\\]", regex=True).all()
    assert (df["tokens_out"] <= 6).all()
    show(
        "tool-call arguments cut off at max_tokens 6",
        outcomes=len(df),
        verdicts=df["verdict"].tolist(),
        raw_arguments=[a["_invalid_json"] for a in args],
        reason=reasons.iloc[0][:160],
    )


# ------------------------------------------------------------------ context length


def test_prompt_longer_than_the_context_is_an_error_naming_context_length(live, tmp_path, monkeypatch, capsys):
    if live.provider == "ollama":
        pytest.skip("Ollama truncates an over-long prompt to num_ctx instead of refusing it")
    monkeypatch.chdir(tmp_path)
    words = " ".join(f"word{i}" for i in range(live.context_tokens * 2))  # several tokens per word
    rows = [
        {"id": "long", "case": {"prompt": words, "expect": {"must_contain_any": ["e"]}}},
    ]
    ds = write_dataset(tmp_path, rows)
    rc = run_cli([str(ds), *_cli_common(live, tmp_path / "r", "ctx"), "--max-tokens", "8"])
    out = capsys.readouterr().out
    assert rc == 2, out  # the candidate's own refused request, on its only row: a failure shown, not an outage
    df = outcomes_df(tmp_path / "r" / "ctx")
    rec = df.iloc[0]
    assert rec["verdict"] == ERROR
    assert rec["error_kind"] == "refused"  # the candidate's own request
    assert rec["attempts"] == 1  # a refused request is not retried
    assert "context length" in rec["detail"]
    assert "context length" in out  # the summary line names it too
    show("prompt longer than the context", prompt_chars=len(words), detail=rec["detail"][:200], exit_code=rc)


def test_no_secret_or_machine_env_leaks_into_results(live, tmp_path):
    """Whatever the key variable holds never reaches run.json or outcomes (when a key is configured)."""
    if not live.api_key_env:
        pytest.skip("no GOLDENKIT_LIVE_API_KEY_ENV configured")
    ds = write_dataset(tmp_path, letter_rows(2))
    s = run_eval(read_dataset(ds), make_provider(live, max_tokens=8), ["contract"], results_dir=tmp_path / "r", **QUIET)
    key = os.environ[live.api_key_env]
    for f in Path(s.path).iterdir():
        assert key.encode() not in f.read_bytes(), f
