"""The quality gate: a policy in, a decision out. No evidence, no green.

:func:`evaluate_gate` checks a run's outcomes (and, for regression rules, a
:class:`goldenkit.compare.Comparison` against a baseline) against a
:class:`GatePolicy` and returns a :class:`GateDecision`; the caller decides
what to do with it (``decision.raise_for_failure()``, or the CLI's exit code).
Every rule states the evidence it saw (rows graded and paired, rows left out
and why), so "no regression" can be told from "nothing to compare".

Exit codes of a decision: 0 passed · 2 a quality rule failed (also an empty or
fully skipped run, a missing baseline, a critical slice with no graded rows,
a new permanent error) · 3 a side is not evidence (the run or the baseline
INVALID, incomplete or without a graded row; an error rate over its maximum,
overall or in one slice; a critical slice whose rows errored) · 4 the
baseline cannot be compared with the run (another protocol). When several
rules fail, 3 wins over 4, and 4 over 2.

Configuration: the ``[gate]`` table of goldenkit.toml
------------------------------------------------------

::

    [gate]
    rule = "majority"                # collapse rule for repeats: majority | all | any | at_least:K
    min_pass_rate = 0.85             # overall pass rate (rows, after collapsing) must be >= this
    min_wilson_lower = 0.80          # overall Wilson 95% lower bound must be >= this
    per_slice_min_pass_rate = 0.70   # every slice's pass rate must be >= this
    per_slice_min_wilson_lower = 0.5 # every slice's Wilson lower bound must be >= this
    max_hallucination_rate = 0.02    # share of graded attempts the hallucination grader failed
    hallucination_grader = "hallucination"   # grader whose failure counts as a hallucination
    min_negative_case_pass_rate = 1.0  # red rows (run with --red): PASS / graded attempts must be >= this
    max_error_rate = 0.02            # ERROR attempts / all attempts; over it: exit 3 (default 0.02)
    max_slice_error_rate = 0.05      # new transient ERROR rows / rows, per slice; over it: exit 3 (default 0.05)
    max_new_permanent_errors = 0     # rows the baseline graded that the candidate made a permanent ERROR (default 0)
    min_paired_rows = 1              # rows graded on both sides each critical slice needs (default 1)
    regression = true                # compare against a baseline (default true; a missing one fails)
    baseline = "main"                # default baseline (name or run); --baseline overrides
    alpha = 0.05                     # significance level of the regression rules
    critical = ["refunds"]           # slices forming their own Holm family
    non_inferiority_margin = 0.03    # fail when the upper bound of the paired drop exceeds this

    [gate.slices.refunds]            # per-slice absolute thresholds (override the per_slice_ ones)
    min_pass_rate = 0.90
    min_wilson_lower = 0.80

All keys are optional; an absent threshold is not checked. Unknown keys and
values of the wrong type are a :class:`goldenkit.errors.ConfigError`.

Rules
-----
Is each side evidence?

* ``run.validity`` (3): the run's manifest says INVALID. ``run.complete`` (3):
  the run did not finish (resume it).
* ``error_rate`` (3): ERROR attempts over all attempts exceed ``max_error_rate``.
* ``run.graded`` (2): no row has a PASS/FAIL (empty or fully skipped run).
* ``baseline.evidence`` (3): the baseline (a run, or a committed snapshot
  whose saved run key says so) is INVALID, incomplete or has no graded row.
* ``evidence.critical[SLICE]`` (3 when errors took the rows, else 2): a
  critical slice with fewer than ``min_paired_rows`` rows graded on both sides
  (all ERROR, all SKIPPED, or absent on a side); the rule names the side.
  A non-critical slice in that state is a **warning** (``decision.warnings``).

Errors the candidate caused:

* ``errors.new_permanent`` (2): rows the baseline graded that the candidate
  turned into a *permanent* ERROR (its own request refused: a 400/422, context
  length, a content filter) are evidence against it; more than
  ``max_new_permanent_errors`` fails, naming the rows.
* ``errors.slice[SLICE]`` (3): new *transient* ERROR rows (the baseline graded
  them) over ``max_slice_error_rate`` of a slice's rows: the slice is not evidence.
  Without a baseline, every transient ERROR row of the run counts.

Quality:

* ``pass_rate``, ``wilson_lower``, ``pass_rate[SLICE]``, ``wilson_lower[SLICE]``,
  ``hallucination_rate`` (2): absolute thresholds; a NaN actual (no rows) fails.
  ``hallucination_rate`` is the hallucination grader's failure share; when that
  grader judged no attempt, it is :func:`goldenkit.run_metrics`' hallucination
  rate on the hallucination rows (red rows that need not refuse, rows tagged
  ``hallucinate-*``): FAIL / graded attempts.
* ``negative_case_pass_rate`` (2): on the red rows, PASS / graded attempts must
  be at least ``min_negative_case_pass_rate`` (:mod:`goldenkit.metrics`).
  Either red-row rule fails when the run has no such row (red rows are left
  out unless the run used ``--red``, or its sample holds none), with exit 3
  when every attempt on them errored.
* ``baseline`` (2): regression is on and there is no baseline.
  ``baseline.comparable`` (4): the baseline is from another protocol.
* ``regression.overall`` (2): fails when ``b > c`` and the overall exact
  McNemar ``p < alpha``.
* ``regression.critical[SLICE]`` (2): the critical slices are one Holm
  family; a slice fails when ``b > c`` and its adjusted ``p < alpha``.
* ``regression.slice[SLICE]`` (2): all other slices are another Holm
  family, same test (the comparison table's ``p_adj`` is a third family,
  all slices together; every adjusted p says which family it belongs to). A
  slice with ``b > c`` whose raw p is below alpha but whose adjusted p is not
  is listed in ``decision.review``, not failed.
* ``non_inferiority`` (2): the upper bound of the paired drop
  (base minus candidate, Newcombe interval) must not exceed the margin.

A slice named in ``critical`` or ``[gate.slices.NAME]`` that no side has is
named with the closest slice that exists (``critical slice refnuds: ... (did
you mean refunds?)``).

Warnings (``decision.warnings``, printed as ``[WARN]`` lines; they never change
the exit code): the slices short of evidence, and the power warning of each
critical slice whose paired rows are too few to detect the margin
(:func:`power_warnings`; :mod:`goldenkit.gate._power` documents it).

Modules
-------
* :mod:`goldenkit.gate._policy`: :class:`GatePolicy` (``[gate]`` of goldenkit.toml),
  :class:`GateRule`, :class:`GateDecision`.
* :mod:`goldenkit.gate._evidence`: is each side evidence (the ledger's account).
* :mod:`goldenkit.gate._evaluate`: :func:`evaluate_gate`, the rules above.
* :mod:`goldenkit.gate._power`: the power warning.
"""

from __future__ import annotations

from goldenkit.gate._evaluate import evaluate_gate
from goldenkit.gate._policy import GateDecision, GatePolicy, GateRule

__all__ = ["GateDecision", "GatePolicy", "GateRule", "evaluate_gate"]
