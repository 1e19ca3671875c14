"""The scrubber's URL search finds the URLs the regular expression of the rule finds (it is linear; the
expression took 0.45 s over a report page's inline CSS: benchmarks measure that, tests do not)."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from goldenkit import _scrub as scrub_mod
from goldenkit._scrub import redact_text

# the rule, as it was written: every leftmost match of this pattern is a URL (re.sub's order)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")


def reference(text: str) -> str:
    return URL.sub(lambda m: scrub_mod._redact_url(m.group(0)), text)


ALPHABET = "ab9+.-:/@?=&_ \n\"'<>x%"
PIECES = ["://", "http", "https://", "u:pw@", "?api_key=k3y", "&token=ab12cd34", "9", "a.b", " ", "<", ":", "/"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.text(ALPHABET, max_size=4)), max_size=16).map("".join))
def test_redact_text_finds_the_urls_the_pattern_finds(text: str) -> None:
    assert redact_text(text) == reference(text)


def test_examples() -> None:
    assert redact_text("see https://u:pw@host/v1?api_key=abc&x=1 now") == "see https://***@host/v1?api_key=***&x=1 now"
    assert redact_text("9http://u:pw@h") == "9http://***@h"  # the scheme starts at its first letter
    assert redact_text("1://a://u:pw@h") == "1://a://***@h" == reference("1://a://u:pw@h")
    assert redact_text("x:// y") == "x:// y" and redact_text("no url") == "no url"
