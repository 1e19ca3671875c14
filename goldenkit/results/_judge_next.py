"""Which rows to label next: sampling probabilities tied to the judge's uncertainty (active inference).

:func:`label_plan` proposes rows of a judge-graded run for a human to label, drawn so that the labels
narrow the prediction-powered interval (:mod:`goldenkit.results._judge_evidence`) the most, and records
the probability with which each row was drawn so the labels stay valid (Zrnic & Candès 2024, "Active
statistical inference").

**The judge's error, per row.** The variance a label removes is the judge's expected squared error on the
row, ``E[(human - judge)^2]``: for 0/1 verdicts, the chance that the judge is wrong there. It is estimated
as ``1 - (1 - s)(1 - d)(1 - h)``, the judge being wrong when any of three doubts bites:

* ``s``, the row's slice's labelled judge error rate, ``(disagreements + 2 ē) / (labels + 2)`` over every
  human label of the slice's judged rows (hand-picked ones too: they may shape a design, never an
  estimate), shrunk toward the run's rate ``ē = (disagreements + 1) / (labels + 2)`` (1/2 without labels);
* ``d``, the judge's disagreement with itself, the minority share of its decided repeats (a 2-1 split: 1/3);
* ``h``, 1/2 when the judge's collapsed verdict differs from the row's own collapsed verdict (its hard
  graders'), else 0.

**Probabilities.** ``π_i ∝ √error_i`` (the variance-optimal rule of Zrnic & Candès for ``λ = 1``), floored
at a quarter of the uniform probability so every row has ``π_i > 0``, capped at 1, and scaled so that
``Σ π_i = n``: the expected number of rows drawn is ``n``. Candidates are the rows the judge decided
that hold no label drawn by a design; rows are drawn by Poisson sampling (each independently, ``u_i <
π_i``, ``u`` from NumPy's ``default_rng(seed)`` in row-id order), so the number drawn varies around
``n``.

**Rounds.** Rows that already hold a label drawn by a design are not candidates: their human verdict is
known, and the draw records them with probability 1. Each plan is a round, appended to the run's
``label_rounds.jsonl`` (:class:`~goldenkit.results._judge_evidence.LabelRound`) when ``goldenkit judge
next`` writes its file; :func:`~goldenkit.results.judge_estimates` averages the rounds whose drawn rows are
all labelled, each unbiased given the ones before it, so a later small draw adds to the earlier ones
instead of replacing them.

**Expected width.** For a group of ``M`` judged rows whose row ``i`` will hold a label with probability
``q_i`` (1 if a design labelled it already, ``π_i`` if it is a candidate), this round's weighted
estimator's terms ``Z_i = λ f_i + (Y_i - λ f_i) ξ_i / q_i`` (``f`` the judge's verdict, ``Y`` the human's)
have ``E[Z_i^2] = λ^2 f_i + 2 λ f_i (E[Y_i] - λ f_i) + E[(Y_i - λ f_i)^2] / q_i``, taking the judge to err on
row ``i`` with probability ``e_i`` (the estimate above; the observed disagreement, 0 or 1, on a labelled
row). The variance of the estimate is ``(mean E[Z^2] - mean(E[Y])^2) / M`` at the ``λ`` in ``[0, 1]`` that
makes it least (the estimator tunes ``λ`` the same way). Averaged with the rounds before it (weights by
the rows each asked for), the half-width after labelling is ``z √(a² se_before² + (1 - a)² se_round²)``,
``a = rows asked before / (rows asked before + n)``; without earlier rounds it is the round's own. Before,
it is the current prediction-powered interval's (none without designed labels: the judge-only interval
is of the judge, not of the truth).
"""

from __future__ import annotations

import json
import math
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from goldenkit.errors import InputError
from goldenkit.results._judge_evidence import LabelRound, judge_estimates, judge_rows
from goldenkit.results._run import Run, read_run
from goldenkit.stats import OVERALL

__all__ = ["LabelPlan", "label_plan", "sampling_probabilities"]

#: Every candidate's probability is at least this share of the uniform probability ``n / candidates``.
FLOOR_SHARE = 0.25


@dataclass(frozen=True)
class LabelPlan:
    """A draw of rows to label: ``rows`` (every candidate: ``row_id``, the group, ``error``,
    ``probability``, ``drawn``), ``round`` (the draw as the run records it), ``widths`` (per group and
    overall: ``before``, ``after`` half-widths and ``expected_labels``), the ``seed``, ``n`` asked and
    ``alpha``; ``needed``, when this draw is not expected to narrow the overall interval, the ``n`` that
    is (None when none is, or when it does)."""

    rows: pd.DataFrame
    round: LabelRound
    widths: pd.DataFrame
    seed: int
    n: int
    alpha: float
    needed: int | None = None

    @property
    def drawn(self) -> pd.DataFrame:
        return self.rows[self.rows["drawn"]]

    def jsonl(self) -> str:
        """The drawn rows as ``judge label`` input: ``{"id", "probability", "human": null}`` per line."""
        return "".join(
            json.dumps({"id": rid, "probability": float(p), "human": None}) + "\n"
            for rid, p in zip(self.drawn["row_id"], self.drawn["probability"], strict=True)
        )

    def width_lines(self, judge_only: pd.DataFrame) -> list[str]:
        """Per group and overall, the interval's expected half-width before and after labelling the drawn
        rows ("the refunds pass rate interval goes from +/-9.0 points to +/-5.0 points (expected)");
        ``judge_only``: :func:`~goldenkit.results.judge_estimates`' table, whose judge-only interval is named
        while no designed label gives a valid one."""
        lines = []
        for key, w in self.widths.iterrows():
            if math.isnan(w["after"]):
                continue
            what = "the pass rate" if key == OVERALL else f"the {key} pass rate"
            if math.isnan(w["before"]):
                half = (judge_only.loc[key, "judge_ci_high"] - judge_only.loc[key, "judge_ci_low"]) / 2
                lines.append(
                    f"  {what}: no valid interval yet (no designed labels; the judge-only one, of the judge's "
                    f"verdicts, is {_points(half)}); after labelling {_points(w['after'])} (expected)"
                )
            else:
                lines.append(f"  {what} interval goes from {_points(w['before'])} to {_points(w['after'])} (expected)")
        return lines

    def to_dict(self) -> dict[str, Any]:
        widths = self.widths.reset_index().astype(object)
        return {
            "schema_version": 1,
            "seed": self.seed,
            "n": self.n,
            "alpha": self.alpha,
            "expected_labels": float(self.rows["probability"].sum()),
            "known": len(self.round.probabilities) - len(self.rows),
            "needed": self.needed,
            "drawn": [
                {"id": r, "probability": float(p)}
                for r, p in zip(self.drawn["row_id"], self.drawn["probability"], strict=True)
            ],
            "widths": widths.where(widths.notna(), None).to_dict(orient="records"),
        }


def _points(x: float) -> str:
    return f"+/-{100 * x:.1f} points"


def sampling_probabilities(error: np.ndarray, n: float, floor_share: float = FLOOR_SHARE) -> np.ndarray:
    """``π ∝ √error``, at least ``floor_share · n / len(error)``, at most 1, summing to ``n`` (module doc)."""
    err = np.asarray(error, dtype=float)
    m = err.size
    if m == 0:
        return err
    if n >= m:
        return np.ones(m)
    raw = np.sqrt(np.clip(err, 1e-12, None))
    floor = floor_share * n / m

    def total(c: float) -> float:
        return float(np.minimum(1.0, np.maximum(floor, c * raw)).sum())

    low, high = 0.0, 1.0
    while total(high) < n:
        high *= 2.0
    for _ in range(200):  # bisection to machine precision: the sum is continuous and increasing in c
        mid = (low + high) / 2.0
        low, high = (mid, high) if total(mid) < n else (low, mid)
    out: np.ndarray = np.minimum(1.0, np.maximum(floor, high * raw))
    return out


def _row_errors(rows: pd.DataFrame, by: str) -> np.ndarray:
    labelled = rows["label"].isin(["designed", "hand"]) & rows["judge"].isin(["PASS", "FAIL"])
    wrong = labelled & (rows["human"] != rows["judge"])
    overall = (float(wrong.sum()) + 1.0) / (float(labelled.sum()) + 2.0)
    per = pd.DataFrame({"g": rows[by].astype(str), "l": labelled, "w": wrong}).groupby("g")[["l", "w"]].sum()
    slice_rate = ((per["w"] + 2.0 * overall) / (per["l"] + 2.0)).reindex(rows[by].astype(str)).to_numpy()
    share = rows["judge_share"].to_numpy(dtype=float)
    split = np.nan_to_num(np.where(rows["judge_repeats"].to_numpy() >= 2, np.minimum(share, 1.0 - share), 0.0))
    hard = 0.5 * (rows["verdict"].isin(["PASS", "FAIL"]) & (rows["verdict"] != rows["judge"])).to_numpy(dtype=float)
    out: np.ndarray = 1.0 - (1.0 - slice_rate) * (1.0 - split) * (1.0 - hard)
    return out


def _width(group: pd.DataFrame, estimate: Any, z: float, n: float) -> tuple[float, float]:
    """(before, after) half-widths of one group's interval (module doc); before NaN without an estimate."""
    judged = group[group["judge"].isin(["PASS", "FAIL"])]
    if judged.empty:
        return math.nan, math.nan
    f = (judged["judge"] == "PASS").to_numpy(dtype=float)
    q, e = judged["q"].to_numpy(dtype=float), judged["e"].to_numpy(dtype=float)
    mean_y = f * (1.0 - e) + (1.0 - f) * e  # E[human] when the judge errs with probability e
    lam = np.linspace(0.0, 1.0, 101)[:, None]
    sq_err = np.where(f == 1.0, (1.0 - e) * (1.0 - lam) ** 2 + e * lam**2, e)  # E[(human - lam * judge)^2]
    with np.errstate(divide="ignore"):
        second = (lam * f) ** 2 + 2.0 * lam * f * (mean_y - lam * f) + sq_err / np.where(q > 0, q, 0.0)
    var = second.mean(axis=1) - mean_y.mean() ** 2  # Var(Z) for each lam; the estimator takes the least
    after = z * math.sqrt(max(float(var.min()), 0.0) / len(judged))
    before = z * float(estimate["se"]) if not math.isnan(float(estimate["estimate"])) else math.nan
    if estimate["rounds"] and not math.isnan(before):  # averaged with the rounds before it (module doc)
        a = float(estimate["round_rows"]) / (float(estimate["round_rows"]) + n)
        after = math.sqrt(a**2 * before**2 + (1.0 - a) ** 2 * after**2)
    return before, after


def _with_q(rows: pd.DataFrame, designed: pd.Series, cand: pd.DataFrame, prob: np.ndarray) -> pd.DataFrame:
    """``rows`` with ``q``: 1 on rows a design labelled already, ``prob`` on the candidates, else 0."""
    q = pd.Series(prob, index=cand["row_id"]).reindex(rows["row_id"]).fillna(0.0).to_numpy()
    return rows.assign(q=np.where(designed, 1.0, q))


def _rows_needed(rows: pd.DataFrame, designed: pd.Series, cand: pd.DataFrame, overall: Any, z: float) -> int | None:
    """The fewest expected labels whose draw narrows the overall interval below its width now (None when no
    draw can: the rows already labelled are then exact and the rest depends on this draw alone)."""
    before = z * float(overall["se"])
    errors = cand["e"].to_numpy()

    def after(k: int) -> float:
        return _width(_with_q(rows, designed, cand, sampling_probabilities(errors, float(k))), overall, z, k)[1]

    low, high = 1, len(cand)
    if math.isnan(before) or after(high) >= before:
        return None
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if after(mid) >= before else (low, mid)
    return low


def label_plan(
    run: Run | str | os.PathLike[str],
    *,
    n: int = 25,
    seed: int | None = None,
    by: str = "slice",
    rule: str = "majority",
    alpha: float = 0.05,
) -> LabelPlan:
    """Draw about ``n`` rows of ``run`` for a human to label (module doc); ``seed`` None picks one, recorded
    in the plan."""
    if n < 1:
        raise InputError(f"label_plan: n must be at least 1, got {n}")
    r = run if isinstance(run, Run) else read_run(run)
    rows = judge_rows(r, by=by, rule=rule)
    rows["e"] = _row_errors(rows, by)
    designed = rows["label"] == "designed"
    observed = (rows["human"] != rows["judge"]).astype(float)
    rows.loc[designed, "e"] = observed[designed]  # known: q = 1 (module doc)
    candidate = rows["judge"].isin(["PASS", "FAIL"]) & ~designed
    if not candidate.any():
        raise InputError(f"{r.path}: every row the judge decided already holds a label drawn by a design")
    seed = secrets.randbelow(2**32) if seed is None else int(seed)
    cand = rows[candidate].sort_values("row_id").reset_index(drop=True)
    prob = sampling_probabilities(cand["e"].to_numpy(), float(n))
    drawn = np.random.default_rng(seed).random(len(cand)) < prob
    rows = _with_q(rows, designed, cand, prob)
    estimates = judge_estimates(r, by=by, alpha=alpha, rule=rule)
    z = float(norm.ppf(1.0 - alpha / 2.0))
    lines = []
    for key in [*sorted({str(v) for v in rows[by]}), OVERALL]:
        group = rows if key == OVERALL else rows[rows[by].astype(str) == key]
        before, after = _width(group, estimates.loc[key], z, n)
        expected = float(group["q"].where(candidate.loc[group.index], 0.0).sum())
        lines.append({by: key, "before": before, "after": after, "expected_labels": expected})
    widths = pd.DataFrame(lines).set_index(by)
    needed = None
    if widths.loc[OVERALL, "after"] >= widths.loc[OVERALL, "before"]:
        needed = _rows_needed(rows, designed, cand, estimates.loc[OVERALL], z)
    plan_rows = cand[["row_id", by, "judge", "e", "verdict"]].rename(columns={"e": "error"})
    plan_rows = plan_rows.assign(probability=prob, drawn=drawn)
    judged = rows[rows["judge"].isin(["PASS", "FAIL"])]
    draw = LabelRound(
        seed=seed,
        n=n,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        probabilities={str(k): float(v) for k, v in zip(judged["row_id"], judged["q"], strict=True)},
        drawn=tuple(str(x) for x in cand.loc[drawn, "row_id"]),
    )
    return LabelPlan(plan_rows, draw, widths, seed=seed, n=n, alpha=alpha, needed=needed)
