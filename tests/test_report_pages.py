"""The pages people read: the decision first, every table formatted for people, and the site's reports
rendered without a kernel, holding what ``goldenkit report``'s hold.

The rendered pages are those of report_fixtures (``goldenkit report`` through papermill, plus the audit,
coverage and an invalid comparison), a leaderboard, the report of a run whose agent counts no tokens,
and the pages of a site built over a few runs.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest
from leaderboard_site import benchmark_run
from pages_site import rendered_site
from report_fixtures import rendered
from run_factory import manifest, outcomes, write_run

from goldenkit._scrub import secrets_in_use
from goldenkit.notebooks import _inprocess as inprocess
from goldenkit.notebooks._inprocess import RenderJob, render_notebook, render_notebooks

#: what raw pandas output leaves in a page: a missing float, a missing integer, a float printed with 6 decimals
RAW = ("NaN", "<NA>", ".000000")


def visible_text(page: str) -> str:
    """What a reader sees: the page without its scripts, styles and tags (attributes such as image data out)."""
    body = re.sub(r"(?is)<(script|style)\b.*?</\1\s*>", " ", page)
    return html.unescape(re.sub(r"(?s)<[^>]*>", " ", body))


def same_content(page: str) -> str:
    """A page without its cells' ids (random per executed notebook)."""
    return re.sub(r'id="cell-id=[^"]*"', 'id="cell-id"', page)


@pytest.fixture(scope="module")
def extra_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A leaderboard page and the report of a run without token counts (a callable agent), in process."""
    root = tmp_path_factory.mktemp("pages")
    runs = [benchmark_run(root / "results", f"m{i}", "support", passed, 20) for i, passed in enumerate((18, 12, 15))]
    data = [("a", "refunds", ["PASS", "PASS"]), ("b", "refunds", ["FAIL", "PASS"]), ("c", "billing", ["ERROR"] * 2)]
    frame = outcomes(data, run_id="callable")
    frame["tokens_in"] = frame["tokens_out"] = None
    frame["latency_ms"] = 400.0
    callable_run = write_run(root / "results", manifest("callable", repeats=2), frame)
    return {
        "leaderboard": render_notebook("leaderboard", {"runs": [str(r) for r in runs]}, root / "leaderboard.html"),
        "callable": render_notebook("report", {"run": str(callable_run)}, root / "callable.html"),
    }


@pytest.mark.slow
def test_compare_html_leads_with_the_decision() -> None:
    text = visible_text(rendered()["compare"].read_text(encoding="utf-8"))
    order = ["Paired comparison", "gate PASSED", "COMPARABLE: ", "Gate rules", "b (broke)", "Flip list"]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    page = rendered()["compare"].read_text(encoding="utf-8")
    first = re.search(r'class="gk-banner gk-banner-(\w+)"[^>]*>([^<]*)', page)
    assert first is not None and first.group(1) == "ok" and first.group(2).startswith("gate PASSED")
    assert 'class="gk-banner gk-banner-info">COMPARABLE: ' in page  # comparability: a statement, not a verdict
    invalid = rendered()["compare_invalid"].read_text(encoding="utf-8")
    first = re.search(r'class="gk-banner gk-banner-(\w+)"[^>]*>([^<]*)', invalid)
    assert first is not None and first.group(1) == "warn" and "gate NOT EVIDENCE" in first.group(2)
    assert "<li>baseline.comparable: baseline not comparable" in invalid  # the failing rule, under the decision


@pytest.mark.slow
def test_no_page_shows_raw_pandas_output(extra_pages: dict[str, Path]) -> None:
    pages = {key: rendered()[key] for key in ("report", "compare", "compare_invalid", "audit", "coverage")}
    pages.update(extra_pages)
    result, _, _ = rendered_site()
    pages.update({f"site {p.relative_to(result.path)}": p for p in sorted(result.path.rglob("*.html"))})
    assert any(name.startswith("site runs/") for name in pages)  # the site's own rendered reports
    for name, path in pages.items():
        text = visible_text(path.read_text(encoding="utf-8"))
        found = [token for token in RAW if token in text]
        assert found == [], f"{name}: {found}"
    callable_text = visible_text(extra_pages["callable"].read_text(encoding="utf-8"))
    assert "tokens in" in callable_text and " 400 " in callable_text  # a dash, never <NA>, and no 400.0
    audit = rendered()["audit"].read_text(encoding="utf-8")
    assert "No row marked yet: mark failing rows above" in audit  # the empty label-error table says what fills it
    report = rendered()["report"].read_text(encoding="utf-8")
    assert "<th>field</th>" not in report and "<th>value</th>" not in report  # the run key: no stray header
    assert '<table class="dataframe' not in report and '<table class="dataframe' not in audit.split("Failing rows")[1]


@pytest.mark.slow
@pytest.mark.parametrize("key", ["report", "compare", "compare_invalid"])
def test_pages_render_what_goldenkit_report_renders(key: str, tmp_path: Path) -> None:
    """The same notebook, parameters and title, without a kernel: the same page but for the cells' ids."""
    page = rendered()[key]
    executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    parameters = dict(executed.metadata["papermill"]["parameters"])
    title = html.unescape(re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8")).group(1))  # type: ignore[union-attr]
    ours = render_notebook(page.stem, parameters, tmp_path / page.name, title=title)
    assert same_content(ours.read_text(encoding="utf-8")) == same_content(page.read_text(encoding="utf-8"))


def test_a_batch_renders_on_worker_processes_with_the_callers_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "zq-9f8e7d6c5b4a-secret"
    frame = outcomes(
        [("a", "refunds", ["PASS"]), ("b", "refunds", ["FAIL"]), ("c", "refunds", ["ERROR"])], run_id="leaky"
    )
    failed = {"contract": {"passed": False, "score": 0.0, "reason": f"quoted the key {secret}", "error": False}}
    frame["graders"] = [failed if v == "FAIL" else g for v, g in zip(frame["verdict"], frame["graders"], strict=True)]
    # the ERROR's reason is shown as the provider gave it (findings are value-free): the page masks the key
    frame["detail"] = [
        f"HTTP 500 for key {secret}" if v == "ERROR" else d
        for v, d in zip(frame["verdict"], frame["detail"], strict=True)
    ]
    run = write_run(tmp_path / "results", manifest("leaky"), frame, raw=True)  # the key as a file could hold it
    jobs = [RenderJob("report", {"run": str(run)}, tmp_path / "site" / f"{i}.html", f"report {i}") for i in range(3)]
    jobs.append(RenderJob("report", {"run": str(run), "rule": "most"}, tmp_path / "site" / "bad.html"))
    monkeypatch.setattr(inprocess, "POOL_MIN", 2)  # three pages: on two workers, not in this process
    with secrets_in_use(secret):
        done = render_notebooks(jobs, workers=2)
    assert [d.html for d in done] == [j.html for j in jobs]
    assert [d.error is None for d in done] == [True, True, True, False]
    assert "report.ipynb: cell" in str(done[3].error) and "most" in str(done[3].error)
    assert not jobs[3].html.exists()  # a page that failed is not written, half or whole
    pages = [j.html.read_text(encoding="utf-8") for j in jobs[:3]]
    assert all("<title>report" in p and "Why rows fail" in p for p in pages)
    assert all(secret not in p and "***" in p for p in pages)  # the worker knew the caller's secret
    assert sorted(p.name for p in (tmp_path / "site").iterdir()) == ["0.html", "1.html", "2.html"]  # no leftovers


def test_a_cell_that_prints_or_warns_shows_it_as_a_kernel_would(tmp_path: Path) -> None:
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(
        cells=[
            new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
            new_code_cell("import warnings\nprint('hello', x)\nwarnings.warn('careful')\nx * 2"),
            new_code_cell("import warnings\nwarnings.warn('old', DeprecationWarning)"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    executed = inprocess.execute_in_process(path, {"x": 21})
    tags = [c.metadata.get("tags") for c in executed.cells]
    assert tags[:2] == [["parameters"], ["injected-parameters"]]  # papermill's cell, after the parameters
    outputs = executed.cells[2].outputs
    assert outputs[0]["name"] == "stdout" and outputs[0]["text"] == "hello 21\n"
    assert outputs[1]["name"] == "stderr" and "UserWarning: careful" in outputs[1]["text"]
    assert outputs[2]["data"]["text/plain"] == "42"
    # a DeprecationWarning raised by the notebook's own code shows, as IPython shows it
    assert "DeprecationWarning: old" in executed.cells[3].outputs[0]["text"]
    with pytest.raises(Exception, match=r"probe.ipynb: cell 3 \(import warnings\) raised"):
        bad = nbformat.read(path, as_version=4)
        bad.cells[1].source = "import warnings\n1 / 0"
        nbformat.write(bad, path)
        inprocess.execute_in_process(path, {})


def test_the_pages_batch_is_the_reports_of_goldenkit_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without rendering a single page twice: site.py gives the notebooks what goldenkit report gives them."""
    from goldenkit.pages import build_site

    results = tmp_path / "results"
    run = write_run(results, manifest("night"), outcomes([("a", "refunds", ["PASS"])], run_id="night"))
    seen: list[RenderJob] = []

    def record(jobs: list[RenderJob], **_: object) -> list[inprocess.Rendered]:
        seen.extend(jobs)
        return [inprocess.Rendered(j.html, "not rendered in this test", 0.0) for j in jobs]

    monkeypatch.setattr(inprocess, "render_notebooks", record)
    result = build_site(tmp_path / "site", results, tmp_path / "baselines")
    # the run's label (its model here) first, then its id
    assert [(j.notebook, j.title) for j in seen] == [("report", "goldenkit report: model-a (night)")]
    assert seen[0].parameters == {"run": str(run.resolve()), "results_dir": str(results), "rule": "majority"}
    assert result.failures == ["runs/night/report.html: not rendered in this test"]
