"""Judge-graded figures with valid intervals: the judge's verdict on every row, corrected by human labels.

:func:`judge_estimates` reports, per slice (``by``) and overall, the judge-only pass rate with its Wilson
interval (what the judge thinks, marked ``judge only``) and, when the run has human labels drawn by a
recorded design (:mod:`goldenkit.results._labels`), the prediction-powered estimate of the *human* pass rate
and its interval (:func:`goldenkit.stats.ppi_mean`). :func:`judge_difference` does the same for the paired
difference between two runs graded by the same judge.

**The judge's verdict on a row** is the judge grader's own pass/fail: the ``passed`` of the outcome's
``graders["judge"]`` entry, whatever the row's verdict (a soft judge never decides the row; a hard one's
FAIL is also the row's). An outcome without a judge entry, or whose judge did not decide (PENDING, a
failed judge call), is an ERROR for the judge; a SKIPPED outcome is SKIPPED. The repeats are collapsed
with the run's rule (:func:`goldenkit.stats.collapse_repeats`, ``rule``): an undecided row (ERROR) is
out of the judged rows, as it is out of every pass rate.

**A human label's row.** A label whose ``repeat`` is null is the human's verdict on the row (the answers
of all its repeats): it is paired with the row's collapsed judge verdict. A label of one repeat is the
row's when the row has one repeat; in a run of several repeats it judges one attempt, not the row, and
is shown (``n_unused``) but not used. A row labelled both ways keeps its null-repeat label.

**Which labels make the estimate.** Only labels drawn by a recorded design (a ``probability``): when
every such label in the group has the same probability they are a simple random sample and the estimate
is plain PPI++; when the probabilities differ each label is weighted by ``1 / probability`` (Zrnic &
Candès 2024). Hand-picked labels (no probability) are counted in ``n_hand`` and never used: a hand-picked
sample is not a design, and an interval built on it can be biased whichever way the picker leaned (the
``reason`` column says so). Their rows count as rows the judge alone graded.

**Rounds of** ``goldenkit judge next`` (``label_rounds.jsonl`` beside the run, one record per draw: the
probability of every judged row, 1 for the rows a design had labelled already, and the rows drawn). A
round's estimate is the weighted PPI++ over the rows it covers: the rows known when it was drawn count
as they are, the rows it drew weigh ``1 / probability``; given what came before it, it is unbiased, so
the rounds' errors are uncorrelated (a martingale, Zrnic & Candès 2024) and their average, weighted by
the number of rows each round asked for (fixed before it was drawn), has the standard error
``√Σ a_k² se_k²``. A round counts once every row it drew holds a designed row label (a round left
half-labelled is named in the reason, not used); while none does, the labels of one design are read as
above, without those a round drew. The labels of one design that were there when the first round was
drawn (it records them with probability 1) are a round 0: their estimate, unbiased, weighs their number
of labels, so a small first round adds to them instead of replacing them; other designed labels outside
the rounds are not used once a round counts.

**The paired difference** (candidate minus baseline, per row in ``{-1, 0, 1}``): the judge's difference on
every row both judges decided, corrected by the rows whose answers a human labelled on both runs with
the same recorded probability (one draw labelled on both sides), with ``ppi_mean(..., bounds=(-1, 1))``.
A row whose two labels carry different probabilities was drawn twice, independently: the pair is shown,
not used; so are the labels the rounds of ``judge next`` drew (one design per run is read here, not
rounds). The judge-only figure is Newcombe's paired interval (:func:`goldenkit.stats.paired_diff_ci`).

Columns: ``<by>`` · ``n_judged`` rows with a judge verdict (or paired) · ``judge_rate`` (``judge_diff``),
``judge_ci_low``, ``judge_ci_high`` the judge-only figure · ``n_human`` designed labels used · ``n_hand``
hand-picked labels shown · ``n_unused`` other labels not used · ``estimate``, ``ci_low``, ``ci_high``,
``se``, ``lam``, ``weighted``, ``effective_n`` (NaN without an estimate) · ``rounds`` the rounds combined (0: the
labels' recorded probabilities, one design) and ``round_rows`` the rows they asked for (and the labels of
the design before them; without rounds, the design's labels: what a first round is averaged with) ·
``ess_gain`` = ``effective_n - n_human``: the labels the judge was worth · ``method`` ``ppi++``,
``ppi++ weighted`` or ``judge only`` · ``reason``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from goldenkit._registry import publish
from goldenkit.errors import ComparisonInvalid, InputError
from goldenkit.results._jsonl import scan_jsonl
from goldenkit.results._labels import read_labels
from goldenkit.results._run import Run, read_run
from goldenkit.schema import OUTCOME_FIELDS
from goldenkit.stats import OVERALL, collapse_repeats, paired_diff_ci, ppi_mean, wilson_ci

__all__ = [
    "JUDGE",
    "ROUNDS_FILE",
    "LabelRound",
    "add_round",
    "complete_rounds",
    "judge_difference",
    "judge_estimates",
    "judge_rows",
    "read_rounds",
]

#: The judge grader's name in an outcome's ``graders``.
JUDGE = "judge"
#: The draws of ``goldenkit judge next``, beside the run (module doc).
ROUNDS_FILE = "label_rounds.jsonl"
_HAND = "picked by hand, not drawn by a recorded design: shown, never used for inference"


@dataclass(frozen=True)
class LabelRound:
    """One draw of rows to label: ``probabilities`` of every judged row (1: labelled already), ``drawn``
    the rows it drew, ``n`` the rows it asked for, ``seed`` and ``at``."""

    seed: int
    n: int
    at: str
    probabilities: dict[str, float]
    drawn: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": 1, **asdict(self), "drawn": list(self.drawn)}


def read_rounds(run: Run) -> list[LabelRound]:
    """The run's rounds in the order they were drawn (those of the run its answers were regraded from
    when it has none of its own)."""
    path = Path(run.path) / ROUNDS_FILE
    regraded = run.manifest.get("regraded_from")
    source = regraded["path"] if regraded else None
    if not path.is_file() and isinstance(source, str):
        path = Path(source) / ROUNDS_FILE
    if not path.is_file():
        return []
    out = []
    for line in scan_jsonl(path):
        rec, where = line.record, f"{path}:{line.number}"
        try:
            raw = dict(rec["probabilities"])
            draw = LabelRound(int(rec["seed"]), int(rec["n"]), str(rec["at"]), {}, tuple(map(str, rec["drawn"])))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(f"{where}: not a round of goldenkit judge next") from None
        for row, p in raw.items():  # a probability edited by hand would weigh a label by 1/p: checked
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1:
                raise InputError(f"{where}: the probability of row {row!r} must be a number in (0, 1], got {p!r}")
        missing = [r for r in draw.drawn if r not in raw]
        if missing:
            raise InputError(f"{where}: the round drew row {missing[0]!r}, which has no probability in the round")
        out.append(replace(draw, probabilities={str(k): float(v) for k, v in raw.items()}))
    return out


def add_round(run: Run, draw: LabelRound) -> None:
    """Append ``draw`` to the run's rounds."""
    fd = os.open(Path(run.path) / ROUNDS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (json.dumps(draw.to_dict()) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def _judge_verdict(graders: Any, verdict: Any) -> str:
    if verdict == "SKIPPED":
        return "SKIPPED"
    entry = graders.get(JUDGE) if isinstance(graders, Mapping) else None
    if not isinstance(entry, Mapping) or entry.get("passed") is None or entry.get("error"):
        return "ERROR"
    passed = entry["passed"]
    return "PASS" if passed else "FAIL"


def _label_columns(run: Run, rows: pd.DataFrame, single: set[str]) -> pd.DataFrame:
    """``human``, ``probability`` and ``label`` (designed, hand, repeat or None) per row."""
    found: dict[str, tuple[str, float, str]] = {}
    for lab in sorted(read_labels(run), key=lambda lab: lab.repeat is None):  # a null-repeat label wins
        if lab.repeat is not None and lab.row_id not in single:
            found[lab.row_id] = (lab.human, math.nan, "repeat")
        else:
            prob = math.nan if lab.probability is None else float(lab.probability)
            found[lab.row_id] = (lab.human, prob, "designed" if lab.designed else "hand")
    ids = rows["row_id"].astype(str)
    rows["human"] = [found[r][0] if r in found else None for r in ids]
    rows["probability"] = np.array([found[r][1] if r in found else math.nan for r in ids], dtype=float)
    rows["label"] = [found[r][2] if r in found else None for r in ids]
    return rows


def judge_rows(
    run: Run | str | os.PathLike[str], *, by: str = "slice", rule: str = "majority", labels: bool = True
) -> pd.DataFrame:
    """One line per row of ``run``: ``row_id``, ``<by>``, ``judge`` (the judge's collapsed verdict, module
    doc), ``judge_share`` (the share of the judge's decided repeats that passed), ``judge_repeats`` (its
    decided repeats), ``verdict`` (the row's own collapsed verdict) and, with ``labels``, ``human``,
    ``probability`` and ``label``. A run with no judge verdict at all is an :class:`InputError`."""
    r = run if isinstance(run, Run) else read_run(run)
    cols = ["row_id", "repeat", "verdict", "graders"] + ([by] if by != "row_id" else [])
    if by not in OUTCOME_FIELDS:
        raise InputError(f"{r.path}: --by {by!r} is not an outcome column (slice, split, ...)")
    out = r.outcomes(columns=list(dict.fromkeys(["slice", *cols])))
    if len(out) and not out[by].map(lambda v: isinstance(v, str | int | float | bool) or v is None).all():
        raise InputError(f"{r.path}: --by {by!r} is not a per-row value (one value per row, like slice or split)")
    judged = [_judge_verdict(g, v) for g, v in zip(out["graders"], out["verdict"], strict=True)]
    if not any(v in ("PASS", "FAIL") for v in judged):
        raise InputError(f"{r.path}: run {r.run_id} has no judge verdict ('{JUDGE}' in its outcomes' graders)")
    frame = pd.DataFrame({"row_id": out["row_id"].astype(str), "repeat": out["repeat"], by: out[by]})
    judge = collapse_repeats(frame.assign(verdict=judged), rule)
    own = collapse_repeats(frame.assign(verdict=out["verdict"].astype(str)), rule).set_index("row_id")
    rows = judge[["row_id"]].copy()
    rows[by] = judge["row_id"].map(frame.drop_duplicates("row_id").set_index("row_id")[by]).to_numpy()
    rows["judge"] = judge["verdict"].astype(str).to_numpy()
    decided = judge["n_graded"].to_numpy()
    rows["judge_share"] = np.where(decided > 0, judge["n_pass"] / np.maximum(decided, 1), np.nan)
    rows["judge_repeats"] = decided
    rows["verdict"] = own.loc[rows["row_id"], "verdict"].astype(str).to_numpy()
    if labels:
        single = {str(k) for k, v in frame.groupby("row_id")["repeat"].size().items() if v == 1}
        rows = _label_columns(r, rows, single)
    return rows.reset_index(drop=True)


def _empty_estimate(reason: str) -> dict[str, Any]:
    nan = math.nan
    return {
        "estimate": nan,
        "ci_low": nan,
        "ci_high": nan,
        "se": nan,
        "lam": nan,
        "weighted": False,
        "effective_n": nan,
        "rounds": 0,
        "round_rows": 0,
        "ess_gain": nan,
        "method": "judge only",
        "reason": reason,
    }


def _ppi(
    judge: np.ndarray, human: np.ndarray, prob: np.ndarray, used: np.ndarray, alpha: float, diff: bool
) -> dict[str, Any]:
    """The estimate's columns over one group: ``judge`` per row, ``human`` and ``prob`` where ``used``."""
    n, big_n = int(used.sum()), int((~used).sum())
    if n == 0:
        return _empty_estimate("no human label drawn by a recorded design: the judge's figure only")
    if n < 2:
        return _empty_estimate("1 designed human label: a prediction-powered interval needs at least 2")
    if big_n == 0:
        return _empty_estimate("every judged row has a human label: no row for the judge to carry")
    p = prob[used]
    weights = None if np.allclose(p, p[0], rtol=0, atol=1e-12) else 1.0 / p
    est = ppi_mean(
        judge[~used], judge[used], human[used], weights=weights, alpha=alpha, bounds=(-1.0, 1.0) if diff else None
    )
    how = "equal probabilities: a simple random sample" if weights is None else "weighted by 1/probability"
    return {
        "estimate": est.estimate,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "se": est.se,
        "lam": est.lam,
        "weighted": est.weighted,
        "effective_n": est.effective_n,
        "rounds": 0,
        "round_rows": 0,
        "ess_gain": est.effective_n - est.n,
        "method": "ppi++ weighted" if est.weighted else "ppi++",
        "reason": f"{n} designed label(s), {how}",
    }


def _with_hand(line: dict[str, Any], n_hand: int, n_unused: int, unused_why: str) -> dict[str, Any]:
    notes = [line["reason"]]
    if n_hand:
        notes.append(f"{n_hand} label(s) {_HAND}")
    if n_unused:
        notes.append(f"{n_unused} label(s) not used: {unused_why}")
    return {**line, "reason": "; ".join(notes)}


def complete_rounds(rounds: Sequence[LabelRound], rows: pd.DataFrame) -> tuple[list[LabelRound], int]:
    """The rounds whose drawn and known rows all hold a designed row label (``rows``: :func:`judge_rows`), in
    order, and how many are not: the one rule of a complete round, for the estimate and the gate alike."""
    designed = set(rows.loc[rows["label"] == "designed", "row_id"])
    done = [
        rd
        for rd in rounds
        if set(rd.drawn) <= designed and {r for r, p in rd.probabilities.items() if p >= 1} <= designed
    ]
    return done, len(rounds) - len(done)


def _design_first(rows: pd.DataFrame, every: Sequence[LabelRound]) -> frozenset[str]:
    """The rows whose designed labels came before the first round (known to it, drawn by none): a round 0."""
    drawn = {r for rd in every for r in rd.drawn}
    known = {r for r, p in every[0].probabilities.items() if p >= 1} if every else set()
    designed = rows.loc[rows["label"] == "designed", "row_id"]
    return frozenset(r for r in designed if r in known and r not in drawn)


def _rounds_line(
    judged: pd.DataFrame, rounds: Sequence[LabelRound], alpha: float, design: frozenset[str] = frozenset()
) -> dict[str, Any] | None:
    """The rounds' combined estimate over one group (module doc), the labels of one ``design`` drawn before
    them as a round 0 weighing their number; None when no round covers the group."""
    f = (judged["judge"] == "PASS").to_numpy(dtype=float)
    y = (judged["human"] == "PASS").to_numpy(dtype=float)
    parts, union = [], np.zeros(len(judged), dtype=bool)
    first = judged["row_id"].isin(design).to_numpy()
    if 2 <= first.sum() < len(judged):
        p0 = judged["probability"].to_numpy(dtype=float)[first]
        w0 = None if np.ptp(p0) < 1e-12 else 1.0 / p0
        parts.append((len(design), ppi_mean(f[~first], f[first], y[first], weights=w0, alpha=alpha)))
        union |= first
    zero = len(parts)
    for rd in rounds:
        p = judged["row_id"].map(rd.probabilities).to_numpy(dtype=float)
        used = (p >= 1.0) | judged["row_id"].isin(rd.drawn).to_numpy()
        if np.isnan(p).any() or used.sum() < 2 or used.all():
            continue
        w = 1.0 / p[used]
        est = ppi_mean(f[~used], f[used], y[used], weights=None if np.ptp(w) < 1e-12 else w, alpha=alpha)
        parts.append((rd.n, est))
        union |= used
    if len(parts) == zero:
        return None
    a = np.array([n for n, _ in parts], dtype=float) / sum(n for n, _ in parts)
    estimate = float(sum(ak * e.estimate for ak, (_, e) in zip(a, parts, strict=True)))
    se = math.sqrt(sum(ak**2 * e.se**2 for ak, (_, e) in zip(a, parts, strict=True)))
    half = float(norm.ppf(1.0 - alpha / 2.0)) * se
    sd = float(y[union].std())
    effective_n = (sd / se) ** 2 if se > 0 and sd > 0 else float(union.sum())
    weighted = any(e.weighted for _, e in parts)
    said = f"{len(parts) - zero} round(s) of judge next"
    if zero:
        said = f"{len(design)} labels of one design, then {said}"
    return {
        "estimate": estimate,
        "ci_low": max(0.0, estimate - half),
        "ci_high": min(1.0, estimate + half),
        "se": se,
        "lam": parts[-1][1].lam,
        "weighted": weighted,
        "effective_n": effective_n,
        "rounds": len(parts) - zero,
        "round_rows": int(sum(n for n, _ in parts)),
        "ess_gain": effective_n - float(union.sum()),
        "method": "ppi++ weighted" if weighted else "ppi++",
        "reason": f"{said} ({int(union.sum())} labelled rows), averaged by their sizes",
        "_used": int(union.sum()),
    }


def _outside_rounds(rows: pd.DataFrame, rounds: Sequence[LabelRound]) -> pd.DataFrame:
    """``rows`` with the designed labels of rows a round drew marked ``round``: one design reads the rest."""
    drawn = {r for rd in rounds for r in rd.drawn}
    return rows.assign(
        label=rows["label"].where(~(rows["row_id"].isin(drawn) & (rows["label"] == "designed")), "round")
    )


def _rate_line(
    group: pd.DataFrame, alpha: float, rounds: Sequence[LabelRound], open_rounds: int, design: frozenset[str]
) -> dict[str, Any]:
    judged = group[group["judge"].isin(["PASS", "FAIL"])]
    k, n = int((judged["judge"] == "PASS").sum()), len(judged)
    lo, hi = wilson_ci(k, n, 1.0 - alpha)
    designed = (judged["label"] == "designed").to_numpy()
    f, human = (judged["judge"] == "PASS").to_numpy(dtype=float), (judged["human"] == "PASS").to_numpy(dtype=float)
    found = _rounds_line(judged, rounds, alpha, design) if rounds else None
    if found is not None:
        line, n_used = found, int(found.pop("_used"))
    else:
        line = _ppi(f, human, judged["probability"].to_numpy(), designed, alpha, False)
        n_used = int(designed.sum()) if line["method"] != "judge only" else 0
    if open_rounds:
        line["reason"] += f"; {open_rounds} round(s) of judge next not used until every row they drew is labelled"
    n_hand = int((group["label"] == "hand").sum())
    n_unused = int(group["label"].isin(["designed", "repeat", "round"]).sum()) - n_used
    if found is None:  # too few designed labels are said in the reason, not counted unused
        n_unused -= int(designed.sum()) - n_used
    labels = group["label"]
    whys = [
        (labels == "repeat").any() and "a label of one repeat in a run of several",
        (labels == "round").any() and "drawn by a round of judge next not fully labelled yet",
        found is not None and (labels == "designed").sum() > n_used and "a designed label outside the rounds",
        (labels.isin(["designed", "round"]) & ~group.index.isin(judged.index)).any()
        and "a row the judge left undecided",
    ]
    why = ", ".join(w for w in whys if w)
    return {
        "n_judged": n,
        "judge_k": k,
        "judge_rate": k / n if n else math.nan,
        "judge_ci_low": float(lo),
        "judge_ci_high": float(hi),
        "n_human": n_used,
        "n_hand": n_hand,
        "n_unused": n_unused,
        **_with_hand(line, n_hand, n_unused, why),
    }


def _groups(rows: pd.DataFrame, by: str) -> list[tuple[str, pd.DataFrame]]:
    keys = sorted({str(v) for v in rows[by]})
    return [(key, rows[rows[by].astype(str) == key]) for key in keys] + [(OVERALL, rows)]


def judge_estimates(
    run: Run | str | os.PathLike[str], *, by: str = "slice", alpha: float = 0.05, rule: str = "majority"
) -> pd.DataFrame:
    """The judge-only pass rate and the prediction-powered estimate of the human pass rate, one line per
    value of ``by`` (sorted) and a last line :data:`goldenkit.stats.OVERALL` (columns: module doc)."""
    if not 0.0 < alpha < 1.0:
        raise InputError(f"judge_estimates: alpha must be in (0, 1), got {alpha}")
    r = run if isinstance(run, Run) else read_run(run)
    rows = judge_rows(r, by=by, rule=rule)
    every = read_rounds(r)
    rounds, open_rounds = complete_rounds(every, rows)
    design = _design_first(rows, every) if rounds else frozenset()
    if not rounds:  # no round to average: the labels of one design, those no round drew
        rows = _outside_rounds(rows, every)
    lines = [{by: key, **_rate_line(group, alpha, rounds, open_rounds, design)} for key, group in _groups(rows, by)]
    table = pd.DataFrame(lines).set_index(by)
    if not rounds:  # what a first round will be averaged with: the design's labels, as a round 0 (module doc)
        designed = int(table.loc[OVERALL, "n_human"])
        table["round_rows"] = np.where(table["method"] != "judge only", designed, 0)
    return table


def _same_judge(a: Run, b: Run) -> None:
    ja, jb = a.manifest.get("judge_version"), b.manifest.get("judge_version")
    sa = (a.manifest.get("dataset") or {}).get("sha256")
    sb = (b.manifest.get("dataset") or {}).get("sha256")
    diffs = []
    if not ja or ja != jb:
        diffs.append(f"judge_version: {jb!r} (baseline) vs {ja!r} (candidate)")
    if sa != sb:
        diffs.append(f"dataset sha256: {sb!r} (baseline) vs {sa!r} (candidate)")
    if diffs:
        raise ComparisonInvalid(
            f"runs {b.run_id} and {a.run_id} are not graded by the same judge on the same rows: {'; '.join(diffs)}",
            diffs,
        )


def _diff_line(pair: pd.DataFrame, alpha: float) -> dict[str, Any]:
    c, b = (pair["judge_c"] == "PASS").to_numpy(), (pair["judge_b"] == "PASS").to_numpy()
    est, lo, hi = paired_diff_ci(
        int((c & b).sum()), int((c & ~b).sum()), int((~c & b).sum()), int((~c & ~b).sum()), 1 - alpha
    )
    both = (pair["label_c"] == "designed") & (pair["label_b"] == "designed")
    same = both & np.isclose(pair["probability_c"], pair["probability_b"], rtol=0, atol=1e-12)
    human = (pair["human_c"] == "PASS").to_numpy(dtype=float) - (pair["human_b"] == "PASS").to_numpy(dtype=float)
    line = _ppi(
        c.astype(float) - b.astype(float), human, pair["probability_c"].to_numpy(), same.to_numpy(), alpha, True
    )
    n_hand = int(((pair["label_c"] == "hand") | (pair["label_b"] == "hand")).sum())
    labelled = pair["label_c"].notna() | pair["label_b"].notna()
    n_unused = int(labelled.sum()) - n_hand - int(same.sum())
    why = "labelled on one run only, drawn with other probabilities on the two runs or by a round of judge next"
    return {
        "n_judged": len(pair),
        "judge_diff": float(est),
        "judge_ci_low": float(lo),
        "judge_ci_high": float(hi),
        "n_human": int(same.sum()) if line["method"] != "judge only" else 0,
        "n_hand": n_hand,
        "n_unused": n_unused,
        **_with_hand(line, n_hand, n_unused, why),
    }


def judge_difference(
    run: Run | str | os.PathLike[str],
    baseline: Run | str | os.PathLike[str],
    *,
    by: str = "slice",
    alpha: float = 0.05,
    rule: str = "majority",
) -> pd.DataFrame:
    """The paired difference in pass rate (``run`` minus ``baseline``) over the rows both judges decided:
    judge-only and prediction-powered (module doc), one line per value of ``by`` and :data:`OVERALL`.
    Runs not graded by the same judge version on the same dataset are :class:`ComparisonInvalid`."""
    if not 0.0 < alpha < 1.0:
        raise InputError(f"judge_difference: alpha must be in (0, 1), got {alpha}")
    cand = run if isinstance(run, Run) else read_run(run)
    base = baseline if isinstance(baseline, Run) else read_run(baseline)
    _same_judge(cand, base)
    keep = ["row_id", by, "judge", "human", "probability", "label"]
    rc = _outside_rounds(judge_rows(cand, by=by, rule=rule), read_rounds(cand))[keep]
    rb = _outside_rounds(judge_rows(base, by=by, rule=rule), read_rounds(base))[keep].drop(columns=[by])
    pair = rc.merge(rb, on="row_id", suffixes=("_c", "_b"))
    pair = pair[pair["judge_c"].isin(["PASS", "FAIL"]) & pair["judge_b"].isin(["PASS", "FAIL"])]
    if pair.empty:
        raise InputError(f"runs {cand.run_id} and {base.run_id} share no row that both judges decided")
    lines = [{by: key, **_diff_line(group, alpha)} for key, group in _groups(pair, by)]
    return pd.DataFrame(lines).set_index(by)


publish(globals())
