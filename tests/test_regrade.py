"""``goldenkit regrade``: the stored answers of a run graded again, end to end through the CLI on the demo fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from factories import rows_of, write_dataset
from fakeserver import FakeModelServer, Reply

import goldenkit
from goldenkit.cli import main
from goldenkit.results import outcomes_df, read_run

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "datasets" / "support-agent"
FIXTURES = DATASET / "fixtures"
CONFIG = DATASET / "goldenkit.toml"
# a contract option that changes verdicts: no answer is a refusal any more
STRICT = '[graders]\nuse = ["contract", "trajectory"]\n[graders.contract]\nrefusal_patterns = ["^NEVER-MATCHES$"]\n'


def run(agent: str, run_id: str, *extra: str) -> int:
    argv = ["run", str(DATASET), "--provider", "fixtures", "--fixtures", str(FIXTURES / agent), "--split", "holdout"]
    return main([*argv, "--run-id", run_id, "--quiet", *extra])


def regrade(*argv: str) -> int:
    return main(["regrade", *argv, "--quiet"])


def by_pair(run_id: str) -> dict[tuple[str, int], dict]:
    df = outcomes_df(run_id)
    return {(r["row_id"], int(r["repeat"])): r for r in df.to_dict("records")}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Baseline and candidate replays of the demo's holdout (1200 outcomes each, 4 ERRORs in the baseline)."""
    root = tmp_path_factory.mktemp("regrade")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert run("baseline", "base") == 0
        assert run("candidate", "cand") == 0
        (root / "strict.toml").write_text(STRICT, encoding="utf-8")
    return root


@pytest.fixture
def here(work: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(work)
    return work


def test_same_config_gives_identical_verdicts_and_compares(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert regrade("base", "--run-id", "same") == 0
    man = read_run("same").manifest
    base = read_run("base").manifest
    assert man["mode"] == "regrade" and man["regraded_from"]["run_id"] == "base"
    for field in ("dataset", "agent_version", "graders", "judge_version", "repeats", "sample"):
        assert man[field] == base[field], field
    assert man["counts"] == base["counts"] and man["validity"] == "VALID" and man["complete"]
    assert man["timings"]["invocations"][-1]["calls"] == 0  # no model was called
    from goldenkit.report import run_key_table

    assert run_key_table(man).loc["regraded from", "value"] == "base"
    old, new = by_pair("base"), by_pair("same")
    assert old.keys() == new.keys() and len(new) == 1200
    for pair, rec in old.items():
        got = new[pair]
        assert got["run_id"] == "same"
        for field in ("verdict", "detail", "graders", "response", "trajectory", "latency_ms", "attempts", "tokens_in"):
            assert got[field] == rec[field] or (got[field] != got[field] and rec[field] != rec[field]), (pair, field)
    errors = {p for p, r in old.items() if r["verdict"] == "ERROR"}
    assert len(errors) == 4 and errors == {p for p, r in new.items() if r["verdict"] == "ERROR"}
    capsys.readouterr()
    assert main(["compare", "base", "same"]) == 0
    assert "mode differs (allowed): fixtures vs regrade" in capsys.readouterr().out
    # a regrade of the baseline's own answers compares (identical verdicts), but is no candidate to gate
    assert main(["gate", "same", "--baseline", "base", "--config", str(CONFIG)]) == 1
    assert "a regrade of the same answers" in capsys.readouterr().err


def test_a_changed_grader_changes_verdicts_and_errors_stay_errors(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert regrade("base", "--run-id", "strict", "--config", "strict.toml") == 0
    old, new = by_pair("base"), by_pair("strict")
    changed = [p for p in old if old[p]["verdict"] != new[p]["verdict"]]
    assert changed and all((old[p]["verdict"], new[p]["verdict"]) == ("PASS", "FAIL") for p in changed)
    assert all("refusal" in new[p]["graders"]["contract"]["reason"] for p in changed)
    for p, rec in old.items():
        if rec["verdict"] == "ERROR":  # copied as it was: same detail, same kind, no graders
            assert (new[p]["verdict"], new[p]["detail"], new[p]["error_kind"]) == (
                "ERROR",
                rec["detail"],
                rec["error_kind"],
            )
    capsys.readouterr()
    assert main(["compare", "base", "strict"]) == 4  # other grader versions: not the same protocol
    assert "grader versions differ: contract 1 vs 1+" in capsys.readouterr().err
    # a regrade of the candidate with the same graders is the same protocol: they compare and gate
    assert regrade("cand", "--run-id", "cand-strict", "--config", "strict.toml") == 0
    capsys.readouterr()
    assert main(["compare", "strict", "cand-strict"]) == 0
    assert main(["gate", "cand-strict", "--baseline", "strict", "--config", str(CONFIG)]) == 2  # the demo regression
    decision = capsys.readouterr().out
    assert "not comparable" not in decision
    assert "regression.critical[refunds]: refunds: b=8" in decision.splitlines()[-1]


def test_refusals_are_clear_and_write_nothing(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert regrade("base", "--run-id", "base") == 1
    assert "is the run being regraded" in capsys.readouterr().err
    assert regrade("base", "--run-id", "cand") == 1  # an existing run that is not a regrade of base
    assert "run cand already exists and is not a regrade of base" in capsys.readouterr().err
    assert regrade("base", "--run-id", "st", "--graders", "contract,nope") == 1
    assert "unknown grader 'nope'" in capsys.readouterr().err
    assert not (here / "results" / "st").exists()

    broken = here / "results" / "broken"
    shutil.copytree(here / "results" / "base", broken)
    lines = (broken / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert first["verdict"] != "ERROR"
    first.update(response=None, run_id="broken")
    (broken / "outcomes.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    man = json.loads((broken / "run.json").read_text(encoding="utf-8"))
    (broken / "run.json").write_text(json.dumps({**man, "run_id": "broken"}), encoding="utf-8")
    assert regrade("broken", "--run-id", "x") == 1
    err = capsys.readouterr().err
    assert "run broken has no stored response for 1 graded outcome(s): " + f"{first['row_id']}#{first['repeat']}" in err

    (broken / "run.json").write_text(json.dumps({**man, "run_id": "broken", "complete": False}), encoding="utf-8")
    assert regrade("broken", "--run-id", "x") == 1
    assert "run broken is not a complete VALID run (incomplete)" in capsys.readouterr().err
    invalid = {**man, "run_id": "broken", "validity": "INVALID", "invalid_reason": "error rate 9% exceeds 2%"}
    (broken / "run.json").write_text(json.dumps(invalid), encoding="utf-8")
    assert regrade("broken", "--run-id", "x") == 1
    assert "not a complete VALID run (error rate 9% exceeds 2%)" in capsys.readouterr().err
    assert not (here / "results" / "x").exists()


def test_graders_needing_what_outcomes_do_not_keep_are_refused() -> None:
    from goldenkit.errors import ResultsError
    from goldenkit.graders import RetrievalGrader, StateGrader
    from goldenkit.records import Case, Turn
    from goldenkit.runner._regrade import _check_graders

    plain = Case(id="a", shape="contract", turns=(Turn("hi"),))
    stateful = Case(id="b", shape="contract", turns=(Turn("hi"),), final_state={"k": 1})
    rag = Case(id="c", shape="contract", turns=(Turn("hi"),), expect={"retrieval": ["d1"]})
    _check_graders([StateGrader(), RetrievalGrader()], {"a": plain})  # nothing to check there: fine
    with pytest.raises(ResultsError, match="the state grader needs the session's final state"):
        _check_graders([StateGrader()], {"a": plain, "b": stateful})
    with pytest.raises(ResultsError, match=r"retrieval grader needs the ids .* \[graders.retrieval\] tools"):
        _check_graders([RetrievalGrader()], {"c": rag})
    _check_graders([RetrievalGrader(tools=["search"])], {"c": rag})  # ids from the stored tool responses


def test_python_api_and_resume(here: Path) -> None:
    s = goldenkit.regrade("base", "api", ["contract", "trajectory"], progress=False)
    assert s.validity == "VALID" and s.calls == 0 and s.counts == read_run("base").manifest["counts"]
    again = goldenkit.regrade("base", "api", ["contract", "trajectory"], progress=False)  # a regrade of base: resumed
    assert again.resumed == 1200 and again.counts == s.counts


def test_a_judge_in_a_regrade_calls_the_judge_through_the_runs_retries(here: Path, tmp_path: Path) -> None:
    (tmp_path / "rubric.md").write_text("Accept a helpful answer.", encoding="utf-8")
    with FakeModelServer(default=Reply.text('{"decision": "ACCEPT", "score": 1, "reasons": ["ok"]}')) as srv:
        srv.script(Reply.status(503))  # the first judge call is retried, as in a run
        (tmp_path / "judge.toml").write_text(
            '[graders]\nuse = ["contract", "trajectory", "judge"]\n'
            '[judge]\nprovider = "openai"\nmodel = "judge-m"\nrubric = "rubric.md"\n'
            f'[judge.options]\nbase_url = "{srv.url}"\n',
            encoding="utf-8",
        )
        src = here / "results" / "small"
        shutil.copytree(here / "results" / "base", src)
        keep = [json.loads(x) for x in (src / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
        keep = [{**r, "run_id": "small"} for r in keep if r["row_id"] in {keep[0]["row_id"], keep[3]["row_id"]}]
        (src / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep), encoding="utf-8")
        man = json.loads((src / "run.json").read_text(encoding="utf-8"))
        man.update(run_id="small", counts={**man["counts"], "total": len(keep), "expected": len(keep)})
        (src / "run.json").write_text(json.dumps(man), encoding="utf-8")
        (src / "outcomes.parquet").unlink()
        assert regrade("small", "--run-id", "judged", "--config", str(tmp_path / "judge.toml")) == 0
        graded = [r for r in keep if r["verdict"] != "ERROR"]
        assert srv.count() == len(graded) + 1  # one call per graded outcome, plus the retried 503
    new = by_pair("judged")
    assert all(new[(r["row_id"], r["repeat"])]["graders"]["judge"]["passed"] is True for r in graded)
    assert read_run("judged").manifest["judge_version"].startswith("judge-m+")


def test_stored_answers_no_grader_checked_are_graded_by_the_new_graders(tmp_path: Path) -> None:
    """A SKIPPED row with an answer (no old grader applied) is graded by the new graders; one
    whose call failed stays the copied ERROR."""
    from goldenkit.dataset import read_dataset
    from goldenkit.providers._callable import CallableProvider

    cases = {
        "c": {"prompt": "say yes", "expect": {"must_contain": ["yes"]}},
        "r": {"prompt": "say yes", "reference": "yes"},
        "e": {"prompt": "fail", "reference": "yes"},
    }
    ds = write_dataset(tmp_path, rows_of(cases), version="1")

    def agent(case):  # type: ignore[no-untyped-def]
        if case.id == "e":
            raise ValueError("the agent broke")
        return "yes"

    res = tmp_path / "res"
    first = goldenkit.run_eval(
        read_dataset(ds),
        CallableProvider(agent),
        ["contract"],
        run_id="old",
        results_dir=res,
        progress=False,
        max_ungradable=None,
        max_error_rate=1.0,
    )
    old = {r["row_id"]: r for r in read_run(first.path).outcomes().to_dict("records")}
    assert (old["c"]["verdict"], old["r"]["verdict"], old["e"]["verdict"]) == ("PASS", "SKIPPED", "ERROR")
    new = goldenkit.regrade("old", "new", ["contract", "reference"], results_dir=res, progress=False)
    got = {r["row_id"]: r for r in read_run(new.path).outcomes().to_dict("records")}
    assert got["r"]["verdict"] == "PASS" and "reference" in got["r"]["graders"]  # graded, not copied
    assert got["c"]["verdict"] == "PASS"
    assert got["e"]["verdict"] == "ERROR" and got["e"]["detail"] == old["e"]["detail"]  # no answer: copied
