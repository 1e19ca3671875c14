"""The commands' number types: finite numbers in range, refused where they are read, naming the option.

``type=float`` takes ``nan``, ``inf`` and ``-5`` for a timeout, and the run
would fail later, or never. Each numeric option says what it takes with
:func:`number` or :func:`integer` (``type=number(above=0)``); a value outside
it is a usage error that argparse prints after the option's name (exit 1)::

    goldenkit run: argument --timeout: must be a finite number > 0, got 'nan'

Called with a TOML value, they raise a ValueError there too, and their ``__name__`` says
what the option takes. The run options are declared in :data:`goldenkit._constraints.RUN_TABLE`
(``goldenkit run``'s flags and the ``[run]`` keys are checked by what each option takes there).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping

from goldenkit.errors import ConfigError


class BadNumber(argparse.ArgumentTypeError, ValueError):
    """A value its option does not take (argparse prints the message after the option's name)."""


def _describe(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    """``finite number``, ``finite number > 0``, ``finite number in [0, 1]``..."""
    if low is not None and high is not None:
        return f"finite number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"finite number {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"finite number {'<' if high_open else '<='} {high:g}"
    return "finite number"


def number(
    *,
    at_least: float | None = None,
    above: float | None = None,
    at_most: float | None = None,
    below: float | None = None,
) -> Callable[[object], float]:
    """A type for a finite float option in range (one bound each side at most; ``above``/``below`` exclusive).

    >>> share = number(at_least=0, at_most=1)
    >>> share("0.25"), share.__name__
    (0.25, 'finite number in [0, 1]')
    >>> number(above=0)("nan")
    Traceback (most recent call last):
    ...
    goldenkit.commands._args.BadNumber: must be a finite number > 0, got 'nan'
    """
    low = above if above is not None else at_least
    high = below if below is not None else at_most
    what = _describe(low, high, above is not None, below is not None)

    def check(value: object) -> float:
        x = _as_float(value)
        if (
            x is None
            or not math.isfinite(x)
            or (low is not None and (x <= low if above is not None else x < low))
            or (high is not None and (x >= high if below is not None else x > high))
        ):
            raise BadNumber(f"must be a {what}, got {value!r}")
        return x

    check.__name__ = what
    return check


def _as_float(value: object) -> float | None:
    """A float from an option's text or a TOML number (None when it is neither; a bool is not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):
        return None


def integer(at_least: int | None = None) -> Callable[[object], int]:
    """A type for an integer option (at least ``at_least``); a TOML float is taken only when whole.

    >>> integer(at_least=1)("3"), integer()(2.0), integer(at_least=0).__name__
    (3, 2, 'integer >= 0')
    >>> integer(at_least=1)("0")
    Traceback (most recent call last):
    ...
    goldenkit.commands._args.BadNumber: must be an integer >= 1, got '0'
    """
    what = "integer" if at_least is None else f"integer >= {at_least}"

    def check(value: object) -> int:
        n: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        elif isinstance(value, float) and value.is_integer():
            n = int(value)
        elif isinstance(value, str):
            try:
                n = int(value)
            except ValueError:
                n = None
        if n is None or (at_least is not None and n < at_least):
            raise BadNumber(f"must be an {what}, got {value!r}")
        return n

    check.__name__ = what
    return check


# The options every command shares the meaning of.
SECONDS = number(above=0)
SHARE = number(at_least=0, at_most=1)
ALPHA = number(above=0, below=1)
TEMPERATURE = number(at_least=0)
NATURAL = integer(at_least=0)
POSITIVE = integer(at_least=1)


__all__ = [
    "ALPHA",
    "NATURAL",
    "POSITIVE",
    "SECONDS",
    "SHARE",
    "TEMPERATURE",
    "BadNumber",
    "integer",
    "number",
]


def gate_defaults(args: argparse.Namespace, manifest: object = None) -> tuple[str, float]:
    """``(rule, alpha)``: ``--rule``/``--alpha`` when given, else the ``[gate]`` table's of the goldenkit.toml
    that applies (:func:`goldenkit.config.config_for_run`: ``--config``, the file the run recorded, the one
    beside its dataset), else majority and 0.05. Sets ``args.rule`` and ``args.alpha`` to them."""

    from goldenkit.config import config_for_run, section

    rule, alpha = getattr(args, "rule", None), getattr(args, "alpha", None)
    if rule is None or alpha is None:  # the values are checked where they are used (the collapse, the test)
        man = getattr(manifest, "manifest", manifest)  # a run (its folder too) or its run.json
        man = man if isinstance(man, Mapping) else None
        try:
            gate = section(config_for_run(getattr(args, "config", None), man, getattr(manifest, "path", None)), "gate")
        except ConfigError as exc:  # no policy is applied here: say why the defaults are used
            if getattr(args, "config", None) is not None:
                raise
            print(f"goldenkit: note: --rule and --alpha from the defaults: {exc}", file=sys.stderr)
            gate = {}
        rule = gate.get("rule", "majority") if rule is None else rule
        alpha = ALPHA(gate.get("alpha", 0.05)) if alpha is None else alpha
    args.rule, args.alpha = str(rule), float(alpha)
    return args.rule, args.alpha
