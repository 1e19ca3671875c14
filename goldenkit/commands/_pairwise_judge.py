"""``goldenkit compare --pairwise-judge``: the judge asked which of two runs' answers is better, and its text."""

from __future__ import annotations

from typing import Any

from goldenkit._display import p_value
from goldenkit.commands._leaderboard_text import fmt_columns, fmt_num
from goldenkit.errors import UsageError

__all__ = ["format_pairwise", "pairwise_for_compare"]


def pairwise_for_compare(base: Any, cand: Any, config: str | None = None) -> Any:
    """``goldenkit compare --pairwise-judge``: the [judge] of the goldenkit.toml that applies to BASE
    (``--config``, else :func:`goldenkit.config.config_for_run`) asked which answer is better, both orders
    (see :mod:`goldenkit.leaderboards._pairwise`)."""
    from goldenkit.config import config_for_run, section
    from goldenkit.graders import build_graders
    from goldenkit.leaderboards import pairwise_compare
    from goldenkit.results import Run

    if not isinstance(base, Run) or not isinstance(cand, Run):
        raise UsageError("goldenkit compare --pairwise-judge: BASE and CAND must be runs (a baseline keeps no answers)")
    cfg = config_for_run(config, base.manifest, base.path)
    judge = build_graders({**cfg, "graders": {**section(cfg, "graders"), "use": ["judge"]}})[0]
    return pairwise_compare(base, cand, judge)


def format_pairwise(res: Any) -> str:
    """The pairwise preferences as text: one line per slice, overall first."""
    rows = [
        [
            str(r["slice"]),
            str(r["rows"]),
            str(r["wins"]),
            str(r["losses"]),
            str(r["ties"]),
            str(r["undecided"]),
            str(r["errors"]),
            fmt_num(r["position_bias_rate"]),
            p_value(r["p_val"]),
            p_value(r["p_adj"]),
        ]
        for r in res.table.to_dict("records")
    ]
    head = [
        "slice",
        "rows",
        "cand wins",
        "base wins",
        "ties",
        "undecided",
        "errors",
        "position bias %",
        "p (sign)",
        "p_holm",
    ]
    lines = [f"pairwise judge {res.judge_version}: which answer is better, asked in both orders", ""]
    lines += fmt_columns(head, rows)
    lines.append("a preference counts only when both orders agree; exact sign test on wins vs losses, ties excluded")
    return "\n".join(lines)
