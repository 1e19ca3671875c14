"""deepeval saved test runs (``TestRun`` JSON, camelCase keys).

``{testCases[], conversationalTestCases[], metricsScores[], testPassed, testFailed,
runDuration, evaluationCost}``; each test case has ``name``, ``input``,
``actualOutput``, ``success``, ``metricsData[{name, threshold, success, score,
reason, evaluationModel, error}]``, ``order`` and a ``trace`` whose spans carry
metrics of their own (``trace.baseSpans[].metricsData``, and the other span lists).

Mapping: test case ``name`` -> row id (else ``h`` + 16 hex digits of the SHA-256 of
the canonical ``input``), ``input`` -> the input the fingerprint covers, ``success``
-> PASS/FAIL; any metric of the test case (its own or its trace's) with ``error``
set -> ERROR. ``--metric NAME`` takes that metric's ``success`` instead (or its score
against ``--threshold``). The judges (``evaluationModel``) are the run's judge version.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from goldenkit.errors import InputError
from goldenkit.harnesses.common import Imported, Sample, grader_version, pick, read_json, short_hash, verdict_of
from goldenkit.schema import ERROR, FAIL, PASS

_SPANS = ("baseSpans", "agentSpans", "llmSpans", "retrieverSpans", "toolSpans")


def _span_metrics(span: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(span, dict):
        return
    for m in span.get("metricsData") or []:
        if isinstance(m, dict):
            yield m
    for child in span.get("children") or []:
        yield from _span_metrics(child)


def metrics_of(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Every metric result of a test case: its own, then its trace's and its spans'."""
    found = [m for m in case.get("metricsData") or [] if isinstance(m, dict)]
    trace = case.get("trace")
    if isinstance(trace, dict):
        found.extend(_span_metrics({"metricsData": trace.get("metricsData")}))
        for key in _SPANS:
            for span in trace.get(key) or []:
                found.extend(_span_metrics(span))
    return found


def _verdict(case: dict[str, Any], where: str, metric: str | None, threshold: float | None) -> Sample:
    metrics = metrics_of(case)
    scope = metrics if metric is None else [m for m in metrics if m.get("name") == metric]
    failed = next((m for m in scope if m.get("error")), None)
    rid = case.get("name")
    inp = case.get("input") if case.get("input") is not None else case.get("turns", case.get("scenario"))
    row_id = str(rid) if isinstance(rid, str) and rid else "h" + short_hash(inp)
    out = case.get("actualOutput")
    base = Sample(
        row_id=row_id,
        repeat=0,
        input=inp,
        verdict=ERROR,
        where=where,
        response=out if isinstance(out, str) else None,
        fields=case.get("additionalMetadata") or {},
    )
    base.latency_ms = float(case["runDuration"]) * 1000 if isinstance(case.get("runDuration"), (int, float)) else None
    base.cost = float(case["evaluationCost"]) if isinstance(case.get("evaluationCost"), (int, float)) else None
    if failed is not None:
        base.detail = f"deepeval metric {failed.get('name')!r} error: {str(failed.get('error')).strip()[:200]}"
        base.error_kind = "permanent"
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
    if not isinstance(doc, dict) or not isinstance(doc.get("testCases"), list):
        raise InputError(f"{path}: not a deepeval test run (no testCases list)")
    cases = [c for c in doc["testCases"] + list(doc.get("conversationalTestCases") or [])]
    present = list(dict.fromkeys(str(m.get("name")) for c in cases if isinstance(c, dict) for m in metrics_of(c)))
    if metric is not None:
        pick(metric, present, "metric", str(path), "--metric")
    samples = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise InputError(f"{path}: test case #{i + 1} is not an object")
        name = case.get("name")
        if not (isinstance(name, str) and name) and case.get("input") is None and case.get("turns") is None:
            raise InputError(f"{path}: test case #{i + 1} has neither a name nor an input")
        samples.append(_verdict(case, f"{path}: test case {name or '#' + str(i + 1)}", metric, threshold))
    judges = sorted({str(m["evaluationModel"]) for c in cases for m in metrics_of(c) if m.get("evaluationModel")})
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
