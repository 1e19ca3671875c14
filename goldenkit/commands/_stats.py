"""``goldenkit stats plan``: how many rows a paired (McNemar) comparison needs.

``--delta`` is the change in pass rate to detect (0.02 = 2 points),
``--discordance`` the expected share of rows that flip either way between the
two versions (from a previous comparison: (b + c) / rows). Prints the rows
needed for the two-sided exact McNemar test (its power by exact enumeration;
the default everywhere) and, labelled approximate, Connor's (1987) normal
approximation, and the smallest change detectable with the exact rows. The
gate's regression test is one-sided at its alpha: plan it with ``--alpha``
twice the gate's (what its messages print). A plan of more than 10,000,000
rows is refused at once, in bounded time and memory.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from goldenkit.commands._args import ALPHA, number
from goldenkit.errors import UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    ssub = p.add_subparsers(dest="stats_command", metavar="SUBCOMMAND", parser_class=type(p))
    plan = ssub.add_parser("plan", help="rows needed to detect a change in pass rate", description=__doc__)
    plan.add_argument("--delta", type=number(), required=True, help="change in pass rate to detect, e.g. 0.02")
    plan.add_argument(
        "--discordance",
        type=number(above=0, at_most=1),
        required=True,
        help="expected share of rows that flip, e.g. 0.06",
    )
    plan.add_argument("--alpha", type=ALPHA, default=0.05, help="two-sided significance level (default 0.05)")
    plan.add_argument("--power", type=number(above=0, below=1), default=0.8, help="power (default 0.8)")
    plan.add_argument("--json", action="store_true", help="print JSON")
    plan.set_defaults(func=plan_command)

    def no_subcommand(args: argparse.Namespace) -> int:
        raise UsageError("goldenkit stats: choose a subcommand (plan)")

    p.set_defaults(func=no_subcommand)


def plan_command(args: argparse.Namespace) -> int:
    from goldenkit.stats import mcnemar_power, min_detectable_effect, rows_needed

    n_exact = rows_needed(args.delta, args.discordance, args.alpha, args.power, method="exact")
    n_connor = rows_needed(args.delta, args.discordance, args.alpha, args.power, method="connor")
    out = {
        "delta": args.delta,
        "discordance": args.discordance,
        "alpha": args.alpha,
        "power": args.power,
        "method": "exact",
        "rows_needed": n_exact,
        "exact_power_at_rows_needed": mcnemar_power(n_exact, args.delta, args.discordance, args.alpha),
        "min_detectable_effect": min_detectable_effect(n_exact, args.discordance, args.alpha, args.power),
        "rows_needed_connor_approximate": n_connor,
        "exact_power_at_connor_rows": mcnemar_power(n_connor, args.delta, args.discordance, args.alpha),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"to detect a change of {args.delta:g} in pass rate with {args.discordance:g} of rows flipping,\n"
        f"two-sided alpha {args.alpha:g}, power {args.power:g}:\n"
        f"  rows needed: {n_exact}   (exact McNemar test, two-sided; power by exact enumeration; the gate's\n"
        f"  one-sided test at alpha {args.alpha / 2:g} needs the same rows)\n"
        f"  smallest change detectable with {n_exact} rows: {out['min_detectable_effect']:.4f}\n"
        f"  approximate: {n_connor} rows (Connor 1987 normal approximation; "
        f"exact power with them {out['exact_power_at_connor_rows']:.3f})"
    )
    return 0
