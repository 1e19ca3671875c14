"""goldenkit.sampling's public names, listed once: each name and the module it lives in."""

from goldenkit.sampling._rules import (
    assign_splits as assign_splits,
    holdout_score as holdout_score,
    sample_rank as sample_rank,
    stratified_sample as stratified_sample,
    weekly_seed as weekly_seed,
)
