"""What an option or a key takes: the kinds of constraint one declarative table lists (a number in range,
a folder name, a short text, true or false, a list of names, a table, an array of tables, a plain ``[run]``
value), each checking a value (:meth:`check`) and a command line's text (:meth:`parse`), with a ValueError
saying what it takes; and :class:`TableKey`, one key of a goldenkit.toml table declared with its constraint.

The run options (:data:`goldenkit._constraints.RUN_TABLE`), the ``[gate]`` table
(:data:`goldenkit.gate._policy.GATE_KEYS`) and the other tables of goldenkit.toml
(:data:`goldenkit.config.TABLE_KEYS`) are declared with them. The module imports nothing heavy.

>>> Number(integer=True, low=1).what
'integer >= 1'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from goldenkit._checks import _unprintable, name_problem
from goldenkit._text import did_you_mean

__all__ = ["Constraint", "Flag", "Kind", "Name", "Names", "Number", "Table", "TableKey", "Tables", "Text"]


class Constraint(Protocol):
    """What an option takes: :attr:`what` says it, :meth:`check` a value, :meth:`parse` a command line's text."""

    @property
    def what(self) -> str: ...

    def check(self, value: object) -> Any: ...

    def parse(self, text: str) -> Any: ...


@dataclass(frozen=True)
class Number:
    """A finite number (or an integer) in range; ``optional``: None (unset, no limit) is taken too.

    A bool is never a number; an integer option takes a whole float (a TOML ``2.0``) as that integer.
    """

    integer: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    optional: bool = False

    @property
    def what(self) -> str:
        """``integer >= 1``, ``finite number > 0``, ``finite number in [0, 1]``..."""
        kind = "integer" if self.integer else "finite number"
        low, high = self.low, self.high
        if low is not None and high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{kind} in {left}{low:g}, {high:g}{right}"
        if low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {low:g}"
        if high is not None:
            return f"{kind} {'<' if self.high_open else '<='} {high:g}"
        return kind

    def check(self, value: object) -> int | float | None:
        """``value`` when it is in range (an integer option's as an int); else a ValueError saying what it takes."""
        if value is None and self.optional:
            return None
        x = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if x is not None and self.integer:
            x = int(x) if isinstance(x, int) or (math.isfinite(x) and x.is_integer()) else None
        article = "an" if self.integer else "a"
        if x is None or not math.isfinite(x) or not self._in_range(x):
            raise ValueError(f"must be {article} {self.what}, got {value!r}")
        if self.integer and not -(2**63) <= x < 2**63:  # what JSON readers, numpy and servers hold
            raise ValueError(f"must be {article} {self.what} that fits in 64 bits, got {value!r}")
        return x

    def _in_range(self, x: float) -> bool:
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return self.high is None or not (x >= self.high if self.high_open else x > self.high)

    def parse(self, text: str) -> int | float | None:
        """A command line's text as the option's value, checked (the error quotes the text)."""
        try:
            return self.check(int(text) if self.integer else float(text))
        except (TypeError, ValueError, OverflowError) as exc:
            article = "an" if self.integer else "a"
            bits = " that fits in 64 bits" if "64 bits" in str(exc) else ""
            raise ValueError(f"must be {article} {self.what}{bits}, got {text!r}") from None


@dataclass(frozen=True)
class Name:
    """A name that becomes a folder under another one (a run id): one path component of safe
    characters, never empty, ``.``/``..``, a separator, a control character or a ``reserved`` name."""

    reserved: tuple[str, ...] = ()
    optional: bool = False

    @property
    def what(self) -> str:
        return "a name of letters, digits, '.', '_', '+' and '-' that starts with a letter or digit"

    def check(self, value: object) -> str | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, str):
            raise ValueError(f"must be a text, got {value!r}")
        why = self._problem(value)
        if why is not None:
            raise ValueError(f"{why}, got {value!r}")
        return value

    def _problem(self, value: str) -> str | None:
        if value in self.reserved:
            return f"must not be a name reserved by goldenkit ({', '.join(map(repr, self.reserved))})"
        problem = name_problem(value)  # the one rule of a name (goldenkit._checks)
        return None if problem is None else f"must be one folder name, but it {problem}"

    def parse(self, text: str) -> str | None:
        return self.check(text)


@dataclass(frozen=True)
class Text:
    """A short text shown to people (a run's label): one line, not blank, no control or invisible formatting
    character, at most ``length`` characters; taken without the spaces around it."""

    length: int = 80
    optional: bool = False

    @property
    def what(self) -> str:
        return f"one line of at most {self.length} characters"

    def check(self, value: object) -> str | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, str):
            raise ValueError(f"must be a text, got {value!r}")
        if not value.strip():
            raise ValueError(f"must be {self.what}, not blank, got {value!r}")
        if (bad := _unprintable(value)) is not None:
            raise ValueError(f"must be {self.what}, but it contains a control character ({bad}), got {value!r}")
        if len(value.strip()) > self.length:
            raise ValueError(f"must be {self.what}, got {len(value.strip())} characters ({value[:20]!r}...)")
        return value.strip()

    def parse(self, text: str) -> str | None:
        return self.check(text)


@dataclass(frozen=True)
class Flag:
    """A TOML boolean (``true``/``false``): never a text or a number; ``optional``: None (unset) too."""

    optional: bool = False

    @property
    def what(self) -> str:
        return "true or false"

    def check(self, value: object) -> bool | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {value!r}")
        return value

    def parse(self, text: str) -> bool | None:
        return self.check({"true": True, "false": False}.get(text.strip().lower(), text))


@dataclass(frozen=True)
class Names:
    """A list of non-empty texts (slice names), as a tuple without repeats, in the order given; ``unique``: a
    name given twice is refused (grader names: each builds one grader)."""

    of: str = "names"
    unique: bool = False

    @property
    def what(self) -> str:
        return f"a list of {self.of}"

    def check(self, value: object) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(isinstance(s, str) and s for s in value):
            raise ValueError(f"must be a list of {self.of}, got {value!r}")
        if self.unique and (twice := sorted({s for s in value if value.count(s) > 1})):
            raise ValueError(f"names {twice[0]!r} twice")
        return tuple(dict.fromkeys(value))

    def parse(self, text: str) -> tuple[str, ...]:
        return self.check([s.strip() for s in text.split(",") if s.strip()])


@dataclass(frozen=True)
class Kind:
    """A ``[run]`` value of a plain kind that has no range: ``str`` (any value, as its text), ``bool`` (true or
    false) or ``list of paths``; checked in goldenkit.toml only (the command line and RunOptions take their own
    types: a criteria file's path there, the criteria read from it here)."""

    name: str

    @property
    def what(self) -> str:
        return self.name

    def check(self, value: object) -> Any:
        ok = {"str": True, "bool": isinstance(value, bool)}.get(self.name)
        if ok is None:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if not ok:
            why = " (true or false)" if self.name == "bool" else ""
            raise ValueError(f"= {value!r} is not a valid {self.name}{why}")
        return str(value) if self.name == "str" else list(value) if isinstance(value, list) else value

    def parse(self, text: str) -> Any:
        return self.check(text)


@dataclass(frozen=True)
class Table:
    """A TOML table whose keys its owner reads (a provider's own options, metric = weight), as a dict;
    ``values``: what each value takes (None: anything); ``optional``: None (unset) too."""

    of: str = "a table"
    values: Constraint | None = None
    optional: bool = False

    @property
    def what(self) -> str:
        return self.of

    def check(self, value: object) -> dict[str, Any] | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, Mapping):
            raise ValueError(f"must be {self.of}, got {value!r}")
        if self.values is not None:
            for key, v in value.items():
                try:
                    self.values.check(v)
                except ValueError as exc:
                    raise ValueError(f"{key} = {v!r}: {exc}") from None
        return dict(value)

    def parse(self, text: str) -> dict[str, Any] | None:
        return self.check(text)


@dataclass(frozen=True)
class Tables:
    """An array of tables (``[[benchmark.agents]]``), each checked key by key: ``keys`` says what each key
    takes (an unknown key is refused with a did-you-mean); a refusal says which table (``#2``, from 1)."""

    keys: Mapping[str, Constraint]
    of: str = "an array of tables"

    @property
    def what(self) -> str:
        return self.of

    def check(self, value: object) -> list[dict[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
            raise ValueError(f"must be {self.of}, got {value!r}")
        out = []
        for i, table in enumerate(value, 1):
            row = {}
            for key, v in table.items():
                if key not in self.keys:
                    hint = did_you_mean(key, self.keys) or f"; known: {', '.join(sorted(self.keys))}"
                    raise ValueError(f"#{i}: {key}: unknown key{hint}")
                try:
                    row[key] = self.keys[key].check(v)
                except ValueError as exc:
                    raise ValueError(f"#{i}: {key} {exc}") from None
            out.append(row)
        return out

    def parse(self, text: str) -> list[dict[str, Any]]:
        return self.check(text)


@dataclass(frozen=True)
class TableKey:
    """One key of a goldenkit.toml table, declared once: what it takes (a constraint of this module), its
    default (taken when the key is absent), what it does (``help``), the value a listing shows (``example``),
    and a ``note`` said after a refusal (why its range is what it is)."""

    constraint: Constraint
    default: Any
    help: str
    example: str = ""
    note: str = ""
