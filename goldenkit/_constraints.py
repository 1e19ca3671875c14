"""What each option of a run takes: one declarative table, checked by one function before any work.

``goldenkit run``'s flags, the ``[run]`` table of goldenkit.toml and
:class:`goldenkit.runner.RunOptions` check a value against :data:`RUN_OPTIONS`
(as scikit-learn's ``_param_validation`` checks an estimator's parameters), so a value
outside its range is one line naming the option where it was given, before a run
folder, a lock or a run.json exists::

    goldenkit: goldenkit run: argument --max-in-flight: must be an integer >= 1, got '0'
    goldenkit: goldenkit.toml: [run] max_in_flight must be an integer >= 1, got 0
    goldenkit.errors.ConfigError: RunOptions.max_in_flight must be an integer >= 1, got 0

A key of the table is the option's ``[run]`` key, its :class:`~goldenkit.runner.RunOptions`
field when it has one, and its flag with dashes (``max_in_flight``, ``--max-in-flight``).
Adding an option with a range is one line here. The module imports nothing heavy: the
command line's parser reads it to list the options.

>>> check_option("repeats", 3), check_option("rpm", None)
(3, None)
>>> check_option("timeout", float("nan"))
Traceback (most recent call last):
...
ValueError: must be a finite number > 0, got nan
>>> RUN_OPTIONS["max_in_flight"].parse("0")
Traceback (most recent call last):
...
ValueError: must be an integer >= 1, got '0'
>>> check_option("run_id", "main\\n")
Traceback (most recent call last):
...
ValueError: must be one folder name, but it contains a control character (U+000A), got 'main\\n'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from goldenkit._checks import _unprintable, name_problem

__all__ = ["RUN_OPTIONS", "Constraint", "Flag", "Name", "Names", "Number", "Text", "check_option"]


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
    """A TOML boolean (``true``/``false``): never a text or a number."""

    @property
    def what(self) -> str:
        return "true or false"

    def check(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {value!r}")
        return value

    def parse(self, text: str) -> bool:
        return self.check({"true": True, "false": False}.get(text.strip().lower(), text))


@dataclass(frozen=True)
class Names:
    """A list of non-empty texts (slice names), as a tuple without repeats, in the order given."""

    of: str = "names"

    @property
    def what(self) -> str:
        return f"a list of {self.of}"

    def check(self, value: object) -> tuple[str, ...]:
        if not isinstance(value, list | tuple) or not all(isinstance(s, str) and s for s in value):
            raise ValueError(f"must be a list of {self.of}, got {value!r}")
        return tuple(dict.fromkeys(value))

    def parse(self, text: str) -> tuple[str, ...]:
        return self.check([s.strip() for s in text.split(",") if s.strip()])


#: The options of a run and what each takes (see the module doc). ``latest`` is the results folder's
#: link to the newest run (:data:`goldenkit.results.LATEST`), never a run id.
RUN_OPTIONS: dict[str, Constraint] = {
    # what is run and how often
    "repeats": Number(integer=True, low=1, high=1000),  # every attempt has a slot in the run's index
    "per_slice": Number(integer=True, low=1, optional=True),
    "sample_seed": Number(integer=True, optional=True),
    "max_ungradable": Number(low=0, high=1, optional=True),
    "max_turns": Number(integer=True, low=1, optional=True),
    # the model's settings
    "temperature": Number(low=0, high=2, optional=True),
    "seed": Number(integer=True, optional=True),
    "max_tokens": Number(integer=True, low=1, optional=True),
    "max_tool_steps": Number(integer=True, low=0, optional=True),
    "max_reply_bytes": Number(integer=True, low=1, optional=True),
    "user_temperature": Number(low=0, high=2, optional=True),
    "user_seed": Number(integer=True, optional=True),
    # how it calls and when it stops
    "max_in_flight": Number(integer=True, low=1),
    "rpm": Number(low=0, low_open=True, optional=True),
    "timeout": Number(low=0, low_open=True),
    "max_retries": Number(integer=True, low=0),
    "backoff_base": Number(low=0),
    "backoff_cap": Number(low=0),
    "max_retry_after": Number(low=0),
    "max_error_rate": Number(low=0, high=1),
    "abort_after_errors": Number(integer=True, low=1, optional=True),  # consecutive ERRORs; None: never stop
    "ray_workers": Number(integer=True, low=1, optional=True),
    # the run's budget (goldenkit.runner._budget): it stops the run when reached; never in the protocol key
    "max_calls": Number(integer=True, low=1, optional=True),
    "max_tokens_total": Number(integer=True, low=1, optional=True),
    "max_cost": Number(low=0, low_open=True, optional=True),  # USD; needs [pricing] for the models called
    # the sequential gate (goldenkit run --sequential)
    "max_rows": Number(integer=True, low=1, optional=True),
    "sequential_seed": Number(integer=True, low=0, optional=True),
    # where it writes
    "run_id": Name(reserved=("latest",), optional=True),
    "label": Text(optional=True),  # what people read first (goldenkit._run_label); never in the protocol key
}


def check_option(name: str, value: object) -> Any:
    """``value`` of run option ``name`` as the option takes it; a ValueError saying what it takes otherwise
    (the caller names the option where it was given: a flag, a ``[run]`` key, a RunOptions field)."""
    return RUN_OPTIONS[name].check(value)
