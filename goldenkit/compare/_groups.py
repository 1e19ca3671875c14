"""What a comparison's sides and lines are: a side named by a string, and lines other than slices.

:func:`resolve_side` opens a side given by name the way ``goldenkit compare``
does (:func:`goldenkit.baselines.resolve_run_or_baseline`), so the library
takes a run id, a run folder, a baseline name or a baseline file wherever the
command line does. :func:`grouped_table` builds a comparison table with one
line per value of another per-row column of the base (``split``, ``source``) or
per tag (``by="tags"``: a row counted once in each of its tags, a row without
tags in :data:`goldenkit.stats.UNTAGGED`; the lines overlap, and the overall
line counts each row once), by the rule of :func:`goldenkit.stats.group_codes`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar, overload

import numpy as np
import pandas as pd

from goldenkit._protocols import RunLike
from goldenkit._registry import publish
from goldenkit._text import did_you_mean
from goldenkit.baselines import resolve_run_or_baseline
from goldenkit.compare._flips import outcome_columns
from goldenkit.errors import InputError, ResultsError
from goldenkit.schema import OUTCOME_FIELDS
from goldenkit.stats import OVERALL, group_codes

__all__ = ["RunRef", "grouped_table", "resolve_side"]

#: A run or a baseline given by name: a run folder, a run id, a baseline name or file.
RunRef = str | os.PathLike[str]

_T = TypeVar("_T")

#: Builds a comparison table from per-line group codes, group names and both sides' verdict codes.
TableBuilder = Callable[[np.ndarray, list[str], np.ndarray, np.ndarray], pd.DataFrame]


@overload
def resolve_side(obj: RunRef, results_dir: RunRef = ..., baselines_dir: RunRef = ...) -> RunLike: ...
@overload
def resolve_side(obj: _T, results_dir: RunRef = ..., baselines_dir: RunRef = ...) -> _T: ...
def resolve_side(obj: Any, results_dir: RunRef = "results", baselines_dir: RunRef = "baselines") -> Any:
    """``obj`` itself, or the run or baseline a str or path names (a run folder, a run id under
    ``results_dir``, a baseline name under ``baselines_dir`` or a baseline file)."""
    if not isinstance(obj, (str, os.PathLike)):
        return obj

    return resolve_run_or_baseline(obj, results_dir, baselines_dir)


def grouped_table(
    table: TableBuilder, base: Any, bc: pd.DataFrame, by: str, vb: np.ndarray, vc: np.ndarray
) -> pd.DataFrame:
    """The comparison table (built by ``table``) with one line per value of the base's column ``by``, or
    per tag; the overall line counts each row once. Its first column is named ``by``."""
    rows, codes, names = group_codes(_row_values(base, bc, by))
    out = table(codes, names, vb[rows], vc[rows])
    out.iloc[-1] = table(np.zeros(len(bc), dtype=np.int64), [OVERALL], vb, vc).iloc[-1]
    return out.rename(columns={"slice": by})


def _label(obj: Any) -> str:
    return str(getattr(obj, "run_id", None) or getattr(obj, "name", None) or "?")


def _row_values(base: Any, bc: pd.DataFrame, by: str) -> pd.Series:
    """The base's value of ``by`` for each of its collapsed rows ``bc`` (a baseline's saved rows, else its outcomes)."""
    if by in bc.columns:
        return bc[by].reset_index(drop=True)
    saved = getattr(base, "rows", None)
    if isinstance(saved, pd.DataFrame) and by in saved.columns:
        got = saved
    else:
        try:
            got = outcome_columns(base, ["row_id", by])
        except ResultsError:
            hint = did_you_mean(by, [*map(str, bc.columns), *OUTCOME_FIELDS, "tags"])
            raise InputError(f"cannot group by {by!r}: not a column of the outcomes of {_label(base)}{hint}") from None
    per_row = got.drop_duplicates("row_id").set_index("row_id")[by]
    values = per_row.reindex(bc["row_id"].astype(object)).reset_index(drop=True)
    lists = any(isinstance(v, (list, tuple, np.ndarray)) for v in values)
    if not lists and values.isna().any():
        raise InputError(f"cannot group by {by!r}: {int(values.isna().sum())} row(s) of {_label(base)} have no value")
    return values


publish(globals())
