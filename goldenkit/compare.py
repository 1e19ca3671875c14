"""Paired comparison of two runs (or a baseline and a run): comparability, flips, McNemar.

:func:`compare_runs` answers "did the candidate get better or worse than the
base, on which slices, and how sure are we?" -- or refuses to answer.

Comparability first. Two sides are compared only when they agree on the
dataset sha256, the number of repeats, the collapse rule, every grader's
version, the judge version and the set of row ids. Otherwise
:class:`goldenkit.errors.ComparisonInvalid` is raised naming **each** key that
differs (``dataset sha256 differs: 3f2a9c01b7de... vs 9b1c44e0a2f3...``);
no number is computed. The mode (live / fixtures) and the agent version may
differ -- that is what is being compared -- and are stated in ``notes``.

Per row (after :func:`goldenkit.stats.collapse_repeats` on each side), the
status from base to candidate is one of NEW_FAILURE (PASS -> FAIL, counted in
``b``, "broke"), RECOVERED (FAIL -> PASS, ``c``, "fixed"), UNCHANGED_PASS,
UNCHANGED_FAIL, NEW_ERROR (graded -> ERROR), ERROR_CLEARED (ERROR -> graded),
UNCHANGED_ERROR, or SKIPPED (skipped on either side, no error). Rows that are
ERROR or SKIPPED on either side are outside ``b`` and ``c`` and outside the
paired difference; the counts of such rows are columns of the table and are
stated in ``notes``.

Per slice and overall (``Comparison.table``): each side's pass rate over its
own graded rows with a Wilson interval; ``n_paired`` rows graded on both
sides; ``b``, ``c``; exact McNemar ``p_val``; ``p_adj``, Holm-adjusted across
the slices (NaN on the overall line, which is a single test); the paired
difference ``diff = (c - b) / n_paired`` (candidate minus base) with
Newcombe's method-10 interval ``diff_ci_low, diff_ci_high``.

The flip list (``Comparison.flips``): every row whose status is NEW_FAILURE,
RECOVERED, NEW_ERROR or ERROR_CLEARED, with row id, slice, tags, status, both
collapsed verdicts, a representative response of each side (the first repeat
whose verdict equals the row's collapsed verdict) and that repeat's grader
reasons (``{grader: reason}``; ``{"error": detail}`` for an ERROR).

Speed: verdicts are read as dictionary-encoded columns, collapsing is
``numpy.bincount`` over integer codes, and response texts are read only for
the flipped rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldenkit.errors import ComparisonInvalid, ResultsError
from goldenkit.schema import (
    ERROR_CLEARED,
    NEW_ERROR,
    NEW_FAILURE,
    RECOVERED,
    SKIPPED,
    UNCHANGED_ERROR,
    UNCHANGED_FAIL,
    UNCHANGED_PASS,
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

__all__ = ["FLIP_STATUSES", "STATUSES", "Comparison", "comparability_differences", "compare_runs"]

#: Every per-row status, in display order.
STATUSES = (
    NEW_FAILURE,
    RECOVERED,
    NEW_ERROR,
    ERROR_CLEARED,
    UNCHANGED_PASS,
    UNCHANGED_FAIL,
    UNCHANGED_ERROR,
    SKIPPED,
)
#: Statuses listed in the flip list.
FLIP_STATUSES = (NEW_FAILURE, RECOVERED, NEW_ERROR, ERROR_CLEARED)

_LIGHT = ("row_id", "slice", "repeat", "verdict")
_DETAIL = ("row_id", "repeat", "verdict", "tags", "response", "detail", "graders")

# status code by (base verdict code, cand verdict code); verdict codes PASS 0, FAIL 1, ERROR 2, SKIPPED 3
_S = {s: i for i, s in enumerate(STATUSES)}
_STATUS_LUT = np.array(
    [
        [_S[UNCHANGED_PASS], _S[NEW_FAILURE], _S[NEW_ERROR], _S[SKIPPED]],
        [_S[RECOVERED], _S[UNCHANGED_FAIL], _S[NEW_ERROR], _S[SKIPPED]],
        [_S[ERROR_CLEARED], _S[ERROR_CLEARED], _S[UNCHANGED_ERROR], _S[ERROR_CLEARED]],
        [_S[SKIPPED], _S[SKIPPED], _S[NEW_ERROR], _S[SKIPPED]],
    ],
    dtype=np.int8,
)


# --------------------------------------------------------------------------- result


@dataclass
class Comparison:
    """The outcome of :func:`compare_runs` (see the module docstring for columns)."""

    base_id: str
    cand_id: str
    rule: str
    alpha: float
    rows: pd.DataFrame  # row_id, slice, base_verdict, cand_verdict, status
    table: pd.DataFrame  # per slice + overall
    flips: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    base_manifest: dict[str, Any] = field(default_factory=dict, repr=False)
    cand_manifest: dict[str, Any] = field(default_factory=dict, repr=False)

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
            "notes": list(self.notes),
            "status_counts": self.status_counts(),
            "table": _records(self.table),
            "flips": _records(self.flips),
        }


def _clean(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.ndarray):
        return [_clean(x) for x in v.tolist()]
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if v is pd.NA:
        return None
    return v


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _clean(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")]


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


def _light_outcomes(obj: Any) -> pd.DataFrame:
    """row_id, slice, repeat, verdict of every outcome; strings as categoricals."""
    table_fn = getattr(obj, "table", None)
    if callable(table_fn):
        t = table_fn(list(_LIGHT))
        cols: dict[str, Any] = {}
        for name in _LIGHT:
            col = t.column(name)
            if name == "repeat":
                cols[name] = col.fill_null(0).to_numpy()
            else:
                cols[name] = col.combine_chunks().dictionary_encode().to_pandas()
        return pd.DataFrame(cols)
    outcomes_fn = getattr(obj, "outcomes", None)
    if callable(outcomes_fn):
        return outcomes_fn(columns=list(_LIGHT))
    raise ResultsError(f"{_label(obj)}: not a run or a baseline (no outcomes)")


def _collapsed(obj: Any, rule: str) -> pd.DataFrame:
    fn = getattr(obj, "collapsed", None)
    if callable(fn):
        return fn()
    return collapse_repeats(_light_outcomes(obj), rule)


def _side_rule(obj: Any, rule: str) -> str:
    r = getattr(obj, "rule", None)
    return r if isinstance(r, str) and r else rule


def _reasons(graders: Any, verdict: str, detail: Any) -> dict[str, Any]:
    if verdict == "ERROR":
        return {"error": detail}
    out: dict[str, Any] = {}
    if isinstance(graders, dict):
        items = graders.items()
    elif isinstance(graders, list):  # Arrow map as list of pairs
        items = [(k, v) for k, v in graders]
    else:
        items = []
    for name, g in items:
        if isinstance(g, dict):
            out[str(name)] = g.get("reason")
    if not out and detail:
        out["detail"] = detail
    return out


def _details(obj: Any, ids: Sequence[str], verdicts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """row_id -> {tags, response, reasons} of the representative repeat of each id."""
    if not len(ids):
        return {}
    fn = getattr(obj, "details", None)
    if callable(fn):
        return fn(ids)
    want = dict(zip(ids, verdicts, strict=True))
    table_fn = getattr(obj, "table", None)
    if callable(table_fn):
        import pyarrow as pa
        import pyarrow.compute as pc

        t = table_fn(list(_DETAIL))
        t = t.filter(pc.is_in(t.column("row_id"), value_set=pa.array(list(ids), type=pa.string())))
        recs = t.to_pylist()
    else:
        df = obj.outcomes(columns=list(_DETAIL))
        recs = df[df["row_id"].isin(list(ids))].to_dict(orient="records")
    best: dict[str, tuple[int, int, dict[str, Any]]] = {}
    for r in recs:
        rid = r["row_id"]
        rank = 0 if r.get("verdict") == want.get(rid) else 1
        key = (rank, int(r.get("repeat") or 0))
        if rid not in best or key < best[rid][:2]:
            best[rid] = (*key, r)
    out: dict[str, dict[str, Any]] = {}
    for rid in ids:
        r = best.get(rid, (0, 0, {}))[2]
        tags = r.get("tags")
        resp = r.get("response")
        detail = r.get("detail")
        out[rid] = {
            "tags": [] if tags is None or isinstance(tags, float) else [str(x) for x in tags],
            "response": resp if isinstance(resp, str) else None,
            "reasons": _reasons(r.get("graders"), str(r.get("verdict")), detail if isinstance(detail, str) else None),
        }
    return out


# --------------------------------------------------------------------------- comparability


def _short(v: Any) -> str:
    s = str(v)
    return s[:12] + "..." if len(s) > 15 else s


def _get(m: dict[str, Any], *path: str) -> Any:
    cur: Any = m
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def comparability_differences(
    base_manifest: dict[str, Any],
    cand_manifest: dict[str, Any],
    *,
    base_rule: str = "majority",
    cand_rule: str = "majority",
    base_ids: Any = None,
    cand_ids: Any = None,
) -> list[str]:
    """Every reason two sides cannot be compared, one line each (empty: comparable)."""
    diffs: list[str] = []
    bs, cs = _get(base_manifest, "dataset", "sha256"), _get(cand_manifest, "dataset", "sha256")
    if not bs or not cs:
        missing = " and ".join(n for n, v in (("base", bs), ("candidate", cs)) if not v)
        diffs.append(f"dataset sha256 missing in {missing}")
    elif bs != cs:
        diffs.append(f"dataset sha256 differs: {_short(bs)} vs {_short(cs)}")
    br, cr = base_manifest.get("repeats"), cand_manifest.get("repeats")
    if br != cr:
        diffs.append(f"repeats differ: {br} vs {cr}")
    if base_rule != cand_rule:
        diffs.append(f"collapse rule differs: {base_rule} vs {cand_rule}")
    bg = base_manifest.get("graders") or {}
    cg = cand_manifest.get("graders") or {}
    if bg != cg:
        parts = []
        for name in sorted(set(bg) | set(cg)):
            if name not in cg:
                parts.append(f"{name} only in base")
            elif name not in bg:
                parts.append(f"{name} only in candidate")
            elif bg[name] != cg[name]:
                parts.append(f"{name} {bg[name]} vs {cg[name]}")
        diffs.append("grader versions differ: " + "; ".join(parts))
    bj, cj = base_manifest.get("judge_version"), cand_manifest.get("judge_version")
    if bj != cj:
        diffs.append(f"judge version differs: {bj} vs {cj}")
    if base_ids is not None and cand_ids is not None:
        bset, cset = pd.Index(base_ids), pd.Index(cand_ids)
        only_b = bset.difference(cset)
        only_c = cset.difference(bset)
        if len(only_b) or len(only_c):

            def ex(ix: pd.Index) -> str:
                shown = ", ".join(map(str, ix[:5]))
                return shown + (", ..." if len(ix) > 5 else "")

            parts = []
            if len(only_b):
                parts.append(f"{len(only_b)} only in base ({ex(only_b)})")
            if len(only_c):
                parts.append(f"{len(only_c)} only in candidate ({ex(only_c)})")
            diffs.append("row set differs: " + "; ".join(parts))
    return diffs


# --------------------------------------------------------------------------- compare


def compare_runs(base: Any, cand: Any, *, rule: str = "majority", alpha: float = 0.05) -> Comparison:
    """Compare a candidate against a base, row by row (see the module docstring).

    ``base`` and ``cand`` are runs (``goldenkit.results.Run``) or baselines
    (``goldenkit.baselines.Baseline``): anything with a ``.manifest`` dict and
    either ``.collapsed()`` (a per-row table saved under its own ``.rule``),
    ``.table(columns)`` (Arrow) or ``.outcomes(columns=...)`` (pandas).
    Raises :class:`ComparisonInvalid` naming each key that differs.
    """
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
        raise ComparisonInvalid("not comparable: " + "; ".join(diffs), diffs)
    bc = _collapsed(base, b_rule)
    cc = _collapsed(cand, c_rule)
    b_ids = pd.Index(bc["row_id"])
    pos = b_ids.get_indexer(pd.Index(cc["row_id"]))
    if len(bc) != len(cc) or (pos < 0).any():
        diffs = comparability_differences(
            bm, cm, base_rule=b_rule, cand_rule=c_rule, base_ids=bc["row_id"], cand_ids=cc["row_id"]
        )
        raise ComparisonInvalid("not comparable: " + "; ".join(diffs), diffs)
    # align candidate to base order
    order = np.empty(len(cc), dtype=np.int64)
    order[pos] = np.arange(len(cc))
    vb = verdict_codes(bc["verdict"])
    vc = verdict_codes(cc["verdict"])[order]
    status = _STATUS_LUT[vb, vc]
    slices = bc["slice"] if "slice" in bc.columns else pd.Series([""] * len(bc))
    s_codes, s_names = sorted_codes(slices)
    rows = pd.DataFrame(
        {
            "row_id": bc["row_id"].to_numpy(),
            "slice": pd.Categorical.from_codes(s_codes, categories=[str(s) for s in s_names]),
            "base_verdict": pd.Categorical.from_codes(vb, categories=list(VERDICTS)),
            "cand_verdict": pd.Categorical.from_codes(vc, categories=list(VERDICTS)),
            "status": pd.Categorical.from_codes(status, categories=list(STATUSES)),
        }
    )
    table = _table(s_codes, [str(s) for s in s_names], vb, vc, status)
    notes = _notes(bm, cm, rows_status=status)
    flips = _flip_list(base, cand, rows, status)
    return Comparison(
        base_id=_label(base),
        cand_id=_label(cand),
        rule=rule,
        alpha=alpha,
        rows=rows,
        table=table,
        flips=flips,
        notes=notes,
        base_manifest=bm,
        cand_manifest=cm,
    )


def _table(s_codes: np.ndarray, names: list[str], vb: np.ndarray, vc: np.ndarray, status: np.ndarray) -> pd.DataFrame:
    m = len(names)
    indicators = {
        "rows": np.ones(len(vb), dtype=np.int64),
        "n_base": vb <= 1,
        "k_base": vb == 0,
        "n_cand": vc <= 1,
        "k_cand": vc == 0,
        "n_paired": (vb <= 1) & (vc <= 1),
        "both_pass": status == _S[UNCHANGED_PASS],
        "both_fail": status == _S[UNCHANGED_FAIL],
        "b": status == _S[NEW_FAILURE],
        "c": status == _S[RECOVERED],
        "new_error": status == _S[NEW_ERROR],
        "error_cleared": status == _S[ERROR_CLEARED],
        "unchanged_error": status == _S[UNCHANGED_ERROR],
        "skipped": status == _S[SKIPPED],
    }
    sums = {}
    for name, ind in indicators.items():
        w = np.asarray(ind, dtype=np.int64)
        per = np.bincount(s_codes, weights=w, minlength=m).astype(np.int64) if m else np.zeros(0, np.int64)
        sums[name] = np.append(per, w.sum())
    out = pd.DataFrame({"slice": [*names, OVERALL]})
    out["rows"] = sums["rows"]
    with np.errstate(divide="ignore", invalid="ignore"):
        for side in ("base", "cand"):
            n, k = sums[f"n_{side}"], sums[f"k_{side}"]
            lo, hi = wilson_ci(k, n)
            out[f"n_{side}"] = n
            out[f"k_{side}"] = k
            out[f"p_{side}"] = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
            out[f"{side}_ci_low"] = lo
            out[f"{side}_ci_high"] = hi
    out["n_paired"] = sums["n_paired"]
    out["b"] = sums["b"]
    out["c"] = sums["c"]
    p = mcnemar_exact(sums["b"], sums["c"])
    out["p_val"] = p
    p_adj = np.full(m + 1, np.nan)
    p_adj[:m] = holm(p[:m])
    out["p_adj"] = p_adj
    est, lo, hi = paired_diff_ci(sums["both_pass"], sums["c"], sums["b"], sums["both_fail"])
    out["diff"] = est
    out["diff_ci_low"] = lo
    out["diff_ci_high"] = hi
    for name in ("new_error", "error_cleared", "unchanged_error", "skipped"):
        out[name] = sums[name]
    return out


def _notes(bm: dict[str, Any], cm: dict[str, Any], rows_status: np.ndarray) -> list[str]:
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
    for st, what in (
        (NEW_ERROR, "ERROR in the candidate only"),
        (ERROR_CLEARED, "ERROR in the base only (the error cleared)"),
        (UNCHANGED_ERROR, "ERROR on both sides"),
        (SKIPPED, "SKIPPED on a side"),
    ):
        n = int(counts[_S[st]])
        if n:
            notes.append(f"{n} row(s) {what}: left out of b, c and the paired difference")
    return notes


def _flip_list(
    base: Any,
    cand: Any,
    rows: pd.DataFrame,
    status: np.ndarray,
) -> pd.DataFrame:
    flip_codes = [_S[s] for s in FLIP_STATUSES]
    idx = np.flatnonzero(np.isin(status, flip_codes))
    # NEW_FAILURE first, then RECOVERED, NEW_ERROR, ERROR_CLEARED; by slice and row id within
    sub = rows.iloc[idx].copy()
    sub["_st"] = status[idx]
    sub = sub.sort_values(["_st", "slice", "row_id"], kind="stable")
    ids = [str(x) for x in sub["row_id"].tolist()]
    bverd = [str(v) for v in sub["base_verdict"].tolist()]
    cverd = [str(v) for v in sub["cand_verdict"].tolist()]
    bd = _details(base, ids, bverd)
    cd = _details(cand, ids, cverd)
    empty: dict[str, Any] = {"tags": [], "response": None, "reasons": {}}

    def col(d: dict[str, dict[str, Any]], key: str) -> pd.Series:
        return pd.Series([d.get(i, empty)[key] for i in ids], dtype=object)

    def tags_of(i: str) -> list[str]:
        return list(bd.get(i, empty)["tags"] or cd.get(i, empty)["tags"])

    return pd.DataFrame(
        {
            "row_id": pd.Series(ids, dtype=object),
            "slice": pd.Series([str(s) for s in sub["slice"].tolist()], dtype=object),
            "tags": pd.Series([tags_of(i) for i in ids], dtype=object),
            "status": pd.Series([str(s) for s in sub["status"].tolist()], dtype=object),
            "base_verdict": pd.Series(bverd, dtype=object),
            "cand_verdict": pd.Series(cverd, dtype=object),
            "base_response": col(bd, "response"),
            "cand_response": col(cd, "response"),
            "base_reasons": col(bd, "reasons"),
            "cand_reasons": col(cd, "reasons"),
        }
    )
