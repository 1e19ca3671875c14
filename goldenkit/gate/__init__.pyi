"""goldenkit.gate's public names, listed once: each name and the module it lives in."""

from goldenkit.gate._evaluate import (
    evaluate_gate as evaluate_gate,
)
from goldenkit.gate._policy import (
    DECISION_NAMES as DECISION_NAMES,
    GateDecision as GateDecision,
    GatePolicy as GatePolicy,
    GateRule as GateRule,
)
from goldenkit.gate._replay import (
    ReplayResult as ReplayResult,
    replay_sequential as replay_sequential,
)
from goldenkit.gate._sequential import (
    baseline_values as baseline_values,
    candidate_values as candidate_values,
    sequential_record as sequential_record,
)
from goldenkit.gate._sequential_monitor import (
    sequential_gate as sequential_gate,
)
