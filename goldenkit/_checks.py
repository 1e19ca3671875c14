"""Checks every layer applies to a value before it is used, each rule in one function.

=====================  ===================================================================
:func:`unit_threshold`  a probability-like threshold (a grader's ``threshold``, a criterion's):
                        a number, finite, in [0, 1]; a boolean, a string, NaN, Infinity, 5 or
                        -1 is refused (it would make a verdict impossible or automatic)
:func:`check_name`      a name that becomes one file or folder name (a dataset version, a
                        baseline name): one path component of safe characters, in its folder
:func:`check_output`    a path a command writes to: no control character, and every folder
                        above it is a folder (not a file)
:func:`is_reserved_slice`  a slice spelled like goldenkit's own rows, ``(overall)``: refused
=====================  ===================================================================

Each raises a one-line :class:`~goldenkit.errors.InputError` (or ``ConfigError`` for settings)
naming where the value came from, before anything touches the file system.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from goldenkit._scrub import PREFIXED_KEY
from goldenkit.errors import ConfigError, GoldenkitError, InputError

__all__ = [
    "check_env_name",
    "check_name",
    "check_output",
    "is_reserved_slice",
    "looks_like_key",
    "unit_threshold",
]

#: The longest name (well under the 255 bytes of most file systems, with room for a suffix).
NAME_LENGTH = 128
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_SEPARATORS = ("/", "\\")


def unit_threshold(value: Any, where: str) -> float:
    """``value`` as a float when it is a finite number in [0, 1]; else a ConfigError naming ``where``.

    >>> unit_threshold(0.8, "graders.reference.threshold"), unit_threshold(1, "t")
    (0.8, 1.0)
    >>> unit_threshold(float("nan"), "graders.reference.threshold")
    Traceback (most recent call last):
    ...
    goldenkit.errors.ConfigError: graders.reference.threshold must be a finite number in [0, 1], got nan
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where} must be a finite number in [0, 1], got {value!r}")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ConfigError(f"{where} must be a finite number in [0, 1], got {value!r}")
    return number


def _unprintable(text: str) -> str | None:
    """The first control or invisible formatting character of ``text`` as its code point (``U+000A`` for a
    newline), or None."""
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            return f"U+{ord(ch):04X}"
    return None


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be one file or folder name inside its folder (the rule of :func:`check_name`),
    or None when it can.

    >>> name_problem("main"), name_problem("main\\n")
    (None, 'contains a control character (U+000A)')
    """
    if not value:
        return "is empty"
    sep = next((s for s in _SEPARATORS if s in value), None)
    if sep is not None:
        return f"contains a path separator ({sep!r}); a name is one file name"
    bad = _unprintable(value)
    if bad is not None:
        return f"contains a control character ({bad})"
    if len(value) > NAME_LENGTH:
        return f"is longer than {NAME_LENGTH} characters"
    if not _NAME.fullmatch(value):
        return "is not a name: use letters, digits, '.', '_', '+' and '-' (starting with a letter or digit)"
    return None


def check_name(value: Any, what: str) -> str:
    """``value`` when it can be one file or folder name inside its folder; else an InputError naming ``what``.

    A name is one path component: a non-empty string of letters, digits, ``.``, ``_``, ``+`` and
    ``-`` that starts with a letter or digit (so never ``.``, ``..`` or a hidden file), at most 128
    characters. A path separator (``/``, ``\\``) and a control or invisible character (``main\\n``)
    get a message of their own (:func:`name_problem`, the one rule).

    >>> check_name("2026.11.0", "dataset version")
    '2026.11.0'
    >>> check_name("../main", "baseline name")
    Traceback (most recent call last):
    ...
    goldenkit.errors.InputError: baseline name '../main' contains a path separator ('/'); a name is one file name
    """
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be a non-empty string, got {value!r}")
    problem = name_problem(value)
    if problem is not None:
        shown = f"{value[:40]!r}..." if len(value) > NAME_LENGTH else repr(value)
        raise InputError(f"{what} {shown} {problem}")
    return value


def is_reserved_slice(name: str) -> bool:
    """Whether a slice is spelled like a row goldenkit adds to its tables: in parentheses (``(overall)``,
    ``(all)``, ``(none)``, ``(untagged)``), spaces around it ignored. A slice so named would be read as
    one of them, so every name in parentheses is reserved.

    >>> is_reserved_slice("(overall)"), is_reserved_slice("refunds (EU)")
    (True, False)
    """
    text = name.strip()
    return text.startswith("(") and text.endswith(")")


def check_output(path: str | os.PathLike[str], what: str, *, folder: bool | None = None) -> Path:
    """``path`` when a command can write there: no control character in it, not empty, and every
    existing folder above it a folder (not a file). ``folder``: True when a folder is needed (an
    existing file is refused), False when a file is (an existing folder is refused), None when
    either will do. Else an InputError naming ``what`` (the option).

    >>> check_output("site\\n", "--output")
    Traceback (most recent call last):
    ...
    goldenkit.errors.InputError: --output 'site\\n' contains a control character (U+000A)
    """
    text = os.fspath(path)
    bad = _unprintable(text)
    if bad is not None:
        raise InputError(f"{what} {text!r} contains a control character ({bad})")
    if not text.strip():
        raise InputError(f"{what} must not be empty")
    p = Path(text)
    for parent in p.parents:
        if parent.exists() and not parent.is_dir():
            raise InputError(f"{what} {text}: {parent} is a file, not a folder")
    if folder is True and p.exists() and not p.is_dir():
        raise InputError(f"{what} {text} is a file; a folder is needed")
    if folder is False and p.is_dir():
        raise InputError(f"{what} {text} is a folder; a file name is needed")
    return p


# ------------------------------------------------------------------ variable names, not keys

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _entropy(text: str) -> float:
    """Shannon entropy of ``text``'s characters, in bits per character."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def looks_like_key(name: str) -> bool:
    """Whether ``name``, given where the *name* of an environment variable belongs, looks like a key:
    not of the shape ``[A-Za-z_][A-Za-z0-9_]*``, or a known key format, or long and high-entropy
    (20+ characters at 4.2 bits a character or more, or 32+ hexadecimal digits).

    >>> [looks_like_key(n) for n in ("OPENAI_API_KEY", "sk-proj-abc", "AIzaSyD4f8Gk2LmN0pQr5StUvWxYz1234567")]
    [False, True, True]
    """
    if not _ENV_NAME.fullmatch(name) or PREFIXED_KEY.match(name) or name.lower().startswith("sk-"):
        return True
    if len(name) >= 32 and all(c in "0123456789abcdefABCDEF" for c in name):
        return True
    return len(name) >= 20 and _entropy(name) >= 4.2


def check_env_name(name: str, what: str, error: type[GoldenkitError] = ConfigError) -> str:
    """``name`` if it can be the name of an environment variable, else an ``error`` (exit 1) naming
    ``what`` (the option or setting) and never echoing ``name`` (it may be the key itself)."""
    if looks_like_key(name):
        raise error(
            f"{what} takes the NAME of an environment variable (like OPENAI_API_KEY), and what was given "
            "looks like a key itself (not shown); put the key in a variable and give its name"
        )
    return name
