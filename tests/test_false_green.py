"""No evidence, no green: every way evidence can be missing on either side, through the CLI.

Each scenario writes a baseline and a candidate as run folders in the results
format (or saves a committed baseline snapshot with ``goldenkit baseline
save``), then runs ``goldenkit gate CAND --baseline BASE`` and asserts the
exit code: never 0, and the code (1, 2, 3 or 4) that says why. Two equal good
runs still pass, and a non-critical slice with nothing to compare is a
warning, not a failure.

The dataset: ``refunds`` (critical, 4 rows), ``billing`` and ``shipping`` (150
rows each), 3 repeats: 912 attempts, so a whole critical slice erroring is
12 attempts, 1.3% -- under the default 2% run error rate. Four rows cannot
show non-inferiority at any margin worth the name, so the policy of these
scenarios turns the margin off (``non_inferiority_margin = false``): they are
about the evidence rules. The three-way gate with its default margin is
tested at the end (10-row runs, a tutorial-sized dataset).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from factories import row, write_dataset
from ray_cluster import ray_cluster  # noqa: F401 - the session's Ray cluster (the Ray run below)
from run_factory import SHA_B, manifest, outcomes, write_run

from goldenkit.cli import main

SLICES = {"refunds": 4, "billing": 150, "shipping": 150}
CONFIG = '[gate]\ncritical = ["refunds"]\nnon_inferiority_margin = false\n'
Rows = list[tuple[str, str, list[str]]]


def good_rows() -> Rows:
    """Every 7th row fails all repeats, every 5th passes 2 of 3; the rest pass 3 of 3."""
    rows: Rows = []
    for s, n in SLICES.items():
        for i in range(n):
            v = ["FAIL"] * 3 if i % 7 == 3 else ["PASS", "FAIL", "PASS"] if i % 5 == 1 else ["PASS"] * 3
            rows.append((f"{s}-{i:03d}", s, v))
    return rows


def with_slice(rows: Rows, slice_: str, verdicts: list[str], count: int | None = None) -> Rows:
    """``rows`` with the first ``count`` rows (all when None) of ``slice_`` given ``verdicts``."""
    out, done = [], 0
    for rid, s, v in rows:
        if s == slice_ and (count is None or done < count):
            out.append((rid, s, list(verdicts)))
            done += 1
        else:
            out.append((rid, s, v))
    return out


def frame(rows: Rows, run_id: str, permanent: set[str] = frozenset()) -> pd.DataFrame:  # type: ignore[assignment]
    df = outcomes(rows, run_id=run_id)
    hit = df["row_id"].isin(permanent) & (df["verdict"] == "ERROR")
    df.loc[hit, "error_kind"] = "permanent"
    df.loc[hit, "detail"] = "HTTP 400: context length exceeded"
    return df


def put(
    root: Path, run_id: str, rows: Rows, *, parquet: bool = True, permanent: set[str] = frozenset(), **kw: object
) -> None:  # type: ignore[assignment]
    man = manifest(run_id, **kw)  # type: ignore[arg-type]
    write_run(root / "results", man, frame(rows, run_id, permanent), parquet=parquet)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "goldenkit.toml").write_text(CONFIG, encoding="utf-8")
    put(tmp_path, "base", good_rows())
    put(tmp_path, "good", good_rows(), model_id="model-b")
    return tmp_path


def gate(*argv: str) -> int:
    return main(["gate", *argv])


# --------------------------------------------------------------------------- the scenarios
# each writes the runs it needs and returns (gate arguments, expected exit code, text the output must name)


def s_empty_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [])
    return ["cand", "--baseline", "base"], 2, "run.graded: empty run"


def s_empty_candidate_no_regression(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [])
    (w / "n.toml").write_text("[gate]\nregression = false\n", encoding="utf-8")
    return ["cand", "--config", "n.toml"], 2, "empty run"


def s_fully_skipped_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [(r, s, ["SKIPPED"] * 3) for r, s, _ in good_rows()])
    return ["cand", "--baseline", "base"], 2, "no row was graded"


def s_empty_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "empty", [])
    return ["good", "--baseline", "empty"], 3, "baseline empty is not evidence"


def s_all_error_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "errbase", [(r, s, ["ERROR"] * 3) for r, s, _ in good_rows()])
    return ["good", "--baseline", "errbase"], 3, "baseline errbase is not evidence: no graded row (304 ERROR"


def s_fully_skipped_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "skipbase", [(r, s, ["SKIPPED"] * 3) for r, s, _ in good_rows()])
    return ["good", "--baseline", "skipbase"], 3, "no graded row (0 ERROR, 304 SKIPPED"


def s_invalid_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "badbase", good_rows(), validity="INVALID")
    return ["good", "--baseline", "badbase"], 3, "baseline badbase is not evidence: INVALID"


def s_incomplete_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "halfbase", good_rows(), parquet=False)
    return ["good", "--baseline", "halfbase"], 3, "baseline halfbase is not evidence: incomplete"


def s_invalid_baseline_snapshot(w: Path) -> tuple[list[str], int, str]:
    assert main(["baseline", "save", "base", "--name", "main"]) == 0
    path = w / "baselines" / "main.json"
    info = json.loads(path.read_text(encoding="utf-8"))
    info["run"]["validity"] = "INVALID"
    info["run"]["invalid_reason"] = "error rate 0.31 > 0.02"
    path.write_text(json.dumps(info), encoding="utf-8")
    return ["good", "--baseline", "main"], 3, "baseline main is not evidence: INVALID (error rate 0.31"


def s_baseline_snapshot_with_a_row_twice(w: Path) -> tuple[list[str], int, str]:
    """A snapshot table edited by hand (a row appended again) would count that row twice."""
    assert main(["baseline", "save", "base", "--name", "main"]) == 0
    table = w / "baselines" / "main.parquet"
    rows = pd.read_parquet(table)
    pd.concat([rows, rows.iloc[[0]]]).to_parquet(table, index=False)
    return ["good", "--baseline", "main"], 1, f'main.parquet: row "{rows["row_id"].iloc[0]}" appears 2 times'


def s_invalid_baseline_and_other_rows(w: Path) -> tuple[list[str], int, str]:
    # two reasons at once: the baseline is not evidence (3) wins over the differing row set (4)
    put(w, "badbase", good_rows()[:-5], validity="INVALID")
    return ["good", "--baseline", "badbase"], 3, "INVALID"


def s_all_error_critical_slice(w: Path) -> tuple[list[str], int, str]:
    # 12 of 912 attempts (1.3%): under the run's 2%, yet the critical slice has no graded row
    put(w, "cand", with_slice(good_rows(), "refunds", ["ERROR"] * 3))
    return ["cand", "--baseline", "base"], 3, "refunds: 0 of 4 rows paired; 4 ERROR transient on the candidate"


def s_all_error_critical_slice_loose_slice_rate(w: Path) -> tuple[list[str], int, str]:
    (w / "loose.toml").write_text(CONFIG + "max_slice_error_rate = 1.0\n", encoding="utf-8")
    put(w, "cand", with_slice(good_rows(), "refunds", ["ERROR"] * 3))
    return ["cand", "--baseline", "base", "--config", "loose.toml"], 3, "evidence.critical[refunds]"


def s_all_error_critical_slice_no_regression(w: Path) -> tuple[list[str], int, str]:
    (w / "n.toml").write_text(CONFIG + "regression = false\nmax_slice_error_rate = 1.0\n", encoding="utf-8")
    put(w, "cand", with_slice(good_rows(), "refunds", ["ERROR"] * 3))
    return ["cand", "--config", "n.toml"], 3, "candidate 0 graded row(s) < 1 (4 ERROR)"


def s_undecided_critical_slice(w: Path) -> tuple[list[str], int, str]:
    # every refunds row ties only because a repeat errored: undecided, never FAIL, so no evidence
    put(w, "cand", with_slice(good_rows(), "refunds", ["PASS", "ERROR", "FAIL"]))
    return ["cand", "--baseline", "base"], 3, "refunds: 0 of 4 rows paired; 4 UNDECIDED transient on the candidate"


def s_all_error_critical_slice_in_baseline(w: Path) -> tuple[list[str], int, str]:
    put(w, "errbase", with_slice(good_rows(), "refunds", ["ERROR"] * 3))
    return ["good", "--baseline", "errbase"], 3, "refunds: 0 of 4 rows paired; 4 ERROR transient on the base"


def s_skipped_critical_slice(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", with_slice(good_rows(), "refunds", ["SKIPPED"] * 3))
    return ["cand", "--baseline", "base"], 3, "refunds: 0 of 4 rows paired; 4 SKIPPED on the candidate"


def s_too_few_paired_critical_rows(w: Path) -> tuple[list[str], int, str]:
    (w / "m.toml").write_text(CONFIG + "min_paired_rows = 5\n", encoding="utf-8")
    return (
        ["good", "--baseline", "base", "--config", "m.toml"],
        3,
        "4 of 4 rows paired (100.0%; needs 90% and 5 row(s))",
    )


def s_missing_critical_slice(w: Path) -> tuple[list[str], int, str]:
    (w / "p.toml").write_text('[gate]\ncritical = ["refunds", "payments"]\n', encoding="utf-8")
    return ["good", "--baseline", "base", "--config", "p.toml"], 3, "critical slice payments: 0 of 0 rows paired"


def s_critical_slice_absent_in_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [r for r in good_rows() if r[1] != "refunds"])
    return ["cand", "--baseline", "base"], 3, "refunds: 0 of 4 rows paired; 4 MISSING on the candidate"


def s_row_set_mismatch(w: Path) -> tuple[list[str], int, str]:
    # the candidate lost a critical row and has one the baseline never had (outside its scope, named)
    put(w, "cand", [r for r in good_rows() if r[0] != "refunds-000"] + [("billing-new", "billing", ["PASS"] * 3)])
    return ["cand", "--baseline", "base"], 3, "refunds: 3 of 4 rows paired; 1 MISSING on the candidate"


def s_other_dataset(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", good_rows(), sha256=SHA_B)
    return ["cand", "--baseline", "base"], 4, "dataset sha256 differs"


def s_other_repeats(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [(r, s, (v * 2)[:5]) for r, s, v in good_rows()], repeats=5)
    return ["cand", "--baseline", "base"], 4, "repeats differ"


def s_incomplete_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", good_rows(), parquet=False)
    return ["cand", "--baseline", "base"], 3, "the run did not finish"


def s_invalid_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", good_rows(), validity="INVALID")
    return ["cand", "--baseline", "base"], 3, "run is INVALID"


def s_all_error_candidate(w: Path) -> tuple[list[str], int, str]:
    put(w, "cand", [(r, s, ["ERROR"] * 3) for r, s, _ in good_rows()])
    return ["cand", "--baseline", "base"], 3, "the run is not evidence"


def s_new_permanent_error(w: Path) -> tuple[list[str], int, str]:
    rows = with_slice(good_rows(), "shipping", ["ERROR"] * 3, count=1)
    put(w, "cand", rows, permanent={"shipping-000"})
    return ["cand", "--baseline", "base"], 2, "1 new permanent ERROR row(s) > 0: shipping-000 (shipping)"


def s_transient_errors_in_one_slice(w: Path) -> tuple[list[str], int, str]:
    # 10 undecided billing rows: 10 errored attempts (1.1% of the run), 6.7% of billing's rows
    put(w, "cand", with_slice(good_rows(), "billing", ["PASS", "FAIL", "ERROR"], count=10))
    return ["cand", "--baseline", "base"], 3, "billing: 10 of 150 rows newly ERROR (transient)"


def s_candidate_errors_take_a_critical_slice(w: Path) -> tuple[list[str], int, str]:
    # its own requests refused on every refunds row: a failure shown (2), not an outage (3)
    refunds = {r for r, s, _ in good_rows() if s == "refunds"}
    put(w, "cand", with_slice(good_rows(), "refunds", ["ERROR"] * 3), permanent=refunds)
    return ["cand", "--baseline", "base"], 2, "not evidence (the candidate's own errors took them (agent, refused))"


def s_no_baseline(w: Path) -> tuple[list[str], int, str]:
    return ["good"], 3, "no baseline"


def s_unresolvable_baseline(w: Path) -> tuple[list[str], int, str]:
    return ["good", "--baseline", "mian"], 1, "'mian': no run"


def s_nothing_judged(w: Path) -> tuple[list[str], int, str]:
    (w / "h.toml").write_text(CONFIG + "max_hallucination_rate = 0.02\n", encoding="utf-8")
    return ["good", "--baseline", "base", "--config", "h.toml"], 2, "no attempt was judged"


def put_red(w: Path, run_id: str, rows: Rows, red: set[str], *, include_red: bool = True) -> None:
    """A run of ``rows`` whose rows ``red`` are tagged red; ``include_red`` as ``--red`` records it."""
    man = manifest(run_id)
    if include_red:
        man["sample"] = {**man["sample"], "include_red": True}
    write_run(w / "results", man, outcomes(rows, run_id=run_id, tags={r: ["red"] for r in red}))


RED = {f"billing-{i:03d}" for i in (0, 2, 4, 6)}  # four red rows in billing (150 rows), none of them failing


def s_red_rows_requested_none_in_sample(w: Path) -> tuple[list[str], int, str]:
    # both runs used --red, but the sample holds no red row: a negative-case gate has nothing to see
    put_red(w, "redbase", good_rows(), set())
    put_red(w, "redcand", good_rows(), set())
    (w / "r.toml").write_text(CONFIG + "min_negative_case_pass_rate = 1.0\n", encoding="utf-8")
    return ["redcand", "--baseline", "redbase", "--config", "r.toml"], 2, "no red row in the run"


def s_red_rows_left_out(w: Path) -> tuple[list[str], int, str]:
    (w / "r.toml").write_text(CONFIG + "min_negative_case_pass_rate = 1.0\n", encoding="utf-8")
    return ["good", "--baseline", "base", "--config", "r.toml"], 2, "unless the run used --red"


def s_all_red_rows_error(w: Path) -> tuple[list[str], int, str]:
    # 12 errored attempts (1.3% of the run, 2.7% of billing's rows): only the red-row rule sees the gap
    put_red(w, "redbase", good_rows(), RED)
    put_red(w, "redcand", [(r, s, ["ERROR"] * 3 if r in RED else v) for r, s, v in good_rows()], RED)
    (w / "r.toml").write_text(CONFIG + "min_negative_case_pass_rate = 1.0\n", encoding="utf-8")
    return ["redcand", "--baseline", "redbase", "--config", "r.toml"], 3, "4 red row(s) errored: not evidence"


def s_all_red_rows_error_hallucination(w: Path) -> tuple[list[str], int, str]:
    put_red(w, "redbase", good_rows(), RED)
    put_red(w, "redcand", [(r, s, ["ERROR"] * 3 if r in RED else v) for r, s, v in good_rows()], RED)
    (w / "r.toml").write_text(CONFIG + "max_hallucination_rate = 0.0\n", encoding="utf-8")
    return ["redcand", "--baseline", "redbase", "--config", "r.toml"], 3, "hallucination row(s) errored"


def s_red_run_against_plain_baseline(w: Path) -> tuple[list[str], int, str]:
    put_red(w, "redcand", good_rows(), RED)
    return ["redcand", "--baseline", "base"], 4, "red rows (include_red) differ: false vs true"


def put_with(root: Path, run_id: str, rows: Rows, **fields: object) -> None:
    """A run whose manifest carries ``fields`` beside the documented keys (grader_hard, criteria, ...)."""
    man = {**manifest(run_id), **fields}
    write_run(root / "results", man, frame(rows, run_id, frozenset()), parquet=True)


def s_softened_grader(w: Path) -> tuple[list[str], int, str]:
    # hard = false on the candidate's grader keeps its version; the protocol key still tells them apart
    put_with(w, "cand", good_rows(), grader_hard={"contract": False})
    return ["cand", "--baseline", "base"], 4, "grader settings differ: contract hard true vs false"


def s_criteria_dropped_against_snapshot(w: Path) -> tuple[list[str], int, str]:
    crit = {"file": "criteria.json", "sha256": "c" * 64, "ignored": []}
    put_with(w, "critbase", good_rows(), criteria=crit)
    assert main(["baseline", "save", "critbase", "--name", "crit"]) == 0
    return ["good", "--baseline", "crit"], 4, "criteria files differ"


def s_baseline_is_the_candidate(w: Path) -> tuple[list[str], int, str]:
    return ["good", "--baseline", "good"], 1, "is the candidate itself: the same folder"


def s_baseline_snapshot_of_the_candidate(w: Path) -> tuple[list[str], int, str]:
    assert main(["baseline", "save", "good", "--name", "mine"]) == 0
    return ["good", "--baseline", "mine"], 1, "is the candidate itself: the same run"


def s_baseline_errors_take_a_critical_slice(w: Path) -> tuple[list[str], int, str]:
    # the baseline's errors are bounded as the candidate's: 3 of 4 critical rows ERROR in the baseline
    put(w, "errbase3", with_slice(good_rows(), "refunds", ["ERROR"] * 3, count=3))
    return ["good", "--baseline", "errbase3"], 3, "refunds: 1 of 4 rows paired; 3 ERROR transient on the base"


SCENARIOS: dict[str, Callable[[Path], tuple[list[str], int, str]]] = {
    name.removeprefix("s_"): fn for name, fn in globals().items() if name.startswith("s_") and callable(fn)
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_missing_evidence_never_passes(name: str, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, expected, says = SCENARIOS[name](work)
    capsys.readouterr()
    code = gate(*argv)
    out = capsys.readouterr()
    assert code != 0
    assert code == expected, out.out + out.err
    assert says in out.out + out.err


def test_equal_good_runs_pass_and_say_what_they_saw(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gate("good", "--baseline", "base") == 0
    out = capsys.readouterr().out
    assert "[PASS] baseline.evidence: baseline base: VALID, complete, graded" in out
    assert "[PASS] evidence.critical[refunds]" in out and "evidence: 4 paired row(s) of 4" in out
    assert "[PASS] errors.new_permanent: 0 new permanent ERROR row(s) <= 0" in out
    assert "Holm p=1.0000 (Holm family of 2: overall + 1 critical slice(s))" in out
    assert "regression.slice[" not in out  # the other slices are listed for review, never failed
    assert "[WARN] non_inferiority_margin = false: with 304 paired rows a drop under " in out  # what green missed
    assert out.splitlines()[-1].startswith("gate PASSED")
    # against a committed snapshot of the same run, too
    assert main(["baseline", "save", "base", "--name", "main"]) == 0
    assert gate("good", "--baseline", "main") == 0


def test_a_non_critical_slice_without_evidence_is_a_warning(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put(work, "cand", with_slice(good_rows(), "shipping", ["SKIPPED"] * 3))
    # half the rows skipped: the overall table is short of min_paired_share (exit 3: nothing shown either
    # way), and the non-critical slice is named in a warning
    assert gate("cand", "--baseline", "base", "--json") == 3
    doc = json.loads(capsys.readouterr().out)
    assert [w for w in doc["warnings"] if w.startswith("slice ")] == [  # (the others: the critical slice's power)
        "slice shipping: 0 of 150 rows paired (0.0%; needs 90%): not evidence (rows skipped or missing); "
        "shipping: 0 of 150 rows paired; 150 SKIPPED on the candidate"
    ]
    # a few skipped rows, within min_paired_share overall and in the slice: a pass
    put(work, "cand", with_slice(good_rows(), "shipping", ["SKIPPED"] * 3, count=10))
    assert gate("cand", "--baseline", "base") == 0
    # the same ten rows in a policy that wants every row paired: the slice is a warning, the table fails
    (work / "all.toml").write_text(CONFIG + "min_paired_share = 1.0\n", encoding="utf-8")
    assert gate("cand", "--baseline", "base", "--config", "all.toml") == 3
    out = capsys.readouterr().out
    assert "[WARN] slice shipping: 140 of 150 rows paired" in out and "[NOT SHOWN] evidence.paired" in out


def test_permanent_errors_may_be_allowed_but_are_still_named(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "a.toml").write_text(CONFIG + "max_new_permanent_errors = 1\n", encoding="utf-8")
    put(work, "cand", with_slice(good_rows(), "shipping", ["ERROR"] * 3, count=1), permanent={"shipping-000"})
    assert gate("cand", "--baseline", "base", "--config", "a.toml") == 0
    assert "1 new permanent ERROR row(s) <= 1: shipping-000 (shipping)" in capsys.readouterr().out


def _rows_without_expectations(tmp_path: Path) -> Path:
    """A dataset folder of three prompts with nothing for the contract grader to check."""
    return write_dataset(tmp_path, [row(f"r{i}", {"prompt": f"q{i}"}) for i in range(3)], version="1")


def test_a_run_whose_rows_have_nothing_to_grade_does_not_exit_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows no configured grader can check would all be SKIPPED: the run refuses them before the first call."""
    from fakeserver import FakeModelServer, Reply

    monkeypatch.chdir(tmp_path)
    ds = _rows_without_expectations(tmp_path)
    with FakeModelServer(default=Reply.text("anything")) as srv:
        argv = ["run", str(ds), "--provider", "openai", "--base-url", srv.url, "--model", "m", "--quiet"]
        code = main(argv)
        assert srv.count() == 0
    assert code == 1
    assert "nothing to grade in 3 of 3 rows" in capsys.readouterr().err


def test_rows_allowed_to_run_with_nothing_to_grade_never_pass_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--max-ungradable 1 lets rows with nothing to grade run (every verdict SKIPPED): the run exits 2 (no
    evidence, no green), and the gate on it, as candidate and as baseline, is never green either."""
    from fakeserver import FakeModelServer, Reply

    monkeypatch.chdir(tmp_path)
    ds = _rows_without_expectations(tmp_path)
    with FakeModelServer(default=Reply.text("anything")) as srv:
        for run_id in ("base", "cand"):
            assert (
                main(
                    [
                        "run",
                        str(ds),
                        "--provider",
                        "openai",
                        "--base-url",
                        srv.url,
                        "--model",
                        "m",
                        "--quiet",
                        "--max-ungradable",
                        "1",
                        "--run-id",
                        run_id,
                    ]
                )
                == 2
            )
    out = capsys.readouterr().out
    assert "VALID but not evidence (no outcome is PASS or FAIL: exit 2)" in out and "SKIPPED 3" in out
    code = main(["gate", "cand", "--baseline", "base"])
    out = capsys.readouterr()
    assert code == 3 and "baseline base is not evidence: no graded row (0 ERROR, 3 SKIPPED of 3)" in out.out, out


def test_a_run_of_no_rows_exits_2_but_an_empty_shard_is_left_to_its_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A split filter that selects nothing is an empty run (exit 2); a shard that the shard rule leaves empty
    (a small dataset, many shards) exits 0 and the merge of all shards is judged instead."""
    monkeypatch.chdir(tmp_path)
    ds = _rows_without_expectations(tmp_path)
    run = ["run", str(ds), "--provider", "callable", "--callable", "sim_scripts:agent", "--quiet"]
    assert main([*run, "--split", "holdout", "--run-id", "none"]) == 2
    assert "run none: VALID but not evidence" in capsys.readouterr().out
    shards = [f"s{k}" for k in range(1, 9)]  # 3 rows in 8 shards: most are empty, the rest all SKIPPED
    codes = [main([*run, "--max-ungradable", "1", "--shard", f"{k}/8", "--run-id", f"s{k}"]) for k in range(1, 9)]
    assert codes == [0] * 8
    assert main(["merge", "all", *shards]) == 2
    assert "run all: VALID but not evidence" in capsys.readouterr().out


# ---------------------------------------------------------------- a Ray run without evidence


def die(case, repeat=0):  # type: ignore[no-untyped-def]
    """An agent that kills the process it runs in (a Ray worker) on every call."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.usefixtures("ray_cluster")
def test_a_ray_run_whose_workers_all_die_is_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every worker dies (no restarts left): no outcomes to grade, so exit 3 and INVALID, never green."""
    import goldenkit.runner._ray_executor as rx

    monkeypatch.setattr(rx, "MAX_RESTARTS", 0)
    ds = write_dataset(tmp_path, [row(f"r{i}", {"prompt": "q"}) for i in range(6)], name="d")
    res = str(tmp_path / "r")
    code = main(
        [
            "run",
            str(ds),
            "--provider",
            "callable",
            "--callable",
            "test_false_green:die",
            "--quiet",
            "--executor",
            "ray",
            "--ray-workers",
            "1",
            "--run-id",
            "dead",
            "--results-dir",
            res,
            "--max-ungradable",
            "1",
        ]
    )
    out = capsys.readouterr()
    assert code == 3, out.err
    assert "INVALID" in out.out and "all 1 Ray workers died" in out.out + out.err
    run = json.loads((tmp_path / "r" / "dead" / "run.json").read_text())
    assert run["validity"] == "INVALID" and run["complete"] is False
    assert not (tmp_path / "r" / "dead" / "outcomes.parquet").exists()


# --------------------------------------------------------------------------- simulated conversations
# Real runs through the CLI with a scripted agent and scripted users (tests/sim_scripts.py).


def _scenario_dataset(root: Path, n: int = 4) -> Path:
    case = {"scenario": {"starting_prompt": "", "plan": "ask"}, "expect": {"must_contain": ["reply"]}}
    rows = [row(f"c{i}", case | {"scenario": {"starting_prompt": f"hello {i}", "plan": "ask"}}) for i in range(n)]
    log = [{"version": "1", "date": "2026-12-01", "why": "t"}]
    return write_dataset(root, rows, folder="scn", name="scn", version="1", meta={"changelog": log})


def _run_scenarios(ds: Path, run_id: str, *extra: str) -> int:
    agent = ["--provider", "callable", "--callable", "sim_scripts:agent"]
    return main(["run", str(ds), *agent, "--results-dir", "results", "--run-id", run_id, "--quiet", *extra])


def test_scenario_rows_without_a_simulator_never_run_as_one_turn(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = _scenario_dataset(work)
    assert _run_scenarios(ds, "nosim") == 1
    assert "simulated-user scenarios" in capsys.readouterr().err
    assert not (work / "results" / "nosim").exists()


def test_a_failing_simulator_is_no_evidence(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = _scenario_dataset(work)
    good = ("--user-simulator", "callable", "--user-callable", "sim_scripts:user_three")
    assert _run_scenarios(ds, "sim-base", *good) == 0
    broken = ("--user-simulator", "callable", "--user-callable", "sim_scripts:user_broken")
    assert _run_scenarios(ds, "sim-broken", *broken) == 3  # every conversation errored: INVALID
    capsys.readouterr()
    assert gate("results/sim-broken", "--baseline", "results/sim-base") != 0


def test_a_different_simulator_is_not_a_comparable_candidate(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = _scenario_dataset(work)
    assert _run_scenarios(ds, "sim-a", "--user-simulator", "callable", "--user-callable", "sim_scripts:user_three") == 0
    assert (
        _run_scenarios(ds, "sim-b", "--user-simulator", "callable", "--user-callable", "sim_scripts:user_chatty") == 0
    )
    capsys.readouterr()
    assert gate("results/sim-b", "--baseline", "results/sim-a") == 4
    said = capsys.readouterr()
    assert "user simulator differs" in said.out + said.err


def test_a_replay_that_diverges_is_no_evidence(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = _scenario_dataset(work)
    sim = ("--user-simulator", "callable", "--user-callable", "sim_scripts:user_three")
    assert _run_scenarios(ds, "rec", *sim, "--record", "recording") == 0
    lines = (ds / "dataset.jsonl").read_text(encoding="utf-8").replace("hello", "edited")
    (ds / "dataset.jsonl").write_text(lines, encoding="utf-8")
    replay = ["run", str(ds), "--provider", "fixtures", "--fixtures", "recording", "--results-dir", "results"]
    assert main([*replay, "--run-id", "replay", "--quiet"]) == 3


def test_a_simulated_user_run_gates_against_its_own_snapshot(work: Path) -> None:
    sim = {"name": "scripted", "version": "1", "max_turns": 5}
    put_with(work, "simbase", good_rows(), simulator_version=sim)
    put_with(work, "simcand", good_rows(), simulator_version=sim, started_at="2026-11-30T11:00:00Z")
    assert main(["baseline", "save", "simbase", "--name", "sim"]) == 0
    assert gate("simcand", "--baseline", "sim") == 0
    put_with(work, "nosim", good_rows(), started_at="2026-11-30T12:00:00Z")
    assert gate("nosim", "--baseline", "sim") == 4


def test_compare_with_an_invalid_side_exits_3_naming_it(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put_with(work, "broken", good_rows(), validity="INVALID", invalid_reason="error rate 40%")
    assert main(["compare", "base", "broken"]) == 3
    err = capsys.readouterr().err
    assert "not evidence: candidate broken: INVALID (error rate 40%)" in err
    assert main(["compare", "base", "good"]) == 0


def test_the_gate_finds_the_config_the_run_recorded(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the README's regression, gated from a folder without goldenkit.toml and without --config:
    # the runs recorded the dataset's goldenkit.toml (critical refunds), so the refunds regression fails
    ds = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
    monkeypatch.chdir(tmp_path)
    for run_id, fx in (("base-1", "baseline"), ("cand-1", "candidate")):
        argv = ["run", str(ds), "--provider", "fixtures", "--fixtures", str(ds / "fixtures" / fx)]
        assert main([*argv, "--split", "holdout", "--run-id", run_id, "--quiet"]) in (0, 2)
    capsys.readouterr()
    assert gate("cand-1", "--baseline", "base-1") == 2
    out = capsys.readouterr().out
    assert f"config: {ds / 'goldenkit.toml'} (sha256 " in out and "recorded by the run" in out
    assert "[FAIL] regression.critical[refunds]" in out


def test_missing_repeats_are_not_evidence_on_either_side(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a run.json that says 3 repeats and complete, with only the first repeat of the refunds rows
    cut = [(r, s, v[:1] if s == "refunds" else v) for r, s, v in good_rows()]
    put(work, "cut", cut, model_id="model-b")
    assert gate("cut", "--baseline", "base") == 3
    assert "run.repeats: the run is incomplete: 4 row(s) have fewer than its 3 repeats" in capsys.readouterr().out
    assert gate("good", "--baseline", "cut") == 3
    assert "baseline cut is not evidence: incomplete: 4 row(s)" in capsys.readouterr().out
    assert main(["compare", "base", "cut"]) == 3
    assert "candidate cut: incomplete" in capsys.readouterr().err


def test_a_recorded_config_that_changed_since_the_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the run recorded cfg/g.toml (critical refunds); later the file at that path says regression = false
    ds = Path(__file__).resolve().parents[1] / "datasets" / "support-agent"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "g.toml").write_text((ds / "goldenkit.toml").read_text())
    for run_id, fx in (("b", "baseline"), ("c", "candidate")):
        argv = ["run", str(ds), "--provider", "fixtures", "--fixtures", str(ds / "fixtures" / fx), "--quiet"]
        assert main([*argv, "--split", "holdout", "--run-id", run_id, "--config", "cfg/g.toml"]) in (0, 2)
    assert gate("c", "--baseline", "b") == 2
    (tmp_path / "cfg" / "g.toml").write_text("[gate]\nregression = false\n")
    capsys.readouterr()
    assert gate("c", "--baseline", "b") == 1
    assert "the goldenkit.toml the run recorded changed since the run" in capsys.readouterr().err
    assert gate("c", "--baseline", "b", "--config", "cfg/g.toml") == 3  # named explicitly: applied as it is
    assert "the policy checks no quality: regression = false" in capsys.readouterr().out  # and it checks nothing


def test_a_regrade_of_the_baseline_is_not_a_candidate(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # goldenkit regrade base --run-id rg, with the same graders: the same answers, the same verdicts
    put_with(work, "rg", good_rows(), mode="regrade", regraded_from={"run_id": "base", "path": "results/base"})
    assert gate("rg", "--baseline", "base") == 1
    assert gate("base", "--baseline", "rg") == 1  # the other way round
    put_with(work, "rg2", good_rows(), mode="regrade", regraded_from={"run_id": "rg", "answers_from": "base"})
    assert gate("rg2", "--baseline", "rg") == 1 and gate("rg2", "--baseline", "base") == 1  # a regrade of a regrade
    assert "a regrade of the same answers" in capsys.readouterr().err


def test_a_recorded_config_that_is_gone_is_not_replaced_by_another(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the run recorded a goldenkit.toml (path and sha256) that is not there now: the current folder's is not it
    put_with(
        work, "moved", good_rows(), config={"extra": {"config_file": "/nowhere/g.toml", "config_sha256": "ab" * 32}}
    )
    capsys.readouterr()
    assert gate("moved", "--baseline", "base") == 1
    assert "the goldenkit.toml the run recorded (sha256 abababababab) is not there" in capsys.readouterr().err
    assert gate("moved", "--baseline", "base", "--config", "goldenkit.toml") == 0


def test_rows_gone_from_a_run_that_counts_them_are_not_evidence(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the baseline lost the rows the candidate broke, while its run.json still counts them
    rows = [r for r in good_rows() if r[1] != "refunds"]
    put_with(work, "holes", rows, counts={"total": 912, "expected": 912})
    capsys.readouterr()
    assert gate("good", "--baseline", "holes") == 3
    assert "incomplete: 900 of the 912 outcomes its run.json counts" in capsys.readouterr().out


# ---------------------------------------------------------------- the three-way gate, through the CLI


def _tiny(root: Path, run_id: str, failing: set[int], n: int = 10, slices: tuple[str, ...] = ("s",)) -> None:
    rows = [(f"r{i}", slices[i % len(slices)], ["FAIL" if i in failing else "PASS"]) for i in range(n)]
    write_run(root / "results", manifest(run_id, repeats=1), frame(rows, run_id), parquet=True)


def test_ten_row_runs_of_different_agents_pass_in_neither_direction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # no goldenkit.toml anywhere: the default policy, with its margin of 0.05
    monkeypatch.chdir(tmp_path)
    _tiny(tmp_path, "a", {8, 9})  # 8 of 10 pass
    _tiny(tmp_path, "b", {0, 1, 2, 3})  # 6 of 10 pass: 4 broke, 2 fixed against a
    for cand, base in (("b", "a"), ("a", "b")):
        capsys.readouterr()
        assert gate(cand, "--baseline", base) == 3, cand
        out = capsys.readouterr().out
        assert out.splitlines()[1].startswith("config: none found")  # built-in defaults
        assert "[NOT SHOWN] non_inferiority: overall: upper 95% bound of the paired drop" in out
        assert "paired rows would show it with 80% power" in out
        assert out.splitlines()[-1].startswith("gate NOT EVIDENCE: non_inferiority: ")


def test_an_unchanged_agent_on_a_tutorial_sized_dataset_is_not_evidence_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text('[gate]\ncritical = ["refunds"]\nnon_inferiority_margin = 0.1\n', encoding="utf-8")
    for run_id in ("v1", "v1-again"):
        _tiny(tmp_path, run_id, {5}, n=20, slices=("refunds", "account"))
    assert gate("v1-again", "--baseline", "v1", "--config", "g.toml", "--json") == 3
    doc = json.loads(capsys.readouterr().out)
    failed = {r["name"]: r["exit_code"] for r in doc["rules"] if not r["passed"]}
    assert failed == {"non_inferiority": 3, "non_inferiority[refunds]": 3}  # not shown; nothing failed
    assert gate("v1-again", "--baseline", "v1", "--config", "g.toml") == 3
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("gate NOT EVIDENCE: non_inferiority: overall: upper 95% bound of the paired drop")


def test_a_shard_is_refused_as_a_baseline_by_the_gate_and_by_baseline_save(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    put_with(work, "part", good_rows(), shard={"k": 1, "n": 2})
    capsys.readouterr()
    assert gate("good", "--baseline", "part") == 3
    out = capsys.readouterr().out
    assert "baseline part is not evidence: it is shard 1/2 of a sharded run: merge its shards first" in out
    assert main(["baseline", "save", "part", "--name", "half"]) == 1
    err = capsys.readouterr().err
    assert "cannot save baseline 'half': run part is shard 1/2 of a sharded run: merge its shards first" in err
    assert not (work / "baselines" / "half.json").exists()
    merged = {"shard": {"k": 1, "n": 2}, "merged_from": ["part", "part-2"], "started_at": "2026-11-30T12:00:00Z"}
    put_with(work, "whole", good_rows(), **merged)
    assert gate("good", "--baseline", "whole") == 0
