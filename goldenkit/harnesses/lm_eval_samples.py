"""lm-evaluation-harness ``--log_samples`` output: ``samples_<task>_<ts>.jsonl``.

One JSON object per line, one line per document (per filter, when a task has
several filters): ``doc_id``, ``doc`` (the dataset row), ``target``, ``resps``,
``filtered_resps``, ``filter``, ``metrics`` (names of the per-sample metric keys),
``doc_hash``, then one key per metric. The 2024 layout has no ``filter`` or
``metrics`` keys: a metric is then any key that is not one of the fixed ones.
``results_<ts>.json`` beside it (same timestamp) gives the model, the config and
the task's ``n-samples``.

Mapping: ``doc_id`` -> row id, ``doc`` -> the input the fingerprint covers, the
metric (``--metric``, default the first per-sample metric with a per-sample
verdict; ``name,filter`` picks a filter, as lm-eval's results keys do) -> verdict:
1/0, booleans, numbers against ``--threshold``; list-valued metrics (corpus-level
F1 inputs) give no per-sample verdict. One run = one task; there are no repeat rows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from goldenkit.errors import InputError
from goldenkit.harnesses.common import Imported, Sample, grader_version, read_json, read_json_lines, verdict_of

_NAME = re.compile(r"samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)\.jsonl$")
_FIXED = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
}


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = read_json_lines(path, "an lm-eval samples file")
    if not out:
        raise InputError(f"{path}: empty file; not an lm-eval samples file")
    return out


def _metric_names(obj: dict[str, Any]) -> list[str]:
    listed = obj.get("metrics")
    if isinstance(listed, list):
        return [str(m) for m in listed if m in obj]
    return [k for k in obj if k not in _FIXED]


def _metrics_present(lines: list[tuple[int, dict[str, Any]]]) -> tuple[list[str], list[str]]:
    """Every ``metric,filter`` present, and the metrics that have a per-sample verdict (scalar values)."""
    present: list[str] = []
    scalar: list[str] = []
    for _, obj in lines:
        flt = str(obj.get("filter", "none"))
        for m in _metric_names(obj):
            key = f"{m},{flt}"
            if key not in present:
                present.append(key)
            if isinstance(obj[m], (int, float, bool)) and key not in scalar:
                scalar.append(key)
    return present, scalar


def _choose(metric: str | None, lines: list[tuple[int, dict[str, Any]]], path: Path) -> tuple[str, str]:
    """The ``(metric, filter)`` that decides: ``--metric`` (``name`` or ``name,filter``), else the first scalar one."""
    present, scalar = _metrics_present(lines)
    several = len({k.split(",", 1)[1] for k in present}) > 1
    shown = ", ".join(present if several else [k.split(",", 1)[0] for k in present]) or "none"
    if metric is None:
        if not scalar:
            raise InputError(f"{path}: no per-sample metric with a verdict (present: {shown})")
        key = scalar[0]
    else:
        matches = [k for k in present if k == metric or k.split(",", 1)[0] == metric]
        if not matches:
            raise InputError(f"{path}: unknown metric {metric!r} (--metric); present: {shown}")
        if len(matches) > 1:
            raise InputError(
                f"{path}: metric {metric!r} has several filters; name one: --metric {matches[0]} ({shown})"
            )
        key = matches[0]
    name, flt = key.split(",", 1)
    return name, flt


def _results_file(path: Path, ts: str) -> tuple[dict[str, Any], str | None]:
    """The run's ``results_<ts>.json`` beside the samples file, and its name ({} and None when absent)."""
    candidates = sorted(p for p in path.parent.iterdir() if p.name.endswith(f"results_{ts}.json"))
    if not candidates:
        return {}, None
    data = read_json(candidates[0], "lm-eval results file")
    if not isinstance(data, dict):
        raise InputError(f"{candidates[0]}: not an lm-eval results file (not a JSON object)")
    return data, candidates[0].name


def _sample(line: int, obj: dict[str, Any], path: Path, metric: str, threshold: float | None) -> Sample:
    where = f"{path}:{line}"
    doc_id = obj.get("doc_id")
    if doc_id is None or isinstance(doc_id, bool) or str(doc_id) == "":
        raise InputError(f"{where}: sample without doc_id")
    where = f"{where}: doc_id {doc_id}"
    if metric not in obj:
        raise InputError(f"{where}: no metric {metric!r}")
    value = obj[metric]
    if isinstance(value, (list, dict)):
        raise InputError(f"{where}: metric {metric!r} is a list (a corpus-level input), not a per-sample verdict")
    verdict, number = verdict_of(value, threshold, where, metric)
    doc = obj.get("doc")
    resp = obj.get("filtered_resps")
    return Sample(
        row_id=str(doc_id),
        repeat=0,
        input=doc if doc is not None else obj.get("doc_hash"),
        verdict=verdict,
        where=where,
        score=number,
        response=None if resp is None else orjson.dumps(resp).decode(),
        fields=doc if isinstance(doc, dict) else {},
    )


def read_lm_eval(path: Path, *, metric: str | None = None, threshold: float | None = None) -> Imported:
    """Read one lm-eval samples file (one task of one run) as an imported run."""
    m = _NAME.search(path.name)
    if m is None:
        raise InputError(f"{path}: not an lm-eval samples file (expected a name samples_<task>_<timestamp>.jsonl)")
    task, ts = m.group("task"), m.group("ts")
    lines = _lines(path)
    name, flt = _choose(metric, lines, path)
    chosen = [(i, o) for i, o in lines if str(o.get("filter", "none")) == flt]
    samples = [_sample(i, o, path, name, threshold) for i, o in chosen]
    results, results_name = _results_file(path, ts)
    config = results.get("config") or {}
    model_args = config.get("model_args")
    model = results.get("model_name") or (model_args.get("pretrained") if isinstance(model_args, dict) else None)
    n = ((results.get("n-samples") or {}).get(task) or {}).get("effective")
    task_conf = (results.get("configs") or {}).get(task) or {}
    return Imported(
        format="lm-eval",
        file=path,
        task=task,
        task_version=None if (results.get("versions") or {}).get(task) is None else str(results["versions"][task]),
        samples=samples,
        grader=f"{name},{flt}",
        grader_version=grader_version("lm-eval", threshold),
        expected_rows=int(n) if isinstance(n, int) else None,
        model_id=None if model is None else str(model),
        identifiers={
            "task": task,
            "timestamp": ts,
            "model": config.get("model"),
            "model_name": model,
            "model_args": model_args,
            "date": results.get("date"),
            "lm_eval_version": results.get("lm_eval_version"),
            "git_hash": results.get("git_hash"),
            "task_hash": (results.get("task_hashes") or {}).get(task),
            "repeats": task_conf.get("repeats"),
            "limit": config.get("limit"),
            "results_file": results_name,
        },
    )
