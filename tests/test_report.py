"""Unit tests of goldenkit.report and goldenkit.audit: what the notebooks display.

Expected values are worked out by hand in the comments (Wilson limits are the
ones R gives for ``prop.test(k, n, correct=FALSE)$conf.int``).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from goldenkit import audit, report, stats
from goldenkit.cli import main as cli_main
from goldenkit.compare import compare_runs
from goldenkit.dataset import next_version, read_dataset
from goldenkit.errors import InputError
from goldenkit.schema import OUTCOME_FIELDS

DATA = Path(__file__).resolve().parent / "data" / "runs"
SHA = "ab" * 32


# --------------------------------------------------------------------------- builders


def outcome_frame(rows: list[tuple[str, str, list[str]]], *, run_id: str = "r1", **extra: Any) -> pd.DataFrame:
    """Outcomes from (row_id, slice, verdicts per repeat); FAILs carry a contract reason."""
    recs = []
    for row_id, sl, verdicts in rows:
        for rep, v in enumerate(verdicts):
            graders = None
            if v in ("PASS", "FAIL"):
                graders = {
                    "contract": {"passed": v == "PASS", "score": None, "reason": f"{sl} reason", "error": False},
                    "tone": {"passed": True, "score": None, "reason": "polite", "error": False},
                }
            recs.append(
                {
                    "run_id": run_id,
                    "row_id": row_id,
                    "slice": sl,
                    "split": "dev",
                    "tags": extra.get("tags", {}).get(row_id, []),
                    "repeat": rep,
                    "verdict": v,
                    "detail": {"ERROR": "HTTP 503", "SKIPPED": "no grader applies"}.get(v, ""),
                    "error_kind": "transient" if v == "ERROR" else None,
                    "graders": graders,
                    "response": extra.get("responses", {}).get(row_id, f"answer {row_id} {rep}"),
                    "latency_ms": None if v == "ERROR" else 100.0 * (rep + 1),
                    "tokens_in": None if v == "ERROR" else 10,
                    "tokens_out": None if v == "ERROR" else 5,
                    "cost": None,
                }
            )
    cols = ["run_id", "row_id", "slice", "split", "tags", "repeat", "verdict", "detail", "error_kind", "graders"]
    return pd.DataFrame(recs, columns=[*cols, "response", "latency_ms", "tokens_in", "tokens_out", "cost"])


def run_manifest(run_id: str, *, sha: str = SHA, repeats: int = 1, **over: Any) -> dict[str, Any]:
    m = {
        "schema_version": 1,
        "run_id": run_id,
        "dataset": {"name": "support", "version": "1.0.0", "sha256": sha, "path": "datasets/support"},
        "agent_version": {"git_commit": "c0ffee", "model_id": "m-1", "prompt_sha256": "p" * 64},
        "judge_version": None,
        "graders": {"contract": "1"},
        "repeats": repeats,
        "sample": {"split": "holdout", "per_slice": None, "seed": 3},
        "mode": "fixtures",
        "provider": {"name": "openai", "settings": {"base_url": "http://localhost", "api_key": "***"}},
        "started_at": "2026-10-01T12:00:00Z",
        "ended_at": "2026-10-01T12:05:00Z",
        "counts": {"PASS": 3, "FAIL": 1, "ERROR": 0, "SKIPPED": 0, "total": 4, "expected": 4},
        "error_rate": 0.0,
        "max_error_rate": 0.02,
        "validity": "VALID",
        "invalid_reason": None,
        "complete": True,
    }
    m.update(over)
    return m


@dataclass
class MemRun:
    """An in-memory run (what compare_runs and the gate read)."""

    manifest: dict[str, Any]
    frame: pd.DataFrame

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    def outcomes(self, columns: Any = None) -> pd.DataFrame:
        df = self.frame.reindex(columns=list(OUTCOME_FIELDS))
        return df if columns is None else df[list(columns)]


# --------------------------------------------------------------------------- formatting


def test_number_formatting() -> None:
    assert report.pct(0.875) == "87.5%"
    assert report.pct(float("nan")) == "n/a"  # one rendering of a missing figure, as the command line shows it
    assert report.pct(None) == "n/a" and report.pct(pd.NA) == "n/a" and report.pct("x") == "n/a"
    assert report.interval(0.8446, 0.90833) == "[84.5%, 90.8%]"
    assert report.interval(0.1, float("nan")) == "n/a"
    assert report.signed_pct(-0.0125) == "-1.2 pp"
    assert report.signed_pct(0.01) == "+1.0 pp"
    assert report.p_value(0.5413) == "0.5413"  # four decimals, as the command line prints it
    assert report.p_value(0.007385) == "0.0074"
    assert report.p_value(1.0) == "1.0000"
    assert report.p_value(3.2e-7) == "3.2e-07"
    assert report.p_value(float("nan")) == "n/a"


def test_html_block_renders_as_html_in_jupyter() -> None:
    block = report.HTMLBlock("<b>x</b>")
    assert block._repr_html_() == "<b>x</b>"
    assert isinstance(block, str)


# --------------------------------------------------------------------------- run key


def test_validity_statement_valid_and_invalid() -> None:
    m = run_manifest("r1", error_rate=0.005)
    assert report.validity_statement(m) == "VALID: 4 outcomes, error rate 0.50% (max 2.00%)"
    bad = run_manifest("r2", validity="INVALID", invalid_reason="error rate 7.00% > 2.00%", error_rate=0.07)
    text = report.validity_statement(bad)
    assert text.startswith("INVALID: error rate 7.00% > 2.00%")
    assert text.endswith("this run is not evidence")
    partial = run_manifest("r3", complete=False)
    assert report.validity_statement(partial).endswith("the run is incomplete")
    # validity says whether the run is evidence, never its quality: amber when not, neutral when it is
    assert 'class="gk-banner gk-banner-warn">NOT EVIDENCE: INVALID' in report.validity_banner(bad)
    assert 'class="gk-banner gk-banner-info">EVIDENCE: VALID' in report.validity_banner(m)


def test_run_key_table_shows_the_key_and_no_provider_settings() -> None:
    t = report.run_key_table(run_manifest("r1"))
    v = t["value"]
    assert v["run id"] == "r1"
    assert v["dataset"] == "support 1.0.0"
    assert v["dataset sha256"] == SHA
    assert v["model"] == "m-1"
    assert v["graders"] == "contract 1"
    assert v["sample"] == "split=holdout, seed=3"
    assert v["outcomes"] == "PASS 3, FAIL 1, ERROR 0, SKIPPED 0 (total 4 of 4 expected)"
    assert v["complete"] == "yes"
    # provider settings (even redacted ones) are not part of the report
    assert not any("api_key" in str(x) or "***" in str(x) for x in v)


# --------------------------------------------------------------------------- slice table and plot


SLICE_ROWS = [
    ("a1", "A", ["PASS", "PASS", "FAIL"]),  # PASS (2 of 3), flaky
    ("a2", "A", ["FAIL", "FAIL", "PASS"]),  # FAIL, flaky
    ("a3", "A", ["ERROR", "ERROR", "ERROR"]),  # ERROR row: outside the rate
    ("b1", "B", ["PASS", "PASS", "PASS"]),
    ("b2", "B", ["SKIPPED", "SKIPPED", "SKIPPED"]),
]


def test_format_slice_table_hand_checked() -> None:
    from goldenkit import stats

    df = outcome_frame(SLICE_ROWS)
    t = report.format_slice_table(stats.slice_table(df))
    assert list(t.index) == ["A", "B", "(overall)"]
    a = t.loc["A"]
    assert (a["rows"], a["PASS"], a["FAIL"], a["ERROR"], a["SKIPPED"]) == (3, 3, 3, 3, 0)
    assert a["passed rows"] == "1/2"
    assert a["pass rate"] == "50.0%"
    # prop.test(1, 2, correct=FALSE)$conf.int -> 0.0945312 0.9054688
    assert a["95% Wilson"] == "[9.5%, 90.5%]"
    assert a["attempt rate"] == "50.0%"  # 3 of 6 graded attempts
    assert (a["flaky rows"], a["error rows"]) == (2, 1)
    b = t.loc["B"]
    # prop.test(1, 1, correct=FALSE)$conf.int -> 0.2065493 1
    assert (b["passed rows"], b["pass rate"], b["95% Wilson"]) == ("1/1", "100.0%", "[20.7%, 100.0%]")
    o = t.loc["(overall)"]
    # prop.test(2, 3, correct=FALSE)$conf.int -> 0.2076596 0.9385081
    assert (o["passed rows"], o["pass rate"], o["95% Wilson"]) == ("2/3", "66.7%", "[20.8%, 93.9%]")
    assert o["attempt rate"] == "66.7%"  # 6 of 9


def test_pass_rate_figure_draws_wilson_bars() -> None:
    from goldenkit import stats

    table = stats.slice_table(outcome_frame(SLICE_ROWS))
    fig = report.pass_rate_figure(table)
    assert fig.labels == ["A (n=2)", "B (n=1)", "(overall) (n=3)"]
    # each line's bar spans its Wilson limits; the slices blue, the overall line black
    bars = [(round(line.low, 4), round(line.high, 4), line.colour) for line in fig.lines]
    assert bars == [(0.0945, 0.9055, "tab:blue"), (0.2065, 1.0, "tab:blue"), (0.2077, 0.9385, "black")]
    svg = fig._repr_html_()
    assert svg.startswith('<figure class="gk-figure"><svg ') and svg.endswith("</svg></figure>")
    assert svg.count("<circle ") == 3 and ">(overall) (n=3)</text>" in svg and ">100%</text>" in svg


# --------------------------------------------------------------------------- errors, flaky, latency, reasons


def test_errors_and_skips_are_apart_from_failures() -> None:
    df = outcome_frame(SLICE_ROWS)
    t = report.errors_and_skips(df)
    assert t.to_dict("records") == [
        {
            "verdict": "ERROR",
            "kind": "transient",
            "reason": "HTTP 503",
            "outcomes": 3,
            "rows": 1,
            "example rows": "a3",
        },
        {
            "verdict": "SKIPPED",
            "kind": "",
            "reason": "no grader applies",
            "outcomes": 3,
            "rows": 1,
            "example rows": "b2",
        },
    ]
    assert report.errors_and_skips(outcome_frame([("x", "A", ["PASS", "FAIL"])])).empty


def test_verdict_counts() -> None:
    t = report.verdict_counts(outcome_frame(SLICE_ROWS))
    assert t.loc["A"].tolist() == [3, 3, 3, 0]
    assert t.loc["(overall)"].tolist() == [6, 3, 3, 3]


def test_flaky_table_lists_repeats_in_order() -> None:
    t = report.flaky_table(outcome_frame(SLICE_ROWS))
    assert set(t.index) == {"a1", "a2"}
    assert t.loc["a1"].tolist() == ["A", "2/3", "PASS", "PASS PASS FAIL"]
    assert t.loc["a2"].tolist() == ["A", "1/3", "FAIL", "FAIL FAIL PASS"]
    assert report.flaky_table(outcome_frame([("x", "A", ["PASS", "PASS"])])).empty


def test_latency_summary_excludes_errors() -> None:
    rows = [("a1", "A", ["PASS", "FAIL", "PASS", "PASS"]), ("a2", "A", ["ERROR"])]
    df = outcome_frame(rows)  # latencies 100, 200, 300, 400 ms; the ERROR has none
    t = report.latency_summary(df)
    a = t.loc["A"]
    assert a["outcomes"] == 5  # the ERROR too: its calls count
    assert a["latency p50 ms"] == 250.0  # linear interpolation between 200 and 300 (the ERROR left out)
    assert a["latency p95 ms"] == 385.0  # 100 + 0.95 * 3 * 100
    assert a["tokens in"] == 40 and a["tokens out"] == 20  # the ERROR reported none
    assert "money (USD)" not in t.columns and a["money from"] == "n/a (no prices)"  # no price anywhere
    priced = report.latency_summary(df.assign(cost=0.25))
    assert priced.loc["A", "money (USD)"] == 1.0 and priced.loc["(overall)", "money (USD)"] == 1.0
    assert priced.loc["A", "money from"] == "provider"


def test_failure_reasons_per_grader_most_common_first() -> None:
    rows = [
        ("a1", "A", ["FAIL", "FAIL"]),
        ("a2", "A", ["FAIL"]),
        ("b1", "B", ["FAIL", "PASS"]),
    ]
    t = report.failure_reasons(outcome_frame(rows), top=5)
    assert t.to_dict("records") == [
        {"grader": "contract", "reason": "A reason", "outcomes": 3, "rows": 2, "example rows": "a1, a2"},
        {"grader": "contract", "reason": "B reason", "outcomes": 1, "rows": 1, "example rows": "b1"},
    ]
    assert len(report.failure_reasons(outcome_frame(rows), top=1)) == 1
    assert report.failure_reasons(outcome_frame([("x", "A", ["PASS"])])).empty


def test_shown_or_note() -> None:
    assert report.shown_or_note(pd.DataFrame(), "No flaky row.") == "<p>No flaky row.</p>"
    df = pd.DataFrame({"a": [1]})
    assert report.shown_or_note(df, "x") is df


# --------------------------------------------------------------------------- comparison


def _pair() -> tuple[MemRun, MemRun]:
    script = "<script>alert(1)</script>"
    base = outcome_frame(
        [("r1", "A", ["PASS"]), ("r2", "A", ["FAIL"]), ("r3", "B", ["PASS"]), ("r4", "B", ["FAIL"])], run_id="base"
    )
    cand = outcome_frame(
        [("r1", "A", ["FAIL"]), ("r2", "A", ["PASS"]), ("r3", "B", ["PASS"]), ("r4", "B", ["FAIL"])],
        run_id="cand",
        responses={"r1": script},
    )
    return MemRun(run_manifest("base"), base), MemRun(run_manifest("cand", agent_version={"model_id": "m-2"}), cand)


def test_compare_table_flips_and_forest_plot() -> None:
    base, cand = _pair()
    comparison, diffs = report.try_compare(base, cand)
    assert diffs == []
    t = report.format_compare_table(comparison)
    a = t.loc["A"]
    assert a["base pass rate"] == "50.0% (1/2)" and a["candidate pass rate"] == "50.0% (1/2)"
    assert (a["b (broke)"], a["c (fixed)"]) == (1, 1)
    assert a["McNemar p"] == "1.0000"  # b = c = 1: 2 * P[X <= 1], X ~ Bin(2, 1/2) = 1.5 -> capped at 1
    assert a["difference"] == "+0.0 pp"
    # the column names its Holm family (all slices of the table; the gate's own families are in gate_table)
    holm_cols = [c for c in t.columns if c.startswith("Holm p")]
    assert holm_cols == [f"Holm p (all slices, {len(t) - 1})"]
    assert t.loc["(overall)", holm_cols[0]] == "n/a"  # the overall line is a single test

    html = report.flip_list_html(comparison)
    assert "NEW_FAILURE 1, RECOVERED 1" in html
    assert html.index("NEW_FAILURE</b>") < html.index("RECOVERED</b>")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('class="gk-status-') == 2

    fig = report.forest_figure(comparison)
    assert fig.labels == ["A (b=1, c=1, n=2)", "B (b=0, c=0, n=2)", "(overall) (b=1, c=1, n=4)"]

    banner = report.comparability_banner(comparison, diffs)
    assert "COMPARABLE" in banner and "4 rows" in banner


def test_flip_list_limit_and_no_flips() -> None:
    base, cand = _pair()
    comparison = compare_runs(base, cand)
    assert "and 1 more flipped rows not shown" in report.flip_list_html(comparison, limit=1)
    same = compare_runs(base, MemRun(run_manifest("base2"), base.frame.assign(run_id="base2")))
    assert report.flip_list_html(same) == "<p>No row changed status between the two runs.</p>"


def test_invalid_comparison_is_stated_never_a_number() -> None:
    base, cand = _pair()
    other = MemRun(run_manifest("cand", sha="cd" * 32, repeats=3), cand.frame)
    comparison, diffs = report.try_compare(base, other)
    assert comparison is None
    assert any("dataset sha256 differs" in d for d in diffs)
    assert any("repeats differ: 1 vs 3" in d for d in diffs)
    banner = report.comparability_banner(comparison, diffs)
    assert "COMPARISON INVALID" in banner and "dataset sha256 differs" in banner
    for shown in (report.format_compare_table(None), report.forest_figure(None), report.flip_list_html(None)):
        assert "comparison is invalid" in shown
    # (other claims 3 repeats over 1-repeat outcomes: it is also incomplete, exit 3 would win; the gate's
    # exit 4 is shown on a run whose only difference is the dataset)
    elsewhere = MemRun(run_manifest("cand", sha="cd" * 32), cand.frame)
    decision = report.gate_decision(elsewhere, None, report.try_compare(base, elsewhere)[1])
    assert decision.exit_code == 4
    assert "exit code 4" in report.gate_banner(decision)


def test_worked_example_numbers_in_the_compare_table() -> None:
    from run_factory import FakeRun, manifest, worked_example

    base_df, cand_df = worked_example()
    comparison = compare_runs(FakeRun(manifest("base"), base_df), FakeRun(manifest("cand"), cand_df))
    t = report.format_compare_table(comparison)
    # published: base 352/400 (84.45%-90.83%), candidate 356/400 (85.55%-91.70%)
    o = t.loc["(overall)"]
    assert o["base pass rate"] == "88.0% (352/400)" and o["base 95% Wilson"] == "[84.4%, 90.8%]"
    assert o["candidate pass rate"] == "89.0% (356/400)" and o["candidate 95% Wilson"] == "[85.6%, 91.7%]"
    assert (o["b (broke)"], o["c (fixed)"], o["McNemar p"]) == (10, 14, "0.5413")
    # refunds 8 broke 1 fixed p = 0.0391; others 2 broke 13 fixed p = 0.00739; Holm 0.0391 and 0.0148
    r = t.loc["refunds"]
    assert (r["b (broke)"], r["c (fixed)"], r["McNemar p"], r["Holm p (all slices, 2)"]) == (8, 1, "0.0391", "0.0391")
    x = t.loc["other"]
    expected = (2, 13, "0.0074", "0.0148")
    assert (x["b (broke)"], x["c (fixed)"], x["McNemar p"], x["Holm p (all slices, 2)"]) == expected


def test_gate_table_and_banner(tmp_path: Path) -> None:
    base, cand = _pair()
    comparison = compare_runs(base, cand)
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text("[gate]\nmin_pass_rate = 0.9\nnon_inferiority_margin = false\n", encoding="utf-8")  # 4 rows
    decision = report.gate_decision(cand, comparison, [], str(cfg))
    t = report.gate_table(decision)
    assert t.loc["pass_rate", "result"] == "FAIL"
    assert t.loc["pass_rate", "threshold"] == "90.0%" and t.loc["pass_rate", "actual"] == "50.0%"
    assert t.loc["regression.overall", "result"] == "PASS"
    # one-sided exact McNemar (b = 1 broke, c = 1 fixed): P[X >= 1], X ~ Bin(2, 1/2) = 0.75
    assert t.loc["regression.overall", "actual"] == "0.7500" and t.loc["regression.overall", "threshold"] == "0.0500"
    assert t.loc["run.graded", "actual"] == "4" and t.loc["run.graded", "threshold"] == "n/a"
    assert not any(isinstance(v, float) for v in t.to_numpy().ravel())  # every cell is text for people
    shown = report.table_html(t)
    assert "NaN" not in shown and "None" not in shown and ".000000" not in shown
    banner = report.gate_banner(decision)
    assert "gate FAILED: 1 rule failed; exit code 2" in banner and 'class="gk-banner gk-banner-bad"' in banner
    assert "<li>pass_rate: " in banner  # the failing rule, named under the decision


def test_gate_banner_colour_is_the_decision(tmp_path: Path) -> None:
    base, cand = _pair()
    comparison = compare_runs(base, cand)
    cfg = tmp_path / "goldenkit.toml"
    cfg.write_text("[gate]\nnon_inferiority_margin = false\n", encoding="utf-8")  # 4 rows show no margin
    passed = report.gate_decision(cand, comparison, [], str(cfg))
    assert passed.passed
    shown = report.gate_banner(passed)
    assert "gate PASSED" in shown and "exit code 0" in shown and 'class="gk-banner gk-banner-ok"' in shown
    # with the default margin, 4 rows show neither a regression nor non-inferiority: amber, exit 3
    cfg.write_text("[gate]\n", encoding="utf-8")
    short = report.gate_banner(report.gate_decision(cand, comparison, [], str(cfg)))
    assert 'class="gk-banner gk-banner-warn"' in short and "exit code 3" in short
    assert report.gate_table(report.gate_decision(cand, comparison, [], str(cfg))).loc["non_inferiority", "result"] == (
        "NOT SHOWN"
    )
    other = MemRun(run_manifest("cand", sha="cd" * 32), cand.frame)
    comparison2, diffs = report.try_compare(base, other)
    invalid = report.gate_banner(report.gate_decision(other, comparison2, diffs))
    assert 'class="gk-banner gk-banner-warn"' in invalid and "gate NOT EVIDENCE: the comparison is invalid" in invalid
    assert "exit code 4" in invalid and "<li>baseline.comparable: " in invalid
    # comparability is a statement beside the decision, never a second green verdict
    assert 'class="gk-banner gk-banner-info"' in report.comparability_banner(comparison)
    assert 'class="gk-banner gk-banner-ok"' not in report.comparability_banner(comparison)


# --------------------------------------------------------------------------- tables for people


def test_table_html_formats_for_people() -> None:
    frame = pd.DataFrame(
        {
            "slice": ["a", "b <script>"],
            "outcomes": [1200, 3],
            "latency p50 ms": [700.25, 558.0],
            "tokens in (mean)": pd.array([None, 12], dtype="Int64"),
            "cost": [float("nan"), 0.0125],
            "kind": ["transient", None],
        }
    )
    shown = report.table_html(frame)  # a numbered index: no index column
    cells = re.findall(r"<t[dh](?: [^>]*)?>(.*?)</t[dh]>", shown)
    assert cells[:6] == ["slice", "outcomes", "latency p50 ms", "tokens in (mean)", "cost", "kind"]
    assert cells[6:12] == ["a", "1,200", "700.2", "n/a", "n/a", "transient"]
    assert cells[12:] == ["b &lt;script&gt;", "3", "558.0", "12", "0.0125", "n/a"]
    assert '<th class="gk-num">outcomes</th>' in shown and "<th>slice</th>" in shown  # numbers right, text left
    for token in ("NaN", "&lt;NA&gt;", "None", ".000000", "<script>"):
        assert token not in shown
    indexed = report.table_html(frame.set_index("slice"))  # a named index is the first column
    assert re.findall(r"<th(?: [^>]*)?>(.*?)</th>", indexed)[0] == "slice"
    assert report.table_html(frame.iloc[:0], "No row: what would fill it.") == (
        '<p class="gk-empty">No row: what would fill it.</p>'
    )
    key = report.table_html(report.run_key_table(run_manifest("r1")), header=False)
    assert "<thead>" not in key and "<td>run id</td><td>r1</td>" in key  # no stray field/value header


def test_latency_of_a_run_without_tokens_shows_dashes() -> None:
    df = outcome_frame([("a", "A", ["PASS", "PASS"]), ("b", "A", ["FAIL", "PASS"])])
    df["tokens_in"] = pd.array([None] * len(df), dtype="Int64")  # a callable agent counts no tokens
    df["tokens_out"] = pd.array([None] * len(df), dtype="Int64")
    df["latency_ms"] = 400.0
    shown = report.table_html(report.latency_summary(df))
    assert "&lt;NA&gt;" not in shown and "NaN" not in shown and ".000000" not in shown
    assert '<td class="gk-num">400</td>' in shown and '<td class="gk-num">n/a</td>' in shown  # no token count: n/a


def test_label_error_table_says_what_fills_it() -> None:
    assert report.label_error_table([]) == f'<p class="gk-empty">{report.NO_MARKS}</p>'
    marks = [{"row_id": "a1", "slice": "A", "label": "label_error"}, {"row_id": "a2", "slice": "A", "label": "unclear"}]
    shown = report.label_error_table(marks)
    assert "ci_low" not in shown and "50.0%" in shown and "NaN" not in shown


# --------------------------------------------------------------------------- audit summaries and coverage


def test_label_error_share_uses_the_latest_mark_per_row() -> None:
    marks = [
        {"row_id": "a1", "slice": "A", "label": "agent_error"},
        {"row_id": "a1", "slice": "A", "label": "label_error"},  # supersedes the line above
        {"row_id": "a2", "slice": "A", "label": "label_error"},
        {"row_id": "a3", "slice": "A", "label": "agent_error"},
        {"row_id": "a4", "slice": "A", "label": "unclear"},
        {"row_id": "b1", "slice": "B", "label": "agent_error"},
    ]
    t = report.label_error_share(marks)
    a = t.loc["A"]
    assert (a["audited"], a["label_error"], a["agent_error"], a["unclear"]) == (4, 2, 1, 1)
    # prop.test(2, 4, correct=FALSE)$conf.int -> 0.1500390 0.8499610
    assert a["label-error share"] == "50.0%" and a["95% Wilson"] == "[15.0%, 85.0%]"
    b = t.loc["B"]
    # prop.test(0, 1, correct=FALSE)$conf.int -> 0 0.7934506
    assert (b["label-error share"], b["95% Wilson"]) == ("0.0%", "[0.0%, 79.3%]")
    assert t.loc["(overall)", "audited"] == 5
    assert report.label_error_share([]).empty


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("t.csv", "slice,count\nA,300\nB,100\n"),
        ("t.csv", "slice,share\nA,0.75\nB,0.25\n"),
        ("t.csv", "A,3\nB,1\n"),
        ("t.json", '{"A": 3, "B": 1}'),
        ("t.json", '[{"slice": "A", "share": 0.75}, {"slice": "B", "share": 0.25}]'),
    ],
)
def test_read_traffic_formats(tmp_path: Path, name: str, text: str) -> None:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    shares = report.read_traffic(p)
    assert shares.to_dict() == {"A": 0.75, "B": 0.25}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("slice,count\nA,-1\n", "non-negative"),
        ("slice,count\nA,x\n", "not a number"),
        ("slice,count\nA,1\nA,2\n", "appears twice"),
        ("slice,count\nA,0\n", "total is 0"),
        ("slice,value,other\nA,1,2\n", "header needs"),
    ],
)
def test_read_traffic_errors_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "traffic.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as exc:
        report.read_traffic(p)
    assert str(p) in str(exc.value)


def test_unreadable_inputs_are_one_line_errors(tmp_path: Path) -> None:
    latin = tmp_path / "traffic.csv"
    latin.write_bytes(b"slice,count\nr\xe9glages,3\n")
    with pytest.raises(InputError, match="not UTF-8"):
        report.read_traffic(latin)
    with pytest.raises(InputError, match="cannot read traffic file"):
        report.read_traffic(tmp_path / "missing.csv")
    marks = tmp_path / "m.jsonl"
    marks.write_bytes(b'{"row_id": "\xff"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        audit.read_marks(marks)
    marks.write_text('{"row_id": "a", "label": "maybe"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"m.jsonl:1: unknown label 'maybe'"):
        audit.read_marks(marks)


def test_coverage_table_flags_and_rows_needed() -> None:
    counts = pd.Series({"A": 30, "B": 10})
    traffic = pd.Series({"A": 0.5, "B": 0.4, "C": 0.1})
    cov = report.coverage_table(counts, traffic, delta=0.05, discordance=0.10, min_ratio=0.5)
    assert list(cov.index) == ["A", "B", "C", "(overall)"]
    assert cov.loc["A", "dataset share"] == 0.75 and cov.loc["C", "rows"] == 0
    assert cov.loc["A", "ratio"] == 1.5 and cov.loc["B", "ratio"] == 0.62
    # B: 25% of rows vs 40% of traffic is above half of it; C has traffic and no rows
    assert cov["under-tested"].tolist() == [False, False, True, False]
    strict = report.coverage_table(counts, traffic, delta=0.05, discordance=0.10, min_ratio=0.7)
    assert strict.loc["B", "under-tested"]
    # the exact McNemar test's n (rows_needed is checked against trinomial enumeration in test_stats):
    # 337; Connor's (1987) approximation would say (1.959964 sqrt(.1) + 0.841621 sqrt(.0975))^2 / .05^2 -> 312
    assert (cov["rows needed"] == 337).all()
    assert stats.mcnemar_power(337, 0.05, 0.10) >= 0.8 > stats.mcnemar_power(336, 0.05, 0.10)
    assert cov.loc["A", "rows short"] == 307 and cov.loc["(overall)", "rows short"] == 297
    f = report.format_coverage_table(cov)
    assert f.loc["C", "under-tested"] == "UNDER-TESTED" and f.loc["A", "dataset share"] == "75.0%"
    # 30 rows cannot detect even a 10-point change (every flip one way); C has no rows at all
    assert (f.loc["A", "detectable change"], f.loc["C", "detectable change"]) == ("> 10.0%", "n/a")
    fig = report.coverage_figure(cov)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["A", "B", "! C"]


def test_split_rows() -> None:
    ds = read_dataset(DATA / "dataset")
    hold = report.split_rows(ds.rows, "holdout")
    assert set(hold["split"]) == {"holdout"} and 0 < len(hold) < len(ds.rows)
    assert report.split_rows(ds.rows, None) is ds.rows
    with pytest.raises(InputError, match="no rows in split 'test'"):
        report.split_rows(ds.rows, "test")


def test_coverage_detectable_change_matches_rows_needed() -> None:
    from goldenkit import stats

    n = stats.rows_needed(0.05, 0.10)
    cov = report.coverage_table(pd.Series({"A": n}), pd.Series({"A": 1.0}), delta=0.05, discordance=0.10)
    # with exactly the rows needed for 5 points, the detectable change is just under 5 points
    assert 0.049 < cov.loc["A", "detectable change"] <= 0.05


def test_coverage_statement_names_under_tested_slices() -> None:
    ds = read_dataset(DATA / "dataset")
    cov = report.coverage_table(ds.rows, report.read_traffic(DATA / "traffic.csv"))
    plan = {"delta": 0.05, "discordance": 0.10, "alpha": 0.05, "power": 0.8}
    text = report.coverage_statement(ds, cov, traffic=DATA / "traffic.csv", **plan)
    assert "Under-tested relative to traffic (traffic.csv): billing, refunds." in text
    own = report.coverage_table(ds.rows, report.dataset_shares(ds.rows))
    assert "No traffic file given" in report.coverage_statement(ds, own, **plan)
    assert not own["under-tested"].any()
    assert "needs 337 paired rows (exact power of the exact McNemar test)" in text


def test_dataset_coverage_is_the_notebook_cell_in_one_call() -> None:
    ds = read_dataset(DATA / "dataset")
    got = report.dataset_coverage(DATA / "dataset", traffic=DATA / "traffic.csv")
    assert got.dataset.sha256 == ds.sha256
    cov = report.coverage_table(ds.rows, report.read_traffic(DATA / "traffic.csv"))
    pd.testing.assert_frame_equal(got.table, cov)
    assert got._repr_html_() == str(got.statement)
    assert "Under-tested relative to traffic (traffic.csv): billing, refunds." in got.statement
    holdout = report.dataset_coverage(ds, split="holdout", delta=0.1, power=0.9)
    rows = ds.rows[ds.rows["split"] == "holdout"]
    assert int(holdout.table.loc[report.OVERALL, "rows"]) == len(rows) > 0
    expected = report.coverage_table(rows, report.dataset_shares(rows), delta=0.1, power=0.9)
    pd.testing.assert_frame_equal(holdout.table, expected)
    assert "No traffic file given" in holdout.statement
    with pytest.raises(InputError, match="no rows in split 'test'"):
        report.dataset_coverage(ds, split="test")


# --------------------------------------------------------------------------- audit: failing rows, sample, browser


def _failures() -> pd.DataFrame:
    ds = read_dataset(DATA / "dataset")
    from goldenkit.results import outcomes_df

    return audit.failing_rows(outcomes_df(DATA / "base", DATA / "cand"), ds)


def test_failing_rows_show_prompt_expected_response_and_reasons() -> None:
    ds = read_dataset(DATA / "dataset")
    df = outcome_frame([("refunds-0000", "refunds", ["FAIL", "PASS", "FAIL"]), ("shipping-0001", "x", ["PASS"])])
    f = audit.failing_rows(df, ds)
    assert f["row_id"].tolist() == ["refunds-0000"]
    rec = f.iloc[0]
    assert rec["passed"] == "1/3" and rec["repeat"] == 0
    assert rec["prompt"] == "Customer 0 asks about their refund (case 0)."
    assert rec["expected"].splitlines() == [
        "reference: A helpful answer that mentions the refund.",
        'expect: {"must_contain": ["refund"], "must_not": ["guarantee"]}',
    ]
    assert rec["reasons"] == "contract: refunds reason"
    assert rec["graders_failed"] == ["contract"]
    assert rec["source"] == "prod-2026-09"
    assert audit.failing_rows(df)["prompt"].tolist() == [""]  # without a dataset


def test_audit_sample_is_deterministic_and_bounded() -> None:
    f = _failures()
    s1 = audit.audit_sample(f, 2, seed=0)
    shuffled = f.sample(frac=1.0, random_state=3).reset_index(drop=True)
    s2 = audit.audit_sample(shuffled, 2, seed=0)
    assert s1[["run_id", "row_id"]].values.tolist() == s2[["run_id", "row_id"]].values.tolist()
    assert s1.groupby("slice").size().max() <= 2
    assert set(s1["slice"]) == set(f["slice"])
    assert len(audit.audit_sample(f, 100, seed=0)) == len(f)
    assert audit.audit_sample(f, 0).empty
    with pytest.raises(InputError):
        audit.audit_sample(f, -1)
    html = report.audit_sample_html(s1)
    assert html.count('class="gk-card"') == len(s1)


def test_audit_sample_html_escapes_model_output() -> None:
    row = {"row_id": "r<1>", "slice": "A", "run_id": "x", "passed": "0/1", "tags": ["<t>"]}
    row |= {"prompt": "p", "expected": "e", "response": "<script>alert(1)</script>", "reasons": "a & b"}
    html = report.audit_sample_html(pd.DataFrame([row]))
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "r&lt;1&gt;" in html and "a &amp; b" in html and "&lt;t&gt;" in html


def test_browser_filters_and_pages(tmp_path: Path) -> None:
    f = _failures()
    b = audit.AuditBrowser(f, page_size=2)
    assert b.options("slice") == sorted(set(f["slice"]))
    assert b.options("run") == ["base", "cand"]
    assert b.options("grader") == ["contract"]
    b.set_filter(slice="refunds")
    assert set(b.view["slice"]) == {"refunds"}
    n = len(b.view)
    assert b.n_pages == -(-n // 2)
    b.next()
    assert b.page == min(1, b.n_pages - 1)
    for _ in range(10):
        b.next()
    assert b.page == b.n_pages - 1
    b.prev()
    b.set_filter(run="cand")  # a filter change goes back to page 1
    assert b.page == 0 and set(b.view["run_id"]) == {"cand"} and set(b.view["slice"]) == {"refunds"}
    b.set_filter(slice="(all)", run=None, tag="long")
    assert all("long" in t for t in b.view["tags"]) and len(b.view) > 0
    b.set_filter(tag=None, grader="no-such")
    assert b.view.empty and b.n_pages == 1 and b.current().empty
    with pytest.raises(InputError, match="unknown filter"):
        b.set_filter(colour="red")


def test_browser_records_marks_append_only(tmp_path: Path) -> None:
    f = _failures()
    log = audit.AuditLog(audit.audit_file("fixture-support", "2026-10-02", tmp_path / "audits"))
    assert log.path == tmp_path / "audits" / "fixture-support-2026-10-02.jsonl"
    key = {"name": "fixture-support", "version": "1.0.0", "sha256": "abc"}
    b = audit.AuditBrowser(f, log=log, dataset=key)
    rid = f["row_id"].iloc[0]
    b.mark(rid, "agent_error", "really wrong")
    b.mark(rid, "label_error", "expectation is stale", {"case": {"expect": {"must_contain": ["x"]}}})
    lines = log.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    last = json.loads(lines[1])
    assert last["label"] == "label_error" and last["row_id"] == rid and last["dataset_sha256"] == "abc"
    assert last["correction"] == {"case": {"expect": {"must_contain": ["x"]}}}
    assert last["note"] == "expectation is stale" and last["slice"] == f["slice"].iloc[0]
    # a new browser on the same log knows the latest marks
    assert audit.AuditBrowser(f, log=log).marks == {rid: "label_error"}
    with pytest.raises(InputError, match="unknown audit label"):
        b.mark(rid, "typo")
    with pytest.raises(InputError, match="not among the failing rows"):
        b.mark("nope", "unclear")
    with pytest.raises(InputError, match="cannot change a row's id"):
        b.mark(rid, "label_error", "", {"id": "other"})


def test_audit_widget_filters_pages_and_saves(tmp_path: Path) -> None:
    f = _failures()
    log = audit.AuditLog(tmp_path / "marks.jsonl")
    w = audit.AuditWidget(audit.AuditBrowser(f, log=log))
    assert w.position.value == f"page 1 of {len(f)} · {len(f)} failing rows"
    w.dropdowns["slice"].value = "refunds"
    n = int((f["slice"] == "refunds").sum())
    assert w.position.value == f"page 1 of {n} · {n} failing rows"
    w.next_button.click()
    assert w.position.value.startswith("page 2 of")
    row_id = w.browser.current().iloc[0]["row_id"]
    assert row_id in w.card.value
    w.save.click()
    assert "choose a row and a label" in w.status_text and "white-space: normal" in w.status.value  # it wraps
    w.label.value = "label_error"
    w.note.value = "wrong expectation"
    w.correction.value = "{not json"
    w.save.click()
    assert w.status_text.startswith("not saved")
    w.correction.value = '{"case": {"reference": "better"}}'
    w.save.click()
    assert w.status_text.startswith(f"saved label_error for {row_id}")
    assert "marked: <b>label_error</b>" in w.card.value
    mark = json.loads(log.path.read_text(encoding="utf-8"))
    assert mark["correction"] == {"case": {"reference": "better"}} and mark["note"] == "wrong expectation"


def test_open_audit_session(tmp_path: Path) -> None:
    s = audit.open_audit(str(DATA / "cand"), audits_dir=tmp_path, day="2026-10-02")
    assert s.dataset is not None  # found through the path recorded in run.json
    assert s.log.path == tmp_path / "fixture-support-2026-10-02.jsonl"
    assert len(s.failures) > 0 and s.failures["prompt"].str.len().min() > 0
    s.browser().mark(s.failures["row_id"].iloc[0], "label_error", "stale")
    older = tmp_path / "fixture-support-2026-09-01.jsonl"
    older.write_text(json.dumps({"row_id": "account-0006", "slice": "account", "label": "unclear"}) + "\n")
    assert {m["row_id"] for m in s.all_marks()} == {s.failures["row_id"].iloc[0], "account-0006"}
    summary = s.summary()
    assert "marks are appended to" in summary and "<table" in summary
    with pytest.raises(InputError, match="is not the runs'"):
        other = tmp_path / "ds"
        shutil.copytree(DATA / "dataset", other)
        with (other / "dataset.jsonl").open("ab") as fh:
            fh.write(b'{"id": "new-1", "slice": "A", "split": "dev", "case": {"prompt": "x"}}\n')
        audit.open_audit(str(DATA / "cand"), dataset=other, audits_dir=tmp_path)


def test_failures_view_is_the_widget_or_a_seeded_sample(tmp_path: Path) -> None:
    import ipywidgets

    s = audit.open_audit(str(DATA / "cand"), audits_dir=tmp_path, day="2026-10-02")
    assert isinstance(s.failures_view(interactive=True), ipywidgets.VBox)
    shown = s.failures_view(interactive=False, n_per_slice=1, seed=3)
    assert shown == report.audit_sample_html(audit.audit_sample(s.failures, 1, 3))
    assert shown.count('class="gk-card"') == s.failures["slice"].nunique()


# --------------------------------------------------------------------------- audit apply


def test_merge_patch_rfc7396_examples() -> None:
    # RFC 7396 appendix A
    assert audit.merge_patch({"a": "b"}, {"a": "c"}) == {"a": "c"}
    assert audit.merge_patch({"a": "b"}, {"b": "c"}) == {"a": "b", "b": "c"}
    assert audit.merge_patch({"a": "b"}, {"a": None}) == {}
    assert audit.merge_patch({"a": "b", "b": "c"}, {"a": None}) == {"b": "c"}
    assert audit.merge_patch({"a": ["b"]}, {"a": "c"}) == {"a": "c"}
    assert audit.merge_patch({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}) == {"a": {"b": "d"}}
    assert audit.merge_patch({"a": [{"b": "c"}]}, {"a": [1]}) == {"a": [1]}
    assert audit.merge_patch({"e": None}, {"a": 1}) == {"e": None, "a": 1}
    assert audit.merge_patch([1, 2], {"a": "b", "c": None}) == {"a": "b"}


def test_next_version() -> None:
    assert next_version("1.0.0") == "1.1.0"
    assert next_version("2.9") == "2.10"
    assert next_version("4") == "5"
    assert next_version("2026-09") == "2026-09.1"
    assert next_version(None) == "1"


def _marks_file(path: Path, marks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in marks), encoding="utf-8")
    return path


def test_apply_audit_writes_a_new_version(tmp_path: Path) -> None:
    src = tmp_path / "support"
    shutil.copytree(DATA / "dataset", src)
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    ds = read_dataset(src)
    key = {"dataset_sha256": ds.sha256}
    marks = _marks_file(
        tmp_path / "audit.jsonl",
        [
            {**key, "row_id": "refunds-0000", "label": "label_error", "note": "policy is 30 days", "correction": None},
            {
                **key,
                "row_id": "refunds-0000",
                "label": "label_error",
                "note": "policy is 30 days",
                "correction": {"case": {"expect": {"must_contain": ["30 days"]}}},
            },
            {**key, "row_id": "shipping-0001", "label": "label_error", "note": "no right answer", "correction": None},
            {**key, "row_id": "account-0002", "label": "agent_error", "note": "", "correction": None},
            {**key, "row_id": "account-0006", "label": "unclear", "note": "", "correction": None},
        ],
    )
    res = audit.apply_audit(marks, src, today=__import__("datetime").date(2026, 10, 3))
    assert res.path == tmp_path / "support-1.1.0"
    assert (res.version, res.previous_version, res.previous_sha256) == ("1.1.0", "1.0.0", ds.sha256)
    assert res.relabelled == ["refunds-0000"] and res.dropped == ["shipping-0001"]
    assert res.ignored == {"agent_error": 1, "unclear": 1}
    # the old version is untouched
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before
    new = read_dataset(res.path)
    assert new.sha256 == res.sha256 != ds.sha256
    assert len(new) == len(ds) - 1 and "shipping-0001" not in new.ids
    case = new.raw_case("refunds-0000")
    assert case["expect"] == {"must_contain": ["30 days"], "must_not": ["guarantee"]}
    assert case["prompt"] == ds.raw_case("refunds-0000")["prompt"]
    # unchanged rows keep their exact bytes
    assert new.raw_line("account-0002") == ds.raw_line("account-0002")
    entry = new.manifest["changelog"][-1]
    assert entry["version"] == "1.1.0" and entry["date"] == "2026-10-03"
    assert "relabelled 1 label error(s): refunds-0000" in entry["why"]
    assert "dropped 1 label error(s) without a correction: shipping-0001" in entry["why"]
    assert "refunds-0000: policy is 30 days" in entry["why"] and ds.sha256[:12] in entry["why"]
    assert new.manifest["changelog"][:-1] == ds.manifest["changelog"]
    with pytest.raises(InputError, match="already exists"):
        audit.apply_audit(marks, src)


def test_apply_audit_refusals(tmp_path: Path) -> None:
    src = tmp_path / "support"
    shutil.copytree(DATA / "dataset", src)
    ds = read_dataset(src)
    wrong = _marks_file(
        tmp_path / "a.jsonl", [{"dataset_sha256": "f" * 64, "row_id": "refunds-0000", "label": "label_error"}]
    )
    with pytest.raises(InputError, match=r"a.jsonl:1: mark made on dataset sha256 ffffffffffff"):
        audit.apply_audit(wrong, src)
    unknown = _marks_file(tmp_path / "b.jsonl", [{"row_id": "nope", "label": "label_error"}])
    with pytest.raises(InputError, match=r"b.jsonl:1: row 'nope' is not in"):
        audit.apply_audit(unknown, src)
    none = _marks_file(tmp_path / "c.jsonl", [{"row_id": "refunds-0000", "label": "agent_error"}])
    with pytest.raises(InputError, match="no label_error marks"):
        audit.apply_audit(none, src)
    bad = tmp_path / "d.jsonl"
    bad.write_text('{"row_id": "refunds-0000", "label": "label_error"}\n{oops\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"d.jsonl:2: invalid JSON"):
        audit.apply_audit(bad, src)
    breaks = _marks_file(
        tmp_path / "e.jsonl",
        [{"row_id": "refunds-0000", "label": "label_error", "correction": {"split": "somewhere"}}],
    )
    with pytest.raises(InputError, match="would be invalid"):
        audit.apply_audit(breaks, src, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / ".out.tmp").exists()
    with pytest.raises(InputError, match="already in"):
        audit.apply_audit(
            _marks_file(tmp_path / "f.jsonl", [{"row_id": "refunds-0000", "label": "label_error"}]),
            src,
            version="1.0.0",
        )
    assert read_dataset(src).sha256 == ds.sha256


def test_cli_audit_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "support"
    shutil.copytree(DATA / "dataset", src)
    marks = _marks_file(tmp_path / "m.jsonl", [{"row_id": "account-0002", "label": "label_error", "note": "x"}])
    out = tmp_path / "v2"
    assert cli_main(["audit", "apply", str(marks), "--dataset", str(src), "-o", str(out), "--version", "2.0.0"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}: version 2.0.0" in printed and "dropped 1" in printed
    assert read_dataset(out).version == "2.0.0"
    assert cli_main(["audit", "apply", str(tmp_path / "missing.jsonl"), "--dataset", str(src)]) == 1
    assert "cannot read audit file" in capsys.readouterr().err


# --------------------------------------------------------------------------- notebooks stay generated and output-free


def test_committed_notebooks_match_their_generator() -> None:
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "make_notebooks.py"
    spec = importlib.util.spec_from_file_location("make_notebooks", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0


def test_fixture_runs_are_reproducible(tmp_path: Path) -> None:
    """tests/data/runs is what scripts/make_fixture_runs.py writes (same outcomes, same hash)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "make_fixture_runs.py"
    spec = importlib.util.spec_from_file_location("make_fixture_runs", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.make_all(tmp_path)
    assert read_dataset(tmp_path / "dataset").sha256 == read_dataset(DATA / "dataset").sha256
    for name in ("base", "cand"):
        fresh = (tmp_path / name / "outcomes.jsonl").read_bytes()
        assert fresh == (DATA / name / "outcomes.jsonl").read_bytes(), (
            "run: python scripts/make_fixture_runs.py tests/data/runs"
        )
        assert json.loads((tmp_path / name / "run.json").read_text()) == json.loads(
            (DATA / name / "run.json").read_text()
        )


def test_degenerate_runs_render_without_errors() -> None:
    """An all-ERROR run and an empty (just started) run still give every table and plot."""
    from goldenkit import stats

    for df in (outcome_frame([("a", "A", ["ERROR", "ERROR"]), ("b", "B", ["ERROR"])]), outcome_frame([])):
        table = stats.slice_table(df)
        shown = report.format_slice_table(table)
        assert shown.loc["(overall)", "pass rate"] == "n/a" and shown.loc["(overall)", "95% Wilson"] == "n/a"
        assert "<svg " in report.pass_rate_figure(table)._repr_html_()
        assert report.flaky_table(df).empty and report.failure_reasons(df).empty
        assert pd.isna(report.latency_summary(df).loc["(overall)", "latency p50 ms"])  # nothing answered
        assert audit.failing_rows(df).empty
    base = MemRun(run_manifest("b"), outcome_frame([("a", "A", ["ERROR"]), ("b", "B", ["PASS"])], run_id="b"))
    cand = MemRun(run_manifest("c"), outcome_frame([("a", "A", ["PASS"]), ("b", "B", ["PASS"])], run_id="c"))
    comparison = compare_runs(base, cand)
    assert report.format_compare_table(comparison).loc["A", "difference"] == "n/a"  # no paired row in A
    drawn = report.forest_figure(comparison)._repr_html_()
    assert "<svg " in drawn and "nan" not in drawn.lower()
    assert "ERROR_CLEARED" in report.flip_list_html(comparison)
