"""``goldenkit import-run SRC --format FORMAT --run-id ID``: another harness's results as a goldenkit run.

SRC is one result file (or a folder holding one) written by inspect_ai
(``--format inspect``: ``.eval`` or ``.json`` logs), lm-evaluation-harness
(``lm-eval``: ``--log_samples`` JSON lines, ``.jsonl`` or ``.json``, and 0.3
``--write_out`` files), promptfoo (``promptfoo``: JSON or CSV from ``promptfoo eval
-o``), deepeval (``deepeval``: TestRun JSON, ``.deepeval/.latest_test_run.json``),
openai/evals (``openai-evals``: JSONL logs) or Google ADK (``adk``: an
``*.evalset_result.json`` of ``adk eval``, or the ``.adk/eval_history`` folder with
``--eval-set``). The run folder is written under ``--results-dir`` with ``mode:
"imported"``; then ``goldenkit compare``, ``gate``, ``report`` and ``regrade`` take it
like any run. Prints one line per run written (a run that is not evidence, INVALID
or every row SKIPPED, is written too, and the line says so; the gate refuses it).

Exit codes: 0 imported · 1 usage or bad input (one line naming the file and the
sample; nothing is written).
"""

from __future__ import annotations

import argparse
from typing import Any

from goldenkit.commands._args import number
from goldenkit.harnesses import FORMATS


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import-run",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 imported, 1 usage or bad input",
    )
    p.add_argument("src", metavar="SRC", help="the result file, or a folder holding one")
    p.add_argument("--format", required=True, choices=list(FORMATS), help="the harness that wrote SRC")
    p.add_argument("--run-id", required=True, help="the run id (promptfoo, several providers: ID-<provider>)")
    p.add_argument("--dataset", metavar="DIR", help="the goldenkit dataset the samples came from (its ids and hash)")
    p.add_argument("--scorer", help="inspect: the scorer that decides (default: the first)")
    p.add_argument("--metric", help="lm-eval / deepeval / openai-evals: the metric that decides (e.g. acc)")
    p.add_argument("--threshold", type=number(), help="PASS when a numeric score is >= X (needed for non-0/1 scores)")
    p.add_argument("--provider", help="promptfoo: import this provider only")
    p.add_argument("--eval-set", metavar="ID", help="adk: the eval set to read from an .adk/eval_history folder")
    p.add_argument("--slice", metavar="FIELD", help="take each row's slice from this metadata / vars / doc field")
    p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    p.set_defaults(func=import_command)


def import_command(args: argparse.Namespace) -> int:
    from goldenkit.harnesses import import_run

    runs = import_run(
        args.src,
        format=args.format,
        run_id=args.run_id,
        dataset=args.dataset,
        scorer=args.scorer,
        metric=args.metric,
        threshold=args.threshold,
        provider=args.provider,
        slice_field=args.slice,
        results_dir=args.results_dir,
        eval_set=args.eval_set,
    )
    for run in runs:
        m = run.manifest
        counts = m.get("counts") or {}
        verdicts = ", ".join(f"{v} {counts.get(v, 0)}" for v in ("PASS", "FAIL", "ERROR"))
        model = (m.get("agent_version") or {}).get("model_id") or "-"
        line = f"{run.run_id}: {counts.get('total', 0)} outcomes ({verdicts}), model {model}, {m.get('validity')}"
        if m.get("invalid_reason"):
            line += f": {m['invalid_reason']}"
        elif counts.get("total") and counts.get("SKIPPED") == counts.get("total"):
            line += ", every row SKIPPED (not graded: not evidence)"
        print(f"{line} -> {run.path}")
    return 0
