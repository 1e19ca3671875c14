"""The comparison of two runs: one protocol key, one evidence ledger, pairing and flips.

* :mod:`goldenkit._protocol_key` (below compare and baselines, which both read
  it): :func:`protocol_key`, everything in a run's manifest that can change a
  verdict, and :func:`protocol_differences`, the one rule for "these two runs
  are the same protocol" (comparability, history, alignment, resume and regrade
  all call it).
* :mod:`goldenkit.compare._runs`: :func:`compare_runs` (the paired comparison).
* :mod:`goldenkit.compare._ledger`: :func:`evidence_ledger`, every in-scope row
  with its status on each side and whether it is paired evidence; every gate
  rule reads it.
* :mod:`goldenkit.compare._flips`: the flip list's texts.
* :mod:`goldenkit.compare._clusters`: :func:`why`, the flipped (or failing) rows grouped by
  what the graders found.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
