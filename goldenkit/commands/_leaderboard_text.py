"""The leaderboard as text: the table and pairs `goldenkit leaderboard`, `goldenkit benchmark` and
`goldenkit demo` print, and the number and column formatting `compare --pairwise-judge` shares."""

from __future__ import annotations

import json
import math
from typing import Any

from goldenkit._display import number, p_value, pct as percent
from goldenkit._run_label import labelled

__all__ = ["fmt_columns", "fmt_num", "format_leaderboard", "show"]


def fmt_num(x: Any, pct: bool = True) -> str:
    """A rate as percent with one decimal (``pct=False``: three decimals); ``n/a`` for a missing one."""
    return percent(x, unit="") if pct else number(x, 3)


def fmt_columns(head: list[str], rows: list[list[str]]) -> list[str]:
    """The header and rows as lines of left-aligned columns, two spaces apart."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    return ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in [head, *rows]]


def _rank(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def format_leaderboard(lb: Any) -> str:
    """The leaderboard as text: the table, the pairs, the notes."""
    t = lb.table
    k = int(lb.at_k)
    rows = [
        [
            str(r["group"]),
            _rank(r["rank_low"], r["rank_high"]),
            labelled(r["label"], r["run_id"]),  # the run's label, then its id
            str(r["model"]),
            f"{r['k']}/{r['n']}",
            f"{fmt_num(r['pass_rate'])} [{fmt_num(r['ci_low'])}, {fmt_num(r['ci_high'])}]",
            fmt_num(r["pass_at_k"]),
            fmt_num(r["pass_hat_k"]),
            str(r["errors"]),
        ]
        for r in t.to_dict("records")
    ]
    head = ["group", "rank", "run", "model", "passed", "pass % [95% CI]", f"pass@{k} %", f"pass^{k} %", "error rows"]
    lines = [f"leaderboard: {len(t)} runs, rule {lb.rule}, alpha {lb.alpha}", "", *fmt_columns(head, rows)]
    pair_rows = [
        [
            str(p["a"]),
            str(p["b"]),
            str(p["n_paired"]),
            str(p["b_count"]),
            str(p["c_count"]),
            p_value(p["p_val"]),
            p_value(p["p_adj"]),
            "yes" if p["significant"] else "no",
            f"{100 * p['diff']:+.1f} [{fmt_num(p['diff_ci_low'])}, {fmt_num(p['diff_ci_high'])}]"
            if not math.isnan(p["diff"])
            else "n/a",
        ]
        for p in lb.pairs.to_dict("records")
    ]
    if pair_rows:
        head = ["a", "b", "paired", "b", "c", "p", "p_holm", "significant", "diff pts [95% CI, unadjusted]"]
        lines += ["", "pairs (b = rows a passed and b failed, c = the reverse; exact McNemar, Holm over all pairs):"]
        lines += fmt_columns(head, pair_rows)
        lines.append(
            f"p = exact McNemar of the pair alone (unadjusted); p_holm = Holm-adjusted over the {len(pair_rows)} "
            "pairs (decides significant); the diff interval is the pair's own, not adjusted for the pairs"
        )
    lines.append("")
    lines.append("group top = indistinguishable from the leader (rank interval contains 1)")
    lines += ["", *_cost_lines(lb)]
    lines += [f"note: {n}" for n in lb.notes]
    return "\n".join(lines)


def show(lb: Any, as_json: bool) -> None:
    """Print the leaderboard: as JSON with ``as_json``, else as text."""
    if as_json:
        print(json.dumps(lb.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(format_leaderboard(lb))


def _cost_lines(lb: Any) -> list[str]:
    """What a passing row cost per run and the quality-cost frontier, as the notebook and pages show them."""
    from goldenkit.leaderboards import cost_table, frontier_line

    costs = cost_table(lb).reset_index()
    head = [str(c) for c in costs.columns]
    rows = [[str(v) for v in line] for line in costs.itertuples(index=False)]
    return ["cost and the quality-cost frontier:", *fmt_columns(head, rows), frontier_line(lb)]
