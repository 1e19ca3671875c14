"""The content of each page of the site: what each page shows, from DataFrames, handed to its template
(goldenkit/templates/site_*.html.j2), which escapes every value (no file I/O here). Links are relative.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from markupsafe import Markup

from goldenkit._display import missing
from goldenkit._run_label import labelled
from goldenkit.pages._html import href, render
from goldenkit.stats import OVERALL

__all__ = [
    "DatasetSection",
    "Section",
    "baseline_save_hint",
    "baselines_page",
    "dataset_href",
    "dataset_page",
    "datasets_page",
    "index_page",
    "shown_label",
]


@dataclass
class Section:
    """A block linked from the index (the leaderboards plug in as these): title, relative href, a note."""

    title: str
    href: str
    note: str = ""


@dataclass
class DatasetSection:
    """One protocol's part of a dataset page: its key, trend lines and plots (``(groups shown, inline SVG)``)."""

    protocol: str
    key: Mapping[str, Any]
    lines: pd.DataFrame
    plots: Sequence[tuple[str, str]]
    by: str = "slice"


def _clean(record: Mapping[str, Any]) -> dict[str, Any]:
    """A row of a frame for a template: a missing value (NaN, NA, NaT) is None, which a template tests with
    ``is none`` and shows as nothing."""
    return {k: None if missing(v) else v for k, v in record.items()}


def shown_label(label: Any, run_id: Any) -> str | None:
    """A run's label for the cells that show it before the run's id (the site_cells ``run_label`` macro); None
    when the label is the id itself (:func:`goldenkit._run_label.labelled`)."""
    return None if labelled(label, run_id) == str(run_id) else label


#: What each column of the index sorts by (its cell's data-sort): the record's value, none where it is the cell's
#: text; ``_label`` is the run's label as its cell reads.
_SORT_KEYS = (
    "_label",
    "kind",
    "dataset_name",
    "model_id",
    "mode",
    None,
    "state",
    "pass_rate",
    "n",
    "error_rate",
    "outcomes",
    None,
    "protocol",
    None,
    "problem",
)


def _index_row(r: dict[str, Any], links: Mapping[str, str], href: str | None) -> dict[str, Any]:
    """One run or baseline of the index, for site_index.html.j2: its record (a missing text as None), what its
    cells show and sort by (a value that is None in the frame sorts by the cell's text)."""
    run = r["kind"] == "run"
    started = r["started_at"] if run else r["saved_at"]
    label = labelled(r["label"], r["run_id"]) if run else r["name"]  # what the cell shows
    sort = [None if c is None or r[c] is None else "" if missing(r[c]) else r[c] for c in _SORT_KEYS[1:]]
    return {
        **r,
        **{c: None if missing(r[c]) else r[c] for c in ("dataset_name", "model_id", "problem")},
        "label": shown_label(r["label"], r["run_id"]) if run else None,
        "sort": [label, *sort],
        "report": links.get("report"),
        "pages": [(k, links[k]) for k in ("report", "compare") if k in links],
        "dataset_href": href,
        "started": "" if missing(started) else started.strftime("%Y-%m-%d %H:%M"),
        "started_iso": "" if missing(started) else started.isoformat(),
        "cost": r.get("cost") or None,  # what the run cost (run.json accounting, goldenkit.results._accounting)
    }


def index_page(
    runs: pd.DataFrame,
    links: Mapping[str, Mapping[str, str]],
    dataset_hrefs: Mapping[str, str],
    sections: Sequence[Section],
    *,
    site_title: str,
) -> str:
    """The runs table (newest first), its filters, and the sections (leaderboards) when there are any."""
    order = runs.assign(_t=runs["started_at"].fillna(runs["saved_at"])).sort_values(
        "_t", ascending=False, kind="stable"
    )
    if "label" not in order.columns:
        order = order.assign(label=None)
    rows = [
        _index_row(r, links.get(str(r["path"]), {}), dataset_hrefs.get(str(r["dataset_name"])))
        for r in order.to_dict(orient="records")
    ]
    return render(
        "site_index.html.j2",
        site_title=site_title,
        runs=rows,
        headers=INDEX_HEADERS,
        states=("ok", "invalid", "incomplete", "corrupt"),
        datasets=sorted({str(d) for d in runs["dataset_name"].dropna()}),
        sections=sections,
    )


#: The columns of the runs index, in order.
INDEX_HEADERS = (
    "run",
    "kind",
    "dataset",
    "model",
    "mode",
    "started",
    "state",
    "pass rate [95% Wilson]",
    "k/n",
    "error rate",
    "outcomes",
    "cost",
    "protocol",
    "pages",
    "problem",
)


def _section(section: DatasetSection, metric: str, reports: Mapping[str, str]) -> dict[str, Any]:
    """One protocol's part of a dataset page, for site_dataset.html.j2: its key as text, its plots (matplotlib's
    SVG, its texts escaped by its writer), its overall line per run (each linked to its report where there is one)."""
    overall = section.lines[section.lines[section.by] == OVERALL]
    runs = []
    for r in overall.to_dict(orient="records"):
        rel = reports.get(str(r["run_id"]))
        runs.append(
            {
                **_clean(r),
                "label": shown_label(r.get("label"), r["run_id"]),
                "report": f"../{rel}" if rel else None,
                "started": pd.Timestamp(r["started_at"]).strftime("%Y-%m-%d %H:%M"),
                "rate": r[metric],
            }
        )
    return {
        "protocol": section.protocol,
        "key": ", ".join(f"{k}={json.dumps(v, sort_keys=True, default=str)}" for k, v in section.key.items()),
        "plots": [Markup(svg) for _groups, svg in section.plots],
        "runs": runs,
    }


def dataset_page(
    name: str,
    versions: pd.DataFrame,
    sections: Sequence[DatasetSection],
    failing: pd.DataFrame,
    *,
    metric: str,
    site_title: str,
    note: str = "",
    reports: Mapping[str, str] | None = None,
) -> str:
    """A dataset's history: its versions, a trend section per protocol, and the rows failing most often."""
    reports = reports or {}
    rows = [{**_clean(v), "sha256": str(v["dataset_sha256"])[:12]} for v in versions.to_dict(orient="records")]
    fails = []
    for f in failing.head(50).to_dict(orient="records"):
        rel = reports.get(str(f["last_failed_run"]))
        fails.append({**_clean(f), "report": f"../{rel}" if rel else None})
    return render(
        "site_dataset.html.j2",
        site_title=site_title,
        name=name,
        note=note,
        metric=metric,
        versions=rows,
        sections=[_section(s, metric, reports) for s in sections],
        failing=fails,
    )


def datasets_page(hrefs: Mapping[str, str], counts: Mapping[str, int], *, site_title: str) -> str:
    """The list of dataset history pages."""
    rows = [(n, h, counts.get(n, 0)) for n, h in sorted(hrefs.items())]
    return render("site_datasets.html.j2", site_title=site_title, datasets=rows)


def baseline_save_hint(runs: pd.DataFrame, results_dir: str = "results", baselines_dir: str = "baselines") -> str:
    """The command that saves a baseline, for a page that has none: from the newest run that can be one.

    Saving takes a VALID, complete run without ERROR outcomes (state ok, no error);
    without such a run the command names ``RUN``. The folders are named when they are not the defaults.
    """
    ok = runs[(runs["kind"] == "run") & (runs["state"] == "ok") & (runs["error"].fillna(0) == 0)]
    newest = ok.sort_values(["started_at", "run_id"], kind="stable").tail(1)["run_id"].tolist()
    parts = ["goldenkit", "baseline"]
    if str(baselines_dir) != "baselines":
        parts += ["--baselines-dir", str(baselines_dir)]
    parts += ["save", str(newest[0]) if newest else "RUN", "--name", "main"]
    if str(results_dir) != "results":
        parts += ["--results-dir", str(results_dir)]
    return " ".join(shlex.quote(p) for p in parts)


def baselines_page(
    current: pd.DataFrame,
    history: pd.DataFrame | None,
    problem: str | None,
    *,
    site_title: str,
    save_hint: str = "goldenkit baseline save RUN --name main",
) -> str:
    """The committed baselines and their append-only history (newest save first); how to save one when there is none."""
    saved = (
        [] if history is None else history.sort_values("saved_at", ascending=False, kind="stable").to_dict("records")
    )
    return render(
        "site_baselines.html.j2",
        site_title=site_title,
        current=[_clean(b) for b in current.to_dict(orient="records")],
        history=[_clean(h) for h in saved],
        problem=problem,
        save_hint=save_hint,
    )


def dataset_href(slug: str) -> str:
    """Where a dataset's page lives, relative to the site's top."""
    return href("datasets", f"{slug}.html")
