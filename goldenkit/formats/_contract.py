"""The contract (golden-style) case shape, and java-ai-golden JSONL files.

A contract case is a dict::

    {"prompt": "...",                      # or "turns": ["first user msg", ...]
     "system": "...", "history": [{"role": "user", "content": "..."}],
     "tools": [{"name": ..., "description": ..., "parameters": {...}}],
     "tool_responses": [{"name": ..., "args": {...}, "response": ...}],
     "reference": "...",
     "expect": {"must_contain": [...], "must_contain_any": [...], "must_not": [...],
                "regex": [...], "regex_not": [...], "refusal": bool, "exact": ..., "normalized": ...,
                "json": {...}, "number": {...}, "tools": [{"name", "args"}],
                "tool_match": ..., "tool_args": ..., "tool_before_text": [...]},
     "must_not": [...]}                    # merged into expect.must_not

or, for a conversation a user simulator drives (instead of ``prompt`` / ``turns``)::

    {"scenario": {"starting_prompt": "...", "plan": "...", "max_turns"?: 4, "stop"?: "..."},
     "expect": {..., "every_turn"?: {...}}}   # every_turn: checks on every agent turn

How it maps onto :class:`goldenkit.records.Case`:

* ``turns`` items are strings, or objects ``{"user": ..., "reference"?: ..., "tools"?: [...]}``
  that carry a per-turn expected answer and tool calls. Checks on a turn object
  (``must_contain``, ``regex``, ..., or an ``expect`` object of its own) go to
  ``expect.turns[i]``, so they are graded for that turn.
* ``expect.tools`` is the expected trajectory of the whole case. In a single-turn
  case it is also that turn's ``expected_tools``; in a multi-turn case it stays
  case-level (``Case.expect["tools"]``, matched against all turns' calls in order).
* ``expect.turns`` is a list of per-turn expectations (each one an ``expect``
  object, normalized the same way). Its ``tools`` / ``reference`` set that turn's
  expected tools / response, and tools given on a turn object are copied into
  ``expect.turns[i].tools``, so a grader reading either place sees the same.
* ``images`` (a list of URLs, data URIs or ``{"mime_type", "data": base64}`` /
  ``{"mime_type"?, "url"}`` objects) go with the prompt; a turn object or a
  ``history`` message carries its own ``images`` the same way
  (:class:`goldenkit.records.ImagePart`).
* ``tool_responses`` are recorded answers keyed by (name, args), available to
  every turn, so each turn carries the whole list.
* ``reference`` (or ``expect.reference``) is ``Case.reference`` and the last
  turn's expected response.
* ``expect`` is normalized: the java-ai-golden aliases ``contains`` ->
  ``must_contain`` and ``refuse`` -> ``refusal`` are folded in, ``adversarial``
  -> ``red``, and a top-level ``must_not`` is merged into ``expect.must_not``
  (order kept, duplicates dropped). java-ai-golden's labels (``layer``, ``class``,
  ``status``) are kept as they are.
* A key of ``expect`` (``expect.turns[i]``, ``expect.every_turn``, a turn object's checks) outside
  :data:`EXPECT_KEYS` is a case error naming the closest known key (``expect.nubmer: unknown key (did
  you mean number?)``). Data for a grader of your own goes beside ``expect`` (``Case.raw``).

java-ai-golden rows (``{id, prompt, expect{layer, class, status, rag, contains,
refuse, red|adversarial}, must_not}``) are contract cases as they stand, so
:func:`read_golden` keeps each row whole as its case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit._text import did_you_mean
from goldenkit.errors import DatasetError
from goldenkit.formats._common import (
    case_error,
    contract_images,
    decode_text,
    json_object_line,
)
from goldenkit.formats._contract_fields import (
    MAPPING,
    history_messages,
    merge_new,
    opt_str,
    read_turn,
    replace_turn,
    str_list,
    tool_list,
    tool_responses,
)
from goldenkit.formats._rubrics import contract_rubrics
from goldenkit.formats._scenario import read_scenario
from goldenkit.records import Case, ToolCall, Turn

#: expect keys holding a list of strings (a single string is accepted as a one-item list).
_LIST_KEYS = ("must_contain", "must_contain_any", "must_not", "regex", "regex_not")
_ALIASES = {"contains": "must_contain", "refuse": "refusal", "adversarial": "red"}
_TOOL_MATCH = ("EXACT", "IN_ORDER", "ANY_ORDER", "F1", "ALIGN")
#: Every key an ``expect`` object may hold: what the graders read (contract, trajectory, reference,
#: retrieval, rubrics, state), the case's grader selection and red flag, the golden aliases, and
#: java-ai-golden's own labels (kept as they are).
EXPECT_KEYS = frozenset(
    "must_contain must_contain_any must_not regex regex_not refusal exact normalized json number ignore_case turns"
    " every_turn tools tool_match tool_args tool_threshold tool_before_text reference retrieval rag rubrics"
    " rubric_threshold final_state graders red layer class status".split()
).union(_ALIASES)
_TOOL_ARGS = ("exact", "subset", "ignore")


def is_contract(raw: Mapping[str, Any]) -> bool:
    """Whether a dict looks like a contract case (has contract-only keys)."""
    return any(k in raw for k in ("expect", "must_not", "turns", "tool_responses", "system", "original", "scenario"))


def normalize_expect(raw: Mapping[str, Any], *, row_id: str | None, unknown: list[str] | None = None) -> dict[str, Any]:
    """The case's ``expect`` with aliases folded in and top-level ``must_not`` merged.

    A key outside :data:`EXPECT_KEYS` is a case error naming it; given an ``unknown`` list, each such
    problem is appended to it instead and the key left out (``goldenkit dataset validate`` lists them all).
    """
    expect_in = raw.get("expect")
    if expect_in is None:
        expect_in = {}
    if not isinstance(expect_in, MAPPING):
        raise case_error(row_id, f"expect must be an object, got {type(expect_in).__name__}")
    expect: dict[str, Any] = {}
    _check_keys(expect_in, "expect", row_id, unknown)
    for key, value in expect_in.items():
        if str(key) not in EXPECT_KEYS:
            continue
        target: str = _ALIASES.get(str(key), str(key))
        if target in _LIST_KEYS:
            items = str_list(value, row_id=row_id, field=f"expect.{key}")
            expect[target] = merge_new(expect[target], items) if target in expect else list(dict.fromkeys(items))
        elif target in ("refusal", "red"):
            if value is None:
                continue
            if not isinstance(value, bool):
                raise case_error(row_id, f"expect.{key} must be true or false, got {value!r}")
            if target in expect and expect[target] != value:
                raise case_error(row_id, f"expect.{key} contradicts another spelling of the same flag")
            expect[target] = value
        else:
            expect[target] = value
    if "must_not" in raw and raw["must_not"] is not None:
        top = str_list(raw["must_not"], row_id=row_id, field="must_not")
        expect["must_not"] = merge_new(expect.get("must_not", []), top)
    for key in ("must_contain", "must_contain_any", "must_not", "regex", "regex_not"):
        if key in expect and not expect[key]:
            del expect[key]
    for key in ("regex", "regex_not"):
        for pattern in expect.get(key, []):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise case_error(row_id, f"expect.{key} pattern {pattern!r} does not compile: {exc}") from None
    if expect.get("turns") is not None:
        expect["turns"] = _per_turn_expect_list(expect["turns"], row_id, unknown)
    if isinstance(expect.get("every_turn"), MAPPING):
        _check_keys(expect["every_turn"], "expect.every_turn", row_id, unknown)
    if "tools" in expect:
        calls = tool_list(expect["tools"], row_id=row_id, field="expect.tools")
        expect["tools"] = [c.to_dict() for c in calls]
    if "tool_match" in expect:
        tm = expect["tool_match"]
        norm = tm.upper().replace("-", "_").replace(" ", "_") if isinstance(tm, str) else tm
        if norm not in _TOOL_MATCH:
            raise case_error(row_id, f"expect.tool_match must be one of {', '.join(_TOOL_MATCH)}, got {tm!r}")
        expect["tool_match"] = norm
    if "tool_args" in expect and not isinstance(expect["tool_args"], MAPPING) and expect["tool_args"] not in _TOOL_ARGS:
        raise case_error(
            row_id,
            f"expect.tool_args must be one of {', '.join(_TOOL_ARGS)} or a table of argument policies, "
            f"got {expect['tool_args']!r}",
        )
    for key in ("exact", "normalized"):
        if key in expect and not isinstance(expect[key], str):
            raise case_error(row_id, f"expect.{key} must be a string")
    return expect


def _check_keys(obj: Mapping[str, Any], where: str, row_id: str | None, unknown: list[str] | None) -> None:
    """Each key of an expect object ``obj`` that no grader reads is a problem naming it and the closest
    known key: raised, or appended to ``unknown``."""
    for key in obj:
        if str(key) not in EXPECT_KEYS:
            hint = did_you_mean(str(key), EXPECT_KEYS) or f" (known: {', '.join(sorted(EXPECT_KEYS))})"
            if unknown is None:
                raise case_error(row_id, f"{where}.{key}: unknown key{hint}")
            unknown.append(f"{where}.{key}: unknown key{hint}")


def _per_turn_expect_list(per_turn: Any, row_id: str | None, unknown: list[str] | None) -> list[dict[str, Any]]:
    """``expect.turns``: one expect object (or null) per user turn, each normalized."""
    if not isinstance(per_turn, list):
        raise case_error(row_id, "expect.turns must be a list of per-turn expectations")
    normalized: list[dict[str, Any]] = []
    for i, entry in enumerate(per_turn):
        if entry is not None and not isinstance(entry, MAPPING):
            raise case_error(row_id, f"expect.turns[{i}] must be an object")
        if entry is not None and "turns" in entry:
            raise case_error(row_id, f"expect.turns[{i}] cannot hold turns of its own")
        normalized.append({} if entry is None else _nested_expect(entry, f"expect.turns[{i}]", row_id, unknown))
    return normalized


def _nested_expect(
    entry: Mapping[str, Any], where: str, row_id: str | None, unknown: list[str] | None
) -> dict[str, Any]:
    """An expect object inside the case (``expect.turns[i]``, a turn object's checks), normalized;
    its problems are prefixed with ``where``."""
    own: list[str] | None = None if unknown is None else []
    try:
        checks = normalize_expect({"expect": entry}, row_id=None, unknown=own)
    except DatasetError as exc:
        raise case_error(row_id, f"{where}: {exc.detail}") from None
    if unknown is not None and own:
        unknown.extend(f"{where}: {p}" for p in own)
    return checks


def normalize_contract(raw: Mapping[str, Any], row_id: str | None = None, *, unknown: list[str] | None = None) -> Case:
    """Normalize a contract case (see the module docstring; ``unknown`` as in :func:`normalize_expect`)."""
    case_id = row_id or opt_str(raw, "id", row_id) or ""
    rid = case_id or None
    expect = normalize_expect(raw, row_id=rid, unknown=unknown)

    reference = opt_str(raw, "reference", rid)
    if reference is None and isinstance(expect.get("reference"), str):
        reference = expect["reference"]

    responses = tuple(tool_responses(raw.get("tool_responses"), row_id=rid))
    case_tools = [ToolCall(name=t["name"], args=t["args"]) for t in expect.get("tools", [])]

    turns: list[Turn] = []
    simulated = None
    if raw.get("scenario") is not None:
        simulated = read_scenario(raw["scenario"], rid, "scenario")
        if raw.get("prompt") is not None or raw.get("turns") is not None:
            raise case_error(rid, "a scenario case starts from scenario.starting_prompt: give no prompt or turns")
        turns.append(Turn(user=simulated.starting_prompt, tool_responses=responses))
    elif raw.get("turns") is not None:
        items = raw["turns"]
        if not isinstance(items, list) or not items:
            raise case_error(rid, "turns must be a non-empty list of user messages")
        for i, item in enumerate(items):
            turns.append(read_turn(item, i, rid, responses))
        if raw.get("prompt") is not None:
            raise case_error(rid, "give either prompt or turns, not both")
        if raw.get("images") is not None:
            raise case_error(rid, "a case with turns gives its images on the turn objects (turns[i].images)")
    else:
        prompt = raw.get("prompt")
        if not isinstance(prompt, str):
            if prompt is None:
                raise case_error(rid, "contract case has no prompt (and no turns)")
            raise case_error(rid, f"prompt must be a string, got {type(prompt).__name__}")
        turns.append(Turn(user=prompt, tool_responses=responses, images=contract_images(raw.get("images"), row_id=rid)))

    _turn_object_checks(raw.get("turns"), expect, rid, unknown)
    _per_turn_expect(expect, turns, rid)
    if len(turns) == 1 and case_tools and not turns[0].expected_tools:
        turns[0] = replace_turn(turns[0], expected_tools=tuple(case_tools))
    if reference is not None and turns[-1].expected_response is None:
        turns[-1] = replace_turn(turns[-1], expected_response=reference)
    if reference is None:
        reference = turns[-1].expected_response

    history = history_messages(raw.get("history"), row_id=rid)
    tools = raw.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, MAPPING) and isinstance(t.get("name"), str) for t in tools):
        raise case_error(rid, "tools must be a list of objects with a name")
    criteria = raw.get("criteria") or {}
    if not isinstance(criteria, MAPPING):
        raise case_error(rid, "criteria must be an object")
    session = raw.get("session")
    if session is not None and not isinstance(session, MAPPING):
        raise case_error(rid, "session must be an object")
    return Case(
        id=case_id,
        shape="contract",
        turns=tuple(turns),
        system=opt_str(raw, "system", rid),
        history=tuple(history),
        tools=tuple(dict(t) for t in tools),
        reference=reference,
        expect=expect,
        criteria=dict(criteria),
        session=dict(session) if session is not None else None,
        rubrics=tuple(contract_rubrics(expect.get("rubrics"), rid)),
        final_state=_final_state(expect, rid),
        raw=dict(raw),
        scenario=simulated,
    )


def _final_state(expect: Mapping[str, Any], rid: str | None) -> dict[str, Any] | None:
    state = expect.get("final_state")
    if state is not None and not isinstance(state, MAPPING):
        raise case_error(rid, "expect.final_state must be an object")
    return dict(state) if state else None


def read_golden(path: Path, data: bytes) -> list[tuple[str, dict[str, Any], int]]:
    """Rows of a java-ai-golden JSONL file as ``(id, row, line)``.

    Blank lines and lines starting with ``#`` are skipped (as ``GoldenReader``
    does); every other line must be a JSON object with a non-blank string
    ``id``, unique in the file. The row is kept whole: it already is a contract
    case (with the golden aliases, which :func:`normalize_expect` folds in).
    """
    text = decode_text(data, path.name)
    out: list[tuple[str, dict[str, Any], int]] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        row = json_object_line(stripped, where=path.name, lineno=lineno, what="a golden row")
        rid = row.get("id")
        if not isinstance(rid, str) or not rid.strip():
            raise DatasetError("golden row has no id (a non-blank string is required)", path=path.name, line=lineno)
        if rid in seen:
            raise DatasetError(f'duplicate id "{rid}" (first on line {seen[rid]})', path=path.name, line=lineno)
        seen[rid] = lineno
        out.append((rid, row, lineno))
    if not out:
        raise DatasetError("no golden rows (only comments or blank lines)", path=path.name)
    return out


def read_golden_manifest(path: Path) -> dict[str, Any] | None:
    """The java-ai-golden ``dataset.json`` beside a golden file, if there is one."""
    manifest = path.parent / "dataset.json"
    if not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DatasetError(f"manifest beside the golden file does not parse: {exc}", path=manifest.name) from None
    if not isinstance(data, dict):
        raise DatasetError("manifest must be a JSON object", path=manifest.name)
    return data


# --- helpers -------------------------------------------------------------------------------------


#: keys of a turn object that are not checks of that turn's answer
_TURN_KEYS = {
    "user",
    "prompt",
    "content",
    "reference",
    "expected_response",
    "tools",
    "tool_responses",
    "expect",
    "images",
}


def _turn_object_checks(items: Any, expect: dict[str, Any], rid: str | None, unknown: list[str] | None) -> None:
    """Checks written on a turn object (``{"user", "must_contain", ...}`` or its ``expect``)
    merged into ``expect.turns[i]``, so they are graded for that turn; a check given in
    both places with different values is a case error."""
    if not isinstance(items, list):
        return
    per_turn: list[Any] = list(expect.get("turns") or [])
    for i, item in enumerate(items):
        if not isinstance(item, MAPPING):
            continue
        own = dict(item["expect"]) if isinstance(item.get("expect"), MAPPING) else {}
        own.update({k: v for k, v in item.items() if k not in _TURN_KEYS})
        if not own:
            continue
        checks = _nested_expect(own, f"turns[{i}]", rid, unknown)
        while len(per_turn) <= i:
            per_turn.append({})
        entry = dict(per_turn[i] or {})
        for key, value in checks.items():
            if key in entry and entry[key] != value:
                raise case_error(rid, f"turns[{i}].{key} contradicts expect.turns[{i}].{key}")
            entry[key] = value
        per_turn[i] = entry
    if per_turn:
        expect["turns"] = [e if e is not None else {} for e in per_turn]


def _per_turn_expect(expect: dict[str, Any], turns: list[Turn], rid: str | None) -> None:
    """Line up ``expect.turns`` (per-turn expectations) with the turns, both ways.

    ``expect.turns[i].tools`` / ``.reference`` become turn i's expected tools /
    response, and tools given on a turn object (``turns[i].tools``) are copied
    into ``expect.turns[i].tools``, so graders reading either place agree.
    """
    per_turn = expect.get("turns")
    if per_turn is not None and len(per_turn) > len(turns):
        raise case_error(rid, f"expect.turns has {len(per_turn)} entries but the case has {len(turns)} turns")
    mirrored = [dict(e) for e in per_turn] if per_turn is not None else []
    for i, turn in enumerate(turns):
        entry = mirrored[i] if i < len(mirrored) else None
        if entry is not None:
            if entry.get("tools") and not turn.expected_tools:
                calls = tuple(ToolCall(name=t["name"], args=t["args"]) for t in entry["tools"])
                turn = replace_turn(turn, expected_tools=calls)
            ref = entry.get("reference")
            if isinstance(ref, str) and turn.expected_response is None:
                turn = replace_turn(turn, expected_response=ref)
            turns[i] = turn
        if turn.expected_tools and not (entry or {}).get("tools"):
            while len(mirrored) <= i:
                mirrored.append({})
            mirrored[i]["tools"] = [c.to_dict() for c in turn.expected_tools]
    if mirrored:
        expect["turns"] = mirrored


__all__ = [
    "EXPECT_KEYS",
    "is_contract",
    "normalize_contract",
    "normalize_expect",
    "read_golden",
    "read_golden_manifest",
]
