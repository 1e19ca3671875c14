"""ADK's own files as their users have them, and imported runs graded again.

* ``adk eval``'s history (``.adk/eval_history/*.evalset_result.json``) imported as runs,
  on files written here in the EvalSetResult layout and on real files users committed;
* ADK conversation-scenarios files (``adk eval_set add_eval_case --scenarios_file``)
  imported as datasets of scenario cases;
* ``goldenkit regrade`` over imported runs: an inspect log run with ``--no-score`` and a
  promptfoo output graded by goldenkit's graders.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _shared import shared_path

from goldenkit import outcomes_df, read_dataset, read_run
from goldenkit.cli import main
from goldenkit.errors import DatasetError, InputError, UsageError
from goldenkit.harnesses import import_run

MORE = ("interop-more", "results")
CRITERION = {"threshold": 1.0, "match_type": "IN_ORDER"}


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def invocation(user: str, answer: str) -> dict[str, Any]:
    return {
        "invocation_id": f"e-{user}",
        "user_content": {"role": "user", "parts": [{"text": user, "thought": None}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


def case_result(eval_id: str, status: int, score: float, *, threshold: float = 1.0, set_id: str = "support") -> Any:
    metric = {
        "metric_name": "tool_trajectory_avg_score",
        "threshold": threshold,
        "criterion": {**CRITERION, "threshold": threshold},
        "score": score,
        "eval_status": status,
    }
    per = {
        "actual_invocation": invocation(f"ask {eval_id}", f"answer {eval_id} {score}"),
        "expected_invocation": invocation(f"ask {eval_id}", "expected"),
        "eval_metric_results": [metric],
    }
    return {
        "eval_set_file": set_id,
        "eval_set_id": set_id,
        "eval_id": eval_id,
        "final_eval_status": status,
        "eval_metric_results": None,
        "overall_eval_metric_results": [metric],
        "eval_metric_result_per_invocation": [per],
        "session_id": "s",
        "user_id": "u",
    }


def history_file(folder: Path, set_id: str, stamp: float, cases: list[Any]) -> Path:
    rid = f"app_{set_id}_{stamp}"
    doc = {
        "eval_set_result_id": rid,
        "eval_set_result_name": rid,
        "eval_set_id": set_id,
        "eval_case_results": cases,
        "creation_timestamp": stamp,
    }
    return write_json(folder / f"{rid}.evalset_result.json", doc)


def test_eval_history_real_files_map_statuses_and_metrics(tmp_path: Path) -> None:
    dandy = shared_path(*MORE, "TheDandyCodes__agent_cli_example")
    failed, passed = sorted(dandy.glob("*.evalset_result.json"))
    (a,) = import_run(failed, format="adk", run_id="a", results_dir=tmp_path)
    (b,) = import_run(passed, format="adk", run_id="b", results_dir=tmp_path)
    assert outcomes_df(a.path)["verdict"].tolist() == ["FAIL"] and outcomes_df(b.path)["verdict"].tolist() == ["PASS"]
    cell = outcomes_df(a.path)["graders"][0]
    assert {k: v for k, v in cell["tool_trajectory_avg_score"].items() if k != "findings"} == {
        "passed": False,
        "score": 0.0,
        "reason": "threshold 1.0",
        "error": False,
    }
    assert cell["final_response_match_v2"]["passed"] is True and a.manifest["judge_version"] == "gemini-flash-latest"
    ids = a.manifest["source"]["identifiers"]
    assert ids["eval_set_id"] == "support_eval" and ids["creation_timestamps"] == [1777978521.845588]
    assert ids["eval_set_result_ids"] == ["app_support_eval_1777978521.845588"]
    assert a.manifest["dataset"]["sha256"] == b.manifest["dataset"]["sha256"]  # the same case: rows pair
    lead = shared_path(*MORE, "MirkoGilioli__lead-qualifier-agent")
    (one,) = import_run(next(lead.glob("*.json")), format="adk", run_id="lead", results_dir=tmp_path)
    cell = outcomes_df(one.path)["graders"][0]
    assert cell["rubric_based_final_response_quality_v1"]["score"] == 0.5 and not cell["safety_v1"]["error"]
    assert outcomes_df(one.path)["verdict"].tolist() == ["FAIL"]
    ambient = shared_path(*MORE, "urnimukherjee21-rgb__ambient-expense-agent")
    (skipped,) = import_run(next(ambient.glob(".adk*.json")), format="adk", run_id="amb", results_dir=tmp_path)
    assert skipped.manifest["counts"]["SKIPPED"] == 4 and skipped.manifest["counts"]["total"] == 4


def test_a_changed_criterion_does_not_compare_as_a_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dandy = shared_path(*MORE, "TheDandyCodes__agent_cli_example")
    failed, passed = sorted(dandy.glob("*.evalset_result.json"))
    monkeypatch.chdir(tmp_path)
    assert main(["import-run", str(failed), "--format", "adk", "--run-id", "before"]) == 0
    assert main(["import-run", str(passed), "--format", "adk", "--run-id", "after"]) == 0
    # the trajectory threshold went from 1.0 to 0.0: the criterion changed, not the agent
    assert main(["compare", "before", "after"]) == 4


def test_eval_history_folder_one_run_per_adk_run_and_they_compare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hist = tmp_path / "app" / ".adk" / "eval_history"
    hist.mkdir(parents=True)
    for i, (eval_id, status) in enumerate([("install", 2), ("billing", 1), ("refund", 1)]):  # first run, one per case
        history_file(hist, "support", 1000.0 + i, [case_result(eval_id, status, 1.0 if status == 1 else 0.0)])
    for i, (eval_id, status) in enumerate([("refund", 1), ("install", 1), ("billing", 2)]):  # second run
        history_file(hist, "support", 2000.0 + i, [case_result(eval_id, status, 1.0 if status == 1 else 0.0)])
    history_file(hist, "other", 1500.0, [case_result("x", 1, 1.0, set_id="other")])
    with pytest.raises(InputError, match=r"results of 2 eval sets \(other, support\); name one with --eval-set"):
        import_run(hist, format="adk", run_id="h", results_dir=tmp_path / "results")
    monkeypatch.chdir(tmp_path)
    assert main(["import-run", str(hist), "--format", "adk", "--eval-set", "support", "--run-id", "h"]) == 0
    out = capsys.readouterr().out
    assert "h-19700101T001640Z: 3 outcomes (PASS 2, FAIL 1, ERROR 0)" in out
    assert "h-19700101T003320Z: 3 outcomes (PASS 2, FAIL 1, ERROR 0)" in out
    first = read_run("h-19700101T001640Z")
    assert len(first.manifest["source"]["identifiers"]["files"]) == 3
    assert main(["compare", "h-19700101T001640Z", "h-19700101T003320Z", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted((f["row_id"], f["status"]) for f in doc["flips"]) == [
        ("billing", "NEW_FAILURE"),
        ("install", "RECOVERED"),
    ]
    with pytest.raises(InputError, match=r"no result of eval set 'nope' \(--eval-set\); present: other, support"):
        import_run(hist, format="adk", eval_set="nope", run_id="n", results_dir=tmp_path / "results")


def test_eval_history_refuses_an_eval_set_a_case_twice_and_a_bad_status(tmp_path: Path) -> None:
    evalset = write_json(tmp_path / "s.evalset.json", {"eval_set_id": "s", "eval_cases": []})
    with pytest.raises(InputError, match=r"s\.evalset\.json: an ADK EvalSet \(the cases\), not an EvalSetResult"):
        import_run(evalset, format="adk", run_id="r", results_dir=tmp_path / "r")
    twice = history_file(tmp_path, "s", 1.0, [case_result("a", 1, 1.0), case_result("a", 2, 0.0)])
    with pytest.raises(InputError, match=r"eval_case_results\[1\] \(a\): eval case 'a' twice in one run"):
        import_run(twice, format="adk", run_id="r", results_dir=tmp_path / "r")
    bad = history_file(tmp_path, "t", 2.0, [dict(case_result("a", 1, 1.0), final_eval_status=7)])
    with pytest.raises(InputError, match=r"eval_case_results\[0\] \(a\): final_eval_status 7 is not 1/2/3"):
        import_run(bad, format="adk", run_id="r", results_dir=tmp_path / "r")
    with pytest.raises(UsageError, match=r"--eval-set does not apply to --format inspect"):
        import_run(bad, format="inspect", eval_set="t", run_id="r", results_dir=tmp_path / "r")
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- conversation scenarios


def test_conversation_scenarios_files_of_user_repositories(tmp_path: Path) -> None:
    folder = shared_path("interop")
    cine = folder / "santhu45482__cineflow" / "tests__eval__conversation_scenarios.json"
    assert main(["dataset", "import", str(cine), "-o", str(tmp_path / "cine"), "--format", "adk"]) == 0
    ds = read_dataset(tmp_path / "cine")
    raw = json.loads(cine.read_text(encoding="utf-8"))["scenarios"]
    assert len(ds.rows) == 3 and all(rid.startswith("scenario-") and len(rid) == 21 for rid in ds.column("id"))
    cases = [ds.case(rid) for rid in ds.column("id")]
    assert [c.scenario.starting_prompt for c in cases] == [s["starting_prompt"] for s in raw]
    assert cases[0].scenario.plan.startswith(raw[0]["conversation_plan"])
    assert "Play this user persona: FILM_DIRECTOR" in cases[0].scenario.plan
    assert cases[1].scenario.plan.endswith("Play this user persona: EXPERT (an ADK pre-built persona).")
    assert all("simulated_user" in tags for tags in ds.column("tags"))
    vak = folder / "rn17369__VakLab" / "eval__conversation_scenarios.json"
    assert main(["dataset", "import", str(vak), "-o", str(tmp_path / "vak"), "--format", "adk"]) == 0
    assert len(set(read_dataset(tmp_path / "vak").column("id"))) == 5  # five scenarios, one starting prompt


def test_conversation_scenarios_ids_and_bad_files(tmp_path: Path) -> None:
    scenario = {"starting_prompt": "Hi", "conversation_plan": "Ask for a refund.", "user_persona": "NOVICE"}
    path = write_json(tmp_path / "scenarios.json", {"scenarios": [scenario, {**scenario, "id": "x"}]})
    with pytest.raises(
        DatasetError,
        match=r"scenarios\.json: scenarios\[1\]: duplicate id \"scenario-[0-9a-f]{12}\" "
        r"\(first at scenarios\.json scenarios\[0\]\)",
    ):
        main_import(path, tmp_path / "out")
    empty = write_json(tmp_path / "empty.json", {"scenarios": []})
    with pytest.raises(DatasetError, match=r"empty\.json: not an ADK conversation-scenarios file"):
        main_import(empty, tmp_path / "out")
    one = write_json(tmp_path / "one.json", {"scenarios": [scenario]})
    main_import(one, tmp_path / "one")
    other = write_json(tmp_path / "two.json", {"scenarios": [{**scenario, "name": "renamed"}]})
    main_import(other, tmp_path / "two")
    assert read_dataset(tmp_path / "one").column("id") == read_dataset(tmp_path / "two").column("id")


def main_import(src: Path, out: Path) -> None:
    from goldenkit.formats import import_dataset

    import_dataset(src, out, "adk")


# ---------------------------------------------------------------- regrade of imported runs


def test_regrade_an_inspect_log_run_with_no_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"1": ("Paris", "The capital is Paris."), "2": ("Rome", "It is Milan."), "3": ("Oslo", "Oslo!")}
    samples = [
        {
            "id": int(i),
            "epoch": 1,
            "input": [{"id": f"m{i}", "role": "user", "content": f"Capital {i}?"}],
            "target": f" {target}",
            "output": {"choices": [{"message": {"role": "assistant", "content": said}}]},
        }
        for i, (target, said) in answers.items()
    ]
    log = {
        "version": 2,
        "status": "success",
        "results": None,
        "samples": samples,
        "eval": {"task": "capitals", "model": "mockllm/model", "config": {}, "dataset": {"sample_ids": [1, 2, 3]}},
    }
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "noscore.json", log)
    assert main(["import-run", "noscore.json", "--format", "inspect", "--run-id", "raw"]) == 0
    assert set(outcomes_df("raw")["verdict"]) == {"SKIPPED"}
    assert main(["regrade", "raw", "--run-id", "graded", "--graders", "contract", "--quiet"]) == 0
    got = outcomes_df("graded").set_index("row_id")["verdict"].to_dict()
    assert got == {"1": "PASS", "2": "FAIL", "3": "PASS"}
    m = read_run("graded").manifest
    assert m["mode"] == "regrade" and m["regraded_from"]["run_id"] == "raw" and list(m["graders"]) == ["contract"]
    assert (
        m["source"]["format"] == "inspect" and m["dataset"]["sha256"] == read_run("raw").manifest["dataset"]["sha256"]
    )


def test_regrade_a_promptfoo_output_and_an_import_without_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {
            "promptIdx": 0,
            "testIdx": i,
            "provider": {"id": "echo"},
            "prompt": {"raw": f"Say {w}", "label": "Say {{w}}"},
            "vars": {"w": w},
            "testCase": {"vars": {"w": w}, "assert": [{"type": "contains", "value": w}]},
            "response": {"output": out},
            "success": True,
            "score": 1,
            "failureReason": 0,
        }
        for i, (w, out) in enumerate([("hi", "hi there"), ("bye", "see you")])
    ]
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "pf.json", {"results": {"version": 3, "results": rows}})
    assert main(["import-run", "pf.json", "--format", "promptfoo", "--run-id", "pf"]) == 0
    assert main(["regrade", "pf", "--run-id", "pf-contract", "--graders", "contract", "--quiet"]) == 0
    assert outcomes_df("pf-contract").set_index("row_id")["verdict"].to_dict() == {"0": "PASS", "1": "FAIL"}
    de = {"testCases": [{"name": "c", "input": "q", "actualOutput": "a", "success": True, "metricsData": []}]}
    write_json(tmp_path / "de.json", de)
    assert main(["import-run", "de.json", "--format", "deepeval", "--run-id", "de"]) == 0
    capsys.readouterr()
    assert main(["regrade", "de", "--run-id", "de2", "--graders", "contract", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "run de was imported from deepeval without the cases a goldenkit grader reads" in err
    assert err.count("\n") == 1 and not (tmp_path / "results" / "de2").exists()
