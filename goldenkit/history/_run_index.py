"""Every run folder and committed baseline as one row of a DataFrame (:func:`runs_df`).

A run folder is read as the results store documents it (``run.json``, then
``outcomes.parquet`` when the run is complete, else ``outcomes.jsonl`` with the
last record per row x repeat winning). Only ``row_id, repeat, verdict`` are read
to count the outcomes and collapse the repeats (:func:`goldenkit.stats.collapse_arrays`,
one call over every run at once); the pass rate is over collapsed rows with a
Wilson interval (:func:`goldenkit.stats.wilson_ci`), as everywhere in goldenkit.

A folder that cannot be read is a row too, with ``state = "corrupt"`` and the
reason in ``problem`` (``run.json: invalid JSON ...``, ``outcomes.jsonl:17: invalid
JSON in outcome line``); the index never stops at one bad folder.

Incremental: the summary of each folder is kept in ``<results_dir>/.goldenkit-index.json``
under a fingerprint of its files (size and modification time of run.json,
outcomes.jsonl and outcomes.parquet). A folder whose fingerprint is unchanged is
not read again; a resumed or rewritten run is. When the cache cannot be written
(a read-only folder) the index is simply computed each time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from goldenkit._protocol_key import protocol_key, protocol_sha256
from goldenkit._registry import publish
from goldenkit._run_label import run_label
from goldenkit.errors import GoldenkitError, ResultsError
from goldenkit.results import LATEST, iter_jsonl, latest_per_pair, read_run
from goldenkit.schema import INVALID, OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE, SCHEMA_VERSION
from goldenkit.stats import collapse_arrays, parse_rule, verdict_codes, wilson_ci

__all__ = ["CACHE_FILE", "PROTOCOL_KEYS", "RUN_COLUMNS", "Index", "fingerprint", "protocol_id", "runs_df", "scan"]

CACHE_FILE = ".goldenkit-index.json"

#: Kept for one release: the fields the history's protocol id was once built from. The id is now the
#: protocol key's (:func:`goldenkit.compare.protocol_key`), plus the shard (a shard's rows are a part).
PROTOCOL_KEYS = ("repeats", "graders", "judge_version", "simulator_version", "include_red", "sample", "shard")

#: Columns of :func:`runs_df`, in order.
RUN_COLUMNS = (
    "kind",
    "label",
    "run_id",
    "name",
    "dataset_name",
    "dataset_version",
    "dataset_sha256",
    "model_id",
    "git_commit",
    "prompt_sha256",
    "artifacts",
    "judge_version",
    "simulator_version",
    "graders",
    "protocol",
    "mode",
    "repeats",
    "sample",
    "benchmark",
    "started_at",
    "ended_at",
    "saved_at",
    "validity",
    "invalid_reason",
    "complete",
    "invocations",
    "expected",
    "outcomes",
    "pass",
    "fail",
    "error",
    "skipped",
    "rows",
    "n",
    "k",
    "pass_rate",
    "ci_low",
    "ci_high",
    "error_rate",
    "state",
    "problem",
    "source",
    "path",
)
_TIMES = ("started_at", "ended_at", "saved_at")
_LIGHT = ["row_id", "repeat", "verdict"]
_CODES = ("PASS", "FAIL", "ERROR", "SKIPPED")


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def protocol_id(manifest: Mapping[str, Any], rule: str | None = None) -> str:
    """A short id of a run's protocol key (:func:`goldenkit.compare.protocol_key` under ``rule``) without
    its dataset, and its shard: equal ids and an equal dataset hash, comparable runs (a trend follows one
    protocol across dataset versions)."""
    key = {k: v for k, v in protocol_key(manifest, rule=rule).items() if k != "dataset"}
    return protocol_sha256({"protocol": key, "shard": manifest.get("shard")})[:12]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _benchmark(man: Mapping[str, Any]) -> str | None:
    """The run prefix ``goldenkit benchmark`` recorded (``config.extra.benchmark``), else None."""
    config = _dict(man.get("config"))
    prefix = _dict(config.get("extra")).get("benchmark", config.get("benchmark"))
    return None if prefix is None or prefix == "" else str(prefix)


def _key_columns(man: Mapping[str, Any]) -> dict[str, Any]:
    """The run-key columns of a manifest (a run.json, or the ``run`` part of a baseline)."""
    ds, av = _dict(man.get("dataset")), _dict(man.get("agent_version"))
    sim = man.get("simulator_version")
    invocations = _dict(man.get("timings")).get("invocations") or []
    return {
        "label": run_label(man),
        "run_id": None if man.get("run_id") is None else str(man.get("run_id")),
        "dataset_name": ds.get("name"),
        "dataset_version": None if ds.get("version") is None else str(ds.get("version")),
        "dataset_sha256": ds.get("sha256"),
        "model_id": av.get("model_id"),
        "git_commit": av.get("git_commit"),
        "prompt_sha256": av.get("prompt_sha256"),
        "artifacts": av.get("artifacts_sha256"),
        "judge_version": man.get("judge_version"),
        "simulator_version": sim if sim is None or isinstance(sim, str) else _json_text(sim),
        "graders": _json_text(man.get("graders")),
        "protocol": protocol_id(man),
        "mode": man.get("mode"),
        "repeats": man.get("repeats"),
        "sample": _json_text(man.get("sample")),
        "benchmark": _benchmark(man),
        "started_at": man.get("started_at"),
        "ended_at": man.get("ended_at"),
        "validity": man.get("validity"),
        "invalid_reason": man.get("invalid_reason"),
        "complete": bool(man.get("complete")),
        "invocations": len(invocations) or None,
        "expected": _dict(man.get("counts")).get("expected"),
    }


def fingerprint(folder: Path) -> list[Any]:
    """``[size, mtime_ns]`` (or None) of run.json, outcomes.jsonl and outcomes.parquet: changes when the run does."""
    out: list[Any] = []
    for name in (RUN_FILE, OUTCOMES_JSONL, OUTCOMES_PARQUET):
        try:
            st = os.stat(folder / name)
        except OSError:
            out.append(None)
        else:
            out.append([st.st_size, st.st_mtime_ns])
    return out


@dataclass
class _Folder:
    """What reading one run folder gave: its row (without the counts) and its light outcome table."""

    row: dict[str, Any]
    table: pa.Table | None = None
    schema: str | None = None


def _light_jsonl(path: Path) -> pa.Table:
    recs = latest_per_pair(iter_jsonl(path))
    cols = {c: [r.get(c) for r in recs] for c in _LIGHT}
    return pa.table(
        {"row_id": pa.array(cols["row_id"], pa.string()), "repeat": cols["repeat"], "verdict": cols["verdict"]}
    )


def _read_folder(folder: Path) -> _Folder:
    """Read one run folder's manifest and light outcomes; a problem becomes ``state = "corrupt"``."""
    row: dict[str, Any] = {"kind": "run", "path": str(folder), "run_id": folder.name, "source": None}
    if not (folder / RUN_FILE).exists():
        return _Folder(
            {**row, "state": "corrupt", "problem": f"{folder / OUTCOMES_JSONL}: outcomes without a {RUN_FILE}"}
        )
    try:
        run = read_run(folder)
    except GoldenkitError as exc:
        return _Folder({**row, "state": "corrupt", "problem": str(exc)})
    except (OSError, UnicodeDecodeError) as exc:
        return _Folder({**row, "state": "corrupt", "problem": f"{folder / RUN_FILE}: unreadable: {exc}"})
    row.update(_key_columns(run.manifest))
    try:
        if run.complete:
            pf = pq.ParquetFile(folder / OUTCOMES_PARQUET)
            schema = hashlib.sha256(str(pf.schema_arrow).encode()).hexdigest()[:16]
            return _Folder({**row, "source": "parquet"}, pf.read(columns=_LIGHT), schema)
        if (folder / OUTCOMES_JSONL).exists():
            return _Folder({**row, "source": "jsonl"}, _light_jsonl(folder / OUTCOMES_JSONL))
    except GoldenkitError as exc:
        return _Folder({**row, "state": "corrupt", "problem": str(exc)})
    except (OSError, ValueError, pa.ArrowException) as exc:
        name = OUTCOMES_PARQUET if run.complete else OUTCOMES_JSONL
        return _Folder({**row, "state": "corrupt", "problem": f"{folder / name}: unreadable: {exc}"})
    return _Folder(row, pa.table({"row_id": pa.array([], pa.string()), "repeat": [], "verdict": []}))


def _summarize(tables: Sequence[pa.Table], rule: str) -> list[dict[str, Any]]:
    """Counts, collapsed pass rate and Wilson interval of each light outcome table, in one collapse."""
    sizes = np.array([t.num_rows for t in tables], dtype=np.int64)
    run_of = np.repeat(np.arange(len(tables), dtype=np.int64), sizes)

    def column(name: str) -> np.ndarray:
        parts = [t.column(name).to_numpy(zero_copy_only=False) for t in tables]
        return np.concatenate(parts) if parts else np.array([], dtype=object)

    ids = column("row_id")
    id_codes, id_names = pd.factorize(ids)
    if id_codes.size and id_codes.min() < 0:
        raise ResultsError("an outcome has no row_id")
    width = max(len(id_names), 1)
    pair_codes, pairs = pd.factorize(run_of * width + id_codes)
    verdicts = verdict_codes(pd.Series(column("verdict"), dtype=object), ids)
    repeats = pd.to_numeric(pd.Series(column("repeat")), errors="coerce").fillna(0).to_numpy(np.int64)
    names = np.asarray(id_names, dtype=object)[np.asarray(pairs, dtype=np.int64) % width] if len(pairs) else pairs
    collapsed = collapse_arrays(np.asarray(names), pair_codes, verdicts, rule, repeats=repeats)
    row_run = np.asarray(pairs, dtype=np.int64) // width
    rv = verdict_codes(collapsed["verdict"])
    m = len(tables)
    rows = np.bincount(row_run, minlength=m)
    n = np.bincount(row_run, weights=(rv <= 1), minlength=m).astype(np.int64)
    k = np.bincount(row_run, weights=(rv == 0), minlength=m).astype(np.int64)
    att = np.bincount(run_of * 4 + verdicts, minlength=m * 4).reshape(m, 4)
    lo, hi = wilson_ci(k, n)
    out = []
    for i in range(m):
        total = int(sizes[i])
        rec: dict[str, Any] = {"outcomes": total, "rows": int(rows[i]), "n": int(n[i]), "k": int(k[i])}
        rec.update({c.lower(): int(att[i, j]) for j, c in enumerate(_CODES)})
        rec["pass_rate"] = float(k[i] / n[i]) if n[i] else None
        rec["ci_low"] = None if np.isnan(lo[i]) else float(lo[i])
        rec["ci_high"] = None if np.isnan(hi[i]) else float(hi[i])
        rec["error_rate"] = float(att[i, 2] / total) if total else None
        out.append(rec)
    return out


def _summaries(tables: Sequence[pa.Table], rule: str) -> list[dict[str, Any]]:
    """:func:`_summarize`, and run by run when one table is bad (its problem is kept, the others counted)."""
    try:
        return _summarize(tables, rule)
    except GoldenkitError:
        if len(tables) == 1:
            raise
    out: list[dict[str, Any]] = []
    for t in tables:
        try:
            out.extend(_summarize([t], rule))
        except GoldenkitError as exc:
            out.append({"state": "corrupt", "problem": f"outcomes: {exc}"})
    return out


def _state(row: dict[str, Any]) -> tuple[str, str | None]:
    """ok, invalid, incomplete or corrupt, and why (None when ok)."""
    if row.get("state") == "corrupt":
        return "corrupt", row.get("problem")
    if row.get("validity") == INVALID:
        return "invalid", row.get("invalid_reason") or "INVALID"
    if not row.get("complete"):
        done, expected = row.get("outcomes") or 0, row.get("expected")
        of = f" of {expected}" if expected else ""
        return (
            "incomplete",
            f"incomplete: {done}{of} outcomes (in progress, or resume it with --run-id {row['run_id']})",
        )
    if row.get("source") != "parquet":
        return "incomplete", f"complete in {RUN_FILE} but {OUTCOMES_PARQUET} is missing"
    if row.get("validity") is None:
        return "incomplete", "no validity recorded"
    return "ok", None


# --------------------------------------------------------------------------- the cache


def _load_cache(path: Path, rule: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    ok = (
        isinstance(data, dict)
        and data.get("schema_version") == SCHEMA_VERSION
        and data.get("rule") == rule
        and data.get("columns") == list(RUN_COLUMNS)  # a cache from before a column was added is stale
    )
    runs = data.get("runs") if ok else None
    return runs if isinstance(runs, dict) else {}


def _save_cache(path: Path, rule: str, runs: dict[str, Any]) -> None:
    """Write the cache atomically; a folder that cannot be written keeps no cache (and loses nothing)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        text = json.dumps(
            {"schema_version": SCHEMA_VERSION, "rule": rule, "columns": list(RUN_COLUMNS), "runs": runs}, default=str
        )
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- scanning


@dataclass
class Index:
    """The rows of every run and baseline, and each complete run's Parquet schema id (for the SQL views)."""

    rows: list[dict[str, Any]]
    schemas: dict[str, str]

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows, columns=list(RUN_COLUMNS))
        for c in _TIMES:
            df[c] = pd.to_datetime(df[c], utc=True, errors="coerce", format="ISO8601")
        for c in (
            "repeats",
            "invocations",
            "expected",
            "outcomes",
            "pass",
            "fail",
            "error",
            "skipped",
            "rows",
            "n",
            "k",
        ):
            df[c] = df[c].astype("Int64")
        for c in ("pass_rate", "ci_low", "ci_high", "error_rate"):
            df[c] = df[c].astype("float64")
        df["complete"] = df["complete"].astype("boolean")
        return df


def _run_folders(results_dir: Path) -> list[Path]:
    """Every non-hidden folder under ``results_dir`` holding any of the run files, by name.

    The ``latest`` pointer (a link to the newest run, :func:`goldenkit.results.update_latest`)
    is not a run of its own and is left out.
    """
    if not results_dir.is_dir():
        return []
    out = []
    for entry in sorted(os.scandir(results_dir), key=lambda e: e.name):
        if entry.name.startswith(".") or entry.name == LATEST or not entry.is_dir():
            continue
        if any(os.path.exists(os.path.join(entry.path, f)) for f in (RUN_FILE, OUTCOMES_JSONL, OUTCOMES_PARQUET)):
            out.append(Path(entry.path))
    return out


def _index_runs(folders: Iterable[Path], rule: str, cache: dict[str, Any]) -> dict[str, Any]:
    """Cached entries ``{folder: {fingerprint, row, schema}}`` for ``folders``, reading only the changed ones."""
    fresh: dict[str, Any] = {}
    todo: list[tuple[str, list[Any], _Folder]] = []
    for folder in folders:
        key, fp = str(folder), fingerprint(folder)
        hit = cache.get(key)
        if isinstance(hit, dict) and hit.get("fingerprint") == fp:
            fresh[key] = hit
            continue
        todo.append((key, fp, _read_folder(folder)))
    readable = [t for t in todo if t[2].table is not None]
    for (_, _, got), summary in zip(readable, _summaries([t[2].table for t in readable], rule), strict=True):
        got.row.update(summary)
    for key, fp, got in todo:
        row = {c: got.row.get(c) for c in RUN_COLUMNS}
        row["state"], row["problem"] = _state(got.row)
        fresh[key] = {"fingerprint": fp, "row": row, "schema": got.schema}
    return fresh


def _baseline_rows(baselines_dir: Path) -> list[dict[str, Any]]:
    """One row per committed baseline (``baselines/NAME.json``), its numbers from the saved summary."""
    out: list[dict[str, Any]] = []
    for p in sorted(baselines_dir.glob("*.json")) if baselines_dir.is_dir() else []:
        row: dict[str, Any] = {"kind": "baseline", "name": p.stem, "path": str(p), "source": "baseline"}
        try:
            info = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            out.append({**row, "state": "corrupt", "problem": f"{p}: invalid JSON: {exc}"})
            continue
        if not isinstance(info, dict) or info.get("kind") != "goldenkit.baseline":
            continue  # another JSON file beside the baselines
        man, s = _dict(info.get("run")), _dict(info.get("summary"))
        keyed = {**man, "rule": info.get("rule")}  # its rows were collapsed under the rule it was saved with
        row.update(_key_columns(keyed), name=str(info.get("name", p.stem)), saved_at=info.get("saved_at"))
        n, k = s.get("n"), s.get("k")
        counts = _dict(man.get("counts"))
        row.update({c.lower(): counts.get(c) for c in _CODES}, outcomes=counts.get("total"), rows=s.get("rows"))
        if isinstance(n, int) and isinstance(k, int) and 0 <= k <= n:
            lo, hi = wilson_ci(k, n)
            row.update(
                n=n, k=k, pass_rate=k / n if n else None, ci_low=None if n == 0 else lo, ci_high=None if n == 0 else hi
            )
        row["error_rate"] = man.get("error_rate")
        missing = not p.with_suffix(".parquet").is_file()
        row["state"] = "corrupt" if missing else "ok"
        row["problem"] = f"{p.with_suffix('.parquet')}: missing" if missing else None
        out.append({c: row.get(c) for c in RUN_COLUMNS})
    return out


def scan(
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] | None = "baselines",
    *,
    rule: str = "majority",
    folders: Sequence[str | os.PathLike[str]] | None = None,
    cache: bool = True,
) -> Index:
    """Index the run folders under ``results_dir`` (or exactly ``folders``) and the baselines."""
    parse_rule(rule)
    root = Path(results_dir)
    cache_path = root / CACHE_FILE
    cached = _load_cache(cache_path, rule) if cache else {}
    chosen = [Path(f) for f in folders] if folders is not None else _run_folders(root)
    entries = _index_runs(chosen, rule, cached)
    if cache and folders is None and root.is_dir() and entries != cached:
        _save_cache(cache_path, rule, entries)
    rows = [e["row"] for e in entries.values()]
    schemas = {e["row"]["path"]: e["schema"] for e in entries.values() if e.get("schema")}
    if baselines_dir is not None:
        rows.extend(_baseline_rows(Path(baselines_dir)))
    return Index(rows=rows, schemas=schemas)


def runs_df(
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] | None = "baselines",
    *,
    rule: str = "majority",
    cache: bool = True,
) -> pd.DataFrame:
    """One row per run folder under ``results_dir`` and per committed baseline in ``baselines_dir``.

    Columns (:data:`RUN_COLUMNS`): ``kind`` (run | baseline), ``label`` (what people read first: the run's
    ``--label``, else derived from its model and settings or its agent, :func:`goldenkit._run_label.run_label`;
    a baseline's is its run's), ``run_id``, ``name``
    (the baseline's), the dataset (``dataset_name, dataset_version, dataset_sha256``),
    the agent (``model_id, git_commit, prompt_sha256``, ``artifacts``: the artifacts'
    sha256 when recorded), ``judge_version``, ``simulator_version``, ``graders`` (JSON),
    ``protocol`` (:func:`protocol_id`), ``mode``, ``repeats``, ``sample`` (JSON),
    ``benchmark`` (the run prefix of ``goldenkit benchmark``, else None),
    ``started_at, ended_at, saved_at`` (UTC timestamps), ``validity,
    invalid_reason, complete``, ``invocations`` (more than 1: resumed),
    ``expected`` and ``outcomes`` (row x repeat records), attempt counts
    ``pass, fail, error, skipped``, ``rows`` and, after collapsing repeats with
    ``rule``, ``n`` graded rows, ``k`` passed, ``pass_rate`` with its Wilson
    interval ``ci_low, ci_high``, ``error_rate`` (ERROR outcomes / outcomes),
    ``state`` (ok | invalid | incomplete | corrupt) with ``problem`` saying why,
    ``source`` (parquet | jsonl | baseline) and ``path`` (the run folder or the
    baseline's .json).

    >>> df = runs_df("results", "baselines")                       # doctest: +SKIP
    >>> df[df.state == "ok"][["run_id", "pass_rate", "ci_low"]]    # doctest: +SKIP
    """
    return scan(results_dir, baselines_dir, rule=rule, cache=cache).frame()


publish(globals())
