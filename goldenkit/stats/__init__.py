"""Statistics that decide whether a change ships: intervals, paired tests, planning.

Everything here is a pure function of counts or of an outcome DataFrame; nothing
reads files. Results come back as NumPy values or small DataFrames with
snake_case columns (``n, k, p_hat, ci_low, ci_high, b, c, p_val, p_adj``).

The unit of evidence is the **row**. Repeats of one row are not independent
trials, so pass rates are computed over rows after :func:`collapse_repeats`;
the attempt-weighted rate is shown beside it, never instead of it.

Methods
-------
* :func:`wilson_ci` -- Wilson score interval (statsmodels
  ``proportion_confint(method="wilson")``; the same interval as R's
  ``prop.test(k, n, correct=FALSE)$conf.int``). ``k = 0`` gives a lower bound
  of exactly 0, ``k = n`` an upper bound of exactly 1. **n = 0** gives
  ``(nan, nan)``: no rows is no evidence, and a gate reading NaN fails.
  :func:`wilson_ci_effective` is the same interval at an effective sample size
  that need not be whole (a rate clustered by row, :mod:`goldenkit.metrics`).
* :func:`mcnemar_exact` -- exact conditional McNemar test,
  ``p = min(1, 2 P[X <= min(b, c)])`` with ``X ~ Binomial(b + c, 1/2)``,
  ``p = 1`` when ``b + c = 0``. The binomial CDF comes from
  ``scipy.stats.binom.cdf`` (what statsmodels' ``mcnemar(exact=True)``
  uses), which is accurate for any ``b + c``; a naive ``0.5 ** n`` sum
  underflows to 0 at a 5,000 vs 5,000 tie. R's ``mcnemar.test`` is the
  chi-square test, not this one; R's equivalent is ``binom.test(min(b, c), b + c)``.
* :func:`mcnemar_one_sided` -- the one-sided exact McNemar test the gate's
  regression rules use (more broke than fixed): ``p = P[X >= b]``, ``X ~
  Binomial(b + c, 1/2)``; R's ``binom.test(b, b + c, 0.5, alternative = "greater")``.
* :func:`holm` -- Holm step-down adjusted p-values in input order (the
  values of statsmodels ``multipletests(method="holm")``, computed in NumPy:
  see :func:`holm` for why).
* :func:`paired_diff_ci` -- Newcombe's square-and-add interval for a
  difference of paired proportions, **method 10** of Newcombe (1998),
  "Improved confidence intervals for the difference between binomial
  proportions based on paired data", Statistics in Medicine 17:2635-2650:
  Wilson limits of both marginal proportions combined with the estimated
  correlation ``phi`` between them, where ``phi``'s numerator ``AD - BC`` is
  reduced by ``N/2`` when it exceeds it, set to 0 when it lies in ``[0, N/2]``
  and left as is when negative (Newcombe's definition, as in Fagerland,
  Lydersen & Laake 2017, ch. 8).
* :func:`clustered_se` -- cluster-robust standard error of a mean score
  (Miller 2024, "Adding Error Bars to Evals", eq. for ``SE_clustered``):
  ``Var = (1/n^2) sum_c (sum_{i in c} (s_i - mean))^2``, computed with
  statsmodels ``OLS(s, 1).fit(cov_type="cluster")``; by default without
  small-sample correction (``use_correction=False``), which is exactly
  Miller's formula with the 1/n variance.
* :func:`rows_needed`, :func:`min_detectable_effect`, :func:`mcnemar_power` --
  planning a paired comparison. **By default (``method="exact"``) they use the
  exact power of the exact McNemar test the gate uses** (reject when
  ``p < alpha``), computed by full enumeration of the number of discordant
  rows and of the split among them. ``method="connor"`` is the normal
  *approximation* of **Connor (1987)**, "Sample size for testing differences
  in proportions for the paired-sample design", Biometrics 43:207-211:
  ``n = (z_{1-alpha/2} sqrt(psi) + z_{power} sqrt(psi - delta^2))^2 / delta^2``
  with ``psi`` the discordant proportion ``(b + c)/n`` and ``delta`` the
  difference in pass rate ``(c - b)/n``; wherever it is shown it is labelled
  approximate. A plan over :data:`MAX_PLAN_ROWS` rows is refused at once, and
  the exact power sums only the central range of the discordant count, so
  any plan answers in seconds in bounded memory.

Collapsing repeats
------------------
Rules for :func:`collapse_repeats` (``rule=``), each over a row whose repeats
were all graded:

* ``"majority"`` (default): PASS when a strict majority of the row's repeats
  passed (2 of 3, 3 of 5). **A tie is FAIL** (1 of 2): a pass must be earned.
* ``"all"``: every repeat passed. ``"any"``: at least one passed.
* ``"at_least:K"``: at least K repeats passed (fewer than K repeats cannot pass).

**An ERROR repeat never decides.** A row is PASS or FAIL only when every value
its errored repeats could have had (PASS or FAIL each) gives the same verdict
under the rule; otherwise it is UNDECIDED (an error row, out of b, c and pass
rates). Under ``majority`` over 3: P,P,E is PASS; P,E,E and P,F,E are
UNDECIDED; F,F,E is FAIL. Under ``all``: P,P,E is UNDECIDED. Under ``any``:
F,E,E is UNDECIDED. Under ``at_least:2``: P,E,E is UNDECIDED. The vote counts
the errored repeats in the row's repeats (P,E is UNDECIDED under majority: the
E could have made it 1 of 2). An UNDECIDED row's collapsed ``verdict`` is
ERROR, so every table counts it as an error row (outside ``n``, ``b``, ``c``
and the paired difference), and its ``undecided`` column is True.

A row with every repeat ERROR is ERROR (``undecided`` False). SKIPPED repeats
are not graded and not errors: they are left out of the vote, as if the
repeat had not been asked for (P,S,S is PASS under every rule but
``at_least:K`` with K > 1; P,S,E is UNDECIDED under majority). A row with no
PASS, FAIL or ERROR repeat is SKIPPED, one with no graded repeat but an
ERROR is ERROR. Rows passing some but not all of their graded repeats
(>= 2) are flaky, whatever their verdict.

When the outcomes have an ``error_kind`` column the collapsed table also
carries ``n_candidate_errors`` (ERROR repeats whose kind counts against the
candidate, :func:`goldenkit.schema.counts_against_candidate`), ``n_permanent``
(the same count under its name before the error taxonomy, kept for one
release) and ``error_kind`` (an ERROR row's kind: see :func:`collapse_arrays`).

Modules
-------
``intervals`` (Wilson, paired difference), ``paired_mean`` (the paired change of a measure, tokens or
latency, per row: :func:`paired_mean_diff`, Student's paired t interval), ``collapse`` (repeats, flaky rows,
slice tables), ``mcnemar`` (exact McNemar, Holm, power and planning),
``clustered`` (clustered standard error) and ``sequential`` (the sequential paired
gate: :func:`sequential_paired_test`, an e-process for regression and a
confidence sequence for the drop over a finite set of rows; its guarantees are
in its module's docstring); every public name is importable from
:mod:`goldenkit.stats`.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
