"""goldenkit.stats's public names, listed once: each name and the module it lives in."""

from goldenkit.stats._clustered import (
    ClusteredMean as ClusteredMean,
    clustered_se as clustered_se,
)
from goldenkit.stats._collapse import (
    COLLAPSED_COLUMNS as COLLAPSED_COLUMNS,
    OVERALL as OVERALL,
    UNTAGGED as UNTAGGED,
    collapse_arrays as collapse_arrays,
    collapse_repeats as collapse_repeats,
    collapse_with_codes as collapse_with_codes,
    decided_rows as decided_rows,
    error_kind_codes as error_kind_codes,
    first_positions as first_positions,
    flaky_rows as flaky_rows,
    group_codes as group_codes,
    parse_rule as parse_rule,
    row_decided as row_decided,
    slice_table as slice_table,
    sorted_codes as sorted_codes,
    too_few_repeats as too_few_repeats,
    verdict_codes as verdict_codes,
)
from goldenkit.stats._intervals import (
    paired_diff_ci as paired_diff_ci,
    wilson_ci as wilson_ci,
    wilson_ci_effective as wilson_ci_effective,
)
from goldenkit.stats._mcnemar import (
    MAX_PLAN_ROWS as MAX_PLAN_ROWS,
    holm as holm,
    mcnemar_exact as mcnemar_exact,
    mcnemar_one_sided as mcnemar_one_sided,
    mcnemar_power as mcnemar_power,
    min_detectable_effect as min_detectable_effect,
    rows_needed as rows_needed,
)
from goldenkit.stats._paired_mean import (
    paired_mean_diff as paired_mean_diff,
)
from goldenkit.stats._ppi import (
    PPIEstimate as PPIEstimate,
    ppi_mean as ppi_mean,
)
from goldenkit.stats._representative import (
    representative_repeats as representative_repeats,
)
from goldenkit.stats._sequential import (
    SequentialTest as SequentialTest,
    sequential_paired_test as sequential_paired_test,
    sequential_path as sequential_path,
)
