"""The cluster-robust standard error of a mean score (Miller 2024), see :mod:`goldenkit.stats`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import InputError

__all__ = ["ClusteredMean", "clustered_se"]

# --------------------------------------------------------------------------- clustered SE


class ClusteredMean(NamedTuple):
    """A mean score with its naive and cluster-robust standard errors."""

    mean: float
    se: float  # cluster-robust (Miller 2024)
    se_iid: float  # sqrt(sample variance / n), as if rows were independent
    n: int
    clusters: int

    @property
    def design_effect(self) -> float:
        """(se / se_iid)^2: how much the clustering inflates the variance."""
        return (self.se / self.se_iid) ** 2 if self.se_iid > 0 else float("nan")


def clustered_se(
    data: pd.DataFrame | Sequence[float] | np.ndarray,
    groups: str | Sequence[Any] | np.ndarray,
    score: str | None = None,
    *,
    small_sample: bool = False,
) -> ClusteredMean:
    """Cluster-robust standard error of a mean score (Miller 2024).

    Call as ``clustered_se(df, "conversation_id", "score")`` (column names) or
    ``clustered_se(scores, group_labels)`` (arrays). Scores may be 0/1 pass
    indicators or graded scores; NaN scores are an error.

    ``se`` is ``sqrt(sum_c (sum_{i in c}(s_i - mean))^2) / n`` -- the
    cluster sandwich for an intercept-only regression
    (statsmodels ``OLS(s, 1).fit(cov_type="cluster", cov_kwds={"groups": g,
    "use_correction": small_sample})``). With every row its own cluster it is
    ``sqrt(sum (s_i - mean)^2) / n``. ``small_sample=True`` multiplies the
    variance by ``G/(G-1)`` (statsmodels' correction; its ``(n-1)/(n-k)`` factor is 1 here).
    ``se_iid`` is the usual ``sqrt(s^2 / n)`` with the n-1 sample variance.
    """
    from statsmodels.regression.linear_model import OLS

    if isinstance(data, pd.DataFrame):
        if not isinstance(groups, str) or score is None:
            raise InputError("with a DataFrame, pass the group and score column names")
        for col in (groups, score):
            if col not in data.columns:
                raise InputError(f"no column {col!r}")
        s = data[score].to_numpy(dtype=float)
        g = data[groups].to_numpy()
    else:
        s = np.asarray(data, dtype=float).ravel()
        g = np.asarray(groups).ravel()
    if s.size != g.size:
        raise InputError(f"scores ({s.size}) and groups ({g.size}) differ in length")
    if s.size < 2:
        raise InputError("need at least 2 scores for a standard error")
    if np.isnan(s).any():
        raise InputError("scores contain NaN")
    codes, uniques = pd.factorize(pd.Series(g), sort=False)
    if (codes < 0).any():
        raise InputError("groups contain a missing label")
    n_groups = len(uniques)
    if n_groups < 2:
        raise InputError("need at least 2 clusters for a clustered standard error")
    fit = OLS(s, np.ones((s.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": codes, "use_correction": small_sample}
    )
    se = float(np.sqrt(fit.cov_params()[0, 0]))
    se_iid = float(np.std(s, ddof=1) / np.sqrt(s.size))
    return ClusteredMean(mean=float(s.mean()), se=se, se_iid=se_iid, n=int(s.size), clusters=n_groups)


publish(globals())
