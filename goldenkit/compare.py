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

Speed: from a complete run only ``row_id, slice, repeat, verdict`` are read
(slice and verdict dictionary-encoded), both runs in two threads. The row ids
of both runs are hashed together once, base first (:func:`_encode_ids`, in
eight cache-sized parts), so both sides come out numbered alike with no second
hash table and no join; collapsing is ``numpy.bincount`` over integer codes,
and the per-slice table is one bincount over (slice, base verdict, candidate
verdict). The flip list's texts (responses, reasons, tags) are read on first
access of :attr:`Comparison.flips`, both runs in two threads, and only the
flipped rows' representative outcomes become Python objects;
:attr:`Comparison.flip_rows` has the flipped rows without texts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldenkit.errors import ComparisonInvalid, ResultsError
from goldenkit.metrics import grader_results
from goldenkit.schema import (
    ERROR_CLEARED,
    NEW_ERROR,
    NEW_FAILURE,
    OUTCOMES_PARQUET,
    RECOVERED,
    SKIPPED,
    UNCHANGED_ERROR,
    UNCHANGED_FAIL,
    UNCHANGED_PASS,
    VERDICTS,
)
from goldenkit.stats import (
    OVERALL,
    collapse_arrays,
    collapse_with_codes,
    first_positions,
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
_VERDICT_CODE = {v: i for i, v in enumerate(VERDICTS)}
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
    #: the flipped rows without texts: row_id, slice, status, base_verdict, cand_verdict (see :attr:`flips`)
    flip_rows: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    base_manifest: dict[str, Any] = field(default_factory=dict, repr=False)
    cand_manifest: dict[str, Any] = field(default_factory=dict, repr=False)
    #: each side's per-row collapsed table (``slice_table(cmp.base_collapsed)`` gives its slice table)
    base_collapsed: pd.DataFrame | None = field(default=None, repr=False)
    cand_collapsed: pd.DataFrame | None = field(default=None, repr=False)
    _flip_loader: Callable[[], pd.DataFrame] | None = field(default=None, repr=False)
    _flips: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def flips(self) -> pd.DataFrame:
        """The flip list with tags, both responses and both graders' reasons.

        The texts are read from the runs on first access (only the flipped rows'
        representative outcomes are converted to Python objects).
        """
        if self._flips is None:
            self._flips = self._flip_loader() if self._flip_loader is not None else self.flip_rows.copy()
        return self._flips

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


@dataclass
class _Side:
    """One side of a comparison: its collapsed rows and, when read from outcomes,
    per outcome the row position (in ``collapsed``), verdict code and repeat."""

    obj: Any
    collapsed: pd.DataFrame
    row_codes: np.ndarray | None = None
    verdicts: np.ndarray | None = None
    repeats: np.ndarray | None = None
    row_dict: Any = None  # the row ids in collapsed order, as an Arrow array (Arrow-read sides)
    #: the side whose row numbering this one shares (same rows, same order in ``collapsed``)
    aligned_with: Any = field(default=None, repr=False)


def _parquet_path(obj: Any) -> Any:
    """The outcomes.parquet of a complete results run, else None."""
    from pathlib import Path

    path = getattr(obj, "path", None)
    if path is None or getattr(obj, "complete", False) is not True:
        return None
    p = Path(path) / OUTCOMES_PARQUET
    return p if p.is_file() else None


def _arrow_light(obj: Any) -> Any:
    """The light columns as an Arrow table with string columns dictionary-encoded (or None)."""
    path = _parquet_path(obj)
    if path is not None:
        import pyarrow.parquet as pq

        # ParquetFile.read skips the dataset layer of pq.read_table (measurably faster on one file)
        # row ids are read plain and hashed once (decoding Parquet's per-row-group
        # dictionaries of distinct ids and unifying them costs more)
        return pq.ParquetFile(path, read_dictionary=["slice", "verdict"]).read(columns=list(_LIGHT))
    table_fn = getattr(obj, "table", None)
    if callable(table_fn):
        t = table_fn(list(_LIGHT))
        cols = [
            t.column(n).combine_chunks().dictionary_encode() if n in ("slice", "verdict") else t.column(n)
            for n in t.column_names
        ]
        import pyarrow as pa

        return pa.table(cols, names=t.column_names)
    return None


def _dict_codes(t: Any, name: str, where: str) -> tuple[np.ndarray, Any]:
    """Indices and dictionary (an Arrow array) of a dictionary column whose chunks share one dictionary."""
    import pyarrow as pa

    col = t.column(name)
    if col.null_count:
        raise ResultsError(f"{where}: {col.null_count} outcome(s) with no {name}")
    if col.num_chunks == 0:
        return np.zeros(0, dtype=np.int64), pa.array([], type=pa.string())
    idx = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in col.chunks]).astype(np.int64)
    return idx, col.chunk(0).dictionary


def _plain(col: Any) -> Any:
    import pyarrow as pa

    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


def _light_ids(obj: Any) -> tuple[Any, Any] | None:
    """The light columns of a run and its row ids as a plain (string) chunked array, or None."""
    import pyarrow as pa

    t = _arrow_light(obj)
    if t is None:
        return None
    rid = _plain(t.column("row_id"))
    if rid.null_count:
        raise ResultsError(f"{_label(obj)}: {rid.null_count} outcome(s) with no row_id")
    rid = rid if isinstance(rid, pa.ChunkedArray) else pa.chunked_array([rid], type=rid.type)
    if not (pa.types.is_string(rid.type) or pa.types.is_large_string(rid.type)):
        rid = rid.cast(pa.large_string())
    return t, rid


def _side_from_codes(obj: Any, t: Any, rule: str, row_codes: np.ndarray, row_dict: Any, names: pd.Series) -> _Side:
    """Collapse from Arrow columns and integer row codes: no per-outcome Python strings."""
    where = _label(obj)
    small = t.select(["slice", "verdict", "repeat"]).unify_dictionaries()
    v_idx, v_dict = _dict_codes(small, "verdict", where)
    v_names = v_dict.to_pylist()
    lut = np.array([_VERDICT_CODE.get(v, -1) for v in v_names] + [-1], dtype=np.int8)
    verdicts = lut[v_idx] if len(v_idx) else np.zeros(0, dtype=np.int8)
    if len(verdicts) and verdicts.min() < 0:
        bad = int(np.flatnonzero(verdicts < 0)[0])
        raise ResultsError(f"{where}: unknown verdict {v_names[v_idx[bad]]!r} (row {names.iloc[row_codes[bad]]})")
    s_idx, s_dict = _dict_codes(small, "slice", where)
    first = first_positions(row_codes, len(names))
    slices = pd.Categorical.from_codes(s_idx[first] if len(first) else s_idx[:0], categories=s_dict.to_pylist())
    reps = small.column("repeat").fill_null(0).to_numpy().astype(np.int64)
    collapsed = collapse_arrays(names, row_codes, verdicts, rule, repeats=reps, row_columns={"slice": slices})
    return _Side(obj, collapsed, row_codes, verdicts, reps, row_dict=row_dict)


def _own_side(obj: Any, t: Any, rid: Any, rule: str) -> _Side:
    """A side numbered by its own row ids (in order of first appearance)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(rid.combine_chunks())
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return _side_from_codes(obj, t, rule, codes, enc.dictionary, enc.dictionary.to_pandas())


#: below this many ids one dictionary_encode is used; above, :func:`_encode_ids` partitions them
_PARTITION_MIN = 1 << 18
_PARTITIONS = 8  # a power of two


def _encode_ids(ids: Any) -> tuple[np.ndarray, Any]:
    """Dictionary-encode a string or large_string array: int64 codes and the distinct ids, numbered in order
    of first appearance (exactly what ``pyarrow.compute.dictionary_encode`` gives).

    Large inputs are split into :data:`_PARTITIONS` parts by a cheap function of each id's length
    and last three bytes (equal ids always land in the same part), each part is encoded alone and
    the codes are renumbered by first appearance. Eight hash tables of a few ten thousand ids stay
    in the CPU caches where one of hundreds of thousands does not: measured about a quarter less
    CPU time for two million ids, the step that dominates a comparison.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(ids)
    data_buf = ids.buffers()[2] if n else None
    kind = np.int64 if pa.types.is_large_string(ids.type) else np.int32 if pa.types.is_string(ids.type) else None
    if n < _PARTITION_MIN or data_buf is None or data_buf.size == 0 or kind is None:
        enc = pc.dictionary_encode(ids)
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary
    offsets = np.frombuffer(ids.buffers()[1], dtype=kind)[ids.offset : ids.offset + n + 1].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8)
    lengths = np.diff(offsets)
    ends = offsets[1:]
    # uint8 arithmetic (wrapping is fine: only determinism matters); bytes of other ids are masked
    # out, so the part depends on this id alone
    part = lengths.astype(np.uint8)
    for back, weight in ((1, 1), (2, 3), (3, 5)):
        byte = data[np.maximum(ends - back, 0)]
        byte[lengths < back] = 0
        part += byte * np.uint8(weight)
    part &= np.uint8(_PARTITIONS - 1)
    by_part = np.argsort(part, kind="stable")  # radix sort of bytes; positions stay ascending per part
    bounds = np.searchsorted(part[by_part], np.arange(_PARTITIONS + 1))
    codes = np.empty(n, dtype=np.int64)
    dicts = []
    n_codes = 0
    for i in range(_PARTITIONS):
        where = by_part[bounds[i] : bounds[i + 1]]
        if not len(where):
            continue
        enc = pc.dictionary_encode(ids.take(pa.array(where)))
        codes[where] = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64) + n_codes
        n_codes += len(enc.dictionary)
        dicts.append(enc.dictionary)
    # renumber by first appearance in ``ids``
    order = np.argsort(first_positions(codes, n_codes), kind="stable")
    remap = np.empty(n_codes, dtype=np.int64)
    remap[order] = np.arange(n_codes, dtype=np.int64)
    return remap[codes], pa.concat_arrays(dicts).take(pa.array(order))


def _joint_sides(
    base: Any, cand: Any, lb: tuple[Any, Any], lc: tuple[Any, Any], b_rule: str, c_rule: str
) -> tuple[_Side, _Side]:
    """Both sides numbered alike by ONE hash pass over the two runs' row ids.

    The ids of both runs are dictionary-encoded together (base first), so every
    base id gets a code below the base's distinct count in order of first
    appearance, and the candidate's outcomes come out in the same numbering:
    no second hash table, no lookup of one side's ids in the other's, no join.
    When the row sets differ the candidate is numbered by its own ids instead
    (:func:`compare_runs` then names the difference).
    """
    import pyarrow as pa

    (tb, rb), (tc, rc) = lb, lc
    # one type for the concatenation (string and large_string mixed, or more than int32 offsets hold)
    if rb.type != rc.type or (pa.types.is_string(rb.type) and rb.nbytes + rc.nbytes >= 2**31 - 1):
        rb, rc = rb.cast(pa.large_string()), rc.cast(pa.large_string())
    nb = len(rb)
    # one copy of both runs' ids, straight from the Parquet chunks
    chunks = [*rb.chunks, *rc.chunks]
    codes, dictionary = _encode_ids(pa.concat_arrays(chunks) if chunks else pa.array([], type=rb.type))
    cb, cc = codes[:nb], codes[nb:]
    n_base_rows = int(cb.max()) + 1 if nb else 0
    row_dict = dictionary.slice(0, n_base_rows)
    bside = _side_from_codes(base, tb, b_rule, cb, row_dict, row_dict.to_pandas())
    same_rows = len(dictionary) == n_base_rows and (
        not n_base_rows or bool(np.bincount(cc, minlength=n_base_rows).all())
    )
    if not same_rows:
        return bside, _own_side(cand, tc, rc, c_rule)
    cside = _side_from_codes(cand, tc, c_rule, cc, row_dict, bside.collapsed["row_id"])
    cside.aligned_with = bside
    return bside, cside


def _pandas_side(obj: Any, rule: str) -> _Side:
    fn = getattr(obj, "collapsed", None)
    if callable(fn):
        return _Side(obj, fn())
    outcomes_fn = getattr(obj, "outcomes", None)
    if not callable(outcomes_fn):
        raise ResultsError(f"{_label(obj)}: not a run or a baseline (no outcomes)")
    light = outcomes_fn(columns=list(_LIGHT))
    collapsed, row_codes, verdicts = collapse_with_codes(light, rule)
    reps = np.asarray(light["repeat"], dtype=np.int64) if "repeat" in light.columns else None
    return _Side(obj, collapsed, row_codes, verdicts, reps)


def _read_sides(base: Any, cand: Any, b_rule: str, c_rule: str) -> tuple[_Side, _Side]:
    """Both sides; runs stored as Arrow are read in two threads (pyarrow releases the GIL), then
    their row ids are hashed together once (:func:`_joint_sides`)."""
    from concurrent.futures import ThreadPoolExecutor

    def arrow_capable(o: Any) -> bool:
        return not callable(getattr(o, "collapsed", None)) and (
            _parquet_path(o) is not None or callable(getattr(o, "table", None))
        )

    if arrow_capable(base) and arrow_capable(cand):
        with ThreadPoolExecutor(max_workers=2) as pool:
            fb, fc = pool.submit(_light_ids, base), pool.submit(_light_ids, cand)
            lb, lc = fb.result(), fc.result()
        if lb is not None and lc is not None:
            return _joint_sides(base, cand, lb, lc, b_rule, c_rule)
    else:
        lb = _light_ids(base) if arrow_capable(base) else None
        lc = _light_ids(cand) if arrow_capable(cand) else None
    bside = _own_side(base, *lb, b_rule) if lb is not None else _pandas_side(base, b_rule)
    cside = _own_side(cand, *lc, c_rule) if lc is not None else _pandas_side(cand, c_rule)
    return bside, cside


def _side_rule(obj: Any, rule: str) -> str:
    r = getattr(obj, "rule", None)
    return r if isinstance(r, str) and r else rule


def _reasons(graders: Any, verdict: str, detail: Any) -> dict[str, Any]:
    if verdict == "ERROR":
        return {"error": detail}
    out: dict[str, Any] = {name: g.get("reason") for name, g in grader_results(graders).items()}
    if not out and detail:
        out["detail"] = detail
    return out


def _representatives(side: _Side, rows: np.ndarray) -> np.ndarray:
    """Outcome positions of the representative repeat of each of ``rows`` (positions in collapsed):
    the first repeat whose verdict equals the row's collapsed verdict, else its first repeat."""
    assert side.row_codes is not None and side.verdicts is not None  # noqa: S101 - callers check
    n_rows = len(side.collapsed)
    wanted = np.zeros(n_rows, dtype=bool)
    wanted[rows] = True
    pos = np.flatnonzero(wanted[side.row_codes])
    if not len(pos):
        return pos
    codes = side.row_codes[pos]
    row_verdict = verdict_codes(side.collapsed["verdict"])
    mismatch = (side.verdicts[pos] != row_verdict[codes]).astype(np.int64)
    rep = side.repeats[pos] if side.repeats is not None else np.zeros(len(pos), np.int64)
    order = np.lexsort((rep, mismatch, codes))
    sorted_codes_ = codes[order]
    first = np.r_[True, sorted_codes_[1:] != sorted_codes_[:-1]]
    chosen = pos[order[first]]  # ascending by row code
    # back to the order of ``rows``
    by_code = dict(zip(sorted_codes_[first].tolist(), chosen.tolist(), strict=True))
    return np.array([by_code.get(int(r), -1) for r in rows], dtype=np.int64)


def _take_details(side: _Side, positions: np.ndarray) -> list[dict[str, Any]]:
    """Detail columns of the outcomes at ``positions`` (file order), as dicts."""
    import pyarrow as pa

    path = _parquet_path(side.obj)
    if path is not None:
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        bounds = np.cumsum([0] + [pf.metadata.row_group(i).num_rows for i in range(pf.metadata.num_row_groups)])
        groups = np.unique(np.searchsorted(bounds, positions, side="right") - 1)
        t = pf.read_row_groups(groups.tolist(), columns=list(_DETAIL[3:]))
        # positions relative to the concatenation of the chosen row groups
        sizes = bounds[groups + 1] - bounds[groups]
        starts = np.cumsum(np.r_[0, sizes[:-1]])
        g_of = np.searchsorted(bounds, positions, side="right") - 1
        rel = positions - bounds[g_of] + starts[np.searchsorted(groups, g_of)]
        return t.take(pa.array(rel)).to_pylist()
    table_fn = getattr(side.obj, "table", None)
    if callable(table_fn):
        return table_fn(list(_DETAIL[3:])).take(pa.array(positions)).to_pylist()
    df = side.obj.outcomes(columns=list(_DETAIL[3:]))
    return df.iloc[positions].to_dict(orient="records")


def _details(side: _Side, ids: Sequence[str], rows: np.ndarray) -> dict[str, dict[str, Any]]:
    """row_id -> {tags, response, reasons} of the representative repeat of each flipped row."""
    if not len(ids):
        return {}
    fn = getattr(side.obj, "details", None)
    if callable(fn):
        return fn(ids)
    if side.row_codes is None:
        return {}
    positions = _representatives(side, rows)
    recs = _take_details(side, positions)
    # names of the flipped rows' verdicts only (not a string conversion of every row)
    verdict_names = np.asarray(VERDICTS, dtype=object)[verdict_codes(side.collapsed["verdict"])[rows]]
    out: dict[str, dict[str, Any]] = {}
    for rid, r, verdict in zip(ids, recs, verdict_names, strict=True):
        tags = r.get("tags")
        resp = r.get("response")
        detail = r.get("detail")
        out[rid] = {
            "tags": [] if tags is None or isinstance(tags, float) else [str(x) for x in tags],
            "response": resp if isinstance(resp, str) else None,
            "reasons": _reasons(r.get("graders"), str(verdict), detail if isinstance(detail, str) else None),
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


def _same_ids(a: pd.Series, b: pd.Series) -> bool:
    """Are the two id columns equal element by element (Arrow comparison when both are Arrow-backed)?"""
    if len(a) != len(b):
        return False
    try:
        import pyarrow as pa

        return bool(pa.array(a, type=pa.large_string()).equals(pa.array(b, type=pa.large_string())))
    except (TypeError, ValueError, ImportError):
        return bool(np.all(a.to_numpy() == b.to_numpy()))


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
    bside, cside = _read_sides(base, cand, b_rule, c_rule)
    bc, cc = bside.collapsed, cside.collapsed
    if cside.aligned_with is bside or _same_ids(bc["row_id"], cc["row_id"]):
        order = np.arange(len(cc), dtype=np.int64)  # same rows in the same order: no join needed
    else:
        pos = pd.Index(bc["row_id"]).get_indexer(pd.Index(cc["row_id"]))
        if len(bc) != len(cc) or (pos < 0).any():
            diffs = comparability_differences(
                bm, cm, base_rule=b_rule, cand_rule=c_rule, base_ids=bc["row_id"], cand_ids=cc["row_id"]
            )
            raise ComparisonInvalid("not comparable: " + "; ".join(diffs), diffs)
        # order[i] = position in cand of base row i
        order = np.empty(len(cc), dtype=np.int64)
        order[pos] = np.arange(len(cc))
    vb = verdict_codes(bc["verdict"])
    vc = verdict_codes(cc["verdict"])[order]
    status = _STATUS_LUT[vb, vc]
    slices = bc["slice"] if "slice" in bc.columns else pd.Series([""] * len(bc))
    s_codes, s_names = sorted_codes(slices)
    rows = pd.DataFrame(
        {
            "row_id": bc["row_id"].reset_index(drop=True),
            "slice": pd.Categorical.from_codes(s_codes, categories=[str(s) for s in s_names]),
            "base_verdict": pd.Categorical.from_codes(vb, categories=list(VERDICTS)),
            "cand_verdict": pd.Categorical.from_codes(vc, categories=list(VERDICTS)),
            "status": pd.Categorical.from_codes(status, categories=list(STATUSES)),
        }
    )
    table = _table(s_codes, [str(s) for s in s_names], vb, vc)
    notes = _notes(bm, cm, rows_status=status)
    flip_idx, flip_rows = _flip_rows(rows, status)

    def load_flips() -> pd.DataFrame:
        return _flip_list(bside, cside, flip_rows, flip_idx, order)

    return Comparison(
        base_id=_label(base),
        cand_id=_label(cand),
        rule=rule,
        alpha=alpha,
        rows=rows,
        table=table,
        flip_rows=flip_rows,
        notes=notes,
        base_manifest=bm,
        cand_manifest=cm,
        base_collapsed=bc,
        cand_collapsed=cc,
        _flip_loader=load_flips,
    )


def _table(s_codes: np.ndarray, names: list[str], vb: np.ndarray, vc: np.ndarray) -> pd.DataFrame:
    m = len(names)
    # one contingency count per (slice, base verdict, cand verdict): every count below is a sum of its cells
    cells = np.bincount(s_codes * 16 + vb.astype(np.int64) * 4 + vc, minlength=m * 16).reshape(m, 4, 4)
    cells = np.concatenate([cells, cells.sum(axis=0, keepdims=True)])  # the overall line
    per_status = np.zeros((m + 1, len(STATUSES)), dtype=np.int64)
    for i in range(4):
        for j in range(4):
            per_status[:, _STATUS_LUT[i, j]] += cells[:, i, j]
    graded = slice(0, 2)  # verdict codes PASS 0, FAIL 1
    sums = {
        "rows": cells.sum(axis=(1, 2)),
        "n_base": cells[:, graded, :].sum(axis=(1, 2)),
        "k_base": cells[:, 0, :].sum(axis=1),
        "n_cand": cells[:, :, graded].sum(axis=(1, 2)),
        "k_cand": cells[:, :, 0].sum(axis=1),
        "n_paired": cells[:, graded, graded].sum(axis=(1, 2)),
    }
    for name, st in (
        ("both_pass", UNCHANGED_PASS),
        ("both_fail", UNCHANGED_FAIL),
        ("b", NEW_FAILURE),
        ("c", RECOVERED),
        ("new_error", NEW_ERROR),
        ("error_cleared", ERROR_CLEARED),
        ("unchanged_error", UNCHANGED_ERROR),
        ("skipped", SKIPPED),
    ):
        sums[name] = per_status[:, _S[st]]
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


def _flip_rows(rows: pd.DataFrame, status: np.ndarray) -> tuple[np.ndarray, pd.DataFrame]:
    """Positions (in ``rows``) of the flipped rows, sorted, and their cheap columns.

    NEW_FAILURE first, then RECOVERED, NEW_ERROR, ERROR_CLEARED; by slice and row id within.
    """
    flip_codes = np.array([_S[s] for s in FLIP_STATUSES], dtype=np.int8)
    idx = np.flatnonzero(np.isin(status, flip_codes))
    if len(idx):
        slice_codes = rows["slice"].cat.codes.to_numpy()[idx]
        row_ids = np.array(rows["row_id"].take(idx).tolist(), dtype=object)
        idx = idx[np.lexsort((row_ids, slice_codes, status[idx]))]

    def names(column: str) -> pd.Series:
        cat = rows[column].cat
        return pd.Series(np.asarray(cat.categories, dtype=object)[cat.codes.to_numpy()[idx]], dtype=object)

    frame = pd.DataFrame(
        {
            "row_id": pd.Series([str(x) for x in rows["row_id"].take(idx).tolist()], dtype=object),
            "slice": names("slice"),
            "status": names("status"),
            "base_verdict": names("base_verdict"),
            "cand_verdict": names("cand_verdict"),
        }
    )
    return idx, frame


def _flip_list(bside: _Side, cside: _Side, flip_rows: pd.DataFrame, idx: np.ndarray, order: np.ndarray) -> pd.DataFrame:
    from concurrent.futures import ThreadPoolExecutor

    ids = flip_rows["row_id"].tolist()
    # two threads: one side's Parquet decoding (GIL released) overlaps the other's conversion to Python
    with ThreadPoolExecutor(max_workers=2) as pool:
        fb = pool.submit(_details, bside, ids, idx)
        fc = pool.submit(_details, cside, ids, order[idx])
        bd, cd = fb.result(), fc.result()
    empty: dict[str, Any] = {"tags": [], "response": None, "reasons": {}}

    def col(d: dict[str, dict[str, Any]], key: str) -> pd.Series:
        return pd.Series([d.get(i, empty)[key] for i in ids], dtype=object)

    def tags_of(i: str) -> list[str]:
        return list(bd.get(i, empty)["tags"] or cd.get(i, empty)["tags"])

    return pd.DataFrame(
        {
            "row_id": flip_rows["row_id"],
            "slice": flip_rows["slice"],
            "tags": pd.Series([tags_of(i) for i in ids], dtype=object),
            "status": flip_rows["status"],
            "base_verdict": flip_rows["base_verdict"],
            "cand_verdict": flip_rows["cand_verdict"],
            "base_response": col(bd, "response"),
            "cand_response": col(cd, "response"),
            "base_reasons": col(bd, "reasons"),
            "cand_reasons": col(cd, "reasons"),
        }
    )
