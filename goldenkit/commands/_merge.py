"""``goldenkit merge RUN_ID SHARD_RUN [SHARD_RUN ...]``: unite the shard runs of one run into one run.

The shards are runs of ``goldenkit run ... --shard K/N`` (run ids under
``--results-dir``, or run folders). The merged run ``RUN_ID`` is an ordinary
run folder under ``--results-dir`` with the run key of the unsharded run; its
counts, error rate and validity are computed over the whole. Refused (exit 1,
naming the culprit, nothing written): an existing ``RUN_ID``, a run that is
not a shard, shards of another N, differing run keys, a shard given twice or
missing, an incomplete shard. Exit 0 for a VALID merged run, 3 for an INVALID one.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 VALID merged run, 1 refused (the message names the shard), 3 INVALID merged run",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="the merged run's id (must not exist yet)")
    p.add_argument("shards", metavar="SHARD_RUN", nargs="+", help="the N shard runs (run ids or folders)")
    p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    p.set_defaults(func=merge_command)


def merge_command(args: argparse.Namespace) -> int:
    from goldenkit.runner import merge_shards

    summary = merge_shards(args.run_id, args.shards, results_dir=args.results_dir)
    print(summary.line(), file=sys.stdout)
    print(summary.cost_line(), file=sys.stdout)
    return summary.exit_code


__all__ = ["merge_command", "register"]
