"""A results folder with a run of every kind, for the history and pages tests.

``results/`` gets: the two committed fixture runs (``base``, ``cand``), nightly
runs of one dataset over three versions (``night-1`` .. ``night-5``; two
dataset hashes, the last on a third), a live-mode run written by hand, an
INVALID run, an incomplete (interrupted) run read from its JSONL, a resumed run
whose JSONL holds superseded ERROR lines, a run of another protocol (5 repeats),
and corrupt folders: run.json not JSON, outcomes without run.json, a malformed
outcome line, a truncated Parquet file, an unknown verdict. ``baselines/`` gets
one baseline (``main``) of ``night-4``. Hand-computed numbers are in ``EXPECTED``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from run_factory import SHA_A, SHA_B, manifest, outcomes, write_run

DATA = Path(__file__).resolve().parent / "data" / "runs"
SHA_C = "c0de" + "2" * 60
HOSTILE = 'Sure! <script>alert("pwned")</script><img src=x onerror=alert(2)> & done'

# (row_id, slice, verdicts): refunds 2 of 3 graded rows pass, shipping 1 of 1, one row all ERROR.
NIGHT_ROWS = [
    ("r1", "refunds", ["PASS", "PASS", "PASS"]),
    ("r2", "refunds", ["PASS", "PASS", "FAIL"]),
    ("r3", "refunds", ["FAIL", "FAIL", "PASS"]),
    ("s1", "shipping", ["PASS", "FAIL", "PASS"]),
    ("s2", "shipping", ["ERROR", "ERROR", "ERROR"]),
]
#: night-* runs: collapsed (majority) r1 P, r2 P, r3 F, s1 P, s2 ERROR -> n = 4, k = 3; 3 ERROR of 15 outcomes.
EXPECTED = {"n": 4, "k": 3, "refunds": (3, 2), "shipping": (1, 1), "errors": 3, "outcomes": 15}


def _dataset(man: dict[str, Any], sha: str, version: str) -> dict[str, Any]:
    man["dataset"] = {**man["dataset"], "sha256": sha, "version": version}
    return man


def _night(root: Path, i: int, sha: str, version: str, **kw: Any) -> Path:
    man = _dataset(manifest(f"night-{i}", counts=None, **kw), sha, version)
    man["started_at"] = f"2026-11-0{i}T02:00:00Z"
    man["ended_at"] = f"2026-11-0{i}T02:10:00Z"
    man["error_rate"] = 0.2
    man["max_error_rate"] = 0.5
    frame = outcomes(NIGHT_ROWS, run_id=f"night-{i}")
    frame["dataset_sha256"], frame["dataset_version"] = sha, version
    if i == 5:
        frame.loc[frame["row_id"] == "r3", "response"] = HOSTILE
    return write_run(root, man, frame)


def _corrupt(root: Path) -> None:
    (root / "bad-json").mkdir()
    (root / "bad-json" / "run.json").write_text("{not json", encoding="utf-8")
    (root / "orphan").mkdir()
    (root / "orphan" / "outcomes.jsonl").write_text('{"row_id": "a"}\n', encoding="utf-8")
    d = write_run(root, manifest("bad-line"), outcomes(NIGHT_ROWS[:2], run_id="bad-line"), parquet=False)
    lines = (d / "outcomes.jsonl").read_text().splitlines()
    (d / "outcomes.jsonl").write_text("\n".join([lines[0], "{torn", *lines[1:]]) + "\n")
    d = write_run(root, manifest("truncated"), outcomes(NIGHT_ROWS, run_id="truncated"))
    (d / "outcomes.parquet").write_bytes((d / "outcomes.parquet").read_bytes()[:100])
    frame = outcomes(NIGHT_ROWS[:1], run_id="odd-verdict")
    frame.loc[0, "verdict"] = "MAYBE"
    write_run(root, manifest("odd-verdict"), frame)


def build(tmp: Path) -> tuple[Path, Path]:
    """Write the results and baselines folders under ``tmp``; return both."""
    from goldenkit.baselines import save_baseline
    from goldenkit.results import read_run

    results, baselines = tmp / "results", tmp / "baselines"
    results.mkdir(parents=True)
    for name in ("base", "cand"):
        shutil.copytree(DATA / name, results / name)
    for i, (sha, version) in enumerate([(SHA_A, "1.0.0")] * 2 + [(SHA_B, "1.1.0")] * 2 + [(SHA_C, "2.0.0")], 1):
        _night(results, i, sha, version)
    clean = [(rid, sl, [v if v != "ERROR" else "PASS" for v in vs]) for rid, sl, vs in NIGHT_ROWS]
    man = _dataset(manifest("clean-4"), SHA_B, "1.1.0")
    man["started_at"] = "2026-11-04T03:00:00Z"
    write_run(results, man, outcomes(clean, run_id="clean-4"))
    save_baseline(read_run(results / "clean-4"), "main", baselines_dir=baselines, note="release <b>1</b>")
    live = _dataset(manifest("live-1", mode="live", model_id="gpt-x"), SHA_C, "2.0.0")
    live["started_at"] = "2026-11-06T02:00:00Z"
    frame = outcomes(NIGHT_ROWS, run_id="live-1")
    frame.loc[frame["row_id"] == "r3", "response"] = HOSTILE
    write_run(results, live, frame)
    invalid = manifest("invalid-1", validity="INVALID")
    invalid["invalid_reason"] = "error rate 40.0% (6 of 15) exceeds max_error_rate 2.0%"
    write_run(results, invalid, outcomes(NIGHT_ROWS, run_id="invalid-1"))
    partial = manifest("partial-1", validity="INVALID", counts={"expected": 15, "total": 6})
    partial["invalid_reason"] = "interrupted with 6 of 15 outcomes; resume with --run-id partial-1"
    write_run(results, partial, outcomes(NIGHT_ROWS[:2], run_id="partial-1"), parquet=False)
    _resumed(results)
    other = manifest("five-reps", repeats=5)
    other["started_at"] = "2026-10-15T02:00:00Z"
    write_run(results, other, outcomes([("r1", "refunds", ["PASS"] * 5)], run_id="five-reps"))
    _corrupt(results)
    return results, baselines


def _resumed(results: Path) -> None:
    """A run resumed with --retry-errors: the JSONL has ERROR lines superseded by later PASS lines."""
    man = manifest("resumed-1")
    man["timings"] = {"invocations": [{"started_at": "a"}, {"started_at": "b"}]}
    frame = outcomes(
        [("r1", "refunds", ["PASS", "PASS", "PASS"]), ("r2", "refunds", ["FAIL", "PASS", "PASS"])], run_id="resumed-1"
    )
    d = write_run(results, man, frame, parquet=False)  # resumed and still going: read from its JSONL
    first = outcomes([("r1", "refunds", ["ERROR", "ERROR", "ERROR"])], run_id="resumed-1")
    lines = [json.dumps(r, default=str) for r in first.astype(object).where(first.notna(), None).to_dict("records")]
    (d / "outcomes.jsonl").write_text("\n".join(lines) + "\n" + (d / "outcomes.jsonl").read_text())
