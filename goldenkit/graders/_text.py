"""Small text helpers shared by the graders: quoting, shortening, normalizing."""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["as_list", "context", "normalize_text", "quote"]


def quote(text: str, limit: int = 60) -> str:
    """``text`` in double quotes, shortened to about ``limit`` characters, on one line."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        head = max(limit - 1, 1)
        flat = flat[:head].rstrip() + "…"
    return '"' + flat.replace('"', '\\"') + '"'


def context(text: str, start: int, end: int, width: int = 30) -> str:
    """The text around ``text[start:end]``, quoted, with ``...`` where it was cut."""
    lo = max(0, start - width)
    hi = min(len(text), end + width)
    snippet = " ".join(text[lo:hi].split())
    prefix = "..." if lo > 0 else ""
    suffix = "..." if hi < len(text) else ""
    return '"' + prefix + snippet.replace('"', '\\"') + suffix + '"'


def normalize_text(text: str) -> str:
    """Unicode NFKC, case-folded, punctuation removed, whitespace collapsed.

    Punctuation is every character whose Unicode category starts with ``P``
    (so ``!``, ``«``, ``—`` and ``¿`` all go, and ``don't`` becomes ``dont``);
    symbols stay (``$``, ``+``).
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    return " ".join(text.split())


def as_list(value: Any) -> list[Any]:
    """``None`` → ``[]``, a scalar → ``[scalar]``, a list or tuple → a list."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]
