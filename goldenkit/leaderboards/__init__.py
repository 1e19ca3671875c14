"""Many runs at once: which differences between models or prompts are evidence.

* :mod:`goldenkit.leaderboards._alignment`: the runs' rows aligned, their protocol keys checked.
* :mod:`goldenkit.leaderboards._ranking`: :func:`leaderboard` (Wilson intervals, paired exact McNemar
  with Holm, rank intervals and groups).
* :mod:`goldenkit.leaderboards._passk`: pass@k and pass^k.
* :mod:`goldenkit.leaderboards._pairwise`: a judge's pairwise preference for open-ended rows.
* :mod:`goldenkit.leaderboards._frontier`: the quality-cost frontier and its paired bootstrap.
* :mod:`goldenkit.leaderboards._report`: what the leaderboard notebook and pages display.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.leaderboards._passk import pass_at_k
    from goldenkit.leaderboards._ranking import Leaderboard, leaderboard
    from goldenkit.leaderboards._report import (
        cost_table,
        difference_matrix,
        format_leaderboard_table,
        frontier_figure,
        frontier_line,
        interval_figure,
        notes_block,
        slice_leaderboards,
    )

_LAZY = {
    "Leaderboard": "goldenkit.leaderboards._ranking",
    "leaderboard": "goldenkit.leaderboards._ranking",
    "pass_at_k": "goldenkit.leaderboards._passk",
    **{
        name: "goldenkit.leaderboards._report"
        for name in (
            "cost_table",
            "difference_matrix",
            "format_leaderboard_table",
            "frontier_figure",
            "frontier_line",
            "interval_figure",
            "notes_block",
        )
    },
    "slice_leaderboards": "goldenkit.leaderboards._report",
}

__all__ = [
    "Leaderboard",
    "cost_table",
    "difference_matrix",
    "format_leaderboard_table",
    "frontier_figure",
    "frontier_line",
    "interval_figure",
    "leaderboard",
    "notes_block",
    "pass_at_k",
    "slice_leaderboards",
]

__getattr__ = lazy_attributes(__name__, _LAZY)
