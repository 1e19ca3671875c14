"""Many runs read, checked for comparability and aligned row by row: the input of the leaderboard.

:func:`align_runs` returns an :class:`Aligned` -- every run's collapsed verdict,
passing and graded repeats per row as ``(runs x rows)`` arrays in one row
order -- or raises :class:`~goldenkit.errors.ComparisonInvalid` before any
statistic exists:

1. the protocol keys of every run (dataset sha256, repeats, grader versions,
   judge version, red rows in or out (``include_red``):
   :func:`goldenkit.comparability.comparability_differences`) are
   compared before any outcome is read;
2. the row ids of all runs are hashed together once (Arrow's dictionary
   encoding over every run's ``row_id`` column), so each run's outcomes come
   out numbered alike with no join; a run missing a row, or having one the
   others lack, is a row-set difference.

Either way the message names the odd run -- the reference is the run the most
others agree with, ties going to the first given -- and each key that differs.
Repeats collapse with :func:`goldenkit.stats.collapse_arrays` (the rule of
:func:`goldenkit.stats.collapse_repeats`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from goldenkit._protocol_key import comparability_differences
from goldenkit._registry import publish
from goldenkit.errors import ComparisonInvalid, InputError, ResultsError
from goldenkit.results import read_run
from goldenkit.stats import collapse_arrays, first_positions, parse_rule, sorted_codes, verdict_codes

__all__ = ["Aligned", "RunInput", "align_runs", "check_protocol", "run_inputs"]

_COLUMNS = ["row_id", "slice", "repeat", "verdict"]
_NOT_RECORDED = "(not recorded)"


@dataclass
class RunInput:
    """One run before collapsing: its id, model, manifest and the four outcome columns (Arrow); ``source`` is
    where they came from (the :class:`~goldenkit.results.Run` or the outcome DataFrame), for its other columns."""

    run_id: str
    model: str
    manifest: Mapping[str, Any]
    table: pa.Table
    repeats: int
    source: Any = None


@dataclass
class Aligned:
    """Every run's collapsed rows in one row order: ``(runs x rows)`` arrays (see the module docstring)."""

    runs: list[RunInput]
    row_ids: np.ndarray
    slices: np.ndarray  # slice code per row (into slice_names)
    slice_names: list[str]
    verdict: np.ndarray  # int8 codes PASS 0, FAIL 1, ERROR 2, SKIPPED 3
    n_pass: np.ndarray
    n_graded: np.ndarray

    @property
    def run_ids(self) -> list[str]:
        return [r.run_id for r in self.runs]

    @property
    def models(self) -> list[str]:
        return [r.model for r in self.runs]


def _model_of(manifest: Mapping[str, Any], fallback: str) -> str:
    av = manifest.get("agent_version")
    model = av.get("model_id") if isinstance(av, dict) else None
    return str(model) if model else fallback


def _frame_input(run_id: str, df: pd.DataFrame) -> RunInput:
    """A bare outcome DataFrame: its manifest is what its columns record."""
    for col in ("row_id", "verdict"):
        if col not in df.columns:
            raise ResultsError(f"outcomes of {run_id!r} have no {col!r} column")

    def one(col: str) -> Any:
        if col not in df.columns:
            return _NOT_RECORDED
        vals = sorted(pd.unique(df[col].dropna().astype(str)))
        return ",".join(vals) if vals else None

    repeats = int(df["repeat"].max()) + 1 if "repeat" in df.columns and len(df) else 1
    model = run_id
    if "agent_version" in df.columns and len(df) and isinstance(df["agent_version"].iloc[0], dict):
        model = _model_of({"agent_version": df["agent_version"].iloc[0]}, run_id)
    manifest = {"dataset": {"sha256": one("dataset_sha256")}, "repeats": repeats, "judge_version": one("judge_version")}
    table = pa.table(
        {
            "row_id": pa.array(df["row_id"].astype(str).tolist(), type=pa.string()),
            "slice": pa.array(df["slice"].astype(str).tolist() if "slice" in df.columns else [""] * len(df)),
            "repeat": pa.array(np.asarray(df["repeat"] if "repeat" in df.columns else np.zeros(len(df)), np.int64)),
            "verdict": pa.array(df["verdict"].astype(str).tolist(), type=pa.string()),
        }
    )
    return RunInput(run_id, model, manifest, table, repeats, df)


def run_inputs(runs: Any, results_dir: str | os.PathLike[str] = "results", rule: str = "majority") -> list[RunInput]:
    """The runs to rank, their protocol keys checked before any outcome is read.

    ``runs``: a sequence of :class:`~goldenkit.results.Run` objects, run folders
    or run ids under ``results_dir``; a mapping ``{run_id: outcomes DataFrame}``;
    or one outcome DataFrame with a ``run_id`` column (e.g. from
    :func:`goldenkit.results.outcomes_df`).
    """
    if isinstance(runs, pd.DataFrame):
        if "run_id" not in runs.columns:
            raise ResultsError("leaderboard: an outcome DataFrame needs a run_id column")
        runs = {str(rid): g for rid, g in runs.groupby("run_id", sort=True, observed=True)}
    if isinstance(runs, Mapping):
        inputs = [_frame_input(str(rid), df) for rid, df in runs.items()]
        check_protocol(inputs, rule)
    else:
        if isinstance(runs, (str, os.PathLike)) or not isinstance(runs, Sequence):
            raise InputError("leaderboard: pass a list of runs (Run objects, run folders or run ids)")
        opened = [read_run(r, results_dir) for r in runs]
        heads = [RunInput(r.run_id, _model_of(r.manifest, r.run_id), r.manifest, pa.table({}), 1) for r in opened]
        check_protocol(heads, rule)
        inputs = [
            RunInput(h.run_id, h.model, h.manifest, r.table(_COLUMNS), _repeats(r.manifest), r)
            for h, r in zip(heads, opened, strict=True)
        ]
    if not inputs:
        raise InputError("leaderboard: no run given")
    ids = [r.run_id for r in inputs]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(f"leaderboard: run {dup[0]!r} is given twice")
    return inputs


def _repeats(manifest: Mapping[str, Any]) -> int:
    r = manifest.get("repeats")
    return int(r) if isinstance(r, int) and r >= 1 else 1


def _named(line: str, ref: str, other: str) -> str:
    """A comparability line with "base"/"candidate" replaced by the two run ids."""
    for old, new in (
        ("base and candidate", f"{ref} and {other}"),
        ("in base", f"in {ref}"),
        ("in candidate", f"in {other}"),
    ):
        line = line.replace(old, new)
    return line


def _raise(problems: list[str]) -> None:
    if problems:
        raise ComparisonInvalid("runs not comparable: " + "; ".join(problems), problems)


def check_protocol(runs: Sequence[RunInput], rule: str = "majority") -> None:
    """Every run against the reference run (the one the most others agree with) on the protocol keys."""

    def diffs(a: RunInput, b: RunInput) -> list[str]:
        return comparability_differences(a.manifest, b.manifest, base_rule=rule, cand_rule=rule)

    if len(runs) < 2:
        return
    agree = [sum(not diffs(a, b) for b in runs if b is not a) for a in runs]
    ref = runs[int(np.argmax(agree))]
    _raise(
        [
            f"run {r.run_id} vs {ref.run_id}: {_named(d, ref.run_id, r.run_id)}"
            for r in runs
            if r is not ref
            for d in diffs(ref, r)
        ]
    )


def _row_set(runs: Sequence[RunInput], names: np.ndarray, present: np.ndarray, rule: str) -> None:
    """Raise naming each run whose row set differs from the most common one."""
    keys = [p.tobytes() for p in present]
    ref_i = max(range(len(runs)), key=lambda i: (keys.count(keys[i]), -i))
    ref = runs[ref_i]
    problems = []
    for i, r in enumerate(runs):
        if keys[i] != keys[ref_i]:
            ds = comparability_differences(
                ref.manifest,
                r.manifest,
                base_rule=rule,
                cand_rule=rule,
                base_ids=names[present[ref_i]],
                cand_ids=names[present[i]],
            )
            problems += [f"run {r.run_id} vs {ref.run_id}: {_named(d, ref.run_id, r.run_id)}" for d in ds]
    _raise(problems)


def _verdicts(col: pa.ChunkedArray, run_id: str) -> np.ndarray:
    enc = col.combine_chunks().dictionary_encode()
    codes = np.asarray(enc.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    cats = pd.Categorical.from_codes(codes, categories=[str(v) for v in enc.dictionary.to_pylist()])
    try:
        return verdict_codes(pd.Series(cats))
    except ResultsError as exc:
        raise ResultsError(f"run {run_id}: {exc}") from None


def align_runs(runs: Sequence[RunInput], rule: str = "majority") -> Aligned:
    """Collapse every run and put all of them in one row order (see the module docstring)."""
    parse_rule(rule)
    runs = sorted(runs, key=lambda r: r.run_id)
    ids = pa.concat_arrays([r.table.column("row_id").combine_chunks().cast(pa.large_string()) for r in runs])
    if ids.null_count:
        raise ResultsError("outcomes have a missing row_id")
    enc = ids.dictionary_encode()
    codes = np.asarray(enc.indices.to_numpy(), dtype=np.int64)
    names = np.asarray(enc.dictionary.to_numpy(zero_copy_only=False), dtype=object)
    bounds = np.cumsum([0, *(r.table.num_rows for r in runs)])
    per_run = [codes[bounds[i] : bounds[i + 1]] for i in range(len(runs))]
    present = np.array([np.bincount(c, minlength=len(names)) > 0 for c in per_run]).reshape(len(runs), len(names))
    if not present.all():
        _row_set(runs, names, present, rule)
    shape = (len(runs), len(names))
    verdict, n_pass, n_graded = np.empty(shape, np.int8), np.empty(shape, np.int64), np.empty(shape, np.int64)
    for i, (r, c) in enumerate(zip(runs, per_run, strict=True)):
        reps = np.asarray(r.table.column("repeat").combine_chunks().fill_null(0).to_numpy(), dtype=np.int64)
        col = collapse_arrays(names, c, _verdicts(r.table.column("verdict"), r.run_id), rule, repeats=reps)
        verdict[i] = verdict_codes(col["verdict"])
        n_pass[i] = col["n_pass"].to_numpy(np.int64)
        n_graded[i] = col["n_graded"].to_numpy(np.int64)
    first = runs[0].table.column("slice").take(pa.array(first_positions(per_run[0], len(names))))
    s_codes, s_names = sorted_codes(pd.Series(first.to_pandas()).fillna(""))
    return Aligned(list(runs), names, s_codes, s_names, verdict, n_pass, n_graded)


publish(globals())
