"""Text helpers shared by every layer's one-line messages and tables: shortening, and the did-you-mean hint."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from goldenkit._scrub import scrub


def one_line(text: Any, limit: int = 300) -> str:
    """``text`` with its whitespace collapsed to single spaces, secrets masked (an excerpt is text for
    people: :func:`goldenkit._scrub.scrub`, before it is cut), cut to ``limit`` characters (ending in
    ``...`` when cut); None is the empty string."""
    flat = "" if text is None else scrub(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` naming the closest of ``known`` to a misspelled ``name``, or ``""`` when none
    is close (:func:`difflib.get_close_matches`, its default cutoff of 0.6).

    >>> did_you_mean("nubmer", ["number", "regex"]), did_you_mean("refnuds", ["refunds", "shipping"])
    (' (did you mean number?)', ' (did you mean refunds?)')
    >>> did_you_mean("zzz", ["number"])
    ''
    """
    close = difflib.get_close_matches(name, sorted(set(known)), n=1)
    return f" (did you mean {close[0]}?)" if close else ""
