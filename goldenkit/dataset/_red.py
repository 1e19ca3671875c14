"""Red rows: expected failures, negative cases a model is expected to refuse or to fail.

A row is red when its tags include ``red``, or when dataset.json lists its id
under ``red_rows``. A run leaves red rows out unless asked (``include_red``),
before the split filter and the sample (:mod:`goldenkit.sampling`), so they are
never selected and never an outcome; with ``include_red`` they run tagged
``red``, so a run's red rows can be told from its outcomes alone.
"""

from __future__ import annotations

from goldenkit._protocols import DatasetLike
from goldenkit._registry import publish
from goldenkit.dataset._reader import Dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.schema import RED_TAG


def red_row_ids(dataset: DatasetLike) -> list[str]:
    """The dataset's red rows, in row order: tagged ``red`` or listed in dataset.json ``red_rows``.

    ``red_rows`` must be a list of ids the dataset holds; anything else is a
    DatasetError naming dataset.json and the offending entry.
    """
    listed = (getattr(dataset, "manifest", None) or {}).get("red_rows", [])
    ids = [str(x) for x in dataset.column("id")]
    bad = not isinstance(listed, list) or not all(isinstance(x, str) and x for x in listed)
    unknown = [] if bad else sorted(set(listed).difference(ids))
    if bad or unknown:
        base = getattr(dataset, "path", None)
        where = str((base if base.is_dir() else base.parent) / "dataset.json") if base is not None else "dataset.json"
        if bad:
            raise DatasetError(f'"red_rows" must be a list of row ids (strings), got {listed!r}', path=where)
        raise DatasetError(f'"red_rows" names id "{unknown[0]}", which is not a row of the dataset', path=where)
    wanted = set(listed)
    tags = dataset.column("tags")
    return [rid for rid, t in zip(ids, tags, strict=True) if rid in wanted or (t is not None and RED_TAG in list(t))]


def without_red(dataset: DatasetLike) -> DatasetLike:
    """``dataset`` without its red rows (the same object when it has none)."""
    red = set(red_row_ids(dataset))
    return dataset.subset([rid for rid in dataset.column("id") if rid not in red]) if red else dataset


def mark_red(dataset: DatasetLike) -> DatasetLike:
    """``dataset`` with the tag ``red`` on every red row (rows dataset.json lists get it added).

    The outcomes of a run carry each row's tags, so the red rows of a run can be
    told from its outcomes alone (the gate and :func:`goldenkit.metrics.run_metrics` read only those).
    """
    red = set(red_row_ids(dataset))
    tags = [list(t) if t is not None else [] for t in dataset.column("tags")]
    todo = [
        i for i, (rid, t) in enumerate(zip(dataset.column("id"), tags, strict=True)) if rid in red and RED_TAG not in t
    ]
    if not todo:
        return dataset
    for i in todo:
        tags[i] = [*tags[i], RED_TAG]
    if not isinstance(dataset, Dataset):
        raise InputError(f"red rows of {type(dataset).__name__}: include_red needs a goldenkit Dataset")
    return dataset.with_tags(tags)


__all__ = ["RED_TAG", "mark_red", "red_row_ids", "without_red"]

publish(globals())
