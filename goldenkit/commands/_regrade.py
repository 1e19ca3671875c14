"""``goldenkit regrade RUN --run-id NEW``: grade the stored answers of run RUN again, into run NEW.

No model is called for the answers (a judge grader does call its judge model).
The graders are ``[graders] use`` of the goldenkit.toml that applies (``--config``,
else the file RUN recorded, found from any working directory, else beside RUN's dataset,
else the current folder) or ``--graders a,b``. ERROR
and SKIPPED outcomes are copied; the new run has RUN's run key with the new
graders and ``mode: regrade``, and names RUN in run.json (see
:mod:`goldenkit.runner._regrade`). Its cost line says what the regrade spent (the judge's calls) apart
from the candidate's spend it copied with the answers (``from run RUN``). Exit codes as ``goldenkit run``: 0 VALID,
1 bad input (RUN incomplete or INVALID, answers not stored, NEW taken), 3 INVALID.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from goldenkit.commands._agent import grader_list
from goldenkit.commands._args import SHARE
from goldenkit.config import config_for_run, describe_config
from goldenkit.providers import apply_transport_to_judges


def register(sub: Any) -> None:
    p = sub.add_parser(
        "regrade",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 VALID run, 1 usage or bad input, 3 INVALID run (e.g. the judge failed too often)",
    )
    p.add_argument("run", metavar="RUN", help="the run to regrade: a run folder or a run id under --results-dir")
    p.add_argument("--run-id", required=True, help="the new run's id (an existing regrade of RUN is resumed)")
    p.add_argument("--config", help="goldenkit.toml to use (default: beside RUN's dataset, then the current folder)")
    p.add_argument("--graders", help="comma-separated grader names (overrides [graders] use)")
    p.add_argument("--results-dir", help="where RUN is looked up and NEW written (default: RUN's folder's parent)")
    p.add_argument("--dataset", help="the dataset RUN used (default: the path in its run.json; same sha256)")
    p.add_argument(
        "--max-ungradable", type=SHARE, metavar="SHARE", help="as goldenkit run (default 0, or [run] max_ungradable)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=regrade_command)


def regrade_command(args: argparse.Namespace) -> int:
    from goldenkit.commands._run import resolve_options
    from goldenkit.results import read_run
    from goldenkit.runner import regrade

    source = read_run(args.run, args.results_dir or "results")
    man: dict[str, Any] = dict(source.manifest)
    if args.dataset:
        man["dataset"] = {**(man.get("dataset") or {}), "path": args.dataset}
    cfg = config_for_run(args.config, man, source.path)  # --config, the file the run recorded, else beside its dataset
    if cfg.get("_path"):
        print(f"goldenkit regrade: {describe_config(cfg)}", file=sys.stderr)
    opts = resolve_options(args, cfg)  # regrade's own command line ([run] keys it has: --max-ungradable)
    model = (source.manifest.get("agent_version") or {}).get("model_id")
    graders = grader_list(args, cfg, model)
    apply_transport_to_judges(graders, opts)
    summary = regrade(
        source,
        args.run_id,
        graders,
        results_dir=args.results_dir,
        dataset=args.dataset,
        progress=False if args.quiet else None,
        max_ungradable=opts["max_ungradable"],
    )
    print(summary.line(), file=sys.stdout)
    print(summary.cost_line(), file=sys.stdout)  # what the regrade spent, then what it copied from RUN
    return summary.exit_code


__all__ = ["register", "regrade_command"]
