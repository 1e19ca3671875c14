"""The representative repeat of each row: the one a report shows beside the row's collapsed verdict.

Per row, the first repeat (lowest ``repeat``) whose verdict equals the row's
collapsed verdict, else its first repeat (a row none of whose repeats has
it). Baseline snapshots and the flip list both call :func:`representative_repeats`.

>>> import pandas as pd
>>> out = pd.DataFrame({"row_id": ["a", "a", "b"], "repeat": [0, 1, 0], "verdict": ["FAIL", "PASS", "PASS"]})
>>> rows = pd.DataFrame({"row_id": ["a", "b"], "verdict": ["PASS", "PASS"]})
>>> representative_repeats(out, rows)[["row_id", "repeat"]].to_dict("list")
{'row_id': ['a', 'b'], 'repeat': [1, 0]}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from goldenkit._registry import publish

__all__ = ["representative_repeats"]


def representative_repeats(outcomes: pd.DataFrame, collapsed: pd.DataFrame) -> pd.DataFrame:
    """One outcome line per row of ``outcomes`` (in the order rows first appear), chosen as the module doc says.

    ``outcomes`` has ``row_id``, ``verdict`` and (optionally) ``repeat``; ``collapsed`` has ``row_id`` and
    ``verdict`` (the row's collapsed verdict).
    """
    if not len(outcomes):
        return outcomes.reset_index(drop=True)
    codes, _ = pd.factorize(outcomes["row_id"], sort=False)
    want = collapsed.set_index("row_id")["verdict"].astype(str)
    target = want.reindex(outcomes["row_id"]).to_numpy(dtype=object)
    miss = (outcomes["verdict"].astype(str).to_numpy(dtype=object) != target).astype(np.int64)
    if "repeat" in outcomes.columns:
        rep = outcomes["repeat"].fillna(0).to_numpy(dtype=np.int64)
    else:
        rep = np.zeros(len(codes), np.int64)
    order = np.lexsort((rep, miss, codes))
    first = order[np.r_[True, codes[order][1:] != codes[order][:-1]]]
    return outcomes.iloc[first].reset_index(drop=True)


publish(globals())
