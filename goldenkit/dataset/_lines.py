"""The lines of a dataset.jsonl and its canonical content hash.

The hash is the rule of DESIGN.md, spelled out in :func:`canonical_sha256`:
split the file's bytes on LF only (never ``str.splitlines()``, which also
breaks on U+2028, U+2029 and U+0085 that JSON writers leave raw inside
strings); strip ASCII whitespace (space, tab, CR, LF, VT, FF) from both ends of
each line; drop empty lines; sort the lines by their UTF-8 bytes; feed each line
followed by ``\\n`` to SHA-256.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from goldenkit._registry import publish

ASCII_WHITESPACE = b" \t\n\x0b\x0c\r"


@dataclass(frozen=True)
class Lines:
    """The non-empty lines of a file, stripped, with their 1-based physical line numbers."""

    texts: list[bytes]
    numbers: list[int]


def split_lines(data: bytes) -> Lines:
    """Split on LF, strip ASCII whitespace from both ends, keep the non-empty lines.

    >>> split_lines(b' a \\r\\n\\n\\tb').texts, split_lines(b' a \\r\\n\\n\\tb').numbers
    ([b'a', b'b'], [1, 3])
    """
    texts: list[bytes] = []
    numbers: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        text = line.strip(ASCII_WHITESPACE)
        if text:
            texts.append(text)
            numbers.append(number)
    return Lines(texts, numbers)


def sha256_of_lines(lines: Iterable[bytes]) -> str:
    """SHA-256 of the (stripped, non-empty) lines in byte order, each followed by LF."""
    digest = hashlib.sha256()
    for line in sorted(lines):
        digest.update(line)
        digest.update(b"\n")
    return digest.hexdigest()


def canonical_sha256(data: bytes) -> str:
    """The canonical content hash of a JSONL file's bytes (the rule of this module's docstring).

    Reordering rows, CRLF line ends and blank lines keep the hash; editing a row changes it.

    >>> canonical_sha256(b'{"b":1}\\r\\n{"a":2}\\n\\n') == canonical_sha256(b'{"a":2}\\n{"b":1}')
    True
    """
    return sha256_of_lines(split_lines(bytes(data)).texts)


publish(globals())
