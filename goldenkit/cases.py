"""The one internal case model every dataset shape normalizes to (defined in :mod:`goldenkit.records`).

This module keeps the old import location: ``from goldenkit.cases import Case`` works as before.
"""

from __future__ import annotations

from goldenkit.records import CASE_SHAPES, Case, ImagePart, Message, Rubric, ToolCall, ToolResponse, Turn

__all__ = ["CASE_SHAPES", "Case", "ImagePart", "Message", "Rubric", "ToolCall", "ToolResponse", "Turn"]
