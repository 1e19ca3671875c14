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
from markupsafe import Markup

from goldenkit._run_label import labelled
from goldenkit.errors import ComparisonInvalid, GoldenkitError
from goldenkit.history import fingerprint
from goldenkit.pages._html import href, render, slug, write_page
from goldenkit.pages._views import Section, shown_label

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


def _frontier(lb: Any) -> tuple[dict[str, Any], Markup]:
    """What a passing row cost per run (the table's columns and rows) and the quality-cost frontier's plot."""
    from goldenkit.leaderboards import cost_table, frontier_figure
    from goldenkit.pages._plots import _inline, _svg_text

    costs = cost_table(lb).reset_index()
    svg = _inline(_svg_text(frontier_figure(lb)), {}, "pass rate against cost per passing row, the frontier drawn")
    return {"columns": list(costs.columns), "rows": [list(line) for line in costs.itertuples(index=False)]}, Markup(svg)


def board_page(prefix: str, lb: Any, left_out: pd.DataFrame, *, dataset: str, site_title: str) -> str:
    """The leaderboard page of one benchmark group (``lb`` from :func:`goldenkit.leaderboard`)."""
    from goldenkit.leaderboards import frontier_line

    runs = [
        {**r, "rank": _rank(r["rank_low"], r["rank_high"]), "shown_label": shown_label(r["label"], r["run_id"])}
        for r in lb.table.to_dict("records")
    ]
    costs, svg = _frontier(lb)
    return render(
        "site_leaderboard.html.j2",
        site_title=site_title,
        prefix=prefix,
        dataset=dataset,
        rule=lb.rule,
        at_k=int(lb.at_k),
        alpha=lb.alpha,
        runs=runs,
        top_note=TOP_NOTE.format(alpha=lb.alpha),
        frontier_line=frontier_line(lb),
        costs=costs,
        frontier_svg=svg,
        notes=list(lb.notes),
        pairs=lb.pairs.to_dict("records"),
        left_out=left_out.to_dict("records"),
    )


def not_comparable_page(prefix: str, why: str, runs: pd.DataFrame, *, site_title: str) -> str:
    """The page of a group whose runs cannot be ranked together: it says why, and ranks nothing."""
    shown = [{**r, "label": labelled(r.get("label"), r["run_id"])} for r in runs.to_dict("records")]
    return render("site_not_comparable.html.j2", site_title=site_title, prefix=prefix, why=why, runs=shown)


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
