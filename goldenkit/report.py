"""What the notebooks display, as functions with tests.

Every table, plot and statement in ``notebooks/*.ipynb`` comes from a function
here; the notebooks only call them and show the result. Statistics come from
:mod:`goldenkit.stats` and :mod:`goldenkit.compare` (this module computes none
of its own beyond counting and formatting).

Tables are DataFrames (they render escaped: ``DataFrame.to_html`` escapes by
default). Where a layout needs real HTML (the side-by-side flip list, the audit
sample, banners) it is built here with :func:`html.escape` on every piece of
model output or dataset text and returned as :class:`HTMLBlock`, a ``str``
that Jupyter renders as HTML.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from goldenkit import stats
from goldenkit.compare import FLIP_STATUSES, HOLM_FAMILY, compare_runs
from goldenkit.display import STYLE, HTMLBlock
from goldenkit.errors import ComparisonInvalid, InputError
from goldenkit.metrics import grader_results
from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED

if TYPE_CHECKING:
    from matplotlib.figure import Figure

OVERALL = stats.OVERALL


# ---------------------------------------------------------------- notebook setup


def figure_png(fig: Figure) -> bytes:
    """A matplotlib Figure as PNG bytes (what Jupyter and the HTML report show)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return buf.getvalue()


def setup_notebook() -> None:
    """Display settings for goldenkit's notebooks: Figures render as PNG, long tables are not cut.

    Figures built here do not use pyplot, so nothing registers their display
    unless this does; without an IPython kernel it only sets pandas options.
    """
    pd.set_option("display.max_rows", 500)
    pd.set_option("display.max_columns", 50)
    pd.set_option("display.max_colwidth", 200)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return
    ip = get_ipython()
    if ip is None:
        return
    from matplotlib.figure import Figure

    ip.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


# ---------------------------------------------------------------- formatting helpers


def pct(x: float | None, digits: int = 1) -> str:
    """``0.875 -> '87.5%'``; missing values (None/NaN) as an en dash."""
    if x is None or pd.isna(x):
        return "–"
    return f"{100 * float(x):.{digits}f}%"


def interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """``(0.8445, 0.9083) -> '[84.4%, 90.8%]'``."""
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "–"
    return f"[{pct(low, digits)}, {pct(high, digits)}]"


def signed_pct(x: float | None, digits: int = 1) -> str:
    """A difference in percentage points with its sign: ``0.01 -> '+1.0 pp'``."""
    if x is None or pd.isna(x):
        return "–"
    return f"{100 * float(x):+.{digits}f} pp"


def p_value(p: float | None) -> str:
    """Exact-enough p-value text: 4 significant digits, ``<1e-4`` in scientific notation."""
    if p is None or pd.isna(p):
        return "–"
    p = float(p)
    if p >= 1e-4:
        return f"{p:.4g}"
    return f"{p:.2e}"


def _manifest(run: Any) -> dict[str, Any]:
    if isinstance(run, Mapping):
        return dict(run)
    manifest = getattr(run, "manifest", None)
    if not isinstance(manifest, Mapping):
        raise InputError(f"not a run: {run!r}")
    return dict(manifest)


# ---------------------------------------------------------------- run key and validity


def run_key_table(run: Any) -> pd.DataFrame:
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
        ("run id", str(m.get("run_id", ""))),
        ("validity", validity_statement(m)),
        ("dataset", f"{ds.get('name', '?')} {ds.get('version', '')}".strip()),
        ("dataset sha256", str(ds.get("sha256", ""))),
        ("agent git commit", str(agent.get("git_commit") or "–")),
        ("model", str(agent.get("model_id") or "–")),
        ("prompt sha256", str(agent.get("prompt_sha256") or "–")),
        ("judge version", str(m.get("judge_version") or "–")),
        ("graders", ", ".join(f"{k} {v}" for k, v in sorted(graders.items())) or "–"),
        ("repeats", str(m.get("repeats", "–"))),
        (
            "sample",
            ", ".join(f"{k}={v}" for k, v in sample.items() if v is not None) or "all rows",
        ),
        ("mode", str(m.get("mode") or "–")),
        ("provider", str(provider.get("name") or "–")),
        (
            "outcomes",
            ", ".join(f"{k} {counts.get(k, 0)}" for k in (PASS, FAIL, ERROR, SKIPPED))
            + f" (total {counts.get('total', '?')} of {counts.get('expected', '?')} expected)",
        ),
        ("error rate", f"{pct(m.get('error_rate'), 2)} (max {pct(m.get('max_error_rate'), 2)})"),
        ("started", str(m.get("started_at") or "–")),
        ("ended", str(m.get("ended_at") or "–")),
        ("complete", "yes" if m.get("complete") else "no (partial run)"),
    ]
    return pd.DataFrame(rows, columns=["field", "value"]).set_index("field")


def validity_statement(run: Any) -> str:
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


def validity_banner(run: Any) -> HTMLBlock:
    """The validity statement as a coloured banner."""
    m = _manifest(run)
    ok = m.get("validity") == "VALID"
    cls = "gk-banner gk-banner-ok" if ok else "gk-banner gk-banner-bad"
    return HTMLBlock(f'{STYLE}<div class="{cls}">{escape(validity_statement(m))}</div>')


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
) -> Figure:
    """Pass rate per slice with asymmetric Wilson error bars; the overall line drawn in black.

    ``table`` is a :func:`goldenkit.stats.slice_table` result. A slice with no
    graded row has no point (its label says n=0). Returns a matplotlib Figure
    (built without pyplot, so nothing global is touched; Jupyter displays it).
    """
    from matplotlib.figure import Figure

    t = table
    labels = [str(x) for x in t[by]]
    rate = t["p_hat"].to_numpy(dtype=float)
    low = t["ci_low"].to_numpy(dtype=float)
    high = t["ci_high"].to_numpy(dtype=float)
    n = t["n"].to_numpy()
    y = np.arange(len(labels))[::-1]
    fig = Figure(figsize=(7, 0.42 * len(labels) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    err = np.vstack([np.clip(rate - low, 0, None), np.clip(high - rate, 0, None)])
    overall = np.array([lab == OVERALL for lab in labels], dtype=bool)
    for mask, color in ((~overall, "tab:blue"), (overall, "black")):
        if mask.any():
            ax.errorbar(rate[mask], y[mask], xerr=err[:, mask], fmt="o", color=color, capsize=3, markersize=5)
    ax.set_yticks(y, [f"{lab} (n={int(k)})" for lab, k in zip(labels, n, strict=True)])
    ax.set_xlim(-0.02, 1.02)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{100 * v:.0f}%")
    ax.set_xlabel("pass rate over rows (repeats collapsed)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title)
    return fig


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


def latency_summary(outcomes: pd.DataFrame, by: str = "slice") -> pd.DataFrame:
    """Latency (ms) and token use per slice and overall, over answered outcomes (not ERROR).

    Columns: outcomes, latency p50/p90/p99/max, mean tokens in and out, total
    tokens in and out, total cost (left out when no provider returned a price), and
    the time to first token p50/p90 of streamed calls (left out when none was streamed).
    """
    df = outcomes[outcomes["verdict"] != ERROR]
    parts = [(str(k), g) for k, g in df.groupby(df[by].astype(str), sort=True)] + [(OVERALL, df)]
    rows = []
    for name, g in parts:
        lat = pd.to_numeric(g["latency_ms"], errors="coerce").dropna()
        tin = pd.to_numeric(g["tokens_in"], errors="coerce")
        tout = pd.to_numeric(g["tokens_out"], errors="coerce")
        cost = pd.to_numeric(g["cost"], errors="coerce") if "cost" in g.columns else pd.Series(dtype=float)
        ttft = pd.to_numeric(g["ttft_ms"], errors="coerce").dropna() if "ttft_ms" in g.columns else lat.iloc[:0]
        q = lat.quantile([0.5, 0.9, 0.99]) if len(lat) else pd.Series([np.nan] * 3, index=[0.5, 0.9, 0.99])
        rows.append(
            {
                by: name,
                "outcomes": len(g),
                "latency p50 ms": q[0.5],
                "latency p90 ms": q[0.9],
                "latency p99 ms": q[0.99],
                "latency max ms": lat.max() if len(lat) else np.nan,
                "tokens in (mean)": tin.mean(),
                "tokens out (mean)": tout.mean(),
                "tokens in (total)": tin.sum(min_count=1),
                "tokens out (total)": tout.sum(min_count=1),
                "cost (total)": cost.sum(min_count=1) if len(cost) else np.nan,
                "ttft p50 ms": ttft.quantile(0.5) if len(ttft) else np.nan,
                "ttft p90 ms": ttft.quantile(0.9) if len(ttft) else np.nan,
            }
        )
    out = pd.DataFrame(rows).set_index(by).round(1)
    if out["cost (total)"].isna().all():  # no provider returned a price: no column of blanks
        out = out.drop(columns="cost (total)")
    if out["ttft p50 ms"].isna().all():  # nothing streamed: no TTFT columns
        out = out.drop(columns=["ttft p50 ms", "ttft p90 ms"])
    return out


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


# ---------------------------------------------------------------- audit summaries


def label_error_share(marks: Any, confidence: float = 0.95) -> pd.DataFrame:
    """Per slice and overall: audited failing rows, each label's count, and the label-error share.

    ``marks`` is a list of mark dicts (latest per row is used) or
    :func:`goldenkit.audit.marks_frame` output. The share is label errors over
    all audited rows (``unclear`` ones stay in the denominator, so the share
    is a lower bound while they are unresolved), with its Wilson interval.
    """
    from goldenkit.audit import AUDIT_LABELS, marks_frame

    frame = marks if isinstance(marks, pd.DataFrame) else marks_frame(list(marks))
    cols = ["audited", *AUDIT_LABELS, "label-error share", "95% Wilson", "ci_low", "ci_high"]
    if frame.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="slice"))
    ct = pd.crosstab(frame["slice"].fillna("").astype(str), frame["label"].astype(str))
    ct = ct.reindex(columns=list(AUDIT_LABELS), fill_value=0)
    ct.loc[OVERALL] = ct.sum()
    ct.index.name = "slice"
    ct.columns.name = None
    audited = ct.sum(axis=1)
    k = ct["label_error"].to_numpy()
    lo, hi = stats.wilson_ci(k, audited.to_numpy(), confidence)
    out = pd.DataFrame({"audited": audited}, index=ct.index)
    for lab in AUDIT_LABELS:
        out[lab] = ct[lab]
    out["label-error share"] = [pct(a / b if b else np.nan) for a, b in zip(k, audited, strict=True)]
    out["95% Wilson"] = [interval(a, b) for a, b in zip(lo, hi, strict=True)]
    out["ci_low"] = lo
    out["ci_high"] = hi
    return out


def audit_sample_html(sample: pd.DataFrame) -> HTMLBlock:
    """The papermill view of the audit: each sampled failing row as an escaped side-by-side card."""
    from goldenkit.audit import sample_cards_html

    return sample_cards_html(sample)


# ---------------------------------------------------------------- coverage


def read_traffic(path: str | Path) -> pd.Series:
    """A traffic distribution (slice -> share, summing to 1) from CSV or JSON.

    CSV: a header with ``slice`` and one of ``count`` / ``share`` (or exactly two
    columns: slice, then the number). JSON: an object ``{"slice": number}`` or a
    list of ``{"slice": ..., "count"|"share": ...}``. Counts and shares are
    normalized the same way; a negative or non-numeric value, a duplicate slice,
    or a zero total is an InputError naming the file.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{p}: cannot read traffic file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{p}: invalid JSON: {exc}") from None
        if isinstance(data, dict):
            pairs = list(data.items())
        elif isinstance(data, list) and all(isinstance(d, dict) for d in data):
            key = "count" if data and "count" in data[0] else "share"
            try:
                pairs = [(d["slice"], d[key]) for d in data]
            except KeyError as exc:
                raise InputError(f"{p}: every entry needs 'slice' and '{key}' (missing {exc})") from None
        else:
            raise InputError(f"{p}: expected an object slice -> count or a list of {{slice, count}}")
    else:
        import csv
        import io

        reader = list(csv.reader(io.StringIO(text)))
        if not reader:
            raise InputError(f"{p}: empty traffic file")
        header = [h.strip().lower() for h in reader[0]]
        if "slice" in header:
            si = header.index("slice")
            vi = next((header.index(c) for c in ("count", "share", "traffic", "n") if c in header), None)
            if vi is None:
                if len(header) != 2:
                    raise InputError(f"{p}:1: header needs 'slice' and 'count' or 'share'")
                vi = 1 - si
            body = reader[1:]
            start = 2
        else:
            si, vi, body, start = 0, 1, reader, 1
        pairs = []
        for i, rec in enumerate(body, start=start):
            if not rec or not "".join(rec).strip():
                continue
            if len(rec) <= max(si, vi):
                raise InputError(f"{p}:{i}: expected slice and a number")
            pairs.append((rec[si].strip(), rec[vi].strip()))
    values: dict[str, float] = {}
    for name, raw in pairs:
        try:
            v = float(raw)
        except (TypeError, ValueError):
            raise InputError(f"{p}: slice {name!r}: {raw!r} is not a number") from None
        if not np.isfinite(v) or v < 0:
            raise InputError(f"{p}: slice {name!r}: traffic must be a non-negative number, got {raw!r}")
        if str(name) in values:
            raise InputError(f"{p}: slice {name!r} appears twice")
        values[str(name)] = v
    total = sum(values.values())
    if total <= 0:
        raise InputError(f"{p}: traffic total is 0")
    return pd.Series(values, name="traffic share", dtype=float) / total


def coverage_table(
    slice_counts: pd.Series | pd.DataFrame,
    traffic: pd.Series,
    *,
    delta: float = 0.05,
    discordance: float = 0.10,
    alpha: float = 0.05,
    power: float = 0.8,
    min_ratio: float = 0.5,
) -> pd.DataFrame:
    """The dataset's slice distribution against traffic, with planning numbers per slice.

    ``slice_counts`` is rows per slice (a Series, or a dataset's ``rows``
    DataFrame); ``traffic`` is shares from :func:`read_traffic`. Per slice (the
    union of both; traffic-only slices have 0 rows):

    * ``rows``, ``dataset share``, ``traffic share`` and ``ratio`` (dataset/traffic share);
    * ``under-tested``: traffic sends it requests and its dataset share is below
      ``min_ratio`` times its traffic share (a slice with traffic and no rows always is);
    * ``rows needed``: rows a paired McNemar comparison needs to detect a change
      of ``delta`` in pass rate with the given ``power`` at ``alpha``, when about
      ``discordance`` of rows flip (:func:`goldenkit.stats.rows_needed`: the exact
      power of the exact McNemar test the gate uses, not Connor's approximation),
      and ``rows short`` = max(0, needed - rows);
    * ``detectable change``: the smallest change the slice's current rows detect
      (:func:`goldenkit.stats.min_detectable_effect`, exact power), blank when even a change of
      ``discordance`` is out of reach.
    """
    if isinstance(slice_counts, pd.DataFrame):
        counts = slice_counts["slice"].astype(str).value_counts()
    else:
        counts = slice_counts.astype("int64")
    names = sorted(set(counts.index.astype(str)) | set(traffic.index.astype(str)))
    rows = counts.reindex(names, fill_value=0).astype("int64")
    tshare = traffic.reindex(names, fill_value=0.0).astype(float)
    total = int(rows.sum())
    dshare = rows / total if total else rows.astype(float)
    needed = stats.rows_needed(delta, discordance, alpha=alpha, power=power)
    mde = []
    for n in rows:
        v = stats.min_detectable_effect(int(n), discordance, alpha=alpha, power=power) if n > 0 else np.nan
        mde.append(v)
    ratio = np.where(tshare > 0, dshare / tshare.where(tshare > 0, 1.0), np.nan)
    out = pd.DataFrame(
        {
            "rows": rows.to_numpy(),
            "dataset share": dshare.to_numpy(dtype=float),
            "traffic share": tshare.to_numpy(dtype=float),
            "ratio": np.round(ratio, 2),
            "under-tested": (tshare > 0).to_numpy() & (dshare < min_ratio * tshare).to_numpy(),
            "rows needed": needed,
            "rows short": np.maximum(0, needed - rows.to_numpy()),
            "detectable change": mde,
        },
        index=pd.Index(names, name="slice"),
    )
    out.loc[OVERALL] = [
        total,
        1.0 if total else np.nan,
        float(tshare.sum()),
        np.nan,
        False,
        needed,
        max(0, needed - total),
        stats.min_detectable_effect(total, discordance, alpha=alpha, power=power) if total else np.nan,
    ]
    out.attrs["discordance"] = discordance
    return out


def format_coverage_table(coverage: pd.DataFrame) -> pd.DataFrame:
    """:func:`coverage_table` with shares and detectable changes as percentages and flags as text."""
    out = coverage.copy()
    for col in ("dataset share", "traffic share"):
        out[col] = [pct(x) for x in coverage[col]]
    # no detectable change with rows: even a change as large as the discordance is out of reach
    beyond = f"> {pct(coverage.attrs['discordance'])}" if "discordance" in coverage.attrs else "–"
    out["detectable change"] = [
        pct(x) if not pd.isna(x) else (beyond if n > 0 else "–")
        for x, n in zip(coverage["detectable change"], coverage["rows"], strict=True)
    ]
    out["ratio"] = ["–" if pd.isna(x) else f"{x:.2f}" for x in coverage["ratio"]]
    out["under-tested"] = ["UNDER-TESTED" if bool(x) else "" for x in coverage["under-tested"]]
    return out


def split_rows(rows: pd.DataFrame, split: str | None) -> pd.DataFrame:
    """The dataset rows of one split (``None``: all rows); an unknown split is an InputError."""
    if split is None:
        return rows
    known = sorted(set(rows["split"].astype(str)))
    if split not in known:
        raise InputError(f"no rows in split {split!r}; the dataset has {', '.join(known) or 'no splits'}")
    return rows[rows["split"].astype(str) == split]


def dataset_shares(rows: pd.DataFrame) -> pd.Series:
    """The dataset's own slice shares (the traffic stand-in when no traffic file is given)."""
    counts = rows["slice"].astype(str).value_counts()
    return (counts / counts.sum()).rename("traffic share")


def coverage_statement(
    dataset: Any,
    coverage: pd.DataFrame,
    *,
    delta: float,
    discordance: float,
    alpha: float,
    power: float,
    traffic: str | Path | None = None,
) -> HTMLBlock:
    """One paragraph: the dataset, the planning assumptions and which slices are under-tested or short of rows.

    ``traffic`` names the traffic file the shares came from; None says the
    shares are the dataset's own (nothing can then be under-tested).
    """
    body = coverage.drop(index=OVERALL, errors="ignore")
    under = [str(s) for s in body.index[body["under-tested"].astype(bool)]]
    needed = int(coverage["rows needed"].iloc[0]) if len(coverage) else 0
    short = [str(s) for s in body.index[body["rows short"] > 0]]
    text = (
        f"{getattr(dataset, 'name', '?')} {getattr(dataset, 'version', '') or ''} "
        f"(sha256 {str(getattr(dataset, 'sha256', ''))[:12]}): {int(coverage.loc[OVERALL, 'rows'])} rows in "
        f"{len(body[body['rows'] > 0])} slices. Detecting a change of {pct(delta)} in pass rate with power "
        f"{pct(power, 0)} at alpha {alpha}, when {pct(discordance)} of rows flip, needs {needed} paired rows "
        "(exact power of the exact McNemar test)."
    )
    if traffic is None:
        first = "No traffic file given: traffic shares are the dataset's own, so no slice is flagged."
    else:
        first = f"Under-tested relative to traffic ({Path(traffic).name}): {', '.join(under) if under else 'none'}."
    items = [
        first,
        f"Slices with fewer rows than that: {', '.join(short) if short else 'none'}.",
    ]
    return HTMLBlock(f"<p>{escape(text)}</p><ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>")


def coverage_figure(coverage: pd.DataFrame) -> Figure:
    """Dataset share beside traffic share per slice (under-tested slices marked with '!')."""
    from matplotlib.figure import Figure

    t = coverage.drop(index=OVERALL, errors="ignore")
    d = 100 * t["dataset share"].astype(float).fillna(0.0).to_numpy()
    tr = 100 * t["traffic share"].astype(float).fillna(0.0).to_numpy()
    y = np.arange(len(t))[::-1]
    fig = Figure(figsize=(7, 0.45 * len(t) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    ax.barh(y + 0.2, d, height=0.4, label="dataset", color="tab:blue")
    ax.barh(y - 0.2, tr, height=0.4, label="traffic", color="tab:orange")
    labels = [f"{'! ' if flag else ''}{name}" for name, flag in zip(t.index, t["under-tested"], strict=True)]
    ax.set_yticks(y, labels)
    ax.set_xlabel("share (%)")
    ax.legend(loc="lower right")
    ax.set_title("Slice share: dataset vs traffic (! = under-tested)")
    return fig


@dataclass(frozen=True)
class CoverageReport:
    """What the coverage notebook shows: the dataset, :func:`coverage_table` and its statement.

    Displayed in Jupyter, it shows the statement; ``table`` feeds
    :func:`format_coverage_table` and :func:`coverage_figure`.
    """

    dataset: Any
    table: pd.DataFrame
    statement: HTMLBlock

    def _repr_html_(self) -> str:
        return str(self.statement)


def dataset_coverage(
    dataset: str | Path | Any,
    *,
    split: str | None = None,
    traffic: str | Path | None = None,
    delta: float = 0.05,
    discordance: float = 0.10,
    alpha: float = 0.05,
    power: float = 0.8,
    min_ratio: float = 0.5,
) -> CoverageReport:
    """The coverage notebook in one call: read the dataset, keep ``split``, compare with traffic, plan rows.

    ``dataset`` is a folder or file (read with :func:`goldenkit.dataset.read_dataset`)
    or a Dataset. ``traffic`` is a file for :func:`read_traffic`; without one the
    dataset's own shares stand in (nothing is then under-tested). The planning
    arguments are those of :func:`coverage_table`.
    """
    from goldenkit.dataset import read_dataset

    ds = read_dataset(dataset) if isinstance(dataset, (str, Path)) else dataset
    rows = split_rows(ds.rows, split)
    shares = read_traffic(traffic) if traffic else dataset_shares(rows)
    plan = {"delta": delta, "discordance": discordance, "alpha": alpha, "power": power}
    table = coverage_table(rows, shares, min_ratio=min_ratio, **plan)
    return CoverageReport(ds, table, coverage_statement(ds, table, traffic=traffic, **plan))


# ---------------------------------------------------------------- paired comparison


def try_compare(base: Any, cand: Any, *, rule: str = "majority", alpha: float = 0.05) -> tuple[Any, list[str]]:
    """``(comparison, [])`` from :func:`goldenkit.compare.compare_runs`, or ``(None, differences)``.

    A comparison that is invalid is not an error here: the notebook states
    each differing key instead of a number.
    """
    try:
        return compare_runs(base, cand, rule=rule, alpha=alpha), []
    except ComparisonInvalid as exc:
        return None, list(exc.differences) or [str(exc)]


def comparability_banner(comparison: Any, differences: Sequence[str] = ()) -> HTMLBlock:
    """The comparability statement: what the two sides share, or each reason they cannot be compared."""
    if comparison is None:
        items = "".join(f"<li>{escape(str(d))}</li>" for d in differences)
        return HTMLBlock(
            STYLE + '<div class="gk-banner gk-banner-bad">COMPARISON INVALID: these runs cannot be compared, '
            f"so no difference is reported.</div><ul>{items}</ul>"
        )
    bm = comparison.base_manifest
    ds = bm.get("dataset") or {}
    graders = ", ".join(f"{k} {v}" for k, v in sorted((bm.get("graders") or {}).items())) or "none"
    n_rows = int(comparison.overall["rows"])
    text = (
        f"COMPARABLE: {comparison.base_id} (base) vs {comparison.cand_id} (candidate) on "
        f"{ds.get('name', '?')} {ds.get('version', '')} (sha256 {str(ds.get('sha256', ''))[:12]}), {n_rows} rows, "
        f"{bm.get('repeats')} repeat(s) collapsed by {comparison.rule}, graders {graders}, "
        f"judge {bm.get('judge_version') or 'none'}; alpha {comparison.alpha}."
    )
    notes = "".join(f"<li>{escape(str(n))}</li>" for n in comparison.notes)
    return HTMLBlock(
        f'{STYLE}<div class="gk-banner gk-banner-ok">{escape(text)}</div>' + (f"<ul>{notes}</ul>" if notes else "")
    )


def _nothing(comparison: Any) -> HTMLBlock | None:
    if comparison is None:
        return HTMLBlock("<p>Not shown: the comparison is invalid (see above).</p>")
    return None


def format_compare_table(comparison: Any) -> pd.DataFrame | HTMLBlock:
    """The per-slice and overall comparison table, formatted.

    Both pass rates with Wilson intervals, paired rows, b (broke: PASS -> FAIL),
    c (fixed: FAIL -> PASS), exact McNemar p, Holm-adjusted p across all slices
    (the column names the family; the gate's critical and non-critical families
    are in :func:`gate_table`),
    the paired difference (candidate - base) with Newcombe's interval, and the
    rows left out because of ERROR or SKIPPED.
    """
    empty = _nothing(comparison)
    if empty is not None:
        return empty
    t = comparison.table
    out = pd.DataFrame(index=pd.Index(t["slice"].astype(str), name="slice"))
    out["rows"] = t["rows"].to_numpy()
    for side, label in (("base", "base"), ("cand", "candidate")):
        out[f"{label} pass rate"] = [
            f"{pct(p)} ({int(k)}/{int(n)})"
            for p, k, n in zip(t[f"p_{side}"], t[f"k_{side}"], t[f"n_{side}"], strict=True)
        ]
        out[f"{label} 95% Wilson"] = [
            interval(a, b) for a, b in zip(t[f"{side}_ci_low"], t[f"{side}_ci_high"], strict=True)
        ]
    out["paired rows"] = t["n_paired"].to_numpy()
    out["b (broke)"] = t["b"].to_numpy()
    out["c (fixed)"] = t["c"].to_numpy()
    out["McNemar p"] = [p_value(p) for p in t["p_val"]]
    out[f"Holm p ({HOLM_FAMILY}, {len(t) - 1})"] = [p_value(p) for p in t["p_adj"]]
    out["difference"] = [signed_pct(d) for d in t["diff"]]
    out["95% CI (Newcombe)"] = [
        "–" if pd.isna(a) else f"[{signed_pct(a)}, {signed_pct(b)}]"
        for a, b in zip(t["diff_ci_low"], t["diff_ci_high"], strict=True)
    ]
    left = ("new_error", "error_cleared", "skipped_to_error", "error_to_skipped", "unchanged_error", "skipped")
    out["left out (error/skipped)"] = t[list(left)].sum(axis=1).to_numpy()
    return out


def forest_figure(comparison: Any) -> Figure | HTMLBlock:
    """Forest plot of the paired difference (candidate - base) per slice with Newcombe intervals.

    Slices are drawn in blue, the overall line in black below them, a dashed
    line at zero; labels carry b and c. A slice with no paired row has no point.
    """
    empty = _nothing(comparison)
    if empty is not None:
        return empty
    from matplotlib.figure import Figure

    t = comparison.table
    labels = [
        f"{s} (b={int(b)}, c={int(c)}, n={int(n)})"
        for s, b, c, n in zip(t["slice"], t["b"], t["c"], t["n_paired"], strict=True)
    ]
    est = t["diff"].to_numpy(dtype=float)
    low = t["diff_ci_low"].to_numpy(dtype=float)
    high = t["diff_ci_high"].to_numpy(dtype=float)
    y = np.arange(len(labels))[::-1].astype(float)
    fig = Figure(figsize=(7.5, 0.42 * len(labels) + 1.5), layout="constrained")
    ax = fig.add_subplot()
    err = np.vstack([np.clip(est - low, 0, None), np.clip(high - est, 0, None)])
    overall = (t["slice"].astype(str) == OVERALL).to_numpy()
    for mask, color, marker in ((~overall, "tab:blue", "o"), (overall, "black", "D")):
        if mask.any():
            ax.errorbar(est[mask], y[mask], xerr=err[:, mask], fmt=marker, color=color, capsize=3, markersize=5)
    ax.axvline(0.0, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(y, labels)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{100 * v:+.0f} pp")
    ax.set_xlabel("paired difference in pass rate, candidate - base (95% Newcombe interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"{comparison.cand_id} vs {comparison.base_id}")
    return fig


def _reasons_text(reasons: Any) -> str:
    if reasons is None:
        return ""
    if isinstance(reasons, Mapping):
        return "\n".join(f"{k}: {v}" for k, v in reasons.items() if v is not None and str(v) != "")
    return str(reasons)


def flip_list_html(comparison: Any, *, limit: int | None = 200) -> HTMLBlock:
    """The flip list side by side: per row its status, then base and candidate responses and reasons.

    Order is the comparison's: NEW_FAILURE first, then RECOVERED, NEW_ERROR,
    ERROR_CLEARED (by slice and row id within each). Every text is escaped.
    At most ``limit`` rows are shown; the rest are counted.
    """
    empty = _nothing(comparison)
    if empty is not None:
        return empty
    flips = comparison.flips
    if flips.empty:
        return HTMLBlock("<p>No row changed status between the two runs.</p>")
    counts = flips["status"].astype(str).value_counts()
    order = [s for s in FLIP_STATUSES if s in counts.index] + [s for s in counts.index if s not in FLIP_STATUSES]
    summary = ", ".join(f"{escape(s)} {int(counts[s])}" for s in order)
    shown = flips if limit is None else flips.head(limit)
    head = (
        '<table class="gk-side-by-side"><colgroup><col style="width:16%"><col style="width:42%">'
        '<col style="width:42%"></colgroup><tr><th>row</th>'
        f"<th>base: {escape(str(comparison.base_id))}</th><th>candidate: {escape(str(comparison.cand_id))}</th></tr>"
    )
    body = []
    for rec in shown.to_dict("records"):
        tags = ", ".join(rec.get("tags") or [])
        row_cell = (
            f"<b>{escape(str(rec['status']))}</b><br>{escape(str(rec['row_id']))}<br>"
            f"slice {escape(str(rec['slice']))}" + (f"<br>tags {escape(tags)}" if tags else "")
        )
        sides = []
        for side in ("base", "cand"):
            sides.append(
                f"<td><b>{escape(str(rec[f'{side}_verdict']))}</b>"
                f"<pre>{escape(str(rec.get(f'{side}_response') or ''))}</pre>"
                f"<pre><i>{escape(_reasons_text(rec.get(f'{side}_reasons')))}</i></pre></td>"
            )
        body.append(f'<tr class="gk-status-{escape(str(rec["status"]))}"><td>{row_cell}</td>{"".join(sides)}</tr>')
    more = "" if len(shown) == len(flips) else f"<p>… and {len(flips) - len(shown)} more flipped rows not shown.</p>"
    return HTMLBlock(f"{STYLE}<p>{len(flips)} flipped rows: {summary}.</p>" + head + "".join(body) + "</table>" + more)


def gate_decision(
    run: Any, comparison: Any, differences: Sequence[str] = (), config: Any = None, baseline: Any = None
) -> Any:
    """The quality gate for ``run`` against the compared baseline, with the ``[gate]`` policy of ``config``.

    ``config`` is a goldenkit.toml path or None (the file in the current
    directory, else defaults). An invalid comparison is passed on as such
    (the gate fails with exit 4), never as a missing baseline; ``baseline``
    (the base run or snapshot) lets the gate check that it is evidence even then.
    """
    from goldenkit.config import load_config, section
    from goldenkit.gate import GatePolicy, evaluate_gate

    cfg = load_config(config)
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where)
    invalid = "; ".join(differences) if comparison is None and differences else None
    return evaluate_gate(run, policy=policy, comparison=comparison, baseline=baseline, comparison_invalid=invalid)


def gate_table(decision: Any) -> pd.DataFrame:
    """Every gate rule: result, actual, threshold, why and the evidence it saw; then review slices and
    warnings (slices that are not evidence but not critical)."""
    rows = [
        {
            "rule": r.name,
            "result": "PASS" if r.passed else "FAIL",
            "actual": r.actual,
            "threshold": r.threshold,
            "why": r.detail,
            "evidence": r.evidence,
        }
        for r in decision.rules
    ]
    for s in decision.review:
        rows.append(
            {
                "rule": f"review[{s}]",
                "result": "REVIEW",
                "actual": None,
                "threshold": None,
                "why": "raw p below alpha, not significant after Holm",
                "evidence": "",
            }
        )
    for i, w in enumerate(getattr(decision, "warnings", [])):
        rows.append({"rule": f"warning[{i + 1}]", "result": "WARN", "actual": None, "threshold": None, "why": w,
                     "evidence": ""})  # fmt: skip
    cols = ["rule", "result", "actual", "threshold", "why", "evidence"]
    return pd.DataFrame(rows, columns=cols).set_index("rule")


def gate_banner(decision: Any) -> HTMLBlock:
    """The gate decision in one line: PASSED or FAILED (exit code) and why."""
    cls = "gk-banner gk-banner-ok" if decision.passed else "gk-banner gk-banner-bad"
    return HTMLBlock(f'{STYLE}<div class="{cls}">{escape(decision.summary())} (exit code {decision.exit_code})</div>')


def shown_or_note(table: pd.DataFrame, note: str) -> pd.DataFrame | HTMLBlock:
    """The table, or a one-line note when it is empty (an empty grid reads as a bug)."""
    return HTMLBlock(f"<p>{escape(note)}</p>") if table.empty else table


__all__ = [
    "STYLE",
    "HTMLBlock",
    "OVERALL",
    "CoverageReport",
    "audit_sample_html",
    "comparability_banner",
    "coverage_figure",
    "coverage_statement",
    "coverage_table",
    "dataset_coverage",
    "dataset_shares",
    "errors_and_skips",
    "failure_reasons",
    "figure_png",
    "flaky_table",
    "flip_list_html",
    "forest_figure",
    "format_compare_table",
    "format_coverage_table",
    "format_slice_table",
    "gate_banner",
    "gate_decision",
    "gate_table",
    "interval",
    "label_error_share",
    "latency_summary",
    "p_value",
    "pass_rate_figure",
    "pct",
    "read_traffic",
    "run_key_table",
    "setup_notebook",
    "shown_or_note",
    "signed_pct",
    "split_rows",
    "try_compare",
    "validity_banner",
    "validity_statement",
    "verdict_counts",
]
