"""``goldenkit compare BASE CAND``: paired comparison of two runs or baselines.

BASE and CAND are each a run folder, a run id under ``--results-dir``, a
baseline name under ``--baselines-dir`` or a baseline's .json file. Prints the
per-slice table (both pass rates with Wilson intervals, b broke, c fixed,
exact McNemar p, Holm-adjusted p over all slices (labelled as such: the
gate's own Holm families are critical and non-critical slices), the paired difference with Newcombe's
interval), under it the largest clusters of broken and fixed rows (what the
graders found, :func:`goldenkit.why`), and the flip list; ``--json`` prints
the same as one JSON document (the clusters under ``why``). ``--explain`` asks
the ``[judge]`` for one sentence on each large cluster (:mod:`goldenkit.runner._explain`),
printed under it as the judge's words.

Exit codes: 0 compared · 1 bad input · 4 not comparable (the message names
each key that differs: dataset sha256, repeats, collapse rule, grader or judge
version, row set).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldenkit._display import judge_figures_line, p_value, pct as percent
from goldenkit._text import one_line
from goldenkit.commands._args import ALPHA, gate_defaults
from goldenkit.commands._judge_evidence import _records
from goldenkit.errors import EXIT_INFRASTRUCTURE, InputError
from goldenkit.schema import NEW_FAILURE, RECOVERED

if TYPE_CHECKING:
    from goldenkit.compare import Comparison

#: What each cluster table is about, as the text says it: (status, heading, what a row is).
_CLUSTER_TEXT = (
    (NEW_FAILURE, "why it broke: the NEW_FAILURE rows by the candidate's findings its base did not have", "broken"),
    (RECOVERED, "what it fixed: the RECOVERED rows by the base's findings the candidate no longer has", "fixed"),
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="exit codes: 0 compared, 1 usage or bad input, 3 a side is not evidence (INVALID, incomplete, "
        "rows missing), 4 comparison invalid",
    )
    p.add_argument("base", help="base: run folder, run id, baseline name or baseline .json")
    p.add_argument("cand", help="candidate: run folder, run id, baseline name or baseline .json")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--alpha", type=ALPHA, default=None, help="significance level (default: [gate] alpha, else 0.05)")
    p.add_argument(
        "--rule",
        default=None,
        help="collapse rule: majority, all, any, at_least:K (default: [gate] rule, else majority)",
    )
    p.add_argument("--config", help="goldenkit.toml whose [gate] gives --rule and --alpha (default: the run's)")
    p.add_argument(
        "--by",
        default="slice",
        metavar="slice|tags|COLUMN",
        help="the table's lines: slice (default), tags (a row in each of its tags) or another per-row column",
    )
    p.add_argument("--max-flips", type=int, default=50, help="flips to print (default 50; --json prints all)")
    p.add_argument("--results-dir", default="results", help="folder of run folders (default results)")
    p.add_argument("--baselines-dir", default="baselines", help="folder of baselines (default baselines)")
    p.add_argument("--pairwise-judge", action="store_true", help="also ask the [judge] which answer is better")
    p.add_argument("--markdown", metavar="FILE", help="also write a Markdown summary for a pull request (- for stdout)")
    p.add_argument(
        "--explain",
        action="store_true",
        help="ask the [judge] for one sentence on each cluster of at least 3 rows (marked as the judge's words; "
        "cached in the candidate's run folder)",
    )
    p.set_defaults(func=compare_command)


def _points(x: Any, low: Any, high: Any, *, signed: bool = False) -> str:
    """A rate (or a difference) in points with its interval's ends: ``87.5 [80.1, 92.6]``."""
    return f"{percent(x, unit='', signed=signed)} [{percent(low, unit='')}, {percent(high, unit='')}]"


def format_clusters(cmp: Comparison, top: int = 5, explained: dict[str, str] | None = None) -> list[str]:
    """The ``top`` largest per-slice clusters of broken rows, then of fixed rows, one line each
    (``refunds: 7 of 8 broken rows — trajectory: lookup_order was not called before the answer``);
    ``explained``: a judge's sentence per cluster id, printed under its line, marked as the judge's."""
    from goldenkit.compare import why
    from goldenkit.stats import OVERALL

    lines: list[str] = []
    for status, heading, noun in _CLUSTER_TEXT:
        table = why(cmp, status=status)
        table = table[table["slice"] != OVERALL].head(top)
        if table.empty:
            continue
        lines += ["", f"{heading} (goldenkit.why):"]
        for r in table.to_dict(orient="records"):
            more = ", ..." if r["rows"] > len(r["examples"]) else ""
            lines.append(
                f"  {r['slice']}: {r['rows']} of {r['of']} {noun} rows — {one_line(r['what'], 110)} "
                f"({', '.join(r['examples'])}{more})"
            )
            said = (explained or {}).get(r["cluster_id"])
            if said:
                lines.append(f"    the judge's words: {one_line(said, 160)}")
    return lines


def format_comparison(cmp: Comparison, max_flips: int = 50, explained: dict[str, str] | None = None) -> str:
    """The comparison as text: header, notes, slice table, the largest clusters, flip list."""
    from goldenkit.compare import HOLM_FAMILY

    lines = [f"base: {cmp.base_id}   candidate: {cmp.cand_id}   rule: {cmp.rule}   alpha: {cmp.alpha}"]
    lines += [f"note: {n}" for n in cmp.notes]
    t = cmp.table
    rows = []
    for _, r in t.iterrows():
        rows.append(
            [
                str(r[cmp.by]),
                str(int(r["rows"])),
                _points(r["p_base"], r["base_ci_low"], r["base_ci_high"]),
                _points(r["p_cand"], r["cand_ci_low"], r["cand_ci_high"]),
                str(int(r["b"])),
                str(int(r["c"])),
                p_value(r["p_val"]),
                p_value(r["p_adj"]),
                _points(r["diff"], r["diff_ci_low"], r["diff_ci_high"], signed=True)
                if not math.isnan(float(r["diff"]))
                else "n/a",
            ]
        )
    head = [cmp.by, "rows", "base % [95% CI]", "cand % [95% CI]", "b", "c", "p", "p_holm_all", "diff pts [95% CI]"]
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(head)]
    lines.append("")
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for x in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip(x, widths, strict=True)))
    lines.append("b = broke (PASS -> FAIL), c = fixed (FAIL -> PASS); p = two-sided exact McNemar")
    lines.append(
        f"p_holm_all = Holm-adjusted over {HOLM_FAMILY} ({len(t) - 1}); the gate tests the overall table and "
        "its critical slices in one Holm family of one-sided tests (see goldenkit gate)"
    )
    lines += format_clusters(cmp, explained=explained)
    f = cmp.flips
    lines.append("")
    lines.append(f"flips ({len(f)}):" if len(f) else "flips: none")
    for rec in f.head(max_flips).to_dict(orient="records"):
        tags = f" tags={','.join(rec['tags'])}" if rec["tags"] else ""
        lines.append(f"{rec['status']:<14} {rec['row_id']}  [{rec['slice']}]{tags}")
        for side in ("base", "cand"):
            reasons = rec[f"{side}_reasons"] or {}
            why = "; ".join(f"{k}: {v}" for k, v in reasons.items())
            said = one_line(rec[f"{side}_response"], 100)
            lines.append(f"    {side} {rec[f'{side}_verdict']}: {said!r}  {one_line(why, 80)}")
    if len(f) > max_flips:
        lines.append(f"... {len(f) - max_flips} more (use --max-flips or --json)")
    return "\n".join(lines)


def compare_command(args: argparse.Namespace) -> int:
    import pandas as pd

    from goldenkit.baselines import resolve_run_or_baseline
    from goldenkit.compare import compare_runs
    from goldenkit.results import runs_usage_change

    base = resolve_run_or_baseline(args.base, args.results_dir, args.baselines_dir)
    cand = resolve_run_or_baseline(args.cand, args.results_dir, args.baselines_dir)
    gate_defaults(args, cand)
    cmp = compare_runs(base, cand, rule=args.rule, alpha=args.alpha, by=args.by)
    explained = _explained(args, cmp, cand) if getattr(args, "explain", False) else None
    pairwise = None
    if getattr(args, "pairwise_judge", False):
        from goldenkit.commands._pairwise_judge import format_pairwise, pairwise_for_compare

        pairwise = pairwise_for_compare(base, cand, getattr(args, "config", None))
    judged = _judge_pair(cmp, base, cand)
    change = runs_usage_change(base, cand)  # the paired change per row in tokens and latency
    if args.json:
        doc = {**cmp.to_dict(), "why": {st: _cluster_records(cmp, st, explained) for st, _, _ in _CLUSTER_TEXT}}
        if change is not None:
            # NaN (no interval from fewer than two rows) is not JSON: null
            doc["usage_change"] = json.loads(change.reset_index().to_json(orient="records", double_precision=15))
        if judged is not None:
            doc["judge_graded"] = _records(judged)
        if pairwise is not None:
            doc["pairwise"] = pairwise.to_dict()
        print(json.dumps(doc, indent=2, ensure_ascii=False, default=str))
    else:
        with pd.option_context("display.width", 200):
            print(format_comparison(cmp, args.max_flips, explained=explained))
        if change is not None:
            from goldenkit.results import paired_usage_line

            print("\n" + paired_usage_line(change))
        if judged is not None:
            print("\n" + format_judge_pair(judged))
        if pairwise is not None:
            print("\n" + format_pairwise(pairwise))
    if getattr(args, "markdown", None):
        from goldenkit.report import compare_markdown

        text = compare_markdown(cmp)
        if args.markdown == "-":
            sys.stdout.write(text)
        else:
            Path(args.markdown).write_text(text, encoding="utf-8")
    return _evidence_exit(cmp)


def _judge_pair(cmp: Comparison, base: Any, cand: Any) -> Any:
    """The judge-graded difference of a pair graded by the same judge (``judge_pair``), else None; labels that
    cannot be read (given on other answers) are said on stderr, as report.html says them, not fatal."""
    from goldenkit.results import judge_pair

    by = cmp.by if cmp.by != "tags" else "slice"  # the judge's figures group by a per-row value
    try:
        return judge_pair(cand, base, by=by, alpha=cmp.alpha, rule=cmp.rule)
    except InputError as exc:
        print(f"judge-graded figures not shown: {exc}", file=sys.stderr)
        return None


def format_judge_pair(table: Any) -> str:
    """The judge-graded difference (candidate minus baseline, same judge), one line per group, overall
    first: the judge-only figure beside the prediction-powered one (:func:`goldenkit._display.judge_figures_line`)."""
    from goldenkit.stats import OVERALL

    keys = [OVERALL, *(k for k in table.index if k != OVERALL)]
    lines = ["judge-graded difference (candidate minus baseline, same judge; human labels correct the judge):"]
    return "\n".join(lines + [f"  {k}: {judge_figures_line(table, k, diff=True)}" for k in keys])


def _explained(args: argparse.Namespace, cmp: Comparison, cand: Any) -> dict[str, str]:
    """``--explain``: the [judge]'s sentence per large cluster (:mod:`goldenkit.runner._explain`); a cluster the judge
    left without words is said on stderr and changes nothing else."""
    from goldenkit.config import config_for_run
    from goldenkit.runner import explain_clusters

    manifest = getattr(cand, "manifest", None)
    cfg = config_for_run(
        getattr(args, "config", None), manifest if isinstance(manifest, dict) else None, getattr(cand, "path", None)
    )
    got = explain_clusters(cmp, cand, cfg)
    for note in got.notes:
        print(f"goldenkit compare --explain: {note}", file=sys.stderr)
    return got.words


def _cluster_records(cmp: Comparison, status: str, explained: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The cluster table as records; with ``explained``, a cluster the judge summarised has ``judge_words``."""
    from goldenkit.compare import why

    table = why(cmp, status=status)
    out = [{k: (int(v) if k in ("rows", "of") else v) for k, v in r.items()} for r in table.to_dict("records")]
    for rec in out:
        if explained and rec["cluster_id"] in explained:
            rec["judge_words"] = explained[rec["cluster_id"]]
    return out


def _shard_problems(man: dict[str, Any]) -> list[str]:
    """A shard is a part of its run: compared alone it is not the run's evidence (said first)."""
    shard = man.get("shard")
    if not shard or man.get("merged_from"):
        return []
    part = f"{shard.get('k')}/{shard.get('n')}" if isinstance(shard, dict) else str(shard)
    return [f"shard {part} of a sharded run: merge its shards first (goldenkit merge RUN_ID SHARD ...), then compare"]


def _evidence_exit(cmp: Comparison) -> int:
    """3 (naming the side, on stderr) when a side is INVALID or incomplete or the candidate lost rows, else 0."""
    from goldenkit.compare import side_problems

    sides = (("base", cmp.base_id, cmp.base_manifest), ("candidate", cmp.cand_id, cmp.cand_manifest))
    problems = [f"{label} {cmp_id}: {why}" for label, cmp_id, man in sides for why in _shard_problems(man)]
    tables = {"base": cmp.base_collapsed, "candidate": cmp.cand_collapsed}
    problems += [
        f"{label} {cmp_id}: {why}"
        for label, cmp_id, man in sides
        for why in side_problems(man, tables[label], candidate=label == "candidate")
    ]
    missing = int((cmp.ledger.rows["cand_status"] == "MISSING").sum())
    if missing:
        problems.append(f"candidate {cmp.cand_id}: {missing} of the baseline's rows have no outcome (MISSING)")
    for p in problems:
        print(f"goldenkit compare: not evidence: {p}", file=sys.stderr)
    return EXIT_INFRASTRUCTURE if problems else 0
