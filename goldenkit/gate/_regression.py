"""The gate's paired rules: regression (one Holm family), non-inferiority, and the point rule.

Used by :func:`goldenkit.gate.evaluate_gate` (:mod:`goldenkit.gate` lists the
rules, their exit codes and the two error rates they hold):

* :func:`regression_rules`: the overall table and the critical slices (and the
  other slices with ``fail_on_slices = true``) form ONE Holm family at
  ``alpha`` of one-sided exact McNemar tests (more broke than fixed,
  :func:`goldenkit.stats.mcnemar_one_sided`); a line fails (exit 2) when
  ``b > c`` and its Holm-adjusted p is below ``alpha``. Other slices are listed
  for review when their unadjusted one-sided p is below ``alpha``.
* :func:`non_inferiority_rules`: overall and on every critical slice, the
  upper limit of the two-sided ``1 - 2 alpha`` Newcombe interval of the paired
  drop (base minus candidate), that is a one-sided ``1 - alpha`` upper
  confidence bound, must be below ``non_inferiority_margin``. The interval is
  Newcombe's (1998) **method 11**: method 10's square-and-add (the compare
  table's interval) on continuity-corrected Wilson limits
  (:func:`drop_interval`). Method 10 passes a candidate whose true drop is the
  margin about 5.1% of the time at 400 paired rows and 25% of rows flipping
  (simulated), a hair over alpha; method 11 holds it under (tests/test_gate_three_way.py). Above it,
  the rule is "not shown" (exit 3, naming the paired rows it would need),
  unless the drop itself is shown to exceed the margin (the lower limit above
  the margin, and the line's regression failed in the Holm family): exit 2.
* :func:`point_rules`: ``allowed_regression``, the golden harness's point
  comparison for deterministic runs (no error rate), refused on runs whose
  repeats disagree unless ``allow_noisy = true``.
* :func:`detection_notes`: with ``non_inferiority_margin = false``, the drop
  the paired rows could not have detected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import binom, norm

from goldenkit._display import number
from goldenkit.errors import EXIT_GATE_FAILED, EXIT_INFRASTRUCTURE, InputError
from goldenkit.gate._evidence import own_error_rows, paired_evidence
from goldenkit.gate._policy import UNDECIDED, GatePolicy, GateRule
from goldenkit.schema import NEW_FAILURE, RECOVERED, UNCHANGED_FAIL, UNCHANGED_PASS
from goldenkit.stats import MAX_PLAN_ROWS, holm, mcnemar_one_sided, rows_needed

__all__ = ["NI_POWER", "detection_notes", "drop_interval", "non_inferiority_rules", "point_rules", "regression_rules"]

#: The power at which the gate states the paired rows a non-inferiority rule would need.
NI_POWER = 0.8


def _wilson_cc(k: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Continuity-corrected Wilson limits of ``k / n`` (Newcombe 1998, method 4); 0 and 1 at the ends."""
    safe = np.where(n > 0, n, 1.0)
    p = k / safe
    z2 = z * z
    lo = (2 * safe * p + z2 - 1 - z * np.sqrt(np.maximum(z2 - 2 - 1 / safe + 4 * p * (safe * (1 - p) + 1), 0.0))) / (
        2 * (safe + z2)
    )
    hi = (2 * safe * p + z2 + 1 + z * np.sqrt(np.maximum(z2 + 2 - 1 / safe + 4 * p * (safe * (1 - p) - 1), 0.0))) / (
        2 * (safe + z2)
    )
    return np.where(p <= 0, 0.0, np.maximum(lo, 0.0)), np.where(p >= 1, 1.0, np.minimum(hi, 1.0))


def drop_interval(both_pass: Any, fixed: Any, broke: Any, both_fail: Any, alpha: float) -> tuple[Any, Any]:
    """``(low, high)``: one-sided ``1 - alpha`` bounds of the paired drop in pass rate (base minus
    candidate), the limits of the two-sided ``1 - 2 alpha`` Newcombe (1998) method 11 interval
    (square-and-add of continuity-corrected Wilson limits, with method 10's correlation); vectorized,
    NaN without paired rows.

    >>> [round(float(x), 4) for x in drop_interval(342, 14, 10, 34, 0.05)]
    [-0.0323, 0.0119]
    """

    a, c, b, d = (np.asarray(x, dtype=float) for x in (both_pass, fixed, broke, both_fail))
    n = a + b + c + d
    z = float(norm.isf(alpha))
    p1, p2 = (a + b) / np.where(n > 0, n, 1.0), (a + c) / np.where(n > 0, n, 1.0)  # base, candidate
    l1, u1 = _wilson_cc(a + b, n, z)
    l2, u2 = _wilson_cc(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    num = a * d - b * c
    num = np.where(num > n / 2.0, num - n / 2.0, np.where(num >= 0, 0.0, num))
    phi = np.where(margins > 0, num / np.sqrt(np.where(margins > 0, margins, 1.0)), 0.0)
    d_lo = np.sqrt(np.maximum((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    d_hi = np.sqrt(np.maximum((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    est = p1 - p2
    lo = np.where(n > 0, np.maximum(-1.0, est - d_lo), np.nan)
    hi = np.where(n > 0, np.minimum(1.0, est + d_hi), np.nan)
    return (float(lo), float(hi)) if lo.ndim == 0 else (lo, hi)


def _lines(comparison: Any) -> tuple[pd.Series, pd.DataFrame]:
    """The overall line and the slice lines (indexed by slice name) of the comparison table."""
    t = comparison.table
    sl = t.iloc[:-1]
    return t.iloc[-1], sl.set_index(sl["slice"].astype(str))


def regression_rules(comparison: Any, policy: GatePolicy, review: list[str]) -> tuple[list[GateRule], set[str]]:
    """The family's rules, and the lines (``""`` overall, else the slice) whose regression is shown."""
    alpha = policy.alpha
    ov, by_name = _lines(comparison)
    names = list(by_name.index)
    crit = [s for s in policy.critical if s in names]
    other = [s for s in names if s not in policy.critical]
    family: list[tuple[str, str]] = [("regression.overall", ""), *((f"regression.critical[{s}]", s) for s in crit)]
    if policy.fail_on_slices:
        family += [(f"regression.slice[{s}]", s) for s in other]
    lines = [ov if s == "" else by_name.loc[s] for _, s in family]
    b = np.array([int(line["b"]) for line in lines], dtype=np.int64)
    c = np.array([int(line["c"]) for line in lines], dtype=np.int64)
    p_raw = np.atleast_1d(mcnemar_one_sided(b, c))
    p_adj = holm(p_raw)
    fam = f"Holm family of {len(family)}: overall + {len(crit)} critical slice(s)"
    if policy.fail_on_slices:
        fam += f" + {len(other)} other slice(s)"
    rules, shown = [], set()
    for (name, s), line, bb, cc, pr, pa in zip(family, lines, b, c, p_raw, p_adj, strict=True):
        failed = bool(bb > cc and pa < alpha)
        detail = (
            f"{s or 'overall'}: b={bb} broke, c={cc} fixed, one-sided exact McNemar p={number(pr)}, "
            f"Holm p={number(pa)} ({fam})"
        )
        if failed:
            shown.add(s)
            detail += f" < {alpha:g}: significant regression"
        elif s and bb > cc and pr < alpha:
            review.append(s)
            detail += ": raw p below alpha, not significant after Holm: flagged for review"
        ev = paired_evidence(line, own_error_rows(comparison, line))
        rules.append(GateRule(name, not failed, float(pa), alpha, detail, "regression", evidence=ev))
    if not policy.fail_on_slices and other:
        rest = by_name.loc[other]
        p_rest = np.atleast_1d(mcnemar_one_sided(rest["b"].to_numpy(np.int64), rest["c"].to_numpy(np.int64)))
        review += [
            s for s, bb, cc, pr in zip(other, rest["b"], rest["c"], p_rest, strict=True) if bb > cc and pr < alpha
        ]
    return rules, shown


def _cells(comparison: Any, line: str) -> tuple[int, int, int, int]:
    """(both pass, fixed, broke, both fail) of the paired rows of a line (``""`` overall)."""
    rows = comparison.rows
    status = rows["status"].astype(str)
    if line:
        status = status[(rows["slice"].astype(str) == line).to_numpy()]
    counts = status.value_counts()
    return tuple(int(counts.get(k, 0)) for k in (UNCHANGED_PASS, RECOVERED, NEW_FAILURE, UNCHANGED_FAIL))  # type: ignore[return-value]


def _rows_to_show(margin: float, discordance: float, alpha: float) -> str:
    """The paired rows a one-sided test at ``alpha`` needs to show a drop under ``margin`` with
    :data:`NI_POWER` when nothing changed (the power calculator of ``goldenkit stats plan``)."""
    psi = float(f"{min(1.0, max(discordance, margin)):.3g}")
    plan = f"goldenkit stats plan --delta {margin:g} --discordance {psi:g} --alpha {2 * alpha:g}"
    try:
        n = f"about {rows_needed(margin, psi, min(0.5, 2 * alpha), NI_POWER)}"
    except InputError:
        n = f"more than {MAX_PLAN_ROWS:,}"
    return (
        f"{n} paired rows would show it with {NI_POWER:.0%} power if the candidate is as good as the "
        f"baseline ({psi:g} of the rows flipping; {plan}, two-sided at 2 alpha = one-sided at alpha)"
    )


def non_inferiority_rules(comparison: Any, policy: GatePolicy, shown: set[str]) -> list[GateRule]:
    """``non_inferiority`` (overall) and ``non_inferiority[SLICE]`` (each critical slice the runs have)."""
    m = policy.non_inferiority_margin
    if m is None:
        return []
    alpha = policy.alpha
    ov, by_name = _lines(comparison)
    paired = int(ov["n_paired"])
    psi = (int(ov["b"]) + int(ov["c"])) / paired if paired else 0.0
    need: str | None = None
    rules = []
    for s in ["", *(x for x in policy.critical if x in by_name.index)]:
        line = ov if s == "" else by_name.loc[s]
        ev = paired_evidence(line, own_error_rows(comparison, line))
        a, fixed, broke, d = _cells(comparison, s)
        drop_lo, drop_hi = drop_interval(a, fixed, broke, d, alpha)
        name = "non_inferiority" + (f"[{s}]" if s else "")
        what = f"{s or 'overall'}: upper {1 - alpha:.0%} bound of the paired drop {number(drop_hi)}"
        if not math.isnan(drop_hi) and drop_hi < m:
            rules.append(
                GateRule(name, True, drop_hi, m, f"{what} < margin {m:g}: non-inferiority shown", "regression")
            )
            continue
        if not math.isnan(drop_lo) and drop_lo > m and s in shown:
            detail = f"{what}; the drop itself exceeds the margin {m:g} (lower bound {number(drop_lo)})"
            rules.append(GateRule(name, False, drop_hi, m, detail, "regression", EXIT_GATE_FAILED, ev))
            continue
        if need is None:
            need = _rows_to_show(m, psi, alpha)
        detail = (
            f"{what} >= margin {m:g}: non-inferiority not shown ({int(line['n_paired'])} paired rows); {need}"
            if not math.isnan(drop_hi)
            else f"{s or 'overall'}: no paired row: non-inferiority not shown"
        )
        rules.append(GateRule(name, False, drop_hi, m, detail, UNDECIDED, EXIT_INFRASTRUCTURE, ev))
    return rules


def _flaky(collapsed: pd.DataFrame | None) -> list[str]:
    if collapsed is None or "flaky" not in collapsed.columns:
        return []
    return [str(r) for r in collapsed.loc[collapsed["flaky"].to_numpy(dtype=bool), "row_id"]]


def _stopped(collapsed: pd.DataFrame | None, man: Any) -> list[str]:
    """The rows whose repeats stopped once decided (``stop_decided_repeats``) before the run's repeats: their
    repeats agreed, but fewer ran than the run's count, so their stability is not shown."""
    if collapsed is None or not isinstance(man, Mapping) or not man.get("stop_decided_repeats"):
        return []
    repeats = man.get("repeats")
    if "attempts" not in collapsed.columns or not isinstance(repeats, int | float) or isinstance(repeats, bool):
        return []
    return [str(r) for r in collapsed.loc[(collapsed["attempts"].to_numpy() < repeats), "row_id"]]


def _noisy(comparison: Any) -> str:
    """Why the runs' repeats do not show them deterministic: flaky rows, or rows stopped before their repeats
    (either side); "" when they do."""
    parts = []
    for side, who in (("base", "baseline"), ("cand", "candidate")):
        collapsed = getattr(comparison, f"{side}_collapsed", None)
        man = getattr(comparison, f"{side}_manifest", None)
        for ids, what in (
            (_flaky(collapsed), "flaky row(s)"),
            (_stopped(collapsed, man), "row(s) whose repeats stopped once decided, before all of them ran"),
        ):
            if ids:
                parts.append(
                    f"{len(ids)} {what} in the {who} ({', '.join(ids[:5])}" + (", ...)" if len(ids) > 5 else ")")
                )
    return "; ".join(parts)


def point_rules(comparison: Any, policy: GatePolicy) -> list[GateRule]:
    """``allowed_regression`` overall and per slice: the candidate's pass rate may fall below the
    baseline's by at most ``allowed_regression`` (a point comparison, for deterministic runs). Runs whose
    repeats disagree, or whose repeats stopped once decided (``--stop-decided-repeats``: agreeing repeats,
    but fewer than the run's count, so stability is not shown), are refused (3) unless ``allow_noisy``."""
    allowed = policy.allowed_regression
    if allowed is None:
        return []
    noisy = _noisy(comparison)
    if noisy and not policy.allow_noisy:
        detail = (
            "allowed_regression is a point comparison for deterministic runs, and the repeats do not show "
            f"them deterministic: {noisy}; gate the run by its paired tests, or set allow_noisy = true to accept it"
        )
        return [GateRule("allowed_regression", False, None, allowed, detail, UNDECIDED, EXIT_INFRASTRUCTURE)]
    ov, by_name = _lines(comparison)
    rules = []
    for s, line in [("", ov), *by_name.iterrows()]:
        pb, pc = float(line["p_base"]), float(line["p_cand"])
        drop = pb - pc
        ok = not math.isnan(drop) and drop <= allowed + 1e-12
        detail = (
            f"{s or 'overall'}: pass rate {number(pb)} -> {number(pc)}, drop {number(drop)} {'<=' if ok else '>'} "
            f"allowed {allowed:g} (a point comparison without an error rate"
            + (f"; allow_noisy: {noisy})" if noisy else ")")
        )
        name = "allowed_regression" + (f"[{s}]" if s else "")
        ev = paired_evidence(line, own_error_rows(comparison, line))
        rules.append(GateRule(name, ok, drop, allowed, detail, "regression", evidence=ev))
    return rules


def _undetectable(n: int, alpha: float, power: float) -> float:
    """The smallest drop ``n`` paired rows detect with ``power`` by a one-sided exact McNemar test at
    ``alpha`` when every row that flips breaks (the most favourable case: any other share of flips
    needs a larger drop); NaN when no outcome of ``n`` rows is significant."""

    k = math.floor(math.log(alpha) / math.log(0.5)) + 1  # fewest broken rows, none fixed, with 0.5**k < alpha
    if n < k:
        return float("nan")
    return float(brentq(lambda d: binom.sf(k - 1, n, d) - power, 1e-12, 1.0, xtol=1e-9))


def detection_notes(comparison: Any, policy: GatePolicy) -> list[str]:
    """With ``non_inferiority_margin = false``: what the paired rows could not have detected,
    overall and on each critical slice."""
    if policy.non_inferiority_margin is not None:
        return []
    ov, by_name = _lines(comparison)
    out = []
    for s in ["", *(x for x in policy.critical if x in by_name.index)]:
        n = int((ov if s == "" else by_name.loc[s])["n_paired"])
        d = _undetectable(n, policy.alpha, NI_POWER)
        where = f" on {s}" if s else ""
        if math.isnan(d):
            out.append(f"non_inferiority_margin = false: with {n} paired rows{where} no drop could have been detected")
            continue
        out.append(
            f"non_inferiority_margin = false: with {n} paired rows{where} a drop under {100 * d:.0f} points could "
            f"not have been detected at {NI_POWER:.0%} power (one-sided exact McNemar at alpha {policy.alpha:g}, "
            "even if every row that flipped broke)"
        )
    return out
