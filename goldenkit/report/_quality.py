"""What the run report leads with: the run's quality, then whether it is evidence.

:func:`quality_banner` is the first thing ``report.ipynb`` shows: the pass rate
over rows with its Wilson interval, the weakest slices, the largest failure
clusters of :func:`goldenkit.why` and the weighted score (a convenience
number, :mod:`goldenkit.metrics._weighted`). Its colour says only what the
numbers say without a gate policy (the gate's decision is in compare.html):

=========  ==================================================================
tone       when
=========  ==================================================================
ok         every graded row passes (green is never shown on a failing run)
bad        some row fails and a slice passes none of its graded rows, or the
           upper end of the overall interval is below 50%
info       some row fails, no slice is at 0%: a statement, not a verdict
warn       the run is not evidence (INVALID, infrastructure failure) or no
           row was graded
=========  ==================================================================

:func:`failure_clusters` is the report's table of failure reasons: the graders'
findings clustered (ten "lookup_order was not called" failures with different
order ids are one cluster of ten rows), and :func:`flaky_note` the sentence shown
when no row is flaky, computed from the run's real repeat count.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from goldenkit import stats
from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit.compare import why
from goldenkit.config import config_for_run
from goldenkit.errors import ConfigError
from goldenkit.metrics import WEIGHTED_SCORE, metric_weights, run_metrics
from goldenkit.report._html import OVERALL, HTMLBlock, banner, interval, pct
from goldenkit.schema import FAIL, PASS

__all__ = ["failure_clusters", "flaky_note", "quality_banner", "weighted_score_line", "worst_slices"]


def worst_slices(table: pd.DataFrame, *, top: int = 3, by: str = "slice") -> pd.DataFrame:
    """The ``top`` slices of a :func:`goldenkit.stats.slice_table` result with the lowest pass rate below the
    overall one (slices with no graded row left out), lowest first (ties: fewer passed rows, then name)."""
    t = table[(table[by].astype(str) != OVERALL) & (table["n"] > 0)]
    overall = table[table[by].astype(str) == OVERALL]
    if t.empty or overall.empty:
        return t.iloc[:0]
    below = t[t["p_hat"] < float(overall["p_hat"].iloc[0])]
    return below.sort_values(["p_hat", "k", by], kind="stable").head(top)


def failure_clusters(
    run: RunLike, *, rule: str = "majority", top: int = 10, examples: int = 3, clusters: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The failing rows of ``run`` (collapsed under ``rule``) grouped by what the graders found
    (:func:`goldenkit.why`), largest first, ``top`` lines: what, failing rows with the finding, their share
    of the failing rows, the slices they are in (with counts) and ``examples`` row ids. A row with several
    findings is in several lines. ``clusters`` is a ``why(run, rule=rule)`` table already computed (its first
    ``examples`` row ids shown)."""
    cols = ["what the graders found", "failing rows", "share of failing rows", "slices", "example rows"]
    w = why(run, rule=rule, examples=examples) if clusters is None else clusters
    overall = w[w["slice"].astype(str) == OVERALL].head(top)
    if overall.empty:
        return pd.DataFrame(columns=cols)
    per_slice = w[w["slice"].astype(str) != OVERALL]
    keys = ["grader", "check", "subject"]
    where: dict[tuple[str, str, str], list[str]] = {}
    for r in per_slice.to_dict("records"):
        where.setdefault((r["grader"], r["check"], r["subject"]), []).append(f"{r['slice']} {r['rows']}")
    out = pd.DataFrame(
        {
            cols[0]: overall["what"].astype(str).to_numpy(),
            cols[1]: overall["rows"].to_numpy(),
            cols[2]: [pct(s) for s in overall["share"]],
            cols[3]: [", ".join(where.get(tuple(r[k] for k in keys), [])) for r in overall.to_dict("records")],
            cols[4]: [", ".join(map(str, ids[:examples])) for ids in overall["examples"]],
        }
    )
    return out


def flaky_note(outcomes: pd.DataFrame, rule: str = "majority") -> str:
    """What the flaky-row table of this run says, in a sentence with the run's own counts: how many rows are
    flaky, or why none is (one repeat per row, or the same verdict on each row's graded repeats)."""
    graded = outcomes[outcomes["verdict"].isin([PASS, FAIL])]
    if graded.empty:
        return "No flaky row: no attempt was graded."
    per_row = graded.groupby(graded["row_id"].astype(str)).size()
    flaky = len(stats.flaky_rows(outcomes, rule=rule))
    if flaky:
        return f"{flaky} of {len(per_row)} rows are flaky: they passed some but not all of their graded repeats."
    most = int(per_row.max())
    if most <= 1:
        repeats = int(outcomes["repeat"].nunique()) if "repeat" in outcomes.columns else 1
        if repeats <= 1:
            return (
                f"No flaky row: with one repeat per row ({len(per_row)} rows) no row can be flaky; "
                "run with --repeats 3 to see them."
            )
        return f"No flaky row: no row had more than one graded repeat of its {repeats} (the others errored or skipped)."
    least = int(per_row.min())
    span = f"{most}" if least == most else f"{least} to {most}"
    return f"No flaky row: each of the {len(per_row)} rows gave the same verdict on its {span} graded repeats."


def _weights(run: RunLike, config: Any) -> tuple[dict[str, float], str]:
    """The ``[metrics] weights`` of ``config`` (found as every command finds it), and a note when a file the run
    recorded could not be read (its weights are then equal: the score is a convenience, not a verdict). A
    file named explicitly, or weights that are wrong, are errors."""
    try:
        cfg = config_for_run(config, getattr(run, "manifest", None), getattr(run, "path", None))
    except ConfigError as exc:
        if config is not None:
            raise
        return {}, f"goldenkit.toml not read: {exc}"
    return metric_weights(cfg), ""


def weighted_score_line(outcomes: pd.DataFrame, weights: Mapping[str, float] | None = None, note: str = "") -> str:
    """The weighted score as the report states it: the number, what it weighs, and that it is no evidence
    (``note``: why the configured weights are not used, said after it)."""
    m = run_metrics(outcomes, weights=weights).set_index("metric")
    score = float(m.loc[WEIGHTED_SCORE, "rate"])
    if math.isnan(score):
        return "weighted score: – (no rate is defined)"
    n = int(m.loc[WEIGHTED_SCORE, "total"])
    how = "equal weights" if not weights else "weights from [metrics] weights"
    return (
        f"weighted score {pct(score)}: a weighted mean of {n} rate{'s' if n != 1 else ''} ({how}); "
        "a convenience number with no error rate, never a gate rule" + (f" ({note})" if note else "")
    )


def _tone(manifest: Mapping[str, Any], table: pd.DataFrame) -> str:
    overall = table[table["slice"].astype(str) == OVERALL]
    if manifest.get("validity") != "VALID" or overall.empty or int(overall["n"].iloc[0]) == 0:
        return "warn"
    k, n = int(overall["k"].iloc[0]), int(overall["n"].iloc[0])
    if k == n:
        return "ok"
    slices = table[(table["slice"].astype(str) != OVERALL) & (table["n"] > 0)]
    if (slices["k"] == 0).any() or float(overall["ci_high"].iloc[0]) < 0.5:
        return "bad"
    return "info"


def quality_banner(
    run: RunLike,
    outcomes: pd.DataFrame,
    *,
    rule: str = "majority",
    config: Any = None,
    slices: int = 3,
    top_clusters: int = 3,
    clusters: pd.DataFrame | None = None,
) -> HTMLBlock:
    """The run's quality first (see the module doc for the colour), from ``run`` and its ``outcomes``
    (``run.outcomes()``): pass rate over rows with its 95%
    Wilson interval, then as items the ``slices`` weakest slices, the ``top_clusters`` largest failure
    clusters (of ``clusters``, a ``why(run, rule=rule)`` table already computed, else computed here) and the
    weighted score (weights from ``[metrics] weights`` of ``config``, found as every
    command finds it); a run that is not evidence says so. Its validity and error rate are
    :func:`goldenkit.report.validity_banner`, shown next."""
    manifest = dict(run.manifest)
    table = stats.slice_table(outcomes, rule=rule)
    tone = _tone(manifest, table)
    row = table.iloc[-1]
    n, k = int(row["n"]), int(row["k"])
    if n == 0:
        head = f"QUALITY: no row was graded ({int(row['error_rows'])} rows errored): no pass rate to show"
    else:
        head = (
            f"QUALITY: {k} of {n} rows pass ({pct(row['p_hat'])}, 95% Wilson "
            f"{interval(row['ci_low'], row['ci_high'])}), repeats collapsed by {rule}"
        )
    items = [
        f"weakest slice {r['slice']}: {pct(r['p_hat'])} ({int(r['k'])}/{int(r['n'])} rows), "
        f"95% Wilson {interval(r['ci_low'], r['ci_high'])}"
        for r in worst_slices(table, top=slices).to_dict("records")
    ]
    if k < n:
        top = failure_clusters(run, rule=rule, top=top_clusters, examples=2, clusters=clusters)
        items += [
            f"{r['failing rows']} of {n - k} failing rows: {r['what the graders found']} (e.g. {r['example rows']})"
            for r in top.to_dict("records")
        ]
    items.append(weighted_score_line(outcomes, *_weights(run, config)))
    if manifest.get("validity") != "VALID":  # said again here: these numbers decide nothing
        items.append(f"{manifest.get('validity') or 'UNKNOWN'}: this run is not evidence (see below)")
    return banner(head, tone=tone, items=items)


publish(globals())
