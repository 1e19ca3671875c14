"""The gate's power warning: a critical slice with too few paired rows to detect the margin.

Warnings (``decision.warnings``, printed as ``[WARN]`` lines; they never change
the exit code): besides the slices short of evidence, each critical slice whose
paired rows are too few for the one-sided exact McNemar test (the gate's) to
detect the policy's ``non_inferiority_margin`` (without a margin, or a margin of
0: a change of 0.05, :data:`POWER_DELTA`) at the policy's ``alpha`` with 80% power
(the two-sided plan at ``2 alpha``)
(:func:`power_warnings`, from :func:`goldenkit.stats.rows_needed`, the numbers
of ``goldenkit stats plan``). The share of rows that flip is the comparison's
own, ``(b + c) / paired`` overall, and at least the change itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenkit.errors import InputError
from goldenkit.gate._policy import GatePolicy
from goldenkit.stats import MAX_PLAN_ROWS, rows_needed

if TYPE_CHECKING:
    from goldenkit.compare import Comparison

__all__ = ["POWER", "POWER_DELTA", "power_warnings"]

#: The change in pass rate a critical slice should be able to detect when the policy sets no margin.
POWER_DELTA = 0.05
#: The power :func:`power_warnings` asks of a critical slice's paired rows.
POWER = 0.8


def power_warnings(comparison: Comparison, policy: GatePolicy) -> list[str]:
    """One line for each critical slice whose paired rows are too few to detect the policy's margin.

    The change to detect is ``non_inferiority_margin`` (:data:`POWER_DELTA` without one, or with 0), at
    the policy's ``alpha`` with :data:`POWER`, by the exact McNemar test (:func:`goldenkit.stats.rows_needed`);
    the share of rows that flip is the comparison's, overall, and at least the change. A critical slice
    without rows is left to its evidence rule.
    """
    margin = policy.non_inferiority_margin
    delta = margin if margin else POWER_DELTA
    what = f"the non-inferiority margin {delta:g}" if margin else f"a change of {delta:g} (no non_inferiority_margin)"
    ledger, overall = comparison.ledger, comparison.table.iloc[-1]
    paired = ledger.account(None).paired
    flips = (int(overall["b"]) + int(overall["c"])) / paired if paired else 0.0
    psi = min(1.0, max(flips, delta))
    share = f"{psi:.3g} of the rows flipping ({'as in this comparison' if flips >= delta else 'at least the change'})"
    two_sided = min(0.5, 2 * policy.alpha)  # the one-sided test at alpha, planned as two-sided at 2 alpha
    plan = f"goldenkit stats plan --delta {delta:g} --discordance {psi:.3g} --alpha {two_sided:g}"
    need: int | str | None = None
    out = []
    for s in policy.critical:
        account = ledger.account(s)
        if account.rows == 0:
            continue
        if need is None:
            try:
                need = rows_needed(delta, float(f"{psi:.3g}"), two_sided, POWER)
            except InputError:
                need = f"more than {MAX_PLAN_ROWS:,}"
        if isinstance(need, str) or account.paired < need:
            out.append(
                f"critical slice {s}: {account.paired} paired row(s) are too few to detect {what} at alpha "
                f"{policy.alpha:g} with {POWER:.0%} power; it needs {need} paired rows "
                f"(one-sided exact McNemar test, {share}: {plan})"
            )
    return out
