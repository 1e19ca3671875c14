"""promptfoo ``promptfoo eval -o`` output: JSON (results versions 1-3) and CSV.

JSON: ``{evalId, results: {version, timestamp, prompts[], results[], stats}, config}``
(an exported eval adds ``metadata``); very old files are the results object itself.
Each ``results[]`` entry is one provider x prompt x test: ``provider{id, label}``,
``prompt{raw, label}``, ``promptIdx``, ``testIdx`` (version 3), ``vars``,
``testCase{description, vars, assert}``, ``success``, ``score``, ``failureReason``
(0 none, 1 assertion failed, 2 error), ``gradingResult``, ``response``, ``latencyMs``, ``cost``.

CSV (``-o output.csv``): one column per prompt (its header a JSON ``{raw, display}``)
and one per var; each prompt cell reads ``[PASS] (<score>) <output>`` or
``[FAIL] (<score>) <reason>\\n---\\n<output>``. The provider is not in the file
(``--provider`` names it).

Runs: one per provider (``--provider`` picks one), and per prompt where a provider
ran several prompts (each prompt is another system under test, recorded as the run's
``prompt_sha256``). With one run the id is ``--run-id``; otherwise ``ID-<provider>``
and ``ID-<provider>-prompt<promptIdx>`` (characters a run id cannot hold become ``-``).

Rows: ``testIdx`` (version 3) is the row id, the same under every provider and
prompt of one file. Where there is none (versions 1-2, CSV), the row id is ``t`` +
16 hex digits of the SHA-256 of the canonical JSON ``{"description", "vars"}`` of
the test. The prompt is left out of that hash on purpose: it belongs to the system
under test, so two prompts over the same tests pair row by row. Rows of one run with
the same test (``promptfoo eval --repeat N`` advances ``testIdx`` for each repeat) are
the repeats of one row (its first ``testIdx``). The fingerprint covers
``{description, vars}`` of each row.

Verdict: ``success: true`` -> PASS; ``failureReason: 2`` (an error, not an assertion
failure) -> ERROR (versions 1-2, which have no ``failureReason``: a ``response.error``);
any other ``success: false`` -> FAIL. ``error`` alone is not an ERROR: it also holds
assertion failure reasons (``Latency 5794ms is greater than threshold 3000ms``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldenkit.errors import InputError
from goldenkit.harnesses.common import Imported, Sample, canonical_json, read_json, short_hash
from goldenkit.schema import ERROR, FAIL, PASS

_CELL = re.compile(r"\[(PASS|FAIL|ERROR)\](?: \((-?[0-9.]+)\))? ?(.*)", re.DOTALL)


@dataclass
class _Result:
    """One provider x prompt x test result, in the shape both the JSON and the CSV give."""

    provider: str | None
    prompt: str
    prompt_idx: int
    test_idx: int | None
    test: dict[str, Any]
    verdict: str
    where: str
    score: float | None = None
    reason: str | None = None
    response: str | None = None
    latency_ms: float | None = None
    cost: float | None = None
    tokens: tuple[int | None, int | None] = (None, None)
    vars: dict[str, Any] = field(default_factory=dict)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _verdict(r: dict[str, Any]) -> str:
    if r.get("success") is True:
        return PASS
    if "failureReason" in r:
        return ERROR if r.get("failureReason") == 2 else FAIL
    response = r.get("response")
    return ERROR if isinstance(response, dict) and response.get("error") else FAIL


def _json_result(r: Any, i: int, path: Path, prompts: dict[str, int]) -> _Result:
    where = f"{path}: results[{i}]"
    if not isinstance(r, dict) or "success" not in r:
        raise InputError(f"{where}: not a promptfoo result (no 'success')")
    prov = r.get("provider")
    provider = (prov.get("id") or prov.get("label")) if isinstance(prov, dict) else prov
    prompt = _dict(r.get("prompt")) or {"raw": r.get("prompt")}
    raw_prompt = str(prompt.get("raw") if prompt.get("raw") is not None else prompt.get("display", ""))
    idx = r.get("promptIdx")
    prompt_idx = idx if isinstance(idx, int) else prompts.setdefault(raw_prompt, len(prompts))
    test = _dict(r.get("testCase"))
    vars_ = _dict(r.get("vars")) or _dict(test.get("vars"))
    test_idx = r.get("testIdx") if isinstance(r.get("testIdx"), int) else None
    grading = _dict(r.get("gradingResult"))
    response = _dict(r.get("response"))
    usage = _dict(response.get("tokenUsage"))
    score = r.get("score")
    verdict = _verdict(r)
    reason = grading.get("reason") or r.get("error") or (response.get("error") if verdict == ERROR else None)
    return _Result(
        provider=None if provider is None else str(provider),
        prompt=raw_prompt,
        prompt_idx=prompt_idx,
        test_idx=test_idx,
        test=test,
        verdict=verdict,
        where=where + (f" (testIdx {test_idx})" if test_idx is not None else ""),
        score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
        reason=_text(reason),
        response=_text(response.get("output")),
        latency_ms=float(r["latencyMs"]) if isinstance(r.get("latencyMs"), (int, float)) else None,
        cost=float(r["cost"]) if isinstance(r.get("cost"), (int, float)) else None,
        tokens=(usage.get("prompt"), usage.get("completion")),
        vars=dict(vars_),
    )


def _read_json_output(path: Path) -> tuple[list[_Result], dict[str, Any]]:
    doc = read_json(path, "promptfoo JSON output")
    summary = doc.get("results") if isinstance(doc, dict) else None
    if isinstance(summary, dict) and isinstance(summary.get("results"), list):
        outer = doc
    elif isinstance(doc, dict) and isinstance(summary, list):
        summary, outer = doc, {}
    else:
        raise InputError(f"{path}: not a promptfoo output (no results list)")
    prompts: dict[str, int] = {}
    results = [_json_result(r, i, path, prompts) for i, r in enumerate(summary["results"])]
    meta = outer.get("metadata") if isinstance(outer.get("metadata"), dict) else {}
    config = outer.get("config") if isinstance(outer.get("config"), dict) else {}
    ids = {
        "evalId": outer.get("evalId"),
        "results_version": summary.get("version", 1),
        "timestamp": summary.get("timestamp"),
        "promptfooVersion": meta.get("promptfooVersion"),
        "exportedAt": meta.get("exportedAt"),
        "description": config.get("description"),
        "stats": summary.get("stats"),
    }
    return results, ids


def _csv_cell(cell: str, where: str) -> tuple[str, float | None, str | None, str]:
    m = _CELL.fullmatch(cell.strip())
    if m is None:
        raise InputError(f"{where}: cell is not '[PASS] ...' or '[FAIL] ...': {cell[:40]!r}")
    verdict, score, rest = m.group(1), m.group(2), m.group(3)
    reason: str | None = None
    output = rest
    if verdict != PASS and "\n---\n" in rest:
        reason, output = rest.split("\n---\n", 1)
    return verdict, None if score is None else float(score), reason, output


def _read_csv_output(path: Path, provider: str | None) -> tuple[list[_Result], dict[str, Any]]:
    try:
        rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read as CSV: {exc}") from None
    if len(rows) < 2:
        raise InputError(f"{path}: no test rows; not a promptfoo CSV output")
    head = rows[0]
    prompts: dict[int, str] = {}
    for col, name in enumerate(head):
        try:
            obj = json.loads(name)
        except ValueError:
            continue
        if isinstance(obj, dict) and "raw" in obj:
            prompts[col] = str(obj["raw"])
    if not prompts:
        raise InputError(f"{path}: no prompt column (a JSON header with 'raw'); not a promptfoo CSV output")
    results = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(head):
            raise InputError(f"{path}:{line}: {len(row)} cells, the header has {len(head)} (truncated file?)")
        vars_ = {head[c]: v for c, v in enumerate(row) if c not in prompts}
        for idx, (col, raw) in enumerate(prompts.items()):
            where = f"{path}:{line}: prompt {idx}"
            verdict, score, reason, output = _csv_cell(row[col], where)
            results.append(
                _Result(provider, raw, idx, None, {"vars": vars_}, verdict, where, score, reason, output, vars=vars_)
            )
    return results, {"results_version": "csv"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "provider"


def _units(results: list[_Result], provider: str | None, csv_file: bool, path: Path) -> list[tuple[str | None, int]]:
    units = list(dict.fromkeys((r.provider, r.prompt_idx) for r in results))
    if provider is not None and not csv_file:
        present = list(dict.fromkeys(str(p) for p, _ in units))
        units = [u for u in units if u[0] == provider]
        if not units:
            raise InputError(f"{path}: unknown provider {provider!r} (--provider); present: {', '.join(present)}")
    return units


def _suffix(unit: tuple[str | None, int], units: list[tuple[str | None, int]]) -> str | None:
    if len(units) == 1:
        return None
    prov, idx = unit
    several_prompts = sum(1 for p, _ in units if p == prov) > 1
    parts = ([_slug(prov)] if prov is not None else []) + ([f"prompt{idx}"] if several_prompts or prov is None else [])
    return "-".join(parts)


def _samples(results: list[_Result]) -> tuple[list[Sample], int]:
    """Samples of one run; equal tests are repeats of one row (see the module docstring)."""
    groups: dict[str, list[_Result]] = {}
    for r in sorted(results, key=lambda r: -1 if r.test_idx is None else r.test_idx):
        test = {"description": r.test.get("description"), "vars": r.vars, "assert": r.test.get("assert")}
        groups.setdefault(canonical_json(test), []).append(r)
    samples = []
    for group in groups.values():
        first = group[0]
        rid = (
            str(first.test_idx)
            if first.test_idx is not None
            else "t" + short_hash({"description": first.test.get("description"), "vars": first.vars})
        )
        for rep, r in enumerate(group):
            samples.append(
                Sample(
                    row_id=rid,
                    repeat=rep,
                    input={"description": r.test.get("description"), "vars": r.vars},
                    verdict=r.verdict,
                    where=r.where,
                    score=r.score,
                    reason=r.reason,
                    response=r.response,
                    detail=f"promptfoo error: {r.reason}" if r.verdict == ERROR else None,
                    error_kind="permanent" if r.verdict == ERROR else None,
                    fields=r.vars,
                    latency_ms=r.latency_ms,
                    cost=r.cost,
                    tokens_in=r.tokens[0],
                    tokens_out=r.tokens[1],
                )
            )
    return samples, max((len(g) for g in groups.values()), default=1)


def read_promptfoo(path: Path, *, provider: str | None = None) -> list[Imported]:
    """Read a promptfoo JSON or CSV output as one imported run per provider (and prompt)."""
    csv_file = path.suffix.lower() == ".csv"
    results, ids = _read_csv_output(path, provider) if csv_file else _read_json_output(path)
    if not results:
        raise InputError(f"{path}: no results in the file")
    units = _units(results, provider, csv_file, path)
    runs = []
    for unit in units:
        mine = [r for r in results if (r.provider, r.prompt_idx) == unit]
        samples, repeats = _samples(mine)
        prompt = mine[0].prompt
        runs.append(
            Imported(
                format="promptfoo",
                file=path,
                task=str(ids.get("description") or "promptfoo"),
                samples=samples,
                grader="promptfoo",
                grader_version="promptfoo",
                repeats=repeats,
                model_id=unit[0],
                prompt_sha256=hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
                identifiers={**ids, "provider": unit[0], "promptIdx": unit[1], "prompt": prompt},
                suffix=_suffix(unit, units),
            )
        )
    return runs
