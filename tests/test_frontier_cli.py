"""The cost columns and the quality-cost frontier through the CLI: leaderboard, benchmark, pages, the notebook.

Hand numbers of :func:`three_runs` (40 rows, one repeat, every outcome's tokens given, none out):
``best`` passes 36 rows at 100 tokens a row -> 40 * 100 / 36 = 111.1 tokens per passing row;
``cheap`` 24 at 20 -> 33.3; ``bad`` 20 at 300 -> 600. ``bad`` is beaten on both by ``best`` on every
resample (its pass rate is below best's whatever rows are drawn, its tokens per row three times as many).
Priced at USD 1 per million input tokens: best 40 * 100 / 1e6 / 36 = $0.000111 per passing row.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from fakeserver import FakeModelServer, Reply
from leaderboard_fixtures import rendered_leaderboard
from run_factory import manifest, outcomes, write_run
from test_run_cli import make_dataset

from goldenkit.cli import main
from goldenkit.pages import build_site

RUNS = (("best", 36, 100), ("cheap", 24, 20), ("bad", 20, 300))  # run id, passing rows, tokens per row
PRICES = '[pricing.m]\ninput = 1.0\noutput = 2.0\nsource = "list"\ndate = "2026-11-01"\n'


def three_runs(root: Path, prefix: str | None = None) -> list[str]:
    paths = []
    for run_id, passing, tokens in RUNS:
        frame = outcomes([(f"r{i:02d}", "s", ("PASS" if i < passing else "FAIL",)) for i in range(40)], run_id=run_id)
        frame["tokens_in"], frame["tokens_out"] = tokens, 0
        frame["latency_ms"] = float(tokens)
        man = manifest(run_id, model_id=f"model-{run_id}", repeats=1)
        if prefix is not None:  # as goldenkit benchmark records it
            man["config"] = {"max_in_flight": 8, "extra": {"config_file": None, "benchmark": prefix}}
        paths.append(str(write_run(root, man, frame)))
    return paths


def test_leaderboard_prints_the_costs_and_the_frontier(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = three_runs(tmp_path)
    assert main(["leaderboard", *runs, "--frontier-resamples", "300", "--frontier-seed", "7"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("cost and the quality-cost frontier:") :].splitlines()
    assert block[1].split("  ")[0:1] == ["run"] and "tokens / passing row" in block[1]
    lines = {line.split()[0]: line for line in block[2:5]}
    assert [line.split()[1:5] for line in block[2:5]] == [
        ["(best)", "90.0%", "111", "n/a"],
        ["(cheap)", "60.0%", "33", "n/a"],
        ["(bad)", "50.0%", "600", "n/a"],
    ]
    assert "100 ms" in lines["model-best"] and lines["model-bad"].rstrip().endswith("yes, by best")
    assert "pass rate against candidate tokens per passing row" in out and "(300 resamples, seed 7)" in out


def test_leaderboard_json_records_the_seed_and_is_reproducible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = three_runs(tmp_path)
    args = ["leaderboard", *runs, "--json", "--frontier-resamples", "300", "--frontier-seed", "7"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["frontier"] == {"measure": "candidate tokens per passing row", "seed": 7, "resamples": 300}
    t = pd.DataFrame(doc["table"]).set_index("run_id")
    assert t.loc["best", "tokens_per_pass"] == pytest.approx(4000 / 36)
    assert t.loc["cheap", "tokens_per_pass"] == pytest.approx(800 / 24) and t.loc["bad", "tokens_per_pass"] == 600
    assert t["money_per_pass"].isna().all() and set(t["money_source"]) == {"n/a (no prices)"}
    assert t["latency_p50_ms"].to_dict() == {"best": 100.0, "cheap": 20.0, "bad": 300.0}
    assert t["on_frontier"].to_dict() == {"best": True, "cheap": True, "bad": False}
    assert (
        t.loc["bad", "dominated_95"] and t.loc["bad", "dominated_by"] == "best" and t.loc["bad", "frontier_prob"] == 0
    )
    assert t.loc["best", "frontier_prob"] == 1.0
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["table"] == doc["table"]  # same seed, same probabilities


def test_prices_of_the_config_make_money_the_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = three_runs(tmp_path)
    config = tmp_path / "goldenkit.toml"
    config.write_text(PRICES)
    assert main(["leaderboard", *runs, "--json", "--config", str(config), "--frontier-resamples", "50"]) == 0
    doc = json.loads(capsys.readouterr().out)
    t = pd.DataFrame(doc["table"]).set_index("run_id")
    assert doc["frontier"]["measure"] == "candidate money per passing row"
    assert t.loc["best", "money_per_pass"] == pytest.approx(40 * 100 / 1e6 / 36)
    assert set(t["money_source"]) == {"[pricing] list 2026-11-01"}
    assert main(["leaderboard", *runs, "--config", str(config), "--frontier-resamples", "50"]) == 0
    assert "$0.0001 ([pricing] list 2026-11-01)" in capsys.readouterr().out


def test_bad_frontier_options_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = three_runs(tmp_path)
    assert main(["leaderboard", *runs, "--frontier-resamples", "0"]) == 1
    assert "--frontier-resamples" in capsys.readouterr().err
    assert main(["leaderboard", *runs, "--frontier-seed", "-1"]) == 1
    assert "--frontier-seed" in capsys.readouterr().err


def test_benchmark_prints_the_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ds = make_dataset(tmp_path, 12)

    def responder(req: object) -> Reply:
        body = getattr(req, "json", {})
        number = int(str(body["messages"][-1]["content"]).split()[-1])
        if body["model"] == "big":
            return Reply.text("yes", tokens_in=50, tokens_out=30)
        return Reply.text("yes" if number % 2 else "no", tokens_in=10, tokens_out=2)

    with FakeModelServer(responder=responder) as srv:
        args = ["benchmark", str(ds), "--provider", "openai", "--base-url", srv.url, "--models", "big,small"]
        args += ["--run-prefix", "c1", "--results-dir", str(tmp_path / "res"), "--quiet", "--frontier-resamples", "99"]
        assert main([*args, "--json"]) == 0
        out = capsys.readouterr().out
        doc = json.loads(out[out.index("{") :])
        assert main(args) == 0  # resumed: nothing called, the text this time
        text = capsys.readouterr().out
    t = pd.DataFrame(doc["table"]).set_index("run_id")
    assert t.loc["c1-big", "tokens_per_pass"] == 80.0  # 12 rows x 80 tokens over 12 passing rows
    assert t.loc["c1-small", "tokens_per_pass"] == 24.0  # 12 rows x 12 tokens over its 6 passing rows
    assert t["on_frontier"].all() and doc["frontier"]["resamples"] == 99
    assert "cost and the quality-cost frontier:" in text and "tokens / passing row" in text


def test_pages_show_the_frontier(tmp_path: Path) -> None:
    results = tmp_path / "results"
    three_runs(results, prefix="p1")
    result = build_site(tmp_path / "site", results, tmp_path / "baselines", title="site", render=False)
    assert result.failures == []
    html = (tmp_path / "site" / "leaderboards" / "p1.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="frontier">') :]
    section = section[: section.index("</section>")]
    assert "Cost and the quality-cost frontier" in html and "tokens per passing row" in html
    assert "<td>model-bad (bad)</td>" in section
    assert ">600<" in section and ">111<" in section and "yes, by best" in section
    assert "<svg" in section  # the plot of pass rate against cost


def test_the_notebook_plots_quality_against_cost() -> None:
    page = rendered_leaderboard()  # goldenkit report --leaderboard over three runs (leaderboard_fixtures)
    text = page.read_text(encoding="utf-8")
    assert "Quality against cost" in text and "tokens / passing row" in text
    executed = nbformat.read(page.with_suffix(".ipynb"), as_version=4)
    cells = [c for c in executed.cells if c.cell_type == "code"]
    figure = next(c for c in cells if "frontier_figure" in c.source)
    table = next(c for c in cells if "cost_table" in c.source)
    assert any("image/png" in o.get("data", {}) for o in figure.outputs)
    # strong: 60 rows x 3 repeats x 15 tokens over its 60 passing rows
    assert any(">45<" in o.get("data", {}).get("text/html", "") for o in table.outputs)
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
