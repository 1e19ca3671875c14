"""The flip list of a comparison: the rows whose status changed, with both sides' texts.

:func:`flipped_rows` picks the rows (cheap columns only); :func:`flip_list`
adds, per row and side, the representative repeat's response, grader
reasons and findings (each failing check as a ``{grader, check, subject}``
dict, :func:`goldenkit._findings.findings_in`: stored, or read from the
reasons of an older run or a baseline) -- the first repeat whose verdict equals
the row's collapsed verdict, else its first repeat -- reading only the flipped rows' outcomes
(:func:`goldenkit.results.light_outcomes` with ``row_ids``). Used by
:func:`goldenkit.compare.compare_runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._findings import findings_in
from goldenkit._registry import publish
from goldenkit.errors import ResultsError
from goldenkit.records import grader_results, transcript_text
from goldenkit.results import Run, light_outcomes
from goldenkit.stats import representative_repeats

__all__ = ["flip_list", "flipped_rows", "outcome_columns", "row_details"]

_DETAIL = ("row_id", "repeat", "verdict", "tags", "response", "detail", "graders")


def outcome_columns(obj: Any, columns: Sequence[str]) -> pd.DataFrame:
    """Some outcome columns of a results Run (:func:`light_outcomes`) or of anything with ``.outcomes()``."""
    if isinstance(obj, Run):
        return light_outcomes(obj, columns)
    fn = getattr(obj, "outcomes", None)
    if not callable(fn):
        raise ResultsError(
            f"{getattr(obj, 'run_id', None) or getattr(obj, 'name', '?')}: not a run or a baseline (no outcomes)"
        )
    return fn(columns=list(columns))


def flipped_rows(rows: pd.DataFrame, status: np.ndarray, flip_codes: Sequence[int]) -> pd.DataFrame:
    """The flipped rows' cheap columns (status code in ``flip_codes``), by status, slice and row id."""
    sub = rows[np.isin(status, np.asarray(flip_codes, dtype=np.int8))]
    sub = sub.assign(_st=sub["status"].cat.codes, _sl=sub["slice"].cat.codes)
    sub = sub.sort_values(["_st", "_sl", "row_id"], kind="stable")
    cols = ["row_id", "slice", "status", "base_verdict", "cand_verdict"]
    return pd.DataFrame({c: sub[c].astype(str).to_numpy(dtype=object) for c in cols})


def _reasons(graders: Any, verdict: str, detail: Any) -> dict[str, Any]:
    if verdict == "ERROR":
        return {"error": detail}
    out: dict[str, Any] = {name: g.get("reason") for name, g in grader_results(graders).items()}
    if not out and detail:
        out["detail"] = detail
    return out


def _findings(graders: Any, verdict: str) -> list[dict[str, str]]:
    if verdict == "ERROR" or not graders:
        return []
    return [f.to_dict() for f in findings_in(graders, failed=verdict == "FAIL")]


def row_details(obj: Any, collapsed: pd.DataFrame, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """row_id -> {tags, response, reasons, findings} of each row's representative repeat: the first repeat
    whose verdict equals the row's collapsed verdict, else its first repeat."""
    if not len(ids):
        return {}
    fn = getattr(obj, "details", None)
    if callable(fn):  # a baseline keeps the reasons: its findings are read from them
        want = collapsed.set_index("row_id")["verdict"].astype(str).reindex(list(ids)).fillna("").tolist()
        got = dict(fn(ids))
        for rid, verdict in zip(ids, want, strict=True):
            d = got.get(rid)
            if d is not None and "findings" not in d:
                got[rid] = {**d, "findings": _findings(d.get("reasons"), verdict)}
        return got
    if isinstance(obj, Run):
        df = light_outcomes(obj, (*_DETAIL, "trajectory"), row_ids=ids)  # a conversation shows its transcript
    else:
        df = outcome_columns(obj, _DETAIL)
        df = df[df["row_id"].isin(set(ids))]
    want = collapsed.set_index("row_id")["verdict"].astype(str)
    first = representative_repeats(df, collapsed)
    out: dict[str, dict[str, Any]] = {}
    for r in first.to_dict(orient="records"):
        tags, resp, detail = r.get("tags"), r.get("response"), r.get("detail")
        verdict = str(want[r["row_id"]])
        out[str(r["row_id"])] = {
            "tags": [] if tags is None or isinstance(tags, float) else [str(x) for x in tags],
            "response": transcript_text(r.get("trajectory")) or (resp if isinstance(resp, str) else None),
            "reasons": _reasons(r.get("graders"), verdict, detail if isinstance(detail, str) else None),
            "findings": _findings(grader_results(r.get("graders")), verdict),
        }
    return out


def flip_list(base: Any, cand: Any, bc: pd.DataFrame, cc: pd.DataFrame, flip_rows: pd.DataFrame) -> pd.DataFrame:
    ids = flip_rows["row_id"].tolist()
    bd, cd = row_details(base, bc, ids), row_details(cand, cc, ids)
    empty: dict[str, Any] = {"tags": [], "response": None, "reasons": {}, "findings": []}

    def col(d: dict[str, dict[str, Any]], key: str) -> pd.Series:
        return pd.Series([d.get(i, empty)[key] for i in ids], dtype=object)

    def tags_of(i: str) -> list[str]:
        return list(bd.get(i, empty)["tags"] or cd.get(i, empty)["tags"])

    return pd.DataFrame(
        {
            "row_id": flip_rows["row_id"],
            "slice": flip_rows["slice"],
            "tags": pd.Series([tags_of(i) for i in ids], dtype=object),
            "status": flip_rows["status"],
            "base_verdict": flip_rows["base_verdict"],
            "cand_verdict": flip_rows["cand_verdict"],
            "base_response": col(bd, "response"),
            "cand_response": col(cd, "response"),
            "base_reasons": col(bd, "reasons"),
            "cand_reasons": col(cd, "reasons"),
            "base_findings": col(bd, "findings"),
            "cand_findings": col(cd, "findings"),
        }
    )


publish(globals())
