"""Detect a case's shape and normalize it to :class:`goldenkit.records.Case`.

Shapes (``goldenkit.records.CASE_SHAPES``): ``adk`` (an ADK EvalCase),
``vertex`` (a Vertex GenAI eval case or DataFrame row) and ``contract`` (the
golden-style contract case; also what the openai-evals and inspect importers
write). Detection looks at keys only, in this order:

1. adk: ``eval_id``, ``conversation`` or ``conversation_scenario`` (either casing);
2. contract: ``expect``, ``must_not``, ``turns``, ``tool_responses``, ``system`` or ``original``;
3. vertex: ``agent_data``, ``response(s)``, ``reference_trajectory``,
   ``conversation_history``, ``system_instruction``, ``instruction``,
   ``intermediate_events``, ``eval_case_id``, ``request``, ``rubric_groups``,
   ``user_scenario``, ``source``, or a Content-dict ``prompt`` / ``reference``;
4. contract, when there is a string ``prompt`` (``{"prompt", "reference"}`` reads the same either way).

A declared shape (the dataset's ``case_format``) skips detection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldenkit._registry import publish
from goldenkit.formats._adk import is_adk, normalize_adk
from goldenkit.formats._common import case_error
from goldenkit.formats._contract import is_contract, normalize_contract
from goldenkit.formats._vertex import is_vertex, normalize_vertex
from goldenkit.records import CASE_SHAPES, Case

_NORMALIZERS = {"adk": normalize_adk, "vertex": normalize_vertex, "contract": normalize_contract}


def detect_shape(raw: Mapping[str, Any], row_id: str | None = None) -> str:
    """The shape of a raw case dict: ``"adk"``, ``"vertex"`` or ``"contract"``.

    Raises :class:`~goldenkit.errors.DatasetError` when no shape fits.
    """
    if not isinstance(raw, Mapping):
        raise case_error(row_id, f"a case must be a JSON object, got {type(raw).__name__}")
    if is_adk(raw):
        return "adk"
    if is_contract(raw):
        return "contract"
    if is_vertex(raw):
        return "vertex"
    if isinstance(raw.get("prompt"), str):
        return "contract"
    keys = ", ".join(sorted(map(str, raw))[:8]) or "no keys"
    raise case_error(
        row_id,
        f"unrecognized case shape (keys: {keys}); expected an ADK eval case (eval_id, conversation), "
        "a Vertex eval case (prompt, reference, agent_data, ...) or a contract case (prompt or turns, expect)",
    )


def normalize_case(
    raw: Mapping[str, Any], shape: str | None = None, row_id: str | None = None, *, unknown: list[str] | None = None
) -> Case:
    """Normalize a raw case dict of any supported shape to a :class:`~goldenkit.records.Case`.

    ``shape`` is the declared shape (``"adk"``, ``"vertex"``, ``"contract"``), or
    None to detect it. ``row_id`` becomes ``Case.id`` (otherwise the case's own
    id: ``eval_id``, ``eval_case_id``, ``id``) and is named in error messages.
    Malformed cases raise :class:`~goldenkit.errors.DatasetError`; the dataset
    layer adds file:line. ``Case.raw`` keeps the dict whole. A contract case's unknown ``expect`` keys
    are such an error too, unless ``unknown`` is a list: then each is appended to it
    (:func:`goldenkit.formats._contract.normalize_expect`).
    """
    if not isinstance(raw, Mapping):
        raise case_error(row_id, f"a case must be a JSON object, got {type(raw).__name__}")
    if shape is None:
        shape = detect_shape(raw, row_id)
    elif shape not in _NORMALIZERS:
        raise case_error(row_id, f"unknown case shape {shape!r} (expected one of {', '.join(CASE_SHAPES)})")
    if shape == "contract":
        return normalize_contract(raw, row_id, unknown=unknown)
    return _NORMALIZERS[shape](raw, row_id)


__all__ = ["detect_shape", "normalize_case"]

publish(globals())
