"""The light columns of a run: the few flat columns a comparison and the gate read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from goldenkit._registry import publish
from goldenkit.results._run import Run

if TYPE_CHECKING:
    import pandas as pd

#: The columns a comparison and the gate read of a run (see :func:`light_outcomes`).
LIGHT_COLUMNS = ("row_id", "slice", "repeat", "verdict", "error_kind")
_CATEGORICAL = ("slice", "split", "verdict", "error_kind")


def light_outcomes(
    run: Run, columns: Sequence[str] = LIGHT_COLUMNS, row_ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """Some columns of a run's outcomes (by default the five a comparison needs), one row per row x repeat.

    From Parquet when the run is complete (only these columns are read), from
    the JSONL otherwise; ``row_ids`` keeps only those rows' outcomes (``row_id``
    must be among the columns). ``slice``, ``split``, ``verdict`` and
    ``error_kind`` come back as pandas categoricals, ``repeat`` as int64 (a
    missing repeat is 0), ``graders`` as dicts.
    """
    cols = list(columns)
    table = run.table(cols, dictionary=[c for c in cols if c in _CATEGORICAL])
    if row_ids is not None:
        import pyarrow.compute as pc

        table = table.filter(pc.is_in(table.column("row_id"), value_set=pa.array(list(row_ids), pa.string())))
    import pandas as pd  # here: a run, which imports this package to write, never needs pandas

    df = table.to_pandas(maps_as_pydicts="strict")
    for c in cols:
        if c in _CATEGORICAL and not isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype("category")
    if "repeat" in df.columns:
        df["repeat"] = df["repeat"].fillna(0).astype("int64")
    return df


__all__ = ["LIGHT_COLUMNS", "light_outcomes"]

publish(globals())
