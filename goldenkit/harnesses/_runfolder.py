"""The run folder an import becomes: rows, the fingerprint, records, run.json, written atomically.

:func:`prepare` and :func:`write_prepared` turn an
:class:`~goldenkit.harnesses._common.Imported` into an ordinary goldenkit run folder with
the project's own writers (:class:`goldenkit.results.OutcomeWriter`,
:func:`goldenkit.results.write_parquet`; run.json built by :func:`goldenkit.results.run_record`, as every
run's is, and written by :func:`goldenkit.results.write_run_record`),
written into a temporary folder beside the target and renamed into place
(:func:`goldenkit._files.replaced_together`), so a failure
leaves nothing half-written.

The imported run's dataset fingerprint (``dataset.sha256``) follows the dataset hash
rule (:func:`goldenkit.dataset.canonical_sha256`) over one canonical JSON line
``{"id": ..., "input": ...}`` per row (sorted keys, no spaces, UTF-8): two imports of
the same samples get the same fingerprint and compare; any other sample set does not.
With a goldenkit dataset (``--dataset``) the rows are matched to its ids and its own
hash, name and version are used. ``inputs.jsonl`` beside run.json keeps each row's
input hash, so :func:`sample_differences` can name the rows two imports differ in.

The run key: ``mode: "imported"``; ``graders`` = ``{scorer or metric: format}`` (plus
the threshold when one decided; one entry per metric where the tool grades with several,
as ADK does), so imports graded another way do not compare; ``repeats`` = the tool's
epochs / repeats. Validity follows the runner's rules (every sample errored, error
rate over 2%, fewer outcomes than asked for: INVALID), and a run the tool itself did
not finish is INVALID and not complete.

``source.inputs_sha256`` in run.json is that fingerprint over the samples' own inputs,
recorded with or without ``--dataset`` (with one, ``dataset.sha256`` is the dataset's
hash, and this field still tells two imports of other samples apart).

For ``goldenkit regrade``: where a format gives each row what a goldenkit grader needs
(the prompt and the expected answer: inspect's input and target, promptfoo's rendered
prompt and assertions), the run folder also holds ``cases.jsonl``, a goldenkit dataset
of those rows as contract cases (``source.cases`` and its hash ``source.cases_sha256``
in run.json); a regrade of the import reads its cases there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldenkit._checks import is_reserved_slice
from goldenkit._files import replaced_together
from goldenkit._registry import publish
from goldenkit.dataset import Dataset, canonical_sha256
from goldenkit.errors import InputError, ResultsError
from goldenkit.harnesses._common import Imported, Sample, canonical_json, now
from goldenkit.results import (
    OutcomeWriter,
    Run,
    iter_jsonl,
    read_run,
    record_end,
    run_record,
    write_parquet,
    write_run_record,
)
from goldenkit.schema import (
    ERROR,
    FAIL,
    INVALID,
    OUTCOMES_JSONL,
    OUTCOMES_PARQUET,
    PASS,
    RUN_FILE,
    SKIPPED,
    VALID,
    AgentVersion,
    OutcomeRun,
    RunKey,
    RunRecord,
    outcome_run,
)

#: The file beside run.json that holds each row's input hash (``{"row_id", "input_sha256"}`` lines),
#: so two imports can name the rows whose samples differ (:func:`sample_differences`).
INPUTS_FILE = "inputs.jsonl"

#: The goldenkit dataset beside run.json that holds the rows as contract cases (see the module docstring).
CASES_FILE = "cases.jsonl"

#: The mode of an imported run (run.json ``mode``).
IMPORTED = "imported"

#: The error rate above which an imported run is INVALID, as for a run goldenkit made.
MAX_ERROR_RATE = 0.02


# ---------------------------------------------------------------- rows, fingerprint, records


@dataclass
class _Rows:
    """The run's rows: id -> (slice, split, tags), and the dataset key."""

    info: dict[str, tuple[str, str, list[str]]]
    dataset: dict[str, Any]
    expected: int
    inputs: dict[str, str]


def _slice_of(sample: Sample, slice_field: str | None) -> str:
    if slice_field is None:
        return "all"
    if slice_field not in sample.fields:
        raise InputError(f"{sample.where}: no field {slice_field!r} for --slice (fields: {', '.join(sample.fields)})")
    value = sample.fields[slice_field]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value) == "":
        raise InputError(f"{sample.where}: --slice field {slice_field!r} is {canonical_json(value)}, not a name")
    if is_reserved_slice(str(value)):
        raise InputError(
            f"{sample.where}: --slice field {slice_field!r} is {value!r}, a name goldenkit keeps for its own rows"
        )
    return str(value)


def fingerprint(inputs: Mapping[str, str]) -> str:
    """The dataset hash rule over one canonical ``{id, input}`` line per row (see the module docstring).

    ``inputs`` maps each row id to its input's canonical JSON; the line is then exactly
    ``canonical_json({"id": row_id, "input": input})`` ("id" sorts before "input").
    """
    lines = (f'{{"id":{canonical_json(rid)},"input":{text}}}\n' for rid, text in inputs.items())
    return canonical_sha256("".join(lines).encode("utf-8"))


def _rows(imp: Imported, dataset: Dataset | None, slice_field: str | None) -> _Rows:
    """Each row's slice, split and tags; checks one input per row and one sample per row x repeat."""
    seen: dict[tuple[str, int], str] = {}
    inputs: dict[str, str] = {}
    info: dict[str, tuple[str, str, list[str]]] = {}
    for s in imp.samples:
        if (s.row_id, s.repeat) in seen:
            raise InputError(f"{s.where}: sample id {s.row_id!r} repeat {s.repeat + 1} appears twice")
        seen[(s.row_id, s.repeat)] = s.where
        text = canonical_json(s.input)
        if inputs.setdefault(s.row_id, text) != text:
            raise InputError(f"{s.where}: sample id {s.row_id!r} has another input than in its first repeat")
        if s.row_id not in info:
            info[s.row_id] = (_slice_of(s, slice_field), "holdout", [])
    if dataset is None:
        name = imp.task
        key = {"name": name, "version": imp.task_version, "sha256": fingerprint(inputs), "path": None}
        rows = imp.expected_rows if imp.expected_rows is not None else len(info)
        return _Rows(info, key, rows * imp.repeats, inputs)
    ds_rows = dataset.rows
    known = {
        str(rid): (str(sl), str(sp), [str(t) for t in (tags if tags is not None else [])])
        for rid, sl, sp, tags in zip(*(ds_rows[c].tolist() for c in ("id", "slice", "split", "tags")), strict=True)
    }
    for s in imp.samples:
        if s.row_id not in known:
            raise InputError(f"{s.where}: sample id {s.row_id!r} is not a row of dataset {dataset.path}")
    for rid, (own_slice, _, _) in info.items():
        info[rid] = (own_slice if slice_field else known[rid][0], known[rid][1], known[rid][2])
    key = {"name": dataset.name, "version": dataset.version, "sha256": dataset.sha256, "path": str(dataset.path)}
    return _Rows(info, key, len(known) * imp.repeats, inputs)


def _record(s: Sample, base: OutcomeRun, rows: _Rows, imp: Imported) -> dict[str, Any]:
    sl, sp, tags = rows.info[s.row_id]
    graded = s.verdict in (PASS, FAIL)
    grade = {"passed": (s.verdict == PASS) if graded else None, "score": s.score, "reason": s.reason}
    grade["error"] = s.verdict == ERROR
    return {
        **base,
        "row_id": s.row_id,
        "slice": sl,
        "split": sp,
        "tags": tags,
        "repeat": s.repeat,
        "verdict": s.verdict,
        "detail": s.detail,
        "error_kind": s.error_kind if s.verdict == ERROR else None,
        "graders": s.graders if s.graders is not None else {imp.grader: grade},
        "response": s.response,
        "trajectory": [],
        "latency_ms": s.latency_ms,
        "attempts": 1,
        "tokens_in": s.tokens_in,
        "tokens_out": s.tokens_out,
        "cost": s.cost,
        "started_at": s.started_at,
    }


def _validity(counts: Mapping[str, int], expected: int, not_finished: str | None) -> tuple[str, str | None, float]:
    total, errors = counts["total"], counts[ERROR]
    rate = errors / total if total else 0.0
    if not_finished:
        return INVALID, f"incomplete: {not_finished} ({total} of {expected} outcomes)", rate
    if total == 0:
        return INVALID, "no outcome in the imported file", rate
    if errors == total:
        return INVALID, f"every sample errored ({errors} of {total})", rate
    if rate > MAX_ERROR_RATE:
        return INVALID, f"error rate {rate:.1%} ({errors} of {total}) exceeds max_error_rate {MAX_ERROR_RATE:.1%}", rate
    if total < expected:
        return INVALID, f"incomplete: {total} of {expected} outcomes", rate
    return VALID, None, rate


# ---------------------------------------------------------------- the run folder


@dataclass
class Prepared:
    """An import ready to write: its run id, records and run.json (and its rows as cases, for a regrade)."""

    run_id: str
    records: list[dict[str, Any]]
    manifest: RunRecord
    inputs: dict[str, str]
    cases: bytes | None = None


def _cases_file(imp: Imported, rows: _Rows, dataset: Dataset | None) -> bytes | None:
    """The rows as a goldenkit dataset of contract cases (None: with ``--dataset``, or a row without a case)."""
    cases: dict[str, dict[str, Any]] = {}
    for s in imp.samples:
        if s.case is None:
            return None
        cases.setdefault(s.row_id, s.case)
    if dataset is not None or not cases:
        return None
    lines = []
    for rid, case in cases.items():
        sl, sp, tags = rows.info[rid]
        lines.append(canonical_json({"id": rid, "slice": sl, "split": sp, "tags": tags, "case": case}) + "\n")
    return "".join(lines).encode("utf-8")


def _source(imp: Imported, rows: _Rows, cases: bytes | None) -> dict[str, Any]:
    source: dict[str, Any] = {
        "format": imp.format,
        "file": str(imp.file),
        "file_name": imp.file.name,
        "identifiers": imp.identifiers,
        "inputs": INPUTS_FILE,
        "inputs_sha256": fingerprint(rows.inputs),
        "finished": imp.not_finished is None,
    }
    if cases is not None:
        source.update(cases=CASES_FILE, cases_sha256=canonical_sha256(cases))
    return source


def _key(imp: Imported, rows: _Rows, cases: bytes | None) -> RunKey:
    """The run key of an import (see the module docstring): no sample spec, criteria or hard flags of goldenkit's."""
    agent: AgentVersion = {"git_commit": None, "model_id": imp.model_id, "prompt_sha256": imp.prompt_sha256}
    return {
        "dataset": rows.dataset,
        "agent_version": agent,
        "judge_version": imp.judge_version,
        "graders": dict(imp.graders) if imp.graders is not None else {imp.grader: imp.grader_version},
        "grader_hard": {},  # the tool's scorers: each reads as its name's default (goldenkit._protocol_key)
        "repeats": imp.repeats,
        "sample": None,
        "mode": IMPORTED,
        "criteria": None,
        "vision": True,
        "source": _source(imp, rows, cases),
    }


def prepare(
    imp: Imported, run_id: str, dataset: Dataset | None, slice_field: str | None, options: dict[str, Any]
) -> Prepared:
    """The outcome records and run.json of ``imp`` (nothing is written)."""
    rows = _rows(imp, dataset, slice_field)
    cases = _cases_file(imp, rows, dataset)
    key = _key(imp, rows, cases)
    base = outcome_run(run_id, key)
    order = {rid: i for i, rid in enumerate(rows.info)}
    samples = sorted(imp.samples, key=lambda s: (order[s.row_id], s.repeat))
    records = [_record(s, base, rows, imp) for s in samples]
    counts = {v: sum(1 for r in records if r["verdict"] == v) for v in (PASS, FAIL, ERROR, SKIPPED)}
    counts.update(total=len(records), expected=rows.expected)
    validity, why, rate = _validity(counts, rows.expected, imp.not_finished)
    stamp = now()
    manifest = run_record(
        key,
        run_id=run_id,
        label=None,
        provider={"name": imp.format, "settings": {}},
        config={"import": options},
        started_at=stamp,
        max_error_rate=MAX_ERROR_RATE,
        timings={"invocations": [{"started_at": stamp, "ended_at": stamp, "imported": len(records)}]},
    )
    complete = imp.not_finished is None and len(records) >= rows.expected
    record_end(
        manifest,
        ended_at=stamp,
        counts=counts,
        error_rate=rate,
        validity=validity,
        invalid_reason=why,
        complete=complete,
    )
    manifest["notes"] = list(imp.notes)
    inputs = {rid: hashlib.sha256(text.encode("utf-8")).hexdigest() for rid, text in rows.inputs.items()}
    return Prepared(run_id, records, manifest, inputs, cases)


def write_prepared(prepared: Sequence[Prepared], results_dir: Path) -> list[Path]:
    """Write each run folder into a temporary folder under ``results_dir`` and rename it into place.

    An existing run folder is never replaced: that is an InputError before anything is written.
    """
    for p in prepared:
        if (results_dir / p.run_id).exists():
            raise InputError(f"{results_dir / p.run_id}: run {p.run_id} already exists; use a new --run-id")
    results_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for p in prepared:
        with replaced_together(results_dir / p.run_id) as (tmp,):
            tmp.mkdir()
            with OutcomeWriter(tmp / OUTCOMES_JSONL) as writer:
                for rec in p.records:
                    writer.write(rec)
            if p.manifest["complete"]:
                write_parquet(p.records, tmp / OUTCOMES_PARQUET)
            with OutcomeWriter(tmp / INPUTS_FILE) as writer:
                for rid, digest in p.inputs.items():
                    writer.write({"row_id": rid, "input_sha256": digest})
            if p.cases is not None:
                (tmp / CASES_FILE).write_bytes(p.cases)
            write_run_record(tmp / RUN_FILE, p.manifest)
        written.append(results_dir / p.run_id)
    return written


def _inputs_of(run: Run) -> dict[str, str]:
    path = run.path / INPUTS_FILE
    if not path.exists():
        raise ResultsError(f"{run.path}: no {INPUTS_FILE}; not an imported run")
    return {str(r["row_id"]): str(r["input_sha256"]) for r in iter_jsonl(path)}


def sample_differences(base: Run | str | os.PathLike[str], cand: Run | str | os.PathLike[str]) -> list[str]:
    """The rows whose samples differ between two imported runs, named (empty: the same samples).

    One line for the ids only in ``base``, one for those only in ``cand``, one for the
    ids in both whose input differs; each names up to 10 ids. This is what a dataset
    fingerprint mismatch between two imports (``goldenkit compare`` exit 4) comes from.
    """
    a, b = _inputs_of(read_run(base)), _inputs_of(read_run(cand))

    def named(ids: list[str]) -> str:
        return ", ".join(ids[:10]) + (", ..." if len(ids) > 10 else "")

    out = []
    only_a = [r for r in a if r not in b]
    only_b = [r for r in b if r not in a]
    changed = [r for r in a if r in b and a[r] != b[r]]
    if only_a:
        out.append(f"{len(only_a)} row(s) only in base: {named(only_a)}")
    if only_b:
        out.append(f"{len(only_b)} row(s) only in candidate: {named(only_b)}")
    if changed:
        out.append(f"{len(changed)} row(s) with another input: {named(changed)}")
    return out


publish(globals())
