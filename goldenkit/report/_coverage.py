"""What the coverage notebook (``coverage.ipynb``) shows: the dataset's slices against traffic, with planning numbers.

The power numbers come from :mod:`goldenkit.stats` (exact power of the exact McNemar test).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from goldenkit import stats
from goldenkit._display import number
from goldenkit._protocols import DatasetLike
from goldenkit._registry import publish
from goldenkit.dataset import read_dataset
from goldenkit.errors import InputError
from goldenkit.report._html import MISSING, OVERALL, HTMLBlock, pct

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# ---------------------------------------------------------------- coverage


def read_traffic(path: str | Path) -> pd.Series:
    """A traffic distribution (slice -> share, summing to 1) from CSV or JSON.

    CSV: a header with ``slice`` and one of ``count`` / ``share`` (or exactly two
    columns: slice, then the number). JSON: an object ``{"slice": number}`` or a
    list of ``{"slice": ..., "count"|"share": ...}``. Counts and shares are
    normalized the same way; a negative or non-numeric value, a duplicate slice,
    or a zero total is an InputError naming the file.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{p}: cannot read traffic file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{p}: invalid JSON: {exc}") from None
        if isinstance(data, dict):
            pairs = list(data.items())
        elif isinstance(data, list) and all(isinstance(d, dict) for d in data):
            key = "count" if data and "count" in data[0] else "share"
            try:
                pairs = [(d["slice"], d[key]) for d in data]
            except KeyError as exc:
                raise InputError(f"{p}: every entry needs 'slice' and '{key}' (missing {exc})") from None
        else:
            raise InputError(f"{p}: expected an object slice -> count or a list of {{slice, count}}")
    else:
        import csv
        import io

        reader = list(csv.reader(io.StringIO(text)))
        if not reader:
            raise InputError(f"{p}: empty traffic file")
        header = [h.strip().lower() for h in reader[0]]
        if "slice" in header:
            si = header.index("slice")
            vi = next((header.index(c) for c in ("count", "share", "traffic", "n") if c in header), None)
            if vi is None:
                if len(header) != 2:
                    raise InputError(f"{p}:1: header needs 'slice' and 'count' or 'share'")
                vi = 1 - si
            body = reader[1:]
            start = 2
        else:
            si, vi, body, start = 0, 1, reader, 1
        pairs = []
        for i, rec in enumerate(body, start=start):
            if not rec or not "".join(rec).strip():
                continue
            if len(rec) <= max(si, vi):
                raise InputError(f"{p}:{i}: expected slice and a number")
            pairs.append((rec[si].strip(), rec[vi].strip()))
    values: dict[str, float] = {}
    for name, raw in pairs:
        try:
            v = float(raw)
        except (TypeError, ValueError):
            raise InputError(f"{p}: slice {name!r}: {raw!r} is not a number") from None
        if not np.isfinite(v) or v < 0:
            raise InputError(f"{p}: slice {name!r}: traffic must be a non-negative number, got {raw!r}")
        if str(name) in values:
            raise InputError(f"{p}: slice {name!r} appears twice")
        values[str(name)] = v
    total = sum(values.values())
    if total <= 0:
        raise InputError(f"{p}: traffic total is 0")
    return pd.Series(values, name="traffic share", dtype=float) / total


def coverage_table(
    slice_counts: pd.Series | pd.DataFrame,
    traffic: pd.Series,
    *,
    delta: float = 0.05,
    discordance: float = 0.10,
    alpha: float = 0.05,
    power: float = 0.8,
    min_ratio: float = 0.5,
) -> pd.DataFrame:
    """The dataset's slice distribution against traffic, with planning numbers per slice.

    ``slice_counts`` is rows per slice (a Series, or a dataset's ``rows``
    DataFrame); ``traffic`` is shares from :func:`read_traffic`. Per slice (the
    union of both; traffic-only slices have 0 rows):

    * ``rows``, ``dataset share``, ``traffic share`` and ``ratio`` (dataset/traffic share);
    * ``under-tested``: traffic sends it requests and its dataset share is below
      ``min_ratio`` times its traffic share (a slice with traffic and no rows always is);
    * ``rows needed``: rows a paired McNemar comparison needs to detect a change
      of ``delta`` in pass rate with the given ``power`` at ``alpha``, when about
      ``discordance`` of rows flip (:func:`goldenkit.stats.rows_needed`: the exact
      power of the exact McNemar test the gate uses, not Connor's approximation),
      and ``rows short`` = max(0, needed - rows);
    * ``detectable change``: the smallest change the slice's current rows detect
      (:func:`goldenkit.stats.min_detectable_effect`, exact power), blank when even a change of
      ``discordance`` is out of reach.
    """
    if isinstance(slice_counts, pd.DataFrame):
        counts = slice_counts["slice"].astype(str).value_counts()
    else:
        counts = slice_counts.astype("int64")
    names = sorted(set(counts.index.astype(str)) | set(traffic.index.astype(str)))
    rows = counts.reindex(names, fill_value=0).astype("int64")
    tshare = traffic.reindex(names, fill_value=0.0).astype(float)
    total = int(rows.sum())
    dshare = rows / total if total else rows.astype(float)
    needed = stats.rows_needed(delta, discordance, alpha=alpha, power=power)
    mde = []
    for n in rows:
        v = stats.min_detectable_effect(int(n), discordance, alpha=alpha, power=power) if n > 0 else np.nan
        mde.append(v)
    ratio = np.where(tshare > 0, dshare / tshare.where(tshare > 0, 1.0), np.nan)
    out = pd.DataFrame(
        {
            "rows": rows.to_numpy(),
            "dataset share": dshare.to_numpy(dtype=float),
            "traffic share": tshare.to_numpy(dtype=float),
            "ratio": np.round(ratio, 2),
            "under-tested": (tshare > 0).to_numpy() & (dshare < min_ratio * tshare).to_numpy(),
            "rows needed": needed,
            "rows short": np.maximum(0, needed - rows.to_numpy()),
            "detectable change": mde,
        },
        index=pd.Index(names, name="slice"),
    )
    out.loc[OVERALL] = [
        total,
        1.0 if total else np.nan,
        float(tshare.sum()),
        np.nan,
        False,
        needed,
        max(0, needed - total),
        stats.min_detectable_effect(total, discordance, alpha=alpha, power=power) if total else np.nan,
    ]
    out.attrs["discordance"] = discordance
    return out


def format_coverage_table(coverage: pd.DataFrame) -> pd.DataFrame:
    """:func:`coverage_table` with shares and detectable changes as percentages and flags as text."""
    out = coverage.copy()
    for col in ("dataset share", "traffic share"):
        out[col] = [pct(x) for x in coverage[col]]
    # no detectable change with rows: even a change as large as the discordance is out of reach
    beyond = f"> {pct(coverage.attrs['discordance'])}" if "discordance" in coverage.attrs else MISSING
    out["detectable change"] = [
        pct(x) if not pd.isna(x) else (beyond if n > 0 else MISSING)
        for x, n in zip(coverage["detectable change"], coverage["rows"], strict=True)
    ]
    out["ratio"] = [number(x, 2) for x in coverage["ratio"]]
    out["under-tested"] = ["UNDER-TESTED" if bool(x) else "" for x in coverage["under-tested"]]
    return out


def split_rows(rows: pd.DataFrame, split: str | None) -> pd.DataFrame:
    """The dataset rows of one split (``None``: all rows); an unknown split is an InputError."""
    if split is None:
        return rows
    known = sorted(set(rows["split"].astype(str)))
    if split not in known:
        raise InputError(f"no rows in split {split!r}; the dataset has {', '.join(known) or 'no splits'}")
    return rows[rows["split"].astype(str) == split]


def dataset_shares(rows: pd.DataFrame) -> pd.Series:
    """The dataset's own slice shares (the traffic stand-in when no traffic file is given)."""
    counts = rows["slice"].astype(str).value_counts()
    return (counts / counts.sum()).rename("traffic share")


def coverage_statement(
    dataset: DatasetLike,
    coverage: pd.DataFrame,
    *,
    delta: float,
    discordance: float,
    alpha: float,
    power: float,
    traffic: str | Path | None = None,
) -> HTMLBlock:
    """One paragraph: the dataset, the planning assumptions and which slices are under-tested or short of rows.

    ``traffic`` names the traffic file the shares came from; None says the
    shares are the dataset's own (nothing can then be under-tested).
    """
    body = coverage.drop(index=OVERALL, errors="ignore")
    under = [str(s) for s in body.index[body["under-tested"].astype(bool)]]
    needed = int(coverage["rows needed"].iloc[0]) if len(coverage) else 0
    short = [str(s) for s in body.index[body["rows short"] > 0]]
    text = (
        f"{getattr(dataset, 'name', '?')} {getattr(dataset, 'version', '') or ''} "
        f"(sha256 {str(getattr(dataset, 'sha256', ''))[:12]}): {int(coverage.loc[OVERALL, 'rows'])} rows in "
        f"{len(body[body['rows'] > 0])} slices. Detecting a change of {pct(delta)} in pass rate with power "
        f"{pct(power, 0)} at alpha {alpha}, when {pct(discordance)} of rows flip, needs {needed} paired rows "
        "(exact power of the exact McNemar test)."
    )
    if traffic is None:
        first = "No traffic file given: traffic shares are the dataset's own, so no slice is flagged."
    else:
        first = f"Under-tested relative to traffic ({Path(traffic).name}): {', '.join(under) if under else 'none'}."
    items = [
        first,
        f"Slices with fewer rows than that: {', '.join(short) if short else 'none'}.",
    ]
    return HTMLBlock(f"<p>{escape(text)}</p><ul>" + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>")


def coverage_figure(coverage: pd.DataFrame) -> Figure:
    """Dataset share beside traffic share per slice (under-tested slices marked with '!')."""
    from matplotlib.figure import Figure

    t = coverage.drop(index=OVERALL, errors="ignore")
    d = 100 * t["dataset share"].astype(float).fillna(0.0).to_numpy()
    tr = 100 * t["traffic share"].astype(float).fillna(0.0).to_numpy()
    y = np.arange(len(t))[::-1]
    fig = Figure(figsize=(7, 0.45 * len(t) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    ax.barh(y + 0.2, d, height=0.4, label="dataset", color="tab:blue")
    ax.barh(y - 0.2, tr, height=0.4, label="traffic", color="tab:orange")
    labels = [f"{'! ' if flag else ''}{name}" for name, flag in zip(t.index, t["under-tested"], strict=True)]
    ax.set_yticks(y, labels)
    ax.set_xlabel("share (%)")
    ax.legend(loc="lower right")
    ax.set_title("Slice share: dataset vs traffic (! = under-tested)")
    return fig


@dataclass(frozen=True)
class CoverageReport:
    """What the coverage notebook shows: the dataset, :func:`coverage_table` and its statement.

    Displayed in Jupyter, it shows the statement; ``table`` feeds
    :func:`format_coverage_table` and :func:`coverage_figure`.
    """

    dataset: DatasetLike
    table: pd.DataFrame
    statement: HTMLBlock

    def _repr_html_(self) -> str:
        return str(self.statement)


def dataset_coverage(
    dataset: str | Path | DatasetLike,
    *,
    split: str | None = None,
    traffic: str | Path | None = None,
    delta: float = 0.05,
    discordance: float = 0.10,
    alpha: float = 0.05,
    power: float = 0.8,
    min_ratio: float = 0.5,
) -> CoverageReport:
    """The coverage notebook in one call: read the dataset, keep ``split``, compare with traffic, plan rows.

    ``dataset`` is a folder or file (read with :func:`goldenkit.dataset.read_dataset`)
    or a Dataset. ``traffic`` is a file for :func:`read_traffic`; without one the
    dataset's own shares stand in (nothing is then under-tested). The planning
    arguments are those of :func:`coverage_table`.
    """
    ds = read_dataset(dataset) if isinstance(dataset, (str, Path)) else dataset
    rows = split_rows(ds.rows, split)
    shares = read_traffic(traffic) if traffic else dataset_shares(rows)
    plan = {"delta": delta, "discordance": discordance, "alpha": alpha, "power": power}
    table = coverage_table(rows, shares, min_ratio=min_ratio, **plan)
    return CoverageReport(ds, table, coverage_statement(ds, table, traffic=traffic, **plan))


__all__ = [
    "CoverageReport",
    "coverage_figure",
    "coverage_statement",
    "coverage_table",
    "dataset_coverage",
    "dataset_shares",
    "format_coverage_table",
    "read_traffic",
    "split_rows",
]

publish(globals())
