"""The ``goldenkit`` command: the only place in goldenkit that exits.

Each command group lives in ``goldenkit/commands/<group>.py`` and exposes
``register(subparsers)``; its handlers take the parsed arguments and return an
exit code, or raise a :class:`goldenkit.errors.GoldenkitError`, which is
printed here as one line on stderr (``goldenkit: <message>``) and mapped to
its exit code. A traceback is printed only with ``--debug`` (or for a bug: an
exception that is not a goldenkit error, exit 1).

Exit codes: 0 ok · 1 usage or bad input · 2 quality gate failed · 3
infrastructure failure · 4 comparison invalid.

While a command runs, stdout and stderr are :class:`GuardedStream` wrappers:

* every string printed passes the secret scrubber (:func:`goldenkit._scrub.scrub`),
  with a scope (:func:`goldenkit._scrub.secrets_in_use`) open for the whole
  command: the keys its ``--*api-key-env`` variables hold, and every key a
  provider or a run reads meanwhile. An ``--*api-key-env`` given something that
  looks like a key rather than a variable name is refused (exit 1) without
  echoing it.
* a closed output (``goldenkit gate ... | head -1``, a reader that exits early)
  never turns a decision into 0, nor prints a traceback: at the first
  ``BrokenPipeError`` the stream's file descriptor is pointed at ``os.devnull``
  (Python's documented recipe for SIGPIPE), the rest of the output is dropped,
  and the command goes on to exit with its own code.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO, cast

from goldenkit._checks import check_env_name, check_output
from goldenkit._scrub import SecretScope, scrub, secrets_in_use
from goldenkit.errors import EXIT_BAD_INPUT, EXIT_INFRASTRUCTURE, GoldenkitError, UsageError

# Command groups, in the order `goldenkit --help` lists them, each with its one-line help (declared here
# only: `goldenkit --help` lists them without importing a command's module, so it answers at once).
# (`import_run` is the module of `goldenkit import-run`.)
COMMANDS: dict[str, str] = {
    "dataset": "validate, hash, describe, sample and import datasets",
    "run": "run a dataset through a model or agent and grade every outcome",
    "compare": "compare a candidate run with a base run or baseline, row by row",
    "gate": "decide whether a run may ship: exit 0 not worse (shown), 2 worse (shown), 3 not enough evidence, "
    "4 not comparable",
    "baseline": "save, list and show baselines",
    "stats": "statistics helpers (plan: rows needed for a paired comparison)",
    "report": "render the run report (and the comparison) as offline HTML",
    "audit": "apply failure-audit marks to a dataset",
    "judge": "LLM judge tools: calibrate, human labels (label), which rows to label next (next), estimates that "
    "combine both (estimate)",
    "demo": "run the guided demo: two recorded agent versions, compared and gated, with HTML reports",
    "benchmark": "run several models or agents on one dataset and print their leaderboard",
    "leaderboard": "rank comparable runs with paired tests and rank intervals",
    "import_run": "import another harness's result file (inspect, lm-eval, promptfoo, deepeval, openai-evals, adk) "
    "as a run",
    "query": "run SQL over every run (views runs, outcomes, baseline_history)",
    "pages": "write the static site: runs index, reports, history per dataset",
    "merge": "unite the shard runs (goldenkit run --shard K/N) of one run into one run folder",
    "regrade": "grade a finished run's stored answers again with the (new) graders, into a new run",
    "notebooks": "copy the bundled notebooks (report, compare, audit, coverage, leaderboard) into a folder",
}


class ArgumentParser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error, which would read as "gate failed"; raise instead."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


class _Commands:
    """The subparsers action a command module registers on: each command's help comes from
    :data:`COMMANDS`, so a module declares its options, never its line in ``goldenkit --help``."""

    def __init__(self, action: argparse._SubParsersAction[ArgumentParser]) -> None:
        self.action = action

    def add_parser(self, name: str, **kw: Any) -> ArgumentParser:
        kw["help"] = COMMANDS[name.replace("-", "_")]
        return self.action.add_parser(name, **kw)


def build_parser(only: str | None = None, *, overview: bool = False) -> ArgumentParser:
    """The full parser, or with ``only`` one command group (its module alone is imported,
    which keeps e.g. ``goldenkit run`` from loading the statistics stack); with ``overview``
    the commands and their help alone, no module imported (``goldenkit --help``)."""
    parser = ArgumentParser(
        prog="goldenkit",
        description="Evaluate LLM models and agents on versioned golden datasets.",
        epilog="exit codes: 0 ok (not worse, shown), 1 usage or bad input, 2 gate failed (worse, shown), "
        "3 infrastructure failure or not enough evidence, 4 comparison invalid",
    )
    parser.add_argument("--debug", action="store_true", help="print a traceback on error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgumentParser)
    for name, line in COMMANDS.items():
        if overview:
            sub.add_parser(name.replace("_", "-"), help=line, add_help=False)
        elif only is None or name == only:
            importlib.import_module(f"goldenkit.commands._{name}").register(_Commands(sub))
    return parser


class GuardedStream:
    """A text stream that scrubs what is written to it and survives its reader going away (see the
    module doc). ``broken`` is True once a write or flush met a closed pipe."""

    def __init__(self, inner: TextIO, scope: SecretScope) -> None:
        self.inner = inner
        self.scope = scope
        self.broken = False
        #: a write that failed for another reason than a closed pipe (a full disk): said once at the end
        self.failed: OSError | None = None

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self.inner.write(scrub(text, self.scope))
            except BrokenPipeError:
                self._lost()
            except OSError as exc:  # the output is lost, never the command's exit code
                self.broken, self.failed = True, exc
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._lost()
            except OSError as exc:
                self.broken, self.failed = True, exc

    def _lost(self) -> None:
        """The reader is gone: point the descriptor at devnull, so nothing later (the interpreter's
        own flush at exit) meets the closed pipe again."""
        self.broken = True
        try:
            fd = self.inner.fileno()
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return  # not a file (a test's capture): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)

    def isatty(self) -> bool:
        return bool(self.inner.isatty())

    def writable(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def guarded_output(scope: SecretScope) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`GuardedStream` until the block ends, then flushed
    (a closed pipe met here is handled the same way) and put back."""
    saved = sys.stdout, sys.stderr
    guards = [GuardedStream(s, scope) if s is not None else None for s in saved]
    sys.stdout, sys.stderr = (cast(TextIO, g) if g is not None else s for g, s in zip(guards, saved, strict=True))
    try:
        yield
    finally:
        for guard in guards:
            if guard is not None:
                guard.flush()
        sys.stdout, sys.stderr = saved
        out = guards[0]
        if out is not None and out.failed is not None and saved[1] is not None:
            try:  # one line on the real stderr; the exit code stays the command's own
                print(f"goldenkit: could not write the output: {out.failed.strerror or out.failed}", file=saved[1])
            except OSError:
                pass


def _register_keys(args: argparse.Namespace, scope: SecretScope) -> None:
    """Refuse an ``--*api-key-env`` that looks like a key; hold the value of each variable named."""
    for name, value in sorted(vars(args).items()):
        if name.endswith("api_key_env") and isinstance(value, str):
            try:
                check_env_name(value, "--" + name.replace("_", "-"), UsageError)
            except UsageError:
                scope.add([value])  # a key given where its variable's name belongs: masked wherever echoed
                raise
            scope.add([os.environ.get(value)])


#: The options that name where a command writes (their ``dest``), and whether each must be a folder
#: (None: a file or a folder, as the command says); each is checked by one rule before the command runs.
OUTPUT_OPTIONS: dict[str, bool | None] = {
    "output": None,
    "out": None,
    "markdown": None,
    "record": True,
    "results_dir": True,
    "baselines_dir": True,
}


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path with a control character, or under a file, or a file where a folder is needed
    (:func:`goldenkit._checks.check_output`): a one-line error, before anything is written."""
    for dest, folder in OUTPUT_OPTIONS.items():
        value = getattr(args, dest, None)
        if isinstance(value, str | os.PathLike):
            check_output(value, "--" + dest.replace("_", "-"), folder=folder)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the exit code (``console_main`` exits with it)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    with secrets_in_use() as scope, guarded_output(scope):
        return _run(args_list, scope)


def _run(args_list: list[str], scope: SecretScope) -> int:
    debug = "--debug" in args_list
    try:
        first = next((a for a in args_list if not a.startswith("-")), None)
        group = first.replace("-", "_") if first else None
        parser = build_parser(group if group in COMMANDS else None, overview=group not in COMMANDS)
        args = parser.parse_args(args_list)
        _register_keys(args, scope)
        _check_outputs(args)
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
    except KeyboardInterrupt as exc:  # a run says what it kept and the command that resumes it
        line = getattr(exc, "line", None)
        print(f"goldenkit: {line(args_list) if callable(line) else 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # an output that is not a guarded stream closed: the command did not finish
        print("goldenkit: an output was closed before the command finished", file=sys.stderr)
        return EXIT_INFRASTRUCTURE
    except Exception:  # a bug: its traceback, scrubbed like everything else printed
        traceback.print_exc()
        return EXIT_BAD_INPUT


def console_main() -> NoReturn:
    sys.exit(main())


if __name__ == "__main__":
    console_main()
