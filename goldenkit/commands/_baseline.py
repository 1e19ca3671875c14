"""``goldenkit baseline save|list|show``: committed snapshots to compare against.

``save RUN --name NAME [--force]`` writes ``baselines/NAME.json`` and
``baselines/NAME.parquet`` and appends to ``baselines/history.jsonl``; it
refuses to overwrite without ``--force`` and refuses an INVALID run, one
with any ERROR, and a sequential run (resume it without ``--sequential`` to a
full run first). ``list`` shows every baseline; ``show NAME`` its run key and
per-slice summary.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from goldenkit._checks import check_name
from goldenkit._display import pct
from goldenkit.commands._args import gate_defaults
from goldenkit.errors import InputError, UsageError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "baseline",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    p.add_argument("--baselines-dir", default="baselines", help="folder of baselines (default baselines)")
    bsub = p.add_subparsers(dest="baseline_command", metavar="SUBCOMMAND", parser_class=type(p))
    s = bsub.add_parser("save", help="save a run as a baseline")
    s.add_argument("run", help="run folder or run id")
    s.add_argument("--name", required=True, help="baseline name (letters, digits, . _ + -)")
    s.add_argument("--force", action="store_true", help="overwrite an existing baseline of that name")
    s.add_argument(
        "--rule", default=None, help="collapse rule (default: [gate] rule of the run's goldenkit.toml, else majority)"
    )
    s.add_argument("--note", help="why this baseline (kept in history.jsonl)")
    s.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    s.set_defaults(func=save_command)
    ls = bsub.add_parser("list", help="list the baselines")
    ls.set_defaults(func=list_command)
    sh = bsub.add_parser("show", help="show one baseline")
    sh.add_argument("name", help="baseline name or .json path")
    sh.add_argument("--json", action="store_true", help="print the baseline's .json document")
    sh.set_defaults(func=show_command)

    def no_subcommand(args: argparse.Namespace) -> int:
        raise UsageError("goldenkit baseline: choose a subcommand (save, list, show)")

    p.set_defaults(func=no_subcommand)


def save_command(args: argparse.Namespace) -> int:
    from goldenkit.baselines import save_baseline
    from goldenkit.results import read_run

    check_name(args.name, "baseline name")  # before any file is read or written
    run = read_run(args.run, args.results_dir)
    try:
        b = save_baseline(
            run,
            args.name,
            baselines_dir=args.baselines_dir,
            force=args.force,
            note=args.note,
            rule=gate_defaults(args, run)[0],
        )
    except OSError as exc:  # a full disk, a folder that cannot be written: nothing was replaced
        why = exc.strerror or str(exc)
        raise InputError(
            f"cannot save baseline {args.name!r} in {args.baselines_dir}: {why}; nothing was changed"
        ) from None
    s = b.info["summary"]
    print(
        f"saved baseline {b.name} from run {b.run_id}: {s['k']}/{s['n']} rows pass "
        f"({pct(s['p_hat'])}, 95% CI {pct(s['ci_low'], unit='')}-{pct(s['ci_high'], unit='')}) -> {b.path}"
    )
    return 0


def list_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from goldenkit.baselines import list_baselines

    df = list_baselines(args.baselines_dir)
    if df.empty:
        print(f"no baselines in {args.baselines_dir}/")
        return 0
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.to_string(index=False))
    return 0


def show_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from goldenkit.baselines import read_baseline
    from goldenkit.stats import OVERALL, slice_table

    b = read_baseline(args.name, args.baselines_dir)
    if args.json:
        print(json.dumps(b.info, indent=2, ensure_ascii=False))
        return 0
    run = b.manifest
    ds = run.get("dataset") or {}
    print(f"baseline {b.name} (saved {b.info.get('saved_at')}, rule {b.rule})")
    print(f"  run       {b.run_id} ({run.get('mode')})")
    print(f"  dataset   {ds.get('name')}@{ds.get('version')} sha256 {ds.get('sha256')}")
    print(f"  agent     {json.dumps(run.get('agent_version'), sort_keys=True)}")
    print(f"  graders   {json.dumps(run.get('graders'), sort_keys=True)}  judge {run.get('judge_version')}")
    print(f"  repeats   {run.get('repeats')}")
    if b.info.get("note"):
        print(f"  note      {b.info['note']}")
    t = slice_table(b.collapsed())
    t = t[["slice", "rows", "n", "k", "p_hat", "ci_low", "ci_high", "flaky"]]
    with pd.option_context("display.width", 200, "display.float_format", "{:.4f}".format):
        print(t.to_string(index=False))
    ov = t[t["slice"] == OVERALL].iloc[0]
    print(f"overall {int(ov['k'])}/{int(ov['n'])} rows pass")
    return 0
