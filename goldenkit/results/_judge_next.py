"""Which rows to label next: sampling probabilities tied to the judge's uncertainty (active inference).

:func:`label_plan` proposes rows of a judge-graded run for a human to label, drawn so that the labels
narrow the prediction-powered interval (:mod:`goldenkit.results._judge_evidence`) the most, and records
the probability with which each row was drawn so the labels stay valid (Zrnic & Candès 2024, "Active
statistical inference").

**The judge's error, per row.** The variance a label removes is the judge's expected squared error on the
row, ``E[(human - judge)^2]``: for 0/1 verdicts, the chance that the judge is wrong there. Its measured
part is the slice's disagreement rate ``s``: over the human labels of the slice's judged rows (hand-picked
ones too: they may shape a design, never an estimate), ``(disagreements + K ē) / (labels + K)``, shrunk
toward the run's pooled rate ``ē = (disagreements + K e₀) / (labels + K)``, itself shrunk toward a prior
``e₀`` (``K`` = :data:`PRIOR_LABELS` = 10 labels' worth each): the judge's disagreement in its
calibration report (``[judge] calibration`` of the goldenkit.toml the run recorded, for the run's judge
version; ``K`` its pairs, at most 30) when there is one, else :data:`PRIOR_ERROR` = 0.2 (a judge that agrees
with humans on 4 rows in 5). The draw leans further on two doubts of the row itself, the judge being wrong
when any doubt bites, ``1 - (1 - s)(1 - d)(1 - h)``:

* ``d``, the judge's disagreement with itself, the minority share of its decided repeats (a 2-1 split: 1/3);
* ``h``, 1/2 when the judge's collapsed verdict differs from the row's own collapsed verdict (its hard
  graders'), else 0.

These doubts choose which rows to draw; the expected width takes the judge to err at the measured rate
``s`` on every unlabelled row of the slice (the doubts are not measured rates: counting them would
forecast a judge worse than its labels show).

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
row ``i`` with probability ``e_i`` (the slice's rate ``s`` above; the observed disagreement, 0 or 1, on a
labelled row). The variance of the estimate is ``(mean E[Z^2] - mean(E[Y])^2) / M`` at the ``λ`` in
``[0, 1]`` that makes it least: the variance :func:`goldenkit.stats.ppi_mean` estimates (``sd(Z)^2 / M``)
with the ``λ`` it tunes. Averaged with what came before (the rounds, or the labels of one design, weighted
by the rows each asked for), the half-width after labelling is ``z √(a² se_before² + (1 - a)² se_round²)``,
``a = rows before / (rows before + n)``; without labels it is the round's own. Before, it is the current
prediction-powered interval's (none without designed labels: the judge-only interval is of the judge, not
of the truth). A forecast is never wider than the interval now: every earlier label stays in the round
as known (``q = 1``), so more labels cannot be expected to widen it; a narrower interval now than the
error rates predict is luck the forecast does not undo. ``tests/test_judge_next.py`` checks the forecast
against the widths simulated draws of planted judges (70% and 90% agreement) give.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from goldenkit._registry import publish
from goldenkit.config import config_for_run, table_values
from goldenkit.errors import ConfigError, InputError
from goldenkit.results._judge_evidence import LabelRound, judge_estimates, judge_rows
from goldenkit.results._run import Run, read_run
from goldenkit.stats import OVERALL

__all__ = ["LabelPlan", "label_plan", "sampling_probabilities"]

#: Every candidate's probability is at least this share of the uniform probability ``n / candidates``.
FLOOR_SHARE = 0.25
#: The judge's disagreement with humans the forecast assumes without labels or a calibration report.
PRIOR_ERROR = 0.2
#: How many labels the prior (and the run's pooled rate, for a slice) weighs.
PRIOR_LABELS = 10.0
#: A calibration report weighs as many labels as its pairs, at most this many (it was measured elsewhere).
CALIBRATION_CAP = 30.0


@dataclass(frozen=True)
class JudgeError:
    """The judge's disagreement rate the forecast starts from: ``rate``, worth ``weight`` labels, and
    ``source`` (the calibration report, or the default)."""

    rate: float
    weight: float
    source: str


def judge_prior(run: Run) -> JudgeError:
    """The prior disagreement rate (module doc): the run's judge's calibration report, else the default."""
    default = JudgeError(PRIOR_ERROR, PRIOR_LABELS, f"the default {PRIOR_ERROR:.0%}")
    try:
        cfg = config_for_run(None, run.manifest, run.path)
        path = table_values(cfg, "judge")["calibration"]  # [judge] as declared (goldenkit._config_tables)
        if not path:
            return default
        where = Path(str(cfg.get("_path") or ".")).parent / path
        report = json.loads(where.read_text(encoding="utf-8"))
        accuracy = float(report["rates"]["accuracy"]["rate"])
        n = int(report["n"])
    except (ConfigError, OSError, ValueError, KeyError, TypeError):
        return default  # a forecast never stops a draw: without a readable report, the default
    if report.get("judge_version") != run.manifest.get("judge_version") or n < 1 or accuracy != accuracy:
        return default
    return JudgeError(1.0 - accuracy, min(float(n), CALIBRATION_CAP), f"calibration {where.name} ({n} pairs)")


@dataclass(frozen=True)
class LabelPlan:
    """A draw of rows to label: ``rows`` (every candidate: ``row_id``, the group, ``error``,
    ``probability``, ``drawn``), ``round`` (the draw as the run records it), ``widths`` (per group and
    overall: ``before``, ``after`` half-widths and ``expected_labels``), the ``seed``, ``n`` asked and
    ``alpha``; ``needed``, when this draw is not expected to narrow the overall interval, the ``n`` that
    is (None when none is, or when it does); ``judge_error`` what the expected widths take the judge's
    disagreement to be. ``widths``' ``forecast`` is the half-width the error rates give, ``after`` the same
    but never above ``before``."""

    rows: pd.DataFrame
    round: LabelRound
    widths: pd.DataFrame
    seed: int
    n: int
    alpha: float
    needed: int | None = None
    judge_error: str = ""

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
            elif w["forecast"] >= w["before"]:
                lines.append(
                    f"  {what} interval stays at {_points(w['before'])} (too few of these rows drawn to narrow it)"
                )
            else:
                lines.append(f"  {what} interval goes from {_points(w['before'])} to {_points(w['after'])} (expected)")
        if lines and self.judge_error:
            lines.append(f"  expected widths: {self.judge_error}")
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


def _row_errors(rows: pd.DataFrame, by: str, prior: JudgeError) -> tuple[np.ndarray, np.ndarray, str]:
    """(the slice's measured rate ``s`` per row, the draw's error per row, what ``s`` stands on) (module doc)."""
    labelled = rows["label"].isin(["designed", "hand"]) & rows["judge"].isin(["PASS", "FAIL"])
    wrong = labelled & (rows["human"] != rows["judge"])
    n_lab, n_wrong = float(labelled.sum()), float(wrong.sum())
    overall = (n_wrong + prior.weight * prior.rate) / (n_lab + prior.weight)
    per = pd.DataFrame({"g": rows[by].astype(str), "l": labelled, "w": wrong}).groupby("g")[["l", "w"]].sum()
    k = PRIOR_LABELS
    slice_rate = ((per["w"] + k * overall) / (per["l"] + k)).reindex(rows[by].astype(str)).to_numpy()
    said = f"{n_wrong:.0f} of {n_lab:.0f} labels disagree, shrunk toward {prior.source}" if n_lab else prior.source
    share = rows["judge_share"].to_numpy(dtype=float)
    split = np.nan_to_num(np.where(rows["judge_repeats"].to_numpy() >= 2, np.minimum(share, 1.0 - share), 0.0))
    hard = 0.5 * (rows["verdict"].isin(["PASS", "FAIL"]) & (rows["verdict"] != rows["judge"])).to_numpy(dtype=float)
    draw: np.ndarray = 1.0 - (1.0 - slice_rate) * (1.0 - split) * (1.0 - hard)
    return slice_rate, draw, f"the judge taken to disagree with you on {overall:.0%} of rows ({said})"


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
    if estimate["round_rows"] and not math.isnan(before):  # averaged with what came before (module doc)
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
    errors = cand["draw_e"].to_numpy()

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
    rows["e"], rows["draw_e"], said = _row_errors(rows, by, judge_prior(r))
    designed = rows["label"] == "designed"
    observed = (rows["human"] != rows["judge"]).astype(float)
    rows.loc[designed, "e"] = observed[designed]  # known: q = 1 (module doc)
    candidate = rows["judge"].isin(["PASS", "FAIL"]) & ~designed
    if not candidate.any():
        raise InputError(f"{r.path}: every row the judge decided already holds a label drawn by a design")
    seed = secrets.randbelow(2**32) if seed is None else int(seed)
    cand = rows[candidate].sort_values("row_id").reset_index(drop=True)
    prob = sampling_probabilities(cand["draw_e"].to_numpy(), float(n))
    drawn = np.random.default_rng(seed).random(len(cand)) < prob
    rows = _with_q(rows, designed, cand, prob)
    estimates = judge_estimates(r, by=by, alpha=alpha, rule=rule)
    z = float(norm.ppf(1.0 - alpha / 2.0))
    lines = []
    for key in [*sorted({str(v) for v in rows[by]}), OVERALL]:
        group = rows if key == OVERALL else rows[rows[by].astype(str) == key]
        before, raw = _width(group, estimates.loc[key], z, n)
        after = raw if math.isnan(before) else min(raw, before)  # never wider than now (module doc)
        expected = float(group["q"].where(candidate.loc[group.index], 0.0).sum())
        lines.append({by: key, "before": before, "after": after, "forecast": raw, "expected_labels": expected})
    widths = pd.DataFrame(lines).set_index(by)
    needed = None
    if widths.loc[OVERALL, "forecast"] >= widths.loc[OVERALL, "before"]:
        needed = _rows_needed(rows, designed, cand, estimates.loc[OVERALL], z)
    plan_rows = cand[["row_id", by, "judge", "draw_e", "verdict"]].rename(columns={"draw_e": "error"})
    plan_rows = plan_rows.assign(probability=prob, drawn=drawn)
    judged = rows[rows["judge"].isin(["PASS", "FAIL"])]
    draw = LabelRound(
        seed=seed,
        n=n,
        at=datetime.now(UTC).isoformat(timespec="seconds"),
        probabilities={str(k): float(v) for k, v in zip(judged["row_id"], judged["q"], strict=True)},
        drawn=tuple(str(x) for x in cand.loc[drawn, "row_id"]),
    )
    return LabelPlan(plan_rows, draw, widths, seed=seed, n=n, alpha=alpha, needed=needed, judge_error=said)


publish(globals())
