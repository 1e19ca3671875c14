"""Other harnesses' results in the shapes their users keep: older versions, other layouts, limits.

Each shape is written here from the tool's documented layout, and read again from the
real files other projects committed (the folder beside the checkout, through
tests/_shared.py): promptfoo outputs of each results version, deepeval's own
``.deepeval/.latest_test_run.json`` and its 2024 layout, lm-eval samples named ``.json``
and 0.3 ``--write_out`` arrays, inspect samples that hit a limit and were scored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _shared import shared_path

from goldenkit import outcomes_df
from goldenkit.cli import main
from goldenkit.errors import InputError
from goldenkit.harnesses import import_run

MORE = ("interop-more", "results")


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def verdicts(run_dir: Path) -> dict[str, str]:
    df = outcomes_df(run_dir)
    return dict(zip(df["row_id"], df["verdict"], strict=True))


# ---------------------------------------------------------------- promptfoo: the prompt is its template

TEMPLATES = ["Translate to French: {{text}}", "Say in French, casually: {{ text }}"]
TEXTS = ["hello", "good night", "thank you", "see you", "cheers"]


def _render(template: str, text: str) -> str:
    return template.replace("{{text}}", text).replace("{{ text }}", text)


def promptfoo_results(version: int) -> dict[str, Any]:
    """Two templates x five tests in the shape of results ``version`` (2 or 3), rows in completion order."""
    rows = []
    for t, text in enumerate(TEXTS):
        for p, template in enumerate(TEMPLATES):
            row: dict[str, Any] = {
                "provider": {"id": "openai:gpt-4o-mini", "label": ""},
                "vars": {"text": text},
                "response": {"output": f"answer {p} {t}"},
                "success": (t + p) % 2 == 0,
                "score": float((t + p) % 2 == 0),
            }
            rendered = _render(template, text)
            if version == 3:
                row.update(promptIdx=p, testIdx=t, prompt={"raw": rendered, "label": template}, failureReason=0)
                row["testCase"] = {"vars": {"text": text}, "assert": [{"type": "contains", "value": "merci"}]}
            else:  # version 2: the rendered text only; the template is in table.head.prompts
                row["prompt"] = {"raw": rendered}
            rows.append(row)
    rows.reverse()  # completion order, not grouped by prompt or test
    head = {"prompts": [{"raw": t, "provider": "openai:gpt-4o-mini"} for t in TEMPLATES], "vars": ["text"]}
    body = [{"description": f"test {t}", "vars": [text], "outputs": []} for t, text in enumerate(TEXTS)]
    return {"version": version, "results": rows, "stats": {}, "table": {"head": head, "body": body}}


@pytest.mark.parametrize("version", [2, 3])
def test_promptfoo_two_templates_five_tests_are_two_runs_that_pair(tmp_path: Path, version: int) -> None:
    path = write_json(tmp_path / "out.json", {"results": promptfoo_results(version)})
    runs = import_run(path, format="promptfoo", run_id="pf", results_dir=tmp_path / "results")
    assert [r.run_id for r in runs] == ["pf-openai-gpt-4o-mini-prompt0", "pf-openai-gpt-4o-mini-prompt1"]
    for p, run in enumerate(runs):
        assert run.manifest["counts"]["total"] == 5 and run.manifest["repeats"] == 1
        assert run.manifest["source"]["identifiers"]["prompt"] == TEMPLATES[p]
        want = hashlib.sha256(TEMPLATES[p].encode()).hexdigest()
        assert run.manifest["agent_version"]["prompt_sha256"] == want
    assert set(verdicts(runs[0].path)) == set(verdicts(runs[1].path))  # the same rows under both templates
    assert runs[0].manifest["dataset"]["sha256"] == runs[1].manifest["dataset"]["sha256"]
    by_text = {json.loads(line)["case"]["prompt"]: line for line in (runs[0].path / "cases.jsonl").open()}
    assert set(by_text) == {_render(TEMPLATES[0], text) for text in TEXTS}


def test_promptfoo_version_2_label_and_descriptions_from_the_table(tmp_path: Path) -> None:
    doc = promptfoo_results(2)
    for row in doc["results"]:  # prompt.display (version 2's label) holds the template
        row["prompt"]["display"] = next(t for t in TEMPLATES if _render(t, row["vars"]["text"]) == row["prompt"]["raw"])
    path = write_json(tmp_path / "out.json", {"results": doc})
    runs = import_run(path, format="promptfoo", run_id="pf", results_dir=tmp_path / "results")
    assert [r.manifest["source"]["identifiers"]["prompt"] for r in runs] == TEMPLATES
    assert all(r.manifest["counts"]["total"] == 5 for r in runs)
    # the row id hashes {description, vars}: the description came from table.body
    want = {
        "t"
        + hashlib.sha256(
            json.dumps(
                {"description": f"test {t}", "vars": {"text": text}},
                sort_keys=True,
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode()
        ).hexdigest()[:16]
        for t, text in enumerate(TEXTS)
    }
    assert set(verdicts(runs[0].path)) == want


def test_promptfoo_rendered_text_matching_no_template_is_refused(tmp_path: Path) -> None:
    doc = promptfoo_results(2)
    doc["results"][3]["prompt"]["raw"] = "something no template renders"
    path = write_json(tmp_path / "out.json", {"results": doc})
    with pytest.raises(InputError, match=r"out\.json: results\[3\]: the prompt is only its rendered text"):
        import_run(path, format="promptfoo", run_id="pf", results_dir=tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_promptfoo_version_2_files_of_a_user_repository(tmp_path: Path) -> None:
    folder = shared_path(*MORE, "h-k-nyosu__promptfoo-practice")
    simple = import_run(
        folder / "examples__simple-test__output.json", format="promptfoo", run_id="s", results_dir=tmp_path
    )
    assert len(simple) == 2  # two templates, each with every one of the five tests
    for run in simple:
        assert run.manifest["counts"] == {"PASS": 0, "FAIL": 5, "ERROR": 0, "SKIPPED": 0, "total": 5, "expected": 5}
        assert "{{body}}" in run.manifest["source"]["identifiers"]["prompt"]
    assert set(verdicts(simple[0].path)) == set(verdicts(simple[1].path))
    js = import_run(folder / "examples__js-config__output.json", format="promptfoo", run_id="j", results_dir=tmp_path)
    assert [r.manifest["counts"]["PASS"] for r in js] == [4, 4]
    assert set(verdicts(js[0].path)) == set(verdicts(js[1].path)) and len(verdicts(js[0].path)) == 4


# ---------------------------------------------------------------- deepeval


def _case(name: str, inp: str, success: bool, **extra: Any) -> dict[str, Any]:
    metric = {"name": "Correctness", "threshold": 0.5, "success": success, "score": 0.9 if success else 0.1}
    return {"name": name, "input": inp, "actualOutput": "a", "success": success, "metricsData": [metric], **extra}


def test_deepeval_latest_test_run_wrapper_and_shared_names(tmp_path: Path) -> None:
    cases = [_case("test_batch", "q1", True), _case("test_batch", "q2", False), _case("test_one", "q3", True)]
    deepeval_dir = tmp_path / ".deepeval"
    deepeval_dir.mkdir()
    write_json(deepeval_dir / ".latest_test_run.json", {"testRunData": {"testCases": cases, "testPassed": 2}})
    write_json(deepeval_dir / ".temp_test_run_data.json", {"testCases": cases[:1]})
    (run,) = import_run(deepeval_dir, format="deepeval", run_id="d", results_dir=tmp_path / "results")
    assert run.manifest["source"]["file_name"] == ".latest_test_run.json"  # the file deepeval reads back
    h1, h2 = (hashlib.sha256(json.dumps(q).encode()).hexdigest()[:8] for q in ("q1", "q2"))
    assert verdicts(run.path) == {f"test_batch#{h1}": "PASS", f"test_batch#{h2}": "FAIL", "test_one": "PASS"}
    (bare,) = import_run(
        deepeval_dir / ".temp_test_run_data.json", format="deepeval", run_id="t", results_dir=tmp_path / "results"
    )
    assert verdicts(bare.path) == {"test_batch": "PASS"}


def test_deepeval_same_name_and_input_twice_is_refused_naming_both(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "run.json", {"testCases": [_case("t", "q", True), _case("u", "x", True), _case("t", "q", False)]}
    )
    with pytest.raises(InputError, match=r"run\.json: test cases #1 and #3 have the same name 't' and the same input"):
        import_run(path, format="deepeval", run_id="d", results_dir=tmp_path / "results")


def test_deepeval_2024_metrics_metadata_layout(tmp_path: Path) -> None:
    old = {
        "name": "test_refusal",
        "input": "q",
        "actualOutput": "no",
        "success": False,
        "metricsMetadata": [
            {
                "metric": "Answer Relevancy",
                "threshold": 0.7,
                "success": False,
                "score": 0.4,
                "reason": "off topic",
                "evaluationModel": "gpt-4o",
            }
        ],
    }
    doc = {"testFile": "test_chat.py", "deployment": False, "testCases": [old], "metricScores": []}
    path = write_json(tmp_path / "20240801_101500.json", doc)
    (run,) = import_run(path, format="deepeval", run_id="d", metric="Answer Relevancy", results_dir=tmp_path / "r")
    df = outcomes_df(run.path)
    assert df["verdict"].tolist() == ["FAIL"] and df["graders"][0]["Answer Relevancy"]["score"] == pytest.approx(0.4)
    assert run.manifest["judge_version"] == "gpt-4o"
    (by_score,) = import_run(
        path, format="deepeval", run_id="e", metric="Answer Relevancy", threshold=0.3, results_dir=tmp_path / "r"
    )
    assert outcomes_df(by_score.path)["verdict"].tolist() == ["PASS"]


def test_deepeval_latest_test_runs_of_user_repositories(tmp_path: Path) -> None:
    offer = shared_path(*MORE, "ChuckieEsan__Offer-Catcher", "backend__.deepeval__.latest_test_run.json")
    (run,) = import_run(offer, format="deepeval", run_id="offer", results_dir=tmp_path)
    doc = json.loads(offer.read_text(encoding="utf-8"))["testRunData"]
    by_order = {c["order"]: c for c in doc["testCases"]}
    df = outcomes_df(run.path)
    assert len(set(df["row_id"])) == 10 and all(
        r.startswith("test_all_scenarios_batch_deepeval#") for r in df["row_id"]
    )
    # row order is the file's; the hand check by order: FPPPPPPFPP
    assert "".join(v[0] for v in df["verdict"]) == "FPPPPPPFPP" and [by_order[i]["order"] for i in range(10)]
    industry = shared_path(*MORE, "Mango-Leach__industryproject", ".deepeval__.latest_test_run.json")
    (ind,) = import_run(industry, format="deepeval", run_id="ind", results_dir=tmp_path)
    got = verdicts(ind.path)
    assert sorted(r for r, v in got.items() if v == "PASS") == ["test_case_17", "test_case_7", "test_case_9"]
    rasa = shared_path(*MORE, "JustChaos10__Rasa-Alizha-Chatbot", ".deepeval__.latest_test_run.json")
    (conv,) = import_run(rasa, format="deepeval", run_id="rasa", results_dir=tmp_path)
    assert verdicts(conv.path) == {"Knowledge Retention": "FAIL"}


# ---------------------------------------------------------------- lm-eval


def test_lm_eval_samples_recognized_by_content_whatever_the_name(tmp_path: Path) -> None:
    lines = [
        {"doc_id": i, "doc": {"q": i}, "target": "A", "resps": [], "filtered_resps": ["A"], "acc": float(i % 2)}
        for i in range(4)
    ]
    path = tmp_path / "samples_toy_2024-06-17T16-12-47.023639.json"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    (run,) = import_run(path, format="lm-eval", run_id="a", results_dir=tmp_path / "r")
    assert verdicts(run.path) == {"0": "FAIL", "1": "PASS", "2": "FAIL", "3": "PASS"}
    assert run.manifest["source"]["identifiers"]["task"] == "toy"
    other = tmp_path / "my-export.txt"
    other.write_bytes(path.read_bytes())
    (same,) = import_run(other, format="lm-eval", run_id="b", results_dir=tmp_path / "r")
    assert same.manifest["dataset"]["sha256"] == run.manifest["dataset"]["sha256"]
    results_like = write_json(tmp_path / "results_x.json", {"results": {"toy": {"acc,none": 0.5}}})
    with pytest.raises(InputError, match=r"results_x\.json:1: sample without doc_id; not an lm-eval samples file"):
        import_run(results_like, format="lm-eval", run_id="c", results_dir=tmp_path / "r")


def test_lm_eval_0_3_write_out_strings_are_booleans_and_numbers(tmp_path: Path) -> None:
    docs = [
        {
            "doc_id": i,
            "prompt_0": f"Q{i}",
            "logit_0": "yes" if i else "no",
            "truth": " yes",
            "acc": str(bool(i)),
            "em": str(i % 2),
            "f1": str(0.25 * i),
        }
        for i in range(4)
    ]
    path = write_json(tmp_path / "boolq_write_out_info.json", docs)
    (acc,) = import_run(path, format="lm-eval", run_id="acc", metric="acc", results_dir=tmp_path / "r")
    assert verdicts(acc.path) == {"0": "FAIL", "1": "PASS", "2": "PASS", "3": "PASS"}
    assert acc.manifest["source"]["identifiers"]["layout"] == "0.3 write_out"
    assert acc.manifest["source"]["identifiers"]["task"] == "boolq"
    assert outcomes_df(acc.path)["response"].tolist()[1] == '["yes"]'
    (em,) = import_run(path, format="lm-eval", run_id="em", metric="em", results_dir=tmp_path / "r")
    assert verdicts(em.path) == {"0": "FAIL", "1": "PASS", "2": "FAIL", "3": "PASS"}
    with pytest.raises(InputError, match=r"boolq_write_out_info\.json: \[1\]: doc_id 1: f1 score 0\.25 is not 0/1"):
        import_run(path, format="lm-eval", run_id="f1", metric="f1", results_dir=tmp_path / "r")
    (f1,) = import_run(path, format="lm-eval", run_id="f1", metric="f1", threshold=0.5, results_dir=tmp_path / "r")
    assert verdicts(f1.path) == {"0": "FAIL", "1": "FAIL", "2": "PASS", "3": "PASS"}


def test_lm_eval_older_layouts_of_real_repositories(tmp_path: Path) -> None:
    folder = shared_path(*MORE, "EleutherAI__lm-evaluation-harness")
    (path,) = sorted(folder.glob("*samples_stereotype_classification_*.json"))
    (run,) = import_run(path, format="lm-eval", run_id="st", results_dir=tmp_path)
    assert run.manifest["counts"]["PASS"] == 336 and run.manifest["counts"]["total"] == 609
    got = verdicts(run.path)
    assert (
        "".join("1" if got[str(i)] == "PASS" else "0" for i in range(40)) == "0100011000001111111000101001111100010000"
    )
    germanquad = shared_path(*MORE, "RibinMTC__lm-evaluation-harness")
    (wo,) = sorted(germanquad.glob("*_write_out_info.json"))
    with pytest.raises(InputError, match=r"no per-sample metric with a verdict \(present: exact, f1, "):
        import_run(wo, format="lm-eval", run_id="g", results_dir=tmp_path)
    with pytest.raises(InputError, match=r"_write_out_info\.json: \[0\]: doc_id 0: exact score \"\(\{'id': 41032"):
        import_run(wo, format="lm-eval", run_id="g", metric="exact", results_dir=tmp_path)


# ---------------------------------------------------------------- inspect


def inspect_log(samples: list[dict[str, Any]], scorers: list[str] | None = None) -> dict[str, Any]:
    return {
        "version": 2,
        "status": "success",
        "eval": {
            "run_id": "R",
            "task": "toy",
            "model": "mockllm/model",
            "config": {"epochs": 1},
            "dataset": {"sample_ids": [s["id"] for s in samples]},
        },
        "results": {"scores": [{"name": n} for n in (scorers if scorers is not None else ["match"])]},
        "samples": samples,
    }


def test_inspect_limited_sample_in_a_real_log_keeps_its_score(tmp_path: Path) -> None:
    log = shared_path(*MORE, "carlosrymer__inspect-ai-owasp-agentic-top10")
    (path,) = sorted(log.glob("*.eval"))
    (run,) = import_run(path, format="inspect", run_id="u", scorer="task_utility", results_dir=tmp_path)
    m = run.manifest
    assert m["counts"] == {"PASS": 28, "FAIL": 4, "ERROR": 0, "SKIPPED": 0, "total": 32, "expected": 32}
    assert m["source"]["identifiers"]["limits"] == {"message": 1} and "1 sample(s) hit a limit" in m["notes"][0]
    df = outcomes_df(run.path).set_index("row_id")
    assert df.at["S4-seat-expansion::A06-5", "verdict"] == "PASS"
    assert df.at["S4-seat-expansion::A06-5", "detail"] == "inspect limit: message (limit 34)"
    fails = sorted(df.index[df["verdict"] == "FAIL"])
    assert fails == sorted(
        [
            "S6-customer-side-outage::A03-3",
            "S5-invoice-to-ap::A03-4",
            "S7-rate-limit-answer::A06-3",
            "S2-outage-credit::A06-6",
        ]
    )


def test_inspect_dataset_import_keeps_the_input_fingerprint(tmp_path: Path) -> None:
    samples = [
        {"id": i, "epoch": 1, "input": f"q{i}", "target": "x", "scores": {"match": {"value": "C"}}} for i in (1, 2)
    ]
    rows = "".join(
        json.dumps({"id": str(i), "slice": "s", "split": "dev", "case": {"prompt": f"q{i}"}}) + "\n" for i in (1, 2)
    )
    (tmp_path / "ds.jsonl").write_text(rows, encoding="utf-8")
    a = write_json(tmp_path / "a.json", inspect_log(samples))
    changed = [dict(samples[0], input="another question"), samples[1]]
    b = write_json(tmp_path / "b.json", inspect_log(changed))
    (ra,) = import_run(a, format="inspect", run_id="a", dataset=tmp_path / "ds.jsonl", results_dir=tmp_path / "r")
    (rb,) = import_run(b, format="inspect", run_id="b", dataset=tmp_path / "ds.jsonl", results_dir=tmp_path / "r")
    (plain,) = import_run(a, format="inspect", run_id="p", results_dir=tmp_path / "r")
    assert ra.manifest["dataset"]["sha256"] == rb.manifest["dataset"]["sha256"]  # the dataset's own hash
    assert ra.manifest["source"]["inputs_sha256"] != rb.manifest["source"]["inputs_sha256"]
    assert ra.manifest["source"]["inputs_sha256"] == plain.manifest["dataset"]["sha256"]


def test_inspect_log_without_samples_and_another_tools_file_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = [
        (
            write_json(tmp_path / "nosamples.json", inspect_log([])),
            "inspect",
            "nosamples.json: no samples: the inspect log (status 'success') was written without samples",
        ),
        (
            write_json(tmp_path / "pf.json", {"results": promptfoo_results(3)}),
            "adk",
            "pf.json: not an ADK EvalSetResult (no eval_case_results list)",
        ),
        (
            write_json(tmp_path / "de.json", {"testRunData": {"testCases": []}}),
            "deepeval",
            "de.json: no samples: the deepeval test run holds no test case",
        ),
    ]
    cut = tmp_path / "cut.evalset_result.json"
    cut.write_text('{"eval_set_id": "s", "eval_case_results": [{"eval_id": "a", "final_', encoding="utf-8")
    bad.append((cut, "adk", "cut.evalset_result.json: not a readable ADK EvalSetResult (invalid or truncated JSON"))
    for path, fmt, message in bad:
        code = main(["import-run", str(path), "--format", fmt, "--run-id", "r", "--results-dir", str(tmp_path / "r")])
        err = capsys.readouterr().err
        assert code == 1 and message in err and err.count("\n") == 1 and "Traceback" not in err, (message, err)
    assert not (tmp_path / "r").exists()


def test_inspect_no_score_log_is_skipped_not_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = [{"id": i, "epoch": 1, "input": f"q{i}", "target": "x", "output": {"completion": "x"}} for i in (1, 2)]
    log = inspect_log(samples, scorers=[])
    log["results"] = None
    path = write_json(tmp_path / "noscore.json", log)
    code = main(["import-run", str(path), "--format", "inspect", "--run-id", "n", "--results-dir", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert code == 0 and "every row SKIPPED (not graded: not evidence)" in out
    assert set(verdicts(tmp_path / "r" / "n").values()) == {"SKIPPED"}
    with pytest.raises(InputError, match=r"noscore\.json: no scores in the log"):
        import_run(path, format="inspect", run_id="m", scorer="match", results_dir=tmp_path / "r")
