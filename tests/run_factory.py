"""Build runs for the statistics, comparison, gate and baseline tests.

Runs are built as outcome DataFrames plus a run.json-style manifest, either in
memory (:class:`FakeRun`: ``.manifest``, ``.run_id``, ``.outcomes(columns=)``)
or written as a run folder in the documented results format (:func:`write_run`:
``run.json`` + ``outcomes.jsonl``, and ``outcomes.parquet`` when complete) by the
library's own writers, as a run writes them (``raw=True``: as written by hand, for a
test about a file the library did not write). tests/factories.py's ``graded_run``
makes a whole run with the runner instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit.schema import OUTCOME_FIELDS, OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE, SCHEMA_VERSION

SHA_A = "3f2a" + "0" * 60
SHA_B = "9b1c" + "1" * 60


def manifest(
    run_id: str,
    *,
    sha256: str = SHA_A,
    repeats: int = 3,
    graders: dict[str, str] | None = None,
    judge_version: str | None = None,
    mode: str = "fixtures",
    model_id: str = "model-a",
    counts: dict[str, int] | None = None,
    validity: str = "VALID",
    max_error_rate: float = 0.02,
) -> dict[str, Any]:
    """A run.json dict with the documented keys."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "dataset": {"name": "support", "version": "1.0.0", "sha256": sha256, "path": "datasets/support"},
        "agent_version": {"git_commit": "abc123", "model_id": model_id, "prompt_sha256": "p" * 64},
        "judge_version": judge_version,
        "graders": {"contract": "1"} if graders is None else graders,
        "repeats": repeats,
        "sample": {"split": None, "per_slice": None, "seed": 0},
        "mode": mode,
        "provider": {"name": "fixtures", "settings": {}},
        "started_at": "2026-11-30T10:00:00Z",
        "ended_at": "2026-11-30T10:05:00Z",
        "counts": counts or {},
        "error_rate": 0.0,
        "max_error_rate": max_error_rate,
        "validity": validity,
        "invalid_reason": None,
        "complete": True,
        "timings": {},
    }


def outcomes(
    rows: Iterable[tuple[str, str, Sequence[str]]],
    *,
    run_id: str = "run",
    tags: dict[str, list[str]] | None = None,
    response_prefix: str = "answer",
    hallucination: dict[str, Sequence[bool]] | None = None,
) -> pd.DataFrame:
    """Outcome records (row x repeat) from ``(row_id, slice, [verdict per repeat])``.

    ``hallucination`` maps a row id to per-repeat booleans: True adds a failed
    ``hallucination`` grader result to that repeat, False a passed one.
    """
    recs = []
    for row_id, slice_, verdicts in rows:
        for rep, verdict in enumerate(verdicts):
            graders: dict[str, Any] = {}
            if verdict in ("PASS", "FAIL"):
                graders["contract"] = {
                    "passed": verdict == "PASS",
                    "score": 1.0 if verdict == "PASS" else 0.0,
                    "reason": f"{row_id}/{rep}: {'ok' if verdict == 'PASS' else 'missing phrase'}",
                    "error": False,
                }
                if hallucination and row_id in hallucination:
                    bad = hallucination[row_id][rep]
                    graders["hallucination"] = {
                        "passed": not bad,
                        "score": 0.0 if bad else 1.0,
                        "reason": "unsupported claim" if bad else "grounded",
                        "error": False,
                    }
            recs.append(
                {
                    "schema_version": SCHEMA_VERSION,
                    "run_id": run_id,
                    "dataset_name": "support",
                    "dataset_version": "1.0.0",
                    "dataset_sha256": SHA_A,
                    "agent_version": {"git_commit": "abc123", "model_id": "m", "prompt_sha256": "p"},
                    "judge_version": None,
                    "row_id": row_id,
                    "slice": slice_,
                    "split": "holdout",
                    "tags": list((tags or {}).get(row_id, [])),
                    "repeat": rep,
                    "verdict": verdict,
                    "detail": "provider timeout" if verdict == "ERROR" else None,
                    "error_kind": "transient" if verdict == "ERROR" else None,
                    "graders": graders,
                    "response": None if verdict == "ERROR" else f"{response_prefix} {row_id} #{rep} {verdict}",
                    "trajectory": [],
                    "latency_ms": 10.0,
                    "attempts": 1,
                    "tokens_in": 10,
                    "tokens_out": 5,
                    "cost": None,
                    "started_at": "2026-11-30T10:00:00Z",
                }
            )
    return pd.DataFrame(recs, columns=list(OUTCOME_FIELDS))


@dataclass
class FakeRun:
    """An in-memory run: what compare/gate/baselines read from a results.Run."""

    manifest: dict[str, Any]
    frame: pd.DataFrame

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    def outcomes(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        df = self.frame.copy()
        return df if columns is None else df[list(columns)]


def counts_of(frame: pd.DataFrame) -> dict[str, int]:
    vc = frame["verdict"].value_counts()
    c = {v: int(vc.get(v, 0)) for v in ("PASS", "FAIL", "ERROR", "SKIPPED")}
    c["total"] = c["expected"] = int(len(frame))
    return c


def write_run(root: Path, man: dict[str, Any], frame: pd.DataFrame, *, parquet: bool = True, raw: bool = False) -> Path:
    """Write a run folder (run.json, outcomes.jsonl and, when ``parquet``, outcomes.parquet) with the
    library's writers (:class:`goldenkit.results.OutcomeWriter`, :func:`goldenkit.results.write_json_atomic`,
    :func:`goldenkit.results.write_parquet`); ``raw=True`` writes the JSON files as given, by hand."""
    from goldenkit.results import OutcomeWriter, iter_jsonl, write_json_atomic, write_parquet

    d = Path(root) / man["run_id"]
    d.mkdir(parents=True, exist_ok=True)
    man = dict(man)
    man["counts"] = man.get("counts") or counts_of(frame)
    man["complete"] = parquet
    recs = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    if raw:
        with (d / OUTCOMES_JSONL).open("w", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r, default=str) + "\n" for r in recs))
        (d / RUN_FILE).write_text(json.dumps(man, indent=2), encoding="utf-8")
    else:
        (d / OUTCOMES_JSONL).unlink(missing_ok=True)  # a run written again is written anew (the writer appends)
        with OutcomeWriter(d / OUTCOMES_JSONL) as writer:
            for r in recs:
                writer.write(r)
        write_json_atomic(d / RUN_FILE, man)
        recs = list(iter_jsonl(d / OUTCOMES_JSONL))  # the Parquet holds the lines as stored, as a run's does
    if parquet:
        write_parquet(recs, d / OUTCOMES_PARQUET)
    return d


# --------------------------------------------------------------------------- the worked example

PASS_REPS = (("PASS", "PASS", "PASS"), ("PASS", "PASS", "FAIL"), ("PASS", "FAIL", "PASS"))
FAIL_REPS = (("FAIL", "FAIL", "FAIL"), ("FAIL", "PASS", "FAIL"), ("FAIL", "FAIL", "PASS"))


def _reps(passed: bool, i: int) -> tuple[str, ...]:
    """Repeats of a row that collapses to PASS / FAIL; every 29th row has an errored repeat (~1% of attempts)."""
    if i % 29 == 0:
        return ("PASS", "ERROR", "PASS") if passed else ("ERROR", "FAIL", "FAIL")
    pool = PASS_REPS if passed else FAIL_REPS
    return pool[i % len(pool)]


def worked_example() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The published example: base 352/400, candidate 356/400.

    refunds (60 rows): 8 broke, 1 fixed, 47 pass on both, 4 fail on both.
    other (340 rows): 2 broke, 13 fixed, 295 pass on both, 30 fail on both.
    Repeats vary (3/3, 2/3, a repeat that errored) so collapsing matters.
    """
    plan = {
        "refunds": [("broke", 8), ("fixed", 1), ("pass", 47), ("fail", 4)],
        "other": [("broke", 2), ("fixed", 13), ("pass", 295), ("fail", 30)],
    }
    base_rows, cand_rows = [], []
    i = 0
    for slice_, parts in plan.items():
        for kind, count in parts:
            for _ in range(count):
                rid = f"{slice_}-{i:04d}"
                b_pass = kind in ("broke", "pass")
                c_pass = kind in ("fixed", "pass")
                base_rows.append((rid, slice_, _reps(b_pass, i)))
                cand_rows.append((rid, slice_, _reps(c_pass, i + 1)))
                i += 1
    tags = {r[0]: (["multi_turn"] if n % 2 else []) for n, r in enumerate(base_rows)}
    return (
        outcomes(base_rows, run_id="base", tags=tags, response_prefix="base says"),
        outcomes(cand_rows, run_id="cand", tags=tags, response_prefix="cand says"),
    )
