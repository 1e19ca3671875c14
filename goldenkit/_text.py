"""Text shortening shared by every layer's one-line messages and tables."""

from __future__ import annotations

from typing import Any


def one_line(text: Any, limit: int = 300) -> str:
    """``text`` with its whitespace collapsed to single spaces, cut to ``limit`` characters
    (ending in ``...`` when cut); None is the empty string."""
    flat = "" if text is None else " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
