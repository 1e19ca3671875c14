"""The leaderboard pages of the site: one per group of benchmark runs, and the index's links to them.

A *group* is every run folder whose run.json records the same ``goldenkit
benchmark`` run prefix (the ``benchmark`` column of
:func:`goldenkit.history.runs_df`, from ``config.extra.benchmark``). Groups are
the only leaderboards the site makes: runs are never put side by side by
guessing that they belong together. A group with at least two runs in state
``ok`` (VALID, complete) gets ``leaderboards/<prefix>.html``:

* the table of :func:`goldenkit.leaderboard` over its ok runs -- group, rank
  interval, pass rate with its 95% Wilson interval, pass@k, pass^k, error rows;
* every pair -- rows paired, b, c, exact McNemar p, Holm p, the paired
  difference with Newcombe's interval;
* what ``top`` means, the leaderboard's notes, and the runs of the group left
  out (INVALID, incomplete) with why.

When the runs are not comparable, the page says so and gives the
:class:`~goldenkit.errors.ComparisonInvalid` message (the odd run and each key
that differs); it never shows a ranking. Groups with fewer than two ok runs
get no page.

Incremental like the rest of the site: a page is kept when the fingerprint of
its runs' files (:func:`goldenkit.history._run_index.fingerprint`), the rule and the
title are the ones recorded by the last build.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._display import interval, missing, p_value, pct
from goldenkit._run_label import labelled
from goldenkit.errors import ComparisonInvalid, GoldenkitError
from goldenkit.history import fingerprint
from goldenkit.pages._html import esc, href, page, slug, table, write_page
from goldenkit.pages._views import Section, labelled_html

__all__ = ["ALPHA", "LeaderboardPages", "leaderboard_sections"]

#: The significance level of the site's leaderboards (Holm over all pairs), as ``goldenkit leaderboard``'s default.
ALPHA = 0.05
_MIN_RUNS = 2

TOP_NOTE = (
    "Group top: every run whose rank interval contains 1, i.e. no other run is significantly better "
    "(exact McNemar on the paired rows, Holm-adjusted over all pairs, at alpha {alpha}). Runs in the top group "
    "are indistinguishable from the leader on this evidence; it does not say they are equal, and the order "
    "inside it is the pass rate alone. Other groups get a letter per distinct rank interval."
)


@dataclass
class LeaderboardPages:
    """What :func:`leaderboard_sections` did: the index's sections, its state for the next build, the pages."""

    sections: list[Section] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    rendered: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _rank(lo: Any, hi: Any) -> str:
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _interval(p: Any, lo: Any, hi: Any) -> str:
    return pct(p) if missing(p) else f'{pct(p)} <span class="muted">{interval(lo, hi)}</span>'


def _table_html(lb: Any) -> str:
    k = int(lb.at_k)
    rows = [
        [
            f'<span class="tag{" ok" if r["group"] == "top" else ""}">{esc(r["group"])}</span>',
            esc(_rank(r["rank_low"], r["rank_high"])),
            labelled_html(r["label"], r["run_id"]),
            esc(r["model"]),
            f"{esc(r['k'])}/{esc(r['n'])}",
            _interval(r["pass_rate"], r["ci_low"], r["ci_high"]),
            pct(r["pass_at_k"]),
            pct(r["pass_hat_k"]),
            esc(r["errors"]),
        ]
        for r in lb.table.to_dict("records")
    ]
    attrs = [f' data-run="{esc(r)}"' for r in lb.table["run_id"]]
    head = [
        "group",
        "rank",
        "run",
        "model",
        "passed/graded rows",
        "pass rate [95% Wilson]",
        f"pass@{k}",
        f"pass^{k}",
        "error rows",
    ]
    return '<section id="leaderboard">' + table(head, rows, numeric=(4, 5, 6, 7, 8), row_attrs=attrs) + "</section>"


def _pairs_html(lb: Any) -> str:
    rows = [
        [
            esc(p["a"]),
            esc(p["b"]),
            esc(p["n_paired"]),
            esc(p["excluded"]),
            esc(p["b_count"]),
            esc(p["c_count"]),
            esc(p_value(p["p_val"])),
            esc(p_value(p["p_adj"])),
            "yes" if p["significant"] else "no",
            f'{esc(pct(p["diff"], unit="", signed=True))} <span class="muted">'
            f"{esc(interval(p['diff_ci_low'], p['diff_ci_high'], unit=''))}</span>",
        ]
        for p in lb.pairs.to_dict("records")
    ]
    attrs = [f' data-pair="{esc(a)} {esc(b)}"' for a, b in zip(lb.pairs["a"], lb.pairs["b"], strict=True)]
    head = [
        "a",
        "b",
        "paired rows",
        "left out",
        "b",
        "c",
        "p (exact McNemar, unadjusted)",
        "p (Holm)",
        "significant",
        "a − b, points [95% Newcombe, unadjusted]",
    ]
    return (
        '<h2>Pairs</h2><p class="muted">b = rows a passed and b failed, c = the reverse, over the rows graded in '
        "both runs (a row that is ERROR or SKIPPED in either run is left out of the pair). "
        f"Significant: Holm-adjusted p below {esc(lb.alpha)}. Only p (Holm) is adjusted for the number of pairs: "
        "the exact McNemar p and the interval of the difference are each pair's own (unadjusted).</p>"
        '<section id="pairs">' + table(head, rows, numeric=tuple(range(2, 10)), row_attrs=attrs) + "</section>"
    )


def _frontier_html(lb: Any) -> str:
    """What a passing row cost per run, and the quality-cost frontier: the table and the plot."""
    from goldenkit.leaderboards import cost_table, frontier_figure, frontier_line
    from goldenkit.pages._plots import _inline, _svg_text

    costs = cost_table(lb).reset_index()
    rows = [[esc(v) for v in line] for line in costs.itertuples(index=False)]
    svg = _inline(_svg_text(frontier_figure(lb)), {}, "pass rate against cost per passing row, the frontier drawn")
    return (
        f'<h2>Cost and the quality-cost frontier</h2><p class="muted">{esc(frontier_line(lb))}. Money is shown '
        "only where the provider returned a price or [pricing] gives one, labelled with where it came from; "
        "otherwise n/a.</p>"
        '<section id="frontier">' + table(list(costs.columns), rows, numeric=(1, 2, 3, 4, 6)) + svg + "</section>"
    )


def _left_out_html(left_out: pd.DataFrame) -> str:
    if not len(left_out):
        return ""
    items = "".join(
        f"<li>{esc(r['run_id'])} ({esc(r['state'])}): {esc(r['problem'])}</li>" for r in left_out.to_dict("records")
    )
    return f"<h2>Runs left out</h2><p>Not evidence, so not ranked:</p><ul>{items}</ul>"


def board_page(prefix: str, lb: Any, left_out: pd.DataFrame, *, dataset: str, site_title: str) -> str:
    """The leaderboard page of one benchmark group (``lb`` from :func:`goldenkit.leaderboard`)."""
    notes = "".join(f"<li>{esc(n)}</li>" for n in lb.notes)
    body = (
        f"<h1>Leaderboard {esc(prefix)}</h1>"
        f'<p class="muted">{esc(len(lb.table))} runs of {esc(dataset)} recorded by <code>goldenkit benchmark</code> '
        f"with run prefix {esc(prefix)}; repeats collapsed by {esc(lb.rule)}, pass rates over rows with 95% Wilson "
        f"intervals, pass@k and pass^k at k = {esc(lb.at_k)}, alpha {esc(lb.alpha)}.</p>"
        + _table_html(lb)
        + f'<p id="top-note">{esc(TOP_NOTE.format(alpha=lb.alpha))}</p>'
        + _frontier_html(lb)
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + _pairs_html(lb)
        + _left_out_html(left_out)
    )
    return page(f"{site_title}: leaderboard {prefix}", body, site_title=site_title, root="../")


def not_comparable_page(prefix: str, why: str, runs: pd.DataFrame, *, site_title: str) -> str:
    """The page of a group whose runs cannot be ranked together: it says why, and ranks nothing."""
    items = "".join(
        f"<li>{esc(labelled(r.get('label'), r['run_id']))} ({esc(r['model_id'])}, "
        f"{esc(r['dataset_name'])}@{esc(r['dataset_version'])})</li>"
        for r in runs.to_dict("records")
    )
    body = (
        f"<h1>Leaderboard {esc(prefix)}</h1>"
        f'<p class="tag invalid" id="not-comparable">These runs are not comparable: no leaderboard.</p>'
        f"<p><code>{esc(why)}</code></p>"
        "<p>A leaderboard needs the same dataset hash, row set, repeats, graders, judge version and red-row "
        "setting in every run (exit 4, COMPARISON_INVALID, from <code>goldenkit leaderboard</code>).</p>"
        f"<h2>Runs of the group</h2><ul>{items}</ul>"
    )
    return page(f"{site_title}: leaderboard {prefix}", body, site_title=site_title, root="../")


def _make(prefix: str, group: pd.DataFrame, rule: str, site_title: str) -> tuple[str, str]:
    """(HTML, the index note) of one group: its leaderboard, or the page saying why there is none."""
    from goldenkit.leaderboards import leaderboard

    ok = group[group["state"] == "ok"].sort_values("run_id", kind="stable")
    try:
        lb = leaderboard([Path(p) for p in ok["path"]], alpha=ALPHA, rule=rule)
    except ComparisonInvalid as exc:
        return not_comparable_page(prefix, str(exc), ok, site_title=site_title), f"not comparable: {exc}"
    except GoldenkitError as exc:
        return not_comparable_page(prefix, str(exc), ok, site_title=site_title), f"could not be ranked: {exc}"
    names = sorted({f"{n}@{v}" for n, v in zip(ok["dataset_name"], ok["dataset_version"], strict=True)})
    left_out = group[group["state"] != "ok"]
    html = board_page(prefix, lb, left_out, dataset=", ".join(names), site_title=site_title)
    top = [str(r) for r in lb.table[lb.table["group"] == "top"]["run_id"]]
    return html, f"top group: {', '.join(top)}"


def _groups(runs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The benchmark groups with at least two ok runs, by prefix."""
    if "benchmark" not in runs.columns:
        return []
    mine = runs[(runs["kind"] == "run") & runs["benchmark"].notna()]
    # one run seen through two folders (the runner's ``latest`` link) is one run: keep its real folder
    real = [os.path.realpath(p) for p in mine["path"]]
    linked = [os.path.islink(p) for p in mine["path"]]
    mine = mine.assign(_real=real, _linked=linked).sort_values(["_linked", "path"], kind="stable")
    mine = mine.drop_duplicates("_real").drop(columns=["_real", "_linked"])
    out = []
    for prefix, group in mine.groupby("benchmark", sort=True):
        if int((group["state"] == "ok").sum()) >= _MIN_RUNS:
            out.append((str(prefix), group))
    return out


def leaderboard_sections(
    runs: pd.DataFrame,
    site_dir: Path,
    *,
    site_title: str,
    rule: str = "majority",
    previous: Mapping[str, Any] | None = None,
) -> LeaderboardPages:
    """Write a page per benchmark group under ``site_dir / "leaderboards"``; the index's sections.

    ``runs`` is :func:`goldenkit.history.runs_df` of the build; ``previous`` the
    ``state`` this returned last time (a page whose key is unchanged is kept).
    Pages of groups that are gone are removed.
    """
    old = dict(previous or {})
    done = LeaderboardPages()
    for prefix, group in _groups(runs):
        rel = href("leaderboards", f"{slug(prefix)}.html")
        paths = sorted(str(p) for p in group["path"])
        key = _digest(
            [
                site_title,
                rule,
                ALPHA,
                [[p, fingerprint(Path(p))] for p in paths],
                list(group.sort_values("path")["state"]),
            ]
        )
        hit = old.get(prefix)
        if isinstance(hit, dict) and hit.get("key") == key and (site_dir / rel).is_file():
            note = str(hit.get("note", ""))
            done.reused.append(rel)
        else:
            html, note = _make(prefix, group, rule, site_title)
            write_page(site_dir / rel, html)
            done.rendered.append(rel)
        count = int((group["state"] == "ok").sum())
        done.sections.append(Section(f"{prefix}: {count} runs", rel, note))
        done.state[prefix] = {"key": key, "note": note, "href": rel}
    for prefix, entry in old.items():
        if prefix not in done.state and isinstance(entry, dict) and isinstance(entry.get("href"), str):
            gone = site_dir / str(entry["href"])
            if gone.parent == site_dir / "leaderboards":
                gone.unlink(missing_ok=True)
    return done
