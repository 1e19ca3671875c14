"""Pass rate per slice over time, for the runs of one dataset that are comparable (:func:`trend`).

Which runs: the runs of the dataset (by name) whose ``state`` is ok (VALID and
complete; an INVALID or incomplete run is not evidence and is left out), of one
**protocol** (:func:`goldenkit.history._run_index.protocol_id`: repeats, graders,
judge and simulator versions, red rows, sample and shard), by default the
protocol of the most recent run. They are ordered by ``started_at``.

Agents: each line carries the run's ``agent``, the label of its agent version
(:func:`agent_label`: the model and the prompt's hash; a new commit of the same
model and prompt is the same series), so a plot draws one series per agent.

Segments: consecutive runs on the same dataset hash form a segment; a run on
another hash (a new dataset version) starts a new one, and ``version_change``
is True on its lines. Two points are comparable only within a segment: a plot
draws each segment as its own line and marks where the version changed.

Each line is one run x one group of ``by`` (and an ``(overall)`` line per run),
computed by :func:`goldenkit.stats.slice_table` on the run's outcomes:
``metric="pass_rate"`` over rows after collapsing repeats (``n`` graded rows,
``k`` passed), ``metric="error_rate"`` over outcomes (``n`` outcomes, ``k`` ERROR),
each with its Wilson interval ``ci_low, ci_high``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from goldenkit._registry import publish
from goldenkit.errors import InputError, ResultsError
from goldenkit.history._run_index import scan
from goldenkit.results import Run, read_run
from goldenkit.stats import (
    OVERALL,
    collapse_arrays,
    collapse_repeats,
    first_positions,
    sorted_codes,
    verdict_codes,
    wilson_ci,
)

__all__ = ["FAILURE_COUNT_COLUMNS", "METRICS", "TREND_COLUMNS", "agent_label", "failure_counts", "trend"]

METRICS = ("pass_rate", "error_rate")
TREND_COLUMNS = (
    "label",
    "run_id",
    "started_at",
    "model_id",
    "prompt_sha256",
    "agent",
    "dataset_version",
    "dataset_sha256",
    "protocol",
    "segment",
    "version_change",
)


def agent_label(model_id: Any, prompt_sha256: Any) -> str:
    """The series name of an agent version: its model and the first 8 hex digits of its prompt's hash.

    >>> agent_label("gpt-4o-mini", "3f2a9c01b7de55aa"), agent_label("gpt-4o-mini", None), agent_label(None, None)
    ('gpt-4o-mini · prompt 3f2a9c01', 'gpt-4o-mini', '(no model)')
    """
    model = "(no model)" if model_id is None or pd.isna(model_id) or str(model_id) == "" else str(model_id)
    if prompt_sha256 is None or pd.isna(prompt_sha256) or str(prompt_sha256) == "":
        return model
    return f"{model} · prompt {str(prompt_sha256)[:8]}"


def _candidates(dataset: str, runs: Any, results_dir: str | os.PathLike[str], rule: str) -> pd.DataFrame:
    """The runs_df rows to consider: given as a runs_df frame, as run ids / folders / Runs, or all of them."""
    if isinstance(runs, pd.DataFrame):
        df = runs
    elif runs is None:
        df = scan(results_dir, None, rule=rule).frame()
    else:
        folders = [r.path if isinstance(r, Run) else read_run(r, results_dir).path for r in runs]
        df = scan(results_dir, None, rule=rule, folders=folders).frame()
    missing = [c for c in ("kind", "run_id", "dataset_name", "state", "protocol", "path") if c not in df.columns]
    if missing:
        raise InputError(f"trend: runs has no column {missing[0]!r} (pass a frame from runs_df)")
    df = df[(df["kind"] == "run") & (df["dataset_name"] == dataset) & (df["state"] == "ok")]
    prompts = df["prompt_sha256"] if "prompt_sha256" in df.columns else pd.Series(None, index=df.index, dtype=object)
    model = df["model_id"] if "model_id" in df.columns else pd.Series(None, index=df.index, dtype=object)
    agents = [agent_label(m, p) for m, p in zip(model, prompts, strict=True)]
    if "label" not in df.columns:  # a frame from before runs_df had labels: the run id reads first
        df = df.assign(label=df["run_id"])
    return df.assign(model_id=model, prompt_sha256=prompts, agent=pd.Series(agents, index=df.index, dtype=object))


def _segments(df: pd.DataFrame) -> pd.DataFrame:
    df = df.sort_values(["started_at", "run_id"], kind="stable").reset_index(drop=True)
    key = df["dataset_sha256"].astype(str) + "/" + df["protocol"].astype(str)
    new = (key != key.shift()).to_numpy()
    df["segment"] = np.cumsum(new) - 1 if len(df) else []
    df["version_change"] = new & (np.arange(len(df)) > 0)
    return df


def _column(tables: Sequence[Any], name: str) -> np.ndarray:
    parts = [t.column(name).to_numpy(zero_copy_only=False) for t in tables]
    return np.concatenate(parts) if parts else np.array([], dtype=object)


def _lines(chosen: pd.DataFrame, by: str | None, metric: str, rule: str) -> pd.DataFrame:
    """The trend lines of every chosen run in one collapse (:func:`goldenkit.stats.collapse_arrays`).

    The same numbers as :func:`goldenkit.stats.slice_table` run by run (a test
    checks it), without its per-run DataFrames: about 40 ms per run, which made a
    history page of 1,000 runs take minutes.
    """
    group = by or "slice"
    tables = []
    for rid, path in zip(chosen["run_id"], chosen["path"], strict=True):
        try:
            tables.append(read_run(path).table(["row_id", "repeat", "verdict", group]))
        except ResultsError as exc:
            raise ResultsError(f"trend: run {rid}: {exc}") from None
    m = len(tables)
    run_of = np.repeat(np.arange(m, dtype=np.int64), [t.num_rows for t in tables])
    ids = _column(tables, "row_id")
    id_codes, id_names = pd.factorize(ids)
    width = max(len(id_names), 1)
    pair_codes, pairs = pd.factorize(run_of * width + id_codes)
    pairs = np.asarray(pairs, dtype=np.int64)
    verdicts = verdict_codes(pd.Series(_column(tables, "verdict"), dtype=object), ids)
    repeats = pd.to_numeric(pd.Series(_column(tables, "repeat")), errors="coerce").fillna(0).to_numpy(np.int64)
    names = np.asarray(id_names, dtype=object)[pairs % width] if len(pairs) else np.array([], dtype=object)
    rv = verdict_codes(collapse_arrays(names, pair_codes, verdicts, rule, repeats=repeats)["verdict"])
    g_codes, g_names = sorted_codes(_column(tables, group))
    if g_codes.size and g_codes.min() < 0:
        raise ResultsError(f"trend: an outcome has no {group!r}")
    if metric == "pass_rate":  # units: rows after collapsing, each in the group of its first outcome
        unit_run, unit_group = pairs // width, g_codes[first_positions(pair_codes, len(pairs))]
        n_w, k_w = (rv <= 1).astype(float), (rv == 0).astype(float)
    else:  # units: outcomes
        unit_run, unit_group = run_of, g_codes
        n_w, k_w = np.ones(len(verdicts)), (verdicts == 2).astype(float)
    cols = len(g_names) + 1  # the groups, then (overall)
    shape = (m, cols)
    cells = np.concatenate([unit_run * cols + unit_group, unit_run * cols + cols - 1])
    count = np.bincount(cells, minlength=m * cols).reshape(shape)
    n = np.bincount(cells, weights=np.concatenate([n_w, n_w]), minlength=m * cols).reshape(shape).astype(np.int64)
    k = np.bincount(cells, weights=np.concatenate([k_w, k_w]), minlength=m * cols).reshape(shape).astype(np.int64)
    keep = count > 0
    keep[:, -1] = True
    if by is None:
        keep[:, :-1] = False
    ri, gi = np.nonzero(keep)
    n_sel, k_sel = n[ri, gi], k[ri, gi]
    lo, hi = wilson_ci(k_sel, n_sel)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(n_sel > 0, k_sel / np.where(n_sel > 0, n_sel, 1), np.nan)
    labels = np.array([*g_names, OVERALL], dtype=object)
    lines = chosen.iloc[ri][list(TREND_COLUMNS)].reset_index(drop=True)
    extra = {"group": labels[gi], "n": n_sel, "k": k_sel, metric: value, "ci_low": lo, "ci_high": hi}
    return pd.concat([lines, pd.DataFrame(extra)], axis=1)


def trend(
    dataset: Any,
    metric: str = "pass_rate",
    by: str | None = "slice",
    runs: pd.DataFrame | Sequence[Any] | None = None,
    *,
    results_dir: str | os.PathLike[str] = "results",
    rule: str = "majority",
    protocol: str | None = None,
) -> pd.DataFrame:
    """Per run and per ``by`` group (plus ``(overall)``), ``metric`` with its Wilson interval, over time.

    ``dataset``: a dataset name or a :class:`goldenkit.Dataset`. ``runs``: a
    frame from :func:`runs_df` (filtered as you like), run ids / folders, or
    None for every run under ``results_dir``. ``by``: ``"slice"``, ``"split"``, or
    None for the overall line only (in a column ``group``). ``protocol``: a protocol id, ``"all"``
    to keep every protocol (each change then starts a segment), or None for
    the protocol of the most recent run.

    Columns: ``label`` (the run's, :func:`goldenkit._run_label.run_label`), ``run_id, started_at, model_id,
    prompt_sha256, agent,
    dataset_version, dataset_sha256, protocol, segment, version_change``, the ``by`` column, ``n, k``, the
    metric, ``ci_low, ci_high``. ``df.attrs["excluded"]`` counts the runs of
    the dataset left out for another protocol.

    >>> t = trend("support-agent", by="slice")                         # doctest: +SKIP
    >>> t[t.slice == "refunds"][["started_at", "pass_rate", "ci_low"]]  # doctest: +SKIP
    """
    if metric not in METRICS:
        raise InputError(f"trend: unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    name = str(getattr(dataset, "name", dataset))
    df = _candidates(name, runs, results_dir, rule)
    if protocol is None and len(df):
        protocol = str(df.sort_values(["started_at", "run_id"]).iloc[-1]["protocol"])
    chosen = df if protocol in (None, "all") else df[df["protocol"] == protocol]
    excluded = len(df) - len(chosen)
    chosen = _segments(chosen)
    label = by or "group"
    cols = [*TREND_COLUMNS, label, "n", "k", metric, "ci_low", "ci_high"]
    if len(chosen):
        out = _lines(chosen, by, metric, rule).rename(columns={"group": label})[cols]
    else:
        out = pd.DataFrame(columns=cols)
    out.attrs["excluded"] = excluded
    out.attrs["protocol"] = protocol
    return out


FAILURE_COUNT_COLUMNS = ("row_id", "slice", "runs", "failed", "share", "last_failed_run", "last_response")


def failure_counts(runs: pd.DataFrame, *, rule: str = "majority", min_share: float = 0.0) -> pd.DataFrame:
    """In how many of the given runs (a frame from :func:`runs_df`) each row failed, most often first.

    Per row: ``runs`` in which it was graded (collapsed PASS or FAIL), ``failed``
    how many of those it FAILed, ``share = failed / runs``, and the response of a
    FAIL repeat in the latest run it failed in (``last_failed_run``,
    ``last_response``). ``min_share`` keeps rows whose share exceeds it (0.5:
    "failed in more than half of the runs"). Rows that never failed are left out.
    (One line per failing row of one run, with its reasons, is
    :func:`goldenkit.audit.failing_rows`.)
    """
    graded: dict[str, int] = {}
    failed: dict[str, int] = {}
    last: dict[str, tuple[str, str, Any]] = {}
    for _, run_row in runs.sort_values(["started_at", "run_id"], kind="stable").iterrows():
        out = read_run(run_row["path"]).outcomes(columns=["row_id", "slice", "repeat", "verdict", "response"])
        rows = collapse_repeats(out, rule)
        fail_response = out[out["verdict"] == "FAIL"].groupby("row_id", sort=False)["response"].first()
        for rid, sl, verdict in zip(rows["row_id"], rows["slice"], rows["verdict"].astype(str), strict=True):
            if verdict not in ("PASS", "FAIL"):
                continue
            graded[rid] = graded.get(rid, 0) + 1
            if verdict == "FAIL":
                failed[rid] = failed.get(rid, 0) + 1
                last[rid] = (str(sl), str(run_row["run_id"]), fail_response.get(rid))
    recs = [
        (rid, last[rid][0], graded[rid], f, f / graded[rid], last[rid][1], last[rid][2])
        for rid, f in failed.items()
        if f / graded[rid] > min_share
    ]
    df = pd.DataFrame(recs, columns=list(FAILURE_COUNT_COLUMNS))
    return df.sort_values(["failed", "share", "row_id"], ascending=[False, False, True], kind="stable").reset_index(
        drop=True
    )


publish(globals())
