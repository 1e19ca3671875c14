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

Prompts: a prompt's identity is its template, never the text rendered for one test
(``prompt.raw`` of a result is the rendered text): ``promptIdx`` (version 3), else
``prompt.label`` (``prompt.display`` in versions 1-2), else the position of the template
in ``results.prompts`` / ``table.head.prompts`` whose ``{{var}}`` placeholders, filled
with the result's ``vars``, give exactly its rendered text. A label is matched to the
listed templates (of the result's provider) the same way; a result whose prompt matches
no template is refused, naming it. The run's ``prompt_sha256`` is the template's hash.

Runs: one per provider and template, holding every test (``--provider`` picks one
provider). With one run the id is ``--run-id``; otherwise ``ID-<provider>`` and
``ID-<provider>-prompt<index>`` (characters a run id cannot hold become ``-``).

Rows: ``testIdx`` (version 3) is the row id, the same under every provider and
prompt of one file. Where there is none (versions 1-2, CSV), the row id is ``t`` +
16 hex digits of the SHA-256 of the canonical JSON ``{"description", "vars"}`` of
the test (a version-2 result has no ``testCase``: its description is that of the
``table.body`` row with the same vars, compared as maps, when one description fits).
The prompt is left out of that hash on purpose: it belongs to the system under test,
so two prompts over the same tests pair row by row. Rows of one run with
the same test (``promptfoo eval --repeat N`` advances ``testIdx`` for each repeat) are
the repeats of one row (its first ``testIdx``). The fingerprint covers
``{description, vars}`` of each row.

Verdict: ``success: true`` -> PASS; ``failureReason: 2`` (an error, not an assertion
failure) -> ERROR (versions 1-2, which have no ``failureReason``: a ``response.error``);
any other ``success: false`` -> FAIL. ``error`` alone is not an ERROR: it also holds
assertion failure reasons (``Latency 5794ms is greater than threshold 3000ms``).
An ERROR's kind: ``refused`` when the response says the model refused
(``response.isRefusal``, ``response.guardrails.flagged``) or its error names a
context length or content filter; else ``infrastructure`` (a provider error).

For a regrade, each row's case is the contract case of the rendered prompt and the
test's plain assertions (``contains`` / ``icontains`` -> ``expect.must_contain``,
``not-contains`` -> ``must_not``, ``regex`` -> ``regex``, ``equals`` -> ``reference``).
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
from goldenkit.harnesses._common import (
    Imported,
    Sample,
    canonical_json,
    error_kind_of,
    read_json,
    short_hash,
    typed,
)
from goldenkit.schema import ERROR, FAIL, PASS

_CELL = re.compile(r"\[(PASS|FAIL|ERROR)\](?: \((-?[0-9.]+)\))? ?(.*)", re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
#: promptfoo assertion types that are contract checks of their value (for a regrade's cases).
_ASSERTS = {"contains": "must_contain", "icontains": "must_contain", "not-contains": "must_not", "regex": "regex"}


@dataclass
class _Result:
    """One provider x prompt x test result, in the shape both the JSON and the CSV give."""

    provider: str | None
    prompt: str | None  # the template (None: the file does not give it)
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
    rendered: str | None = None
    kind: str | None = None


def _render(template: str, vars_: dict[str, Any]) -> str | None:
    """``template`` with each ``{{name}}`` filled from ``vars_`` (None: a placeholder ``vars_`` lacks)."""
    if any(m.group(1) not in vars_ for m in _PLACEHOLDER.finditer(template)):
        return None

    def fill(m: re.Match[str]) -> str:
        value = vars_[m.group(1)]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _PLACEHOLDER.sub(fill, template)


@dataclass
class _Prompts:
    """The templates a file lists, and the labels it does not list, for each result's prompt identity."""

    listed: list[dict[str, Any]]
    labels: dict[str, int] = field(default_factory=dict)

    def text(self, idx: int) -> str | None:
        entry = self.listed[idx] if 0 <= idx < len(self.listed) else {}
        for key in ("raw", "label", "display"):
            if isinstance(entry.get(key), str) and entry[key]:
                return str(entry[key])
        return None

    def _of(self, provider: str | None) -> list[int]:
        mine = [i for i, e in enumerate(self.listed) if e.get("provider") == provider]
        return mine or list(range(len(self.listed)))

    def resolve(
        self, r: dict[str, Any], provider: str | None, vars_: dict[str, Any], where: str
    ) -> tuple[int, str | None]:
        """The prompt's index and template (see the module docstring); never the rendered text."""
        prompt = r.get("prompt")
        fields = prompt if isinstance(prompt, dict) else {"raw": prompt}
        label = fields.get("label") or fields.get("display")
        idx = r.get("promptIdx")
        if isinstance(idx, int) and not isinstance(idx, bool):
            return idx, self.text(idx) or (str(label) if isinstance(label, str) and label else None)
        candidates = self._of(provider)
        if isinstance(label, str) and label:
            for i in candidates:
                if label in (self.listed[i].get(k) for k in ("label", "display", "raw")):
                    return i, self.text(i)
            return self.labels.setdefault(label, len(self.listed) + len(self.labels)), label
        raw = fields.get("raw")
        if not isinstance(raw, str):
            raise InputError(f"{where}: no prompt (neither promptIdx, prompt.label nor prompt.raw)")
        for i in candidates:
            template = self.text(i)
            rendered = None if template is None else _render(template, vars_)
            if rendered is not None and rendered.strip() == raw.strip():
                return i, template
        raise InputError(
            f"{where}: the prompt is only its rendered text and none of the file's {len(self.listed)} prompt "
            "template(s) (results.prompts, table.head.prompts) renders to it with the result's vars"
        )


def _prompts(summary: dict[str, Any]) -> _Prompts:
    head = _dict(_dict(summary.get("table")).get("head"))
    for listed in (summary.get("prompts"), head.get("prompts")):
        if isinstance(listed, list) and listed and all(isinstance(e, dict) for e in listed):
            return _Prompts(list(listed))
    return _Prompts([])


def _descriptions(summary: dict[str, Any]) -> dict[str, set[Any]]:
    """``table.body`` descriptions by the canonical JSON of the row's vars as a map (version 2)."""
    table = _dict(summary.get("table"))
    names, body = _dict(table.get("head")).get("vars"), table.get("body")
    if not isinstance(names, list) or not isinstance(body, list):
        return {}
    out: dict[str, set[Any]] = {}
    for row in body:
        values = row.get("vars") if isinstance(row, dict) else None
        if isinstance(values, list) and len(values) == len(names):
            key = canonical_json({str(n): v for n, v in zip(names, values, strict=True)})
            out.setdefault(key, set()).add(row.get("description"))
    return out


def _case(r: _Result) -> dict[str, Any] | None:
    """The row as a contract case for a regrade: the rendered prompt and the test's plain assertions."""
    if not r.rendered or not r.rendered.strip():
        return None
    case: dict[str, Any] = {"prompt": r.rendered}
    expect: dict[str, list[str]] = {}
    for a in typed(r.test, "assert", "list", r.where, field="testCase.assert") or []:
        if isinstance(a, dict) and isinstance(a.get("value"), str):
            if a.get("type") in _ASSERTS:
                expect.setdefault(_ASSERTS[str(a["type"])], []).append(a["value"])
            elif a.get("type") == "equals":
                case["reference"] = a["value"]
    if expect:
        case["expect"] = expect
    return case


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


def _error_kind(r: dict[str, Any], response: dict[str, Any], reason: Any) -> str:
    guardrails = _dict(response.get("guardrails"))
    return error_kind_of(reason, refused=response.get("isRefusal") is True or guardrails.get("flagged") is True)


def _json_result(r: Any, i: int, path: Path, prompts: _Prompts, descriptions: dict[str, set[Any]]) -> _Result:
    where = f"{path}: results[{i}]"
    if not isinstance(r, dict) or "success" not in r:
        raise InputError(f"{where}: not a promptfoo result (no 'success')")
    prov = r.get("provider")
    provider = (prov.get("id") or prov.get("label")) if isinstance(prov, dict) else prov
    provider = None if provider is None else str(provider)
    test = _dict(r.get("testCase"))
    vars_ = _dict(r.get("vars")) or _dict(test.get("vars"))
    if not test and len(descriptions.get(canonical_json(vars_), ())) == 1:
        test = {"description": next(iter(descriptions[canonical_json(vars_)]))}
    prompt_idx, template = prompts.resolve(r, provider, vars_, where)
    prompt = _dict(r.get("prompt"))
    raw = prompt.get("raw") if prompt else r.get("prompt")
    test_idx = r.get("testIdx") if isinstance(r.get("testIdx"), int) else None
    grading = _dict(r.get("gradingResult"))
    response = _dict(r.get("response"))
    usage = _dict(response.get("tokenUsage"))
    score = r.get("score")
    verdict = _verdict(r)
    reason = grading.get("reason") or r.get("error") or (response.get("error") if verdict == ERROR else None)
    return _Result(
        provider=provider,
        prompt=template,
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
        rendered=raw if isinstance(raw, str) else None,
        kind=_error_kind(r, response, response.get("error") or reason) if verdict == ERROR else None,
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
    prompts, descriptions = _prompts(summary), _descriptions(summary)
    results = [_json_result(r, i, path, prompts, descriptions) for i, r in enumerate(summary["results"])]
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
            kind = error_kind_of(reason) if verdict == ERROR else None
            test = {"vars": vars_}
            rendered = _render(raw, vars_)
            result = _Result(provider, raw, idx, None, test, verdict, where, score, reason, output, vars=vars_)
            result.rendered, result.kind = rendered, kind
            results.append(result)
    return results, {"results_version": "csv"}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "provider"


def _units(results: list[_Result], provider: str | None, csv_file: bool, path: Path) -> list[tuple[str | None, int]]:
    providers = list(dict.fromkeys(r.provider for r in results))  # in the file's order; prompts by index
    units = sorted(
        dict.fromkeys((r.provider, r.prompt_idx) for r in results), key=lambda u: (providers.index(u[0]), u[1])
    )
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
                    error_kind=r.kind,
                    fields=r.vars,
                    latency_ms=r.latency_ms,
                    cost=r.cost,
                    tokens_in=r.tokens[0],
                    tokens_out=r.tokens[1],
                    case=_case(r),
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
                prompt_sha256=None if prompt is None else hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
                identifiers={**ids, "provider": unit[0], "promptIdx": unit[1], "prompt": prompt},
                suffix=_suffix(unit, units),
            )
        )
    return runs
