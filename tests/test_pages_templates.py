"""The site's own pages render through autoescaped templates (goldenkit/templates/site_*.html.j2).

A site whose every free text carries markup (run ids, model names, a label, a dataset name, a response, a
baseline's note, a benchmark prefix) is built without rendering reports; each kind of page (index, datasets,
a dataset's history, baselines, a leaderboard, a group that is not comparable) shows those texts as text: no
element and no attribute of theirs reaches a page, and the reader sees them verbatim. The page modules hold no
HTML in their Python strings: the markup is the templates'.
"""

from __future__ import annotations

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from leaderboard_site import HOSTILE_MODEL, HOSTILE_PREFIX, HOSTILE_RUN, benchmark_run
from run_factory import manifest, outcomes, write_run

import goldenkit.pages
from goldenkit._display import table_html, templates
from goldenkit.baselines import save_baseline
from goldenkit.pages import build_site
from goldenkit.pages._html import slug
from goldenkit.results import read_run

RESPONSE = 'Sure! <script>alert("r")</script><img src=x onerror=alert(2)> & done'
LABEL = "<b onmouseover=alert(3)>night</b>"
DATASET = 'support<i>"&'
NOTE = "release <img src=x onerror=alert(4)>"
ODD_PREFIX = "odd<svg onload=alert(5)>"
ODD_RUN = "o<img src=y onerror=alert(6)>"  # a run id names a folder: no slash


class _Elements(HTMLParser):
    """A page's elements (name, attributes) and the text a reader sees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Elements:
    parsed = _Elements()
    parsed.feed(html)
    return parsed


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    results, baselines = root / "results", root / "baselines"
    benchmark_run(results, "ok", HOSTILE_PREFIX, 20, 20)
    benchmark_run(results, HOSTILE_RUN, HOSTILE_PREFIX, 12, 20, model=HOSTILE_MODEL)
    benchmark_run(results, ODD_RUN, ODD_PREFIX, 8, repeats=3)
    benchmark_run(results, "odd-b", ODD_PREFIX, 7, repeats=1)
    for i, verdict in enumerate(("PASS", "FAIL"), 1):
        man = manifest(f"night-{i}", repeats=1, model_id=HOSTILE_MODEL)
        man["dataset"] = {**man["dataset"], "name": DATASET}
        man["label"] = LABEL
        man["started_at"] = f"2026-11-0{i}T02:00:00Z"
        frame = outcomes([("r1", "shipping<u>", [verdict]), ("r2", "refunds", ["PASS"])], run_id=f"night-{i}")
        frame["response"] = RESPONSE
        write_run(results, man, frame)
    save_baseline(read_run(results / "night-1"), "main", baselines_dir=baselines, note=NOTE)
    build_site(root / "site", results, baselines, title="Site <em>title</em>", render=False)
    return root / "site"


PAGES = {  # every kind of page the site writes itself, and free texts (with their markup) each shows
    "index.html": (HOSTILE_RUN, HOSTILE_MODEL, LABEL, DATASET, HOSTILE_PREFIX, ODD_PREFIX),
    "datasets.html": (DATASET,),
    f"datasets/{slug(DATASET)}.html": (DATASET, LABEL, RESPONSE, "shipping<u>"),
    "baselines.html": (NOTE, DATASET),
    f"leaderboards/{slug(HOSTILE_PREFIX)}.html": (HOSTILE_PREFIX, HOSTILE_RUN, HOSTILE_MODEL),
    f"leaderboards/{slug(ODD_PREFIX)}.html": (ODD_PREFIX, ODD_RUN),
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_markup_in_every_free_text_is_shown_as_text_on_every_page(site: Path, name: str) -> None:
    html = (site / name).read_text(encoding="utf-8")
    parsed = _parse(html)
    names = [tag for tag, _ in parsed.tags]
    scripts = 1 if name == "index.html" else 0  # the index's own filter/sort script, nothing else
    assert (names.count("script"), names.count("img"), names.count("i"), names.count("u")) == (scripts, 0, 0, 0)
    assert names.count("b") == names.count("em") == 0
    assert "svg" not in names or name.startswith("datasets/") or name.startswith("leaderboards/x")  # plots only
    handlers = [(tag, a) for tag, attrs in parsed.tags for a, _ in attrs if a.startswith("on")]
    assert handlers == []
    text = "".join(parsed.text)
    for shown in PAGES[name]:
        assert shown in text, shown  # verbatim, as text
    assert "Site <em>title</em>" in text and "<title>" not in text
    meta = [
        dict(attrs)
        for tag, attrs in parsed.tags
        if tag == "meta" and ("http-equiv", "Content-Security-Policy") in attrs
    ]
    assert [m["content"] for m in meta] == [goldenkit.pages._html.CSP]


def test_the_index_keeps_its_sort_keys_and_filters(site: Path) -> None:
    parsed = _parse((site / "index.html").read_text(encoding="utf-8"))
    rows = [dict(a) for tag, a in parsed.tags if tag == "tr" and dict(a).get("data-state")]
    assert {r["data-dataset"] for r in rows} >= {DATASET, "support"}
    keys = [dict(a)["data-sort"] for tag, a in parsed.tags if tag == "span" and "data-sort" in dict(a)]
    assert f"{LABEL} (night-2)" in keys and HOSTILE_MODEL in keys  # the label sorts as the cell reads
    options = [dict(a)["value"] for tag, a in parsed.tags if tag == "option"]
    assert options == ["", "ok", "invalid", "incomplete", "corrupt", "", "support", DATASET]
    heads = [dict(a).get("class") for tag, a in parsed.tags if tag == "th"][:15]
    assert all(c is not None and c.split()[0] == "sortable" for c in heads)


PAGE_MODULES = sorted(Path(goldenkit.pages.__file__).parent.glob("*.py"))
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?=[\s>/])")
#: matplotlib's SVG document, made into inline markup by goldenkit.pages._plots (ids, tooltips, root attributes)
SVG_SURGERY = {"_plots.py": {"svg", "a", "title", "metadata"}}


def _strings(tree: ast.Module) -> list[str]:
    """The string literals of a module, its docstrings left out (they document, they build nothing)."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_the_page_modules_build_no_html_in_python() -> None:
    """Every page's markup is in its template: no tag in a string literal of goldenkit/pages (f-strings' parts
    included), but for the SVG surgery on matplotlib's plots."""
    found = []
    for path in PAGE_MODULES:
        tags = {t.lstrip("</") for s in _strings(ast.parse(path.read_text(encoding="utf-8"))) for t in TAG.findall(s)}
        found += [f"{path.name}: <{t}>" for t in sorted(tags - SVG_SURGERY.get(path.name, set()))]
    assert len(PAGE_MODULES) >= 6 and found == []
    assert TAG.findall('f"<td class=\\"num\\">{c}</td>"') == ["<td", "</td"]  # the check sees a tag


def test_one_table_renderer_for_notebooks_and_the_site() -> None:
    """goldenkit._display.table_html (notebooks, reports) and the site's pages render tables with the same
    macro: a notebook's table and a site's table differ only by what is asked of them."""
    import pandas as pd

    macro = templates().get_template("gk_table.html.j2").module.table  # type: ignore[attr-defined]
    frame = pd.DataFrame({"slice": ["a<b>"], "rows": [1200]})
    notebook = table_html(frame)
    assert str(macro(["slice", "rows"], [["a<b>", "1,200"]], {1}, cls="gk-table")) in notebook
    site = str(macro(["run", "n"], [["r&1", 3]], (1,), id="runs", row_attrs=[{"data-state": 'o"k'}], sort=[[None, 3]]))
    assert site == (
        '<table id="runs"><thead><tr><th class="sortable">run</th><th class="sortable gk-num">n</th></tr></thead>'
        '<tbody><tr data-state="o&quot;k"><td>r&amp;1</td><td class="gk-num"><span data-sort="3">3</span></td></tr>'
        "</tbody></table>"
    )
    templates_dir = Path(goldenkit.pages.__file__).parent.parent / "templates"
    tables = [p.name for p in sorted(templates_dir.iterdir()) if "<table" in p.read_text(encoding="utf-8")]
    assert tables == ["gk_table.html.j2"]
