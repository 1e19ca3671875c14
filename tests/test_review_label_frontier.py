"""A hostile review of run labels, results/latest and the quality-cost frontier: each test is a case a user
met through the command line or the leaderboard, and the rule it holds."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from factories import numbered_rows, write_dataset
from fakeserver import FakeModelServer, Reply

import goldenkit
from goldenkit import leaderboards
from goldenkit.cli import main
from goldenkit.history import runs_df
from goldenkit.leaderboards._frontier import frontier_bootstrap
from goldenkit.results import read_run

PASS, FAIL, ERROR = 0, 1, 2


def _equal_boards(runs: int, boards: int, rows: int = 60, resamples: int = 1000) -> float:
    """The share of boards of ``runs`` runs of one true pass rate (70%) and one token cost on which some run is
    called dominated at 95%."""
    rng = np.random.default_rng(7)
    called = 0
    for b in range(boards):
        verdict = np.where(rng.random((runs, rows)) < 0.7, PASS, FAIL)
        spent = rng.gamma(4.0, 25.0, size=(runs, rows)) if b % 2 else np.full((runs, rows), 100.0)
        f = frontier_bootstrap(verdict, spent, [f"r{i}" for i in range(runs)], seed=b, resamples=resamples)
        called += bool(f.dominated_95.any())
    return called / boards


@pytest.mark.parametrize("runs", [2, 5])
def test_runs_of_equal_quality_and_cost_are_rarely_called_dominated(runs: int) -> None:
    """ "Dominated at 95%" is a claim about the board: among runs that are all alike it is made on about 5% of
    boards or fewer. Before, a run beaten by *any* other run in 95% of resamples was dominated: five equal
    runs were so called on 82% of boards, ten on all of them."""
    assert _equal_boards(runs, boards=240) <= 0.08


def test_a_run_with_no_graded_row_is_neither_dominated_nor_on_the_frontier() -> None:
    """An outage (every row ERROR) is no evidence of quality: its frontier columns are n/a, never "dominated
    at 95%, by" the run that answered."""

    def run(verdicts: list[str], tokens: list[int | None]) -> pd.DataFrame:
        n = len(verdicts)
        return pd.DataFrame(
            {"row_id": [f"r{i}" for i in range(n)], "repeat": 0, "slice": "s", "verdict": verdicts}
        ).assign(tokens_in=tokens, tokens_out=[1] * n)

    answered = run(["PASS"] * 6 + ["FAIL"] * 4, [10] * 10)
    outage = run(["ERROR"] * 10, [None] * 10)
    lb = goldenkit.leaderboard({"answered": answered, "outage": outage}, frontier_resamples=200)
    t = lb.table.set_index("run_id")
    assert t.loc["outage", "dominated_95"] is None and t.loc["outage", "dominated_by"] is None
    assert t.loc["outage", "on_frontier"] is None and np.isnan(t.loc["outage", "frontier_prob"])
    assert bool(t.loc["answered", "on_frontier"]) and t.loc["answered", "frontier_prob"] == 1.0
    shown = leaderboards.cost_table(lb).loc["outage"]  # a run given as a DataFrame is labelled by its name
    assert shown["dominated at 95%"] == "n/a" and shown["on frontier"] == "n/a"


def test_a_run_that_passed_no_row_reads_none_passed_not_n_a_or_its_price_source() -> None:
    """Per passing row is not a number for a run that passed nothing (the frontier counts it infinite): the
    cost table says "none passed"; before, tokens read "n/a" (as if never counted) and money read its
    source alone ("provider") in the money column."""

    def run(verdicts: list[str]) -> pd.DataFrame:
        n = len(verdicts)
        return pd.DataFrame(
            {"row_id": [f"r{i}" for i in range(n)], "repeat": 0, "slice": "s", "verdict": verdicts}
        ).assign(tokens_in=10, tokens_out=1, cost=0.01)

    lb = goldenkit.leaderboard({"good": run(["PASS", "FAIL"] * 5), "none": run(["FAIL"] * 10)}, frontier_resamples=50)
    shown = leaderboards.cost_table(lb)
    assert shown.loc["none", "tokens / passing row"] == "none passed"
    assert shown.loc["none", "money / passing row"] == "none passed"
    assert shown.loc["good", "tokens / passing row"] == "22" and shown.loc["good", "money / passing row"].startswith(
        "$"
    )
    assert not lb.table.set_index("run_id").loc["none", "on_frontier"]


def test_identical_runs_never_beat_each_other_in_a_resample() -> None:
    """The resampling is paired (the same rows for every run): two runs with the same verdicts and spend are
    tied in every resample, so each is on the frontier in all of them."""
    rng = np.random.default_rng(3)
    verdict = np.where(rng.random(50) < 0.6, PASS, FAIL)
    spent = rng.integers(10, 200, size=50).astype(float)
    f = frontier_bootstrap(np.vstack([verdict, verdict]), np.vstack([spent, spent]), ["a", "b"], resamples=300)
    assert f.frontier_prob.tolist() == [1.0, 1.0] and f.beats.sum() == 0


def test_too_few_resamples_to_call_a_run_dominated_is_said() -> None:
    """With m runs, the smallest bootstrap p (1 / (B + 1)) must pass Holm's first threshold (0.05 over the
    m (m - 1) ordered pairs); with fewer resamples no run can be called dominated and the notes say so."""
    rows = 40
    boards = {
        f"r{i}": pd.DataFrame(
            {"row_id": [f"x{j}" for j in range(rows)], "repeat": 0, "slice": "s", "verdict": "PASS"}
        ).assign(verdict=["PASS"] * (rows - 4 * i) + ["FAIL"] * (4 * i), tokens_in=10 * (i + 1), tokens_out=1)
        for i in range(4)
    }
    few = goldenkit.leaderboard(boards, frontier_resamples=100)
    assert any(n.startswith("100 frontier resamples are too few") and "240 or more" in n for n in few.notes)
    assert not few.table["dominated_95"].any()
    enough = goldenkit.leaderboard(boards, frontier_resamples=240)
    assert not any("too few" in n for n in enough.notes)
    assert enough.table.set_index("run_id")["dominated_95"].to_dict() == {
        "r0": False,
        "r1": True,
        "r2": True,
        "r3": True,
    }


# ------------------------------------------------------------------ labels and results/latest, through the CLI


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeModelServer(default=Reply.text("ok")) as srv:
        yield srv


@pytest.fixture
def ds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    rows = numbered_rows(6, lambda i: {"prompt": f"q{i}", "expect": {"must_contain": ["ok" if i % 3 else "no"]}})
    return write_dataset(tmp_path, rows, name="hostile", toml='[graders]\nuse = ["contract"]\n')


def _run(ds: Path, server: Any, run_id: str, *extra: str, code: int = 0) -> None:
    argv = ["run", str(ds), "--provider", "openai", "--base-url", server.url, *extra]
    assert main([*argv, "--run-id", run_id, "--quiet"]) == code


def test_a_derived_label_is_one_line_without_invisible_characters(ds: Path, server: Any) -> None:
    """A model name or a system prompt may carry a newline or a right-to-left override; the label derived
    from them is shown as one plain line (before, the override reached the leaderboard, the pages and the
    runs index and reversed what followed it), and HTML in it stays text on the pages."""
    _run(ds, server, "rtl", "--model", "ti\u202eny", "--system", "Be \u202e brief\u200b\nnow <b>x")
    label = runs_df("results", None).set_index("run_id").loc["rtl", "label"]
    assert label == 'tiny system "Be brief now <b>x"'
    assert main(["pages", "-o", "site", "--no-render", "--results-dir", "results"]) == 0
    index = (Path("site") / "index.html").read_text(encoding="utf-8")
    shown = index.replace("&quot;", '"')
    assert 'tiny system "Be brief now &lt;b&gt;x"' in shown and "\u202eny system" not in shown


def test_a_dollar_in_a_label_is_a_dollar_on_the_frontier_plot(ds: Path, server: Any) -> None:
    """The frontier plot (the leaderboard notebook, the site's leaderboard pages) writes labels as text:
    before, matplotlib read ``$...$`` as TeX, so ``$\\frac{1}$`` stopped the figure with a ValueError."""
    _run(ds, server, "a", "--model", "tiny", "--label", "cost $\\frac{1}$ per call")
    _run(ds, server, "b", "--model", "tiny", "--label", "from $5 to $6")
    lb = goldenkit.leaderboard(["results/a", "results/b"], frontier_resamples=50)
    fig = leaderboards.frontier_figure(lb)
    fig.savefig(io.BytesIO(), format="svg")
    shown = sorted(t.get_text().split(" (P ")[0] for t in fig.axes[0].texts)
    assert shown == ["cost $\\frac{1}$ per call (a)", "from $5 to $6 (b)"]


def test_benchmark_refuses_one_label_for_every_run_and_takes_one_per_agent(
    ds: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``goldenkit benchmark --label`` was accepted and silently dropped; one label for every model would
    name them all alike. It is refused before anything is written; an agent table takes its own label."""
    argv = ["benchmark", str(ds), "--provider", "openai", "--base-url", server.url, "--quiet"]
    calls = server.count()
    assert main([*argv, "--models", "tiny,small", "--label", "nightly"]) == 1
    assert "goldenkit benchmark: --label does not apply" in capsys.readouterr().err
    assert not Path("results").exists() and server.count() == calls
    agents = '[[benchmark.agents]]\nname = "t"\nmodel = "tiny"\nlabel = " tiny, the cheap one "\n'
    agents += '[[benchmark.agents]]\nname = "s"\nmodel = "small"\n'
    (ds / "goldenkit.toml").write_text('[graders]\nuse = ["contract"]\n' + agents)
    assert main([*argv, "--run-prefix", "day"]) == 0
    labels = runs_df("results", None).set_index("run_id")["label"].to_dict()
    assert labels == {"day-t": "tiny, the cheap one", "day-s": "small"}
    (ds / "goldenkit.toml").write_text('[graders]\nuse = ["contract"]\n' + agents.replace("the cheap one", "a\\tb"))
    assert main([*argv, "--run-prefix", "day2"]) == 1
    err = capsys.readouterr().err
    assert "goldenkit.toml: [[benchmark.agents]] #1: label must be one line" in err and "U+0009" in err


def test_a_resume_whose_budget_is_already_spent_leaves_latest(ds: Path, server: Any) -> None:
    """A resume that writes no outcome did nothing, whatever the reason: before, a resume stopped by the
    budget it was already at (0 calls) moved results/latest to it, and the notebooks opened the old run."""
    _run(ds, server, "capped", "--model", "tiny", "--max-calls", "2", code=3)
    _run(ds, server, "other", "--model", "tiny")
    calls = server.count()
    _run(ds, server, "capped", "--model", "tiny", "--max-calls", "2", code=3)
    assert server.count() == calls and read_run("latest").run_id == "other"
    _run(ds, server, "capped", "--model", "tiny", "--max-calls", "4", code=3)  # a larger budget: two more
    assert server.count() == calls + 2 and read_run("latest").run_id == "capped"
