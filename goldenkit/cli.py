"""The ``goldenkit`` command: the only place in goldenkit that exits.

Each command group lives in ``goldenkit/commands/<group>.py`` and exposes
``register(subparsers)``; its handlers take the parsed arguments and return an
exit code, or raise a :class:`goldenkit.errors.GoldenkitError`, which is
printed here as one line on stderr (``goldenkit: <message>``) and mapped to
its exit code. A traceback is printed only with ``--debug``.

Exit codes: 0 ok · 1 usage or bad input · 2 quality gate failed · 3
infrastructure failure · 4 comparison invalid.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from goldenkit.errors import EXIT_BAD_INPUT, GoldenkitError, UsageError

# Command groups, in the order `goldenkit --help` lists them.
# (`import_run` is the module of `goldenkit import-run`.)
COMMANDS: tuple[str, ...] = (
    "dataset", "run", "compare", "gate", "baseline", "stats", "report", "audit", "judge", "demo",
    "benchmark", "leaderboard", "import_run", "query", "pages", "merge",
    "regrade",
)  # fmt: skip


class ArgumentParser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error, which would read as "gate failed"; raise instead."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def build_parser(only: str | None = None) -> ArgumentParser:
    """The full parser, or with ``only`` one command group (its module alone is imported,
    which keeps e.g. ``goldenkit run`` from loading the statistics stack)."""
    parser = ArgumentParser(
        prog="goldenkit",
        description="Evaluate LLM models and agents on versioned golden datasets.",
        epilog="exit codes: 0 ok, 1 usage or bad input, 2 gate failed, 3 infrastructure failure, 4 comparison invalid",
    )
    parser.add_argument("--debug", action="store_true", help="print a traceback on error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"goldenkit.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (``console_main`` exits with it)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        first = next((a for a in args_list if not a.startswith("-")), None)
        group = first.replace("-", "_") if first else None
        parser = build_parser(group if group in COMMANDS else None)
        args = parser.parse_args(args_list)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help(sys.stderr)
            return EXIT_BAD_INPUT
        return int(func(args) or 0)
    except GoldenkitError as exc:
        if debug:
            traceback.print_exc()
        print(f"goldenkit: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("goldenkit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def console_main() -> NoReturn:
    sys.exit(main())


if __name__ == "__main__":
    console_main()
