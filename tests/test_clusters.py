"""Why it broke: the graders' findings and the clusters goldenkit.why builds from them.

A dataset written here plants two causes in one slice (an agent that stops calling a tool on five
rows, and one that drops the order id from three answers) and one in another; both runs go through
the runner and the real graders. The clusters must find each cause with its count, from the findings
stored in the run and equally from runs written before findings were stored (their reason texts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _shared import needs_shared, shared_dir
from factories import row, write_dataset

from goldenkit import compare_runs, outcomes_df, read_dataset, read_run, run_eval, why
from goldenkit._findings import Finding, findings_in, reason_findings, value_free
from goldenkit.cli import main
from goldenkit.graders._contract import ContractGrader
from goldenkit.graders._judge import JudgeGrader, JudgeVerdict
from goldenkit.graders._retrieval import RetrievalGrader
from goldenkit.graders._rubrics import rubric_outcome
from goldenkit.graders._state import StateGrader
from goldenkit.graders._trajectory import TrajectoryGrader
from goldenkit.providers._callable import CallableProvider
from goldenkit.records import Case, Response, ToolCall, Turn, TurnOutput
from goldenkit.report import clusters_html

QUIET = {"progress": False}
TOOL_ROWS = {f"ref-{i:02d}" for i in range(5)}  # the candidate skips lookup_order here
ID_ROWS = {f"ref-{i:02d}" for i in range(5, 8)}  # ... and drops the order id here
OTHER = "ship-00"  # another slice: a forbidden phrase


def _case(i: int, slice_name: str) -> dict[str, Any]:
    order = f"A-{1000 + 37 * i}"
    return {
        "prompt": f"Can I still return order {order}?",
        "order": order,
        "expect": {
            "must_contain": [order],
            "must_not": ["guaranteed refund"],
            "tools": [{"name": "lookup_order", "args": {"order_id": order}}],
        },
    }


def planted_dataset(root: Path) -> Path:
    """The planted dataset: ten refunds rows and four shipping rows."""
    rows = [row(f"ref-{i:02d}", _case(i, "refunds"), slice="refunds") for i in range(10)]
    rows += [row(f"ship-{i:02d}", _case(20 + i, "shipping"), slice="shipping") for i in range(4)]
    return write_dataset(root, rows, name="planted")


def agent(broken: bool) -> Any:
    def answer(case: Case) -> Response:
        order, rid = case.raw["order"], case.id
        calls = [ToolCall("lookup_order", {"order_id": order})]
        text = f"Order {order} is within the 30-day window: yes, you can return it."
        if broken and rid in TOOL_ROWS:
            calls = []
        if broken and rid in ID_ROWS:
            text = "Yes, that order is within the 30-day window."
        if broken and rid == OTHER:
            text += " This is a guaranteed refund."
        return Response(turns=[TurnOutput(text=text, tool_calls=calls)])

    return answer


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("planted")
    ds = read_dataset(planted_dataset(root))
    for run_id, broken in (("base", False), ("cand", True)):
        summary = run_eval(
            ds,
            CallableProvider(fn=agent(broken), threads=0),
            ["contract", "trajectory"],
            repeats=3,
            run_id=run_id,
            results_dir=root / "results",
            **QUIET,
        )
        assert summary.validity == "VALID"
    return root / "results"


def keyed(table: pd.DataFrame) -> dict[tuple[str, str, str, str], tuple[int, int]]:
    return {
        (str(r["slice"]), r["grader"], r["check"], r["subject"]): (int(r["rows"]), int(r["of"]))
        for r in table.to_dict("records")
    }


# --------------------------------------------------------------------------- findings


def test_each_grader_gives_its_failing_checks_as_findings_read_back_from_its_words() -> None:
    case = Case(
        id="c",
        shape="contract",
        turns=(Turn(user="Can I return order A-204939?"),),
        expect={
            "must_contain": ["A-204939", "refund window"],
            "must_not": ["full refund"],
            "regex": [r"\bweeks\b"],
            "tools": [{"name": "lookup_order", "args": {"order_id": "A-204939"}}],
            "tool_before_text": [{"tool": "lookup_order", "pattern": r"\d+ days"}],
            "retrieval": ["policy-refunds", "d17"],
            "final_state": {"cart": {"items": 2}},
        },
        final_state={"cart": {"items": 2}},
    )
    resp = Response(turns=[TurnOutput(text="You get a full refund of $119.00 within 30 days.")], retrieved=["faq"])
    contract, trajectory = ContractGrader().grade(case, resp), TrajectoryGrader().grade(case, resp)
    assert [f.to_dict() for f in contract.findings] == [
        {"grader": "contract", "check": "must_contain", "subject": '"<value>"'},  # an order id varies per row
        {"grader": "contract", "check": "must_contain", "subject": '"refund window"'},
        {"grader": "contract", "check": "must_not", "subject": '"full refund"'},
        {"grader": "contract", "check": "regex", "subject": r"/\bweeks\b/"},
    ]
    assert [(f.check, f.subject) for f in trajectory.findings] == [
        ("tools.missing", "lookup_order(order_id)"),
        ("tool_before_text", "lookup_order"),
    ]
    retrieval = RetrievalGrader().grade(case, resp)
    assert [(f.check, f.subject) for f in retrieval.findings] == [
        ("retrieval.missing", "policy-refunds"),
        ("retrieval.missing", "<value>"),
        ("retrieval.unexpected", "faq"),
    ]
    state = StateGrader().grade(case, Response(turns=resp.turns, raw={"final_state": {"cart": {"items": 3}}}))
    assert [(f.check, f.subject) for f in state.findings] == [("state.value", "cart.items")]
    judge = JudgeGrader.result(JudgeVerdict("REJECT", reasons=["quotes the window before looking up order A-1"]))
    assert [(f.check, f.subject) for f in judge.findings] == [
        ("reject", "quotes the window before looking up order <value>")
    ]
    assert JudgeGrader.result(JudgeVerdict("ACCEPT", reasons=["fine"])).findings == ()
    # what a run without stored findings (or a baseline) reads from the words is what the grader stored
    for name, result in (
        ("contract", contract),
        ("trajectory", trajectory),
        ("retrieval", retrieval),
        ("state", state),
        ("judge", judge),
    ):
        assert reason_findings(name, result.reason) == result.findings, name
        assert result.to_dict()["findings"] == [f.to_dict() for f in result.findings]
    # findings change no verdict and no version
    assert (ContractGrader().version, TrajectoryGrader().version) == ("1", "1")
    assert ContractGrader().grade(case, Response.from_text("A-204939 refund window weeks")).to_dict() == {
        "passed": True,
        "score": 1.0,
        "reason": "",
        "error": False,
    }


def test_rubrics_and_other_graders() -> None:
    out = rubric_outcome([("r1", "PASS", ""), ("r2", "FAIL", "no date; too long")], 1.0)
    assert reason_findings("rubrics", out.reason) == (Finding("rubrics", "rubric", "r2"),)
    # a grader whose words no parser knows: each part of a failed reason is an explanation, values left out
    cell = {"inspect:match": {"passed": False, "reason": "Expected 42, got 41; wrong unit", "error": False}}
    assert [f.label for f in findings_in(cell)] == [
        "inspect:match: Expected <value>, got <value>",
        "inspect:match: wrong unit",
    ]
    # a baseline keeps {grader: reason}: read as a failed row's or a passed row's
    assert findings_in({"x": "bad answer"}, failed=True) == [Finding("x", "explanation", "bad answer")]
    assert findings_in({"x": "polite"}, failed=False) == []
    assert findings_in({"contract": {"passed": None, "error": True, "reason": "timed out"}}) == []
    assert value_free("on 2026-09-18, $19.99 for SN6153372370") == "on <value>, <value> for <value>"


# --------------------------------------------------------------------------- clusters


def test_two_planted_causes_in_one_slice_are_both_found_with_their_counts(planted: Path) -> None:
    base, cand = read_run(planted / "base"), read_run(planted / "cand")
    cmp = compare_runs(base, cand)
    assert (cmp.b, cmp.c) == (9, 0)
    got = keyed(why(cmp))
    assert got[("refunds", "trajectory", "tools.missing", "lookup_order(order_id)")] == (5, 8)
    assert got[("refunds", "contract", "must_contain", '"<value>"')] == (3, 8)
    assert got[("shipping", "contract", "must_not", '"guaranteed refund"')] == (1, 1)
    assert got[("(overall)", "trajectory", "tools.missing", "lookup_order(order_id)")] == (5, 9)
    assert len(got) == 6  # nothing else: the causes, per slice and overall
    table = why(cmp)
    top = table.iloc[0]
    assert top["slice"] == "refunds" and set(top["row_ids"]) == TOOL_ROWS and top["share"] == pytest.approx(5 / 8)
    assert top["what"] == "trajectory: lookup_order(order_id) was not called"
    assert list(top["examples"]) == sorted(TOOL_ROWS)[:3]
    assert set(table[table["check"] == "must_contain"]["row_ids"].iloc[0]) == ID_ROWS
    assert why(cmp, status="RECOVERED").empty
    # the other way round: what the fixed agent fixed is what broke
    back = keyed(why(compare_runs(cand, base), status="RECOVERED"))
    assert back[("refunds", "trajectory", "tools.missing", "lookup_order(order_id)")] == (5, 8)
    # one run's failing rows: where a failure audit starts
    fails = keyed(why(cand))
    assert fails[("refunds", "trajectory", "tools.missing", "lookup_order(order_id)")] == (5, 8)
    assert why(base).empty


def test_runs_written_before_findings_cluster_the_same(planted: Path, tmp_path: Path) -> None:
    for run_id in ("base", "cand"):
        src, dst = planted / run_id, tmp_path / run_id
        dst.mkdir()
        (dst / "run.json").write_text((src / "run.json").read_text())
        lines = []
        for line in (src / "outcomes.jsonl").read_text().splitlines():
            rec = json.loads(line)
            assert rec["verdict"] != "FAIL" or any("findings" in g for g in rec["graders"].values())
            rec["graders"] = {k: {f: v for f, v in g.items() if f != "findings"} for k, g in rec["graders"].items()}
            lines.append(json.dumps(rec))
        (dst / "outcomes.jsonl").write_text("\n".join(lines) + "\n")
    old = compare_runs(read_run(tmp_path / "base"), read_run(tmp_path / "cand"))
    new = compare_runs(read_run(planted / "base"), read_run(planted / "cand"))
    pd.testing.assert_frame_equal(why(old), why(new))
    # an outcomes.parquet written before the findings field: read, and its findings come from the reasons
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(planted / "cand" / "outcomes.parquet")
    old_grade = pa.struct(
        [
            (n, table.schema.field("graders").type.item_type.field(n).type)
            for n in ("passed", "score", "reason", "error")
        ]
    )
    cells = [
        None if g is None else [(k, {f: v[f] for f in ("passed", "score", "reason", "error")}) for k, v in g]
        for g in table.column("graders").to_pylist()
    ]
    i = table.schema.get_field_index("graders")
    table = table.set_column(
        i, pa.field("graders", pa.map_(pa.string(), old_grade)), pa.array(cells, pa.map_(pa.string(), old_grade))
    )
    (tmp_path / "cand" / "outcomes.jsonl").unlink()
    pq.write_table(table, tmp_path / "cand" / "outcomes.parquet")
    df = outcomes_df(tmp_path / "cand", tmp_path / "base", columns=["row_id", "graders"])  # old and new schema
    assert len(df) == 2 * 14 * 3
    pd.testing.assert_frame_equal(why(read_run(tmp_path / "cand")), why(read_run(planted / "cand")))


def test_a_baseline_snapshot_clusters_from_its_reasons(planted: Path, tmp_path: Path) -> None:
    from goldenkit import read_baseline, save_baseline

    save_baseline(read_run(planted / "cand"), "broken", baselines_dir=tmp_path)
    snap = read_baseline("broken", baselines_dir=tmp_path)
    got = keyed(why(compare_runs(snap, read_run(planted / "base")), status="RECOVERED"))
    assert got[("refunds", "trajectory", "tools.missing", "lookup_order(order_id)")] == (5, 8)
    assert got[("refunds", "contract", "must_contain", '"<value>"')] == (3, 8)


def test_compare_prints_the_clusters_and_the_report_links_them(
    planted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "base", "cand", "--results-dir", str(planted)]) == 0
    out = capsys.readouterr().out
    line = (
        "refunds: 5 of 8 broken rows — trajectory: lookup_order(order_id) was not called (ref-00, ref-01, ref-02, ...)"
    )
    assert line in out
    assert out.index("why it broke") < out.index("flips (9):")
    assert main(["compare", "base", "cand", "--results-dir", str(planted), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["why"]["NEW_FAILURE"][0]["rows"] == 5 and doc["why"]["RECOVERED"] == []
    html = str(clusters_html(compare_runs(read_run(planted / "base"), read_run(planted / "cand"))))
    assert "5 of 8 broken rows" in html and '<a href="#flip-ref-00">ref-00</a>' in html
    assert "the answer lacks &quot;&lt;value&gt;&quot;" in html  # escaped


def test_model_text_in_a_subject_is_escaped_in_the_report() -> None:
    from goldenkit.report._compare import clusters_html as render

    class Fake:
        flip_rows = pd.DataFrame()
        flips = pd.DataFrame(
            {
                "row_id": ["r1"],
                "slice": ["s"],
                "status": ["NEW_FAILURE"],
                "base_findings": [[]],
                "cand_findings": [[{"grader": "judge", "check": "reject", "subject": "<script>alert(1)</script>"}]],
            }
        )

    html = str(render(Fake()))  # type: ignore[arg-type]
    assert "<script>" not in html and "&lt;script&gt;" in html


@needs_shared("interop", "results")
def test_imported_runs_cluster_by_their_scorers_explanations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inspect = shared_dir("interop", "results") / "UKGovernmentBEIS__inspect_ai"
    monkeypatch.chdir(tmp_path)
    log = "log-sets__set2__2025-09-15T15-04-34-04-00_popularity_CuCFPdqnwXupUkxp69nJ2a.eval"
    assert main(["import-run", str(inspect / log), "--format", "inspect", "--run-id", "gpt5"]) == 0
    run = read_run(tmp_path / "results" / "gpt5")
    got = keyed(why(run))
    # inspect's match scorer explains each failing sample: 4 of the 10 rows fail, every one explained "No"
    assert got[("all", "match", "explanation", "No")] == (4, 4)


def test_the_audit_filters_failing_rows_by_cluster(planted: Path) -> None:
    from goldenkit.audit import AuditBrowser, failing_rows

    browser = AuditBrowser(failing_rows(outcomes_df(planted / "cand")))
    clusters = browser.options("cluster")
    assert clusters[0] == "trajectory: lookup_order(order_id) was not called"  # largest first
    browser.set_filter(cluster=clusters[0])
    assert set(browser.view["row_id"]) == TOOL_ROWS
    browser.set_filter(cluster='contract: the answer lacks "<value>"', slice="refunds")
    assert set(browser.view["row_id"]) == ID_ROWS
    # the same lines as goldenkit.why of the run
    assert set(clusters) == set(why(read_run(planted / "cand"))["what"])
