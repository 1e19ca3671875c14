"""Exploring a comparison in Jupyter: filter the rows, and the paired table, forest plot and flip list follow.

``goldenkit.explore(base, cand)`` opens an :class:`ExploreWidget` over two runs (or a
baseline and a run): dropdowns for **slice**, **tag** and **grader**, then the
comparability statement, the paired table (:func:`format_compare_table`), the
forest plot (:func:`forest_figure`) and the flip list (:func:`flip_list_html`) of
the rows that pass every filter.

The numbers are :func:`goldenkit.compare.compare_runs` itself, run on both sides
seen through the same row filter (a baseline as a copy holding those rows): the
same collapse, McNemar, Holm over the slices shown and flip list as the compare
notebook, on fewer rows. The filters:

* ``slice``: rows of that slice (the base's);
* ``tag``: rows carrying that tag on either side;
* ``grader``: rows where that grader failed in a graded repeat on either side
  (a baseline snapshot keeps the reasons but not each grader's verdict, so on a
  baseline side only the candidate's failures count). This filter selects rows
  by their outcome: the pass rates it shows are of those rows, not of a slice,
  and the summary says so.

:class:`Explorer` holds that logic without widgets (and is tested on its own);
:class:`ExploreWidget` only wires it to ipywidgets.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from html import escape
from typing import Any

import pandas as pd

from goldenkit._registry import publish
from goldenkit.baselines import Baseline
from goldenkit.compare import Comparison, outcome_columns, resolve_side
from goldenkit.errors import InputError
from goldenkit.records import grader_results
from goldenkit.report._compare import (
    comparability_banner,
    flip_list_html,
    forest_figure,
    format_compare_table,
    try_compare,
)
from goldenkit.report._html import STYLE, HTMLBlock

__all__ = ["ALL", "FILTERS", "ExploreWidget", "Explorer", "explore"]

ALL = "(all)"
FILTERS = ("slice", "tag", "grader")


class _Rows:
    """A run seen through a row filter: its manifest, and its outcomes of the given rows only."""

    def __init__(self, side: Any, ids: frozenset[str]) -> None:
        self._side, self._ids = side, ids

    @property
    def run_id(self) -> str:
        return str(getattr(self._side, "run_id", "") or "")

    @property
    def manifest(self) -> dict[str, Any]:
        return dict(self._side.manifest)

    def outcomes(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        cols = list(dict.fromkeys([*(columns or []), "row_id"]))
        got = outcome_columns(self._side, cols)
        return got[got["row_id"].astype(str).isin(self._ids)][list(columns or got.columns)].reset_index(drop=True)


def _through(side: Any, ids: frozenset[str]) -> Any:
    if isinstance(side, Baseline):
        return dataclasses.replace(side, rows=side.rows[side.rows["row_id"].astype(str).isin(ids)])
    return _Rows(side, ids)


def _tags_and_failures(side: Any) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per row id of one side: its tags, and the graders that failed in a graded repeat (none for a baseline)."""
    tags: dict[str, set[str]] = {}
    failed: dict[str, set[str]] = {}
    if isinstance(side, Baseline):
        for rid, t in zip(side.rows["row_id"].astype(str), side.rows["tags"], strict=True):
            tags.setdefault(rid, set()).update(str(x) for x in (t if t is not None else []))
        return tags, failed
    got = outcome_columns(side, ["row_id", "verdict", "tags", "graders"])
    cols = (got["row_id"].astype(str), got["verdict"].astype(str), got["tags"], got["graders"])
    for rid, verdict, t, graders in zip(*cols, strict=True):
        tags.setdefault(rid, set()).update(str(x) for x in (t if t is not None and not isinstance(t, float) else []))
        if verdict in ("PASS", "FAIL"):
            bad = {name for name, g in grader_results(graders).items() if g.get("passed") is False}
            failed.setdefault(rid, set()).update(bad)
    return tags, failed


class Explorer:
    """The comparison of ``base`` and ``cand`` on the rows passing the filters (see the module docstring)."""

    def __init__(self, base: Any, cand: Any, *, rule: str = "majority", alpha: float = 0.05) -> None:
        self.base, self.cand, self.rule, self.alpha = base, cand, rule, alpha
        self.full, self.differences = try_compare(base, cand, rule=rule, alpha=alpha)
        self.filters: dict[str, str | None] = dict.fromkeys(FILTERS)
        self._cache: dict[tuple[str | None, ...], Comparison | None] = {}
        rows = self.full.rows if self.full is not None else pd.DataFrame(columns=["row_id", "slice"])
        self._slice = dict(zip(rows["row_id"].astype(str), rows["slice"].astype(str), strict=True))
        self._tags: dict[str, set[str]] = {}
        self._failed: dict[str, set[str]] = {}
        if self.full is not None:
            for side in (base, cand):
                tags, failed = _tags_and_failures(side)
                for rid, t in tags.items():
                    self._tags.setdefault(rid, set()).update(t)
                for rid, g in failed.items():
                    self._failed.setdefault(rid, set()).update(g)

    def options(self, name: str) -> list[str]:
        """The values a filter can take (sorted), for a dropdown."""
        if name == "slice":
            return sorted(set(self._slice.values()))
        if name == "tag":
            return sorted({t for rid in self._slice for t in self._tags.get(rid, ())})
        if name == "grader":
            return sorted({g for rid in self._slice for g in self._failed.get(rid, ())})
        raise InputError(f"unknown filter {name!r}: use one of {', '.join(FILTERS)}")

    def set_filter(self, **filters: str | None) -> None:
        """Set filters by name; ``None``, ``""`` or ``"(all)"`` clears one."""
        for name, value in filters.items():
            if name not in FILTERS:
                raise InputError(f"unknown filter {name!r}: use one of {', '.join(FILTERS)}")
            self.filters[name] = None if value in (None, "", ALL) else value

    @property
    def row_ids(self) -> list[str]:
        """The rows (of the full comparison, in its order) that pass every filter."""
        f = self.filters
        return [
            rid
            for rid, sl in self._slice.items()
            if (f["slice"] is None or sl == f["slice"])
            and (f["tag"] is None or f["tag"] in self._tags.get(rid, ()))
            and (f["grader"] is None or f["grader"] in self._failed.get(rid, ()))
        ]

    @property
    def comparison(self) -> Comparison | None:
        """The comparison of the filtered rows; None when the runs are not comparable or no row passes."""
        if self.full is None or all(v is None for v in self.filters.values()):
            return self.full
        key = tuple(self.filters[n] for n in FILTERS)
        if key not in self._cache:
            ids = frozenset(self.row_ids)
            self._cache[key] = None
            if ids:
                base, cand = _through(self.base, ids), _through(self.cand, ids)
                self._cache[key] = try_compare(base, cand, rule=self.rule, alpha=self.alpha)[0]
        return self._cache[key]

    def summary(self) -> str:
        """What is shown: how many rows of how many, under which filters, and b / c overall."""
        chosen = [f"{n} = {v}" for n, v in self.filters.items() if v is not None]
        text = f"{len(self.row_ids)} of {len(self._slice)} rows" + (f" ({', '.join(chosen)})" if chosen else "")
        cmp = self.comparison
        if cmp is not None:
            p = float(cmp.overall["p_val"])
            text += f"; overall b (broke) = {cmp.b}, c (fixed) = {cmp.c}, exact McNemar p = {p:.4g}"
        elif self.full is not None:
            text += ": no row matches the filters"
        if self.filters["grader"] is not None:
            text += "; rows chosen by a grader's failures: the pass rates are of those rows only"
        return text


def _table_html(cmp: Comparison | None) -> str:
    shown = format_compare_table(cmp)
    return shown.to_html(escape=True, classes="gk-table") if isinstance(shown, pd.DataFrame) else str(shown)


def _forest_html(cmp: Comparison | None) -> str:
    fig = forest_figure(cmp)
    return fig if isinstance(fig, str) else f'<div class="gk-forest">{fig._repr_html_()}</div>'


class ExploreWidget:
    """An ipywidgets front end over :class:`Explorer` (displays itself; the widget is ``.widget``)."""

    def __init__(self, explorer: Explorer, *, flip_limit: int = 50) -> None:
        import ipywidgets as w

        self.explorer, self.flip_limit = explorer, flip_limit
        self.dropdowns = {
            name: w.Dropdown(options=[ALL, *explorer.options(name)], value=ALL, description=name) for name in FILTERS
        }
        # the stylesheet goes with the banner, the one part refresh never replaces (the widget's tables use it too)
        self.banner = w.HTML(STYLE + comparability_banner(explorer.full, explorer.differences))
        self.summary = w.HTML()
        self.table = w.HTML()
        self.forest = w.HTML()
        self.flips = w.HTML()
        for dd in self.dropdowns.values():
            dd.observe(self._on_filter, names="value")
        filters = w.HBox(list(self.dropdowns.values()))
        table_head, flips_head = w.HTML("<h4>Per slice and overall</h4>"), w.HTML("<h4>Flip list</h4>")
        self.widget = w.VBox(
            [self.banner, filters, self.summary, table_head, self.table, self.forest, flips_head, self.flips]
        )
        self.refresh()

    def _on_filter(self, _change: Any) -> None:
        self.explorer.set_filter(**{name: dd.value for name, dd in self.dropdowns.items()})
        self.refresh()

    def refresh(self) -> None:
        cmp = self.explorer.comparison
        self.summary.value = f"<p><b>{escape(self.explorer.summary())}</b></p>"
        if cmp is None and self.explorer.full is not None:  # comparable, but no row passes the filters
            none = HTMLBlock("<p>No row matches the filters.</p>")
            self.table.value, self.forest.value, self.flips.value = none, "", none
            return
        self.table.value = _table_html(cmp)
        self.forest.value = _forest_html(cmp)
        self.flips.value = flip_list_html(cmp, limit=self.flip_limit)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def explore(
    base: Any,
    cand: Any,
    *,
    rule: str = "majority",
    alpha: float = 0.05,
    results_dir: str | os.PathLike[str] = "results",
    baselines_dir: str | os.PathLike[str] = "baselines",
    flip_limit: int = 50,
) -> ExploreWidget:
    """A widget to explore the comparison of ``base`` and ``cand`` by slice, tag and grader (module docstring).

    ``base`` and ``cand``: runs, baselines, or what names one (a run folder, a run id
    under ``results_dir``, a baseline name under ``baselines_dir``), as for
    :func:`goldenkit.compare_runs`. Two runs that are not comparable show why, and nothing else.

    >>> gk.explore("baselines/main.json", "results/latest")   # doctest: +SKIP
    """
    b, c = (resolve_side(x, results_dir, baselines_dir) for x in (base, cand))
    return ExploreWidget(Explorer(b, c, rule=rule, alpha=alpha), flip_limit=flip_limit)


publish(globals())
