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
:mod:`~goldenkit.report._figure`    the pass rate and forest figures as one SVG document (one template):
                                   an image in a notebook, inline on a page
:mod:`~goldenkit.report._layout`    the run report's and the comparison's layout, declared once:
                                   parameters, headings, prose and the function each step
                                   calls (``report.ipynb`` and ``compare.ipynb`` are written
                                   from it)
:mod:`~goldenkit.report._page`      those two as HTML without a notebook (``run_page``,
                                   ``compare_page``): the same steps into one template, what
                                   ``goldenkit pages`` shows
============================  ===========================================================

Every name stays importable from ``goldenkit.report``.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
