"""Google ADK eval history: the ``EvalSetResult`` files ``adk eval`` writes (``*.evalset_result.json``).

``adk eval`` saves its results into ``<agent>/.adk/eval_history/``: one
``EvalSetResult`` ``{eval_set_result_id, eval_set_result_name, eval_set_id,
eval_case_results[], creation_timestamp}`` per file (snake_case, or the camelCase
aliases; older ADK wrote the object as a JSON string inside the file, read too). Each
``EvalCaseResult`` has ``eval_id``, ``final_eval_status`` (1 PASSED, 2 FAILED,
3 NOT_EVALUATED, or those names), ``overall_eval_metric_results[{metric_name,
threshold, criterion, score, eval_status}]`` and ``eval_metric_result_per_invocation
[{actual_invocation, expected_invocation, eval_metric_results}]``.

Runs: ADK's local eval service writes one file per eval case as each case finishes, so
one ``adk eval`` run is several files with close timestamps. A file given alone is one
run. A folder (``.adk/eval_history``) is read for one eval set (``--eval-set``; needed
when the folder holds several): its files in ``creation_timestamp`` order, a new run
beginning at the first file that holds a case the current run already has. Each run is
one goldenkit run: ``RUN_ID`` when the folder holds one, else
``RUN_ID-<UTC time of its first file, YYYYMMDDTHHMMSSZ>``.

Mapping: ``eval_id`` -> row id; ``final_eval_status`` PASSED / FAILED -> PASS / FAIL,
NOT_EVALUATED -> SKIPPED (no verdict: not evidence). The graders cell holds each
metric of ``overall_eval_metric_results``: its score, PASS/FAIL from its
``eval_status`` (none when not evaluated) and its threshold in the reason. The run
key's graders are the metrics with their criteria (threshold, match type, judge), so a
run whose criteria changed does not compare with one before the change; the judge
models named in the criteria are the judge version. The input the fingerprint covers
is the user text of each expected invocation (a simulated conversation, which has none:
its first user text, the scenario's starting prompt; the later turns are the
simulator's); the response is the last actual invocation's final response. The eval
set id, the result ids and their timestamps are in ``source.identifiers``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldenkit.errors import InputError
from goldenkit.harnesses._common import Imported, Sample, canonical_json, read_json, typed
from goldenkit.schema import FAIL, PASS, SKIPPED

#: The file names ADK's eval history holds.
RESULT_SUFFIX = ".evalset_result.json"
_STATUS = {1: PASS, 2: FAIL, 3: SKIPPED, "PASSED": PASS, "FAILED": FAIL, "NOT_EVALUATED": SKIPPED}


def _get(d: Mapping[str, Any], key: str, kind: str | None = None, where: str = "") -> Any:
    """``d[key]`` in snake_case or its camelCase alias; of ``kind`` when given (:func:`typed`: a field of
    another type is an InputError naming ``where`` and the field)."""
    head, *rest = key.split("_")
    name = key if d.get(key) is not None else head + "".join(w.title() for w in rest)
    return d.get(name) if kind is None else typed(d, name, kind, where)


@dataclass
class _Result:
    """One EvalSetResult file."""

    path: Path
    eval_set_id: str
    result_id: str | None
    timestamp: float
    cases: list[dict[str, Any]]


def _read(path: Path) -> _Result:
    doc = read_json(path, "ADK EvalSetResult")
    if isinstance(doc, str):  # older ADK: the object as a JSON string
        try:
            doc = json.loads(doc)
        except ValueError as exc:
            raise InputError(f"{path}: not a readable ADK EvalSetResult (a string, but not JSON: {exc})") from None
    if isinstance(doc, dict) and _get(doc, "eval_cases") is not None:
        raise InputError(
            f"{path}: an ADK EvalSet (the cases), not an EvalSetResult; import it with goldenkit dataset import"
        )
    cases = _get(doc, "eval_case_results") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(cases, list):
        raise InputError(f"{path}: not an ADK EvalSetResult (no eval_case_results list)")
    if not cases:
        raise InputError(f"{path}: no samples: the EvalSetResult holds no eval case result")
    set_id = _get(doc, "eval_set_id")
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(_get(case, "eval_id"), str) or not _get(case, "eval_id"):
            raise InputError(f"{path}: eval_case_results[{i}] has no eval_id")
        set_id = set_id or _get(case, "eval_set_id")
    stamp = _get(doc, "creation_timestamp")
    return _Result(
        path=path,
        eval_set_id=str(set_id or ""),
        result_id=None if _get(doc, "eval_set_result_id") is None else str(_get(doc, "eval_set_result_id")),
        timestamp=float(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else 0.0,
        cases=list(cases),
    )


def _text(content: Any, where: str) -> str | None:
    if not isinstance(content, Mapping):
        return None
    parts = _get(content, "parts", "list", where) or []
    texts = [str(p["text"]) for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
    return "\n".join(texts) if texts else None


def _invocations(case: dict[str, Any], where: str) -> tuple[list[Any], list[Any]]:
    per = _get(case, "eval_metric_result_per_invocation", "list", where) or []
    entries = [e for e in per if isinstance(e, Mapping)]
    return [_get(e, "actual_invocation") for e in entries], [_get(e, "expected_invocation") for e in entries]


def _input(case: dict[str, Any], where: str) -> Any:
    actual, expected = _invocations(case, where)
    if any(isinstance(e, Mapping) for e in expected):
        return [_text(_get(e, "user_content"), where) for e in expected if isinstance(e, Mapping)]
    first = next((a for a in actual if isinstance(a, Mapping)), None)
    return [] if first is None else [_text(_get(first, "user_content"), where)]


def _metrics(case: dict[str, Any], where: str) -> list[dict[str, Any]]:
    found = _get(case, "overall_eval_metric_results") or []
    if not isinstance(found, list) or not all(isinstance(m, dict) and _get(m, "metric_name") for m in found):
        raise InputError(f"{where}: overall_eval_metric_results is not a list of metric results with metric_name")
    return found


def _grade(m: dict[str, Any], where: str) -> dict[str, Any]:
    status = _STATUS.get(_get(m, "eval_status", "scalar", where))
    score, threshold = m.get("score"), m.get("threshold")
    reason = f"threshold {threshold}" + ("; not evaluated" if status == SKIPPED else "")
    passed = None if status not in (PASS, FAIL) else status == PASS
    number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    return {"passed": passed, "score": number, "reason": reason, "error": False}


def _criterion(m: dict[str, Any], where: str) -> str:
    criterion = typed(m, "criterion", "object", where)
    if isinstance(criterion, Mapping) and criterion:
        return f"adk {canonical_json(criterion)}"
    return f"adk threshold {m.get('threshold')}"


def _sample(case: dict[str, Any], result: _Result, i: int) -> Sample:
    eval_id = str(_get(case, "eval_id"))
    where = f"{result.path}: eval_case_results[{i}] ({eval_id})"
    status = _get(case, "final_eval_status", "scalar", where)
    verdict = _STATUS.get(status)
    if verdict is None:
        raise InputError(f"{where}: final_eval_status {status!r} is not 1/2/3 (PASSED, FAILED, NOT_EVALUATED)")
    actual, _ = _invocations(case, where)
    last = next((a for a in reversed(actual) if isinstance(a, Mapping)), None)
    metrics = _metrics(case, where)
    return Sample(
        row_id=eval_id,
        repeat=0,
        input=_input(case, where),
        verdict=verdict,
        where=where,
        detail="adk: NOT_EVALUATED (no metric gave a verdict)" if verdict == SKIPPED else None,
        response=None if last is None else _text(_get(last, "final_response"), where),
        started_at=datetime.fromtimestamp(result.timestamp, UTC).isoformat() if result.timestamp else None,
        graders={str(_get(m, "metric_name")): _grade(m, where) for m in metrics},
    )


def _groups(results: list[_Result]) -> list[list[_Result]]:
    """The ADK runs among the files: in timestamp order, a new run where a case comes again."""
    groups: list[list[_Result]] = []
    seen: set[str] = set()
    for r in sorted(results, key=lambda r: (r.timestamp, r.path.name)):
        ids = {str(_get(c, "eval_id")) for c in r.cases}
        if not groups or ids & seen:
            groups.append([])
            seen = set()
        groups[-1].append(r)
        seen |= ids
    return groups


def _imported(group: list[_Result], several: bool) -> Imported:
    samples: list[Sample] = []
    first: dict[str, str] = {}
    graders: dict[str, set[str]] = {}
    judges: set[str] = set()
    for r in group:
        for i, case in enumerate(r.cases):
            s = _sample(case, r, i)
            if s.row_id in first:
                raise InputError(f"{s.where}: eval case {s.row_id!r} twice in one run (first at {first[s.row_id]})")
            first[s.row_id] = s.where
            samples.append(s)
            for m in _metrics(case, s.where):
                graders.setdefault(str(_get(m, "metric_name")), set()).add(_criterion(m, s.where))
                options = typed(
                    typed(m, "criterion", "object", s.where, default={}), "judge_model_options", "object", s.where
                )
                if isinstance(options, Mapping) and options.get("judge_model"):
                    judges.add(str(options["judge_model"]))
    stamp = datetime.fromtimestamp(group[0].timestamp, UTC)
    return Imported(
        format="adk",
        file=group[0].path if len(group) == 1 else group[0].path.parent,
        task=group[0].eval_set_id or "adk",
        samples=samples,
        grader="adk",
        grader_version="adk",
        graders={name: " | ".join(sorted(v)) for name, v in graders.items()} or {"adk": "adk final_eval_status"},
        judge_version=",".join(sorted(judges)) or None,
        identifiers={
            "eval_set_id": group[0].eval_set_id,
            "eval_set_result_ids": [r.result_id for r in group],
            "creation_timestamps": [r.timestamp for r in group],
            "files": [r.path.name for r in group],
        },
        suffix=stamp.strftime("%Y%m%dT%H%M%SZ") if several else None,
    )


def read_adk_history(path: Path, *, eval_set: str | None = None) -> list[Imported]:
    """Read one EvalSetResult file, or a ``.adk/eval_history`` folder's files of one eval set, as imported runs."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(RESULT_SUFFIX))
        if not files:
            raise InputError(f"{path}: no ADK eval history here (no *{RESULT_SUFFIX} file)")
    else:
        files = [path]
    results = [_read(p) for p in files]
    sets = sorted({r.eval_set_id for r in results})
    if eval_set is not None:
        results = [r for r in results if r.eval_set_id == eval_set]
        if not results:
            raise InputError(f"{path}: no result of eval set {eval_set!r} (--eval-set); present: {', '.join(sets)}")
    elif len(sets) > 1:
        raise InputError(f"{path}: results of {len(sets)} eval sets ({', '.join(sets)}); name one with --eval-set")
    groups = _groups(results)
    return [_imported(g, len(groups) > 1) for g in groups]


__all__ = ["RESULT_SUFFIX", "read_adk_history"]
