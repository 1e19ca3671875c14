"""Build the static site: :func:`build_site` (what ``goldenkit pages -o site/`` runs).

::

    site/
        index.html              every run and baseline: sortable, filterable (inline script)
        runs/<run>/report.html  each run's report; compare.html against its baseline
        datasets.html           the datasets, each with datasets/<name>.html: trends per slice
        leaderboards/<prefix>.html  each group of benchmark runs ranked (goldenkit.pages._leaderboards)
        baselines.html          the committed baselines and baselines/history.jsonl
        .goldenkit-pages.json   what the last build used (fingerprints), for the next one

Reports: a run folder's own ``report.html`` / ``compare.html`` (written by
``goldenkit report``) is copied when it is newer than the run's files; otherwise
the page is made by :func:`goldenkit.report.layout_page` with the parameters and
title ``goldenkit report`` gives the notebooks: the same report functions, in the
order the notebooks call them, their results in one template, no kernel and no
notebook (``render=False`` skips it); a build of many pages renders them on one
worker process per core. A run's baseline for compare.html is the
latest committed baseline of the same dataset hash and protocol (and another run
id); compare pages are made for runs whose state is ok.

Incremental: a page is kept when the fingerprint of what it was made from (the
run folder, the baseline, the dataset's runs) is the one recorded by the last
build. A page that cannot be rendered is listed in the result's ``failures``
and on the index; everything else is still written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._files import disk_state
from goldenkit._protocol_key import protocol_key
from goldenkit._registry import publish
from goldenkit._run_label import labelled
from goldenkit._scrub import current_scope, secrets_in_use
from goldenkit.baselines import resolve_run_or_baseline
from goldenkit.errors import GoldenkitError, InputError
from goldenkit.history import baseline_history_df, failure_counts, fingerprint, scan, trend
from goldenkit.pages._html import page, slug, write_page
from goldenkit.pages._leaderboards import leaderboard_sections
from goldenkit.pages._plots import trend_svg
from goldenkit.pages._views import (
    DatasetSection,
    baseline_save_hint,
    baselines_page,
    dataset_href,
    dataset_page,
    datasets_page,
    index_page,
)
from goldenkit.results import read_run, run_totals_of, totals_text
from goldenkit.schema import OUTCOMES_JSONL, OUTCOMES_PARQUET, RUN_FILE
from goldenkit.stats import OVERALL

__all__ = ["STATE_FILE", "SiteResult", "build_site"]

STATE_FILE = ".goldenkit-pages.json"
_MAX_PROTOCOLS = 3  # trend sections per dataset page, most recent protocols first
#: fewer run pages than this are rendered in this process: a worker process costs about 3 s of CPU to start
#: and import the statistics stack, a page about 0.1 s (most of it the report's statistics)
POOL_MIN = 24


@dataclass
class SiteResult:
    """What a build wrote: the index, pages ``rendered`` / ``copied`` / ``reused``, and ``failures``."""

    path: Path
    index: Path
    rendered: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass
class _Build:
    out: Path
    results_dir: Path
    baselines_dir: Path
    title: str
    render: bool
    rule: str
    old: dict[str, Any]
    result: SiteResult
    processes: int | None = 1
    new: dict[str, Any] = field(default_factory=lambda: {"runs": {}, "datasets": {}})
    #: pages to render, in one batch: (run folder, kind, site path, fingerprint, page, parameters, title)
    pending: list[tuple[str, str, str, str, str, dict[str, Any], str]] = field(default_factory=list)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


_Make = tuple[str, dict[str, Any], str]  # a page to render: its layout's name, its parameters, its title


def _newest_input(folder: Path) -> int:
    """The latest modification time (ns) of the run's run.json, outcomes.jsonl and outcomes.parquet (0: none)."""
    states = [disk_state(folder / n) for n in (RUN_FILE, OUTCOMES_JSONL, OUTCOMES_PARQUET)]
    return max((state[2] for state in states if state is not None), default=0)


def _page(b: _Build, kind: str, run: dict[str, Any], key: str, make: _Make | None) -> str | None:
    """One run page (report or compare): reused or copied from the run folder (its site path), or queued to be
    rendered (``make``: layout, parameters, title; None until :func:`_render_pending` has rendered it)."""
    folder = Path(run["path"])
    rel = f"runs/{folder.name}/{kind}.html"
    dest = b.out / rel
    old = (b.old.get("runs") or {}).get(run["path"]) or {}
    own = folder / f"{kind}.html"
    if own.is_file() and own.stat().st_mtime_ns >= _newest_input(folder):
        if old.get(kind) == key and dest.is_file():
            b.result.reused.append(rel)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(own, dest)
            b.result.copied.append(rel)
        return rel
    if old.get(kind) == key and dest.is_file():
        b.result.reused.append(rel)
        return rel
    if make is not None and b.render:
        b.pending.append((run["path"], kind, rel, key, *make))
    return None


#: the baselines this process has read for comparison pages, by file and state on disk (see :func:`_shared_read`)
_READ: dict[tuple[Any, ...], Any] = {}


def _shared_read(ref: Any, results_dir: Any = "results", baselines_dir: Any = "baselines") -> Any:
    """:func:`goldenkit.baselines.resolve_run_or_baseline`, a baseline file read once per process while it and its
    Parquet are unchanged on disk: a build's comparisons share a few baselines (reading one each time cost
    about 5 ms of a page's CPU)."""
    path = Path(ref)
    if path.suffix != ".json" or not path.is_file():
        return resolve_run_or_baseline(ref, results_dir, baselines_dir)
    states = (disk_state(path), disk_state(path.with_suffix(".parquet")))
    key = (str(path.resolve()), str(results_dir), str(baselines_dir), *states)
    if key not in _READ:
        if len(_READ) >= 16:
            _READ.clear()
        _READ[key] = resolve_run_or_baseline(ref, results_dir, baselines_dir)
    return _READ[key]


def _render_report(name: str, parameters: dict[str, Any], title: str, *, site_title: str) -> str:
    """A run's page (``name``: ``report`` or ``compare``) in the site's shell: :func:`goldenkit.report.layout_page`
    of that layout with ``parameters``, two folders below the site's top."""
    from goldenkit.report import LAYOUTS, layout_page

    names = {"resolve_run_or_baseline": _shared_read} if name == "compare" else {}
    return page(title, layout_page(LAYOUTS[name], parameters, names), site_title=site_title, root="../../")


_Job = tuple[Path, str, dict[str, Any], str, str]  # a page to write: its file, layout, parameters, title, site title


def _write_report(job: _Job, secrets: tuple[str, ...] = ()) -> str | None:
    """Render one page and write it (the secrets of the caller's scope masked); the goldenkit error's message
    when it cannot be rendered (nothing is written then)."""
    dest, name, params, title, site_title = job
    try:
        with secrets_in_use(*secrets) if secrets else contextlib.nullcontext():
            write_page(dest, _render_report(name, params, title, site_title=site_title))
    except GoldenkitError as exc:
        return str(exc)
    return None


def _write_reports(jobs: list[_Job], processes: int | None) -> list[str | None]:
    """:func:`_write_report` of every job, in job order: in this process for fewer than :data:`POOL_MIN` or
    ``processes`` 1, else on ``processes`` spawned worker processes (None: one per core; each imports the
    statistics stack once)."""
    count = min(processes or os.cpu_count() or 1, len(jobs))
    scope = current_scope()
    secrets = tuple(scope.values) if scope is not None else ()
    if count == 1 or len(jobs) < POOL_MIN:
        return [_write_report(job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    chunk = max(1, len(jobs) // (count * 8))
    try:  # spawn: a fresh interpreter per worker, which inherits no thread or lock of this process
        with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn")) as pool:
            return list(pool.map(_write_report, jobs, [secrets] * len(jobs), chunksize=chunk))
    except BrokenProcessPool:  # a worker died (a script without its __main__ guard): render here
        return [_write_report(job) for job in jobs]


def _render_pending(b: _Build, links: dict[str, dict[str, str]]) -> None:
    """Render every queued page (a page that raises is a failure, the others are written); link what was."""
    jobs = [(b.out / rel, name, params, title, b.title) for _, _, rel, _, name, params, title in b.pending]
    for (path, kind, rel, key, *_), error in zip(b.pending, _write_reports(jobs, b.processes), strict=True):
        if error is not None:
            b.result.failures.append(f"{rel}: {error}")
            continue
        b.result.rendered.append(rel)
        links.setdefault(path, {})[kind] = rel
        b.new["runs"][path][kind] = key
    b.pending.clear()


def _baselines_by_key(baselines: pd.DataFrame) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    """The committed baselines in good state by (dataset hash, protocol), latest saved last."""
    out: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    ok = baselines[baselines["state"] == "ok"].sort_values("saved_at", kind="stable")
    for rec in ok.to_dict(orient="records"):
        out.setdefault((rec["dataset_sha256"], rec["protocol"]), []).append(rec)
    return out


def _baseline_for(run: dict[str, Any], by_key: dict[tuple[Any, Any], list[dict[str, Any]]]) -> dict[str, Any] | None:
    """The latest committed baseline of the run's dataset hash and protocol (not the run itself)."""
    same = [b for b in by_key.get((run["dataset_sha256"], run["protocol"]), []) if b["run_id"] != run["run_id"]]
    return same[-1] if same else None


def _run_pages(b: _Build, runs: pd.DataFrame) -> dict[str, dict[str, str]]:
    """report.html and compare.html of every readable run; the links by run folder.

    The parameters and titles are those ``goldenkit report RUN --baseline B`` gives the notebooks."""
    links: dict[str, dict[str, str]] = {}
    baselines = _baselines_by_key(runs[runs["kind"] == "baseline"])
    for run in runs[(runs["kind"] == "run") & (runs["state"] != "corrupt")].to_dict(orient="records"):
        folder = Path(run["path"])
        fp = _digest([fingerprint(folder), b.rule])
        entry: dict[str, Any] = {"fingerprint": fp}
        params = {"run": str(folder.resolve()), "results_dir": str(b.results_dir), "rule": b.rule}
        got = {}
        title = f"goldenkit report: {labelled(run.get('label'), run['run_id'])}"  # as goldenkit report titles it
        if rel := _page(b, "report", run, fp, ("report", params, title)):
            got["report"], entry["report"] = rel, fp
        base = _baseline_for(run, baselines) if run["state"] == "ok" else None
        make = None
        ckey = fp
        if base is not None:
            bpath = Path(base["path"])
            ckey = _digest([fp, str(bpath), [p.stat().st_mtime_ns for p in (bpath, bpath.with_suffix(".parquet"))]])
            cparams = {
                "base": str(bpath.resolve()),
                "cand": str(folder.resolve()),
                "results_dir": str(b.results_dir),
                "baselines_dir": str(b.baselines_dir),
                "rule": b.rule,
                "alpha": 0.05,
                "config": None,
            }
            make = ("compare", cparams, f"goldenkit compare: {base.get('name') or base['run_id']} vs {run['run_id']}")
        if rel := _page(b, "compare", run, ckey, make):
            got["compare"], entry["compare"] = rel, ckey
        links[run["path"]] = got
        b.new["runs"][run["path"]] = entry
    _render_pending(b, links)
    for path, entry in (b.old.get("runs") or {}).items():  # runs gone from results/: drop their pages
        if path not in b.new["runs"] and isinstance(entry, dict):
            shutil.rmtree(b.out / "runs" / Path(path).name, ignore_errors=True)
    return links


def _slug(name: str) -> str:
    return slug(name)


def _dataset_sections(b: _Build, name: str, runs: pd.DataFrame, reports: dict[str, str]) -> list[DatasetSection]:
    """A trend section per protocol of the dataset's ok runs (most recent protocol first); points link to reports."""
    ok = runs[runs["state"] == "ok"].sort_values("started_at", ascending=False, kind="stable")
    sections = []
    for protocol in list(dict.fromkeys(ok["protocol"]))[:_MAX_PROTOCOLS]:
        lines = trend(name, runs=ok, rule=b.rule, protocol=str(protocol))
        groups = [OVERALL, *sorted(g for g in lines["slice"].unique() if g != OVERALL)]
        links = {rid: f"../{rel}" for rid, rel in reports.items()}
        plots = [(", ".join(groups), trend_svg(lines, "pass_rate", groups, links=links))]
        sample = ok[ok["protocol"] == protocol].iloc[0]
        man = read_run(sample["path"]).manifest
        key = {k: v for k, v in protocol_key(man, rule=b.rule).items() if v is not None}
        sections.append(DatasetSection(protocol=str(protocol), key=key, lines=lines, plots=plots, by="slice"))
    return sections


def _versions(runs: pd.DataFrame) -> pd.DataFrame:
    g = runs.groupby(["dataset_version", "dataset_sha256"], dropna=False, sort=False)["started_at"]
    v = g.agg(["count", "min", "max"]).reset_index().sort_values("min", kind="stable")
    return pd.DataFrame(
        {
            "dataset_version": v["dataset_version"],
            "dataset_sha256": v["dataset_sha256"],
            "runs": v["count"],
            "first": v["min"].dt.strftime("%Y-%m-%d %H:%M"),
            "last": v["max"].dt.strftime("%Y-%m-%d %H:%M"),
        }
    )


def _dataset_pages(b: _Build, runs: pd.DataFrame, links: dict[str, dict[str, str]]) -> dict[str, str]:
    """A history page per dataset name (kept when its runs are unchanged); the hrefs by name."""
    hrefs: dict[str, str] = {}
    mine = runs[(runs["kind"] == "run") & runs["dataset_name"].notna()]
    for name, part in mine.groupby("dataset_name", sort=True):
        name = str(name)
        rel = dataset_href(_slug(name))
        hrefs[name] = rel
        reports = {
            str(r): links[p]["report"]
            for r, p in zip(part["run_id"], part["path"], strict=True)
            if "report" in links.get(p, {})
        }
        fps = sorted(b.new["runs"].get(p, {}).get("fingerprint", p) for p in part["path"])
        key = _digest([b.title, b.rule, fps, reports])
        b.new["datasets"][name] = key
        if (b.old.get("datasets") or {}).get(name) == key and (b.out / rel).is_file():
            b.result.reused.append(rel)
            continue
        sections = _dataset_sections(b, name, part, reports)
        latest = sections[0].lines if sections else None
        failing = pd.DataFrame(
            columns=["row_id", "slice", "runs", "failed", "share", "last_failed_run", "last_response"]
        )
        if latest is not None and len(latest):
            last_segment = latest[latest["segment"] == latest["segment"].max()]["run_id"].unique()
            ok = part[part["run_id"].isin(last_segment) & (part["state"] == "ok")]
            failing = failure_counts(ok, rule=b.rule)
        left_out = int((part["state"] != "ok").sum())
        note = (
            f"{len(part)} runs; {left_out} left out of the trends (INVALID, incomplete or corrupt)." if left_out else ""
        )
        html = dataset_page(
            name, _versions(part), sections, failing, metric="pass_rate", site_title=b.title, note=note, reports=reports
        )
        write_page(b.out / rel, html)
        b.result.rendered.append(rel)
    return hrefs


def _baselines(b: _Build, runs: pd.DataFrame) -> None:
    try:
        history, problem = baseline_history_df(b.baselines_dir), None
    except GoldenkitError as exc:
        history, problem = None, str(exc)
    current = runs[runs["kind"] == "baseline"]
    hint = baseline_save_hint(runs, str(b.results_dir), str(b.baselines_dir))
    write_page(b.out / "baselines.html", baselines_page(current, history, problem, site_title=b.title, save_hint=hint))


def _load_state(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def build_site(
    output: str | os.PathLike[str] = "site",
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] = "baselines",
    *,
    title: str = "goldenkit",
    render: bool = True,
    rule: str = "majority",
    processes: int | None = 1,
) -> SiteResult:
    """Write the static site into ``output`` (see the module docstring); returns what was done.

    ``processes``: how many processes render the pages: 1 (the default) this one; None, one per core for a
    batch of :data:`POOL_MIN` pages or more (what ``goldenkit pages`` does). A worker is a spawned interpreter
    that imports the caller's ``__main__``: a script that asks for workers keeps its own work under
    ``if __name__ == "__main__":``, or that work runs again in each worker.

    >>> result = build_site("site", "results", "baselines", title="support agent")   # doctest: +SKIP
    >>> result.index                                                                   # doctest: +SKIP
    PosixPath('site/index.html')
    """
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a folder")
    out.mkdir(parents=True, exist_ok=True)
    result = SiteResult(path=out, index=out / "index.html")
    b = _Build(out, Path(results_dir), Path(baselines_dir), title, render, rule, _load_state(out), result, processes)
    runs = scan(results_dir, baselines_dir, rule=rule).frame()
    links = _run_pages(b, runs)
    hrefs = _dataset_pages(b, runs, links)
    counts = runs[runs["kind"] == "run"].groupby("dataset_name").size().to_dict()
    by_dataset = {str(k): int(v) for k, v in counts.items()}
    write_page(out / "datasets.html", datasets_page(hrefs, by_dataset, site_title=title))
    _baselines(b, runs)
    boards = leaderboard_sections(runs, out, site_title=title, rule=rule, previous=b.old.get("leaderboards"))
    b.new["leaderboards"] = boards.state
    result.rendered.extend(boards.rendered)
    result.reused.extend(boards.reused)
    costs = [
        totals_text(run_totals_of(p)) if k == "run" else "" for k, p in zip(runs["kind"], runs["path"], strict=True)
    ]
    write_page(result.index, index_page(runs.assign(cost=costs), links, hrefs, boards.sections, site_title=title))
    write_page(out / STATE_FILE, json.dumps(b.new, indent=1, sort_keys=True))
    return result


publish(globals())
