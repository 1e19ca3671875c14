"""goldenkit.report's public names, listed once: each name and the module it lives in."""

from goldenkit._display import (
    STYLE as STYLE,
    HTMLBlock as HTMLBlock,
    cell_text as cell_text,
    interval as interval,
    p_value as p_value,
    pct as pct,
    signed_pct as signed_pct,
    table_html as table_html,
)
from goldenkit.report._audit import (
    NO_MARKS as NO_MARKS,
    audit_sample_html as audit_sample_html,
    label_error_share as label_error_share,
    label_error_table as label_error_table,
)
from goldenkit.report._compare import (
    clusters_html as clusters_html,
    comparability_banner as comparability_banner,
    flip_list_html as flip_list_html,
    forest_figure as forest_figure,
    format_compare_table as format_compare_table,
    gate_banner as gate_banner,
    gate_decision as gate_decision,
    gate_table as gate_table,
    significance as significance,
    try_compare as try_compare,
    usage_change_table as usage_change_table,
)
from goldenkit.report._coverage import (
    CoverageReport as CoverageReport,
    coverage_figure as coverage_figure,
    coverage_statement as coverage_statement,
    coverage_table as coverage_table,
    dataset_coverage as dataset_coverage,
    dataset_shares as dataset_shares,
    format_coverage_table as format_coverage_table,
    read_traffic as read_traffic,
    split_rows as split_rows,
)
from goldenkit.report._explore import (
    Explorer as Explorer,
    explore as explore,
)
from goldenkit.report._figure import (
    IntervalFigure as IntervalFigure,
)
from goldenkit.report._html import (
    OVERALL as OVERALL,
    figure_png as figure_png,
    setup_notebook as setup_notebook,
    shown_or_note as shown_or_note,
)
from goldenkit.report._layout import (
    LAYOUTS as LAYOUTS,
    Layout as Layout,
)
from goldenkit.report._markdown import (
    compare_markdown as compare_markdown,
    gate_markdown as gate_markdown,
)
from goldenkit.report._page import (
    compare_page as compare_page,
    layout_page as layout_page,
    run_page as run_page,
)
from goldenkit.report._quality import (
    failure_clusters as failure_clusters,
    flaky_note as flaky_note,
    quality_banner as quality_banner,
    weighted_score_line as weighted_score_line,
    worst_slices as worst_slices,
)
from goldenkit.report._run import (
    errors_and_skips as errors_and_skips,
    failure_reasons as failure_reasons,
    flaky_table as flaky_table,
    format_slice_table as format_slice_table,
    judge_figures_html as judge_figures_html,
    latency_summary as latency_summary,
    pass_rate_figure as pass_rate_figure,
    red_rows_block as red_rows_block,
    run_key_table as run_key_table,
    validity_banner as validity_banner,
    validity_statement as validity_statement,
    verdict_counts as verdict_counts,
)
from goldenkit.report._sequence import (
    sequence_figure as sequence_figure,
    sequence_table as sequence_table,
)
