"""The quality gate: a policy in, a decision out. No evidence, no green.

:func:`evaluate_gate` checks a run's outcomes (and, for regression rules, a
:class:`goldenkit.compare.Comparison` against a baseline) against a
:class:`GatePolicy` and returns a :class:`GateDecision`; the caller decides
what to do with it (``decision.raise_for_failure()``, or the CLI's exit code).
Every rule states the evidence it saw (rows graded and paired, rows left out
and why), so "no regression" can be told from "nothing to compare".

Three outcomes. Exit 2 when a failure is shown: a regression shown (the Holm
family below), a candidate's own error shown (new ``agent`` or ``refused``
errors beyond ``max_new_permanent_errors``, or unpaired rows they took), an
absolute threshold failed, or a run with nothing graded (empty or fully
skipped). Exit 0 only when non-inferiority is shown overall and on every
critical slice (the upper confidence bound of the paired drop is below
the margin) and no other rule fails. Everything else is exit 3, "not enough
evidence", naming what is missing and the paired rows it would need: a side
that is not evidence (the run or the baseline INVALID or incomplete, the
baseline without a graded row; an error rate over its maximum,
overall or in one slice; a critical slice whose rows errored), or a decision
not shown either way (non-inferiority not shown; no baseline; rows skipped or
missing; a policy that checks no quality). Exit 4: the
baseline cannot be compared with the run (another protocol). When several
rules fail, a side that is not evidence (3) wins over 4, 4 over 2, and 2 over
"not shown either way" (3).

Error rates (with ``alpha`` of the policy, 0.05 by default):

* False fail: when the candidate behaves like the baseline, the gate fails on a
  regression (exit 2) with probability at most ``alpha``, because every
  regression rule that can fail is one Holm family of one-sided exact tests.
* False pass: when the candidate's true drop equals ``non_inferiority_margin``
  (overall or on a critical slice), the gate passes (exit 0) with probability
  at most ``alpha``, because each non-inferiority bound is a one-sided
  ``1 - alpha`` bound and all of them must hold (an intersection-union test).

Both are checked by simulation in tests/test_gate_three_way.py.

Sequential gate
---------------
``goldenkit run DATASET ... --baseline REF --sequential`` (:mod:`goldenkit.gate._sequential`)
runs the rows in an order drawn from a recorded seed, every slice at its share, and after each
row updates anytime-valid statistics (:func:`goldenkit.stats.sequential_paired_test`): an
e-process on the discordant pairs for regression, over the family above (e-Bonferroni), and a
confidence sequence for the mean drop over the rows (sampling without replacement). It stops at
the first row where the decision is reached, and its error rates hold at whatever row it stops:

* False fail: when the candidate behaves like the baseline, the run stops with exit 2 with
  probability at most ``alpha``, however many rows it reads (Ville's inequality).
* False pass: when the candidate's true mean drop over the rows equals the margin (overall or on
  a critical slice), it stops with exit 0 with probability at most ``alpha``, over the random order.

It answers the policy's question, not "did anything change": a drop that is real but inside
``non_inferiority_margin`` may pass early (the margin is the tolerance the policy accepts), where
the fixed-size gate fails any significant regression of its Holm family. Exit 3 at the budget
(``--max-rows``, or every row read) means neither a regression nor non-inferiority was shown at
the anytime-valid level: not a pass; it names about how many more rows would decide. Resumed
without ``--sequential``, the run becomes a full run for the fixed-size gate (a second look at the
same rows: both looks together fail a candidate that behaves like the baseline with probability
at most ``2 alpha``). ``goldenkit gate RUN --baseline REF`` on a sequential run reads its recorded
rows again and returns the same decision; a sequential run is not a baseline. Its guarantee rests
on the order being drawn, never chosen: the gate draws the order again from the recorded seed over
the baseline's graded rows and refuses a record whose rows are not that order (``sequential.order``,
exit 3), and a resume keeps the recorded seed. The policy's other rules read the rows the run read:
an absolute threshold missed there fails (exit 2) only when it would miss with every unread row
passing, else it is not shown (3); one met there is a point comparison on those rows, as the
fixed-size gate's thresholds are on its sample; ``allowed_regression`` (a point comparison of the
whole run) is refused in this mode. A margin must be in (0, 1) and alpha in (0, 0.5).
``goldenkit gate RUN --baseline REF --replay-sequential`` (:mod:`goldenkit.gate._replay`) replays
the procedure over random orders of a full run (shadow mode). docs/sequential.md walks through it.

Configuration: the ``[gate]`` table of goldenkit.toml
------------------------------------------------------

Every key is declared once, in :data:`goldenkit.gate._policy.GATE_KEYS` (what it
takes, its default, what it does); the listing below is made from it::

{GATE_KEYS}

All keys are optional; an absent threshold is not checked. Unknown keys and
values outside what a key takes are a :class:`goldenkit.errors.ConfigError`
naming the file and the key.

Rules
-----
Is each side evidence?

* ``run.validity`` (3): the run's manifest says INVALID. ``run.complete`` (3):
  the run did not finish (resume it).
* ``error_rate`` (3): ERROR attempts nobody's answer caused (``transient``,
  ``infrastructure``, the judge's or simulator's) over all attempts exceed
  ``max_error_rate``; the candidate's own ``agent`` and ``refused`` errors
  count against it (``errors.new_permanent``), not against its validity.
* ``run.graded`` (2, or 3): no row has a PASS/FAIL: an empty or fully skipped run, or every row the
  candidate's own errors took (2); errors nobody's answer caused took them (3).
* ``baseline.evidence`` (3): the baseline (a run, or a committed snapshot
  whose saved run key says so) is INVALID, incomplete or has no graded row.
* ``evidence.paired``, ``evidence.critical[SLICE]`` (3, or 2): the overall
  table and each critical slice need ``min_paired_share`` of their rows paired
  and at least ``min_paired_rows``; short of it, exit 3 when errors nobody's
  answer caused took rows, 2 when the candidate's own errors did, else 3 "not
  shown" (rows skipped or missing, or a critical slice absent on a side); the
  rule names the side.
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
  grader judged no attempt, it is :func:`goldenkit.metrics.run_metrics`' hallucination
  rate on the hallucination rows (red rows that need not refuse, rows tagged
  ``hallucinate-*``): FAIL / graded attempts.
* ``negative_case_pass_rate`` (2): on the red rows, PASS / graded attempts must
  be at least ``min_negative_case_pass_rate`` (:mod:`goldenkit.metrics`).
  Either red-row rule fails when the run has no such row (red rows are left
  out unless the run used ``--red``, or its sample holds none), with exit 3
  when every attempt on them errored.
* ``baseline`` (3): regression is on and there is no baseline: no regression rule could be checked.
  ``baseline.comparable`` (4): the baseline is from another protocol.
* ``regression.overall``, ``regression.critical[SLICE]`` (2): ONE Holm family
  at ``alpha``: the overall table and every critical slice, each by the
  one-sided exact McNemar test (:func:`goldenkit.stats.mcnemar_one_sided`:
  ``b`` broke out of ``b + c`` flips, binomial at 1/2, alternative "more broke
  than fixed"); a line fails when ``b > c`` and its Holm-adjusted ``p < alpha``.
* ``regression.slice[SLICE]`` (2): only with ``fail_on_slices = true``: the
  other slices join the same family. Without it, a non-critical slice with
  ``b > c`` and a one-sided p below ``alpha`` (unadjusted) is listed in
  ``decision.review``, never failed. (The comparison table keeps its
  two-sided McNemar p and its own Holm ``p_adj`` over all slices, for reading.)
* ``non_inferiority``, ``non_inferiority[SLICE]`` (3, or 2): overall and on
  every critical slice, the upper limit of the two-sided ``1 - 2 alpha``
  Newcombe (method 10) interval of the paired drop (base minus candidate),
  that is the one-sided ``1 - alpha`` upper bound, must be below
  ``non_inferiority_margin``. Above it, non-inferiority is not shown: exit 3,
  naming the paired rows that would show it (:mod:`goldenkit.gate._power`'s
  calculator); exit 2 only when the drop itself is shown to exceed the margin
  (the lower limit above the margin, and that line's regression failed).
  With ``non_inferiority_margin = false`` the rule is off, and the output
  says which drop the paired rows could not have detected.
* ``allowed_regression``, ``allowed_regression[SLICE]`` (2): for deterministic
  runs (recorded fixtures): a pass rate of the candidate below the baseline's
  by more than ``allowed_regression`` fails, equal passes; a point comparison
  without an error rate, and it says so. On runs whose repeats disagree (flaky
  rows, either side) it is refused (3) unless ``allow_noisy = true``. Set
  ``non_inferiority_margin = false`` beside it when the runs are too small to
  show non-inferiority.
* ``quality`` (3): regression off and no absolute threshold: the policy
  checks no quality, so the gate is never green.

Judge-graded rules (:mod:`goldenkit.gate._judge`; a judge-graded figure reads the
judge grader's verdicts, ``graders["judge"]`` of the outcomes):

* ``judge_pass_rate`` (2): with ``judge_min_pass_rate``, the one-sided
  ``1 - alpha`` lower bound of the pass rate must reach it: prediction-powered
  (the human pass rate, :func:`goldenkit.results.judge_estimates`) when the run
  has human labels drawn by a recorded design, saying ``prediction-powered: n
  human, N judged, lambda``; else the judge's own Wilson bound, marked
  ``judge-only (no human labels)``. Hand-picked labels are counted, refused for
  inference, and the detail says why. With labels, this rule and the next read
  the more conservative of the prediction-powered bound (asymptotic) and an exact
  one on the labels alone (:func:`goldenkit.gate._judge.gate_bound`), and say
  which decided.
* ``judge.non_inferiority``, ``judge.non_inferiority[SLICE]`` (3, or 2): two runs
  whose judge is a hard grader: the upper bound of the paired drop
  (:func:`goldenkit.results.judge_difference`, prediction-powered or judge-only
  as above) must be below the margin; one more requirement of green.
* ``judge.self_preference`` (3): the judge and the candidate share a model
  family (:mod:`goldenkit._model_family`) and a quality rule that passed
  rests on the judge's verdicts alone (no prediction-powered rule of its kind
  backs it): not green unless
  ``accept_self_preference = true``.

The candidate's own ERROR rows (``agent``, ``refused``) are named in the
evidence lines as its failures (``errors.new_permanent``, ``evidence.paired``),
not as missing evidence. ``allowed_regression`` also reads repeats stopped once
decided (``--stop-decided-repeats``) as not showing a row stable: refused (3)
unless ``allow_noisy = true``.

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
* :mod:`goldenkit.gate._regression`: the Holm family, non-inferiority and the point rule.
* :mod:`goldenkit.gate._judge`: the judge-graded rules and the self-preference rule.
* :mod:`goldenkit.gate._power`: the power warning.
* :mod:`goldenkit.gate._sequential`: the sequential gate (the decision, the record read back);
  :mod:`goldenkit.gate._sequential_monitor`: its monitor of a run.
* :mod:`goldenkit.gate._replay`: the sequential gate replayed over random orders of a full run.
"""

from goldenkit._registry import attach_stub as _attach_stub
from goldenkit.gate._policy import gate_keys_listing as _gate_keys_listing

__doc__ = (__doc__ or "").replace("{GATE_KEYS}", _gate_keys_listing())  # the listing, from the table itself

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
