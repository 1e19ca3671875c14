"""What the notebooks display, as functions with tests: one module per notebook.

Every table, plot and statement in ``notebooks/*.ipynb`` comes from a function
here; the notebooks only call them and show the result. Statistics come from
:mod:`goldenkit.stats` and :mod:`goldenkit.compare` (the report computes none
of its own beyond counting and formatting).

============================  ===========================================================
module                        what it shows
============================  ===========================================================
:mod:`~goldenkit.report._quality`   what the run report leads with: quality (pass rate,
                                   weakest slices, failure clusters, weighted score),
                                   then evidence; the failure clusters; the flaky note
:mod:`~goldenkit.report._run`       the run report (``report.ipynb``): run key, validity,
                                   slice table and plot, errors, flaky rows, latency,
                                   failure reasons per grader
:mod:`~goldenkit.report._compare`   the comparison (``compare.ipynb``): the gate's decision
                                   first, comparability, the gate rules, the paired table,
                                   forest plot, clusters, flip list
:mod:`~goldenkit.report._sequence`  a sequential run in the comparison: its confidence
                                   sequence against the rows run, the margin, the stop
:mod:`~goldenkit.report._audit`     the audit (``audit.ipynb``): the label-error share
:mod:`~goldenkit.report._coverage`  the coverage (``coverage.ipynb``): slices against traffic
:mod:`~goldenkit.report._html`      what they share: number formatting, tables for people
                                   (``table_html``), banners, figures as PNG, notebook setup
============================  ===========================================================

Every name stays importable from ``goldenkit.report``.
"""

from __future__ import annotations

from goldenkit.report._audit import NO_MARKS, audit_sample_html, label_error_share, label_error_table
from goldenkit.report._compare import (
    clusters_html,
    comparability_banner,
    flip_list_html,
    forest_figure,
    format_compare_table,
    gate_banner,
    gate_decision,
    gate_table,
    significance,
    try_compare,
    usage_change_table,
)
from goldenkit.report._coverage import (
    CoverageReport,
    coverage_figure,
    coverage_statement,
    coverage_table,
    dataset_coverage,
    dataset_shares,
    format_coverage_table,
    read_traffic,
    split_rows,
)
from goldenkit.report._explore import Explorer
from goldenkit.report._html import (
    OVERALL,
    STYLE,
    HTMLBlock,
    cell_text,
    figure_png,
    interval,
    p_value,
    pct,
    setup_notebook,
    shown_or_note,
    signed_pct,
    table_html,
)
from goldenkit.report._quality import failure_clusters, flaky_note, quality_banner, weighted_score_line, worst_slices
from goldenkit.report._run import (
    errors_and_skips,
    failure_reasons,
    flaky_table,
    format_slice_table,
    judge_figures_html,
    latency_summary,
    pass_rate_figure,
    red_rows_block,
    run_key_table,
    validity_banner,
    validity_statement,
    verdict_counts,
)
from goldenkit.report._sequence import sequence_figure, sequence_table

__all__ = [
    "Explorer",
    "STYLE",
    "HTMLBlock",
    "NO_MARKS",
    "OVERALL",
    "CoverageReport",
    "audit_sample_html",
    "cell_text",
    "clusters_html",
    "comparability_banner",
    "coverage_figure",
    "coverage_statement",
    "coverage_table",
    "dataset_coverage",
    "dataset_shares",
    "errors_and_skips",
    "failure_clusters",
    "failure_reasons",
    "figure_png",
    "flaky_note",
    "flaky_table",
    "flip_list_html",
    "forest_figure",
    "format_compare_table",
    "format_coverage_table",
    "format_slice_table",
    "gate_banner",
    "gate_decision",
    "gate_table",
    "interval",
    "judge_figures_html",
    "label_error_share",
    "label_error_table",
    "latency_summary",
    "p_value",
    "pass_rate_figure",
    "pct",
    "quality_banner",
    "read_traffic",
    "red_rows_block",
    "run_key_table",
    "sequence_figure",
    "sequence_table",
    "setup_notebook",
    "shown_or_note",
    "signed_pct",
    "significance",
    "split_rows",
    "table_html",
    "try_compare",
    "usage_change_table",
    "validity_banner",
    "validity_statement",
    "verdict_counts",
    "weighted_score_line",
    "worst_slices",
]
