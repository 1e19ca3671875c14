"""How baselines are saved, read and resolved (the package's docstring describes the layout)."""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from goldenkit._checks import check_name, check_output
from goldenkit._files import replaced_together
from goldenkit._protocol_key import protocol_key, protocol_sha256
from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import InputError, ResultsError
from goldenkit.results import read_run, sequential_line
from goldenkit.schema import ERROR, INVALID, RUN_FILE, SCHEMA_VERSION
from goldenkit.stats import collapse_repeats, parse_rule, representative_repeats, slice_table, verdict_codes

__all__ = [
    "HISTORY_FILE",
    "Baseline",
    "list_baselines",
    "read_baseline",
    "resolve_run_or_baseline",
    "save_baseline",
]

HISTORY_FILE = "history.jsonl"
_KIND = "goldenkit.baseline"
_COLLAPSED = ["row_id", "slice", "split", "tags", "attempts", "n_pass", "n_fail", "n_error", "n_skipped", "n_graded"]


@dataclass
class Baseline:
    """A saved baseline: ``name``, ``path`` (the .json), ``info`` (its dict) and ``rows``."""

    name: str
    path: Path
    info: dict[str, Any]
    rows: pd.DataFrame

    @property
    def manifest(self) -> dict[str, Any]:
        """The run key of the saved run (same keys as its run.json)."""
        return dict(self.info.get("run") or {})

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id", ""))

    @property
    def rule(self) -> str:
        """The collapse rule the rows were saved under."""
        return str(self.info.get("rule", "majority"))

    def collapsed(self) -> pd.DataFrame:
        """The per-row collapsed table (as :func:`goldenkit.stats.collapse_repeats` returns)."""
        cols = [c for c in (*_COLLAPSED, "verdict", "flaky") if c in self.rows.columns]
        return self.rows[cols]

    def details(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """row_id -> {tags, response, reasons} of the saved representative repeat of each id."""
        sub = self.rows.set_index("row_id").reindex(list(ids))
        out: dict[str, dict[str, Any]] = {}
        for rid, t, r, why in zip(ids, sub["tags"], sub["response"], sub["reasons"], strict=True):
            out[rid] = {
                "tags": [str(x) for x in t] if isinstance(t, (list, np.ndarray)) else [],
                "response": r if isinstance(r, str) else None,
                "reasons": json.loads(why) if isinstance(why, str) else {},
            }
        return out

    def __repr__(self) -> str:
        s = self.info.get("summary", {})
        return f"Baseline({self.name!r}, run={self.run_id!r}, rows={s.get('rows')}, p_hat={s.get('p_hat')})"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_name(name: str) -> None:
    """A baseline name is a name (:func:`goldenkit._checks.check_name`) without the extension of its files."""
    check_name(name, "baseline name")
    if name.endswith((".json", ".parquet")):
        raise InputError(f"baseline name {name!r} ends with a file extension; give the name alone")


def _reasons_json(graders: Any) -> str:
    if isinstance(graders, list):
        graders = dict(graders)
    out = {}
    if isinstance(graders, dict):
        for name, g in graders.items():
            if isinstance(g, dict):
                out[str(name)] = g.get("reason")
    return json.dumps(out, ensure_ascii=False, sort_keys=True)


def save_baseline(
    run: Any,
    name: str,
    *,
    baselines_dir: str | os.PathLike[str] = "baselines",
    force: bool = False,
    rule: str = "majority",
    note: str | None = None,
) -> Baseline:
    """Save ``run`` (a results Run: ``.manifest`` and ``.outcomes()``) as baseline ``name``.

    Writes ``NAME.parquet``, ``NAME.json`` and ``history.jsonl`` with a line appended to
    new files, then renames them into place (:func:`goldenkit._files.replaced_together`):
    a write that fails (a full disk) leaves the old snapshot and its history whole.
    Refuses (InputError) to overwrite without ``force``, and refuses an INVALID, incomplete or empty run, one with any
    ERROR outcome, an unmerged shard, or a sequential run (``goldenkit run --sequential``: resume it without
    ``--sequential`` to a full run first).
    """
    _check_name(name)
    parse_rule(rule)
    man, run_id = _saveable_manifest(run, name)
    d = check_output(baselines_dir, "baselines folder", folder=True)
    json_path, pq_path = d / f"{name}.json", d / f"{name}.parquet"
    existed = json_path.exists() or pq_path.exists()
    if existed and not force:
        raise InputError(f"baseline {name!r} already exists ({json_path}); use --force to overwrite")
    outcomes = _error_free_outcomes(run, name, run_id)
    collapsed = collapse_repeats(outcomes, rule)
    _check_no_holes(outcomes, collapsed, name, run_id)
    if int((verdict_codes(collapsed["verdict"]) <= 1).sum()) == 0:
        raise InputError(f"cannot save baseline {name!r}: run {run_id} has no graded row")
    rows = _baseline_rows(outcomes, collapsed)
    summary = _summary(slice_table(collapsed, rule=rule))
    saved_at = _now()
    info = {
        "schema_version": SCHEMA_VERSION,
        "kind": _KIND,
        "name": name,
        "saved_at": saved_at,
        "rule": rule,
        "note": note,
        "run": dict(man),  # the run's manifest whole: the protocol key is built from it, never from a field list
        "protocol": (protocol := protocol_key(man, rule=rule)),
        "protocol_sha256": protocol_sha256(protocol),
        "summary": summary,
    }
    d.mkdir(parents=True, exist_ok=True)
    arrow = pa.Table.from_pandas(rows, preserve_index=False)
    text = json.dumps(info, indent=2, ensure_ascii=False, default=str) + "\n"
    history = d / HISTORY_FILE
    with replaced_together(pq_path, history, json_path) as (pq_tmp, history_tmp, json_tmp):
        pq.write_table(arrow, pq_tmp, compression="zstd")
        history_tmp.write_bytes(_appended(history, _history_line(man, info, replaced=existed)))
        json_tmp.write_text(text, encoding="utf-8")  # last: the header says its rows are there
    return Baseline(name=name, path=json_path, info=info, rows=rows)


def _saveable_manifest(run: Any, name: str) -> tuple[dict[str, Any], str]:
    """The run's manifest and id, or the reason the run cannot become a baseline."""
    man = getattr(run, "manifest", None)
    if not isinstance(man, dict) or not callable(getattr(run, "outcomes", None)):
        raise InputError(f"cannot save baseline {name!r}: not a run (a baseline cannot be re-saved)")
    run_id = str(man.get("run_id", "?"))
    if man.get("validity") == INVALID:
        raise InputError(f"cannot save baseline {name!r}: run {run_id} is INVALID ({man.get('invalid_reason')})")
    if man.get("complete") is False:
        raise InputError(f"cannot save baseline {name!r}: run {run_id} is not complete")
    if (line := sequential_line(man)) is not None:  # as the gate refuses it as a baseline (side_problems)
        raise InputError(
            f"cannot save baseline {name!r}: run {run_id} is a sequential run ({line}), not a full run: "
            f"resume it without --sequential to a full run first (goldenkit run DATASET ... --run-id {run_id})"
        )
    shard = man.get("shard")
    if shard and not man.get("merged_from"):
        part = f"{shard['k']}/{shard['n']}" if isinstance(shard, dict) and {"k", "n"} <= set(shard) else shard
        raise InputError(
            f"cannot save baseline {name!r}: run {run_id} is shard {part} of a sharded run: "
            "merge its shards first (goldenkit merge), then save the merge"
        )
    return man, run_id


def _error_free_outcomes(run: Any, name: str, run_id: str) -> pd.DataFrame:
    """The outcome columns a baseline keeps; refuses a run with no outcome."""
    cols = ["row_id", "slice", "split", "tags", "repeat", "verdict", "detail", "graders", "response"]
    outcomes: pd.DataFrame = run.outcomes(columns=cols)
    if len(outcomes) == 0:
        raise InputError(f"cannot save baseline {name!r}: run {run_id} has no outcomes")
    return outcomes


def _check_no_holes(outcomes: pd.DataFrame, collapsed: pd.DataFrame, name: str, run_id: str) -> None:
    """Refuses a run whose errors leave a row without a verdict (ERROR or UNDECIDED under the rule): a
    snapshot with holes would take those rows out of every later comparison. An errored repeat whose
    row is decided whatever it would have been (P, P, E under majority) leaves no hole."""
    holes = (verdict_codes(collapsed["verdict"]) == 2).nonzero()[0]
    if len(holes):
        first = str(collapsed["row_id"].iloc[int(holes[0])])
        errors = int((outcomes["verdict"] == ERROR).sum())
        raise InputError(
            f"cannot save baseline {name!r}: run {run_id} has {len(holes)} row(s) its {errors} ERROR outcome(s) "
            f"leave without a verdict (first: row {first}); re-run the errors first (goldenkit run ... --retry-errors)"
        )


def _baseline_rows(outcomes: pd.DataFrame, collapsed: pd.DataFrame) -> pd.DataFrame:
    """The collapsed rows with each row's representative response and grader reasons."""
    reps = representative_repeats(outcomes, collapsed)
    rows = collapsed.copy()
    rows["verdict"] = rows["verdict"].astype(str)
    rows["response"] = reps["response"].to_numpy(dtype=object)
    rows["reasons"] = [_reasons_json(g) for g in reps["graders"].tolist()]
    if "tags" in rows.columns:
        rows["tags"] = [[] if t is None else [str(x) for x in t] for t in rows["tags"].tolist()]
    return rows


def _num(x: Any) -> Any:
    x = float(x)
    return None if np.isnan(x) else x


def _summary(table: pd.DataFrame) -> dict[str, Any]:
    """The overall line of a slice table and its per-slice lines, as JSON values (NaN as null)."""
    ov = table.iloc[-1]
    return {
        "rows": int(ov["rows"]),
        "n": int(ov["n"]),
        "k": int(ov["k"]),
        "p_hat": _num(ov["p_hat"]),
        "ci_low": _num(ov["ci_low"]),
        "ci_high": _num(ov["ci_high"]),
        "flaky": int(ov["flaky"]),
        "slices": [
            {
                k: (
                    _num(v)
                    if isinstance(v, (float, np.floating))
                    else int(v)
                    if isinstance(v, (int, np.integer))
                    else v
                )
                for k, v in rec.items()
            }
            for rec in table.iloc[:-1].to_dict(orient="records")
        ],
    }


def _history_line(man: dict[str, Any], info: dict[str, Any], *, replaced: bool) -> dict[str, Any]:
    """The history.jsonl line of one save."""
    dataset = man.get("dataset") or {}
    summary = info["summary"]
    return {
        "schema_version": SCHEMA_VERSION,
        "saved_at": info["saved_at"],
        "name": info["name"],
        "run_id": str(man.get("run_id", "?")),
        "dataset_name": dataset.get("name"),
        "dataset_version": dataset.get("version"),
        "dataset_sha256": dataset.get("sha256"),
        "agent_version": man.get("agent_version"),
        "mode": man.get("mode"),
        "rule": info["rule"],
        "rows": summary["rows"],
        "n": summary["n"],
        "k": summary["k"],
        "p_hat": summary["p_hat"],
        "ci_low": summary["ci_low"],
        "ci_high": summary["ci_high"],
        "replaced": replaced,
        "note": info["note"],
    }


def _appended(history: Path, line: dict[str, Any]) -> bytes:
    """history.jsonl's bytes with ``line`` appended (the file stays append-only: its old lines are kept as
    they are; a last line without its newline gets one)."""
    old = history.read_bytes() if history.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    return old + (json.dumps(line, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def _baseline_paths(name_or_path: str | os.PathLike[str], baselines_dir: str | os.PathLike[str]) -> Path | None:
    p = Path(name_or_path)
    if p.suffix in (".json", ".parquet") and p.with_suffix(".json").is_file():
        return p.with_suffix(".json")
    cand = Path(baselines_dir) / f"{name_or_path}.json"
    return cand if cand.is_file() else None


def read_baseline(
    name_or_path: str | os.PathLike[str], baselines_dir: str | os.PathLike[str] = "baselines"
) -> Baseline:
    """Open a baseline by name (under ``baselines_dir``) or by the path of its .json file."""
    path = _baseline_paths(name_or_path, baselines_dir)
    if path is None:
        raise ResultsError(
            f"no baseline {str(name_or_path)!r} (looked for {Path(baselines_dir) / str(name_or_path)}.json)"
        )
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ResultsError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(info, dict) or info.get("kind") != _KIND or not isinstance(info.get("run"), dict):
        raise ResultsError(f"{path}: not a goldenkit baseline")
    pq_path = path.with_suffix(".parquet")
    if not pq_path.is_file():
        raise ResultsError(f"{pq_path}: missing (the per-row table of baseline {info.get('name')!r})")
    return Baseline(name=str(info.get("name", path.stem)), path=path, info=info, rows=_read_rows(pq_path))


_VERDICTS = ["PASS", "FAIL", "ERROR", "SKIPPED"]


def _read_rows(pq_path: Path) -> pd.DataFrame:
    """A baseline's per-row table, checked: readable, the columns a comparison keys on, one line per row id,
    a verdict a run can have (a snapshot edited or cut short by hand is refused, naming the row)."""
    try:
        rows = pq.read_table(pq_path).to_pandas()
    except (OSError, pa.ArrowException) as exc:
        raise ResultsError(f"{pq_path}: not a readable baseline table ({one_line(str(exc), 200)})") from None
    missing = [c for c in ("row_id", "slice", "verdict") if c not in rows.columns]
    if missing:
        raise ResultsError(f"{pq_path}: no {', '.join(missing)} column (not a goldenkit baseline table)")
    ids = rows["row_id"].astype(str)
    dup = ids[ids.duplicated()]
    if len(dup):
        raise ResultsError(f'{pq_path}: row "{dup.iloc[0]}" appears {int((ids == dup.iloc[0]).sum())} times')
    bad = rows.loc[~rows["verdict"].astype(str).isin(_VERDICTS), ["row_id", "verdict"]]
    if len(bad):
        rid, verdict = bad.iloc[0]
        raise ResultsError(f'{pq_path}: row "{rid}": verdict {verdict!r} is not one of {", ".join(_VERDICTS)}')
    if "tags" in rows.columns:
        rows["tags"] = [[] if t is None else list(t) for t in rows["tags"].tolist()]
    rows["verdict"] = pd.Categorical(rows["verdict"].astype(str), categories=_VERDICTS)
    return rows


def list_baselines(baselines_dir: str | os.PathLike[str] = "baselines") -> pd.DataFrame:
    """One line per saved baseline: name, run_id, saved_at, dataset, rows, pass rate and interval."""
    d = Path(baselines_dir)
    recs = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            info = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(info, dict) or info.get("kind") != _KIND:
            continue
        run = info.get("run") or {}
        ds = run.get("dataset") or {}
        s = info.get("summary") or {}
        recs.append(
            {
                "name": info.get("name", p.stem),
                "run_id": run.get("run_id"),
                "saved_at": info.get("saved_at"),
                "dataset": f"{ds.get('name')}@{ds.get('version')}",
                "dataset_sha256": (ds.get("sha256") or "")[:12],
                "rule": info.get("rule"),
                "rows": s.get("rows"),
                "p_hat": s.get("p_hat"),
                "ci_low": s.get("ci_low"),
                "ci_high": s.get("ci_high"),
            }
        )
    cols = ["name", "run_id", "saved_at", "dataset", "dataset_sha256", "rule", "rows", "p_hat", "ci_low", "ci_high"]
    return pd.DataFrame(recs, columns=cols)


def resolve_run_or_baseline(
    ref: str | os.PathLike[str],
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] = "baselines",
) -> Any:
    """A run folder, run id, baseline name or baseline .json path -> a Run or a Baseline.

    A name that is both a run id under ``results_dir`` and a baseline under
    ``baselines_dir`` is ambiguous (InputError): pass a path instead.
    """

    p = Path(ref)
    if (p / RUN_FILE).is_file():
        return read_run(p, results_dir)
    if p.suffix in (".json", ".parquet") and p.is_file():
        return read_baseline(p, baselines_dir)
    as_run = (Path(results_dir) / str(ref) / RUN_FILE).is_file()
    as_baseline = _baseline_paths(ref, baselines_dir) is not None
    if as_run and as_baseline:
        raise InputError(
            f"{str(ref)!r} is both a run in {results_dir}/ and a baseline in {baselines_dir}/; pass a path instead"
        )
    if as_run:
        return read_run(Path(results_dir) / str(ref), results_dir)
    if as_baseline:
        return read_baseline(ref, baselines_dir)
    raise ResultsError(f"{str(ref)!r}: no run (folder or id under {results_dir}/) and no baseline in {baselines_dir}/")


publish(globals())
