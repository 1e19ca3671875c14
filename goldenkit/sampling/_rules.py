"""The sample rule and the split rule (the package's docstring states them)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, overload

import numpy as np
import pandas as pd

from goldenkit._protocols import DatasetLike
from goldenkit._registry import publish
from goldenkit.dataset import Dataset
from goldenkit.errors import InputError
from goldenkit.schema import SPLITS


def _digest(*parts: str) -> bytes:
    """SHA-256 of the parts' UTF-8 bytes, each followed by NUL (so "a"+"bc" != "ab"+"c")."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.digest()


def sample_rank(seed: int, slice_name: str, row_id: str) -> str:
    """A row's place in its slice's sample order: hex SHA-256 of ``"{seed}:{slice}:{id}"`` (UTF-8).

    >>> sample_rank(7, "refunds", "refund-0142")[:16]
    'c04355c95749bda8'
    """
    return hashlib.sha256(f"{int(seed)}:{slice_name}:{row_id}".encode()).hexdigest()


def _frame_of(rows: Any) -> pd.DataFrame:
    if isinstance(rows, Dataset):
        return rows.rows
    if isinstance(rows, pd.DataFrame):
        return rows
    if isinstance(rows, Sequence) and not isinstance(rows, (str, bytes)):
        if rows and not all(isinstance(r, Mapping) for r in rows):
            raise InputError("rows must be dicts with at least 'id' and 'slice'")
        return pd.DataFrame(
            {
                "id": [r.get("id") for r in rows],
                "slice": [r.get("slice") for r in rows],
                "split": [r.get("split") for r in rows],
            }
        )
    raise InputError(f"expected a Dataset, a DataFrame or a list of row dicts, got {type(rows).__name__}")


def _check_ids(frame: pd.DataFrame, what: str) -> None:
    for col in ("id", "slice") if what == "sample" else ("id",):
        if col not in frame.columns:
            raise InputError(f"rows have no '{col}' column")
    ids = frame["id"]
    if ids.isna().any():
        raise InputError("a row has no id")
    if what == "sample" and frame["slice"].isna().any():
        raise InputError(f'row "{ids[frame["slice"].isna()].iloc[0]}" has no slice')
    dup = ids[ids.duplicated()]
    if len(dup):
        raise InputError(f'duplicate id "{dup.iloc[0]}"')


def _chosen_positions(frame: pd.DataFrame, per_slice: int, seed: int, split: str | None) -> np.ndarray:
    """Positions (into ``frame``) of the sampled rows, in ascending id order."""
    if isinstance(per_slice, bool) or not isinstance(per_slice, (int, np.integer)) or per_slice < 1:
        raise InputError(f"per_slice must be a positive integer, got {per_slice!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer, got {seed!r}")
    if split is not None and split not in SPLITS:
        raise InputError(f'split must be "dev" or "holdout", got {split!r}')
    _check_ids(frame, "sample")
    positions = np.arange(len(frame))
    if split is not None:
        if "split" not in frame.columns:
            raise InputError("rows have no 'split' column to filter on")
        positions = positions[(frame["split"] == split).to_numpy(dtype=bool, na_value=False)]
    ids = frame["id"].to_numpy(dtype=object)[positions]
    slices = frame["slice"].to_numpy(dtype=object)[positions]
    by_slice: dict[str, list[tuple[str, int]]] = {}
    for rid, name, pos in zip(ids, slices, positions.tolist(), strict=True):
        by_slice.setdefault(str(name), []).append((sample_rank(int(seed), str(name), str(rid)), int(pos)))
    chosen = [pos for members in by_slice.values() for _, pos in sorted(members)[:per_slice]]
    all_ids = frame["id"].to_numpy(dtype=object)
    chosen.sort(key=lambda pos: all_ids[pos])
    return np.asarray(chosen, dtype=np.int64)


@overload
def stratified_sample(dataset_or_rows: Dataset, per_slice: int, seed: int, split: str | None = None) -> Dataset: ...
@overload
def stratified_sample(
    dataset_or_rows: DatasetLike, per_slice: int, seed: int, split: str | None = None
) -> DatasetLike: ...
@overload
def stratified_sample(
    dataset_or_rows: list[dict[str, Any]], per_slice: int, seed: int, split: str | None = None
) -> list[dict[str, Any]]: ...
@overload
def stratified_sample(
    dataset_or_rows: pd.DataFrame, per_slice: int, seed: int, split: str | None = None
) -> pd.DataFrame: ...
def stratified_sample(dataset_or_rows: Any, per_slice: int, seed: int, split: str | None = None) -> Any:
    """Up to ``per_slice`` rows of every slice, chosen deterministically from ``seed``.

    ``split`` (``"dev"`` or ``"holdout"``) first keeps only that split's rows. A
    slice with ``per_slice`` rows or fewer contributes all of them. The result has
    the type of the input (a Dataset, a DataFrame or a list of row dicts) and
    holds the chosen rows sorted by id; which rows are chosen depends only on the
    seed, ``per_slice``, ``split`` and the rows' ids and slices, not on their order.

    >>> rows = [{"id": f"r{i}", "slice": "a" if i % 2 else "b"} for i in range(10)]
    >>> a = stratified_sample(rows, 2, seed=7)
    >>> b = stratified_sample(rows[::-1], 2, seed=7)
    >>> [r["id"] for r in a] == [r["id"] for r in b]
    True
    """
    frame = _frame_of(dataset_or_rows)
    chosen = _chosen_positions(frame, per_slice, seed, split)
    if isinstance(dataset_or_rows, Dataset):
        return dataset_or_rows.subset(frame["id"].to_numpy(dtype=object)[chosen].tolist())
    if isinstance(dataset_or_rows, pd.DataFrame):
        return dataset_or_rows.iloc[chosen]
    return [dataset_or_rows[i] for i in chosen.tolist()]


def holdout_score(row_id: str, salt: str) -> float:
    """The row's position in [0, 1): the first 8 bytes of SHA-256(salt, id) over 2**64."""
    return int.from_bytes(_digest(salt, row_id)[:8], "big") / 2.0**64


def assign_splits(rows: Any, holdout_fraction: float, salt: str) -> Any:
    """Set each row's ``split`` from a hash of its id: ``holdout`` when the score < holdout_fraction.

    Returns a copy of the same type (a DataFrame, or a list of new row dicts). The
    split of a row depends only on its id and the salt, so adding or removing other
    rows never moves it; the holdout's share is ``holdout_fraction`` in expectation,
    not exactly.
    """
    if isinstance(holdout_fraction, bool) or not isinstance(holdout_fraction, (int, float)):
        raise InputError(f"holdout_fraction must be a number in [0, 1], got {holdout_fraction!r}")
    if not 0.0 <= float(holdout_fraction) <= 1.0:
        raise InputError(f"holdout_fraction must be in [0, 1], got {holdout_fraction!r}")
    if not isinstance(salt, str):
        raise InputError(f"salt must be a string, got {type(salt).__name__}")
    if isinstance(rows, Dataset):
        raise InputError("assign_splits works on rows (a DataFrame or a list of dicts), not a read Dataset")
    frame = _frame_of(rows)
    _check_ids(frame, "split")
    splits = ["holdout" if holdout_score(str(rid), salt) < holdout_fraction else "dev" for rid in frame["id"].tolist()]
    if isinstance(rows, pd.DataFrame):
        out = rows.copy()
        out["split"] = pd.array(splits, dtype="str") if len(splits) else pd.array([], dtype="str")
        return out
    return [{**row, "split": s} for row, s in zip(rows, splits, strict=True)]


def weekly_seed(day: date | datetime | str | None = None) -> int:
    """ISO year * 100 + ISO week of ``day`` (today in UTC when None): 2026-11-30 -> 202649.

    >>> weekly_seed(date(2026, 1, 1))
    202601
    >>> weekly_seed("2027-01-01")  # a Friday in ISO week 53 of 2026
    202653
    """
    if day is None:
        day = datetime.now(UTC).date()
    elif isinstance(day, str):
        try:
            day = date.fromisoformat(day[:10])
        except ValueError:
            raise InputError(f"weekly_seed needs a date (YYYY-MM-DD), got {day!r}") from None
    elif isinstance(day, datetime):
        day = day.date()
    elif not isinstance(day, date):
        raise InputError(f"weekly_seed needs a date, got {type(day).__name__}")
    iso = day.isocalendar()
    return iso.year * 100 + iso.week


__all__ = ["assign_splits", "holdout_score", "sample_rank", "stratified_sample", "weekly_seed"]

publish(globals())
