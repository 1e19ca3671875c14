"""openai/evals run logs (``oaieval ... --record_path``): JSONL.

Line 1 ``{"spec": {completion_fns, eval_name, base_eval, split, run_config, run_id,
created_at}}``; a finished run has a ``{"final_report": {...}}`` line; every other
line is an event ``{run_id, event_id, sample_id, type, data, created_at}``:
``sampling`` (``{prompt, sampled}``), ``match`` (``{correct, expected, picked}``),
``metrics`` (model-graded: ``{choice, score}``), and others per eval class.

Mapping: ``sample_id`` -> row id, the first ``sampling`` prompt -> the input the
fingerprint covers. Verdict from the ``match`` events (``correct``; a sample with
several is a PASS only when every one is correct), else (``--metric metrics``, or
when the log has no ``match`` event) from ``metrics.score``: 0/1, or a number against
``--threshold``. A ``metrics`` event whose score is null (no ``choice_scores`` in the
spec: only the ``choice`` is known) and a sample with ``sampling`` events but no
verdict event are ERRORs of kind ``grader`` (an answer nothing graded: not the
candidate's fault, and not evidence). A log without ``final_report`` is a
run that did not finish: the import says so and the run is INVALID (not evidence).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldenkit.errors import InputError
from goldenkit.harnesses._common import Imported, Sample, grader_version, pick, read_json_lines, typed, verdict_of
from goldenkit.schema import ERROR, FAIL, GRADER, PASS


def _read(path: Path) -> tuple[dict[str, Any], dict[str, Any] | None, list[tuple[int, dict[str, Any]]]]:
    spec: dict[str, Any] | None = None
    final: dict[str, Any] | None = None
    events = []
    for i, obj in read_json_lines(path, "an openai-evals log"):
        if isinstance(obj.get("spec"), dict):
            spec = obj["spec"]
        elif "final_report" in obj:
            final = obj["final_report"] if isinstance(obj["final_report"], dict) else {"value": obj["final_report"]}
        elif "type" in obj:
            if obj.get("sample_id") is None or str(obj.get("sample_id")) == "":
                raise InputError(f"{path}:{i}: {obj.get('type')} event without sample_id")
            events.append((i, obj))
    if spec is None:
        raise InputError(f"{path}: no spec line; not an openai-evals log")
    return spec, final, events


def _sample(
    rid: str, evs: list[tuple[int, dict[str, Any]]], kind: str | None, path: Path, threshold: float | None
) -> Sample:
    where = f"{path}: sample {rid}"
    sampling = [typed(e, "data", "object", where, default={}) for _, e in evs if e.get("type") == "sampling"]
    prompt = sampling[0].get("prompt") if sampling else None
    sampled = sampling[-1].get("sampled") if sampling else None
    response = sampled[0] if isinstance(sampled, list) and sampled else sampled
    graded = [(i, e) for i, e in evs if e.get("type") == kind]
    s = Sample(
        row_id=rid,
        repeat=0,
        input=prompt,
        verdict=ERROR,
        where=where,
        response=None if response is None else str(response),
        error_kind=GRADER,
    )
    if not graded:
        s.detail = "openai-evals: sampled but never graded (no match or metrics event)"
        return s
    line, last = graded[-1]
    s.where = f"{path}:{line}: sample {rid}"
    data = typed(last, "data", "object", s.where, default={})
    if kind == "match":
        values = [typed(e, "data", "object", f"{path}:{i}: sample {rid}", default={}).get("correct") for i, e in graded]
        if not all(isinstance(v, bool) for v in values):
            raise InputError(f"{s.where}: match event without a true/false 'correct'")
        s.verdict = PASS if all(values) else FAIL
        s.score = float(s.verdict == PASS)
        s.reason = f"expected {data.get('expected')!r}, picked {data.get('picked')!r}"
    elif data.get("score") is None:
        s.detail = f"openai-evals metrics: choice {data.get('choice')!r} without a score (no choice_scores)"
    else:
        s.verdict, s.score = verdict_of(data.get("score"), threshold, s.where, "metrics.score")
        s.reason = f"choice {data.get('choice')!r}"
    s.error_kind = None if s.verdict != ERROR else s.error_kind
    return s


def read_openai_evals(path: Path, *, metric: str | None = None, threshold: float | None = None) -> Imported:
    """Read an openai/evals JSONL log as one imported run."""
    spec, final, events = _read(path)
    by_sample: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for line, e in events:
        by_sample.setdefault(str(e["sample_id"]), []).append((line, e))
    types = [t for t in ("match", "metrics") if any(e.get("type") == t for _, e in events)]
    kind = pick(metric, types, "verdict event", str(path), "--metric") if types or metric else None
    samples = [_sample(rid, evs, kind, path, threshold) for rid, evs in by_sample.items()]
    where = f"{path}: spec"
    config = typed(spec, "run_config", "object", where, field="spec.run_config", default={})
    eval_spec = typed(config, "eval_spec", "object", where, field="spec.run_config.eval_spec", default={})
    fns = typed(spec, "completion_fns", "list", where, field="spec.completion_fns", default=[])
    return Imported(
        format="openai-evals",
        file=path,
        task=str(spec.get("base_eval") or spec.get("eval_name") or "openai-evals"),
        samples=samples,
        grader=kind or "match",
        grader_version=grader_version("openai-evals", threshold),
        model_id=",".join(str(f) for f in fns) or None,
        identifiers={
            "run_id": spec.get("run_id"),
            "eval_name": spec.get("eval_name"),
            "base_eval": spec.get("base_eval"),
            "split": spec.get("split"),
            "completion_fns": fns,
            "eval_class": eval_spec.get("cls"),
            "created_at": spec.get("created_at"),
            "created_by": spec.get("created_by"),
            "seed": config.get("seed"),
            "final_report": final,
        },
        not_finished=None if final is not None else "the openai-evals log has no final_report (the run did not finish)",
    )
