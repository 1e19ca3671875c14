"""Rubrics in the three shapes they come in, normalized to :class:`goldenkit.records.Rubric`.

* ADK (``google.adk.evaluation.eval_rubrics.Rubric``): ``{"rubric_id", "rubric_content":
  {"text_property"}, "description"?, "type"?}`` (camelCase accepted), in an eval case's
  ``rubrics`` (whole conversation), an invocation's ``rubrics`` (that turn), or the
  ``rubrics`` of a rubric-based criterion (``rubric_based_final_response_quality_v1`` ...,
  in ``criteria`` / an eval config).
* Vertex (``vertexai._genai.types.Rubric``): ``rubric_groups: {name: {"group_id",
  "rubrics": [{"rubric_id", "content": {"property": {"description"}}, "importance"?}]}}``;
  a group may also be a bare list of rubrics (the FLATTEN column form).
* Contract: ``expect.rubrics: [{"id", "text"}]`` (a bare string is a rubric whose id is
  its position, ``r1``, ``r2``, ...).

A rubric without text is a case error (there is nothing to judge).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from goldenkit.formats._common import case_error, get
from goldenkit.records import Rubric

__all__ = ["RUBRIC_METRICS", "adk_rubrics", "contract_rubrics", "criteria_rubrics", "vertex_rubrics"]

#: ADK criteria whose ``rubrics`` the rubric grader judges.
RUBRIC_METRICS = (
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1",
)


def _items(value: Any, rid: str | None, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise case_error(rid, f"{field} must be a list of rubrics")
    return value


def adk_rubrics(
    value: Any, rid: str | None, field: str, *, turn: int | None = None, source: str = "adk"
) -> list[Rubric]:
    """ADK ``Rubric`` objects (see the module doc)."""
    out = []
    for i, item in enumerate(_items(value, rid, field)):
        where = f"{field}[{i}]"
        if not isinstance(item, Mapping):
            raise case_error(rid, f"{where} must be an object")
        content = get(item, "rubric_content")
        text = get(content, "text_property") if isinstance(content, Mapping) else None
        if not isinstance(text, str) or not text.strip():
            raise case_error(rid, f"{where} has no rubric_content.text_property")
        desc = get(item, "description")
        if isinstance(desc, str) and desc.strip():
            text = f"{text}\n({desc.strip()})"
        rubric_id = get(item, "rubric_id")
        out.append(
            Rubric(id=str(rubric_id) if rubric_id is not None else f"r{i + 1}", text=text, turn=turn, source=source)
        )
    return out


def criteria_rubrics(criteria: Mapping[str, Any], rid: str | None) -> list[Rubric]:
    """The rubrics of the rubric-based metrics among ADK ``criteria``."""
    out = []
    for metric in RUBRIC_METRICS:
        crit = criteria.get(metric)
        if isinstance(crit, Mapping) and get(crit, "rubrics") is not None:
            out += adk_rubrics(get(crit, "rubrics"), rid, f"criteria.{metric}.rubrics", source=f"adk:{metric}")
    return out


def vertex_rubrics(groups: Any, rid: str | None) -> list[Rubric]:
    """Vertex ``rubric_groups`` (see the module doc)."""
    if groups is None:
        return []
    if not isinstance(groups, Mapping):
        raise case_error(rid, "rubric_groups must be an object of rubric groups")
    out = []
    for name, group in groups.items():
        field = f"rubric_groups.{name}"
        items = get(group, "rubrics") if isinstance(group, Mapping) else group
        for i, item in enumerate(_items(items, rid, f"{field}.rubrics")):
            where = f"{field}.rubrics[{i}]"
            if not isinstance(item, Mapping):
                raise case_error(rid, f"{where} must be an object")
            content = get(item, "content")
            prop = get(content, "property") if isinstance(content, Mapping) else None
            text = get(prop, "description") if isinstance(prop, Mapping) else None
            if not isinstance(text, str) or not text.strip():
                raise case_error(rid, f"{where} has no content.property.description")
            rubric_id = get(item, "rubric_id")
            out.append(
                Rubric(
                    id=str(rubric_id) if rubric_id is not None else f"{name}.{i + 1}",
                    text=text,
                    source=f"vertex:{name}",
                )
            )
    return out


def contract_rubrics(value: Any, rid: str | None, field: str = "expect.rubrics") -> list[Rubric]:
    """Contract ``expect.rubrics`` (see the module doc)."""
    out = []
    for i, item in enumerate(_items(value, rid, field)):
        if isinstance(item, str):
            item = {"id": f"r{i + 1}", "text": item}
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise case_error(rid, f'{field}[{i}] must be {{"id", "text"}} with a non-empty text')
        out.append(Rubric(id=str(item.get("id", f"r{i + 1}")), text=item["text"], source="contract"))
    ids = [r.id for r in out]
    dupes = sorted({x for x in ids if ids.count(x) > 1})
    if dupes:
        raise case_error(rid, f"{field} names rubric {dupes[0]!r} twice")
    return out
