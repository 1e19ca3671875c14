"""``goldenkit audit apply AUDIT.jsonl [...] --dataset DIR [-o OUT] [--version V]``.

Turns the confirmed label errors of one or more audit marks files into a new
dataset version in a new folder (see :mod:`goldenkit.audit` for the rules:
a ``label_error`` mark with a correction relabels the row by JSON Merge Patch,
one without a correction drops it; other marks change nothing). The old
dataset folder is never modified.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``audit`` command group."""
    group = subparsers.add_parser("audit")
    group.set_defaults(func=lambda args: _help(group))
    sub = group.add_subparsers(dest="audit_command", metavar="SUBCOMMAND", parser_class=type(group))
    p = sub.add_parser("apply", help="write a new dataset version with confirmed label errors fixed or dropped")
    p.add_argument("audits", nargs="+", metavar="AUDIT.jsonl", help="marks files (later marks win)")
    p.add_argument("--dataset", required=True, metavar="DIR", help="the dataset folder the marks were made on")
    p.add_argument("-o", "--output", metavar="OUT", help="new folder (default: <DIR>-<new version> beside DIR)")
    p.add_argument("--version", help="the new version (default: the next minor version)")
    p.set_defaults(func=cmd_apply)


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 1


def cmd_apply(args: argparse.Namespace) -> int:
    from goldenkit.audit import apply_audit

    result = apply_audit(args.audits, args.dataset, args.output, version=args.version)
    print(
        f"wrote {result.path}: version {result.version} (sha256 {result.sha256}), "
        f"was {result.previous_version} (sha256 {result.previous_sha256[:12]}); "
        f"relabelled {len(result.relabelled)}, dropped {len(result.dropped)}; "
        f"left unchanged: {result.ignored.get('agent_error', 0)} agent_error, "
        f"{result.ignored.get('unclear', 0)} unclear"
    )
    return 0
