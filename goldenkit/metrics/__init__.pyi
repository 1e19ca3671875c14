"""goldenkit.metrics's public names, listed once: each name and the module it lives in."""

from goldenkit.metrics._rates import (
    METRIC_COLUMNS as METRIC_COLUMNS,
    clustered_interval as clustered_interval,
    run_metrics as run_metrics,
)
from goldenkit.metrics._red_rows import (
    hallucination_row_ids as hallucination_row_ids,
    red_ids as red_ids,
)
from goldenkit.metrics._text import (
    red_metrics_text as red_metrics_text,
)
from goldenkit.metrics._weighted import (
    WEIGHTED_SCORE as WEIGHTED_SCORE,
    metric_weights as metric_weights,
    weighted_score as weighted_score,
)
from goldenkit.records import (
    grader_results as grader_results,
)
