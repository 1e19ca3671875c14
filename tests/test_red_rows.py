"""Red rows: expected failures left out unless asked, part of the run key, and their own metrics and gate rules.

Independent values: Wilson 95% intervals from statsmodels
(``proportion_confint(x, n, method="wilson")``, another implementation than
goldenkit's row-clustered one) and from the golden harness's own baseline files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from _shared import shared_path
from factories import numbered_rows, write_dataset
from run_factory import FakeRun, manifest, outcomes

from goldenkit.cli import main
from goldenkit.dataset import read_dataset
from goldenkit.dataset._red import mark_red, red_row_ids, without_red
from goldenkit.errors import ConfigError, DatasetError
from goldenkit.gate import GatePolicy, evaluate_gate
from goldenkit.metrics import red_metrics_text, run_metrics
from goldenkit.results import outcomes_df, read_run

CHANGELOG = [{"version": "1.0.0", "date": "2026-01-01", "why": "t"}]


def make_dataset(root: Path, red_rows: object = ("r003",)) -> Path:
    """Six rows: r001 tagged red, r003 listed in dataset.json red_rows, r005 tagged red and must refuse."""
    meta = {} if red_rows is None else {"red_rows": list(red_rows) if isinstance(red_rows, tuple) else red_rows}
    tags = {1: ["red"], 5: ["red", "refusal"]}
    rows = numbered_rows(
        6,
        lambda i: {"prompt": f"question {i}", "expect": {"must_contain": ["yes"]}},
        slice=lambda i: "even" if i % 2 == 0 else "odd",
    )
    return write_dataset(root, [r | {"tags": tags.get(i, [])} for i, r in enumerate(rows)], name="tiny", meta=meta)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    # the model answers "yes" except to question 1 and 3: two red rows fail, the refusing one passes
    (tmp_path / "agent_mod.py").write_text(
        "def answer(case):\n    return 'no' if case.prompt in ('question 1', 'question 3') else 'yes'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "agent_mod", raising=False)  # another test's agent_mod is not this one
    make_dataset(tmp_path)
    return tmp_path


def run(*extra: str) -> int:
    return main(["run", "ds", "--provider", "callable", "--callable", "agent_mod:answer", "--quiet", *extra])


# --------------------------------------------------------------------------- which rows are red


def test_red_rows_come_from_tags_and_dataset_json(tmp_path: Path) -> None:
    ds = read_dataset(make_dataset(tmp_path))
    assert red_row_ids(ds) == ["r001", "r003", "r005"]
    assert without_red(ds).ids == ["r000", "r002", "r004"]
    marked = mark_red(ds)
    assert [list(t) for t in marked.rows["tags"]] == [[], ["red"], [], ["red"], [], ["red", "refusal"]]
    assert marked.sha256 == ds.sha256  # tagging for the run never changes what the dataset is


@pytest.mark.parametrize(
    ("red_rows", "says"),
    [("r003", "must be a list of row ids"), (["r003", 7], "must be a list of row ids"), (["nope"], '"nope"')],
)
def test_bad_red_rows_name_dataset_json(tmp_path: Path, red_rows: object, says: str) -> None:
    ds = read_dataset(make_dataset(tmp_path, red_rows=red_rows))
    with pytest.raises(DatasetError) as exc:
        red_row_ids(ds)
    assert says in str(exc.value) and "dataset.json" in str(exc.value)


def test_dataset_validate_counts_red_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    make_dataset(tmp_path)
    assert main(["dataset", "validate", "ds"]) == 0
    assert "6 rows, 2 slices, 3 red rows (run only with --red), sha256" in capsys.readouterr().out
    (tmp_path / "ds" / "dataset.json").write_text(
        json.dumps({"name": "tiny", "version": "1.0.0", "changelog": CHANGELOG, "red_rows": ["ghost"]})
    )
    assert main(["dataset", "validate", "ds"]) == 1
    err = capsys.readouterr().err
    assert "dataset.json" in err and '"ghost"' in err and "Traceback" not in err


def test_dataset_sample_leaves_red_rows_out_like_a_run(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the red rows are r001 (tag), r003 (dataset.json red_rows), r005 (tag): `dataset sample` previews
    # the rows `goldenkit run --per-slice` would call, so they are left out unless --red
    assert main(["dataset", "sample", "ds", "--per-slice", "10", "--seed", "1"]) == 0
    assert sorted(capsys.readouterr().out.split()) == ["r000", "r002", "r004"]
    assert main(["dataset", "sample", "ds", "--per-slice", "10", "--seed", "1", "--red"]) == 0
    assert sorted(capsys.readouterr().out.split()) == ["r000", "r001", "r002", "r003", "r004", "r005"]


# --------------------------------------------------------------------------- runs


def test_runs_leave_red_rows_out_unless_asked(work: Path) -> None:
    assert run("--run-id", "plain") == 0
    plain = outcomes_df("plain")
    assert sorted(plain["row_id"]) == ["r000", "r002", "r004"]  # not SKIPPED: not selected at all
    assert read_run("plain").manifest["counts"]["SKIPPED"] == 0
    assert "include_red" not in read_run("plain").manifest["sample"]

    assert run("--run-id", "red", "--red") == 0
    red = outcomes_df("red").set_index("row_id")
    assert sorted(red.index) == ["r000", "r001", "r002", "r003", "r004", "r005"]
    assert "red" in list(red.at["r003", "tags"])  # listed in dataset.json only: the outcome says so
    assert read_run("red").manifest["sample"]["include_red"] is True
    m = run_metrics(outcomes_df("red")).set_index("metric")
    # red rows r001 FAIL, r003 FAIL, r005 PASS; hallucination rows are r001, r003 (r005 must refuse)
    assert (m.at["negative_case_pass_rate", "hits"], m.at["negative_case_pass_rate", "total"]) == (1, 3)
    assert (m.at["hallucination_rate", "hits"], m.at["hallucination_rate", "total"]) == (2, 2)
    assert (m.at["overall_pass_rate", "hits"], m.at["overall_pass_rate", "total"]) == (4, 6)


def test_red_in_the_run_table_of_the_config(work: Path) -> None:
    (work / "ds" / "goldenkit.toml").write_text("[run]\nred = true\n")
    assert run("--run-id", "cfg") == 0
    assert len(outcomes_df("cfg")) == 6
    (work / "ds" / "goldenkit.toml").write_text('[run]\nred = "yes"\n')
    assert run("--run-id", "cfg2") == 1


def test_a_red_run_and_a_plain_run_are_not_comparable(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--run-id", "plain") == 0
    assert run("--run-id", "red", "--red") == 0
    capsys.readouterr()
    assert main(["compare", "plain", "red"]) == 4
    assert "red rows (include_red) differ: false vs true" in capsys.readouterr().err
    assert main(["leaderboard", "plain", "red"]) == 4
    out = capsys.readouterr()
    assert "include_red" in out.out + out.err and "run red vs plain" in out.out + out.err
    # resuming the red run without --red is another run key: refused, naming the sample
    assert run("--run-id", "red") == 1
    assert "include_red" in capsys.readouterr().err
    # two red runs of the same protocol compare
    assert run("--run-id", "red2", "--red") == 0
    assert main(["compare", "red", "red2"]) == 0
    # a committed baseline keeps the setting: a plain run gated against a red baseline is exit 4
    assert main(["baseline", "save", "red", "--name", "redmain"]) == 0
    capsys.readouterr()
    assert main(["gate", "plain", "--baseline", "redmain"]) == 4
    assert "red rows (include_red) differ: true vs false" in capsys.readouterr().out
    # the same protocol compares: not 4; six rows cannot show non-inferiority at the default margin: 3
    assert main(["gate", "red2", "--baseline", "redmain"]) == 3
    assert "[NOT SHOWN] non_inferiority" in capsys.readouterr().out


# --------------------------------------------------------------------------- metrics, hand-computed


def frame(rows: list[tuple[str, list[str], str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"row_id": rid, "tags": tags, "verdict": v, "repeat": i} for i, (rid, tags, v) in enumerate(rows)]
    )


def test_negative_case_pass_rate_and_hallucination_rate_by_hand() -> None:
    df = frame(
        [
            ("ok-1", [], "PASS"),
            ("ok-2", [], "FAIL"),
            ("red-a", ["red", "refusal"], "PASS"),  # must refuse and did
            ("red-b", ["red"], "FAIL"),  # adversarial, hallucinated
            ("red-c", ["red"], "PASS"),  # adversarial, resisted
            ("red-d", ["red"], "ERROR"),  # no evidence: in no denominator
        ]
    )
    m = run_metrics(df).set_index("metric")
    neg, hal = m.loc["negative_case_pass_rate"], m.loc["hallucination_rate"]
    # proportion_confint(2, 3, method="wilson") -> (0.2076596008020477, 0.9385080552796037)
    assert (neg["hits"], neg["total"], neg["rows"]) == (2, 3, 3)
    assert (neg["rate"], neg["ci_low"], neg["ci_high"]) == pytest.approx((2 / 3, 0.2076596008, 0.9385080553), abs=1e-9)
    assert not neg["lower_is_better"]
    # proportion_confint(1, 2, method="wilson") -> (0.09453120573423068, 0.9054687942657693)
    assert (hal["hits"], hal["total"], hal["rows"]) == (1, 2, 2)
    assert (hal["rate"], hal["ci_low"], hal["ci_high"]) == pytest.approx((0.5, 0.0945312057, 0.9054687943), abs=1e-9)
    assert hal["lower_is_better"]
    # the rest is reported as before: every graded attempt
    assert (m.at["overall_pass_rate", "hits"], m.at["overall_pass_rate", "total"]) == (3, 5)


def test_red_intervals_match_the_golden_harness() -> None:
    # baselines__generation-v1.json: hallucinationRate 0/2, upper 0.6576197724933469;
    # negativeCasePassRate 5/5, lower 0.5655175352168252 (Wilson, one attempt per row)
    df = frame(
        [("h-1", ["red"], "PASS"), ("h-2", ["red"], "PASS")]
        + [(f"n-{i}", ["red", "refusal"], "PASS") for i in range(3)]
    )
    m = run_metrics(df).set_index("metric")
    assert (m.at["hallucination_rate", "hits"], m.at["hallucination_rate", "total"]) == (0, 2)
    assert m.at["hallucination_rate", "ci_high"] == pytest.approx(0.6576197724933469, abs=1e-12)
    assert (m.at["negative_case_pass_rate", "hits"], m.at["negative_case_pass_rate", "total"]) == (5, 5)
    assert m.at["negative_case_pass_rate", "ci_low"] == pytest.approx(0.5655175352168252, abs=1e-12)


def test_repeats_are_attempts_and_red_rows_may_be_given() -> None:
    df = frame([("a", [], "PASS"), ("a", [], "PASS"), ("a", [], "ERROR"), ("b", [], "FAIL"), ("b", [], "FAIL")])
    assert "negative_case_pass_rate" not in set(run_metrics(df)["metric"])  # no red row: nothing new reported
    m = run_metrics(df, red_rows=["a", "b"]).set_index("metric")
    assert (m.at["negative_case_pass_rate", "hits"], m.at["negative_case_pass_rate", "total"]) == (2, 4)
    assert m.at["negative_case_pass_rate", "rows"] == 2
    # repeats agree within each row: the row-clustered interval is Wilson at 2 rows, wider than at 4 attempts
    lo, hi = m.at["negative_case_pass_rate", "ci_low"], m.at["negative_case_pass_rate", "ci_high"]
    # proportion_confint(1, 2, method="wilson") -> (0.09453120573423068, 0.9054687942657693)
    assert (lo, hi) == pytest.approx((0.0945312057, 0.9054687943), abs=1e-9)


def test_the_report_lines() -> None:
    df = frame([("r", ["red"], "PASS"), ("s", ["red"], "FAIL"), ("t", [], "PASS")])
    text = red_metrics_text(run_metrics(df))
    assert text[0].startswith("red rows (expected failures)")
    assert "negative-case pass rate  50.0%  (1/2 attempts, 2 rows" in text[1]
    assert "hallucination rate       50.0%  (1/2 attempts" in text[2] and "lower is better" in text[2]
    assert red_metrics_text(run_metrics(frame([("t", [], "PASS")]))) == []


# --------------------------------------------------------------------------- the gate


def red_run(verdicts: dict[str, list[str]], red: set[str], include_red: bool = True) -> FakeRun:
    rows = [(rid, "s", v) for rid, v in verdicts.items()]
    man = manifest("cand")
    if include_red:
        man["sample"] = {**man["sample"], "include_red": True}
    return FakeRun(man, outcomes(rows, run_id="cand", tags={r: ["red"] for r in red}))


def rule(decision, name):  # type: ignore[no-untyped-def]
    return next(r for r in decision.rules if r.name == name)


def test_gate_min_negative_case_pass_rate() -> None:
    verdicts = {f"r{i}": ["PASS"] * 3 for i in range(20)}
    verdicts["r0"] = ["FAIL", "FAIL", "PASS"]  # red: 1 of 3
    verdicts["r1"] = ["PASS", "PASS", "PASS"]  # red: 3 of 3
    run = red_run(verdicts, {"r0", "r1"})
    d = evaluate_gate(run, policy=GatePolicy(regression=False, min_negative_case_pass_rate=0.5))
    r = rule(d, "negative_case_pass_rate")
    assert r.passed and r.actual == pytest.approx(4 / 6)
    assert "negative-case pass rate 0.6667 (4/6 attempts" in r.detail and "2 red row(s)" in r.evidence
    d = evaluate_gate(run, policy=GatePolicy(regression=False, min_negative_case_pass_rate=0.9))
    assert not d.passed and d.exit_code == 2 and not rule(d, "negative_case_pass_rate").passed


def test_gate_max_hallucination_rate_on_red_rows() -> None:
    verdicts = {f"r{i}": ["PASS"] * 3 for i in range(20)}
    verdicts["r0"] = ["FAIL", "PASS", "PASS"]  # one hallucination in 6 attempts on the red rows
    run = red_run(verdicts, {"r0", "r1"})
    zero = evaluate_gate(run, policy=GatePolicy(regression=False, max_hallucination_rate=0.0))
    r = rule(zero, "hallucination_rate")  # the golden harness gates 0% on fixtures
    assert not r.passed and zero.exit_code == 2 and r.actual == pytest.approx(1 / 6)
    assert "hallucination rate 0.1667 (1/6 attempts" in r.detail and "2 hallucination row(s)" in r.evidence
    assert evaluate_gate(run, policy=GatePolicy(regression=False, max_hallucination_rate=0.2)).passed


def test_gate_red_rules_without_evidence() -> None:
    verdicts = {f"r{i}": ["PASS"] * 3 for i in range(60)}
    plain = red_run(verdicts, set(), include_red=False)
    d = evaluate_gate(plain, policy=GatePolicy(regression=False, min_negative_case_pass_rate=0.5))
    assert d.exit_code == 2 and "no red row in the run" in rule(d, "negative_case_pass_rate").detail
    verdicts["r0"] = ["ERROR"] * 3
    errored = red_run(verdicts, {"r0"})
    for policy in (
        GatePolicy(regression=False, min_negative_case_pass_rate=0.5),
        GatePolicy(regression=False, max_hallucination_rate=0.1),
    ):
        d = evaluate_gate(errored, policy=policy)
        assert d.exit_code == 3, d.format()
        assert "errored: not evidence" in d.summary()
    verdicts["r1"] = ["SKIPPED"] * 3  # the other red row skipped: still nothing graded, and errors took some
    d = evaluate_gate(
        red_run(verdicts, {"r0", "r1"}), policy=GatePolicy(regression=False, min_negative_case_pass_rate=0.5)
    )
    assert d.exit_code == 3 and "no attempt on the 2 red row(s) was graded (3 ERROR)" in d.summary()
    refusing = FakeRun(plain.manifest, outcomes([("r0", "s", ["PASS"] * 3)], tags={"r0": ["red", "refusal"]}))
    d = evaluate_gate(refusing, policy=GatePolicy(regression=False, max_hallucination_rate=0.1))
    assert d.exit_code == 2 and "no hallucination row among the red rows" in d.summary()


def test_policy_keys() -> None:
    assert GatePolicy.from_config({"min_negative_case_pass_rate": 1}).min_negative_case_pass_rate == 1.0
    with pytest.raises(ConfigError, match="min_negative_case_pass_rate must be a finite number in"):
        GatePolicy.from_config({"min_negative_case_pass_rate": 1.5})


# --------------------------------------------------------------------------- the golden harness's own red rows


def test_golden_red_rows_are_the_ones_its_harness_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = shared_path(
        "interop", "qa-guru__java-ai-golden", "src__main__resources__eval__generation__golden-generation.jsonl"
    )
    live = shared_path("interop", "qa-guru__java-ai-golden", "baselines__live-generation-v1.json")
    from goldenkit.formats import import_dataset

    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.jsonl").write_bytes(src.read_bytes())
    import_dataset(tmp_path / "golden.jsonl", tmp_path / "ds", "golden", added="2026-01-15")
    (tmp_path / "agent_mod.py").write_text("def answer(case):\n    return 'no'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # the harness's run without --red: the cases it marked SKIPPED ("red row: pass --red")
    cases = json.loads(live.read_text(encoding="utf-8"))["cases"]
    skipped = sorted(c["caseId"] for c in cases if c["status"] == "SKIPPED")
    assert run("--run-id", "plain") == 0
    assert run("--run-id", "red", "--red") == 0
    assert sorted(set(outcomes_df("red")["row_id"]) - set(outcomes_df("plain")["row_id"])) == skipped
    assert sorted({c["caseId"] for c in cases}) == sorted(outcomes_df("red")["row_id"])
    capsys.readouterr()
    assert main(["dataset", "validate", "ds"]) == 0
    assert f"{len(skipped)} red rows (run only with --red)" in capsys.readouterr().out


def test_benchmark_red_runs_every_agent_with_the_red_rows(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agents = "".join(
        f'[[benchmark.agents]]\nname = "{n}"\nprovider = "callable"\ncallable = "agent_mod:answer"\n\n' for n in "ab"
    )
    (work / "ds" / "goldenkit.toml").write_text(agents)
    assert main(["benchmark", "ds", "--red", "--run-prefix", "t", "--quiet", "--config", "ds/goldenkit.toml"]) == 0
    for run_id in ("t-a", "t-b"):
        assert read_run(run_id).manifest["sample"]["include_red"] is True
        assert len(outcomes_df(run_id)) == 6
    assert "t-a" in capsys.readouterr().out
