"""What ``notebooks/leaderboard.ipynb`` displays, as functions with tests.

Each takes a :class:`goldenkit.leaderboards._ranking.Leaderboard` and returns a DataFrame,
a matplotlib Figure or an :class:`goldenkit.report.HTMLBlock` (escaped text
only), so the notebook makes one call per cell and computes nothing itself:

* :func:`format_leaderboard_table` -- the table with percentages, intervals,
  rank intervals and groups as text;
* :func:`difference_matrix` -- runs x runs: the paired difference row minus
  column in points, marked ``*`` where Holm-adjusted exact McNemar p < alpha;
* :func:`interval_figure` -- a dot-and-interval plot of the pass rates with
  their Wilson intervals, the top group drawn apart;
* :func:`slice_leaderboards` -- per slice, each run's pass rate and group;
* :func:`cost_table` -- per run what a passing row cost (tokens, money with its source), the p50
  latency and the quality-cost frontier (on it, the bootstrap's probability, dominated at 95%);
* :func:`frontier_figure` -- pass rate (Wilson interval) against cost per passing row, the frontier drawn;
* :func:`notes_block` -- the settings and the notes (excluded rows, invalid runs).
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from goldenkit._display import missing, money
from goldenkit._pricing import NO_MONEY
from goldenkit._registry import publish
from goldenkit._run_label import labelled
from goldenkit.leaderboards._frontier import MONEY
from goldenkit.report import STYLE, HTMLBlock, interval, p_value, pct, signed_pct
from goldenkit.stats import OVERALL

__all__ = [
    "cost_table",
    "difference_matrix",
    "format_leaderboard_table",
    "frontier_figure",
    "frontier_line",
    "interval_figure",
    "notes_block",
    "slice_leaderboards",
]


def _rank_text(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}–{hi}"


def format_leaderboard_table(lb: Any) -> pd.DataFrame:
    """One line per run (the index), best first: group, rank interval, pass rate [Wilson], pass@k, pass^k, counts."""
    t = lb.table
    k = int(lb.at_k)
    return pd.DataFrame(
        {
            "run": [labelled(a, b) for a, b in zip(t["label"], t["run_id"], strict=True)],  # the label first
            "group": t["group"],
            "rank": [_rank_text(a, b) for a, b in zip(t["rank_low"], t["rank_high"], strict=True)],
            "model": t["model"],
            "passed / graded rows": [f"{a} / {b}" for a, b in zip(t["k"], t["n"], strict=True)],
            "pass rate": [pct(x) for x in t["pass_rate"]],
            "95% Wilson": [interval(a, b) for a, b in zip(t["ci_low"], t["ci_high"], strict=True)],
            f"pass@{k}": [pct(x) for x in t["pass_at_k"]],
            f"pass^{k}": [pct(x) for x in t["pass_hat_k"]],
            "error rows": t["errors"],
        }
    ).set_index("run")


def difference_matrix(lb: Any) -> pd.DataFrame:
    """Paired difference (row run minus column run) in points; ``*`` marks Holm-adjusted p < alpha."""
    ids = [str(r) for r in lb.table["run_id"]]
    cells = pd.DataFrame("", index=pd.Index(ids, name="run"), columns=ids)
    for p in lb.pairs.to_dict("records"):
        mark = " *" if p["significant"] else ""
        cells.loc[p["a"], p["b"]] = f"{signed_pct(p['diff'])}{mark} (p_holm {p_value(p['p_adj'])})"
        cells.loc[p["b"], p["a"]] = f"{signed_pct(-p['diff'] if not np.isnan(p['diff']) else np.nan)}{mark}"
    for r in ids:
        cells.loc[r, r] = "·"
    return cells


def interval_figure(lb: Any) -> Figure:
    """Pass rate and 95% Wilson interval per run, best at the top; the top group in black, the rest grey."""
    t = lb.table
    y = np.arange(len(t))[::-1].astype(float)
    est = t["pass_rate"].to_numpy(dtype=float)
    err = np.vstack(
        [np.clip(est - t["ci_low"].to_numpy(float), 0, None), np.clip(t["ci_high"].to_numpy(float) - est, 0, None)]
    )
    top = (t["group"] == "top").to_numpy()
    fig = Figure(figsize=(7.5, 0.45 * len(t) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    for mask, color, label in ((top, "black", "top group"), (~top, "tab:grey", "significantly behind the leader")):
        if mask.any():
            ax.errorbar(est[mask], y[mask], xerr=err[:, mask], fmt="o", color=color, capsize=3, label=label)
    labels = [
        f"{labelled(lab, r)} [{g}, rank {_rank_text(a, b)}]"
        for lab, r, g, a, b in zip(t["label"], t["run_id"], t["group"], t["rank_low"], t["rank_high"], strict=True)
    ]
    ax.set_yticks(y, labels)
    ax.xaxis.set_major_formatter(lambda v, _pos: f"{100 * v:.0f}%")
    ax.set_xlabel(f"pass rate over rows (repeats collapsed by {lb.rule}), 95% Wilson interval")
    ax.grid(axis="x", alpha=0.3)
    ax.set_ylim(-0.6, len(t) - 0.4)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    return fig


def slice_leaderboards(lb: Any) -> pd.DataFrame:
    """Slices x runs: pass rate and group in each slice (``lb`` from ``leaderboard(..., by_slice=True)``)."""
    if "slice" not in lb.table.columns:
        raise ValueError("slice_leaderboards needs a leaderboard computed with by_slice=True")
    t = lb.table
    cells = pd.DataFrame(
        {
            "slice": t["slice"].astype(str),
            "run": t["run_id"].astype(str),
            "cell": [f"{pct(p)} ({g}, n={n})" for p, g, n in zip(t["pass_rate"], t["group"], t["n"], strict=True)],
        }
    )
    order = [s for s in dict.fromkeys(cells["slice"]) if s != OVERALL]
    out = cells.pivot(index="slice", columns="run", values="cell").reindex([OVERALL, *order])
    runs = list(t[t["slice"] == OVERALL]["run_id"])
    return out[runs]


def notes_block(lb: Any) -> HTMLBlock:
    """The settings and every note, as escaped HTML."""
    head = (
        f"{len(lb.table[lb.table.get('slice', pd.Series([OVERALL] * len(lb.table))) == OVERALL])} runs, "
        f"repeats collapsed by {lb.rule}, alpha {lb.alpha} (Holm over all pairs), pass@k and pass^k at k = {lb.at_k}"
    )
    items = "".join(f"<li>{html.escape(n)}</li>" for n in lb.notes)
    body = f"<p>{html.escape(head)}</p>" + (f"<ul>{items}</ul>" if items else "")
    return HTMLBlock(STYLE + f'<div class="gk-card">{body}</div>')


def _overall(lb: Any) -> pd.DataFrame:
    t = lb.table
    return t[t["slice"] == OVERALL].reset_index(drop=True) if "slice" in t.columns else t


#: A cost per passing row of a run that passed no row (it spent without a passing row to show for it).
NONE_PASSED = "none passed"


def _money(x: Any, source: Any) -> str:
    """USD with where it came from; without money, the accounting's label (``n/a (no prices)``)."""
    if missing(x):
        return str(source) if source else NO_MONEY
    return f"{money(x)} ({source})"


def _dominated(flag: Any, by: Any) -> str:
    if missing(flag):
        return NO_MONEY
    return f"yes, by {by}" if flag else "no"


def frontier_line(lb: Any) -> str:
    """What the frontier's cost is and how its probabilities were drawn (or why there is no frontier)."""
    f = lb.frontier or {}
    if not f.get("measure"):
        return "no quality-cost frontier: a run recorded no token count and no price"
    return (
        f"quality-cost frontier: pass rate against {f['measure']}; P(on frontier) from a paired bootstrap "
        f"over rows ({f['resamples']} resamples, seed {f['seed']}); dominated at 95% = one other run beats it "
        "on both in enough resamples to say so at 95% (bootstrap p, Holm over the ordered pairs of runs)"
    )


def cost_table(lb: Any) -> pd.DataFrame:
    """One line per run (the index), best first: pass rate, tokens and money per passing row (money with its
    source, ``n/a`` without a price), p50 latency, and the quality-cost frontier."""
    t = _overall(lb)
    none = (t["k"] == 0).to_numpy()  # no passing row: per passing row is not a number (the frontier: infinite)
    tokens = [
        NONE_PASSED if z else NO_MONEY if missing(x) else f"{float(x):,.0f}"
        for x, z in zip(t["tokens_per_pass"], none, strict=True)
    ]
    priced = [not str(s or NO_MONEY).startswith(NO_MONEY) for s in t["money_source"]]
    money = [
        NONE_PASSED if z and p else _money(x, s)
        for x, s, z, p in zip(t["money_per_pass"], t["money_source"], none, priced, strict=True)
    ]
    return pd.DataFrame(
        {
            "run": [labelled(a, b) for a, b in zip(t["label"], t["run_id"], strict=True)],  # as the main table
            "pass rate": [pct(x) for x in t["pass_rate"]],
            "tokens / passing row": tokens,
            "money / passing row": money,
            "latency p50": [NO_MONEY if missing(x) else f"{float(x):,.0f} ms" for x in t["latency_p50_ms"]],
            "on frontier": [NO_MONEY if missing(x) else ("yes" if x else "no") for x in t["on_frontier"]],
            "P(on frontier)": [pct(x) for x in t["frontier_prob"]],
            "dominated at 95%": [_dominated(f, b) for f, b in zip(t["dominated_95"], t["dominated_by"], strict=True)],
        }
    ).set_index("run")


def frontier_figure(lb: Any) -> Figure:
    """Pass rate (95% Wilson interval) against cost per passing row, one point per run; the frontier's runs
    joined by a line, each point labelled with its run and its probability of being on the frontier."""
    t = _overall(lb)
    measure = (lb.frontier or {}).get("measure")
    fig = Figure(figsize=(7.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    if not measure:
        ax.set_axis_off()
        ax.text(0.5, 0.5, frontier_line(lb), ha="center", va="center", wrap=True)
        return fig
    x = t["money_per_pass" if measure == MONEY else "tokens_per_pass"].to_numpy(dtype=float)
    y = t["pass_rate"].to_numpy(dtype=float)
    err = np.vstack(
        [np.clip(y - t["ci_low"].to_numpy(float), 0, None), np.clip(t["ci_high"].to_numpy(float) - y, 0, None)]
    )
    on = t["on_frontier"].to_numpy(dtype=bool)
    for mask, color, label in ((on, "black", "on the frontier"), (~on, "tab:grey", "beaten on both by another run")):
        if mask.any():
            ax.errorbar(x[mask], y[mask], yerr=err[:, mask], fmt="o", color=color, capsize=3, label=label)
    order = np.argsort(x[on], kind="stable")
    ax.step(x[on][order], y[on][order], where="post", color="black", alpha=0.5, linewidth=1)
    for xi, yi, lab, run, prob in zip(x, y, t["label"], t["run_id"], t["frontier_prob"], strict=True):
        if np.isfinite(xi) and np.isfinite(yi):
            text = f"{labelled(lab, run)} (P {pct(prob)})"  # a label's "$" is a dollar, never TeX
            ax.annotate(text, (xi, yi), textcoords="offset points", xytext=(6, 4), fontsize=8, parse_math=False)
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{100 * v:.0f}%")
    ax.set_xlabel(f"{measure} (lower is cheaper)")
    ax.set_ylabel("pass rate, 95% Wilson interval")
    f = lb.frontier
    ax.set_title(
        f"P = on the frontier in the paired bootstrap ({f['resamples']} resamples, seed {f['seed']})", fontsize=9
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


publish(globals())
