"""Write a small dataset and two synthetic runs of it in the real results format.

The runs are what the notebook tests and the report benchmark read: a
``dataset/`` folder (dataset.jsonl + dataset.json, contract cases), a
``base/`` and a ``cand/`` run folder (run.json, outcomes.jsonl appended through
``goldenkit.results.OutcomeWriter``, outcomes.parquet through
``goldenkit.results.write_parquet``), and ``traffic.csv`` (slice -> count).

The outcomes are deterministic for a seed and exercise what the reports show:
ERROR (transient and permanent) and SKIPPED outcomes, flaky rows, failures with
grader reasons, flips in both directions between base and cand, and one
response containing ``<script>alert(1)</script>`` (it must show as text).

    python scripts/make_fixture_runs.py OUT_DIR [--rows 24] [--repeats 3] [--seed 7]

tests/data/runs/ is written by this script with its defaults.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path
from typing import Any

from goldenkit.dataset import read_dataset, rows_to_jsonl
from goldenkit.results import OutcomeWriter, write_json_atomic, write_parquet
from goldenkit.schema import OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE, SCHEMA_VERSION

SLICES = ("refunds", "shipping", "account", "smalltalk")
TAGS = ("multi_turn", "tool_error", "adversarial", "long")
SOURCES = ("prod-2026-09", "synthetic", "support-tickets")
SCRIPT_RESPONSE = "Sure! <script>alert(1)</script> Your refund is on its way."


def make_dataset(out: Path, rows: int, seed: int) -> Path:
    """Write ``out/dataset`` with ``rows`` contract cases spread over four slices."""
    rng = random.Random(seed)
    folder = out / "dataset"
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for i in range(rows):
        sl = SLICES[i % len(SLICES)]
        word = {"refunds": "refund", "shipping": "tracking", "account": "password", "smalltalk": "hello"}[sl]
        records.append(
            {
                "id": f"{sl}-{i:04d}",
                "slice": sl,
                "tags": sorted(rng.sample(TAGS, rng.randint(0, 2))),
                "split": "dev" if i % 5 else "holdout",
                "source": SOURCES[i % len(SOURCES)],
                "added": "2026-09-18",
                "case": {
                    "prompt": f"Customer {i} asks about their {word} (case {i}).",
                    "reference": f"A helpful answer that mentions the {word}.",
                    "expect": {"must_contain": [word], "must_not": ["guarantee"]},
                },
            }
        )
    (folder / "dataset.jsonl").write_bytes(rows_to_jsonl(records))
    manifest = {
        "name": "fixture-support",
        "version": "1.0.0",
        "description": "Synthetic contract cases for goldenkit's report tests.",
        "changelog": [{"version": "1.0.0", "date": "2026-09-18", "why": "first version"}],
    }
    (folder / "dataset.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


def _outcome(
    run_id: str, ds: Any, row: Any, repeat: int, verdict: str, rng: random.Random, model: str, script: bool
) -> dict[str, Any]:
    word = ds.raw_case(row["id"])["expect"]["must_contain"][0]
    response = f"Here is the answer about your {word}." if verdict == "PASS" else "I cannot help with that."
    if script:
        response = SCRIPT_RESPONSE
    grades: dict[str, Any] | None = None
    detail = ""
    error_kind = None
    if verdict in ("PASS", "FAIL"):
        ok = verdict == "PASS"
        reason = "all checks passed" if ok else rng.choice([f"missing {word!r}", "refused a request it should answer"])
        if script and not ok:
            reason = f"must_not matched: {SCRIPT_RESPONSE}"
        grades = {
            "contract": {"passed": ok, "score": 1.0 if ok else 0.0, "reason": reason, "error": False},
            "tone": {"passed": True, "score": 1.0, "reason": "polite", "error": False},
        }
        detail = "" if ok else f"contract: {reason}"
    elif verdict == "ERROR":
        error_kind = rng.choice(["transient", "permanent"])
        detail = "HTTP 503 after 4 attempts" if error_kind == "transient" else "malformed provider reply"
        response = ""
    else:
        detail = "no grader applies to this case"
        grades = {}
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "dataset_name": ds.name,
        "dataset_version": ds.version,
        "dataset_sha256": ds.sha256,
        "agent_version": {"git_commit": "0" * 40, "model_id": model, "prompt_sha256": "a" * 64},
        "judge_version": None,
        "row_id": row["id"],
        "slice": row["slice"],
        "split": row["split"],
        "tags": list(row["tags"]),
        "repeat": repeat,
        "verdict": verdict,
        "detail": detail,
        "error_kind": error_kind,
        "graders": grades,
        "response": response,
        "trajectory": [{"text": response, "tool_calls": []}],
        "latency_ms": None if verdict == "ERROR" else round(rng.lognormvariate(6.5, 0.4), 1),
        "attempts": 4 if verdict == "ERROR" else 1,
        "tokens_in": None if verdict == "ERROR" else rng.randint(300, 900),
        "tokens_out": None if verdict == "ERROR" else rng.randint(20, 200),
        "cost": None,
        "started_at": "2026-10-01T12:00:00+00:00",
    }


def make_run(
    out: Path,
    dataset_dir: Path,
    run_id: str,
    repeats: int,
    seed: int,
    pass_rate: float,
    *,
    script_row: int | None = None,
    forced: dict[int, str] | None = None,
) -> Path:
    """Write one run folder; each row has a pass propensity, repeats vary around it."""
    ds = read_dataset(dataset_dir)
    rng = random.Random(seed)
    base_rng = random.Random(1234)  # row difficulty shared by every run: pairs stay correlated
    folder = out / run_id
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    records = []
    with OutcomeWriter(folder / OUTCOMES_JSONL) as writer:
        for i, row in enumerate(ds.rows.to_dict("records")):
            difficulty = base_rng.random()
            p = min(0.98, max(0.02, pass_rate + (0.5 - difficulty)))
            for r in range(repeats):
                u = rng.random()
                if forced and i in forced:
                    verdict = forced[i]
                elif i % 11 == 5 and r == 0:
                    verdict = "ERROR"
                elif i % 13 == 7:
                    verdict = "SKIPPED"
                else:
                    verdict = "PASS" if u < p else "FAIL"
                rec = _outcome(run_id, ds, row, r, verdict, rng, f"model-{run_id}", script=(i == script_row))
                writer.write(rec)
                records.append(rec)
    write_parquet(records, folder / OUTCOMES_PARQUET)
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in ("PASS", "FAIL", "ERROR", "SKIPPED")}
    total = len(records)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "dataset": {"name": ds.name, "version": ds.version, "sha256": ds.sha256, "path": "dataset"},
        "agent_version": {"git_commit": "0" * 40, "model_id": f"model-{run_id}", "prompt_sha256": "a" * 64},
        "judge_version": None,
        "graders": {"contract": "1", "tone": "1"},
        "repeats": repeats,
        "sample": {"split": None, "per_slice": None, "seed": None},
        "mode": "fixtures",
        "provider": {"name": "fixtures", "settings": {"api_key": "***"}},
        "started_at": "2026-10-01T12:00:00+00:00",
        "ended_at": "2026-10-01T12:03:00+00:00",
        "counts": {**counts, "total": total, "expected": len(ds.rows) * repeats},
        "error_rate": counts["ERROR"] / total if total else 0.0,
        "max_error_rate": 0.05,
        "validity": "VALID" if total and counts["ERROR"] / total <= 0.05 else "INVALID",
        "invalid_reason": None,
        "complete": True,
        "timings": {"total_s": 180.0},
    }
    if manifest["validity"] == "INVALID":
        manifest["invalid_reason"] = f"error rate {manifest['error_rate']:.2%} exceeds 5.00%"
    write_json_atomic(folder / RUN_FILE, manifest)
    return folder


def make_all(out: Path, rows: int = 24, repeats: int = 3, seed: int = 7) -> dict[str, Path]:
    """Dataset, base and cand runs, and a traffic file under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    dataset = make_dataset(out, rows, seed)
    base = make_run(out, dataset, "base", repeats, seed + 1, 0.72, forced={2: "PASS"})
    cand = make_run(out, dataset, "cand", repeats, seed + 2, 0.70, script_row=2, forced={2: "FAIL"})
    traffic = out / "traffic.csv"
    traffic.write_text("slice,count\nrefunds,5200\nshipping,3100\naccount,900\nsmalltalk,300\nbilling,500\n")
    return {"dataset": dataset, "base": base, "cand": cand, "traffic": traffic}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for name, path in make_all(args.out, args.rows, args.repeats, args.seed).items():
        print(f"{name}: {path}")


if __name__ == "__main__":
    main()
