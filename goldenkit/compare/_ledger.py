"""One evidence ledger: every in-scope row, its status on each side, and whether it is paired evidence.

A comparison's ledger is built once (:func:`evidence_ledger`, called by
:func:`goldenkit.compare.compare_runs`); every gate rule reads it, and the
decision prints its account per slice ("refunds: 58 of 60 rows paired; 1 ERROR
infrastructure, 1 SKIPPED on the candidate").

The rows in scope are the baseline's. Each side's status of a row is one of

==========  ==================================================================
PASS, FAIL  the row's collapsed verdict (:func:`goldenkit.stats.collapse_repeats`)
UNDECIDED   graded repeats and errored ones, and the errored ones could decide it
ERROR       every graded attempt errored; ``*_error_kind`` says whose error
SKIPPED     nothing graded it (a soft grader only, a judge that left it PENDING)
MISSING     the side has no outcome for the row (an incomplete run, a shard)
NOT_NEEDED  the candidate is a sequential run that decided without the row
            (``goldenkit run --sequential``: the rows after those it read, and
            those the baseline did not grade, are never run): "not needed:
            decided", never MISSING
==========  ==================================================================

A run that stops decided repeats (``stop_decided_repeats``) has rows with fewer
outcomes than its repeats: a row whose verdict the repeats not called could not
have changed (:func:`goldenkit.stats.decided_rows`, under the rule recorded) is
complete (:func:`missing_repeats`).

A row is **paired** evidence when it is PASS or FAIL on both sides; ``why``
names what kept any other row out, side by side. ``cause`` sorts that reason
for the exit code: ``outage`` (an error nobody's answer caused: transient,
infrastructure, grader, simulator, on either side: exit 3 when it takes a
slice's evidence), ``candidate`` (the candidate's own refused request or
agent error: counted against it), ``absent`` (skipped or missing rows,
exit 2) and ``decided`` (not needed by a sequential run that decided).
Rows only the candidate has are outside the scope and counted apart
(:attr:`Ledger.out_of_scope`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.results import SEQUENTIAL, sequential_line, sequential_rows
from goldenkit.schema import ERROR, FAIL, INVALID, MISSING_ROW, PASS, SKIPPED, counts_against_candidate, error_kind
from goldenkit.stats import OVERALL, decided_rows, verdict_codes

__all__ = [
    "LEDGER_COLUMNS",
    "LEDGER_STATUSES",
    "NOT_NEEDED",
    "SEQUENTIAL",
    "UNDECIDED",
    "Ledger",
    "SliceAccount",
    "evidence_ledger",
    "missing_repeats",
    "decided_repeats_note",
    "sequential_line",
    "sequential_notes",
    "sequential_rows",
    "unread_reason",
    "side_problems",
]

UNDECIDED = "UNDECIDED"
MISSING = MISSING_ROW
NOT_NEEDED = "NOT_NEEDED"
NOT_NEEDED_DECIDED = "not needed: decided"
#: Every status a side's row can have in the ledger.
LEDGER_STATUSES = (PASS, FAIL, UNDECIDED, ERROR, SKIPPED, MISSING, NOT_NEEDED)
#: Columns of :attr:`Ledger.rows`.
LEDGER_COLUMNS = (
    "row_id",
    "slice",
    "base_status",
    "base_error_kind",
    "cand_status",
    "cand_error_kind",
    "paired",
    "cause",
    "why",
)
_CAUSES = ("outage", "candidate", "absent", "decided")


@dataclass(frozen=True)
class SliceAccount:
    """How many of a slice's in-scope rows are paired, and what kept the others out, by cause."""

    slice: str
    rows: int
    paired: int
    causes: dict[str, int]
    reasons: dict[str, int]

    @property
    def share(self) -> float:
        """Paired rows over in-scope rows (0.0 for an empty slice)."""
        return self.paired / self.rows if self.rows else 0.0

    def line(self) -> str:
        """``refunds: 58 of 60 rows paired; 1 ERROR infrastructure on the candidate, 1 SKIPPED on the base``."""
        out = f"{self.slice}: {self.paired} of {self.rows} rows paired"
        if self.reasons:
            out += "; " + ", ".join(
                f"{n} {why}" for why, n in sorted(self.reasons.items(), key=lambda x: (-x[1], x[0]))
            )
        return out


@dataclass
class Ledger:
    """Every in-scope row of a comparison (:data:`LEDGER_COLUMNS`), and the rows outside the scope."""

    rows: pd.DataFrame
    #: row ids only the candidate has (outside the baseline's scope)
    out_of_scope: list[str] = field(default_factory=list)

    def account(self, slice_name: str | None = None) -> SliceAccount:
        """The account of one slice, or of every row (``None`` or ``"(overall)"``)."""
        r = self.rows
        name = OVERALL if slice_name in (None, OVERALL) else str(slice_name)
        if name != OVERALL:
            r = r[(r["slice"].astype(str) == name).to_numpy()]
        out = r[~r["paired"].to_numpy(dtype=bool)]
        causes = {c: int((out["cause"] == c).sum()) for c in _CAUSES}
        reasons = {str(k): int(v) for k, v in out["why"].value_counts().items() if int(v)}
        return SliceAccount(name, len(r), int(r["paired"].sum()), causes, reasons)

    def slices(self) -> list[str]:
        """The slices of the in-scope rows, sorted."""
        return sorted({str(s) for s in self.rows["slice"].tolist()})

    def accounts(self) -> list[SliceAccount]:
        """Every slice's account, then the overall one."""
        return [self.account(s) for s in self.slices()] + [self.account(None)]

    def format(self) -> str:
        """One line per slice and overall."""
        return "\n".join(a.line() for a in self.accounts())

    def __repr__(self) -> str:
        a = self.account(None)
        return f"Ledger({a.paired} of {a.rows} rows paired, {len(self.out_of_scope)} out of scope)"


def unread_reason(manifest: Mapping[str, Any]) -> str:
    """Why a sequential run has no outcome for a row: it decided without it, or it stopped at its budget."""
    rec = manifest.get(SEQUENTIAL)
    decided = isinstance(rec, Mapping) and rec.get("decision") not in (None, "undecided")
    return NOT_NEEDED_DECIDED if decided else "not run: the sequential run stopped at its budget"


def sequential_notes(base: Mapping[str, Any], cand: Mapping[str, Any], ledger: Ledger) -> list[str]:
    """A comparison's notes on a sequential candidate (its stop, the rows it did not need) and on a side
    whose decided repeats stopped (what counts only the repeats that ran)."""
    notes = []
    line = sequential_line(cand)
    if line is not None:
        unneeded = int((ledger.rows["cand_status"] == NOT_NEEDED).sum())
        notes += [line, f"{unneeded} row(s) {unread_reason(cand)} (left out of b, c and the paired difference)"]
    for side, man in (("base", base), ("candidate", cand)):
        if (note := decided_repeats_note(man)) is not None:
            notes.append(f"the {side} {note}")
    return notes


def decided_repeats_note(manifest: Mapping[str, Any]) -> str | None:
    """What a run whose decided repeats stopped counts only over the repeats that ran (None: every repeat ran)."""
    rule = manifest.get("stop_decided_repeats")
    if not rule:
        return None
    return (
        f"stopped decided repeats (rule {rule}): its verdicts are a full run's; attempt-weighted rates, "
        "flaky rows and pass^k / pass@k count only the repeats that ran"
    )


def missing_repeats(manifest: Mapping[str, Any], collapsed: pd.DataFrame | None) -> str | None:
    """Why a side lacks outcomes its own run key promises (rows with fewer than ``repeats`` attempts), or
    None: a repeat that is not there is no evidence, whatever run.json's ``complete`` says. A row whose
    repeats stopped once decided (``stop_decided_repeats``) is not short; a sequential run answers only
    for the rows it read (:func:`sequential_rows`)."""
    repeats = manifest.get("repeats")
    if isinstance(repeats, float) and repeats.is_integer():  # 3.0 is 3 repeats
        repeats = int(repeats)
    if collapsed is None or "attempts" not in collapsed.columns or not isinstance(repeats, int) or repeats < 1:
        return None
    read = sequential_rows(manifest)
    if read is not None:
        collapsed = collapsed[collapsed["row_id"].astype(str).isin(set(read)).to_numpy()]
    attempts = collapsed["attempts"].to_numpy()
    is_short = attempts < repeats
    rule = manifest.get("stop_decided_repeats")
    if isinstance(rule, str) and is_short.any() and {"n_pass", "n_fail", "n_error"} <= set(collapsed.columns):
        counts = [collapsed[c].to_numpy() for c in ("n_pass", "n_fail", "n_error")]
        is_short &= ~decided_rows(counts[0], counts[1], counts[2], repeats - attempts, rule)
    short = int(is_short.sum())
    total = (manifest.get("counts") or {}).get("total") if isinstance(manifest.get("counts"), Mapping) else None
    if read is not None or rule:
        total = None  # outcomes are not every row x repeat by design: the rows decide, as above
    if not short and isinstance(total, int) and total > int(attempts.sum()):  # whole rows gone from the outcomes
        return f"incomplete: {int(attempts.sum())} of the {total} outcomes its run.json counts"
    if not short:
        return None
    undecided = " and are undecided" if rule else ""
    return (
        f"incomplete: {short} row(s) have fewer than its {repeats} repeats{undecided} "
        f"({int(attempts.sum())} of {len(attempts) * repeats} outcomes)"
    )


def side_problems(
    manifest: Mapping[str, Any], collapsed: pd.DataFrame | None = None, *, candidate: bool = False
) -> list[str]:
    """Why one side's run is not evidence: INVALID, it did not finish, or (given its collapsed rows)
    outcomes its repeats promise are missing (:func:`missing_repeats`). A sequential run answers only as
    the ``candidate`` of the comparison it decided: as a baseline (or a leaderboard's entry) it is not
    a full run."""
    out = []
    if not candidate and (line := sequential_line(manifest)) is not None:
        out.append(f"a sequential run ({line}): not a full run; resume it without --sequential")
    if manifest.get("validity") == INVALID:
        out.append(f"INVALID ({manifest.get('invalid_reason') or 'run.json says so'})")
    if manifest.get("complete") is False:
        out.append("incomplete (its run did not finish; resume it)")
    if (short := missing_repeats(manifest, collapsed)) is not None:
        out.append(short)
    return out


_CODE = {s: i for i, s in enumerate(LEDGER_STATUSES)}  # PASS 0, FAIL 1, ... MISSING 5, NOT_NEEDED 6
_FROM_VERDICT = np.array([_CODE[PASS], _CODE[FAIL], _CODE[ERROR], _CODE[SKIPPED]], dtype=np.int8)


def _side_status(collapsed: pd.DataFrame, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(status code, error kind) per in-scope row of one side; ``order[i]``: the side's line of row i (-1: none)."""
    n = len(order)
    status = np.full(n, _CODE[MISSING], dtype=np.int8)
    kinds = np.full(n, None, dtype=object)
    have = order >= 0
    at = order[have]
    codes = _FROM_VERDICT[verdict_codes(collapsed["verdict"])][at]
    if "undecided" in collapsed.columns:
        codes = np.where(
            (codes == _CODE[ERROR]) & collapsed["undecided"].to_numpy(dtype=bool)[at], _CODE[UNDECIDED], codes
        )
    status[have] = codes
    err = np.flatnonzero(have)[(codes == _CODE[ERROR]) | (codes == _CODE[UNDECIDED])]
    if len(err):
        lines = order[err]
        if "error_kind" in collapsed.columns:
            raw = collapsed["error_kind"].to_numpy(dtype=object)[lines]
        elif "n_permanent" in collapsed.columns:  # a table from before the taxonomy
            raw = np.where(collapsed["n_permanent"].to_numpy()[lines] > 0, "refused", "transient").astype(object)
        else:
            raw = np.full(len(lines), None, dtype=object)
        kinds[err] = [error_kind(k) for k in raw]
    return status, kinds


def _why(side: str, status: str, kind: Any) -> tuple[str, str]:
    """(cause, reason) of one side's unpaired row."""
    if status in (ERROR, UNDECIDED):
        cause = "candidate" if side == "candidate" and counts_against_candidate(kind) else "outage"
        return cause, f"{status} {kind} on the {side}"
    if status == NOT_NEEDED:
        return "decided", NOT_NEEDED_DECIDED
    return "absent", f"{status} on the {side}"


def _reasons(base: np.ndarray, bk: np.ndarray, cand: np.ndarray, ck: np.ndarray) -> tuple[list[str], list[str]]:
    causes, whys = [], []
    rank = {"outage": 0, "candidate": 1, "absent": 2, "decided": 3}
    for b, k1, c, k2 in zip(base.tolist(), bk.tolist(), cand.tolist(), ck.tolist(), strict=True):
        parts = [_why("base", b, k1)] if b not in (PASS, FAIL) else []
        parts += [_why("candidate", c, k2)] if c not in (PASS, FAIL) else []
        if not parts:
            causes.append("")
            whys.append("")
            continue
        causes.append(min((p[0] for p in parts), key=rank.__getitem__))  # an outage on either side wins
        whys.append(" and ".join(p[1] for p in parts))
    return causes, whys


def evidence_ledger(
    base: pd.DataFrame,
    cand: pd.DataFrame | None,
    *,
    order: np.ndarray | None = None,
    scope: Sequence[str] | None = None,
    read: Sequence[str] | None = None,
    unread_why: str = NOT_NEEDED_DECIDED,
) -> Ledger:
    """The ledger of two collapsed tables (``row_id, slice, verdict, undecided, error_kind``).

    The in-scope rows are the baseline's (``scope`` narrows them to those ids);
    ``cand`` None means the candidate has no outcome at all (every row MISSING).
    ``order[i]`` (optional) is the candidate's line of base row i, -1 where it has none.
    ``read``: the rows a sequential candidate read (:func:`sequential_rows`); its status of every
    other row it has no outcome for is NOT_NEEDED, with ``unread_why`` as its reason (:func:`unread_reason`).
    """
    if scope is not None:
        base = base[base["row_id"].astype(str).isin(set(map(str, scope))).to_numpy()]
        order = None
    n = len(base)
    b_status, b_kind = _side_status(base, np.arange(n, dtype=np.int64))
    out_of_scope: list[str] = []
    if cand is None:
        c_status, c_kind = np.full(n, _CODE[MISSING], dtype=np.int8), np.full(n, None, dtype=object)
    else:
        if order is None:
            order = np.asarray(pd.Index(cand["row_id"].astype(str)).get_indexer(base["row_id"].astype(str)), np.int64)
        c_status, c_kind = _side_status(cand, order)
        extra = np.ones(len(cand), dtype=bool)
        extra[order[order >= 0]] = False
        out_of_scope = sorted(str(x) for x in cand["row_id"].to_numpy()[extra])
    if read is not None:
        unread = ~base["row_id"].astype(str).isin(set(map(str, read))).to_numpy()
        c_status = np.where(unread & (c_status == _CODE[MISSING]), _CODE[NOT_NEEDED], c_status).astype(np.int8)
    paired = (b_status <= _CODE[FAIL]) & (c_status <= _CODE[FAIL])
    causes = np.full(n, "", dtype=object)
    whys = np.full(n, "", dtype=object)
    out = np.flatnonzero(~paired)  # the reasons are written for the unpaired rows only (few, as a rule)
    names = np.array(LEDGER_STATUSES, dtype=object)
    causes[out], whys[out] = _reasons(names[b_status[out]], b_kind[out], names[c_status[out]], c_kind[out])
    if unread_why != NOT_NEEDED_DECIDED:  # a budget, not a decision, left these rows out
        whys[out] = [str(w).replace(NOT_NEEDED_DECIDED, unread_why) for w in whys[out]]
    cats = list(LEDGER_STATUSES)
    rows = pd.DataFrame(
        {
            "row_id": base["row_id"].astype(object).to_numpy(),
            "slice": base["slice"].astype(str).to_numpy() if "slice" in base.columns else np.full(n, ""),
            "base_status": pd.Categorical.from_codes(b_status, categories=cats),
            "base_error_kind": b_kind,
            "cand_status": pd.Categorical.from_codes(c_status, categories=cats),
            "cand_error_kind": c_kind,
            "paired": paired,
            "cause": causes,
            "why": whys,
        },
        columns=list(LEDGER_COLUMNS),
    )
    return Ledger(rows=rows, out_of_scope=out_of_scope)


publish(globals())
