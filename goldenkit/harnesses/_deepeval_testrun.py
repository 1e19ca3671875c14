"""deepeval saved test runs (``TestRun`` JSON, camelCase keys).

``{testCases[], conversationalTestCases[], metricsScores[], testPassed, testFailed,
runDuration, evaluationCost}``; each test case has ``name``, ``input``,
``actualOutput``, ``success``, ``metricsData[{name, threshold, success, score,
reason, evaluationModel, error}]``, ``order`` and a ``trace`` whose spans carry
metrics of their own (``trace.baseSpans[].metricsData``, and the other span lists).
The files: ``.deepeval/.latest_test_run.json``, which deepeval writes after every
``deepeval test run`` / ``evaluate()``, wraps the run as ``{"testRunData": {...}}``;
``.deepeval/.temp_test_run_data.json`` and a saved run hold it bare. The 2024 layout
(before August 2024) names a case's metrics ``metricsMetadata[{metric, threshold,
success, score, reason, evaluationModel, error}]`` (the metric's name under
``metric``); it is read the same way.

Row identity: a test case's ``name`` is not a key in deepeval (one pytest function that
evaluates a batch gives every case its name), so the row id is the ``name`` where no
other test case of the file has it, and ``<name>#<8 hex digits of the SHA-256 of the
canonical input>`` for test cases that share a name; a case without a name is ``h`` +
16 hex digits of that hash. Two test cases with the same name and the same input are
one row twice: refused, naming both. The input is ``input`` (``turns`` for a
conversational case, else its ``scenario``).

Mapping: ``input`` -> the input the fingerprint covers, ``success`` -> PASS/FAIL;
any metric of the test case (its own or its trace's) with ``error`` set -> ERROR of
kind ``grader`` (the metric could not grade). ``--metric NAME`` takes that metric's
``success`` instead (or its score against ``--threshold``). The judges
(``evaluationModel``) are the run's judge version. A file without a test case is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from goldenkit._scrub import scrub
from goldenkit.errors import InputError
from goldenkit.harnesses._common import (
    Imported,
    Sample,
    grader_version,
    pick,
    read_json,
    short_hash,
    typed,
    verdict_of,
)
from goldenkit.schema import ERROR, FAIL, GRADER, PASS

_SPANS = ("baseSpans", "agentSpans", "llmSpans", "retrieverSpans", "toolSpans")


def _own(holder: dict[str, Any], where: str) -> Iterator[dict[str, Any]]:
    """A case's or span's metric results: ``metricsData``, or the 2024 ``metricsMetadata`` (name under ``metric``)."""
    found = typed(holder, "metricsData", "list", where) or typed(holder, "metricsMetadata", "list", where)
    for m in found or []:
        if isinstance(m, dict):
            yield m if "name" in m or "metric" not in m else {**m, "name": m["metric"]}


def _span_metrics(span: Any, where: str) -> Iterator[dict[str, Any]]:
    if not isinstance(span, dict):
        return
    yield from _own(span, where)
    for child in typed(span, "children", "list", where, field="a span's children") or []:
        yield from _span_metrics(child, where)


def metrics_of(case: dict[str, Any], where: str = "a test case") -> list[dict[str, Any]]:
    """Every metric result of a test case: its own, then its trace's and its spans'."""
    found = list(_own(case, where))
    trace = typed(case, "trace", "object", where)
    if trace is not None:
        found.extend(_own(trace, where))
        for key in _SPANS:
            for span in typed(trace, key, "list", where, field=f"trace.{key}") or []:
                found.extend(_span_metrics(span, where))
    return found


def _at(path: Path, i: int) -> str:
    """Where test case ``i`` (0-based) is, for messages."""
    return f"{path}: test case #{i + 1}"


def _input(case: dict[str, Any]) -> Any:
    return case.get("input") if case.get("input") is not None else case.get("turns", case.get("scenario"))


def _row_ids(cases: list[dict[str, Any]], path: Path) -> list[str]:
    """Each test case's row id (see the module docstring); the same name and input twice is an error."""
    names = [c.get("name") if isinstance(c.get("name"), str) and c.get("name") else None for c in cases]
    shared = {n for n in names if n is not None and names.count(n) > 1}
    ids: list[str] = []
    first: dict[str, int] = {}
    for i, (case, name) in enumerate(zip(cases, names, strict=True)):
        if name is None:
            rid = "h" + short_hash(_input(case))
        else:
            rid = f"{name}#{short_hash(_input(case), 8)}" if name in shared else name
        if rid in first:
            raise InputError(
                f"{path}: test cases #{first[rid] + 1} and #{i + 1} have the same name {name!r} and the same input; "
                "one row twice"
            )
        first[rid] = i
        ids.append(rid)
    return ids


def _verdict(case: dict[str, Any], row_id: str, where: str, metric: str | None, threshold: float | None) -> Sample:
    metrics = metrics_of(case, where)
    scope = metrics if metric is None else [m for m in metrics if m.get("name") == metric]
    failed = next((m for m in scope if m.get("error")), None)
    inp = _input(case)
    out = case.get("actualOutput")
    base = Sample(
        row_id=row_id,
        repeat=0,
        input=inp,
        verdict=ERROR,
        where=where,
        response=out if isinstance(out, str) else None,
        fields=typed(case, "additionalMetadata", "object", where, default={}),
    )
    base.latency_ms = float(case["runDuration"]) * 1000 if isinstance(case.get("runDuration"), (int, float)) else None
    base.cost = float(case["evaluationCost"]) if isinstance(case.get("evaluationCost"), (int, float)) else None
    if failed is not None:
        base.detail = f"deepeval metric {failed.get('name')!r} error: {scrub(str(failed.get('error')).strip())[:200]}"
        base.error_kind = GRADER
        return base
    if metric is None:
        value = case.get("success")
        if not isinstance(value, bool):
            raise InputError(f"{where}: test case has no 'success' (true/false)")
        base.verdict = PASS if value else FAIL
        base.score = next((float(m["score"]) for m in metrics if isinstance(m.get("score"), (int, float))), None)
        base.reason = "; ".join(f"{m.get('name')}: {m.get('reason')}" for m in metrics if m.get("reason")) or None
        return base
    if not scope:
        raise InputError(f"{where}: test case has no metric {metric!r}")
    m = scope[0]
    value = m.get("score") if threshold is not None else m.get("success")
    base.verdict, base.score = verdict_of(value, threshold, where, metric)
    if threshold is None and isinstance(m.get("score"), (int, float)):
        base.score = float(m["score"])
    base.reason = None if m.get("reason") is None else str(m.get("reason"))
    return base


def read_deepeval(path: Path, *, metric: str | None = None, threshold: float | None = None) -> Imported:
    """Read a deepeval TestRun JSON file as one imported run."""
    doc = read_json(path, "deepeval test run")
    if isinstance(doc, dict) and isinstance(doc.get("testRunData"), dict):  # .deepeval/.latest_test_run.json
        doc = doc["testRunData"]
    if not isinstance(doc, dict) or not isinstance(doc.get("testCases"), list):
        raise InputError(f"{path}: not a deepeval test run (no testCases list)")
    cases = [*doc["testCases"], *typed(doc, "conversationalTestCases", "list", str(path), default=[])]
    if not cases:
        raise InputError(f"{path}: no samples: the deepeval test run holds no test case")
    present = list(
        dict.fromkeys(
            str(m.get("name")) for i, c in enumerate(cases) if isinstance(c, dict) for m in metrics_of(c, _at(path, i))
        )
    )
    if metric is not None:
        pick(metric, present, "metric", str(path), "--metric")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise InputError(f"{path}: test case #{i + 1} is not an object")
        name = case.get("name")
        if not (isinstance(name, str) and name) and case.get("input") is None and case.get("turns") is None:
            raise InputError(f"{path}: test case #{i + 1} has neither a name nor an input")
    samples = [
        _verdict(case, rid, f"{path}: test case #{i + 1} {case.get('name') or ''}".rstrip(), metric, threshold)
        for i, (case, rid) in enumerate(zip(cases, _row_ids(cases, path), strict=True))
    ]
    judges = sorted(
        {
            str(m["evaluationModel"])
            for i, c in enumerate(cases)
            for m in metrics_of(c, _at(path, i))
            if m.get("evaluationModel")
        }
    )
    return Imported(
        format="deepeval",
        file=path,
        task="deepeval",
        samples=samples,
        grader=metric or "deepeval",
        grader_version=grader_version("deepeval", threshold),
        judge_version=",".join(judges) or None,
        identifiers={
            "metrics": present,
            "testPassed": doc.get("testPassed"),
            "testFailed": doc.get("testFailed"),
            "runDuration": doc.get("runDuration"),
            "evaluationCost": doc.get("evaluationCost"),
            "identifier": doc.get("identifier"),
        },
    )
