"""report.html says what it measures: quality first (pass rate and interval, the weakest slices, the failure
clusters, the weighted score), validity as evidence or not, text computed from the run, and a forest plot
that marks what is significant.

The run below is the one a user reported: 30 rows x 3 repeats, 20 rows pass (66.7%), the ``orders`` slice
passes none of its 10 rows, and each of those 10 fails because ``lookup_order`` was not called, each with
its own order id. By hand: Wilson 95% for 20/30 is [48.8%, 80.8%]; orders 0/10 is [0.0%, 27.8%].
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from run_factory import FakeRun, manifest, outcomes, write_run

from goldenkit import report
from goldenkit.cli import main as cli_main
from goldenkit.compare import compare_runs
from goldenkit.errors import ConfigError
from goldenkit.metrics import metric_weights, run_metrics

SLICES = {"orders": "FAIL", "billing": "PASS", "faq": "PASS"}


def _frame(run_id: str, verdicts: dict[str, str] = SLICES, repeats: int = 3) -> pd.DataFrame:
    rows = [(f"{sl}-{i:02d}", sl, (v,) * repeats) for sl, v in verdicts.items() for i in range(10)]
    frame = outcomes(rows, run_id=run_id)
    graders = []
    for rid, verdict in zip(frame["row_id"], frame["verdict"], strict=True):
        if verdict == "FAIL":  # the same cause on every row, with the row's own order id
            n = int(rid.rsplit("-", 1)[1])
            reason = f"tools (IN_ORDER): missing [lookup_order(order_id='A-{1000 + n}')]"
            graders.append({"trajectory": {"passed": False, "score": 0.0, "reason": reason, "error": False}})
        else:
            graders.append({"trajectory": {"passed": True, "score": 1.0, "reason": "ok", "error": False}})
    frame["graders"] = graders
    return frame


def _run(root: Path, run_id: str = "mixed", **kw: Any) -> Path:
    man = manifest(run_id, repeats=kw.pop("repeats", 3), graders={"trajectory": "1"}, **kw)
    return write_run(root, man, _frame(run_id, repeats=man["repeats"]))


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """report.html of the mixed run, rendered by goldenkit report as a user runs it."""
    root = tmp_path_factory.mktemp("quality")
    run = _run(root / "results")
    cfg = root / "goldenkit.toml"
    cfg.write_text("[metrics]\nweights = { trajectory_accuracy = 2 }\n", encoding="utf-8")
    assert cli_main(["report", str(run), "-o", str(root / "out"), "--config", str(cfg)]) == 0
    return (root / "out" / "report.html").read_text(encoding="utf-8")


def _banners(text: str) -> list[tuple[str, str]]:
    return re.findall(r'<div class="gk-banner gk-banner-(\w+)">([^<]*)</div>', text)


@pytest.mark.slow
def test_report_html_leads_with_quality_and_is_never_green_on_a_failing_run(page: str) -> None:
    banners = _banners(page)
    tone, text = banners[0]
    assert tone == "bad" and text.startswith("QUALITY: 20 of 30 rows pass (66.7%, 95% Wilson [48.8%, 80.8%])")
    assert all(t != "ok" for t, _ in banners)  # no green anywhere on this page
    assert banners[1] == ("info", "EVIDENCE: VALID: 90 outcomes, error rate 0.00% (max 2.00%)")
    items = page[page.index(text) : page.index("EVIDENCE: VALID")]
    assert "weakest slice orders: 0.0% (0/10 rows), 95% Wilson [0.0%, 27.8%]" in items
    # ten failures with ten order ids are one cluster of ten, not ten (or five) one-offs
    assert "10 of 10 failing rows: trajectory: lookup_order(order_id) was not called" in items
    # three rates of 20/30 each, trajectory_accuracy weighing 2 (goldenkit report --config): still 66.7%
    assert "weighted score 66.7%: a weighted mean of 3 rates (weights from [metrics] weights)" in items
    assert "no error rate, never a gate rule" in items


@pytest.mark.slow
def test_report_html_text_is_computed_from_the_run(page: str) -> None:
    assert "with one repeat" not in page  # the run has 3
    assert "No flaky row: each of the 30 rows gave the same verdict on its 3 graded repeats." in page
    section = page[page.index("Why rows fail") :]
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", section[: section.index("</table>")])
    assert cells[:4] == ["trajectory: lookup_order(order_id) was not called", "10", "100.0%", "orders 10"]


def test_the_quality_colour_follows_what_the_numbers_say(tmp_path: Path) -> None:
    def tone(verdicts: dict[str, str], **kw: Any) -> str:
        run = FakeRun(manifest("r", graders={"trajectory": "1"}, **kw), _frame("r", verdicts))
        got = report.quality_banner(run, run.frame)  # type: ignore[arg-type]
        return re.findall(r'class="gk-banner gk-banner-(\w+)"', got)[0]

    assert tone({"a": "PASS", "b": "PASS"}) == "ok"  # every graded row passes
    assert tone({"a": "PASS", "b": "PASS", "c": "FAIL"}) == "bad"  # a slice passes none of its rows
    assert tone({"a": "PASS", "b": "PASS"}, validity="INVALID") == "warn"  # not evidence: no colour of quality
    invalid = FakeRun(manifest("r", graders={"trajectory": "1"}, validity="INVALID"), _frame("r", {"a": "PASS"}))
    assert "INVALID: this run is not evidence" in report.quality_banner(invalid, invalid.frame)  # type: ignore[arg-type]
    mixed = _frame("r", {"a": "PASS", "b": "PASS"})
    mixed.loc[mixed["row_id"] == "a-00", "verdict"] = "FAIL"  # one failing row, no slice at 0%
    run = FakeRun(manifest("r", graders={"trajectory": "1"}), mixed)
    assert 'class="gk-banner gk-banner-info"' in report.quality_banner(run, mixed)  # type: ignore[arg-type]


def test_the_flaky_note_counts_the_runs_repeats() -> None:
    one = _frame("r", repeats=1)
    assert report.flaky_note(one) == (
        "No flaky row: with one repeat per row (30 rows) no row can be flaky; run with --repeats 3 to see them."
    )
    three = _frame("r", repeats=3)
    three.loc[(three["row_id"] == "faq-00") & (three["repeat"] == 1), "verdict"] = "FAIL"
    assert report.flaky_note(three) == ("1 of 30 rows are flaky: they passed some but not all of their graded repeats.")


def test_weighted_score_weights_come_from_the_config_and_carry_no_interval(tmp_path: Path) -> None:
    frame = outcomes([("a", "s", ["PASS"]), ("b", "s", ["FAIL"]), ("c", "s", ["PASS"]), ("d", "s", ["PASS"])])
    m = run_metrics(frame).set_index("metric")
    # defined rates: overall 3/4 and pass_rate:contract 3/4 -> equal weights: 0.75; the rest have no attempt
    score = m.loc["weighted_score"]
    assert score["rate"] == pytest.approx(0.75) and score["total"] == 2
    assert math.isnan(score["ci_low"]) and math.isnan(score["ci_high"])  # a convenience number, no error rate
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text('[metrics]\nweights = { overall_pass_rate = 3, "pass_rate:contract" = 0 }\n', encoding="utf-8")
    from goldenkit.config import load_config

    weights = metric_weights(load_config(cfg))
    assert weights == {"overall_pass_rate": 3.0, "pass_rate:contract": 0.0}
    assert (
        run_metrics(frame, weights={"overall_pass_rate": 1, "pass_rate:contract": 3})
        .set_index("metric")
        .loc["weighted_score", "total"]
        == 2
    )
    cfg.write_text("[metrics]\nweights = { overall_pas_rate = 1 }\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"\[metrics\] weights.overall_pas_rate: not a metric \(did you mean overall_pass_rate\?\)"
    ):
        metric_weights(load_config(cfg))
    cfg.write_text("[metrics]\nweights = { overall_pass_rate = -1 }\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[metrics\] weights.overall_pass_rate = -1: must be a finite number >= 0"):
        metric_weights(load_config(cfg))


def test_a_weighted_score_mixes_rates_by_their_weights() -> None:
    # overall 3/4 = 0.75; hallucination rows h-1 (FAIL) and h-2 (PASS): rate 1/2, entering as 1 - 1/2
    frame = outcomes(
        [("a", "s", ["PASS"]), ("b", "s", ["PASS"]), ("hallucinate-1", "s", ["FAIL"]), ("hallucinate-2", "s", ["PASS"])]
    )
    m = run_metrics(frame, weights={"hallucination_rate": 2, "pass_rate:contract": 0}).set_index("metric")
    assert m.loc["hallucination_rate", "rate"] == pytest.approx(0.5)
    # (1 * 0.75 + 2 * (1 - 0.5)) / 3
    assert m.loc["weighted_score", "rate"] == pytest.approx((0.75 + 2 * 0.5) / 3)


def test_the_forest_plot_marks_significant_regressions_in_colour_with_a_legend() -> None:
    # orders: 12 rows PASS -> FAIL (b=12, c=0: exact McNemar p = 2 * 0.5^12 = 0.00049, Holm x 2 = 0.00098);
    # faq: unchanged
    base = FakeRun(
        manifest("base", repeats=1),
        outcomes(
            [(f"o{i}", "orders", ["PASS"]) for i in range(12)] + [(f"f{i}", "faq", ["PASS"]) for i in range(12)],
            run_id="base",
        ),
    )
    cand = FakeRun(
        manifest("cand", repeats=1),
        outcomes(
            [(f"o{i}", "orders", ["FAIL"]) for i in range(12)] + [(f"f{i}", "faq", ["PASS"]) for i in range(12)],
            run_id="cand",
        ),
    )
    cmp = compare_runs(base, cand)
    assert report.significance(cmp) == ["noise", "regression", "regression"]  # faq, orders, overall
    fig = report.forest_figure(cmp)
    assert [(line.colour, line.marker) for line in fig.lines] == [("tab:grey", "o"), ("tab:red", "o"), ("tab:red", "D")]
    legend = [entry.label for entry in fig.legend]
    assert "significant regression (Holm-adjusted p < 0.05)" in legend and "not significant" in legend
    svg = fig._repr_html_()  # drawn in those colours (matplotlib's tab:red and tab:grey), the legend as text
    assert 'fill="#d62728"' in svg and 'fill="#7f7f7f"' in svg and ">not significant</text>" in svg
    table = report.format_compare_table(cmp)
    assert list(table["significant (alpha 0.05)"]) == ["no", "regression", "regression"]


def test_the_report_reads_the_weights_of_the_config_and_says_when_it_cannot(tmp_path: Path) -> None:
    frame = _frame("r", {"a": "PASS", "b": "FAIL"})
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text("[metrics]\nweights = { overall_pass_rate = 2 }\n", encoding="utf-8")
    run = FakeRun(manifest("r", graders={"trajectory": "1"}), frame)
    shown = report.quality_banner(run, frame, config=str(cfg))  # type: ignore[arg-type]
    # overall 10/20 = 0.5 (weight 2), pass_rate:trajectory 0.5, trajectory_accuracy 0.5: 50.0% whatever the weights
    assert "weighted score 50.0%: a weighted mean of 3 rates (weights from [metrics] weights)" in shown
    cfg.write_text("[metrics]\nweights = { overall = 2 }\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"weights.overall: not a metric"):  # a file named is read, or refused
        report.quality_banner(run, frame, config=str(cfg))  # type: ignore[arg-type]
    # the file the run recorded changed since: the report still renders, with equal weights, and says why
    recorded = manifest("r", graders={"trajectory": "1"})
    recorded["config"] = {"extra": {"config_file": str(cfg), "config_sha256": "0" * 64}}
    run = FakeRun(recorded, frame)
    shown = report.quality_banner(run, frame)  # type: ignore[arg-type]
    assert (
        "(equal weights); a convenience number with no error rate, never a gate rule (goldenkit.toml not read: "
        in shown
    )
    assert "changed since the run" in shown
