"""Many runs at once: which differences between models or prompts are evidence.

* :mod:`goldenkit.leaderboards._alignment`: the runs' rows aligned, their protocol keys checked.
* :mod:`goldenkit.leaderboards._ranking`: :func:`leaderboard` (Wilson intervals, paired exact McNemar
  with Holm, rank intervals and groups).
* :mod:`goldenkit.leaderboards._passk`: pass@k and pass^k.
* :mod:`goldenkit.leaderboards._pairwise`: a judge's pairwise preference for open-ended rows.
* :mod:`goldenkit.leaderboards._frontier`: the quality-cost frontier and its paired bootstrap.
* :mod:`goldenkit.leaderboards._report`: what the leaderboard notebook and pages display.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
