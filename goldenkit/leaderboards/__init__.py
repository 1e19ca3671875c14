"""Many runs at once: which differences between models or prompts are evidence.

* :mod:`goldenkit.leaderboards.alignment`: the runs' rows aligned, their protocol keys checked.
* :mod:`goldenkit.leaderboards.ranking`: :func:`leaderboard` (Wilson intervals, paired exact McNemar
  with Holm, rank intervals and groups).
* :mod:`goldenkit.leaderboards.passk`: pass@k and pass^k.
* :mod:`goldenkit.leaderboards.pairwise`: a judge's pairwise preference for open-ended rows.
* :mod:`goldenkit.leaderboards.report`: what the leaderboard notebook and pages display.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit.registry import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit.leaderboards.passk import pass_at_k
    from goldenkit.leaderboards.ranking import Leaderboard, leaderboard

_LAZY = {
    "Leaderboard": "goldenkit.leaderboards.ranking",
    "leaderboard": "goldenkit.leaderboards.ranking",
    "pass_at_k": "goldenkit.leaderboards.passk",
}

__all__ = ["Leaderboard", "leaderboard", "pass_at_k"]

__getattr__ = lazy_attributes(__name__, _LAZY)
