"""goldenkit.baselines's public names, listed once: each name and the module it lives in."""

from goldenkit.baselines._store import (
    HISTORY_FILE as HISTORY_FILE,
    Baseline as Baseline,
    list_baselines as list_baselines,
    read_baseline as read_baseline,
    resolve_run_or_baseline as resolve_run_or_baseline,
    save_baseline as save_baseline,
)
