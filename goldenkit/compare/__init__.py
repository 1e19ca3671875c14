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

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit._registry import lazy_attributes

if TYPE_CHECKING:  # the real imports, for type checkers and IDEs
    from goldenkit._protocol_key import (
        comparability_differences,
        protocol_differences,
        protocol_key,
        protocol_sha256,
    )
    from goldenkit.compare._clusters import CLUSTER_COLUMNS, why
    from goldenkit.compare._ledger import LEDGER_STATUSES, Ledger, evidence_ledger
    from goldenkit.compare._runs import FLIP_STATUSES, HOLM_FAMILY, STATUSES, Comparison, compare_runs

# the protocol key is read by the runner before its first call: importing it loads no pandas
_LAZY = {
    **dict.fromkeys(("CLUSTER_COLUMNS", "why"), "goldenkit.compare._clusters"),
    **dict.fromkeys(("LEDGER_STATUSES", "Ledger", "evidence_ledger"), "goldenkit.compare._ledger"),
    **dict.fromkeys(
        ("comparability_differences", "protocol_differences", "protocol_key", "protocol_sha256"),
        "goldenkit._protocol_key",
    ),
    **dict.fromkeys(
        ("FLIP_STATUSES", "HOLM_FAMILY", "STATUSES", "Comparison", "compare_runs"), "goldenkit.compare._runs"
    ),
}

__all__ = [
    "CLUSTER_COLUMNS",
    "FLIP_STATUSES",
    "HOLM_FAMILY",
    "LEDGER_STATUSES",
    "STATUSES",
    "Comparison",
    "Ledger",
    "comparability_differences",
    "compare_runs",
    "evidence_ledger",
    "protocol_differences",
    "protocol_key",
    "protocol_sha256",
    "why",
]

__getattr__ = lazy_attributes(__name__, _LAZY)
