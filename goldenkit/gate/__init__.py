"""The gate: a policy in, a decision out, reading only the evidence ledger.

* :mod:`goldenkit.gate.policy`: :class:`GatePolicy` (``[gate]`` of goldenkit.toml),
  :class:`GateRule`, :class:`GateDecision`.
* :mod:`goldenkit.gate.evidence`: is each side evidence (the ledger's account).
* :mod:`goldenkit.gate.evaluate`: :func:`evaluate_gate` and the rules (its docstring lists them).
"""

from __future__ import annotations

from goldenkit.gate.evaluate import evaluate_gate
from goldenkit.gate.policy import GateDecision, GatePolicy, GateRule

__all__ = ["GateDecision", "GatePolicy", "GateRule", "evaluate_gate"]
