"""Judge calibration: how well the judge agrees with human labels, and whether it may act as a hard grader.

Input: human labels, one JSON object per line: a row id (``id`` or
``row_id``), the human decision (``human``, ``human_decision``, ``label`` or
the golden harness's ``humanExpectedDecision``: ACCEPT or REJECT), and either
the response to judge (``response``, or ``candidate``; with ``prompt`` and
``reference`` when known) or the judge's recorded decision (``judge_decision``)
or output (``judge_output`` / ``judgeOutput``, read with :func:`parse_judge`).
Rows that carry the judge's decision or output are *replayed*: no model is
called.

Output (:class:`CalibrationReport`): the 2x2 confusion matrix (human ACCEPT /
REJECT by judge ACCEPT / REJECT; ACCEPT is the positive class), accuracy,
precision (of the judge's ACCEPTs, the share humans accepted), recall (of the
human ACCEPTs, the share the judge accepted) and specificity (of the human
REJECTs, the share the judge rejected), each with a Wilson 95% interval
(statsmodels ``proportion_confint(method="wilson")``), and Cohen's kappa with
a 95% interval from statsmodels ``cohens_kappa`` (the large-sample standard
error of Fleiss, Cohen and Everitt 1969, normal interval kappa ± 1.96 SE,
clipped to [-1, 1]).
Judge PENDING rows are counted (``n_pending``) and left out of the matrix:
the matrix's ``n`` is the number of decided pairs.

Verdict: the judge may act as a hard grader when ``n >= min_n`` (default 30)
and the lower bound of kappa's interval is >= ``kappa_floor`` (default 0.6).

Bias, measured. **By answer length** (``by_length``): the decided pairs whose answer is known are cut into
tertiles of the answer's length in characters, ``short`` (at most the 1/3 quantile), ``medium`` (at most
the 2/3 quantile) and ``long`` (NumPy's linear quantiles; equal lengths stay in one group, so the groups
may differ in size); each shows its character range, the agreement with its Wilson interval, and the
judge's and the humans' accept rates (a judge that accepts long answers more often than humans do
favours length). **Self-preference** (``self_preference``): the judge's model and the candidate's are
named to a family by one table (:mod:`goldenkit._model_family`, which a gate reads too); the flag is raised when
they share one (a model judging its own family's answers favours them): it is shown, it does not
change the verdict.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from goldenkit._display import number
from goldenkit._model_family import self_preference
from goldenkit._registry import publish
from goldenkit.errors import DatasetError
from goldenkit.formats import decode_text, json_object_line
from goldenkit.graders._base import ModelCall
from goldenkit.graders._judge import normalize_decision, parse_judge
from goldenkit.records import Case, Response, Turn

#: calibration figures (rates, kappa, agreement) with three decimals, as goldenkit._display shows a measure
_fig = functools.partial(number, digits=3)

__all__ = [
    "CalibrationReport",
    "LabelRow",
    "calibration_report",
    "judge_labels",
    "length_agreement",
    "read_labels",
]


_ID_KEYS = ("id", "row_id", "rowId")
_HUMAN_KEYS = ("human", "human_decision", "humanDecision", "humanExpectedDecision", "label")
_RESPONSE_KEYS = ("response", "candidate", "answer")
_JUDGE_DECISION_KEYS = ("judge_decision", "judgeDecision")
_JUDGE_OUTPUT_KEYS = ("judge_output", "judgeOutput")


@dataclass(frozen=True)
class LabelRow:
    """One human label: the row, the human decision and what the judge said (if recorded)."""

    id: str
    human: str
    response: str | None = None
    prompt: str | None = None
    reference: str | None = None
    judge_decision: str | None = None
    judge_output: str | None = None
    line: int = 0
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def replayable(self) -> bool:
        return self.judge_decision is not None or self.judge_output is not None

    def replayed_decision(self) -> str:
        """The judge's recorded decision (ACCEPT / REJECT / PENDING)."""
        if self.judge_decision is not None:
            return self.judge_decision
        return parse_judge(self.judge_output or "", quoted=self.response).decision


def _first(d: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for k in keys:
        if k in d and d[k] is not None:
            return d[k]
    return None


def read_labels(path: str | Path) -> list[LabelRow]:
    """Read a labels JSONL file; blank lines and lines starting with ``#`` are skipped.

    Bad rows raise :class:`DatasetError` naming ``file:line``.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read labels: {exc.strerror}", path=str(p)) from None
    text = decode_text(data, str(p))
    rows: list[LabelRow] = []
    seen: set[str] = set()
    for no, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        d = json_object_line(line, where=str(p), lineno=no, what="a label")
        rid = _first(d, _ID_KEYS)
        if not isinstance(rid, str) or not rid:
            raise DatasetError("missing row id (id)", path=str(p), line=no)
        if rid in seen:
            raise DatasetError(f"duplicate id {rid!r}", path=str(p), line=no)
        seen.add(rid)
        human = normalize_decision(_first(d, _HUMAN_KEYS))
        if human not in ("ACCEPT", "REJECT"):
            raise DatasetError(
                f"row {rid}: the human decision must be ACCEPT or REJECT, got {_first(d, _HUMAN_KEYS)!r}",
                path=str(p),
                line=no,
            )
        jd_raw = _first(d, _JUDGE_DECISION_KEYS)
        jd = normalize_decision(jd_raw) if jd_raw is not None else None
        if jd_raw is not None and jd is None:
            raise DatasetError(f"row {rid}: unknown judge decision {jd_raw!r}", path=str(p), line=no)
        rows.append(
            LabelRow(
                id=rid,
                human=human,
                response=_first(d, _RESPONSE_KEYS),
                prompt=d.get("prompt"),
                reference=d.get("reference"),
                judge_decision=jd,
                judge_output=_first(d, _JUDGE_OUTPUT_KEYS),
                line=no,
                raw=d,
            )
        )
    if not rows:
        raise DatasetError("no labels", path=str(p))
    return rows


@dataclass
class CalibrationReport:
    """Agreement of judge and humans (see the module doc). ``tp``: both ACCEPT; ``fn``: human
    ACCEPT, judge REJECT; ``fp``: human REJECT, judge ACCEPT; ``tn``: both REJECT."""

    tp: int
    fn: int
    fp: int
    tn: int
    n_pending: int
    min_n: int
    kappa_floor: float
    kappa: float
    kappa_se: float
    kappa_low: float
    kappa_high: float
    rates: dict[str, dict[str, float | int]]
    hard_allowed: bool
    why: str
    judge_version: str | None = None
    disagreements: list[dict[str, str]] = field(default_factory=list)
    by_length: list[dict[str, Any]] = field(default_factory=list)
    self_preference: dict[str, Any] | None = None

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    def matrix(self) -> Any:
        """The confusion matrix as a DataFrame (rows: human, columns: judge)."""
        import pandas as pd

        return pd.DataFrame(
            [[self.tp, self.fn], [self.fp, self.tn]],
            index=pd.Index(["ACCEPT", "REJECT"], name="human"),
            columns=pd.Index(["ACCEPT", "REJECT"], name="judge"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "judge_version": self.judge_version,
            "n": self.n,
            "n_pending": self.n_pending,
            "confusion": {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn},
            "rates": self.rates,
            "kappa": {
                "estimate": _nan_none(self.kappa),
                "se": _nan_none(self.kappa_se),
                "ci_low": _nan_none(self.kappa_low),
                "ci_high": _nan_none(self.kappa_high),
                "method": "statsmodels cohens_kappa, Fleiss-Cohen-Everitt asymptotic SE, 95% normal interval",
            },
            "min_n": self.min_n,
            "kappa_floor": self.kappa_floor,
            "hard_allowed": self.hard_allowed,
            "why": self.why,
            "disagreements": self.disagreements,
            "by_length": [
                {k: _nan_none(v) if isinstance(v, float) else v for k, v in g.items()} for g in self.by_length
            ],
            "self_preference": self.self_preference,
        }

    def render(self) -> str:
        """A plain-text report."""
        lines = [
            f"judge: {self.judge_version or '(replayed decisions)'}",
            f"n = {self.n} decided pairs" + (f" ({self.n_pending} judge PENDING left out)" if self.n_pending else ""),
            "",
            "                 judge ACCEPT  judge REJECT",
            f"human ACCEPT     {self.tp:>12}  {self.fn:>12}",
            f"human REJECT     {self.fp:>12}  {self.tn:>12}",
            "",
            f"{'metric':<12} {'value':>7}  {'hits/total':>10}  95% interval (Wilson)",
        ]
        for name, r in self.rates.items():
            ratio = f"{r['hits']}/{r['total']}"
            lines.append(f"{name:<12} {_fig(r['rate']):>7}  {ratio:>10}  [{_fig(r['ci_low'])}, {_fig(r['ci_high'])}]")
        lines.append(
            f"{'kappa':<12} {_fig(self.kappa):>7}  {'':>10}  [{_fig(self.kappa_low)}, {_fig(self.kappa_high)}]"
            " (Cohen; asymptotic SE)"
        )
        lines += _length_lines(self.by_length)
        if self.self_preference is not None:
            sp = self.self_preference
            lines += ["", ("SELF-PREFERENCE: " if sp["flag"] else "self-preference: ") + sp["why"]]
        lines.append("")
        lines.append(("hard grader: ALLOWED — " if self.hard_allowed else "hard grader: NOT ALLOWED — ") + self.why)
        return "\n".join(lines)


def _length_lines(groups: Sequence[Mapping[str, Any]]) -> list[str]:
    if not groups:
        return []
    lines = ["", f"{'length':<8} {'chars':>13} {'n':>5}  {'agreement':>9}  95% interval   judge accepts  humans accept"]
    for g in groups:
        chars = f"{g['min_chars']}-{g['max_chars']}" if g["n"] else "-"
        lines.append(
            f"{g['group']:<8} {chars:>13} {g['n']:>5}  {_fig(g['agreement']):>9}  "
            f"[{_fig(g['ci_low'])}, {_fig(g['ci_high'])}]  {_fig(g['judge_accept']):>13}  {_fig(g['human_accept']):>13}"
        )
    return lines


def length_agreement(
    lengths: Sequence[int | None], humans: Sequence[str], judges: Sequence[str]
) -> list[dict[str, Any]]:
    """The judge's agreement with humans in tertiles of the answer's length (module doc): one dict per group
    (``group``, ``n``, ``min_chars``, ``max_chars``, ``agreement``, ``ci_low``, ``ci_high``,
    ``judge_accept``, ``human_accept``). Pairs with the judge PENDING or no known answer are left out."""
    keep = [(n, h, j) for n, h, j in zip(lengths, humans, judges, strict=True) if n is not None and j != "PENDING"]
    if not keep:
        return []
    size = np.array([k[0] for k in keep], dtype=float)
    low, high = np.quantile(size, [1 / 3, 2 / 3])
    names = np.where(size <= low, "short", np.where(size <= high, "medium", "long"))
    out = []
    for name in ("short", "medium", "long"):
        idx = np.flatnonzero(names == name)
        hs, js = [keep[i][1] for i in idx], [keep[i][2] for i in idx]
        rate = _rate(sum(h == j for h, j in zip(hs, js, strict=True)), len(idx))
        out.append(
            {
                "group": name,
                "n": int(idx.size),
                "min_chars": int(size[idx].min()) if idx.size else None,
                "max_chars": int(size[idx].max()) if idx.size else None,
                "agreement": rate["rate"],
                "ci_low": rate["ci_low"],
                "ci_high": rate["ci_high"],
                "judge_accept": js.count("ACCEPT") / len(js) if js else math.nan,
                "human_accept": hs.count("ACCEPT") / len(hs) if hs else math.nan,
            }
        )
    return out


def _nan_none(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _rate(hits: int, total: int) -> dict[str, float | int]:
    if total == 0:
        return {"hits": hits, "total": 0, "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    lo, hi = proportion_confint(hits, total, alpha=0.05, method="wilson")
    return {"hits": hits, "total": total, "rate": hits / total, "ci_low": float(lo), "ci_high": float(hi)}


def calibration_report(
    pairs: Iterable[tuple[str, str]] | Iterable[tuple[str, str, str]],
    *,
    min_n: int = 30,
    kappa_floor: float = 0.6,
    judge_version: str | None = None,
    lengths: Sequence[int | None] | None = None,
    judge_model: str | None = None,
    judge_provider: str | None = None,
    candidate_model: str | None = None,
) -> CalibrationReport:
    """The report for ``(human, judge)`` decision pairs (or ``(row id, human, judge)`` triples); ``lengths``
    (the answer's characters per pair, None where unknown) adds the agreement by length, the judge's and the
    candidate's model the self-preference flag (module doc)."""
    items: list[tuple[str, ...]] = list(pairs)
    counts = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    pending = 0
    disagreements = []
    for item in items:
        rid, human, judge = item if len(item) == 3 else ("", *item)
        if judge == "PENDING":
            pending += 1
            continue
        key = {
            ("ACCEPT", "ACCEPT"): "tp",
            ("ACCEPT", "REJECT"): "fn",
            ("REJECT", "ACCEPT"): "fp",
            ("REJECT", "REJECT"): "tn",
        }.get((human, judge))
        if key is None:
            raise ValueError(f"decisions must be ACCEPT or REJECT (judge may be PENDING), got {human!r}, {judge!r}")
        counts[key] += 1
        if human != judge and rid:
            disagreements.append({"id": rid, "human": human, "judge": judge})
    tp, fn, fp, tn = counts["tp"], counts["fn"], counts["fp"], counts["tn"]
    n = tp + fn + fp + tn
    rates = {
        "accuracy": _rate(tp + tn, n),
        "precision": _rate(tp, tp + fp),
        "recall": _rate(tp, tp + fn),
        "specificity": _rate(tn, tn + fp),
    }
    kappa = se = low = high = math.nan
    table = np.array([[tp, fn], [fp, tn]], dtype=float)
    row, col = table.sum(1), table.sum(0)
    if n > 0 and not (max(row) == n and max(col) == n):
        with np.errstate(divide="ignore", invalid="ignore"):
            res = cohens_kappa(table)
        kappa, se = float(res.kappa), float(res.std_kappa)
        low, high = max(-1.0, float(res.kappa_low)), min(1.0, float(res.kappa_upp))
    if n < min_n:
        allowed, why = False, f"n = {n} decided pairs < min_n = {min_n}"
    elif math.isnan(low):
        allowed, why = False, "kappa is undefined (one rater used a single decision throughout)"
    elif low < kappa_floor:
        allowed, why = False, f"kappa's 95% lower bound {low:.3f} < floor {kappa_floor:g}"
    else:
        allowed, why = True, f"n = {n} >= {min_n} and kappa's 95% lower bound {low:.3f} >= floor {kappa_floor:g}"
    return CalibrationReport(
        tp=tp,
        fn=fn,
        fp=fp,
        tn=tn,
        n_pending=pending,
        min_n=min_n,
        kappa_floor=kappa_floor,
        kappa=kappa,
        kappa_se=se,
        kappa_low=low,
        kappa_high=high,
        rates=rates,
        hard_allowed=allowed,
        why=why,
        judge_version=judge_version,
        disagreements=disagreements,
        by_length=[] if lengths is None else length_agreement(lengths, [p[-2] for p in items], [p[-1] for p in items]),
        self_preference=self_preference(judge_model, candidate_model, judge_provider),
    )


async def judge_labels(
    rows: Sequence[LabelRow],
    judge: Any,
    *,
    call: ModelCall,
    case_for: Any = None,
) -> list[str]:
    """Ask ``judge`` (a :class:`~goldenkit.graders._judge.JudgeGrader`) for a decision on every label row.

    Each row needs its response (``response`` / ``candidate``). The judge sees
    the case ``case_for(row)`` returns (for instance the dataset case named by
    the label's ``caseId``), else one made of the label's ``prompt`` and
    ``reference``. Every judge call goes through ``call`` (the seam of every model call,
    :meth:`goldenkit.runner._calls.ModelCalls.response`: its limiter, retries with backoff and
    Retry-After, deadline); a judge call that still fails counts as PENDING.
    """

    missing = [r for r in rows if r.response is None]
    if missing:
        r = missing[0]
        raise DatasetError(f"row {r.id}: no response to judge (response or candidate)", line=r.line)

    async def one(row: LabelRow) -> str:
        case = case_for(row) if case_for is not None else None
        if case is None:
            case = Case(id=row.id, shape="contract", turns=(Turn(user=row.prompt or ""),), reference=row.reference)
        result = await judge.agrade(case, Response.from_text(row.response or ""), call)
        if result.passed is None:
            return "PENDING"
        return "ACCEPT" if result.passed else "REJECT"

    return list(await asyncio.gather(*(one(r) for r in rows)))


publish(globals())
