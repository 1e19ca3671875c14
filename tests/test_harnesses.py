"""Importing other harnesses' results (goldenkit.harnesses) on the real files in ../shared/interop/results/.

Every file there is read; counts (samples x epochs = outcomes), the verdicts of
samples checked by hand against the files (the values the folder's README lists),
the tool's identifiers, identities stable across two imports, and the fingerprint rule.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from _shared import shared_dir, shared_fixture

from goldenkit import outcomes_df, read_run
from goldenkit.dataset import canonical_sha256
from goldenkit.harnesses import import_run, sample_differences

RESULTS = shared_dir("interop", "results")
_needs_results = shared_fixture("interop", "results")

INSPECT = RESULTS / "UKGovernmentBEIS__inspect_ai"
GPT5 = INSPECT / "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval"
SONNET = INSPECT / "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_jKN69eAYYpZFAZhRgMAztp.eval"
STREAMING = INSPECT / "tests__log__test_eval_log__log_streaming.eval"
POPULARITY_JSON = INSPECT / "tests__analysis__test_logs__2025-05-12T20-28-13-04-00_popularity.json"
LM = RESULTS / "EleutherAI__lm-evaluation-harness"
LM_PREFIX = "outputs__qwen3-8b__negotiationtom__Qwen__Qwen3-8B__"
BELIEF = LM / f"{LM_PREFIX}samples_negotiationtom_belief_2026-07-08T16-04-34.219874.jsonl"
INTENTION = LM / f"{LM_PREFIX}samples_negotiationtom_intention_2026-07-08T16-04-34.219874.jsonl"
PF = RESULTS / "promptfoo__promptfoo"
DE = RESULTS / "confident-ai__deepeval"
CREWAI = DE / "tests__test_integrations__test_crewai__test_run__test_sync_eval.json"
LANGGRAPH = DE / "tests__test_integrations__test_langgraph__test_run__test_sync_eval.json"
OPENAI_EVALS = (
    RESULTS / "openai__evals" / "tests__unit__evals__biomed2402__SRL__log__gpt-4-cot_semantic_role_recognition.jsonl"
)


def verdicts_by_row(run_dir: Path) -> dict[str, str]:
    """Per row, its verdicts in repeat order as letters (P/F/E), e.g. {"5": "PPFFP"}."""
    df = outcomes_df(run_dir).sort_values(["row_id", "repeat"])
    return {str(rid): "".join(v[0] for v in g["verdict"]) for rid, g in df.groupby("row_id", sort=False)}


def test_every_file_of_the_folder_is_covered() -> None:
    known = {GPT5, SONNET, STREAMING, POPULARITY_JSON, BELIEF, INTENTION, CREWAI, LANGGRAPH, OPENAI_EVALS}
    known |= {PF / "examples__simple-cli__output.json", PF / "test____fixtures____sample-export.json"}
    known |= {PF / "examples__simple-test__output.csv", LM / f"{LM_PREFIX}results_2026-07-08T16-04-34.219874.json"}
    present = {p for p in RESULTS.rglob("*") if p.is_file() and p.name != "README.md"}
    assert present == known


# ---------------------------------------------------------------- inspect


def test_inspect_eval_logs_of_the_eval_set(tmp_path: Path) -> None:
    (gpt5,) = import_run(GPT5, format="inspect", run_id="gpt5", results_dir=tmp_path)
    (sonnet,) = import_run(SONNET, format="inspect", run_id="sonnet", results_dir=tmp_path)
    for run, passes in ((gpt5, 30), (sonnet, 33)):
        m = run.manifest
        assert m["mode"] == "imported" and m["repeats"] == 5 and m["validity"] == "VALID" and m["complete"]
        assert m["counts"] == {
            "PASS": passes,
            "FAIL": 50 - passes,
            "ERROR": 0,
            "SKIPPED": 0,
            "total": 50,
            "expected": 50,
        }
        assert (run.path / "outcomes.parquet").exists() and (run.path / "outcomes.jsonl").exists()
        assert m["source"]["format"] == "inspect" and m["source"]["file"] == str(run.manifest["source"]["file"])
        assert m["source"]["identifiers"]["eval_set_id"] == "Fcv3TQy7U5DffzLHPyyLGn"
        assert m["graders"] == {"match": "inspect"}
    assert gpt5.manifest["agent_version"]["model_id"] == "openai/gpt-5"
    assert gpt5.manifest["source"]["identifiers"]["run_id"] == "Nfe5yTPw4Uk48Any6im6WM"
    assert sonnet.manifest["agent_version"]["model_id"] == "anthropic/claude-sonnet-4-20250514"
    # hand-check values (per sample id, epochs 1..5)
    g = verdicts_by_row(gpt5.path)
    assert g == {
        "1": "FFFFF",
        "2": "PPPPP",
        "3": "FFFFF",
        "4": "PPPPP",
        "5": "FFFFF",
        "6": "PPPPP",
        "7": "FFFFF",
        "8": "PPPPP",
        "9": "PPPPP",
        "10": "PPPPP",
    }
    s = verdicts_by_row(sonnet.path)
    assert s["5"] == "PPFFP" and s["1"] == "FFFFF" and s["10"] == "PPPPP"
    # the same 10 samples: the same fingerprint
    assert gpt5.manifest["dataset"]["sha256"] == sonnet.manifest["dataset"]["sha256"]
    assert sample_differences(gpt5, sonnet) == []
    df = outcomes_df(gpt5.path)
    assert set(df["repeat"]) == {0, 1, 2, 3, 4} and set(df["slice"]) == {"all"}
    assert df["response"].notna().all() and (df["latency_ms"] > 0).all()


def test_inspect_fingerprint_is_the_dataset_hash_rule_over_id_and_input(tmp_path: Path) -> None:
    import zipfile

    (run,) = import_run(STREAMING, format="inspect", run_id="s", results_dir=tmp_path)
    with zipfile.ZipFile(STREAMING) as zf:
        samples = [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("samples/")]
    lines = {str(s["id"]): {"id": str(s["id"]), "input": s["input"]} for s in samples}
    text = "".join(
        json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n" for v in lines.values()
    )
    assert run.manifest["dataset"]["sha256"] == canonical_sha256(text.encode())
    # and it is plain SHA-256 over the sorted lines (the rule in DESIGN.md, computed independently)
    digest = hashlib.sha256(b"".join(line.encode() + b"\n" for line in sorted(text.splitlines()))).hexdigest()
    assert run.manifest["dataset"]["sha256"] == digest
    assert verdicts_by_row(run.path) == {"1": "FP", "2": "PP"}
    assert run.manifest["counts"]["total"] == 4 and run.manifest["repeats"] == 2


def test_inspect_json_log_that_was_cancelled_is_not_evidence(tmp_path: Path) -> None:
    (run,) = import_run(POPULARITY_JSON, format="inspect", run_id="pop", results_dir=tmp_path)
    m = run.manifest
    assert verdicts_by_row(run.path) == {"1": "P", "2": "P", "3": "F"}
    assert m["counts"]["total"] == 3 and m["agent_version"]["model_id"] == "openai/gpt-4o-mini"
    assert m["validity"] == "INVALID" and "cancelled" in m["invalid_reason"] and m["complete"] is False
    assert m["source"]["finished"] is False


def test_two_imports_of_one_log_have_the_same_identities(tmp_path: Path) -> None:
    (a,) = import_run(GPT5, format="inspect", run_id="a", results_dir=tmp_path)
    (b,) = import_run(GPT5, format="inspect", run_id="b", results_dir=tmp_path)
    cols = ["row_id", "repeat", "verdict", "dataset_sha256", "slice"]
    da, db = outcomes_df(a.path, columns=cols), outcomes_df(b.path, columns=cols)
    assert da.equals(db)
    assert a.manifest["dataset"] == b.manifest["dataset"]


# ---------------------------------------------------------------- lm-eval


def test_lm_eval_samples_with_the_results_file(tmp_path: Path) -> None:
    (belief,) = import_run(BELIEF, format="lm-eval", run_id="belief", results_dir=tmp_path)
    (intention,) = import_run(INTENTION, format="lm-eval", run_id="intention", results_dir=tmp_path)
    by_doc = verdicts_by_row(belief.path)
    assert "".join("1" if by_doc[str(i)] == "P" else "0" for i in range(20)) == "01111101101100000000"
    by_doc = verdicts_by_row(intention.path)
    assert "".join("1" if by_doc[str(i)] == "P" else "0" for i in range(20)) == "00000000001111000000"
    m = belief.manifest
    assert m["graders"] == {"acc,none": "lm-eval"} and intention.manifest["graders"] == {"exact_match,none": "lm-eval"}
    assert m["counts"]["total"] == 20 and m["counts"]["expected"] == 20 and m["validity"] == "VALID"
    assert m["agent_version"]["model_id"] == "Qwen/Qwen3-8B" and m["dataset"]["name"] == "negotiationtom_belief"
    ids = m["source"]["identifiers"]
    assert ids["lm_eval_version"] == "0.4.13.dev0" and ids["results_file"].endswith(
        "results_2026-07-08T16-04-34.219874.json"
    )
    assert ids["task_hash"] == "c39025f3a090ab57d9914278941c54ab264f588f4047b4dbdf089b26f2b6dbd5"


def test_lm_eval_slice_from_the_doc(tmp_path: Path) -> None:
    (run,) = import_run(BELIEF, format="lm-eval", run_id="b", slice_field="slot", results_dir=tmp_path)
    df = outcomes_df(run.path)
    lines = [json.loads(x) for x in BELIEF.read_text(encoding="utf-8").splitlines()]
    assert dict(zip(df["row_id"], df["slice"], strict=True)) == {str(x["doc_id"]): x["doc"]["slot"] for x in lines}


# ---------------------------------------------------------------- promptfoo


def test_promptfoo_export_one_run_per_provider(tmp_path: Path) -> None:
    runs = import_run(
        PF / "test____fixtures____sample-export.json", format="promptfoo", run_id="pf", results_dir=tmp_path
    )
    by_id = {r.run_id: r for r in runs}
    assert set(by_id) == {"pf-openai-gpt-5", "pf-openai-gpt-5-mini"}
    for rid, scores in (("pf-openai-gpt-5", {"0": 0.5, "1": 0.667}), ("pf-openai-gpt-5-mini", {"0": 0.75, "1": 0.667})):
        df = outcomes_df(by_id[rid].path)
        assert list(df["verdict"]) == ["FAIL", "FAIL"]  # failed by the latency assertion, failureReason 1: not ERRORs
        got = {r: round(g["promptfoo"]["score"], 3) for r, g in zip(df["row_id"], df["graders"], strict=True)}
        assert got == scores
    five = by_id["pf-openai-gpt-5"].manifest
    assert five["agent_version"]["model_id"] == "openai:gpt-5"
    assert five["source"]["identifiers"]["promptfooVersion"] == "0.118.10"
    assert five["dataset"]["sha256"] == by_id["pf-openai-gpt-5-mini"].manifest["dataset"]["sha256"]
    (one,) = import_run(
        PF / "test____fixtures____sample-export.json",
        format="promptfoo",
        run_id="only",
        provider="openai:gpt-5",
        results_dir=tmp_path,
    )
    assert one.run_id == "only" and one.manifest["agent_version"]["model_id"] == "openai:gpt-5"


def test_promptfoo_two_prompts_are_two_runs_that_pair_by_test(tmp_path: Path) -> None:
    runs = import_run(
        PF / "examples__simple-cli__output.json",
        format="promptfoo",
        run_id="cli",
        slice_field="language",
        results_dir=tmp_path,
    )
    assert [r.run_id for r in runs] == ["cli-openai-gpt-4o-mini-prompt0", "cli-openai-gpt-4o-mini-prompt1"]
    for r in runs:
        assert r.manifest["counts"]["PASS"] == 4 and r.manifest["counts"]["total"] == 4
        assert sorted(outcomes_df(r.path)["row_id"]) == ["0", "1", "2", "3"]
    assert runs[0].manifest["agent_version"]["prompt_sha256"] != runs[1].manifest["agent_version"]["prompt_sha256"]
    assert runs[0].manifest["dataset"]["sha256"] == runs[1].manifest["dataset"]["sha256"]
    doc = json.loads((PF / "examples__simple-cli__output.json").read_text(encoding="utf-8"))
    language = {str(r["testIdx"]): r["vars"]["language"] for r in doc["results"]["results"]}
    df = outcomes_df(runs[0].path)
    assert dict(zip(df["row_id"], df["slice"], strict=True)) == language


def test_promptfoo_csv(tmp_path: Path) -> None:
    import csv

    runs = import_run(PF / "examples__simple-test__output.csv", format="promptfoo", run_id="csv", results_dir=tmp_path)
    assert [r.run_id for r in runs] == ["csv-prompt0", "csv-prompt1"]
    with (PF / "examples__simple-test__output.csv").open(encoding="utf-8", newline="") as fh:
        bodies = [row[2] for row in list(csv.reader(fh))[1:]]

    def row_id(body: str) -> str:  # the documented rule: "t" + 16 hex of SHA-256 of canonical {description, vars}
        text = json.dumps({"description": None, "vars": {"body": body}}, sort_keys=True, separators=(",", ":"))
        return "t" + hashlib.sha256(text.encode()).hexdigest()[:16]

    first, second = (verdicts_by_row(r.path) for r in runs)
    got = {body[:12]: first[row_id(body)] + second[row_id(body)] for body in bodies}
    # hand-check: prompt 1 / prompt 2 per test row
    assert got == {"Yes": "FF", "I'm hungry": "FP", "Output the s": "PP", "Hello world": "PP", "The quick br": "FF"}
    assert runs[0].manifest["counts"] == {"PASS": 2, "FAIL": 3, "ERROR": 0, "SKIPPED": 0, "total": 5, "expected": 5}
    assert runs[0].manifest["dataset"]["sha256"] == runs[1].manifest["dataset"]["sha256"]


# ---------------------------------------------------------------- deepeval, openai-evals


def test_deepeval_test_runs(tmp_path: Path) -> None:
    (crew,) = import_run(CREWAI, format="deepeval", run_id="crew", results_dir=tmp_path)
    (lang,) = import_run(LANGGRAPH, format="deepeval", run_id="lang", results_dir=tmp_path)
    assert verdicts_by_row(crew.path) == {"test_case_0": "P", "test_case_1": "P"}
    assert verdicts_by_row(lang.path) == {"test_case_0": "F", "test_case_1": "P"}
    assert crew.manifest["judge_version"] == "gpt-4.1"
    df = outcomes_df(lang.path)
    assert [g["deepeval"]["score"] for g in df["graders"]] == [0.2, 0.6]  # Task Completion, from the trace span
    # the span metric decides by the tool's own threshold, or by ours
    (own,) = import_run(
        LANGGRAPH, format="deepeval", run_id="tc", metric="Task Completion", threshold=0.1, results_dir=tmp_path
    )
    assert verdicts_by_row(own.path) == {"test_case_0": "P", "test_case_1": "P"}
    assert own.manifest["graders"] == {"Task Completion": "deepeval threshold 0.1"}


def test_openai_evals_log_without_final_report_is_incomplete(tmp_path: Path) -> None:
    (run,) = import_run(OPENAI_EVALS, format="openai-evals", run_id="oe", results_dir=tmp_path)
    m = run.manifest
    assert m["validity"] == "INVALID" and "final_report" in m["invalid_reason"] and m["complete"] is False
    assert m["counts"]["total"] == 9 and m["counts"]["ERROR"] == 9  # 9 sample ids, none graded
    assert m["source"]["identifiers"]["run_id"] == "240206062816JZOWUWI3"
    assert m["agent_version"]["model_id"] == "zhishu/gpt-4-cot"
    df = outcomes_df(run.path)
    detail = dict(zip(df["row_id"], df["detail"], strict=True))
    assert "choice 'E'" in detail["semantic_role_recognition.test.25"]
    assert "never graded" in detail["semantic_role_recognition.test.231"]
    assert not (run.path / "outcomes.parquet").exists()
    assert read_run(run.path).outcomes()["verdict"].tolist() == ["ERROR"] * 9
