"""goldenkit.history's public names, listed once: each name and the module it lives in."""

from goldenkit.history._run_index import (
    CACHE_FILE as CACHE_FILE,
    PROTOCOL_KEYS as PROTOCOL_KEYS,
    RUN_COLUMNS as RUN_COLUMNS,
    fingerprint as fingerprint,
    protocol_id as protocol_id,
    runs_df as runs_df,
    scan as scan,
)
from goldenkit.history._sql import (
    HISTORY_COLUMNS as HISTORY_COLUMNS,
    VIEWS as VIEWS,
    baseline_history_df as baseline_history_df,
    connect as connect,
    query as query,
)
from goldenkit.history._trend import (
    METRICS as METRICS,
    failure_counts as failure_counts,
    trend as trend,
)
