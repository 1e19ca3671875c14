"""The notebook widgets as a person uses them: a real JupyterLab, driven by headless Chromium.

The test starts JupyterLab (tests/jupyter_lab.py: 127.0.0.1, a free port, a token,
a temporary folder; stopped by its PID) on a folder laid out as after a run:
``results/base``, ``results/cand`` (``results/latest`` points at it), the run's
``dataset/`` and the bundled audit notebook, unchanged. In Chromium it opens the
notebook, runs every cell from the Run menu and then uses the audit widget: pages
through failing rows, filters by slice, tag, grader and cluster (each count is
checked against :class:`goldenkit.audit.AuditBrowser`), marks a label error with
a note and a correction and an agent error, and applies the marks. The marks file
and the new dataset version are then read back from disk. A second notebook of one
cell, ``gk.explore("results/base", "results/cand")``, is filtered by slice, tag and
grader, and the paired table, the forest plot and the flip list must follow
(checked against :class:`goldenkit.report._explore.Explorer`). The report.ipynb and
compare.ipynb ``goldenkit report`` leaves in the run's folder are opened as executed
(untrusted: JupyterLab sanitizes their HTML) and must show their figure as a drawn image;
the same figure as inline SVG, the control, loses its drawing there. No request may leave
the local server.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jupyter_client.manager  # noqa: F401  # before goldenkit report's threads import it at once
import nbformat
import pandas as pd
import pytest
from headless import VIEWPORT, chromium, not_local, record_requests, require_chromium
from jupyter_lab import Lab, jupyter_lab

from goldenkit import audit, report
from goldenkit.cli import main as cli_main
from goldenkit.dataset import read_dataset
from goldenkit.report._explore import Explorer
from goldenkit.results import read_run
from goldenkit.results._latest import update_latest

require_chromium()

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DATA = Path(__file__).resolve().parent / "data" / "runs"
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
TIMEOUT = 90_000  # ms: JupyterLab and a kernel on two busy cores


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("lab-root")
    for name in ("base", "cand"):
        shutil.copytree(DATA / name, root / "results" / name)
    update_latest(root / "results", "cand")
    shutil.copytree(DATA / "dataset", root / "dataset")
    shutil.copy(NOTEBOOKS / "audit.ipynb", root / "audit.ipynb")
    cells = [nbformat.v4.new_code_cell('import goldenkit as gk\n\ngk.explore("results/base", "results/cand")')]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nbformat.write(nb, root / "explore.ipynb")
    with jupyter_lab(root, tmp_path_factory.mktemp("lab-home")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def _open_and_run_all(browser: Any, lab: Lab, notebook: str) -> tuple[Any, Any, list[str]]:
    """A page with ``notebook`` open in JupyterLab, every cell run from the Run menu: (page, its panel, requests)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)  # a busy machine: the kernel and widgets take their time

    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT)
    requested = record_requests(page)
    page.goto(lab.tree(notebook))
    panel = page.locator(".jp-NotebookPanel:visible")
    expect(page.locator(".jp-Notebook:visible")).to_be_visible()
    expect(page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle"))).to_be_visible()
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    expect(panel.locator(".widget-dropdown").first).to_be_visible()
    return page, panel, requested


def _choose(panel: Any, name: str, value: str) -> None:
    dropdown = panel.locator(".widget-dropdown", has=panel.page.locator("label", has_text=re.compile(f"^{name}$")))
    dropdown.locator("select").select_option(value)


def test_the_audit_notebook_pages_filters_marks_and_applies(browser: Any, lab: Lab) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)  # a busy machine: the kernel and widgets take their time

    reference = audit.open_audit(
        lab.root / "results" / "cand", dataset=lab.root / "dataset", audits_dir=lab.root / "scratch"
    ).browser()
    total = len(reference.view)
    page, panel, requested = _open_and_run_all(browser, lab, "audit.ipynb")
    position = panel.get_by_text(re.compile(r"^page \d+ of \d+ · \d+ failing rows$"))
    expect(position).to_have_text(f"page 1 of {total} · {total} failing rows")
    panel.get_by_role("button", name="next ▶").click()
    expect(position).to_have_text(f"page 2 of {total} · {total} failing rows")
    hostile = reference.options("cluster")[-1]  # what the graders found in a response with markup in it
    assert "<script>" in hostile
    steps = [("tag", reference.options("tag")[0]), ("grader", "contract"), ("cluster", hostile), ("slice", "refunds")]
    for name, value in steps:
        reference.set_filter(**{n: value if n == name else None for n in reference.FILTERS})
        _choose(panel, name, value)  # each filter alone, counted as the library counts it
        n = len(reference.view)
        expect(position).to_have_text(f"page 1 of {n} · {n} failing rows")
        if name == "cluster":  # the response is shown as text, never run
            expect(panel.get_by_text("<script>alert(1)</script>", exact=False).first).to_be_visible()
            assert panel.locator(".jupyter-widgets script").count() == 0
        if name != "slice":
            _choose(panel, name, "(all)")
    refunds = reference.view["row_id"].tolist()
    assert panel.get_by_text(refunds[0], exact=True).count() >= 1  # the card of the first refunds row
    # the summary at the top (failing, marked, label_error, agent_error, unclear per slice) follows the marks
    summary_row = panel.locator("table.dataframe tbody tr").filter(has_text=re.compile(r"^\s*refunds\s"))
    expect(summary_row.locator("td")).to_have_text([str(len(refunds)), "0", "0", "0", "0"])
    panel.locator(".widget-toggle-button", has_text="label_error").click()
    panel.get_by_placeholder("note (why)").fill("policy changed: 30 days")
    panel.get_by_placeholder(re.compile("^correction as JSON")).fill('{"case": {"reference": "Refunds take 30 days."}}')
    panel.get_by_role("button", name="save mark").click()
    expect(panel.get_by_text(f"saved label_error for {refunds[0]}", exact=False)).to_be_visible()
    expect(panel.get_by_text("marked: label_error")).to_be_visible()
    panel.get_by_role("button", name="next ▶").click()
    expect(position).to_have_text(f"page 2 of {len(refunds)} · {len(refunds)} failing rows")
    panel.locator(".widget-toggle-button", has_text="agent_error").click()
    panel.get_by_role("button", name="save mark").click()
    expect(panel.get_by_text(f"saved agent_error for {refunds[1]}", exact=False)).to_be_visible()
    expect(summary_row.locator("td")).to_have_text([str(len(refunds)), "2", "1", "1", "0"])  # no re-run needed
    panel.get_by_role("button", name="apply as new version").click()  # asks first, naming what it would write
    expect(
        panel.get_by_text("write fixture-support 1.1.0 to dataset-1.1.0 with 1 label error", exact=False)
    ).to_be_visible()
    assert not (lab.root / "dataset-1.1.0").exists()
    panel.get_by_role("button", name="confirm: write it").click()
    status = panel.get_by_text("wrote fixture-support 1.1.0 to dataset-1.1.0", exact=False)
    expect(status).to_be_visible()
    # the long status line wraps inside the panel: nothing of it is cut off
    assert status.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "jupyterlab-audit.png"))
    day = datetime.now(UTC).date().isoformat()
    lines = (lab.root / "audits" / f"fixture-support-{day}.jsonl").read_text(encoding="utf-8").splitlines()
    marks = [json.loads(line) for line in lines]
    assert [(m["row_id"], m["label"]) for m in marks] == [(refunds[0], "label_error"), (refunds[1], "agent_error")]
    assert marks[0]["note"] == "policy changed: 30 days" and marks[0]["dataset_version"] == "1.0.0"
    assert marks[0]["correction"] == {"case": {"reference": "Refunds take 30 days."}}
    new = read_dataset(lab.root / "dataset-1.1.0")
    assert new.version == "1.1.0" and new.raw_case(refunds[0])["reference"] == "Refunds take 30 days."
    entry = new.manifest["changelog"][-1]
    assert entry["version"] == "1.1.0" and f"relabelled 1 label error(s): {refunds[0]}" in entry["why"]
    assert read_dataset(lab.root / "dataset").version == "1.0.0"  # the old version is untouched
    assert not_local(requested, origin=lab.url) == []
    page.close()


def test_explore_follows_the_filters(browser: Any, lab: Lab) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)  # a busy machine: the kernel and widgets take their time

    reference = Explorer(read_run(lab.root / "results" / "base"), read_run(lab.root / "results" / "cand"))
    page, panel, requested = _open_and_run_all(browser, lab, "explore.ipynb")
    summary = panel.get_by_text(re.compile(r"^\d+ of \d+ rows"))
    expect(summary).to_have_text(reference.summary())
    forest = panel.locator(".gk-forest svg")
    before = forest.text_content()
    shown = reference.row_ids
    for name, value in (("grader", "contract"), ("slice", "refunds"), ("tag", "multi_turn")):  # fewer rows each
        reference.set_filter(**{name: value})
        assert reference.row_ids != shown
        shown = reference.row_ids
        _choose(panel, name, value)
        expect(summary).to_have_text(reference.summary())
        cmp = reference.comparison
        assert cmp is not None
        slices = panel.locator(".widget-html table.gk-table tbody th")
        expect(slices).to_have_text(cmp.table["slice"].astype(str).tolist())  # the paired table's lines
        flips = panel.locator("table.gk-side-by-side tr[id]")
        expect(flips).to_have_count(len(cmp.flips))
        for rid in cmp.flips["row_id"]:
            expect(panel.locator("table.gk-side-by-side")).to_contain_text(str(rid))
        expect(forest).not_to_have_text(before or "")  # the forest plot was redrawn (its labels' counts)
        before = forest.text_content()
    page.screenshot(path=str(ARTIFACTS / "jupyterlab-explore.png"))
    assert not_local(requested, origin=lab.url) == []
    page.close()


# the figures a notebook shows as SVG images; an inline <svg> is what JupyterLab's sanitizer removes
SVG_IMAGE = 'img[src^="data:image/svg+xml;base64,"]'


def _reveal(page: Any, panel: Any, target: Any) -> None:
    """Scroll the notebook down until ``target`` is attached (JupyterLab renders only the cells in view)."""
    for _ in range(60):
        if target.count():
            target.scroll_into_view_if_needed()
            return
        panel.locator(".jp-WindowedPanel-outer").first.evaluate("el => { el.scrollTop += el.clientHeight; }")
        page.wait_for_timeout(250)


@pytest.mark.parametrize(
    ("name", "alt"), [("report", "^Pass rate per slice"), ("compare", " vs .+, paired difference")]
)
def test_an_executed_report_shows_its_figure_untrusted(browser: Any, lab: Lab, name: str, alt: str) -> None:
    """``goldenkit report`` leaves report.ipynb and compare.ipynb in the run's folder; opened as they are (not
    run again, so not trusted: JupyterLab sanitizes their HTML) the pass rate figure and the forest plot show."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)
    out = lab.root / "results" / "cand"
    if not (out / "compare.ipynb").exists():
        assert cli_main(["report", str(out), "--baseline", str(lab.root / "results" / "base")]) == 0
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT)
    requested = record_requests(page)
    page.goto(lab.tree(f"results/cand/{name}.ipynb"))
    panel = page.locator(".jp-NotebookPanel:visible")
    expect(panel.locator(".jp-Notebook")).to_be_visible()
    figure = panel.locator(f".jp-OutputArea-output {SVG_IMAGE}")
    _reveal(page, panel, figure)
    expect(figure).to_have_count(1)
    expect(figure).to_be_visible()
    expect(figure).to_have_attribute("alt", re.compile(alt))
    natural, shown = figure.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
    assert natural > 300 and shown > 300  # the SVG document decoded and drawn, not a broken image
    assert panel.locator(".jp-OutputArea-output svg").count() == 0  # untrusted: no inline SVG would survive
    page.screenshot(path=str(ARTIFACTS / f"jupyterlab-untrusted-{name}.png"))
    assert not_local(requested, origin=lab.url) == []
    page.close()


def test_an_untrusted_notebook_drops_an_inline_svg(browser: Any, lab: Lab) -> None:
    """The control: the same figure as inline SVG (what a notebook showed before) is removed by the sanitizer of
    a notebook JupyterLab does not trust, its labels left as bare text, while the image of it shows."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)
    table = pd.DataFrame(
        {
            "slice": ["refunds", "(overall)"],
            "p_hat": [0.5, 0.5],
            "ci_low": [0.1, 0.2],
            "ci_high": [0.9, 0.8],
            "n": [2, 2],
        }
    )
    fig = report.pass_rate_figure(table)
    outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": "figure"})
        for html in (fig._repr_html_(), fig._repr_mimebundle_()["text/html"])
    ]
    cell = nbformat.v4.new_code_cell("fig", outputs=outputs)
    nb = nbformat.v4.new_notebook(
        cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )
    nbformat.write(nb, lab.root / "inline-svg.ipynb")
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TIMEOUT)
    page.goto(lab.tree("inline-svg.ipynb"))
    shown = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output")
    expect(shown).to_have_count(2)
    expect(shown.nth(0)).to_contain_text(fig.labels[0])  # the inline figure's text is there...
    assert shown.nth(0).locator("svg").count() == 0  # ...but not its drawing
    expect(shown.nth(1).locator(SVG_IMAGE)).to_be_visible()
    assert shown.nth(1).locator(SVG_IMAGE).evaluate("img => img.naturalWidth") > 300
    page.close()
