"""What a verdict cost, as a user adds it up: one collapse rule, one set of roles, a regrade's own spend."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from goldenkit.report import latency_summary
from goldenkit.runner._summary import run_accounting
from goldenkit.stats import OVERALL


def decided_any() -> tuple[pd.DataFrame, dict]:
    """Two rows of a run whose repeats stopped once decided under ``any``: row a failed once then passed (two
    repeats ran), row b passed at once. Under ``any`` both pass; under majority a is a 1-1 tie, not a pass."""
    recs = [("a", 0, "FAIL", 100), ("a", 1, "PASS", 100), ("b", 0, "PASS", 100)]
    df = pd.DataFrame(recs, columns=["row_id", "repeat", "verdict", "tokens_in"])
    df = df.assign(slice="s", attempts=1, tokens_out=10, latency_ms=1000.0, agent_version=[{"model_id": "m"}] * 3)
    return df, {"repeats": 3, "stop_decided_repeats": "any"}


def test_per_passing_row_is_the_runs_own_rule_in_the_report_and_in_run_json() -> None:
    df, manifest = decided_any()
    stored = run_accounting([df.to_dict(orient="records")], manifest, Path("."))  # run.json's accounting
    shown = latency_summary(df, run=SimpleNamespace(manifest=manifest, path=None)).loc[OVERALL]  # report.html
    assert stored["passing_rows"] == shown["passing rows"] == 2  # rule any: both rows pass
    assert stored["tokens_per_passing_row"] == shown["tokens per passing row"] == 330 / 2


def judged_runs() -> dict[str, pd.DataFrame]:
    """Two runs of three rows, every outcome priced by its provider; a judge (also priced) read every answer.
    a: passes 2 rows at 100 tokens and $0.01 a row, its judge $1 a row; b: passes 1 at 50 tokens and $0.02."""

    def run(verdicts: list[str], tokens: int, cost: float) -> pd.DataFrame:
        judge = {"judge": {"calls": 1, "tokens_in": 500, "tokens_out": 5, "cost": 1.0}}
        df = pd.DataFrame({"row_id": ["r1", "r2", "r3"], "verdict": verdicts, "cost": cost, "usage": [judge] * 3})
        return df.assign(repeat=0, slice="s", attempts=1, tokens_in=tokens - 10, tokens_out=10, latency_ms=1.0)

    return {"a": run(["PASS", "PASS", "FAIL"], 100, 0.01), "b": run(["PASS", "FAIL", "FAIL"], 50, 0.02)}


def test_tokens_and_money_per_passing_row_count_the_same_role_the_candidate() -> None:
    from goldenkit.leaderboards._alignment import align_runs, run_inputs
    from goldenkit.leaderboards._frontier import MONEY, TOKENS, frontier_bootstrap, row_usage
    from goldenkit.results import accounting

    a = accounting(judged_runs()["a"], by=None).loc[OVERALL]
    assert a["total_money"] == 3 * 0.01 + 3 * 1.0  # the run's spend: every role
    # a passing verdict's cost: the candidate's 3 x 100 tokens and 3 x $0.01 over 2 passing rows, no judge in either
    assert (a["tokens_per_passing_row"], a["money_per_passing_row"]) == (150.0, 0.015)
    al = align_runs(run_inputs(judged_runs()))
    usage = row_usage(al.runs, al.row_ids)
    assert usage.money is not None
    money = frontier_bootstrap(al.verdict, usage.money, al.run_ids, resamples=1).cost
    tokens = frontier_bootstrap(al.verdict, usage.tokens, al.run_ids, resamples=1).cost
    assert money.tolist() == [0.015, 0.06] and tokens.tolist() == [150.0, 150.0]  # b: 3 x 50 over 1, 3 x $0.02
    assert "candidate" in MONEY and "candidate" in TOKENS  # the measure names the role it counts


ACCEPT = '{"decision": "ACCEPT", "score": 1, "reasons": ["ok"]}'


def answered(tmp_path: Path, url: str, run_id: str, *extra: str) -> int:
    """A run of two rows against the candidate server at ``url`` (graded by the contract alone)."""
    from factories import row, write_dataset

    from goldenkit.cli import main

    ds = write_dataset(
        tmp_path, [row(f"r{i}", {"prompt": f"q{i}", "expect": {"must_contain": ["ok"]}}) for i in (0, 1)]
    )
    argv = ["run", str(ds), "--provider", "openai", "--base-url", url, "--model", "m", "--graders", "contract"]
    return main([*argv, "--results-dir", str(tmp_path / "res"), "--run-id", run_id, "--quiet", *extra])


def test_a_regrade_counts_what_it_spent_apart_from_the_answers_it_copied(tmp_path: Path, capsys) -> None:
    import json

    from fakeserver import FakeModelServer, Reply

    from goldenkit.cli import main
    from goldenkit.results import run_totals_of

    with FakeModelServer(default=Reply.text("ok", tokens_in=40, tokens_out=9)) as cand:
        assert answered(tmp_path, cand.url, "src") == 0
    (tmp_path / "rubric.md").write_text("Accept a helpful answer.", encoding="utf-8")
    with FakeModelServer(default=Reply.text(ACCEPT, tokens_in=300, tokens_out=20)) as judge:
        (tmp_path / "judge.toml").write_text(
            '[graders]\nuse = ["contract", "judge"]\n[judge]\nprovider = "openai"\nmodel = "judge-m"\n'
            f'rubric = "rubric.md"\n[judge.options]\nbase_url = "{judge.url}"\n',
            encoding="utf-8",
        )
        capsys.readouterr()
        res = str(tmp_path / "res")
        argv = ["regrade", "src", "--run-id", "rg", "--results-dir", res, "--config", str(tmp_path / "judge.toml")]
        assert main([*argv, "--quiet"]) == 0
    printed = capsys.readouterr().out
    source, regraded = run_totals_of(tmp_path / "res" / "src"), run_totals_of(tmp_path / "res" / "rg")
    assert source is not None and regraded is not None
    own = regraded["roles"]  # what the regrade spent: the judge's two calls, nothing of the candidate's
    assert list(own) == ["judge"] and (own["judge"]["calls"], own["judge"]["tokens_in"]) == (2, 600)
    copied = regraded["copied"]  # the candidate's spend, named as the source run's
    assert copied["from_run"] == "src" and copied["roles"] == source["roles"]
    calls = sum(r["candidate"]["calls"] for r in (source["roles"], own) if "candidate" in r)
    assert calls == 2  # added up over the two runs, each candidate call counted once
    line = next(x for x in printed.splitlines() if x.startswith("cost: "))
    assert line.startswith("cost: judge 600 tokens in, 40 out, 2 calls; money n/a (no prices)")
    assert "; from run src (copied, not spent again): 80 tokens in, 18 out, 2 calls" in line
    assert json.loads((tmp_path / "res" / "rg" / "run.json").read_text())["accounting"] == regraded


def test_merge_prints_the_cost_line_as_run_does(tmp_path: Path, capsys) -> None:
    from fakeserver import FakeModelServer, Reply

    from goldenkit.cli import main

    with FakeModelServer(default=Reply.text("ok", tokens_in=40, tokens_out=9)) as cand:
        for k in (1, 2):
            assert answered(tmp_path, cand.url, f"s{k}", "--shard", f"{k}/2") == 0
    capsys.readouterr()
    assert main(["merge", "all", "s1", "s2", "--results-dir", str(tmp_path / "res")]) == 0
    assert "\ncost: 80 tokens in, 18 out, 2 calls, p50 " in capsys.readouterr().out


def test_judge_label_reads_a_calibration_file_as_human_verdicts(tmp_path: Path, capsys) -> None:
    import json

    from test_judge_evidence import judged_run

    from goldenkit.cli import main
    from goldenkit.results import read_labels

    run = judged_run(tmp_path / "results", "judged", {"r1": [True], "r2": [False]}, {"r1": "a", "r2": "a"})
    calibration = [  # goldenkit judge calibrate's labels: ACCEPT / REJECT under its keys, the judge's decision too
        {"id": "r1", "response": "ok", "humanExpectedDecision": "ACCEPT", "judge_decision": "ACCEPT"},
        {"id": "r2", "response": "no", "human_decision": "rejected", "judge_decision": "ACCEPT"},
    ]
    f = tmp_path / "calibration.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in calibration), encoding="utf-8")
    assert main(["judge", "label", str(f), "--run", str(run)]) == 0
    assert "0 drawn by a recorded design, 2 picked by hand" in capsys.readouterr().out
    got = {lab.row_id: lab for lab in read_labels(run)}
    assert {k: lab.human for k, lab in got.items()} == {"r1": "PASS", "r2": "FAIL"}  # ACCEPT = PASS, as calibrate
    assert {lab.source for lab in got.values()} == {"calibration"} and not any(lab.designed for lab in got.values())
    drawn = tmp_path / "drawn.jsonl"  # a calibration file that records how its rows were drawn keeps the design
    drawn.write_text(json.dumps({"id": "r1", "human": "REJECT", "probability": 0.5}) + "\n", encoding="utf-8")
    assert main(["judge", "label", str(drawn), "--run", str(run)]) == 0
    assert {lab.row_id: (lab.human, lab.probability) for lab in read_labels(run)}["r1"] == ("FAIL", 0.5)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "r1", "human": "ACCEPT"}) + "\n" + json.dumps({"id": "r2", "label": "maybe"}))
    assert main(["judge", "label", str(bad), "--run", str(run)]) == 1
    assert f"{bad}:2" in capsys.readouterr().err  # one line naming the file and line


def test_judge_next_warns_when_an_earlier_round_is_still_unlabelled(tmp_path: Path, capsys) -> None:
    from test_judge_evidence import judged_run

    from goldenkit.cli import main

    verdicts = {f"r{i}": [i % 3 != 0] for i in range(30)}
    run = judged_run(tmp_path / "results", "judged", verdicts, dict.fromkeys(verdicts, "a"))
    argv = ["judge", "next", "--run", str(run), "--n", "5", "-o"]
    assert main([*argv, str(tmp_path / "one.jsonl"), "--seed", "1"]) == 0
    assert "unlabelled" not in capsys.readouterr().err  # the first round: nothing earlier
    assert main([*argv, str(tmp_path / "two.jsonl"), "--seed", "2"]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if "unlabelled" in x]
    assert len(warned) == 1 and "1 earlier round" in warned[0]
