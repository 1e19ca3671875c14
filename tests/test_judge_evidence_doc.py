"""docs/judge-evidence.md, executed: its python blocks run in order in one namespace, as a notebook's cells.

The walk-through labels two rounds of about 15 proposed rows through the audit widget's objects and one
hand-picked row; the test checks what it wrote (labels.jsonl, the rounds), that the figures it printed
are `judge_estimates`' on those files, and that the interval narrowed from the first round to the second.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from factories import blocks

from goldenkit.results import LABELS_FILE, judge_estimates, read_run
from goldenkit.results._judge_evidence import read_rounds
from goldenkit.stats import OVERALL

DOC = Path(__file__).resolve().parent.parent / "docs" / "judge-evidence.md"


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    """The doc's namespace and printed text after every python block ran, and the run folder."""
    code = [b for b in blocks(DOC.read_text(encoding="utf-8")) if b.lang == "python"]
    assert len(code) >= 5, "docs/judge-evidence.md lost its python blocks"
    folder = tmp_path_factory.mktemp("doc")
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.chdir(folder)
        for b in code:
            exec(compile(b.text, f"{DOC.name}:{b.line}", "exec"), namespace)
    return namespace, out.getvalue(), folder / "results" / "judged"


def test_the_walk_through_labels_about_30_proposed_rows_and_one_hand_picked(
    walked: tuple[dict[str, Any], str, Path],
) -> None:
    ns, _, run = walked
    lines = [json.loads(x) for x in (run / LABELS_FILE).read_text(encoding="utf-8").splitlines()]
    designed = [x for x in lines if x["probability"] is not None]
    hand = [x for x in lines if x["probability"] is None]
    rounds = read_rounds(read_run(run))
    assert len(rounds) == 2 and [r.seed for r in rounds] == [1, 2]
    assert {x["row_id"] for x in designed} == {r for rd in rounds for r in rd.drawn}
    assert 20 <= len(designed) <= 40 and len(hand) == 1 and hand[0]["human"] == "FAIL"
    assert all(x["who"] == "ana" and x["source"] == "audit" for x in lines)
    assert all(x["human"] == ns["truth"][x["row_id"]] for x in designed)


def test_the_interval_narrows_and_the_figures_are_judge_estimates(walked: tuple[dict[str, Any], str, Path]) -> None:
    ns, printed, run = walked
    first, second = ns["first"], ns["second"]
    assert first["method"].startswith("ppi++") and second["method"].startswith("ppi++")
    assert second["ci_high"] - second["ci_low"] < first["ci_high"] - first["ci_low"]
    assert second["n_human"] > first["n_human"] > 0
    now = judge_estimates(run).loc[OVERALL]
    assert now["estimate"] == pytest.approx(second["estimate"]) and now["ci_low"] == pytest.approx(second["ci_low"])
    assert ns["before"]["method"] == "judge only" and "no human label" in ns["before"]["reason"]
    half = (second["ci_high"] - second["ci_low"]) / 2
    assert f"-> +/-{half:.1%}" in printed
    assert "hand-picked" in printed and "never used for inference" in printed
    assert "label these" in printed and "after labelling +/-" in printed  # the expected width, before labelling
