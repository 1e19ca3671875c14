"""goldenkit.compare's public names, listed once: each name and the module it lives in."""

from goldenkit._protocol_key import (
    comparability_differences as comparability_differences,
    protocol_differences as protocol_differences,
    protocol_key as protocol_key,
    protocol_sha256 as protocol_sha256,
)
from goldenkit.compare._clusters import (
    CLUSTER_COLUMNS as CLUSTER_COLUMNS,
    why as why,
)
from goldenkit.compare._flips import (
    outcome_columns as outcome_columns,
)
from goldenkit.compare._groups import (
    RunRef as RunRef,
    resolve_side as resolve_side,
)
from goldenkit.compare._ledger import (
    LEDGER_STATUSES as LEDGER_STATUSES,
    Ledger as Ledger,
    decided_repeats_note as decided_repeats_note,
    evidence_ledger as evidence_ledger,
    missing_repeats as missing_repeats,
    side_problems as side_problems,
)
from goldenkit.compare._runs import (
    FLIP_STATUSES as FLIP_STATUSES,
    HOLM_FAMILY as HOLM_FAMILY,
    STATUSES as STATUSES,
    Comparison as Comparison,
    compare_runs as compare_runs,
)
