"""lm-evaluation-harness per-sample output: ``--log_samples`` files and 0.3 ``--write_out`` files.

A samples file is recognized by its content, whatever its name or extension: JSON
lines whose records have ``doc_id`` (``samples_<task>_<ts>.jsonl``; between June
2024 and v0.4.3 lm-eval wrote the same lines into ``samples_<task>_<ts>.json``). The
task and timestamp come from that name when it has them (else the task is the file's
stem). A file that is one JSON array of records with ``doc_id`` is a 0.3
``--write_out`` file (``<task>_write_out_info.json``): ``{doc_id, prompt_<n>,
logit_<n>, truth, <metric>...}`` with every metric written as a string (``"True"``,
``"0"``, ``"0.5"``), read as a boolean or number; a metric whose strings are neither
(SQuAD's aggregation tuples) gives no per-sample verdict and is refused naming the
document. Its input is ``{prompts, truth}``, its response the ``logit_<n>`` values.

``--log_samples`` files hold one JSON object per line, one line per document (per filter, when a task has
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
from goldenkit.harnesses._common import (
    Imported,
    Sample,
    grader_version,
    read_json,
    read_json_lines,
    typed,
    verdict_of,
)

_NAME = re.compile(r"samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)\.jsonl?$")
_WRITE_OUT = re.compile(r"(?P<task>.+)_write_out_info\.json$")
_WRITE_OUT_FIXED = re.compile(r"(prompt|logit)_\d+|truth")
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


def _records(path: Path) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """The file's records with where each is (``file:line``, or ``file: [i]`` in an array), and whether it is 0.3's."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data.lstrip()[:1] == b"[":
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(
                f"{path}: not a readable lm-eval --write_out file (invalid or truncated JSON: {exc})"
            ) from None
        if not doc or not all(isinstance(o, dict) and "doc_id" in o for o in doc):
            raise InputError(f"{path}: not an lm-eval samples file (a JSON array, but not of records with doc_id)")
        return [(f"{path}: [{i}]", o) for i, o in enumerate(doc)], True
    if data.lstrip()[:1] == b"{" and b"\n" in data.strip():
        try:
            whole = orjson.loads(data)
        except orjson.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            raise InputError(f"{path}: not an lm-eval samples file (one JSON object, not JSON lines with doc_id)")
    lines = read_json_lines(path, "an lm-eval samples file")
    if not lines:
        raise InputError(f"{path}: no samples: empty file; not an lm-eval samples file")
    if "doc_id" not in lines[0][1]:
        raise InputError(f"{path}:{lines[0][0]}: sample without doc_id; not an lm-eval samples file")
    return [(f"{path}:{i}", o) for i, o in lines], False


def _scalar(value: Any) -> bool:
    """Whether a per-sample value can be a verdict: a boolean or number, or a string of one (0.3 writes strings)."""
    if isinstance(value, (int, float, bool)):
        return True
    if not isinstance(value, str):
        return False
    word = value.strip().lower()
    if word in ("true", "false"):
        return True
    try:
        float(word)
    except ValueError:
        return False
    return True


def _metric_names(obj: dict[str, Any], where: str) -> list[str]:
    listed = typed(obj, "metrics", "list", where)
    if listed is not None:
        for i in range(len(listed)):
            typed(listed, i, "text", where, field=f"metrics[{i}]")
        return [m for m in listed if m in obj]
    return [k for k in obj if k not in _FIXED and not _WRITE_OUT_FIXED.fullmatch(k)]


def _metrics_present(lines: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], list[str]]:
    """Every ``metric,filter`` present, and the metrics that have a per-sample verdict (scalar values)."""
    present: list[str] = []
    scalar: list[str] = []
    for where, obj in lines:
        flt = str(obj.get("filter", "none"))
        for m in _metric_names(obj, where):
            key = f"{m},{flt}"
            if key not in present:
                present.append(key)
            if _scalar(obj[m]) and key not in scalar:
                scalar.append(key)
    return present, scalar


def _choose(metric: str | None, lines: list[tuple[str, dict[str, Any]]], path: Path) -> tuple[str, str]:
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


def _sample(where: str, obj: dict[str, Any], metric: str, threshold: float | None, old: bool) -> Sample:
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
    if old:  # 0.3 --write_out: the prompts and the truth are the input, the logits the response
        keys = sorted(
            (k for k in obj if _WRITE_OUT_FIXED.fullmatch(k)),
            key=lambda k: (k.split("_")[0], int(k.rsplit("_", 1)[-1]) if "_" in k else 0),
        )
        doc = {"prompts": [obj[k] for k in keys if k.startswith("prompt_")], "truth": obj.get("truth")}
        resp = [obj[k] for k in keys if k.startswith("logit_")]
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
    lines, old = _records(path)
    m, w = _NAME.search(path.name), _WRITE_OUT.search(path.name)
    task = m.group("task") if m else w.group("task") if w else path.name.split(".")[0]
    ts = m.group("ts") if m else None
    name, flt = _choose(metric, lines, path)
    chosen = [(i, o) for i, o in lines if str(o.get("filter", "none")) == flt]
    samples = [_sample(i, o, name, threshold, old) for i, o in chosen]
    results, results_name = _results_file(path, ts) if ts else ({}, None)
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
            "layout": "0.3 write_out" if old else "log_samples",
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
