"""``merge_shards``: the N shard runs of one logical run united into one ordinary run folder.

Each shard is a complete run of ``goldenkit run ... --shard K/N``
(:mod:`goldenkit.runner._shard`). The merged run has the run key of the
unsharded run (dataset, agent version, judge, graders, repeats, sample, mode;
no shard spec), the outcomes of every shard (one per row x repeat, the
shards' final ones, with the merged run's id), and counts, error rate and
validity computed over the whole by the runner's own code
(:func:`goldenkit.runner._validity.validity`): a shard's own validity does not
carry over, the whole decides. After a merge, ``compare``, ``gate`` and
``report`` treat the run like any other.

Refused, naming the culprit (a ResultsError, exit 1), before anything is written:
an existing target; a run that is not a shard; shards of another N; shards
whose run keys differ (which field); a shard given twice or missing (which K);
an incomplete shard; an outcome whose row is not in its shard under the rule.
The folder is built under a temporary name beside the target and renamed into
place at the end, so a failed merge leaves nothing half-written.

The shards' ``max_error_rate`` may differ (it is not part of the run key): the
merged run uses the strictest, i.e. the smallest.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from goldenkit._registry import publish
from goldenkit.errors import ResultsError
from goldenkit.results import (
    RECORD_BATCH,
    OutcomeWriter,
    Run,
    iter_jsonl,
    read_run,
    record_end,
    run_key_of,
    run_record,
    update_latest,
    write_parquet_batches,
    write_run_record,
)
from goldenkit.runner._folder import check_run_id, run_key_differences, utc_now
from goldenkit.runner._run import count_outcomes
from goldenkit.runner._shard import shard_of
from goldenkit.runner._summary import RunSummary, run_accounting
from goldenkit.runner._validity import validity
from goldenkit.schema import ERROR, OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE, RunRecord


def _shard_spec(run: Run) -> tuple[int, int]:
    spec = run.manifest.get("shard")
    if not isinstance(spec, dict) or not isinstance(spec.get("k"), int) or not isinstance(spec.get("n"), int):
        raise ResultsError(f"{run.path}: run {run.run_id} is not a shard (no shard K/N in its {RUN_FILE})")
    return int(spec["k"]), int(spec["n"])


def check_shards(runs: Sequence[Run]) -> list[tuple[int, Run]]:
    """The shards ordered by K, after every refusal of the module doc; ``(k, run)`` each."""
    if not runs:
        raise ResultsError("merge: no shard run given")
    specs = [(_shard_spec(r), r) for r in runs]
    (_, n), first = specs[0]
    by_k: dict[int, Run] = {}
    for (k, n_i), run in specs:
        if n_i != n:
            raise ResultsError(f"shard run {run.run_id} is shard {k}/{n_i}, of another N than {first.run_id} (of {n})")
        diffs = run_key_differences(first.manifest, run.manifest)
        if diffs:
            raise ResultsError(f"shard run {run.run_id} has another run key than {first.run_id}: {'; '.join(diffs)}")
        if k in by_k:
            raise ResultsError(f"shard {k}/{n} given twice: runs {by_k[k].run_id} and {run.run_id}")
        by_k[k] = run
    missing = [k for k in range(1, n + 1) if k not in by_k]
    if missing:
        raise ResultsError(f"missing shard(s) {', '.join(map(str, missing))} of {n}")
    for k, run in sorted(by_k.items()):
        counts = run.manifest.get("counts") or {}
        if not run.complete or counts.get("total") != counts.get("expected"):
            raise ResultsError(
                f"shard {k}/{n} (run {run.run_id}) is incomplete ({counts.get('total', 0)} of "
                f"{counts.get('expected', '?')} outcomes); resume it with --run-id {run.run_id}"
            )
    return sorted(by_k.items())


def _records(table: Any) -> list[dict[str, Any]]:
    """A Parquet batch of outcomes as the records the runner writes (graders a dict, trajectory decoded)."""
    recs: list[dict[str, Any]] = table.to_pylist()
    for rec in recs:
        if rec.get("graders") is not None:
            rec["graders"] = dict(rec["graders"])
        if rec.get("trajectory") is not None:
            rec["trajectory"] = json.loads(rec["trajectory"])
    return recs


class _Union:
    """Streams the shards' outcomes into the merged folder's JSONL, counting as it goes."""

    def __init__(self, run_id: str, shards: list[tuple[int, Run]], writer: OutcomeWriter) -> None:
        self.run_id, self.shards, self.writer = run_id, shards, writer
        self.n = _shard_spec(shards[0][1])[1]
        self.counts: dict[str, int] = count_outcomes([], 0)
        self.first_error: str | None = None

    def batches(self) -> Iterator[list[dict[str, Any]]]:
        for k, run in self.shards:
            parquet = pq.ParquetFile(run.path / OUTCOMES_PARQUET)
            for batch in parquet.iter_batches(batch_size=RECORD_BATCH):
                recs = _records(batch)
                for rec in recs:
                    if shard_of(str(rec["row_id"]), self.n) != k:
                        raise ResultsError(
                            f"shard run {run.run_id}: row {rec['row_id']!r} is in shard "
                            f"{shard_of(str(rec['row_id']), self.n)}/{self.n}, not {k}/{self.n}"
                        )
                    rec["run_id"] = self.run_id
                    self.writer.write(rec)
                    if self.first_error is None and rec.get("verdict") == ERROR:
                        self.first_error = str(rec.get("detail") or "")
                for name, value in count_outcomes(recs, 0).items():
                    self.counts[name] += value
                yield recs


def _manifest(
    run_id: str, shards: list[tuple[int, Run]], counts: dict[str, int], first_error: str | None, elapsed: float
) -> RunRecord:
    """The merged run's run.json: the shards' run key without the shard spec (the unsharded run's key, so its
    protocol key too), their invocations, and validity over the whole."""
    first = shards[0][1].manifest
    max_error_rate = min(float(r.manifest.get("max_error_rate", 0.02)) for _, r in shards)
    valid, why, rate = validity(counts, counts["expected"], max_error_rate, None, first_error)
    invocations = [
        {**inv, "shard": f"{k}/{len(shards)}", "shard_run_id": run.run_id}
        for k, run in shards
        for inv in (run.manifest.get("timings") or {}).get("invocations") or []
    ]
    starts = [str(r.manifest["started_at"]) for _, r in shards if r.manifest.get("started_at")]
    key = run_key_of(first)
    del key["shard"]  # checked: every shard has one
    if key.get("simulator_version") is None:
        key.pop("simulator_version", None)
    record = run_record(
        key,
        run_id=run_id,
        label=first.get("label"),  # the shards' (goldenkit run --label), else derived where shown
        provider=first.get("provider"),
        config=first.get("config") or {},
        started_at=min(starts) if starts else None,
        max_error_rate=max_error_rate,
        timings={"invocations": invocations, "merge_elapsed_s": round(elapsed, 3)},
    )
    record_end(
        record, ended_at=utc_now(), counts=counts, error_rate=rate, validity=valid, invalid_reason=why, complete=True
    )
    record["merged_from"] = [{"run_id": run.run_id, "shard": run.manifest.get("shard")} for _, run in shards]
    return record


def merge_shards(
    run_id: str, shards: Sequence[str | os.PathLike[str] | Run], *, results_dir: str | os.PathLike[str] = "results"
) -> RunSummary:
    """Unite the shard runs ``shards`` (run ids under ``results_dir``, folders or Runs) as run ``run_id``.

    See the module doc for what is refused; returns the merged run's summary
    (``exit_code`` 3 when the whole is INVALID, e.g. its error rate is too high).
    """
    t0 = time.monotonic()
    check_run_id(run_id)
    target = Path(results_dir) / run_id
    if target.exists() or target.is_symlink():
        raise ResultsError(f"{target}: already exists; merge into a new run id")
    ordered = check_shards([read_run(s, results_dir) for s in shards])
    tmp = Path(results_dir) / f".{run_id}.merging-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with OutcomeWriter(tmp / OUTCOMES_JSONL) as writer:
            union = _Union(run_id, ordered, writer)
            write_parquet_batches(union.batches(), tmp / OUTCOMES_PARQUET)
        counts = {**union.counts, "expected": union.counts["total"]}
        manifest = _manifest(run_id, ordered, counts, union.first_error, time.monotonic() - t0)
        manifest["accounting"] = run_accounting([iter_jsonl(tmp / OUTCOMES_JSONL)], manifest, target)  # the whole's
        write_run_record(tmp / RUN_FILE, manifest)
        if target.exists():
            raise ResultsError(f"{target}: appeared while merging; merge into a new run id")
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    update_latest(Path(results_dir), run_id)
    return RunSummary(
        run_id=run_id,
        path=target,
        counts=counts,
        error_rate=float(manifest["error_rate"] or 0.0),  # set by record_end
        max_error_rate=float(manifest["max_error_rate"]),
        validity=str(manifest["validity"]),
        invalid_reason=manifest["invalid_reason"],
        complete=True,
        calls=sum(int(i.get("calls") or 0) for i in manifest["timings"]["invocations"]),
        resumed=0,
        elapsed_s=time.monotonic() - t0,
        manifest=manifest,
    )


__all__ = ["check_shards", "merge_shards"]

publish(globals())
