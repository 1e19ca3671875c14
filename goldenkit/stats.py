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
* :func:`mcnemar_exact` -- exact conditional McNemar test,
  ``p = min(1, 2 P[X <= min(b, c)])`` with ``X ~ Binomial(b + c, 1/2)``,
  ``p = 1`` when ``b + c = 0``. The binomial CDF comes from
  ``scipy.stats.binom.cdf`` (what statsmodels' ``mcnemar(exact=True)``
  uses), which is accurate for any ``b + c``; a naive ``0.5 ** n`` sum
  underflows to 0 at a 5,000 vs 5,000 tie. R's ``mcnemar.test`` is the
  chi-square test, not this one; R's equivalent is ``binom.test(min(b, c), b + c)``.
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
  approximate.

Collapsing repeats
------------------
Rules for :func:`collapse_repeats` (``rule=``):

* ``"majority"`` (default): PASS when more graded repeats passed than failed,
  i.e. a strict majority (2 of 3, 3 of 5). **A tie among fully graded
  repeats is FAIL** (1 of 2 with two repeats): a pass must be earned.
* ``"all"``: every graded repeat passed. ``"any"``: at least one passed.
* ``"at_least:K"``: at least K graded repeats passed (fewer than K graded
  repeats cannot pass).

ERROR and SKIPPED repeats are left out of the vote, and **an ERROR repeat
never decides a row**: when the graded repeats tie only because a repeat
errored (majority: PASS, FAIL, ERROR; at_least:K: fewer than K passed, but K
could have with the errored repeats), the row is **undecided**: its verdict
is ERROR (an error row, outside every pass rate, ``b`` and ``c``) and its
``undecided`` column is True. A row with no graded repeat is ERROR when any
repeat errored, otherwise SKIPPED.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as _sps
from statsmodels.stats.proportion import proportion_confint

from goldenkit.errors import InputError, ResultsError
from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED, VERDICTS

__all__ = [
    "COLLAPSED_COLUMNS",
    "OVERALL",
    "ClusteredMean",
    "collapse_arrays",
    "collapse_repeats",
    "collapse_with_codes",
    "first_positions",
    "clustered_se",
    "flaky_rows",
    "holm",
    "mcnemar_exact",
    "mcnemar_power",
    "min_detectable_effect",
    "paired_diff_ci",
    "parse_rule",
    "rows_needed",
    "slice_table",
    "sorted_codes",
    "verdict_codes",
    "wilson_ci",
]

#: Label of the all-slices row in :func:`slice_table` and comparison tables.
OVERALL = "(overall)"

#: Columns of :func:`collapse_repeats` output (plus ``slice``/``split``/``tags`` when given).
COLLAPSED_COLUMNS = (
    "row_id", "attempts", "n_pass", "n_fail", "n_error", "n_skipped", "n_graded", "verdict", "flaky", "undecided"
)

_CODE = {v: i for i, v in enumerate(VERDICTS)}  # PASS 0, FAIL 1, ERROR 2, SKIPPED 3
_RULE_RE = re.compile(r"^at_least:(\d+)$")


# --------------------------------------------------------------------------- helpers


def _is_scalar(*xs: Any) -> bool:
    return all(np.ndim(x) == 0 for x in xs)


def _ret(x: np.ndarray, scalar: bool) -> Any:
    return float(x) if scalar else x


def _counts(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.floor(arr)):
        raise InputError(f"{name} must be non-negative whole numbers, got {x!r}")
    return arr


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(_sps.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


# --------------------------------------------------------------------------- Wilson


def wilson_ci(k: Any, n: Any, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval for k successes in n trials, vectorized.

    Returns ``(ci_low, ci_high)`` as floats for scalar input, arrays otherwise.
    ``k = 0`` gives a lower bound of exactly 0.0 and ``k = n`` an upper bound of
    exactly 1.0. ``n = 0`` gives ``(nan, nan)`` (no evidence).

    >>> lo, hi = wilson_ci(352, 400)
    >>> round(lo, 4), round(hi, 4)
    (0.8445, 0.9083)
    """
    _z(confidence)  # validates
    scalar = _is_scalar(k, n)
    k_arr, n_arr = np.broadcast_arrays(_counts(k, "k"), _counts(n, "n"))
    if np.any(k_arr > n_arr):
        raise InputError(f"k must not exceed n (k={k!r}, n={n!r})")
    empty = n_arr == 0
    safe_n = np.where(empty, 1.0, n_arr)
    lo, hi = proportion_confint(k_arr, safe_n, alpha=1.0 - confidence, method="wilson")
    lo = np.clip(np.asarray(lo, dtype=float), 0.0, 1.0)
    hi = np.clip(np.asarray(hi, dtype=float), 0.0, 1.0)
    lo = np.where(k_arr == 0, 0.0, lo)
    hi = np.where(k_arr == n_arr, 1.0, hi)
    lo = np.where(empty, np.nan, lo)
    hi = np.where(empty, np.nan, hi)
    return _ret(lo, scalar), _ret(hi, scalar)


# --------------------------------------------------------------------------- collapsing


def parse_rule(rule: str) -> tuple[str, int]:
    """Validate a collapse rule; returns ``(kind, K)`` (K only for at_least)."""
    if rule in ("majority", "all", "any"):
        return rule, 0
    m = _RULE_RE.match(rule) if isinstance(rule, str) else None
    if m and int(m.group(1)) >= 1:
        return "at_least", int(m.group(1))
    raise InputError(f"unknown collapse rule {rule!r}: use majority, all, any or at_least:K (K >= 1)")


def verdict_codes(verdicts: pd.Series | pd.Categorical | np.ndarray, row_ids: Any = None) -> np.ndarray:
    """Verdicts as int8 codes (PASS 0, FAIL 1, ERROR 2, SKIPPED 3); unknown ones are an error."""
    s = verdicts if isinstance(verdicts, pd.Series) else pd.Series(verdicts)
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = list(s.cat.categories)
        lut = np.array([_CODE.get(str(c), -1) for c in cats] + [-1], dtype=np.int8)
        codes = lut[np.asarray(s.cat.codes)]  # code -1 (missing) maps to the trailing -1
    else:
        codes = pd.Index(list(VERDICTS)).get_indexer(s).astype(np.int8)
    if codes.size and codes.min() < 0:
        bad = int(np.flatnonzero(codes < 0)[0])
        where = f" (row {np.asarray(row_ids)[bad]})" if row_ids is not None else ""
        raise ResultsError(f"unknown verdict {s.iloc[bad]!r}{where}: expected one of {', '.join(VERDICTS)}")
    return codes


def _vote(n_pass: np.ndarray, n_fail: np.ndarray, n_error: np.ndarray, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Verdict codes of rows and which of them are undecided (a tie that only an errored repeat made)."""
    kind, k = parse_rule(rule)
    graded = n_pass + n_fail
    undecided = np.zeros(len(graded), dtype=bool)
    if kind == "majority":
        passed = 2 * n_pass > graded
        undecided = (graded > 0) & (2 * n_pass == graded) & (n_error > 0)
    elif kind == "all":
        passed = n_pass == graded
    elif kind == "any":
        passed = n_pass >= 1
    else:
        passed = n_pass >= k
        undecided = (graded > 0) & (n_pass < k) & (n_pass + n_error >= k)
    out = np.where(passed, _CODE[PASS], _CODE[FAIL]).astype(np.int8)
    out = np.where(undecided, _CODE[ERROR], out)
    out = np.where(graded == 0, np.where(n_error > 0, _CODE[ERROR], _CODE[SKIPPED]), out)
    return out.astype(np.int8), undecided


def sorted_codes(values: Any) -> tuple[np.ndarray, list[str]]:
    """Integer codes of ``values`` and the distinct values as str, sorted by their text.

    (``pd.factorize(sort=True)`` sorts a categorical by its category order, not its text.)
    """
    codes, uniques = pd.factorize(values, sort=False)
    names = [str(u) for u in uniques]
    order = sorted(range(len(names)), key=names.__getitem__)
    remap = np.empty(len(names), dtype=np.int64)
    remap[order] = np.arange(len(names))
    out = np.where(codes >= 0, remap[np.maximum(codes, 0)] if len(names) else codes, -1)
    return out.astype(np.int64), [names[i] for i in order]


def _verdict_categorical(codes: np.ndarray) -> pd.Categorical:
    return pd.Categorical.from_codes(codes.astype(np.int8), categories=list(VERDICTS))


def collapse_repeats(outcomes: pd.DataFrame, rule: str = "majority") -> pd.DataFrame:
    """One verdict per row from its repeats (see the module docstring for rules).

    ``outcomes`` needs ``row_id`` and ``verdict`` (``repeat`` is used to refuse a
    duplicated row x repeat); ``slice``, ``split`` and ``tags`` are carried
    over from each row's first outcome. Rows keep their order of first
    appearance. Columns: ``row_id, [slice, split, tags,] attempts, n_pass,
    n_fail, n_error, n_skipped, n_graded, verdict`` (categorical PASS/FAIL/
    ERROR/SKIPPED), ``flaky`` (passed some but not all of >= 2 graded repeats),
    ``undecided`` (ERROR because only an errored repeat made the vote tie) and,
    when ``outcomes`` has an ``error_kind`` column, ``n_permanent`` (ERROR
    repeats whose error is permanent: the request itself was refused).
    """
    return collapse_with_codes(outcomes, rule)[0]


def collapse_with_codes(outcomes: pd.DataFrame, rule: str = "majority") -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """:func:`collapse_repeats` plus, per outcome, its row's position in the result and its verdict code.

    Lets a caller pick outcomes of given rows (a flip list's responses) without
    matching row ids again.
    """
    parse_rule(rule)
    for col in ("row_id", "verdict"):
        if col not in outcomes.columns:
            raise ResultsError(f"outcomes have no {col!r} column")
    row_codes, uniques = pd.factorize(outcomes["row_id"], sort=False)
    if row_codes.size and row_codes.min() < 0:
        raise ResultsError("outcomes have a missing row_id")
    v = verdict_codes(outcomes["verdict"], outcomes["row_id"])
    rep = np.asarray(outcomes["repeat"], dtype=np.int64) if "repeat" in outcomes.columns else None
    first = first_positions(row_codes, len(uniques))
    per_row = {
        col: outcomes[col].take(first).reset_index(drop=True)
        for col in ("slice", "split", "tags")
        if col in outcomes.columns
    }
    perm = None
    if "error_kind" in outcomes.columns:
        perm = (outcomes["error_kind"].astype(object) == "permanent").to_numpy(dtype=bool)
    collapsed = collapse_arrays(
        np.asarray(uniques), row_codes, v, rule, repeats=rep, row_columns=per_row, permanent=perm
    )
    return collapsed, row_codes.astype(np.int64), v


def first_positions(row_codes: np.ndarray, n_rows: int) -> np.ndarray:
    """Index of each row's first outcome (rows numbered by ``row_codes``)."""
    first = np.full(n_rows, len(row_codes), dtype=np.int64)
    # reverse assignment: for repeated indices the last write wins, i.e. the smallest position
    first[row_codes[::-1]] = np.arange(len(row_codes) - 1, -1, -1, dtype=np.int64)
    return first


def collapse_arrays(
    row_ids: np.ndarray,
    row_codes: np.ndarray,
    verdicts: np.ndarray,
    rule: str = "majority",
    *,
    repeats: np.ndarray | None = None,
    row_columns: dict[str, Any] | None = None,
    permanent: np.ndarray | None = None,
) -> pd.DataFrame:
    """The array core of :func:`collapse_repeats`.

    ``row_ids`` names each row (distinct), ``row_codes`` gives each outcome's
    row (index into ``row_ids``), ``verdicts`` each outcome's verdict code
    (see :func:`verdict_codes`), ``repeats`` each outcome's repeat (checked for
    duplicates); ``row_columns`` are per-row columns put after ``row_id``;
    ``permanent`` marks each outcome whose error is permanent (adds ``n_permanent``,
    the row's ERROR repeats with a permanent error).
    """
    parse_rule(rule)
    n_rows = len(row_ids)
    row_codes = np.asarray(row_codes, dtype=np.int64)
    if repeats is not None and len(repeats):
        rep = np.asarray(repeats, dtype=np.int64)
        if rep.min() < 0:
            raise ResultsError("outcomes have a negative repeat")
        width = int(rep.max()) + 1
        dup = np.bincount(row_codes * width + rep, minlength=n_rows * width)
        if dup.max(initial=0) > 1:
            at = int(np.flatnonzero(dup > 1)[0])
            raise ResultsError(f"row {row_ids[at // width]!r} repeat {at % width} appears more than once")
    per = np.bincount(row_codes * 4 + verdicts, minlength=n_rows * 4).reshape(n_rows, 4)
    n_pass, n_fail, n_error, n_skipped = (per[:, i] for i in range(4))
    codes, undecided = _vote(n_pass, n_fail, n_error, rule)
    graded = n_pass + n_fail
    data: dict[str, Any] = {"row_id": row_ids}
    data.update(row_columns or {})
    data.update(
        attempts=per.sum(axis=1),
        n_pass=n_pass,
        n_fail=n_fail,
        n_error=n_error,
        n_skipped=n_skipped,
        n_graded=graded,
        verdict=_verdict_categorical(codes),
        flaky=(graded >= 2) & (n_pass > 0) & (n_pass < graded),
        undecided=undecided,
    )
    if permanent is not None:
        perm = np.asarray(permanent, dtype=bool) & (np.asarray(verdicts) == _CODE[ERROR])
        data["n_permanent"] = np.bincount(row_codes[perm], minlength=n_rows).astype(np.int64)
    return pd.DataFrame(data)


def _as_collapsed(frame: pd.DataFrame, rule: str) -> pd.DataFrame:
    """Accept either outcomes (row x repeat) or an already collapsed table."""
    if "n_pass" in frame.columns and "n_graded" in frame.columns and "verdict" in frame.columns:
        return frame
    return collapse_repeats(frame, rule)


def flaky_rows(outcomes: pd.DataFrame, rule: str = "majority") -> pd.DataFrame:
    """Rows that passed some but not all of their graded repeats (>= 2 graded).

    Returns the collapsed rows (see :func:`collapse_repeats`) with an added
    ``pass_fraction`` column, most unstable first (closest to 1/2), then by row_id.
    """
    c = _as_collapsed(outcomes, rule)
    f = c[c["flaky"].to_numpy(dtype=bool)].copy()
    f["pass_fraction"] = f["n_pass"] / f["n_graded"]
    f["_dist"] = (f["pass_fraction"] - 0.5).abs()
    f = f.sort_values(["_dist", "row_id"], kind="stable").drop(columns="_dist")
    return f.reset_index(drop=True)


# --------------------------------------------------------------------------- slice table


def slice_table(
    outcomes: pd.DataFrame, by: str = "slice", rule: str = "majority", confidence: float = 0.95
) -> pd.DataFrame:
    """Per-slice and overall pass rates with Wilson intervals.

    ``outcomes`` is an outcome DataFrame (row x repeat) or a table from
    :func:`collapse_repeats`. One line per value of ``by`` (sorted) and a last
    line labelled :data:`OVERALL`. Columns:

    ``rows`` distinct rows · ``attempts`` outcomes · ``pass, fail, error,
    skipped`` attempt counts · ``n`` rows with a PASS/FAIL after collapsing ·
    ``k`` of them PASS · ``p_hat = k/n`` · ``ci_low, ci_high`` Wilson interval
    of ``p_hat`` · ``attempt_p_hat = pass/(pass+fail)`` (attempt-weighted,
    shown for comparison only: repeats are not independent) · ``flaky`` rows ·
    ``error_rows`` and ``skipped_rows`` (rows whose collapsed verdict is
    ERROR / SKIPPED; they are outside ``n``).
    """
    c = _as_collapsed(outcomes, rule)
    if by not in c.columns:
        raise InputError(f"cannot group by {by!r}: no such column")
    g_codes, g_uniques = sorted_codes(c[by])
    if g_codes.size and g_codes.min() < 0:
        raise ResultsError(f"a row has no {by!r}")
    m = len(g_uniques)
    vcodes = verdict_codes(c["verdict"])
    cols = {
        "rows": np.ones(len(c), dtype=np.int64),
        "attempts": c["attempts"].to_numpy(np.int64),
        "pass": c["n_pass"].to_numpy(np.int64),
        "fail": c["n_fail"].to_numpy(np.int64),
        "error": c["n_error"].to_numpy(np.int64),
        "skipped": c["n_skipped"].to_numpy(np.int64),
        "n": (vcodes <= 1).astype(np.int64),
        "k": (vcodes == 0).astype(np.int64),
        "flaky": c["flaky"].to_numpy(dtype=bool).astype(np.int64),
        "error_rows": (vcodes == 2).astype(np.int64),
        "skipped_rows": (vcodes == 3).astype(np.int64),
    }
    sums = {name: np.bincount(g_codes, weights=arr, minlength=m).astype(np.int64) for name, arr in cols.items()}
    for name in sums:
        sums[name] = np.append(sums[name], cols[name].sum())
    labels = [*map(str, g_uniques), OVERALL]
    return _rate_table(by, labels, sums, confidence)


def _rate_table(by: str, labels: Sequence[str], sums: dict[str, np.ndarray], confidence: float) -> pd.DataFrame:
    n, k = sums["n"], sums["k"]
    lo, hi = wilson_ci(k, n, confidence)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_hat = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
        graded_att = sums["pass"] + sums["fail"]
        att = np.where(graded_att > 0, sums["pass"] / np.where(graded_att > 0, graded_att, 1), np.nan)
    out = pd.DataFrame({by: list(labels)})
    for name in ("rows", "attempts", "pass", "fail", "error", "skipped", "n", "k"):
        out[name] = sums[name]
    out["p_hat"] = p_hat
    out["ci_low"] = lo
    out["ci_high"] = hi
    out["attempt_p_hat"] = att
    for name in ("flaky", "error_rows", "skipped_rows"):
        out[name] = sums[name]
    return out


# --------------------------------------------------------------------------- McNemar and Holm


def mcnemar_exact(b: Any, c: Any) -> Any:
    """Two-sided exact McNemar p-value from discordant counts, vectorized.

    ``p = min(1, 2 * P[X <= min(b, c)])``, ``X ~ Binomial(b + c, 1/2)``;
    ``p = 1`` when ``b + c = 0``. Same value as R's ``binom.test(min(b, c), b + c)$p.value``.

    >>> round(mcnemar_exact(8, 1), 4), round(mcnemar_exact(2, 13), 5), mcnemar_exact(5000, 5000)
    (0.0391, 0.00739, 1.0)
    """
    scalar = _is_scalar(b, c)
    b_arr, c_arr = np.broadcast_arrays(_counts(b, "b"), _counts(c, "c"))
    m = b_arr + c_arr
    k = np.minimum(b_arr, c_arr)
    p = np.array(np.minimum(1.0, 2.0 * _sps.binom.cdf(k, m, 0.5)), dtype=float)
    # scipy's CDF underflows to 0 well above the smallest double (e.g. 1e-287 for
    # k=30, m=1150); recompute tiny tails as a log-sum-exp of exact log terms.
    tiny = np.flatnonzero((p < 1e-250) & (m > 0))
    for i in tiny:
        p.flat[i] = _tiny_two_sided(int(k.flat[i]), int(m.flat[i]))
    p = np.where(m == 0, 1.0, p)
    return _ret(p, scalar)


def _tiny_two_sided(k: int, m: int) -> float:
    """2 * P[X <= k], X ~ Bin(m, 1/2), for a tail far below 1e-250 (log-space sum)."""
    from scipy.special import gammaln, logsumexp

    j = np.arange(k + 1, dtype=float)
    log_terms = gammaln(m + 1) - gammaln(j + 1) - gammaln(m - j + 1) - m * math.log(2.0)
    return float(np.exp(logsumexp(log_terms) + math.log(2.0)))


def holm(p_values: Any) -> np.ndarray:
    """Holm step-down adjusted p-values, in the order given.

    NaN entries are left out of the family and stay NaN. Equivalent to R's
    ``p.adjust(p, "holm")`` and to statsmodels ``multipletests(p,
    method="holm")[1]`` -- computed here with NumPy because that statsmodels
    call runs ``gc.collect()`` on every Holm adjustment (0.1-0.3 s with a
    large heap), which a comparison of a million outcomes cannot afford.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        if np.any((p[ok] < 0) | (p[ok] > 1)):
            raise InputError("p-values must lie in [0, 1]")
        q = p[ok]
        order = np.argsort(q, kind="stable")
        m = q.size
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * q[order]))
        res = np.empty(m)
        res[order] = adj
        out[ok] = res
    return out


# --------------------------------------------------------------------------- paired difference


def paired_diff_ci(n11: Any, n10: Any, n01: Any, n00: Any, confidence: float = 0.95) -> tuple[Any, Any, Any]:
    """Newcombe (1998) method 10 interval for ``p1 - p2`` of paired proportions.

    The 2x2 table of paired outcomes: ``n11`` both succeeded, ``n10`` only the
    first, ``n01`` only the second, ``n00`` neither. ``p1 = (n11 + n10)/N``,
    ``p2 = (n11 + n01)/N``, estimate ``(n10 - n01)/N``. Returns
    ``(estimate, ci_low, ci_high)``; NaN when ``N = 0``. Vectorized.

    In a comparison, first = candidate and second = baseline: ``n10`` is the
    number of fixed rows, ``n01`` the number of broken rows.

    >>> est, lo, hi = paired_diff_ci(59, 6, 16, 80)  # Cavo et al. 2012, Fagerland et al. 2017 ch. 8
    >>> round(est, 4), round(lo, 4), round(hi, 4)
    (-0.0621, -0.1186, -0.0046)
    """
    scalar = _is_scalar(n11, n10, n01, n00)
    a, b, c, d = np.broadcast_arrays(_counts(n11, "n11"), _counts(n10, "n10"), _counts(n01, "n01"), _counts(n00, "n00"))
    n = a + b + c + d
    safe = np.where(n > 0, n, 1.0)
    p1 = (a + b) / safe
    p2 = (a + c) / safe
    l1, u1 = wilson_ci(a + b, n, confidence)
    l2, u2 = wilson_ci(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    num = a * d - b * c
    num = np.where(num > n / 2.0, num - n / 2.0, np.where(num >= 0, 0.0, num))
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(margins > 0, num / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
    d1 = np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    d2 = np.sqrt(np.maximum((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    est = p1 - p2
    lo = np.maximum(-1.0, est - d1)
    hi = np.minimum(1.0, est + d2)
    empty = n == 0
    est, lo, hi = (np.where(empty, np.nan, x) for x in (est, lo, hi))
    return _ret(est, scalar), _ret(lo, scalar), _ret(hi, scalar)


# --------------------------------------------------------------------------- clustered SE


class ClusteredMean(NamedTuple):
    """A mean score with its naive and cluster-robust standard errors."""

    mean: float
    se: float  # cluster-robust (Miller 2024)
    se_iid: float  # sqrt(sample variance / n), as if rows were independent
    n: int
    clusters: int

    @property
    def design_effect(self) -> float:
        """(se / se_iid)^2: how much the clustering inflates the variance."""
        return (self.se / self.se_iid) ** 2 if self.se_iid > 0 else float("nan")


def clustered_se(
    data: pd.DataFrame | Sequence[float] | np.ndarray,
    groups: str | Sequence[Any] | np.ndarray,
    score: str | None = None,
    *,
    small_sample: bool = False,
) -> ClusteredMean:
    """Cluster-robust standard error of a mean score (Miller 2024).

    Call as ``clustered_se(df, "conversation_id", "score")`` (column names) or
    ``clustered_se(scores, group_labels)`` (arrays). Scores may be 0/1 pass
    indicators or graded scores; NaN scores are an error.

    ``se`` is ``sqrt(sum_c (sum_{i in c}(s_i - mean))^2) / n`` -- the
    cluster sandwich for an intercept-only regression
    (statsmodels ``OLS(s, 1).fit(cov_type="cluster", cov_kwds={"groups": g,
    "use_correction": small_sample})``). With every row its own cluster it is
    ``sqrt(sum (s_i - mean)^2) / n``. ``small_sample=True`` multiplies the
    variance by ``G/(G-1)`` (statsmodels' correction; its ``(n-1)/(n-k)`` factor is 1 here).
    ``se_iid`` is the usual ``sqrt(s^2 / n)`` with the n-1 sample variance.
    """
    from statsmodels.regression.linear_model import OLS

    if isinstance(data, pd.DataFrame):
        if not isinstance(groups, str) or score is None:
            raise InputError("with a DataFrame, pass the group and score column names")
        for col in (groups, score):
            if col not in data.columns:
                raise InputError(f"no column {col!r}")
        s = data[score].to_numpy(dtype=float)
        g = data[groups].to_numpy()
    else:
        s = np.asarray(data, dtype=float).ravel()
        g = np.asarray(groups).ravel()
    if s.size != g.size:
        raise InputError(f"scores ({s.size}) and groups ({g.size}) differ in length")
    if s.size < 2:
        raise InputError("need at least 2 scores for a standard error")
    if np.isnan(s).any():
        raise InputError("scores contain NaN")
    codes, uniques = pd.factorize(pd.Series(g), sort=False)
    if (codes < 0).any():
        raise InputError("groups contain a missing label")
    n_groups = len(uniques)
    if n_groups < 2:
        raise InputError("need at least 2 clusters for a clustered standard error")
    fit = OLS(s, np.ones((s.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "use_correction": small_sample}
    )
    se = float(np.sqrt(fit.cov_params()[0, 0]))
    se_iid = float(np.std(s, ddof=1) / np.sqrt(s.size))
    return ClusteredMean(mean=float(s.mean()), se=se, se_iid=se_iid, n=int(s.size), clusters=n_groups)


# --------------------------------------------------------------------------- planning


def _check_plan(delta: float, discordance: float, alpha: float, power: float | None) -> None:
    if not 0.0 < discordance <= 1.0:
        raise InputError(f"discordance must be in (0, 1], got {discordance!r}")
    if not 0.0 < abs(delta) <= discordance:
        raise InputError(f"|delta| must be in (0, discordance]: delta={delta!r}, discordance={discordance!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha!r}")
    if power is not None and not 0.0 < power < 1.0:
        raise InputError(f"power must be in (0, 1), got {power!r}")


def _connor_n(delta: float, psi: float, alpha: float, power: float) -> float:
    za = _sps.norm.ppf(1 - alpha / 2)
    zb = _sps.norm.ppf(power)
    return float((za * math.sqrt(psi) + zb * math.sqrt(psi - delta * delta)) ** 2 / (delta * delta))


def _exact_reject_prob(m: np.ndarray, pi_fix: float, alpha: float) -> np.ndarray:
    """P(exact McNemar p < alpha | m discordant rows), each fixed with probability pi_fix."""
    m = np.asarray(m, dtype=float)
    # largest x with 2*cdf(x; m, 1/2) < alpha (the lower rejection bound); -1 when none
    x = _sps.binom.ppf(alpha / 2.0, m, 0.5)
    x = np.where(2.0 * _sps.binom.cdf(x, m, 0.5) < alpha, x, x - 1)
    x = np.where((x >= 0) & (2.0 * _sps.binom.cdf(x, m, 0.5) < alpha), x, -1.0)
    # p-value is symmetric: reject when X <= x or X >= m - x
    lower = np.where(x >= 0, _sps.binom.cdf(x, m, pi_fix), 0.0)
    upper = np.where(x >= 0, _sps.binom.sf(m - x - 1, m, pi_fix), 0.0)
    return np.where(m > 0, np.minimum(1.0, lower + upper), 0.0)


def mcnemar_power(n: int, delta: float, discordance: float, alpha: float = 0.05, method: str = "exact") -> float:
    """Power of a two-sided McNemar comparison of ``n`` paired rows.

    ``discordance`` is the expected share of rows that flip either way and
    ``delta`` the expected change in pass rate (``|delta| <= discordance``).
    ``method="exact"``: the exact conditional test (reject when ``p < alpha``),
    enumerating the number of discordant rows ``M ~ Bin(n, discordance)`` and
    the fixed count among them ``~ Bin(M, (discordance + |delta|) / (2 discordance))``.
    ``method="connor"``: the normal approximation of Connor (1987).
    """
    _check_plan(delta, discordance, alpha, None)
    if n < 1:
        raise InputError(f"n must be >= 1, got {n!r}")
    d = abs(delta)
    if method == "connor":
        za = _sps.norm.ppf(1 - alpha / 2)
        if d >= discordance:
            return 1.0
        zb = (math.sqrt(n) * d - za * math.sqrt(discordance)) / math.sqrt(discordance - d * d)
        return float(_sps.norm.cdf(zb))
    if method != "exact":
        raise InputError(f"unknown power method {method!r}: use exact or connor")
    pi_fix = (discordance + d) / (2.0 * discordance)
    m = np.arange(n + 1)
    pm = _sps.binom.pmf(m, n, discordance)
    keep = pm > 1e-300
    return float(np.sum(pm[keep] * _exact_reject_prob(m[keep], pi_fix, alpha)))


def rows_needed(
    delta: float, discordance: float, alpha: float = 0.05, power: float = 0.8, method: str = "exact"
) -> int:
    """Rows needed to detect a change ``delta`` in pass rate with the exact McNemar test.

    ``method="exact"`` (default): the first n at which the exact test's power
    (see :func:`mcnemar_power`) reaches ``power``, found by a scan upward in
    steps of about 2% and refined one row at a time (the exact test's power is
    a slightly saw-toothed function of n, so a smaller n may reach it by a hair).
    ``method="connor"``: Connor's (1987) normal approximation,
    ``n = ceil((z_{1-alpha/2} sqrt(psi) + z_power sqrt(psi - delta^2))^2 / delta^2)``.

    >>> rows_needed(0.02, 0.06, method="connor")
    1175
    """
    _check_plan(delta, discordance, alpha, power)
    n_conn = math.ceil(_connor_n(abs(delta), discordance, alpha, power) - 1e-9)
    if method == "connor":
        return int(n_conn)
    if method != "exact":
        raise InputError(f"unknown method {method!r}: use connor or exact")
    n = max(1, int(n_conn * 0.7))
    while mcnemar_power(n, delta, discordance, alpha) >= power and n > 1:
        n = max(1, n // 2)
    step = max(1, n // 50)
    while mcnemar_power(n, delta, discordance, alpha) < power:
        n += step
        if n > 50_000_000:
            raise InputError("more than 50,000,000 rows needed; the plan is not practical")
    lo = max(1, n - step)
    for cand in range(lo, n + 1):
        if mcnemar_power(cand, delta, discordance, alpha) >= power:
            return cand
    return n


def min_detectable_effect(
    n: int, discordance: float, alpha: float = 0.05, power: float = 0.8, method: str = "exact"
) -> float:
    """Smallest change in pass rate that ``n`` paired rows detect with the given power.

    ``method="exact"`` (default): the ``delta`` at which the exact McNemar
    test's power (:func:`mcnemar_power`, increasing in ``|delta|``) reaches
    ``power``, solved with Brent's method. ``method="connor"``: Connor's (1987)
    approximate formula inverted for ``delta``. Returns ``nan`` when even
    ``delta = psi`` (every flip in one direction) is not detectable.
    """
    from scipy.optimize import brentq

    _check_plan(discordance, discordance, alpha, power)
    if n < 1:
        raise InputError(f"n must be >= 1, got {n!r}")
    if method == "exact":

        def short(d: float) -> float:
            return mcnemar_power(n, d, discordance, alpha) - power

        if short(discordance) < 0:
            return float("nan")
        return float(brentq(short, 1e-9, discordance, xtol=1e-10, rtol=1e-10))
    if method != "connor":
        raise InputError(f"unknown method {method!r}: use exact or connor")
    za = _sps.norm.ppf(1 - alpha / 2)
    zb = _sps.norm.ppf(power)

    def f(d: float) -> float:
        return math.sqrt(n) * d - za * math.sqrt(discordance) - zb * math.sqrt(max(discordance - d * d, 0.0))

    if f(discordance) < 0:
        return float("nan")
    return float(brentq(f, 1e-12, discordance, xtol=1e-14, rtol=1e-12))
