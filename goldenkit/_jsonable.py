"""Table cells as JSON values: one conversion for every ``to_dict``/``--json`` output.

NumPy scalars become Python numbers, NaN and ``pd.NA`` become None (JSON null),
arrays and nested lists and dicts are converted all the way down.

>>> import numpy as np
>>> jsonable({"n": np.int64(3), "p": float("nan"), "ok": np.bool_(True), "ids": np.array(["a"])})
{'n': 3, 'p': None, 'ok': True, 'ids': ['a']}
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["json_records", "jsonable"]


def jsonable(v: Any) -> Any:
    """``v`` with NumPy and pandas values made plain (see the module doc)."""
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating | float):
        return None if math.isnan(float(v)) else float(v)
    if isinstance(v, np.ndarray):
        return [jsonable(x) for x in v.tolist()]
    if isinstance(v, list | tuple):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if v is pd.NA:
        return None
    return v


def json_records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A DataFrame's rows as JSON-ready dicts."""
    return [{str(k): jsonable(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")]
