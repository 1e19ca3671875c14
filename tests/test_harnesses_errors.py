"""ERROR mapping, zstd logs, datasets and bad input of goldenkit.harnesses, on files written here.

None of the real result files has a sample-level error, so each format's error
fields are exercised on small files written from the documented schemas (the
interop README and each harness's own docs): inspect ``error`` / ``limit`` /
``error_retries``, promptfoo ``failureReason: 2`` and a version-2 ``response.error``,
deepeval metric ``error``, openai-evals finished and unfinished logs.
"""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import factories
import pandas as pd
import pytest
import zstandard
from _shared import needs_shared, shared_dir
from factories import row

from goldenkit import outcomes_df, read_dataset
from goldenkit.cli import main
from goldenkit.errors import InputError, UsageError
from goldenkit.harnesses import import_run

RESULTS = shared_dir("interop", "results")
INSPECT = RESULTS / "UKGovernmentBEIS__inspect_ai"
STREAMING = INSPECT / "tests__log__test_eval_log__log_streaming.eval"
GPT5 = INSPECT / "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval"
BELIEF = next(iter(sorted((RESULTS / "EleutherAI__lm-evaluation-harness").glob("*samples_*belief*.jsonl"))), None)


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def inspect_log(samples: list[dict[str, Any]], *, status: str = "success", ids: list[Any] | None = None) -> Any:
    """An inspect JSON log with the documented keys."""
    return {
        "version": 2,
        "status": status,
        "eval": {
            "run_id": "R1",
            "eval_id": "E1",
            "task": "toy",
            "model": "mockllm/model",
            "created": "2026-11-30T10:00:00+00:00",
            "dataset": {"name": "toy", "sample_ids": ids if ids is not None else [s.get("id") for s in samples]},
            "config": {"epochs": 1},
        },
        "plan": {},
        "results": {"total_samples": len(samples), "completed_samples": len(samples), "scores": [{"name": "match"}]},
        "stats": {},
        "samples": samples,
    }


def sample(sid: Any, value: Any = "C", **extra: Any) -> dict[str, Any]:
    return {
        "id": sid,
        "epoch": 1,
        "input": f"question {sid}",
        "target": "x",
        "scores": {"match": {"value": value}},
        **extra,
    }


def zstd_zip(path: Path, members: dict[str, bytes]) -> Path:
    """A zip whose members are zstd-compressed (method 93), as current inspect writes .eval logs."""
    out, central = bytearray(), bytearray()
    for name, data in members.items():
        comp = zstandard.ZstdCompressor().compress(data)
        crc, raw_name = zlib.crc32(data), name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 63, 0, 93, 0, 0x21, crc, len(comp), len(data), len(raw_name), 0)
        out += raw_name + comp
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            63,
            63,
            0,
            93,
            0,
            0x21,
            crc,
            len(comp),
            len(data),
            len(raw_name),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += raw_name
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + eocd))
    return path


# ---------------------------------------------------------------- ERROR mapping


def test_inspect_error_is_an_error_a_limit_keeps_its_score_retries_are_not(tmp_path: Path) -> None:
    retried = sample(1, "C", error_retries=[{"message": "RateLimitError: 429", "traceback": "", "traceback_ansi": ""}])
    failed = sample(2, "I", error={"message": "RuntimeError: boom\nmore", "traceback": "tb", "traceback_ansi": "tb"})
    limited = sample(3, "I", limit={"type": "token", "limit": 1000})
    log = write_json(tmp_path / "log.json", inspect_log([retried, failed, limited, sample("x-4", "I")]))
    (run,) = import_run(log, format="inspect", run_id="r", results_dir=tmp_path / "results")
    df = outcomes_df(run.path).set_index("row_id")
    assert df["verdict"].to_dict() == {"1": "PASS", "2": "ERROR", "3": "FAIL", "x-4": "FAIL"}
    assert df.at["2", "detail"] == "inspect error: RuntimeError: boom"
    assert df.at["3", "detail"] == "inspect limit: token (limit 1000)" and df.at["3", "graders"]["match"]["score"] == 0
    assert df.at["2", "error_kind"] == "infrastructure" and pd.isna(df.at["1", "error_kind"])
    assert df.at["2", "graders"]["match"]["error"] is True and df.at["2", "graders"]["match"]["passed"] is None
    m = run.manifest
    assert m["counts"]["ERROR"] == 1 and m["error_rate"] == 0.25 and m["validity"] == "INVALID"
    assert m["source"]["identifiers"]["limits"] == {"token": 1}
    assert m["notes"] == ["1 sample(s) hit a limit (token 1); each keeps the score inspect gave it"]


def test_inspect_values_booleans_numbers_and_threshold(tmp_path: Path) -> None:
    samples = [sample(1, True), sample(2, 0), sample(3, "N"), sample(4, 0.75), sample(5, "P")]
    log = write_json(tmp_path / "log.json", inspect_log(samples))
    with pytest.raises(
        InputError, match=r"log\.json: sample 4 epoch 1: match score 0\.75 is not 0/1; pass --threshold"
    ):
        import_run(log, format="inspect", run_id="r", results_dir=tmp_path / "results")
    assert not (tmp_path / "results").exists()
    (run,) = import_run(log, format="inspect", run_id="r", threshold=0.6, results_dir=tmp_path / "results")
    verdicts = outcomes_df(run.path).set_index("row_id")["verdict"].to_dict()
    assert verdicts == {"1": "PASS", "2": "FAIL", "3": "FAIL", "4": "PASS", "5": "FAIL"}
    assert run.manifest["graders"] == {"match": "inspect threshold 0.6"}


def test_inspect_missing_samples_make_the_run_incomplete(tmp_path: Path) -> None:
    log = write_json(tmp_path / "log.json", inspect_log([sample(1), sample(2)], ids=[1, 2, 3]))
    (run,) = import_run(log, format="inspect", run_id="r", results_dir=tmp_path / "results")
    assert run.manifest["validity"] == "INVALID" and run.manifest["invalid_reason"] == "incomplete: 2 of 3 outcomes"
    assert run.manifest["complete"] is False


@needs_shared("interop", "results")
def test_zstd_eval_log_reads_like_the_deflate_one(tmp_path: Path) -> None:
    with zipfile.ZipFile(STREAMING) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    zst = zstd_zip(tmp_path / "zstd.eval", members)
    with zipfile.ZipFile(zst) as zf:
        assert {i.compress_type for i in zf.infolist()} == {93}
    (a,) = import_run(zst, format="inspect", run_id="zstd", results_dir=tmp_path / "results")
    (b,) = import_run(STREAMING, format="inspect", run_id="deflate", results_dir=tmp_path / "results")
    cols = ["row_id", "repeat", "verdict", "dataset_sha256"]
    assert outcomes_df(a.path, columns=cols).equals(outcomes_df(b.path, columns=cols))
    # a corrupt zstd member is bad input naming the file and member
    broken = bytearray(zst.read_bytes())
    at = broken.index(b"header.json") + len("header.json") + 8
    broken[at : at + 4] = b"\x00\x00\x00\x00"
    (tmp_path / "broken.eval").write_bytes(bytes(broken))
    with pytest.raises(InputError, match=r"broken\.eval: member header\.json"):
        import_run(tmp_path / "broken.eval", format="inspect", run_id="x", results_dir=tmp_path / "results")


def test_promptfoo_failure_reason_2_and_v2_response_error_are_errors(tmp_path: Path) -> None:
    def result(test_idx: int, success: bool, reason: int, error: str | None = None) -> dict[str, Any]:
        return {
            "id": f"u{test_idx}",
            "promptIdx": 0,
            "testIdx": test_idx,
            "promptId": "p",
            "provider": {"id": "echo", "label": ""},
            "prompt": {"raw": "Say {{x}}", "label": "Say {{x}}"},
            "vars": {"x": str(test_idx)},
            "testCase": {"vars": {"x": str(test_idx)}, "assert": []},
            "response": {"output": "hi"},
            "success": success,
            "score": 1 if success else 0,
            "namedScores": {},
            "latencyMs": 5,
            "cost": 0,
            "error": error,
            "failureReason": reason,
        }

    v3 = {"version": 3, "timestamp": "2026-11-30T10:00:00Z", "prompts": [], "stats": {}}
    v3["results"] = [result(0, True, 0), result(1, False, 1, "Expected hi"), result(2, False, 2, "API error 500")]
    path = write_json(tmp_path / "out.json", {"evalId": "eval-1", "results": v3, "config": {}})
    (run,) = import_run(path, format="promptfoo", run_id="pf", results_dir=tmp_path / "results")
    df = outcomes_df(run.path).set_index("row_id")
    assert df["verdict"].to_dict() == {"0": "PASS", "1": "FAIL", "2": "ERROR"}
    assert df.at["2", "detail"] == "promptfoo error: API error 500"
    v2 = {"version": 2, "timestamp": "t", "results": [], "stats": {}}
    v2["results"] = [
        {
            "provider": {"id": "echo"},
            "prompt": {"raw": "Say {{x}}", "display": "Say"},
            "vars": {"x": "1"},
            "response": {"output": "hi"},
            "success": True,
            "score": 1,
        },
        {
            "provider": {"id": "echo"},
            "prompt": {"raw": "Say {{x}}", "display": "Say"},
            "vars": {"x": "2"},
            "response": {"error": "connection refused"},
            "success": False,
            "score": 0,
            "error": "connection refused",
        },
    ]
    (old,) = import_run(
        write_json(tmp_path / "v2.json", {"results": v2}),
        format="promptfoo",
        run_id="v2",
        results_dir=tmp_path / "results",
    )
    assert sorted(outcomes_df(old.path)["verdict"]) == ["ERROR", "PASS"]


def test_promptfoo_repeats_are_repeats_of_one_row(tmp_path: Path) -> None:
    rows = []
    for idx, (x, ok) in enumerate([("a", True), ("b", True), ("a", False), ("b", True)]):
        rows.append(
            {
                "promptIdx": 0,
                "testIdx": idx,
                "provider": {"id": "echo"},
                "prompt": {"raw": "p"},
                "vars": {"x": x},
                "testCase": {"vars": {"x": x}, "assert": []},
                "success": ok,
                "score": int(ok),
                "failureReason": 0 if ok else 1,
            }
        )
    path = write_json(tmp_path / "rep.json", {"results": {"version": 3, "results": rows}})
    (run,) = import_run(path, format="promptfoo", run_id="rep", results_dir=tmp_path / "results")
    df = outcomes_df(run.path)
    assert run.manifest["repeats"] == 2 and run.manifest["counts"]["expected"] == 4
    assert sorted(zip(df["row_id"], df["repeat"], df["verdict"], strict=True)) == [
        ("0", 0, "PASS"),
        ("0", 1, "FAIL"),
        ("1", 0, "PASS"),
        ("1", 1, "PASS"),
    ]


def test_deepeval_metric_error_is_an_error(tmp_path: Path) -> None:
    def case(name: str, success: bool, error: str | None) -> dict[str, Any]:
        metric = {
            "name": "Answer Relevancy",
            "threshold": 0.5,
            "success": success,
            "score": 0.9 if success else 0.1,
            "reason": "r",
            "strictMode": False,
            "evaluationModel": "gpt-4.1",
            "error": error,
        }
        return {
            "name": name,
            "input": f"q {name}",
            "actualOutput": "a",
            "success": success,
            "metricsData": [metric],
            "order": 0,
        }

    unnamed = {**case("x", True, None), "name": None, "input": "what is 2+2?"}
    run_doc = {
        "testCases": [case("ok", True, None), case("bad", False, None), case("err", False, "judge timed out"), unnamed],
        "conversationalTestCases": [],
        "metricsScores": [],
        "testPassed": 1,
        "testFailed": 2,
    }
    (run,) = import_run(
        write_json(tmp_path / "tr.json", run_doc), format="deepeval", run_id="de", results_dir=tmp_path / "results"
    )
    df = outcomes_df(run.path).set_index("row_id")
    digest = hashlib.sha256(json.dumps("what is 2+2?").encode()).hexdigest()[:16]  # "h" + hash of the canonical input
    assert df["verdict"].to_dict() == {"ok": "PASS", "bad": "FAIL", "err": "ERROR", f"h{digest}": "PASS"}
    assert "judge timed out" in df.at["err", "detail"]


def test_openai_evals_finished_log_with_match_events(tmp_path: Path) -> None:
    spec = {
        "spec": {
            "completion_fns": ["gpt-x"],
            "eval_name": "toy.dev.v0",
            "base_eval": "toy",
            "split": "dev",
            "run_config": {"eval_spec": {"cls": "evals.elsuite.basic.match:Match"}},
            "run_id": "RID",
            "created_at": "2026-11-30 10:00:00",
        }
    }
    events = [{"spec": spec["spec"]}, {"final_report": {"accuracy": 0.5}}]
    for i, (sid, correct) in enumerate([("toy.dev.0", True), ("toy.dev.1", False)]):
        events.append(
            {
                "run_id": "RID",
                "event_id": 2 * i,
                "sample_id": sid,
                "type": "sampling",
                "data": {"prompt": f"q{i}", "sampled": ["a"]},
            }
        )
        events.append(
            {
                "run_id": "RID",
                "event_id": 2 * i + 1,
                "sample_id": sid,
                "type": "match",
                "data": {"correct": correct, "expected": "a", "picked": "a" if correct else None},
            }
        )
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    (run,) = import_run(path, format="openai-evals", run_id="oe", results_dir=tmp_path / "results")
    assert outcomes_df(run.path).set_index("row_id")["verdict"].to_dict() == {"toy.dev.0": "PASS", "toy.dev.1": "FAIL"}
    assert run.manifest["validity"] == "VALID" and run.manifest["complete"] is True
    assert run.manifest["source"]["identifiers"]["final_report"] == {"accuracy": 0.5}
    # the same log cut before its final_report: incomplete, not evidence
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(json.dumps(e) + "\n" for e in events if "final_report" not in e), encoding="utf-8")
    (partial,) = import_run(cut, format="openai-evals", run_id="cut", results_dir=tmp_path / "results")
    assert partial.manifest["validity"] == "INVALID" and "final_report" in partial.manifest["invalid_reason"]


# ---------------------------------------------------------------- --dataset


def write_dataset(folder: Path, ids: list[str]) -> Path:
    case = {"prompt": "", "expect": {"must_contain": ["No"]}}
    rows = [
        row(i, case | {"prompt": f"q{i}"}, slice="even" if int(i) % 2 == 0 else "odd", split="holdout") for i in ids
    ]
    log = [{"version": "1.0.0", "date": "2026-11-30", "why": "first"}]
    folder.mkdir()
    return factories.write_dataset(
        folder.parent, rows, folder=folder.name, name="popularity-gk", meta={"changelog": log}
    )


@needs_shared("interop", "results")
def test_dataset_lends_ids_slices_and_hash(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "ds", [str(i) for i in range(1, 11)])
    (run,) = import_run(GPT5, format="inspect", run_id="g", dataset=ds, results_dir=tmp_path / "results")
    assert run.manifest["dataset"]["sha256"] == read_dataset(ds).sha256
    assert run.manifest["dataset"]["name"] == "popularity-gk" and run.manifest["validity"] == "VALID"
    df = outcomes_df(run.path)
    assert set(zip(df["row_id"], df["slice"], strict=True)) == {
        (str(i), "even" if i % 2 == 0 else "odd") for i in range(1, 11)
    }
    bigger = write_dataset(tmp_path / "ds12", [str(i) for i in range(1, 13)])
    (partial,) = import_run(GPT5, format="inspect", run_id="g12", dataset=bigger, results_dir=tmp_path / "results")
    assert partial.manifest["invalid_reason"] == "incomplete: 50 of 60 outcomes"
    smaller = write_dataset(tmp_path / "ds9", [str(i) for i in range(1, 10)])
    with pytest.raises(InputError, match=r"sample 10 epoch \d: sample id '10' is not a row of dataset"):
        import_run(GPT5, format="inspect", run_id="g9", dataset=smaller, results_dir=tmp_path / "results")


# ---------------------------------------------------------------- bad input: one line, exit 1, nothing written


def bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    """(arguments after SRC, expected message part) for each bad file written under ``tmp``."""
    cases: list[tuple[list[str], str]] = []
    no_id = write_json(
        tmp / "noid.json", inspect_log([{"epoch": 1, "input": "q", "scores": {"match": {"value": "C"}}}])
    )
    cases.append(([str(no_id), "--format", "inspect"], "noid.json: sample #1 has no id"))
    cases.append(
        (
            [str(write_json(tmp / "p.json", inspect_log([sample(1, "P")]))), "--format", "inspect"],
            "p.json: sample 1 epoch 1: match score 0.5 is not 0/1",
        )
    )
    cases.append(
        (
            [str(write_json(tmp / "s.json", inspect_log([sample(1)]))), "--format", "inspect", "--scorer", "f1"],
            "s.json: unknown scorer 'f1' (--scorer); present: match",
        )
    )
    cases.append(
        (
            [str(write_json(tmp / "d.json", inspect_log([sample(1, {"a": 1})]))), "--format", "inspect"],
            'd.json: sample 1 epoch 1: match score {"a":1} is neither pass/fail nor a number',
        )
    )
    truncated = tmp / "trunc.json"
    truncated.write_text(json.dumps(inspect_log([sample(1)]))[:-40], encoding="utf-8")
    cases.append(([str(truncated), "--format", "inspect"], "trunc.json: not a readable inspect JSON log"))
    pf = write_json(tmp / "promptfoo.json", {"evalId": "e", "results": {"version": 3, "results": []}})
    cases.append(([str(pf), "--format", "inspect"], "promptfoo.json: not an inspect log"))
    cases.append(([str(pf), "--format", "deepeval"], "promptfoo.json: not a deepeval test run"))
    lm = tmp / "samples_toy_2026-11-30T10-00-00.000001.jsonl"
    lm.write_text('{"doc_id": 0, "doc": {"q": 1}, "acc": 1.0}\n{"doc_id": 1, "doc"', encoding="utf-8")
    cases.append(([str(lm), "--format", "lm-eval"], f"{lm.name}:2: invalid or truncated JSON line"))
    lm2 = tmp / "samples_two_2026-11-30T10-00-00.000001.jsonl"
    lm2.write_text('{"doc_id": 0, "doc": {"q": 1}, "acc": 1.0, "f1": [1]}\n', encoding="utf-8")
    cases.append(
        ([str(lm2), "--format", "lm-eval", "--metric", "bleu"], "unknown metric 'bleu' (--metric); present: acc, f1")
    )
    lm3 = tmp / "samples_noid_2026-11-30T10-00-00.000001.jsonl"
    lm3.write_text('{"doc": {"q": 1}, "acc": 1.0}\n', encoding="utf-8")
    cases.append(([str(lm3), "--format", "lm-eval"], f"{lm3.name}:1: sample without doc_id"))
    cases.append(([str(tmp / "missing.eval"), "--format", "inspect"], "missing.eval: no such file or folder"))
    v3 = {
        "results": {"version": 3, "results": [{"provider": {"id": "a"}, "promptIdx": 0, "testIdx": 0, "success": True}]}
    }
    cases.append(
        (
            [str(write_json(tmp / "pf3.json", v3)), "--format", "promptfoo", "--provider", "b"],
            "pf3.json: unknown provider 'b' (--provider); present: a",
        )
    )
    de = {"testCases": [{"name": "c", "input": "q", "success": True, "metricsData": [{"name": "GEval", "score": 1}]}]}
    cases.append(
        (
            [str(write_json(tmp / "de.json", de)), "--format", "deepeval", "--metric", "Bias"],
            "de.json: unknown metric 'Bias' (--metric); present: GEval",
        )
    )
    cases.append(([str(lm), "--format", "lm-eval", "--scorer", "x"], "--scorer does not apply to --format lm-eval"))
    return cases


def test_bad_input_is_one_line_exit_1_and_nothing_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    for args, message in bad_inputs(tmp_path):
        code = main(["import-run", *args, "--run-id", "r", "--results-dir", str(results)])
        err = capsys.readouterr().err
        assert code == 1, (args, err)
        assert message in err, (message, err)
        assert err.count("\n") == 1 and "Traceback" not in err
        assert not results.exists() or list(results.iterdir()) == []


@needs_shared("interop", "results")
def test_truncated_eval_zip_and_existing_run_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.eval"
    cut.write_bytes(STREAMING.read_bytes()[:5000])
    results = tmp_path / "results"
    assert main(["import-run", str(cut), "--format", "inspect", "--run-id", "r", "--results-dir", str(results)]) == 1
    assert "cut.eval: not a readable .eval zip" in capsys.readouterr().err
    assert (
        main(["import-run", str(STREAMING), "--format", "inspect", "--run-id", "r", "--results-dir", str(results)]) == 0
    )
    before = (results / "r" / "run.json").read_bytes()
    assert main(["import-run", str(GPT5), "--format", "inspect", "--run-id", "r", "--results-dir", str(results)]) == 1
    assert "run r already exists" in capsys.readouterr().err
    assert (results / "r" / "run.json").read_bytes() == before
    assert sorted(p.name for p in results.iterdir()) == ["r"]
    with pytest.raises(UsageError, match="unknown format"):
        import_run(STREAMING, format="inspect_ai", run_id="x", results_dir=results)


# ---------------------------------------------------------------- older layouts, folders


def test_lm_eval_2024_layout_and_a_folder_source(tmp_path: Path) -> None:
    # 2024: no "filter" / "metrics" keys, integer metric values; no results file beside it
    folder = tmp_path / "out"
    folder.mkdir()
    lines = [
        {
            "doc_id": i,
            "doc": {"q": f"q{i}", "level": "easy" if i < 2 else "hard"},
            "target": "a",
            "arguments": [["p", "a"]],
            "resps": [["a"]],
            "filtered_resps": ["a"],
            "doc_hash": f"h{i}",
            "acc": int(i % 2 == 0),
            "acc_norm": 1,
        }
        for i in range(4)
    ]
    (folder / "samples_toy_2024-05-01T10-00-00.000001.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )
    (run,) = import_run(folder, format="lm-eval", run_id="old", slice_field="level", results_dir=tmp_path / "results")
    df = outcomes_df(run.path).set_index("row_id")
    assert df["verdict"].to_dict() == {"0": "PASS", "1": "FAIL", "2": "PASS", "3": "FAIL"}
    assert df["slice"].to_dict() == {"0": "easy", "1": "easy", "2": "hard", "3": "hard"}
    assert run.manifest["graders"] == {"acc,none": "lm-eval"} and run.manifest["agent_version"]["model_id"] is None
    (norm,) = import_run(folder, format="lm-eval", run_id="norm", metric="acc_norm", results_dir=tmp_path / "results")
    assert norm.manifest["counts"]["PASS"] == 4
    with pytest.raises(InputError, match=r"no field 'topic' for --slice"):
        import_run(folder, format="lm-eval", run_id="x", slice_field="topic", results_dir=tmp_path / "results")


def test_inspect_eval_zip_with_summaries_only(tmp_path: Path) -> None:
    log = inspect_log([])
    log.pop("samples")
    log["eval"]["dataset"]["sample_ids"] = [1, 2]
    summaries = [sample(1, "C"), sample(2, "I")]
    path = tmp_path / "summ.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(log))
        zf.writestr("summaries.json", json.dumps(summaries))
    (run,) = import_run(path, format="inspect", run_id="s", results_dir=tmp_path / "results")
    assert outcomes_df(run.path).set_index("row_id")["verdict"].to_dict() == {"1": "PASS", "2": "FAIL"}
    assert run.manifest["validity"] == "VALID"


def test_promptfoo_v1_results_without_wrapper_and_csv_provider(tmp_path: Path) -> None:
    doc = {
        "results": [
            {"prompt": {"raw": "p {{x}}", "display": "p"}, "vars": {"x": "1"}, "success": True},
            {"prompt": {"raw": "p {{x}}", "display": "p"}, "vars": {"x": "2"}, "success": False},
        ],
        "stats": {"successes": 1, "failures": 1},
        "table": {},
    }
    (run,) = import_run(
        write_json(tmp_path / "v1.json", doc), format="promptfoo", run_id="v1", results_dir=tmp_path / "results"
    )
    assert sorted(outcomes_df(run.path)["verdict"]) == ["FAIL", "PASS"] and run.manifest["repeats"] == 1
    csv_text = (
        '"{""raw"":""say {{x}}"",""display"":""say""}",x\n"[PASS] (1.00) hi",1\n"[FAIL] (0.00) nope\n---\nho",2\n'
    )
    (tmp_path / "o.csv").write_text(csv_text, encoding="utf-8")
    (one,) = import_run(
        tmp_path / "o.csv", format="promptfoo", run_id="c", provider="openai:gpt-4", results_dir=tmp_path / "results"
    )
    df = outcomes_df(one.path)
    assert one.run_id == "c" and one.manifest["agent_version"]["model_id"] == "openai:gpt-4"
    assert sorted(zip(df["verdict"], df["response"], strict=True)) == [("FAIL", "ho"), ("PASS", "hi")]


def test_inspect_chat_message_ids_do_not_change_the_fingerprint(tmp_path: Path) -> None:
    def log(ids: tuple[str, str]) -> Any:
        msgs = [
            [
                {"id": ids[0], "role": "system", "content": "Be brief."},
                {"id": ids[1], "role": "user", "content": "2+2?"},
            ],
        ]
        return inspect_log([sample(1, "C", input=msgs[0])])

    (a,) = import_run(
        write_json(tmp_path / "a.json", log(("m1", "m2"))),
        format="inspect",
        run_id="a",
        results_dir=tmp_path / "results",
    )
    (b,) = import_run(
        write_json(tmp_path / "b.json", log(("x7", "y9"))),
        format="inspect",
        run_id="b",
        results_dir=tmp_path / "results",
    )
    assert a.manifest["dataset"]["sha256"] == b.manifest["dataset"]["sha256"]
    other = inspect_log([sample(1, "C", input=[{"id": "m1", "role": "user", "content": "3+3?"}])])
    (c,) = import_run(
        write_json(tmp_path / "c.json", other), format="inspect", run_id="c", results_dir=tmp_path / "results"
    )
    assert c.manifest["dataset"]["sha256"] != a.manifest["dataset"]["sha256"]
