"""Why it broke: the rows that changed, or the rows that fail, grouped by what the graders found.

:func:`why` reads the graders' findings (:mod:`goldenkit._findings`:
each failing check as grader, check and value-free subject) and groups rows
that share one, per slice and overall:

* ``why(comparison)``: the NEW_FAILURE rows, by the findings of the
  candidate's representative repeat that the base's passing repeat did not
  have (what broke them);
* ``why(comparison, status="RECOVERED")``: the RECOVERED rows, by the
  findings of the base's failing repeat that the candidate's passing repeat
  no longer has (what the candidate fixed);
* ``why(run)``: the rows of one run (or baseline) that collapse to FAIL, by
  the findings of their first failing repeat (where a failure audit starts).

The answer is deterministic: no model is called. It is one DataFrame
(:data:`CLUSTER_COLUMNS`), a line per (slice, grader, check, subject): the
per-slice lines first, then the overall lines (``slice`` is
:data:`goldenkit.stats.OVERALL`), each part largest first (rows, then slice,
grader, check, subject). ``rows`` is how many rows of that slice have the
finding, ``of`` how many rows of the slice have the status (``share`` =
rows / of; a row with several findings is in several lines, so shares do not
add up to 1), ``row_ids`` all of them in the flip list's order, ``examples``
the first few, ``what`` the finding in words (``trajectory: lookup_order was
not called before the answer``) and ``cluster_id`` a short, stable hash of
the line's status, slice, grader, check and subject (the reports link with it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from goldenkit._findings import describe
from goldenkit._registry import publish
from goldenkit.compare._flips import outcome_columns, row_details
from goldenkit.errors import InputError
from goldenkit.results import LIGHT_COLUMNS
from goldenkit.schema import FAIL, NEW_FAILURE, RECOVERED
from goldenkit.stats import OVERALL, collapse_repeats

__all__ = ["CLUSTER_COLUMNS", "cluster_id", "clusters_of", "why"]

CLUSTER_COLUMNS = (
    "status",
    "slice",
    "grader",
    "check",
    "subject",
    "what",
    "rows",
    "of",
    "share",
    "examples",
    "row_ids",
    "cluster_id",
)
_KEY = ["grader", "check", "subject"]
#: A row's findings as (grader, check, subject) keys.
Key = tuple[str, str, str]


def cluster_id(status: str, slice_name: str, grader: str, check: str, subject: str) -> str:
    """The 12-hex id of one cluster line (stable across runs: it names what, not which rows)."""
    blob = json.dumps([status, slice_name, grader, check, subject], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:12]


def _keys(findings: Any) -> list[Key]:
    if findings is None or isinstance(findings, (str, float)):
        return []
    out = []
    for f in findings:
        if isinstance(f, Mapping):
            out.append((str(f.get("grader") or ""), str(f.get("check") or ""), str(f.get("subject") or "")))
    return out


def clusters_of(
    rows: Iterable[tuple[str, str, Sequence[Key]]],
    totals: Mapping[str, int],
    status: str,
    *,
    examples: int = 3,
) -> pd.DataFrame:
    """The cluster table of ``(row_id, slice, finding keys)`` per row, ``totals`` the rows per slice
    with ``status`` (see the module docstring). A row counts once per finding."""
    long = [(rid, sl, *k) for rid, sl, keys in rows for k in dict.fromkeys(keys)]
    df = pd.DataFrame(long, columns=["row_id", "slice", *_KEY])
    n_all = int(sum(totals.values()))
    parts = []
    for by, label in ((["slice", *_KEY], None), (_KEY, OVERALL)):
        g = df.groupby(by, sort=False)["row_id"].agg(list).reset_index()
        if label is not None:
            g.insert(0, "slice", label)
        g["rows"] = g["row_id"].map(len)
        g["of"] = [n_all if label is not None else int(totals.get(s, 0)) for s in g["slice"]]
        parts.append(g.sort_values(["rows", "slice", *_KEY], ascending=[False, True, True, True, True], kind="stable"))
    out = pd.concat(parts, ignore_index=True).rename(columns={"row_id": "row_ids"})
    out.insert(0, "status", status)
    out["share"] = out["rows"] / out["of"].where(out["of"] > 0)
    out["what"] = [
        f"{g}: {describe(c, s)}" for g, c, s in zip(out["grader"], out["check"], out["subject"], strict=True)
    ]
    out["examples"] = [ids[:examples] for ids in out["row_ids"]]
    out["cluster_id"] = [
        cluster_id(status, str(sl), g, c, s)
        for sl, g, c, s in zip(out["slice"], out["grader"], out["check"], out["subject"], strict=True)
    ]
    return out[list(CLUSTER_COLUMNS)].astype({"rows": "int64", "of": "int64", "share": "float64"})


def _comparison(cmp: Any, status: str, examples: int) -> pd.DataFrame:
    if status not in (NEW_FAILURE, RECOVERED):
        raise InputError(f"why: status must be {NEW_FAILURE} or {RECOVERED}, got {status!r}")
    f = cmp.flips
    sub = f[f["status"].astype(str) == status]
    new, old = ("cand_findings", "base_findings") if status == NEW_FAILURE else ("base_findings", "cand_findings")
    if new not in sub.columns:  # a flip list without findings (built by hand): nothing to group
        sub = sub.assign(**{new: [[]] * len(sub), old: [[]] * len(sub)})
    rows = []
    for rid, sl, found, had in zip(sub["row_id"], sub["slice"], sub[new], sub[old], strict=True):
        before = set(_keys(had))
        rows.append((str(rid), str(sl), [k for k in _keys(found) if k not in before]))
    totals = sub["slice"].astype(str).value_counts().to_dict()
    return clusters_of(rows, totals, status, examples=examples)


def _run(run: Any, rule: str, examples: int) -> pd.DataFrame:
    fn = getattr(run, "collapsed", None)
    collapsed = fn() if callable(fn) else collapse_repeats(outcome_columns(run, LIGHT_COLUMNS), rule)
    failing = collapsed[collapsed["verdict"].astype(str) == FAIL]
    ids = failing["row_id"].astype(str).tolist()
    details = row_details(run, collapsed, ids)
    slices = failing["slice"].astype(str).tolist() if "slice" in failing.columns else [""] * len(ids)
    rows = [(rid, sl, _keys(details.get(rid, {}).get("findings"))) for rid, sl in zip(ids, slices, strict=True)]
    totals = pd.Series(slices, dtype=object).value_counts().to_dict()
    return clusters_of(rows, totals, FAIL, examples=examples)


def why(obj: Any, *, status: str = NEW_FAILURE, rule: str = "majority", examples: int = 3) -> pd.DataFrame:
    """Why it broke: the rows grouped by what the graders found (see the module docstring).

    ``obj`` is a :class:`~goldenkit.compare.Comparison` (its NEW_FAILURE rows, or with
    ``status="RECOVERED"`` its RECOVERED rows) or a run or baseline (its failing rows,
    collapsed under ``rule``; a baseline keeps its own). ``examples``: row ids shown per line.

    >>> import goldenkit
    >>> cmp = goldenkit.compare_runs(goldenkit.read_run("results/main"), goldenkit.read_run("results/pr"))
    ... # doctest: +SKIP
    >>> goldenkit.why(cmp).query("slice == 'refunds'").head(1)[["what", "rows", "of"]]  # doctest: +SKIP
                                                    what  rows  of
    0  trajectory: lookup_order was not called before...     7   8
    """
    if examples < 0:
        raise InputError(f"why: examples must be >= 0, got {examples}")
    if hasattr(obj, "flips") and hasattr(obj, "flip_rows"):
        return _comparison(obj, status, examples)
    if not isinstance(getattr(obj, "manifest", None), dict):
        raise InputError("why needs a comparison, a run or a baseline")
    return _run(obj, rule, examples)


publish(globals())
