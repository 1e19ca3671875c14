"""One verdict per row from its repeats, flaky rows and per-slice pass rates.

The rules of :func:`collapse_repeats` are described in :mod:`goldenkit.stats`;
:func:`slice_table` gives Wilson intervals over the collapsed rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import InputError, ResultsError
from goldenkit.schema import ERROR, ERROR_KINDS, FAIL, PASS, SKIPPED, VERDICTS, counts_against_candidate, error_kind
from goldenkit.stats._intervals import wilson_ci

__all__ = [
    "too_few_repeats",
    "COLLAPSED_COLUMNS",
    "OVERALL",
    "UNTAGGED",
    "collapse_arrays",
    "collapse_repeats",
    "collapse_with_codes",
    "decided_rows",
    "error_kind_codes",
    "first_positions",
    "flaky_rows",
    "group_codes",
    "parse_rule",
    "row_decided",
    "slice_table",
    "sorted_codes",
    "verdict_codes",
]

#: Label of the all-slices row in :func:`slice_table` and comparison tables.
OVERALL = "(overall)"
#: The group of a row without tags in a table grouped by a list column (``by="tags"``).
UNTAGGED = "(untagged)"

#: Columns of :func:`collapse_repeats` output (plus ``slice``/``split``/``tags`` when given).
COLLAPSED_COLUMNS = (
    "row_id",
    "attempts",
    "n_pass",
    "n_fail",
    "n_error",
    "n_skipped",
    "n_graded",
    "verdict",
    "flaky",
    "undecided",
)

_CODE = {v: i for i, v in enumerate(VERDICTS)}  # PASS 0, FAIL 1, ERROR 2, SKIPPED 3
_KIND = {kind: i for i, kind in enumerate(ERROR_KINDS)}
_CANDIDATE_KIND = np.array([counts_against_candidate(kind) for kind in ERROR_KINDS], dtype=bool)
_KIND_NAMES = np.array(ERROR_KINDS, dtype=object)
_RULE_RE = re.compile(r"^at_least:(\d+)$")


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
    codes: np.ndarray
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = list(s.cat.categories)
        lut = np.array([_CODE.get(str(c), -1) for c in cats] + [-1], dtype=np.int8)
        codes = lut[np.asarray(s.cat.codes)]  # code -1 (missing) maps to the trailing -1
    else:
        codes = pd.Index(list(VERDICTS)).get_indexer(s).astype(np.int8)
    if codes.size and bool((codes < 0).any()):
        bad = int(np.flatnonzero(codes < 0)[0])
        where = f" (row {np.asarray(row_ids)[bad]})" if row_ids is not None else ""
        raise ResultsError(f"unknown verdict {s.iloc[bad]!r}{where}: expected one of {', '.join(VERDICTS)}")
    return codes


def _passes(n_pass: np.ndarray, n_votes: np.ndarray, kind: str, k: int) -> np.ndarray:
    """Whether the rule passes a row whose ``n_votes`` repeats were all graded, ``n_pass`` of them PASS."""
    if kind == "majority":
        return np.asarray(2 * n_pass > n_votes)  # a strict majority: a tie is FAIL
    if kind == "all":
        return np.asarray(n_pass == n_votes)
    if kind == "any":
        return np.asarray(n_pass >= 1)
    return np.asarray(n_pass >= k)


def _vote(n_pass: np.ndarray, n_fail: np.ndarray, n_error: np.ndarray, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Verdict codes of rows and which of them are undecided (see :mod:`goldenkit.stats`).

    Every errored repeat is counted as PASS or FAIL in turn: a row is PASS or FAIL only when
    each assignment gives the same verdict. Each rule passes more rows the more repeats pass
    (at a fixed repeat count), so the two extremes decide: all errored repeats FAIL (the
    fewest passes) and all of them PASS (the most). SKIPPED repeats are not in the vote.
    """
    kind, k = parse_rule(rule)
    votes = n_pass + n_fail + n_error
    surely = _passes(n_pass, votes, kind, k)
    maybe = _passes(n_pass + n_error, votes, kind, k)
    graded = n_pass + n_fail
    undecided = (graded > 0) & maybe & ~surely
    out = np.where(surely, _CODE[PASS], _CODE[FAIL]).astype(np.int8)
    out = np.where(undecided, _CODE[ERROR], out)
    out = np.where(graded == 0, np.where(n_error > 0, _CODE[ERROR], _CODE[SKIPPED]), out)
    return out.astype(np.int8), undecided


def decided_rows(
    n_pass: np.ndarray, n_fail: np.ndarray, n_error: np.ndarray, n_unrun: np.ndarray, rule: str
) -> np.ndarray:
    """Whether each row's collapsed verdict can no longer change, whatever its ``n_unrun`` repeats not yet
    called give: the collapse of :func:`_vote` with those repeats counted as unknown, as errored repeats
    are (every value they could have gives the same PASS or FAIL), or no repeat left to call.

    This is the rule that stops a row's repeats (``RunOptions.stop_decided_repeats``); the verdict
    of the repeats that ran is then the full run's: majority over 3 stops at P,P or F,F, ``all`` at
    the first FAIL, ``any`` at the first PASS, ``at_least:K`` at the K-th PASS or when K can no
    longer be reached.
    """
    unrun = np.asarray(n_unrun, dtype=np.int64)
    codes, undecided = _vote(np.asarray(n_pass), np.asarray(n_fail), np.asarray(n_error) + unrun, rule)
    graded = (codes == _CODE[PASS]) | (codes == _CODE[FAIL])
    return np.asarray((graded & ~undecided) | (unrun == 0))


def row_decided(verdicts: Sequence[str], rule: str, repeats: int) -> bool:
    """:func:`decided_rows` for one row: its repeats' ``verdicts`` so far, of ``repeats`` promised.

    >>> row_decided(["PASS", "PASS"], "majority", 3), row_decided(["PASS", "FAIL"], "majority", 3)
    (True, False)
    >>> row_decided(["FAIL"], "all", 3), row_decided(["PASS", "ERROR"], "majority", 3)
    (True, False)
    """
    count = {v: sum(1 for x in verdicts if x == v) for v in (PASS, FAIL, ERROR)}
    unrun = max(0, int(repeats) - len(verdicts))
    one = [np.array([n]) for n in (count[PASS], count[FAIL], count[ERROR], unrun)]
    return bool(decided_rows(one[0], one[1], one[2], one[3], rule)[0])


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
    ``undecided`` (ERROR because its errored repeats could have made it PASS or
    FAIL) and, when ``outcomes`` has an ``error_kind`` column, the columns of
    :func:`collapse_arrays`'s ``error_kinds``: ``n_candidate_errors``,
    ``n_permanent`` (the same count, its name before the error taxonomy) and
    ``error_kind``.
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
    kinds = error_kind_codes(outcomes["error_kind"]) if "error_kind" in outcomes.columns else None
    collapsed = collapse_arrays(uniques, row_codes, v, rule, repeats=rep, row_columns=per_row, error_kinds=kinds)
    return collapsed, row_codes.astype(np.int64), v


def error_kind_codes(kinds: pd.Series | pd.Categorical | np.ndarray) -> np.ndarray:
    """Recorded ``error_kind`` values as int8 codes into :data:`goldenkit.schema.ERROR_KINDS`.

    Each value is read by :func:`goldenkit.schema.error_kind` (``permanent`` is
    ``refused``; a missing or unknown kind is ``infrastructure``).
    """
    s = kinds if isinstance(kinds, pd.Series) else pd.Series(kinds)
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes, uniques = np.asarray(s.cat.codes), list(s.cat.categories)
    else:
        codes, found = pd.factorize(s.astype(object), sort=False)
        uniques = list(found)
    lut = np.array([_KIND[error_kind(u)] for u in uniques] + [_KIND[error_kind(None)]], dtype=np.int8)
    return np.asarray(lut[codes], dtype=np.int8)  # code -1 (missing) maps to the trailing entry


def _error_kind_columns(
    row_codes: np.ndarray, verdicts: np.ndarray, kinds: np.ndarray, row_verdicts: np.ndarray
) -> dict[str, Any]:
    """``n_candidate_errors``, ``n_permanent`` and ``error_kind`` of each row (see :func:`collapse_arrays`)."""
    n_rows, width = len(row_verdicts), len(ERROR_KINDS)
    err = np.asarray(verdicts) == _CODE[ERROR]
    err_rows, err_kinds = row_codes[err], np.asarray(kinds, dtype=np.int64)[err]
    n_candidate = np.bincount(err_rows[_CANDIDATE_KIND[err_kinds]], minlength=n_rows).astype(np.int64)
    kind = np.full(n_rows, None, dtype=object)
    error_rows = np.flatnonzero(row_verdicts == _CODE[ERROR])  # few: only their repeats are counted by kind
    if error_rows.size:
        line = np.full(n_rows, -1, dtype=np.int64)
        line[error_rows] = np.arange(error_rows.size)
        at = line[err_rows]
        keep = at >= 0
        flat = np.bincount(at[keep] * width + err_kinds[keep], minlength=error_rows.size * width)
        per = flat.reshape(error_rows.size, width)
        # the candidate's kinds when the row has one, else every kind; argmax takes the first of equal counts
        eligible = _CANDIDATE_KIND[None, :] | (n_candidate[error_rows] == 0)[:, None]
        kind[error_rows] = _KIND_NAMES[np.where(eligible, per, -1).argmax(axis=1)]
    return {
        "n_candidate_errors": n_candidate,
        "n_permanent": n_candidate.copy(),
        "error_kind": pd.Series(kind, dtype=object),  # None stays None
    }


def first_positions(row_codes: np.ndarray, n_rows: int) -> np.ndarray:
    """Index of each row's first outcome (rows numbered by ``row_codes``)."""
    first = np.full(n_rows, len(row_codes), dtype=np.int64)
    # reverse assignment: for repeated indices the last write wins, i.e. the smallest position
    first[row_codes[::-1]] = np.arange(len(row_codes) - 1, -1, -1, dtype=np.int64)
    return first


def collapse_arrays(
    row_ids: Any,
    row_codes: np.ndarray,
    verdicts: np.ndarray,
    rule: str = "majority",
    *,
    repeats: np.ndarray | None = None,
    row_columns: dict[str, Any] | None = None,
    error_kinds: np.ndarray | None = None,
) -> pd.DataFrame:
    """The array core of :func:`collapse_repeats`.

    ``row_ids`` names each row (distinct; an array or a pandas array), ``row_codes`` gives each outcome's
    row (index into ``row_ids``), ``verdicts`` each outcome's verdict code
    (see :func:`verdict_codes`), ``repeats`` each outcome's repeat (checked for
    duplicates); ``row_columns`` are per-row columns put after ``row_id``.

    ``error_kinds`` gives each outcome's error kind (see :func:`error_kind_codes`;
    read only for ERROR outcomes) and adds ``n_candidate_errors`` (the row's
    ERROR repeats whose kind counts against the candidate:
    :func:`goldenkit.schema.counts_against_candidate`), ``n_permanent`` (the
    same count under its name before the error taxonomy; kept for one release)
    and ``error_kind``: for a row whose verdict is ERROR the kind of its errored
    repeats -- a kind of the candidate's (refused, agent) when any repeat has
    one, else the most frequent kind, equal counts going to the first in
    :data:`goldenkit.schema.ERROR_KINDS` -- and None for every other row.
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
        if bool((dup > 1).any()):
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
    if error_kinds is not None:
        data.update(_error_kind_columns(row_codes, verdicts, error_kinds, codes))
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


def _is_list_column(values: pd.Series) -> bool:
    """Whether a column holds lists (``tags``): its first non-null value is a list, tuple or array."""
    if values.dtype != object:
        return False
    first = next((v for v in values if v is not None), None)
    return isinstance(first, (list, tuple, np.ndarray))


def group_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The groups of each row of a table grouped by ``values``: ``(rows, codes, names)``.

    ``rows[i]`` is a row's position and ``codes[i]`` one of its groups (into
    ``names``, sorted by their text). A column of scalars puts each row in one
    group (``rows`` is every position once). A column of lists (``tags``) puts a
    row in each of its distinct values once, and a row with none in
    :data:`UNTAGGED`: group lines then overlap, and their counts do not add up to
    the overall line, which counts every row once.
    """
    if not _is_list_column(values):
        codes, names = sorted_codes(values)
        return np.arange(len(values), dtype=np.int64), codes, names
    lists = [list(dict.fromkeys(str(t) for t in v)) if isinstance(v, (list, tuple, np.ndarray)) else [] for v in values]
    lists = [tags or [UNTAGGED] for tags in lists]
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), [len(tags) for tags in lists])
    codes, names = sorted_codes(pd.Series([t for tags in lists for t in tags], dtype=object))
    return rows, codes, names


def _outcomes_of(source: Any, by: str) -> pd.DataFrame:
    """What :func:`slice_table` counts, from a run (``.outcomes(columns=...)``) or a baseline (``.collapsed()``)."""
    collapsed = getattr(source, "collapsed", None)
    if callable(collapsed):
        return pd.DataFrame(collapsed())
    read = getattr(source, "outcomes", None)
    if callable(read):
        cols = ["row_id", "slice", "split", "tags", "repeat", "verdict", "error_kind"]
        return pd.DataFrame(read(columns=cols if by in cols else [*cols, by]))
    raise InputError(
        f"slice_table takes outcomes, a run or a baseline, not {type(source).__name__} {str(source)[:60]!r}"
        " (a run id or folder: slice_table(goldenkit.outcomes_df(...)))"
    )


def slice_table(
    outcomes: pd.DataFrame | Any,
    by: str = "slice",
    rule: str = "majority",
    confidence: float = 0.95,
    *,
    overall: bool = True,
) -> pd.DataFrame:
    """Per-slice (or per-``by``) and overall pass rates with Wilson intervals.

    ``outcomes`` is an outcome DataFrame (row x repeat), a table from
    :func:`collapse_repeats`, a run or a baseline. One line per value of ``by`` (sorted) and a last
    line labelled :data:`OVERALL`. ``by`` is any per-row column (``slice``,
    ``split``, ``source``, ...) or a column of lists, ``tags``: a row is then
    counted once in each of its tags (a row without tags in :data:`UNTAGGED`),
    so the tag lines overlap and the overall line, which counts each row once, is
    not their sum. ``overall=False`` leaves the overall line out of the table
    and keeps it apart, as a dict in ``table.attrs["overall"]``: the table then
    holds only the groups (ready to plot). Columns:

    ``rows`` distinct rows · ``attempts`` outcomes · ``pass, fail, error,
    skipped`` attempt counts · ``n`` rows with a PASS/FAIL after collapsing ·
    ``k`` of them PASS · ``p_hat = k/n`` · ``ci_low, ci_high`` Wilson interval
    of ``p_hat`` · ``attempt_p_hat = pass/(pass+fail)`` (attempt-weighted,
    shown for comparison only: repeats are not independent) · ``flaky`` rows ·
    ``error_rows`` and ``skipped_rows`` (rows whose collapsed verdict is
    ERROR / SKIPPED; they are outside ``n``).
    """
    c = _as_collapsed(outcomes if isinstance(outcomes, pd.DataFrame) else _outcomes_of(outcomes, by), rule)
    if by not in c.columns:
        known = ", ".join(str(col) for col in c.columns if col in ("slice", "split", "tags", "source"))
        raise InputError(f"cannot group by {by!r}: no such column" + (f" (try {known})" if known else ""))
    rows, g_codes, g_uniques = group_codes(c[by].reset_index(drop=True))
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
    sums = {name: np.bincount(g_codes, weights=arr[rows], minlength=m).astype(np.int64) for name, arr in cols.items()}
    for name in sums:
        sums[name] = np.append(sums[name], cols[name].sum())
    labels = [*map(str, g_uniques), OVERALL]
    table = _rate_table(by, labels, sums, confidence)
    if overall:
        return table
    groups = table.iloc[:-1].reset_index(drop=True)
    groups.attrs["overall"] = table.iloc[-1].to_dict()
    return groups


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


def too_few_repeats(rule: object, repeats: int) -> str | None:
    """Why collapse ``rule`` cannot decide a row from ``repeats`` repeats (``at_least:5`` over 3: every row
    would FAIL whatever it answered), else None. A malformed rule is the collapse's own error.

    >>> too_few_repeats("at_least:5", 3)
    "= 'at_least:5' needs at least 5 repeats of a row, and the run has 3"
    >>> too_few_repeats("majority", 1) is None
    True
    """
    if not isinstance(rule, str) or rule in ("majority", "all", "any"):
        return None
    _, needed = parse_rule(rule)
    if needed <= repeats:
        return None
    return f"= {rule!r} needs at least {needed} repeats of a row, and the run has {repeats}"


publish(globals())
