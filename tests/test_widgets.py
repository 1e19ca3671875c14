"""The notebook widgets' logic without a browser: the audit widget's apply button, and goldenkit.explore.

tests/test_jupyterlab.py clicks through the same widgets in a real JupyterLab.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

import goldenkit
from goldenkit import audit
from goldenkit.baselines import save_baseline
from goldenkit.compare import compare_runs
from goldenkit.dataset import read_dataset
from goldenkit.errors import InputError
from goldenkit.report._explore import ALL, Explorer, ExploreWidget, explore
from goldenkit.results import read_run

DATA = Path(__file__).resolve().parent / "data" / "runs"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """A run folder and its dataset as a person has them: results/cand and dataset/ beside it."""
    shutil.copytree(DATA / "cand", tmp_path / "results" / "cand")
    shutil.copytree(DATA / "dataset", tmp_path / "dataset")
    return tmp_path


def _session(folder: Path, monkeypatch: pytest.MonkeyPatch) -> audit.AuditSession:
    monkeypatch.chdir(folder)  # the run records its dataset as "dataset"
    return audit.open_audit("results/cand", audits_dir=folder / "audits", day="2026-10-02")


def _summary_counts(html: str) -> dict[str, dict[str, int]]:
    """The audit summary's per-slice table as {slice: {column: count}} (read from its HTML)."""
    table = html[html.index("<table") :]
    heads = re.findall(r"<th>([^<]*)</th>", table[: table.index("</tr>")])[1:]  # after the index column
    rows = re.findall(r"<tr>\s*<th>([^<]*)</th>((?:\s*<td>\d+</td>)+)", table)
    return {sl: dict(zip(heads, map(int, re.findall(r"<td>(\d+)</td>", cells)), strict=True)) for sl, cells in rows}


def test_the_audit_widgets_apply_button_asks_then_writes_a_new_dataset_version(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _session(folder, monkeypatch)
    w = s.widget()
    live = s.summary(live=True)
    assert not w.apply_button.disabled
    w.apply_button.click()
    assert w.status_text.startswith("not applied: no marks on this dataset version")
    assert w.confirm.layout.display == "none"  # nothing to confirm
    first, second = s.failures["row_id"].iloc[0], s.failures["row_id"].iloc[1]
    slice_of_first = s.failures["slice"].iloc[0]
    w.label.value, w.note.value = "label_error", "the expectation is stale"
    w.correction.value = '{"case": {"reference": "A better answer."}}'
    w.save.click()
    # the summary shown above the widget follows the mark: its slice has one label error now
    shown = _summary_counts(live.value)
    assert shown[slice_of_first]["label_error"] == 1 and shown[slice_of_first]["marked"] == 1
    w.next_button.click()
    w.label.value = "agent_error"
    w.save.click()
    assert sum(c["marked"] for c in _summary_counts(live.value).values()) == 2
    new = folder / "dataset-1.1.0"
    w.apply_button.click()  # asks first, naming the version and the folder it would write
    assert w.status_text == (
        "write fixture-support 1.1.0 to dataset-1.1.0 with 1 label error corrected or dropped? "
        "Nothing is written until you confirm."
    )
    assert w.confirm.layout.display == "flex" and not new.exists()
    w.cancel_button.click()
    assert w.status_text.startswith("not applied: cancelled") and not new.exists()
    assert w.confirm.layout.display == "none"
    w.apply_button.click()
    w.confirm_button.click()
    assert w.status_text.startswith("wrote fixture-support 1.1.0 to dataset-1.1.0 (sha256 ")  # where it was read
    assert f"relabelled {first}" in w.status_text and "left as they are: 1 agent_error" in w.status_text
    ds = read_dataset(new)
    assert ds.version == "1.1.0" and ds.raw_case(first)["reference"] == "A better answer."
    assert second in ds.ids and "the expectation is stale" in ds.manifest["changelog"][-1]["why"]
    w.apply_button.click()  # once is enough: the version's folder exists, so there is nothing to confirm
    assert w.status_text.startswith("not applied: ") and "already" in w.status_text
    assert w.confirm.layout.display == "none"
    assert read_dataset(folder / "dataset").version == "1.0.0"  # the old folder is untouched


def test_without_the_dataset_the_apply_button_is_disabled(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.rmtree(folder / "dataset")
    s = _session(folder, monkeypatch)
    assert s.dataset is None and s.widget().apply_button.disabled
    with pytest.raises(InputError, match="dataset is not at hand"):
        s.apply()


def _sides() -> tuple[goldenkit.Run, goldenkit.Run]:
    return read_run(DATA / "base"), read_run(DATA / "cand")


def test_explore_filters_by_slice_as_the_full_comparisons_slice_line() -> None:
    base, cand = _sides()
    e = Explorer(base, cand)
    full = compare_runs(base, cand)
    assert e.comparison is e.full and e.options("slice") == sorted(full.slices["slice"].astype(str))
    for sl in e.options("slice"):
        e.set_filter(slice=sl)
        line = full.table.set_index(full.table["slice"].astype(str)).loc[sl]
        got = e.comparison
        assert got is not None
        assert (got.b, got.c, int(got.overall["n_paired"])) == (int(line["b"]), int(line["c"]), int(line["n_paired"]))
        assert set(got.flips["row_id"]) == set(full.flips[full.flips["slice"] == sl]["row_id"])
        assert e.summary().startswith(f"{int(line['rows'])} of {len(full.rows)} rows (slice = {sl})")


def test_explore_filters_by_tag_and_grader_and_says_when_nothing_matches() -> None:
    base, cand = _sides()
    e = Explorer(base, cand)
    tags = pd.concat([base.outcomes(columns=["row_id", "tags"]), cand.outcomes(columns=["row_id", "tags"])])
    long_rows = {r for r, t in zip(tags["row_id"], tags["tags"], strict=True) if "long" in list(t)}
    e.set_filter(tag="long")
    assert set(e.row_ids) == long_rows and set(e.comparison.rows["row_id"]) == long_rows  # type: ignore[union-attr]
    e.set_filter(tag=ALL, grader="contract")
    assert "the pass rates are of those rows only" in e.summary()
    graded = cand.outcomes(columns=["row_id", "verdict"])
    failing = set(graded[graded["verdict"] == "FAIL"]["row_id"])
    assert failing <= set(e.row_ids)  # every row the contract failed on is kept
    e.set_filter(grader=None, slice="shipping", tag="adversarial")  # no adversarial row ships
    assert e.row_ids == [] and e.comparison is None and e.summary().endswith("no row matches the filters")
    w = ExploreWidget(e)
    assert "No row matches the filters." in w.table.value and w.forest.value == ""
    with pytest.raises(InputError, match="unknown filter"):
        e.set_filter(model="x")


def test_explore_takes_a_baseline_and_names(tmp_path: Path) -> None:
    base, cand = _sides()
    save_baseline(base, "main", baselines_dir=tmp_path / "baselines")
    w = explore("main", DATA / "cand", baselines_dir=tmp_path / "baselines")
    assert isinstance(w, ExploreWidget) and w.explorer.full is not None
    w.dropdowns["slice"].value = "refunds"
    assert w.explorer.comparison is not None and w.explorer.comparison.base_id == "main"
    assert "6 of 24 rows (slice = refunds)" in w.summary.value
    assert "<table" in w.table.value and w.forest.value.startswith(
        '<div class="gk-forest"><figure class="gk-figure"><svg '
    )
    assert "NEW_FAILURE" in w.flips.value
    w.dropdowns["slice"].value = ALL
    assert "24 of 24 rows;" in w.summary.value
    bundle = w._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_explore_of_runs_that_cannot_be_compared_says_why(tmp_path: Path) -> None:
    base, _ = _sides()
    other = tmp_path / "other"
    shutil.copytree(DATA / "cand", other)
    man = json.loads((other / "run.json").read_text())
    man["repeats"] = 5
    (other / "run.json").write_text(json.dumps(man))
    w = explore(base, other)
    assert w.explorer.full is None and "COMPARISON INVALID" in w.banner.value
    assert "Not shown" in w.table.value and w.explorer.options("slice") == []


def test_flip_texts_are_escaped_in_the_widget() -> None:
    w = explore(*_sides())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in w.flips.value and "<script>alert(1)" not in w.flips.value
