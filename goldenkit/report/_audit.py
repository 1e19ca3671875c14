"""What the audit notebook (``audit.ipynb``) shows beside the audit session: the label-error share.

The marks and the sample cards come from :mod:`goldenkit.audit`, which never imports the report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from goldenkit import stats
from goldenkit._registry import publish
from goldenkit.audit import AUDIT_LABELS, marks_frame, sample_cards_html
from goldenkit.report._html import OVERALL, HTMLBlock, interval, pct, table_html

# ---------------------------------------------------------------- audit summaries


def label_error_share(marks: Any, confidence: float = 0.95) -> pd.DataFrame:
    """Per slice and overall: audited failing rows, each label's count, and the label-error share.

    ``marks`` is a list of mark dicts (latest per row is used) or
    :func:`goldenkit.audit.marks_frame` output. The share is label errors over
    all audited rows (``unclear`` ones stay in the denominator, so the share
    is a lower bound while they are unresolved), with its Wilson interval.
    """
    frame = marks if isinstance(marks, pd.DataFrame) else marks_frame(list(marks))
    cols = ["audited", *AUDIT_LABELS, "label-error share", "95% Wilson", "ci_low", "ci_high"]
    if frame.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="slice"))
    ct = pd.crosstab(frame["slice"].fillna("").astype(str), frame["label"].astype(str))
    ct = ct.reindex(columns=list(AUDIT_LABELS), fill_value=0)
    ct.loc[OVERALL] = ct.sum()
    ct.index.name = "slice"
    ct.columns.name = None
    audited = ct.sum(axis=1)
    k = ct["label_error"].to_numpy()
    lo, hi = stats.wilson_ci(k, audited.to_numpy(), confidence)
    out = pd.DataFrame({"audited": audited}, index=ct.index)
    for lab in AUDIT_LABELS:
        out[lab] = ct[lab]
    out["label-error share"] = [pct(a / b if b else np.nan) for a, b in zip(k, audited, strict=True)]
    out["95% Wilson"] = [interval(a, b) for a, b in zip(lo, hi, strict=True)]
    out["ci_low"] = lo
    out["ci_high"] = hi
    return out


#: what fills the label-error table (an audit page with no marks yet says so instead of showing headers)
NO_MARKS = (
    "No row marked yet: mark failing rows above as label error, agent error or unclear "
    "(goldenkit audit, or the browser in Jupyter) and the share of label errors per slice appears here."
)


def label_error_table(marks: Any, confidence: float = 0.95) -> HTMLBlock:
    """:func:`label_error_share` for people: counts, the share and its interval as percentages (the raw
    interval bounds left out), or a sentence saying what fills it while nothing is marked."""
    share = label_error_share(marks, confidence)
    return table_html(share.drop(columns=["ci_low", "ci_high"]), NO_MARKS)


def audit_sample_html(sample: pd.DataFrame) -> HTMLBlock:
    """The papermill view of the audit: each sampled failing row as an escaped side-by-side card."""
    return sample_cards_html(sample)


__all__ = ["NO_MARKS", "audit_sample_html", "label_error_share", "label_error_table"]

publish(globals())
