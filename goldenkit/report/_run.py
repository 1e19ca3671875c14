"""What the run report notebook (``report.ipynb``) shows: one run's key, validity, slices, errors and failures.

Statistics come from :mod:`goldenkit.stats` (this module counts and formats only).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import pandas as pd

from goldenkit import stats
from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit._run_label import run_label
from goldenkit.errors import InputError
from goldenkit.metrics import red_metrics_text, run_metrics
from goldenkit.records import grader_results
from goldenkit.report._figure import IntervalFigure, interval_lines
from goldenkit.report._html import MISSING, OVERALL, HTMLBlock, banner, interval, pct
from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED


def _manifest(run: RunLike | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(run, Mapping):
        return dict(run)
    manifest = getattr(run, "manifest", None)
    if not isinstance(manifest, Mapping):
        raise InputError(f"not a run: {run!r}")
    return dict(manifest)


# ---------------------------------------------------------------- run key and validity


def run_key_table(run: RunLike | Mapping[str, Any]) -> pd.DataFrame:
    """The run key, configuration and validity of one run as a two-column table.

    ``run`` is a :class:`goldenkit.results.Run` or its ``run.json`` dict.
    """
    m = _manifest(run)
    ds = m.get("dataset") or {}
    agent = m.get("agent_version") or {}
    sample = m.get("sample") or {}
    provider = m.get("provider") or {}
    counts = m.get("counts") or {}
    graders = m.get("graders") or {}
    rows: list[tuple[str, str]] = [
        ("label", run_label(m)),  # what people read first (goldenkit._run_label), then the id
        ("run id", str(m.get("run_id", ""))),
        ("validity", validity_statement(m)),
        ("dataset", f"{ds.get('name', '?')} {ds.get('version', '')}".strip()),
        ("dataset sha256", str(ds.get("sha256", ""))),
        ("agent git commit", str(agent.get("git_commit") or MISSING)),
        ("model", str(agent.get("model_id") or MISSING)),
        ("prompt sha256", str(agent.get("prompt_sha256") or MISSING)),
        *([("agent artifacts sha256", str(agent["artifacts_sha256"]))] if agent.get("artifacts_sha256") else []),
        ("judge version", str(m.get("judge_version") or MISSING)),
        ("graders", ", ".join(f"{k} {v}" for k, v in sorted(graders.items())) or MISSING),
        ("repeats", str(m.get("repeats", MISSING))),
        (
            "sample",
            ", ".join(f"{k}={v}" for k, v in sample.items() if v is not None) or "all rows",
        ),
        ("mode", str(m.get("mode") or MISSING)),
        *([("regraded from", str(src.get("run_id")))] if isinstance(src := m.get("regraded_from"), dict) else []),
        ("provider", str(provider.get("name") or MISSING)),
        (
            "outcomes",
            ", ".join(f"{k} {counts.get(k, 0)}" for k in (PASS, FAIL, ERROR, SKIPPED))
            + f" (total {counts.get('total', '?')} of {counts.get('expected', '?')} expected)",
        ),
        ("error rate", f"{pct(m.get('error_rate'), 2)} (max {pct(m.get('max_error_rate'), 2)})"),
        ("started", str(m.get("started_at") or MISSING)),
        ("ended", str(m.get("ended_at") or MISSING)),
        ("complete", "yes" if m.get("complete") else "no (partial run)"),
    ]
    return pd.DataFrame(rows, columns=["field", "value"]).set_index("field")


def validity_statement(run: RunLike | Mapping[str, Any]) -> str:
    """One line: is this run evidence? ``VALID ...`` or ``INVALID: reason ...``."""
    m = _manifest(run)
    validity = m.get("validity") or "UNKNOWN"
    counts = m.get("counts") or {}
    total = counts.get("total", 0)
    rate = pct(m.get("error_rate"), 2)
    limit = pct(m.get("max_error_rate"), 2)
    if validity == "VALID":
        partial = "" if m.get("complete") else "; the run is incomplete"
        return f"VALID: {total} outcomes, error rate {rate} (max {limit}){partial}"
    reason = m.get("invalid_reason") or "no reason recorded"
    return f"{validity}: {reason} (error rate {rate}, max {limit}); this run is not evidence"


def validity_banner(run: RunLike | Mapping[str, Any]) -> HTMLBlock:
    """The validity statement as what it is: whether the run is evidence, not its quality. A VALID run's
    banner is neutral (its quality is :func:`goldenkit.report.quality_banner`), any other amber."""
    m = _manifest(run)
    valid = m.get("validity") == "VALID"
    head = "EVIDENCE: " if valid else "NOT EVIDENCE: "
    return banner(head + validity_statement(m), tone="info" if valid else "warn")


# ---------------------------------------------------------------- slice table and plot


def format_slice_table(table: pd.DataFrame, by: str = "slice") -> pd.DataFrame:
    """A :func:`goldenkit.stats.slice_table` result, formatted for reading.

    One line per slice and the overall line: rows, outcome counts per verdict
    (ERROR and SKIPPED apart from FAIL), passed rows of graded rows after
    collapsing repeats, the pass rate with its Wilson interval, the
    attempt-weighted rate beside it (repeats are not independent: shown for
    comparison only), flaky rows, and rows whose repeats all errored.
    """
    t = table
    out = pd.DataFrame(index=pd.Index(t[by].astype(str), name=by))
    out["rows"] = t["rows"].to_numpy()
    for verdict in (PASS, FAIL, ERROR, SKIPPED):
        out[verdict] = t[verdict.lower()].to_numpy()
    out["passed rows"] = [f"{int(k)}/{int(n)}" for k, n in zip(t["k"], t["n"], strict=True)]
    out["pass rate"] = [pct(x) for x in t["p_hat"]]
    out["95% Wilson"] = [interval(a, b) for a, b in zip(t["ci_low"], t["ci_high"], strict=True)]
    out["attempt rate"] = [pct(x) for x in t["attempt_p_hat"]]
    out["flaky rows"] = t["flaky"].to_numpy()
    out["error rows"] = t["error_rows"].to_numpy()
    return out


def pass_rate_figure(
    table: pd.DataFrame, by: str = "slice", *, title: str = "Pass rate per slice (95% Wilson interval)"
) -> IntervalFigure:
    """Pass rate per slice with asymmetric Wilson error bars; the overall line drawn in black.

    ``table`` is a :func:`goldenkit.stats.slice_table` result. A slice with no
    graded row has no point (its label says n=0). Returns an
    :class:`~goldenkit.report.IntervalFigure` (one SVG document: a notebook shows it as an image,
    which an untrusted notebook in JupyterLab keeps; a page embeds it inline).
    """
    t = table
    labels = [str(x) for x in t[by]]
    shown = [f"{lab} (n={int(k)})" for lab, k in zip(labels, t["n"], strict=True)]
    lines = interval_lines(
        shown,
        t["p_hat"].to_numpy(dtype=float),
        t["ci_low"].to_numpy(dtype=float),
        t["ci_high"].to_numpy(dtype=float),
        lambda i: ("black" if labels[i] == OVERALL else "tab:blue", "o"),
    )
    return IntervalFigure(
        title,
        "pass rate over rows (repeats collapsed)",
        lines,
        xlim=(-0.02, 1.02),
        tick_format=lambda v: f"{100 * v:.0f}%",
    )


# ---------------------------------------------------------------- errors, skips, flaky, latency


def errors_and_skips(outcomes: pd.DataFrame, *, examples: int = 3) -> pd.DataFrame:
    """ERROR and SKIPPED outcomes, grouped by verdict, kind and reason; never mixed with FAIL.

    Columns: verdict, kind (transient/permanent for errors), reason (the
    outcome's ``detail``), outcomes, rows, example rows.
    """
    cols = ["verdict", "kind", "reason", "outcomes", "rows", "example rows"]
    df = outcomes[outcomes["verdict"].isin([ERROR, SKIPPED])]
    if df.empty:
        return pd.DataFrame(columns=cols)
    kind = df["error_kind"] if "error_kind" in df.columns else pd.Series("", index=df.index)
    work = pd.DataFrame(
        {
            "verdict": df["verdict"].astype(str),
            "kind": kind.fillna("").astype(str),
            "reason": df["detail"].fillna("").astype(str),
            "row_id": df["row_id"].astype(str),
        }
    )
    grouped = work.groupby(["verdict", "kind", "reason"], sort=False)["row_id"]
    out = grouped.agg(
        outcomes="size",
        rows="nunique",
        **{"example rows": lambda s: ", ".join(sorted(s.unique())[:examples])},
    ).reset_index()
    out["_v"] = out["verdict"].map({ERROR: 0, SKIPPED: 1})
    out = out.sort_values(["_v", "outcomes", "reason"], ascending=[True, False, True], kind="stable")
    return out.drop(columns="_v").reset_index(drop=True)[cols]


def verdict_counts(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Outcomes per verdict and slice (PASS, FAIL, ERROR, SKIPPED columns; an overall row)."""
    ct = pd.crosstab(outcomes["slice"].astype(str), outcomes["verdict"].astype(str))
    ct = ct.reindex(columns=list((PASS, FAIL, ERROR, SKIPPED)), fill_value=0)
    ct.loc[OVERALL] = ct.sum()
    ct.index.name = "slice"
    ct.columns.name = None
    return ct.astype("int64")


def flaky_table(outcomes: pd.DataFrame, rule: str = "majority") -> pd.DataFrame:
    """Rows that passed some but not all graded repeats, with each repeat's verdict.

    Rows and order come from :func:`goldenkit.stats.flaky_rows` (most unstable
    first); columns: slice, passed (of graded repeats), collapsed verdict under
    ``rule``, and the verdicts in repeat order (e.g. ``PASS FAIL PASS``).
    """
    cols = ["row_id", "slice", "passed", "collapsed", "repeats"]
    flaky = stats.flaky_rows(outcomes, rule=rule)
    if flaky.empty:
        return pd.DataFrame(columns=cols).set_index("row_id")
    ids = flaky["row_id"].astype(str)
    sub = outcomes[outcomes["row_id"].astype(str).isin(set(ids))].sort_values(["row_id", "repeat"], kind="stable")
    seq = sub.groupby(sub["row_id"].astype(str), sort=False)["verdict"].agg(lambda v: " ".join(map(str, v)))
    out = pd.DataFrame(
        {
            "row_id": ids.to_numpy(),
            "slice": flaky["slice"].astype(str).to_numpy() if "slice" in flaky.columns else "",
            "passed": [f"{int(k)}/{int(n)}" for k, n in zip(flaky["n_pass"], flaky["n_graded"], strict=True)],
            "collapsed": flaky["verdict"].astype(str).to_numpy(),
            "repeats": [seq.get(r, "") for r in ids],
        }
    )
    return out.set_index("row_id")


def red_rows_block(outcomes: pd.DataFrame) -> HTMLBlock:
    """The red rows (expected failures) apart from the rest: negative-case pass rate and
    hallucination rate with their 95% intervals (:func:`goldenkit.metrics.red_metrics_text`),
    or a note that the run has none (run with ``--red`` to include them).

    >>> print(red_rows_block(pd.DataFrame({"row_id": ["a"], "repeat": [0], "verdict": ["PASS"],
    ...                                    "slice": ["s"], "tags": [[]], "graders": [None]})))
    <p class="note">No red row in this run (red rows run only with --red).</p>
    """
    lines = red_metrics_text(run_metrics(outcomes))
    if not lines:
        return HTMLBlock('<p class="note">No red row in this run (red rows run only with --red).</p>')
    return HTMLBlock("<pre>" + html.escape("\n".join(lines)) + "</pre>")


#: The columns of :func:`latency_summary` and the :func:`goldenkit.results._accounting.accounting` figure each shows.
USAGE_COLUMNS = {
    "outcomes": "outcomes",
    "calls": "calls",
    "latency p50 ms": "latency_p50_ms",
    "latency p95 ms": "latency_p95_ms",
    "ttft p50 ms": "ttft_p50_ms",
    "tokens in": "tokens_in",
    "tokens out": "tokens_out",
    "tokens cached": "tokens_cached",
    "tokens reasoning": "tokens_reasoning",
    "judge calls": "judge_calls",
    "judge tokens in": "judge_tokens_in",
    "judge tokens out": "judge_tokens_out",
    "simulator calls": "simulator_calls",
    "simulator tokens in": "simulator_tokens_in",
    "simulator tokens out": "simulator_tokens_out",
    "passing rows": "passing_rows",
    "tokens per passing row": "tokens_per_passing_row",
    "money (USD)": "total_money",
    "money per passing row": "money_per_passing_row",
    "money from": "total_money_label",
}


def latency_summary(outcomes: pd.DataFrame, by: str = "slice", *, run: RunLike | None = None) -> pd.DataFrame:
    """What the run cost per slice and overall (:func:`goldenkit.results._accounting.accounting`, the one
    function that adds it up): outcomes, calls, latency p50/p95 and time to first token p50 over answered
    outcomes (not ERROR), tokens in, out, cached and reasoning, the judge's and the simulated user's calls
    and tokens apart, passing rows, tokens and money per passing row, and where the money came from
    (``provider``, ``[pricing] SOURCE DATE`` of ``run``'s goldenkit.toml, or ``n/a``). Tokens in and out
    show a dash where nothing was reported; another column no outcome fills (cached tokens a server never
    reported, a judge the run did not have, nothing streamed, no money) is left out.
    """
    from goldenkit.results import accounting, run_pricing

    manifest = getattr(run, "manifest", None)
    prices = run_pricing(manifest, getattr(run, "path", None)) if manifest is not None else None
    figures = accounting(outcomes, prices, by=by, manifest=manifest)  # the run's collapse rule, as run.json's
    out = pd.DataFrame({name: figures[col] for name, col in USAGE_COLUMNS.items()}, index=figures.index)
    shown = ("outcomes", "calls", "latency p50 ms", "tokens in", "tokens out", "passing rows", "money from")
    out = out[[c for c in out.columns if c in shown or out[c].notna().any()]]
    numbers = [c for c in out.columns if c != "money from"]
    out[numbers] = out[numbers].apply(pd.to_numeric, errors="coerce")
    return out.round({c: 1 for c in numbers if c not in ("money (USD)", "money per passing row")})


def failure_reasons(outcomes: pd.DataFrame, *, top: int = 5, examples: int = 3) -> pd.DataFrame:
    """The most common failure reasons per grader, over FAIL outcomes.

    A reason counts for a grader when that grader's result has ``passed`` false.
    Columns: grader, reason, outcomes, rows, example rows; ``top`` reasons per
    grader, most frequent first (ties by reason text).
    """
    cols = ["grader", "reason", "outcomes", "rows", "example rows"]
    df = outcomes[outcomes["verdict"] == FAIL]
    records = []
    for rid, graders in zip(df["row_id"].astype(str), df["graders"], strict=True):
        for name, res in grader_results(graders).items():
            if res.get("passed") is False:
                records.append((name, str(res.get("reason") or "(no reason given)"), rid))
    if not records:
        return pd.DataFrame(columns=cols)
    work = pd.DataFrame(records, columns=["grader", "reason", "row_id"])
    out = (
        work.groupby(["grader", "reason"], sort=False)["row_id"]
        .agg(outcomes="size", rows="nunique", **{"example rows": lambda s: ", ".join(sorted(s.unique())[:examples])})
        .reset_index()
        .sort_values(["grader", "outcomes", "reason"], ascending=[True, False, True], kind="stable")
    )
    out = out.groupby("grader", sort=False).head(top)
    return out.reset_index(drop=True)[cols]


def judge_figures_html(
    run: Any, baseline: Any = None, *, rule: str = "majority", alpha: float = 0.05, by: str = "slice"
) -> HTMLBlock:
    """The judge-graded figures of a run graded by an LLM judge, per ``by`` and overall: the judge-only
    figure beside the prediction-powered one (n human, N judged, lambda, effective sample size gained;
    :func:`goldenkit.results.judge_estimates`); with ``baseline`` graded by the same judge, the paired
    difference (:func:`goldenkit.results.judge_difference`). Nothing (an empty block) for a run without a
    judge grader, or a pair without the same judge."""
    from goldenkit._display import judge_figures_table, table_html
    from goldenkit.results import judge_estimates, judge_graded, judge_pair

    if not judge_graded(run):
        return HTMLBlock("")
    by = by if by != "tags" else "slice"  # the judge's figures group by a per-row value
    try:
        table = judge_estimates(run, by=by, alpha=alpha, rule=rule)
        pair = judge_pair(run, baseline, by=by, alpha=alpha, rule=rule) if baseline is not None else None
    except InputError as exc:
        return HTMLBlock(f"<h2>Judge-graded figures</h2><p>Not shown: {html.escape(str(exc))}</p>")
    what = (
        "The judge's verdicts (judge only: what the judge thinks) beside the prediction-powered estimate of the "
        "human verdict, from human labels drawn by a recorded design (hand-picked labels are shown, never used)."
    )
    parts = [f"<h2>Judge-graded pass rate</h2><p>{html.escape(what)}</p>", table_html(judge_figures_table(table))]
    if pair is not None:
        parts += ["<h3>Paired difference, candidate minus baseline (same judge)</h3>"]
        parts.append(table_html(judge_figures_table(pair, diff=True)))
    return HTMLBlock("".join(parts))


__all__ = [
    "errors_and_skips",
    "failure_reasons",
    "flaky_table",
    "judge_figures_html",
    "format_slice_table",
    "latency_summary",
    "pass_rate_figure",
    "run_key_table",
    "validity_banner",
    "validity_statement",
    "verdict_counts",
]

publish(globals())
