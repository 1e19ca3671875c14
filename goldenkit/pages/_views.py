"""The content of each page of the site, from DataFrames to HTML strings (no file I/O here).

Every cell goes through :func:`goldenkit.pages._html.esc`; links are relative.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from goldenkit._display import interval, missing, pct
from goldenkit._run_label import labelled
from goldenkit.pages._html import INDEX_SCRIPT, esc, href, page, table
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
    "labelled_html",
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


def _interval(p: Any, lo: Any, hi: Any) -> str:
    return pct(p) if missing(p) else f'{pct(p)} <span class="muted">{interval(lo, hi)}</span>'


def _sortable(value: Any) -> str:
    text = esc(value.isoformat() if isinstance(value, pd.Timestamp) else value)
    return f' data-sort="{text}"'


def _run_cells(r: Mapping[str, Any], links: Mapping[str, str], dataset_href: str | None) -> list[str]:
    label = (
        labelled_html(r.get("label"), r["run_id"])
        if r["kind"] == "run"
        else f'{esc(r["name"])} <span class="muted">(baseline of {esc(r["run_id"])})</span>'
    )
    if "report" in links:
        label = f'<a href="{esc(links["report"])}">{label}</a>'
    ds = f"{esc(r['dataset_name'])}@<wbr>{esc(r['dataset_version'])}" if pd.notna(r["dataset_name"]) else ""
    if dataset_href and ds:
        ds = f'<a href="{esc(dataset_href)}">{ds}</a>'
    pages = " · ".join(f'<a href="{esc(links[k])}">{k}</a>' for k in ("report", "compare") if k in links)
    started = r["started_at"] if r["kind"] == "run" else r["saved_at"]
    return [  # free text may break anywhere (a long id or path never widens the page); words stay whole
        _long(label),
        esc(r["kind"]),
        _long(ds),
        _long(esc(r["model_id"])),
        esc(r["mode"]),
        f"<span{_sortable(started)}>{esc(started.strftime('%Y-%m-%d %H:%M') if pd.notna(started) else '')}</span>",
        f'<span class="tag {esc(r["state"])}">{esc(r["state"])}</span>',
        _interval(r["pass_rate"], r["ci_low"], r["ci_high"]),
        f"{esc(r['k'])}/{esc(r['n'])}" if pd.notna(r["n"]) else "",
        pct(r["error_rate"]),
        esc(r["outcomes"]),
        _long(esc(r.get("cost") or "")),  # what the run cost (run.json accounting, goldenkit.results._accounting)
        f"<code>{esc(r['protocol'])}</code>",
        pages,
        f'<span class="long problem">{esc(r["problem"])}</span>' if pd.notna(r["problem"]) else "",
    ]


def _long(cell: str) -> str:
    return f'<span class="long">{cell}</span>' if cell else ""


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
    rows, attrs = [], []
    for r in order.to_dict(orient="records"):
        cells = _run_cells(r, links.get(str(r["path"]), {}), dataset_hrefs.get(str(r["dataset_name"])))
        sort_keys = [
            labelled(r.get("label"), r["run_id"]) if r["kind"] == "run" else r["name"],  # what the cell shows
            r["kind"],
            r["dataset_name"],
            r["model_id"],
            r["mode"],
            None,
            r["state"],
            r["pass_rate"],
            r["n"],
            r["error_rate"],
            r["outcomes"],
            None,
            r["protocol"],
            None,
            r["problem"],
        ]
        rows.append(
            [c if k is None else f"<span{_sortable(k)}>{c}</span>" for c, k in zip(cells, sort_keys, strict=True)]
        )
        attrs.append(
            f' class="state-{esc(r["state"])}" data-state="{esc(r["state"])}" data-dataset="{esc(r["dataset_name"])}"'
        )
    states = "".join(f'<option value="{esc(s)}">{esc(s)}</option>' for s in ("ok", "invalid", "incomplete", "corrupt"))
    names = sorted({str(d) for d in runs["dataset_name"].dropna()})
    options = "".join(f'<option value="{esc(d)}">{esc(d)}</option>' for d in names)
    controls = (
        '<div class="controls"><input id="filter" type="search" placeholder="filter runs" aria-label="filter runs">'
        f'<select id="state" aria-label="state"><option value="">every state</option>{states}</select>'
        f'<select id="dataset" aria-label="dataset"><option value="">every dataset</option>{options}</select>'
        f'<span class="muted"><span id="shown">{len(rows)}</span> of {len(rows)} shown</span></div>'
    )
    headers = [
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
    ]
    extra = ""
    if sections:
        items = "".join(f'<li><a href="{esc(s.href)}">{esc(s.title)}</a> {esc(s.note)}</li>' for s in sections)
        extra = f"<h2>Leaderboards</h2><ul>{items}</ul>"
    body = (
        f"<h1>Runs</h1>{controls}"
        + table(headers, rows, table_id="runs", numeric=(7, 8, 9, 10), row_attrs=attrs)
        + '<p class="muted">Pass rates are over rows after collapsing repeats, with 95% Wilson intervals. '
        "Click a column header to sort.</p>" + extra
    )
    return page(f"{site_title}: runs", body, site_title=site_title, script=INDEX_SCRIPT)


def labelled_html(label: Any, run_id: Any) -> str:
    """A run in a cell: its label, then its id (muted); the id alone when it is its label
    (:func:`goldenkit._run_label.labelled` in HTML)."""
    if labelled(label, run_id) == str(run_id):
        return esc(run_id)
    return f'{esc(label)} <span class="muted">{esc(run_id)}</span>'


def _run_link(run_id: Any, reports: Mapping[str, str], label: Any = None) -> str:
    """The run's label then its id, linked to its report where there is one."""
    rel = reports.get(str(run_id))
    shown = labelled_html(label, run_id)
    return f'<a href="../{esc(rel)}">{shown}</a>' if rel else shown


def _protocol_html(section: DatasetSection, metric: str, reports: Mapping[str, str]) -> str:
    key = ", ".join(f"{esc(k)}={esc(json.dumps(v, sort_keys=True, default=str))}" for k, v in section.key.items())
    # the SVG is matplotlib's (its texts escaped by its writer), each point a link to its run's report
    figs = "".join(f'<figure class="trend">{svg}</figure>' for _groups, svg in section.plots)
    overall = section.lines[section.lines[section.by] == OVERALL]
    rows = [
        [
            _run_link(r["run_id"], reports, r.get("label")),
            esc(pd.Timestamp(r["started_at"]).strftime("%Y-%m-%d %H:%M")),
            esc(r["agent"]),
            esc(r["dataset_version"]) + (" <strong>(new version)</strong>" if r["version_change"] else ""),
            _interval(r[metric], r["ci_low"], r["ci_high"]),
            f"{esc(r['k'])}/{esc(r['n'])}",
        ]
        for r in overall.to_dict(orient="records")
    ]
    note = (
        '<p class="muted">One series per agent (model and prompt hash); each point links to its run\'s report '
        "where there is one.</p>"
    )
    return f'<h2>Protocol <code>{esc(section.protocol)}</code></h2><p class="muted">{key}</p>{note}{figs}' + table(
        ["run", "started", "agent", "dataset version", f"{metric} (overall)", "k/n"], rows, numeric=(4, 5)
    )


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
    vrows = [
        [
            esc(v["dataset_version"]),
            f"<code>{esc(str(v['dataset_sha256'])[:12])}</code>",
            esc(v["runs"]),
            esc(v["first"]),
            esc(v["last"]),
        ]
        for v in versions.to_dict(orient="records")
    ]
    frows = [
        [
            esc(f["row_id"]),
            esc(f["slice"]),
            f"{esc(f['failed'])}/{esc(f['runs'])}",
            pct(f["share"], 0),
            _run_link(f["last_failed_run"], reports or {}),
            f"<pre>{esc(f['last_response'])}</pre>",
        ]
        for f in failing.head(50).to_dict(orient="records")
    ]
    body = (
        f'<h1>History of {esc(name)}</h1><p class="muted">{esc(note)}</p><h2>Versions</h2>'
        + table(["version", "sha256", "runs", "first run", "last run"], vrows, numeric=(2,))
        + "".join(_protocol_html(s, metric, reports or {}) for s in sections)
        + '<h2>Rows failing most often</h2><p class="muted">In the runs of the latest segment of the first protocol '
        "above (collapsed verdicts); the response is from a failing repeat of the latest run the row failed in.</p>"
        + table(
            ["row", "slice", "failed/graded runs", "share", "last failed in", "its response"], frows, numeric=(2, 3)
        )
    )
    return page(f"{site_title}: {name}", body, site_title=site_title, root="../")


def datasets_page(hrefs: Mapping[str, str], counts: Mapping[str, int], *, site_title: str) -> str:
    """The list of dataset history pages."""
    rows = [[f'<a href="{esc(h)}">{esc(n)}</a>', esc(counts.get(n, 0))] for n, h in sorted(hrefs.items())]
    body = "<h1>Datasets</h1>" + table(["dataset", "runs"], rows, numeric=(1,))
    return page(f"{site_title}: datasets", body, site_title=site_title)


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


def _no_baseline(hint: str) -> str:
    return (
        '<div class="empty"><p><strong>No baseline saved yet.</strong> A baseline is a committed snapshot of a run '
        "that every later run is compared and gated against. Save one from a VALID, complete run without ERROR "
        f'outcomes:</p><pre><code>{esc(hint)}</code></pre><p class="muted">It writes baselines/main.json and '
        "appends to baselines/history.jsonl; commit both. <code>--force</code> replaces a baseline of the same "
        "name.</p></div>"
    )


def baselines_page(
    current: pd.DataFrame,
    history: pd.DataFrame | None,
    problem: str | None,
    *,
    site_title: str,
    save_hint: str = "goldenkit baseline save RUN --name main",
) -> str:
    """The committed baselines and their append-only history (newest save first); how to save one when there is none."""
    cur = [
        [
            f'<span id="baseline-{esc(b["name"])}">{esc(b["name"])}</span>',
            esc(b["run_id"]),
            f"{esc(b['dataset_name'])}@{esc(b['dataset_version'])}",
            esc(b["model_id"]),
            _interval(b["pass_rate"], b["ci_low"], b["ci_high"]),
            esc(b["saved_at"]),
            esc(b["problem"]),
        ]
        for b in current.to_dict(orient="records")
    ]
    hist = []
    if history is not None:
        for h in history.sort_values("saved_at", ascending=False, kind="stable").to_dict(orient="records"):
            hist.append(
                [
                    esc(h["saved_at"]),
                    esc(h["name"]),
                    esc(h["run_id"]),
                    f"{esc(h['dataset_name'])}@{esc(h['dataset_version'])}",
                    esc(h["model_id"]),
                    _interval(h["p_hat"], h["ci_low"], h["ci_high"]),
                    "yes" if h["replaced"] is True else "",
                    esc(h["note"]),
                ]
            )
    body = (
        "<h1>Baselines</h1>"
        + (_no_baseline(save_hint) if not cur else "")
        + table(["name", "run", "dataset", "model", "pass rate [95% Wilson]", "saved", "problem"], cur, numeric=(4,))
        + "<h2>History</h2>"
        + (f'<p class="tag corrupt">{esc(problem)}</p>' if problem else "")
        + table(["saved", "name", "run", "dataset", "model", "pass rate", "replaced", "note"], hist, numeric=(5,))
    )
    return page(f"{site_title}: baselines", body, site_title=site_title)


def dataset_href(slug: str) -> str:
    """Where a dataset's page lives, relative to the site's top."""
    return href("datasets", f"{slug}.html")
