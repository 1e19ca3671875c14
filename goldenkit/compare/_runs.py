"""Paired comparison of two runs (or a baseline and a run): comparability, flips, McNemar.

:func:`compare_runs` answers "did the candidate get better or worse than the
base, on which slices, and how sure are we?" -- or refuses to answer.

Comparability first. Two sides are compared only when their protocol keys
(:func:`goldenkit.compare.protocol_key`: dataset, sample, repeats, collapse
rule, graders with their hard flags, criteria, judge, user simulator, vision,
artifacts, who graded, imported inputs) are equal. Otherwise
:class:`goldenkit.errors.ComparisonInvalid` is raised naming **each** key that
differs (``dataset sha256 differs: 3f2a9c01b7de... vs 9b1c44e0a2f3...``); no
number is computed. The mode (live / fixtures / regrade) and the agent version
may differ -- that is what is being compared -- and are stated in ``notes``.
Baseline rows the candidate has no outcome for are MISSING (in the ledger,
:attr:`Comparison.ledger`, and the table's ``missing`` column); rows only the
candidate has are outside the baseline's scope (noted).

Per row (after :func:`goldenkit.stats.collapse_repeats` on each side; a row
its errored repeats could have decided either way is UNDECIDED, an ERROR there), the status from
base to candidate is one of

=================  ==================================  =========================
status             base -> candidate                   counted in
=================  ==================================  =========================
NEW_FAILURE        PASS -> FAIL                        ``b`` ("broke")
RECOVERED          FAIL -> PASS                        ``c`` ("fixed")
UNCHANGED_PASS     PASS -> PASS                        the paired difference
UNCHANGED_FAIL     FAIL -> FAIL                        the paired difference
NEW_ERROR          PASS or FAIL -> ERROR               ``new_error``
ERROR_CLEARED      ERROR -> PASS or FAIL               ``error_cleared``
SKIPPED_TO_ERROR   SKIPPED -> ERROR                    ``skipped_to_error``
ERROR_TO_SKIPPED   ERROR -> SKIPPED                    ``error_to_skipped``
UNCHANGED_ERROR    ERROR -> ERROR                      ``unchanged_error``
SKIPPED            SKIPPED on a side, no ERROR         ``skipped``
=================  ==================================  =========================

Rows that are ERROR or SKIPPED on either side are outside ``b`` and ``c`` and
outside the paired difference; their counts are columns of the table and are
stated in ``notes``. ``Comparison.rows`` also says, for each row the candidate
errored, whether its error was ``permanent`` (the request itself was refused:
a 400/422, context length, a content filter) or ``transient``
(``cand_error_kind``): the gate counts new permanent errors against the candidate.

Per slice and overall (``Comparison.table``): each side's pass rate over its
own graded rows with a Wilson interval; ``n_paired`` rows graded on both
sides; ``b``, ``c``; exact McNemar ``p_val``; ``p_adj``, Holm-adjusted across
**all slices of the table** (:data:`HOLM_FAMILY`; NaN on the overall line,
which is a single test -- the gate adjusts its critical and other slices as
two separate families); the paired difference ``diff = (c - b) / n_paired``
(candidate minus base) with Newcombe's method-10 interval ``diff_ci_low,
diff_ci_high``; per side the rows that are ERROR or SKIPPED
(``base_error_rows`` ...), from which :func:`goldenkit.evidence.evidence_gaps`
names the slices with too few paired rows to be evidence.

The flip list (``Comparison.flips``): every row whose status is NEW_FAILURE,
RECOVERED, NEW_ERROR, ERROR_CLEARED, SKIPPED_TO_ERROR or ERROR_TO_SKIPPED,
with row id, slice, tags, status, both collapsed verdicts, a representative
response of each side (the first repeat whose verdict equals the row's
collapsed verdict) and that repeat's grader reasons (``{grader: reason}``;
``{"error": detail}`` for an ERROR). Its texts are read on first access;
:attr:`Comparison.flip_rows` has the flipped rows without texts.

A sequential candidate (``goldenkit run --sequential``) answers for the rows it read
(:func:`goldenkit.compare._ledger.sequential_rows`): its other rows are out of the table
(``missing``, as no outcome), NOT_NEEDED in the ledger, and the first note is its stop
("stopped after 212 of 400 rows: regression on refunds shown",
:func:`goldenkit.compare._ledger.sequential_line`).

Reading is :func:`goldenkit.results.light_outcomes` (five flat columns of each
run); the two collapsed tables are joined on ``row_id`` with a pandas index.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from goldenkit._jsonable import json_records
from goldenkit._protocol_key import comparability_differences, manifest_get
from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit._reprs import comparison_html, comparison_repr
from goldenkit.compare._clusters import why
from goldenkit.compare._flips import flip_list, flipped_rows, outcome_columns
from goldenkit.compare._groups import RunRef, grouped_table, resolve_side
from goldenkit.compare._ledger import Ledger, evidence_ledger, sequential_notes, sequential_rows, unread_reason
from goldenkit.errors import ComparisonInvalid, ResultsError
from goldenkit.harnesses import sample_differences
from goldenkit.results import LIGHT_COLUMNS
from goldenkit.schema import (
    ERROR_CLEARED,
    ERROR_TO_SKIPPED,
    MISSING_ROW as MISSING,
    NEW_ERROR,
    NEW_FAILURE,
    RECOVERED,
    SKIPPED_TO_ERROR,
    UNCHANGED_ERROR,
    UNCHANGED_FAIL,
    UNCHANGED_PASS,
    UNCHANGED_SKIPPED,
    VERDICTS,
)
from goldenkit.stats import (
    OVERALL,
    collapse_repeats,
    holm,
    mcnemar_exact,
    paired_diff_ci,
    parse_rule,
    sorted_codes,
    verdict_codes,
    wilson_ci,
)

__all__ = ["FLIP_STATUSES", "HOLM_FAMILY", "STATUSES", "Comparison", "comparability_differences", "compare_runs"]

#: Every per-row status, in display order.
STATUSES = (
    NEW_FAILURE,
    RECOVERED,
    NEW_ERROR,
    ERROR_CLEARED,
    SKIPPED_TO_ERROR,
    ERROR_TO_SKIPPED,
    MISSING,
    UNCHANGED_PASS,
    UNCHANGED_FAIL,
    UNCHANGED_ERROR,
    UNCHANGED_SKIPPED,
)
#: Statuses listed in the flip list.
FLIP_STATUSES = (NEW_FAILURE, RECOVERED, NEW_ERROR, ERROR_CLEARED, SKIPPED_TO_ERROR, ERROR_TO_SKIPPED)
#: What the table's ``p_adj`` is adjusted over (the gate's families are stated by the gate).
HOLM_FAMILY = "all slices"

# status code by (base verdict code, cand verdict code); verdict codes PASS 0, FAIL 1, ERROR 2, SKIPPED 3,
# and 4 for a row the candidate has no outcome for (MISSING; the base side is never missing: its rows are the scope)
_S = {s: i for i, s in enumerate(STATUSES)}
_MISSING_CODE = 4
_SIDE_VERDICTS = [*VERDICTS, MISSING]
_STATUS_LUT = np.array(
    [
        [_S[UNCHANGED_PASS], _S[NEW_FAILURE], _S[NEW_ERROR], _S[UNCHANGED_SKIPPED], _S[MISSING]],
        [_S[RECOVERED], _S[UNCHANGED_FAIL], _S[NEW_ERROR], _S[UNCHANGED_SKIPPED], _S[MISSING]],
        [_S[ERROR_CLEARED], _S[ERROR_CLEARED], _S[UNCHANGED_ERROR], _S[ERROR_TO_SKIPPED], _S[MISSING]],
        [_S[UNCHANGED_SKIPPED], _S[UNCHANGED_SKIPPED], _S[SKIPPED_TO_ERROR], _S[UNCHANGED_SKIPPED], _S[MISSING]],
        [_S[MISSING]] * 5,
    ],
    dtype=np.int8,
)
_LEFT_OUT = (
    (NEW_ERROR, "new_error", "ERROR in the candidate only"),
    (ERROR_CLEARED, "error_cleared", "ERROR in the base only (the error cleared)"),
    (SKIPPED_TO_ERROR, "skipped_to_error", "SKIPPED in the base, ERROR in the candidate"),
    (ERROR_TO_SKIPPED, "error_to_skipped", "ERROR in the base, SKIPPED in the candidate"),
    (UNCHANGED_ERROR, "unchanged_error", "ERROR on both sides"),
    (UNCHANGED_SKIPPED, "skipped", "SKIPPED on a side"),
    (MISSING, "missing", "MISSING on the candidate (no outcome in its run)"),
)


# --------------------------------------------------------------------------- result


@dataclass
class Comparison:
    """The outcome of :func:`compare_runs` (see the module docstring for columns)."""

    base_id: str
    cand_id: str
    rule: str
    alpha: float
    rows: pd.DataFrame  # row_id, slice, base_verdict, cand_verdict, status, cand_error_kind
    table: pd.DataFrame  # per slice + overall
    #: the flipped rows without texts: row_id, slice, status, base_verdict, cand_verdict (see :attr:`flips`)
    flip_rows: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    #: what the table's lines are (``slice``, a column, or ``tags``: see :func:`goldenkit.stats.slice_table`)
    by: str = "slice"
    base_manifest: dict[str, Any] = field(default_factory=dict, repr=False)
    cand_manifest: dict[str, Any] = field(default_factory=dict, repr=False)
    #: each side's per-row collapsed table (``slice_table(cmp.base_collapsed)`` gives its slice table)
    base_collapsed: pd.DataFrame | None = field(default=None, repr=False)
    cand_collapsed: pd.DataFrame | None = field(default=None, repr=False)
    _flip_loader: Callable[[], pd.DataFrame] | None = field(default=None, repr=False)
    _flips: pd.DataFrame | None = field(default=None, repr=False)
    _ledger: Ledger | None = field(default=None, repr=False)

    @property
    def ledger(self) -> Ledger:
        """The evidence ledger (:mod:`goldenkit.compare._ledger`): every in-scope row, paired or why not."""
        if self._ledger is None:
            bc = (
                self.base_collapsed
                if self.base_collapsed is not None
                else self.rows.rename(columns={"base_verdict": "verdict"})
            )
            self._ledger = evidence_ledger(bc, self.cand_collapsed)
        return self._ledger

    @property
    def flips(self) -> pd.DataFrame:
        """The flip list with tags, both responses and both graders' reasons (read on first access)."""
        if self._flips is None:
            self._flips = self._flip_loader() if self._flip_loader is not None else self.flip_rows.copy()
        return self._flips

    @property
    def clusters(self) -> pd.DataFrame:
        """Why it broke: the NEW_FAILURE rows grouped by what the graders found (:func:`goldenkit.why`)."""

        return why(self)

    @property
    def overall(self) -> pd.Series:
        """The overall line of :attr:`table`."""
        return self.table.iloc[-1]

    @property
    def slices(self) -> pd.DataFrame:
        """The per-slice lines of :attr:`table` (without the overall line)."""
        return self.table.iloc[:-1]

    @property
    def b(self) -> int:
        """Rows that broke overall (PASS -> FAIL)."""
        return int(self.overall["b"])

    @property
    def c(self) -> int:
        """Rows that were fixed overall (FAIL -> PASS)."""
        return int(self.overall["c"])

    @property
    def p_value(self) -> float:
        """Overall exact McNemar p-value."""
        return float(self.overall["p_val"])

    def __repr__(self) -> str:

        return comparison_repr(self)

    def _repr_html_(self) -> str:

        return comparison_html(self)

    def status_counts(self) -> dict[str, int]:
        """How many rows have each status (every status listed, zeros included)."""
        vc = self.rows["status"].value_counts()
        return {s: int(vc.get(s, 0)) for s in STATUSES}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ids, rule, alpha, notes, status counts, table and flips."""
        return {
            "base": self.base_id,
            "candidate": self.cand_id,
            "rule": self.rule,
            "alpha": self.alpha,
            "holm_family": HOLM_FAMILY,
            "notes": list(self.notes),
            "status_counts": self.status_counts(),
            "table": json_records(self.table),
            "flips": json_records(self.flips),
        }


# --------------------------------------------------------------------------- reading a side


def _label(obj: Any) -> str:
    for attr in ("name", "run_id"):
        v = getattr(obj, attr, None)
        if isinstance(v, str) and v:
            return v
    m = getattr(obj, "manifest", None)
    if isinstance(m, dict) and m.get("run_id"):
        return str(m["run_id"])
    return "?"


def _collapsed(obj: Any, rule: str) -> pd.DataFrame:
    """One side's per-row table: a baseline's saved one, else its outcomes collapsed under ``rule``."""
    fn = getattr(obj, "collapsed", None)
    if callable(fn):
        return fn()
    light = outcome_columns(obj, LIGHT_COLUMNS)
    if len(light) and light["slice"].isna().any():
        raise ResultsError(f"{_label(obj)}: {int(light['slice'].isna().sum())} outcome(s) with no slice")
    return collapse_repeats(light, rule)


def _positions(ids: pd.Series, among: pd.Series) -> np.ndarray:
    """Each of ``ids``' line in ``among`` (distinct ids), -1 where it is not there."""
    found = pc.index_in(pa.array(ids, pa.string()), value_set=pa.array(among, pa.string()))
    return np.asarray(pc.fill_null(found, -1), dtype=np.int64)


def _side_rule(obj: Any, rule: str) -> str:
    r = getattr(obj, "rule", None)
    return r if isinstance(r, str) and r else rule


# --------------------------------------------------------------------------- comparability


def _imported_sample_differences(base: RunLike, cand: RunLike) -> list[str]:
    """For two imported runs whose dataset fingerprints differ: the rows whose samples differ, named."""
    paths = [str(getattr(side, "path", "")) for side in (base, cand)]  # a baseline snapshot has no run folder
    same = manifest_get(base.manifest, "dataset", "sha256") == manifest_get(cand.manifest, "dataset", "sha256")
    if same or "" in paths or not base.manifest.get("mode") == cand.manifest.get("mode") == "imported":
        return []

    try:
        return sample_differences(paths[0], paths[1])
    except (ResultsError, OSError):  # a run folder without its inputs file
        return []


# --------------------------------------------------------------------------- compare


def compare_runs(
    base: RunLike | RunRef,
    cand: RunLike | RunRef,
    *,
    rule: str = "majority",
    alpha: float = 0.05,
    by: str = "slice",
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] = "baselines",
) -> Comparison:
    """Compare a candidate against a base, row by row (see the module docstring).

    ``base`` and ``cand`` are runs (``goldenkit.results.Run``) or baselines
    (``goldenkit.baselines.Baseline``): anything with a ``.manifest`` dict and
    either ``.collapsed()`` (a per-row table saved under its own ``.rule``) or
    ``.outcomes(columns=...)``; or a name of one (:func:`goldenkit.compare._groups.resolve_side`).
    ``by``: what the table's lines are (:func:`goldenkit.compare._groups.grouped_table`).
    Raises :class:`ComparisonInvalid` naming each key that differs.
    """
    base, cand = (resolve_side(x, results_dir, baselines_dir) for x in (base, cand))
    parse_rule(rule)
    if not 0.0 < alpha < 1.0:
        raise ResultsError(f"alpha must be in (0, 1), got {alpha!r}")
    bm = getattr(base, "manifest", None)
    cm = getattr(cand, "manifest", None)
    if not isinstance(bm, dict) or not isinstance(cm, dict):
        raise ResultsError("compare_runs needs two runs or baselines (objects with a manifest)")
    b_rule, c_rule = _side_rule(base, rule), _side_rule(cand, rule)
    # protocol keys before reading any outcome
    diffs = comparability_differences(bm, cm, base_rule=b_rule, cand_rule=c_rule)
    if diffs:
        diffs += _imported_sample_differences(base, cand)
        raise ComparisonInvalid("not comparable: " + "; ".join(diffs), diffs)
    bc, cc = _collapsed(base, b_rule), _collapsed(cand, c_rule)
    read = sequential_rows(cm)
    if read is not None:  # a sequential run answers for the rows it read (a cancelled row's repeats are not)
        cc = cc[cc["row_id"].astype(str).isin(set(read)).to_numpy()].reset_index(drop=True)
    # the join: order[i] is the candidate's line of base row i (-1: the candidate has no outcome for it)
    order = _positions(bc["row_id"], cc["row_id"])
    have = order >= 0
    vb = verdict_codes(bc["verdict"])
    vc = np.full(len(bc), _MISSING_CODE, dtype=np.int8)
    vc[have] = verdict_codes(cc["verdict"])[order[have]]
    status = _STATUS_LUT[vb, vc]
    slices = bc["slice"] if "slice" in bc.columns else pd.Series([""] * len(bc))
    s_codes, s_names = sorted_codes(slices)
    ledger = evidence_ledger(bc, cc, order=order, read=read, unread_why=unread_reason(cm))
    table = _table(s_codes, s_names, vb, vc) if by == "slice" else grouped_table(_table, base, bc, by, vb, vc)
    rows = pd.DataFrame(
        {
            "row_id": bc["row_id"].astype(object).reset_index(drop=True),
            "slice": pd.Categorical.from_codes(s_codes, categories=s_names),
            "base_verdict": pd.Categorical.from_codes(vb, categories=list(VERDICTS)),
            "cand_verdict": pd.Categorical.from_codes(vc, categories=_SIDE_VERDICTS),
            "status": pd.Categorical.from_codes(status, categories=list(STATUSES)),
            "cand_error_kind": ledger.rows["cand_error_kind"].to_numpy(dtype=object),
        }
    )
    flip_rows = flipped_rows(rows, status, [_S[st] for st in FLIP_STATUSES])

    def load_flips() -> pd.DataFrame:
        return flip_list(base, cand, bc, cc, flip_rows)

    return Comparison(
        base_id=_label(base),
        cand_id=_label(cand),
        rule=rule,
        alpha=alpha,
        rows=rows,
        table=table,
        flip_rows=flip_rows,
        notes=sequential_notes(bm, cm, ledger) + _notes(bm, cm, status, read is None) + _scope_notes(ledger, cm),
        by=by,
        base_manifest=bm,
        cand_manifest=cm,
        base_collapsed=bc,
        cand_collapsed=cc,
        _flip_loader=load_flips,
        _ledger=ledger,
    )


def _scope_notes(ledger: Ledger, cm: dict[str, Any]) -> list[str]:
    notes = []
    if ledger.out_of_scope:
        shown = ", ".join(ledger.out_of_scope[:5]) + (", ..." if len(ledger.out_of_scope) > 5 else "")
        notes.append(f"{len(ledger.out_of_scope)} row(s) only in the candidate ({shown}): outside the baseline's scope")
    if cm.get("shard") and not cm.get("merged_from"):
        part = "/".join(str(cm["shard"].get(x)) for x in "kn") if isinstance(cm["shard"], dict) else cm["shard"]
        notes.append(f"the candidate is shard {part} of a sharded run: merge its shards first (goldenkit merge)")
    return notes


def _table(s_codes: np.ndarray, names: list[str], vb: np.ndarray, vc: np.ndarray) -> pd.DataFrame:
    m = len(names)
    # one contingency count per (slice, base verdict, cand verdict): every count below is a sum of its cells
    k = _MISSING_CODE + 1
    cells = np.bincount(s_codes * k * k + vb.astype(np.int64) * k + vc, minlength=m * k * k).reshape(m, k, k)
    cells = np.concatenate([cells, cells.sum(axis=0, keepdims=True)])  # the overall line
    per_status = np.zeros((m + 1, len(STATUSES)), dtype=np.int64)
    for i in range(k):
        for j in range(k):
            per_status[:, _STATUS_LUT[i, j]] += cells[:, i, j]
    graded = slice(0, 2)  # verdict codes PASS 0, FAIL 1
    n_side = {"base": cells[:, graded, :].sum(axis=(1, 2)), "cand": cells[:, :, graded].sum(axis=(1, 2))}
    k_side = {"base": cells[:, 0, :].sum(axis=1), "cand": cells[:, :, 0].sum(axis=1)}
    count = {name: per_status[:, _S[st]] for st, name, _ in _LEFT_OUT}
    b, c = per_status[:, _S[NEW_FAILURE]], per_status[:, _S[RECOVERED]]
    out = pd.DataFrame({"slice": [*names, OVERALL]})
    out["rows"] = cells.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        for side in ("base", "cand"):
            graded_n, passed = n_side[side], k_side[side]
            lo, hi = wilson_ci(passed, graded_n)
            out[f"n_{side}"] = graded_n
            out[f"k_{side}"] = passed
            out[f"p_{side}"] = np.where(graded_n > 0, passed / np.where(graded_n > 0, graded_n, 1), np.nan)
            out[f"{side}_ci_low"] = lo
            out[f"{side}_ci_high"] = hi
    out["n_paired"] = cells[:, graded, graded].sum(axis=(1, 2))
    out["b"] = b
    out["c"] = c
    p = mcnemar_exact(b, c)
    out["p_val"] = p
    p_adj = np.full(m + 1, np.nan)
    p_adj[:m] = holm(p[:m])
    out["p_adj"] = p_adj
    both_pass, both_fail = per_status[:, _S[UNCHANGED_PASS]], per_status[:, _S[UNCHANGED_FAIL]]
    est, lo, hi = paired_diff_ci(both_pass, c, b, both_fail)
    out["diff"] = est
    out["diff_ci_low"] = lo
    out["diff_ci_high"] = hi
    for _, name, _ in _LEFT_OUT:
        out[name] = count[name]
    out["base_error_rows"] = cells[:, 2, :].sum(axis=1)
    out["base_skipped_rows"] = cells[:, 3, :].sum(axis=1)
    out["cand_error_rows"] = cells[:, :, 2].sum(axis=1)
    out["cand_skipped_rows"] = cells[:, :, 3].sum(axis=1)
    out["cand_missing_rows"] = cells[:, :, _MISSING_CODE].sum(axis=1)
    return out


def _notes(bm: dict[str, Any], cm: dict[str, Any], rows_status: np.ndarray, missing_note: bool = True) -> list[str]:
    notes = []
    if bm.get("mode") != cm.get("mode"):
        notes.append(f"mode differs (allowed): {bm.get('mode')} vs {cm.get('mode')}")
    if bm.get("agent_version") != cm.get("agent_version"):
        ba, ca = bm.get("agent_version"), cm.get("agent_version")
        if isinstance(ba, dict) and isinstance(ca, dict):
            parts = [f"{k} {ba.get(k)} vs {ca.get(k)}" for k in sorted(set(ba) | set(ca)) if ba.get(k) != ca.get(k)]
            what = "; ".join(parts)
        else:
            what = f"{json.dumps(ba, sort_keys=True)} vs {json.dumps(ca, sort_keys=True)}"
        notes.append(f"agent version differs (what is compared): {what}")
    counts = np.bincount(rows_status.astype(np.int64), minlength=len(STATUSES))
    for st, _, what in _LEFT_OUT:
        n = int(counts[_S[st]])
        if n and (missing_note or st != MISSING):
            notes.append(f"{n} row(s) {what}: left out of b, c and the paired difference")
    return notes


publish(globals())
