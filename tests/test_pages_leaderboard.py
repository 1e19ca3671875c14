"""The site's leaderboard pages: one per group of `goldenkit benchmark` runs, the numbers of the library."""

from __future__ import annotations

import json
import math
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest
from leaderboard_site import HOSTILE_MODEL, HOSTILE_PREFIX, HOSTILE_RUN, benchmark_run, hostile_group, mismatched_group

import goldenkit
from goldenkit.cli import main as cli_main
from goldenkit.history import CACHE_FILE, runs_df
from goldenkit.notebooks import remote_references
from goldenkit.pages import build_site
from goldenkit.pages._html import slug

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "datasets" / "support-agent"
AGENTS = ("baseline", "candidate", "budget")


class _Cells(HTMLParser):
    """The text of every cell of the table inside ``<section id=WHICH>``, row by row."""

    def __init__(self, which: str) -> None:
        super().__init__()
        self.which, self.depth = which, 0
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section" and ("id", self.which) in attrs:
            self.depth = 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag == "td":
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.depth = 0
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def cells(html: str, which: str) -> list[list[str]]:
    parser = _Cells(which)
    parser.feed(html)
    return [r for r in parser.rows if r]  # the header row has th cells only


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """`goldenkit benchmark` of the three recorded agents (prefix demo), small groups, the site: (results, site)."""
    root = tmp_path_factory.mktemp("bench")
    results = root / "results"
    toml = root / "goldenkit.toml"
    toml.write_text(
        '[graders]\nuse = ["contract", "trajectory"]\n[run]\nrepeats = 3\nsplit = "holdout"\nprovider = "fixtures"\n'
        + "".join(f'[[benchmark.agents]]\nname = "{a}"\nfixtures = "{SUPPORT / "fixtures" / a}"\n' for a in AGENTS)
    )
    code = cli_main(
        [
            "benchmark",
            str(SUPPORT),
            "--config",
            str(toml),
            "--results-dir",
            str(results),
            "--run-prefix",
            "demo",
            "--quiet",
        ]
    )
    assert code == 0
    hostile_group(results)
    mismatched_group(results)
    benchmark_run(results, "lonely", "alone", 5)  # one ok run: no leaderboard
    result = build_site(root / "site", results, root / "baselines", title="Bench <site>", render=False)
    assert result.failures == []
    return results, root / "site"


def test_runs_df_has_the_benchmark_prefix(bench: tuple[Path, Path]) -> None:
    runs = runs_df(bench[0], None)
    runs = runs[[Path(p).name != "latest" for p in runs["path"]]].set_index("run_id")  # the runner's link
    assert list(runs.loc[[f"demo-{a}" for a in AGENTS], "benchmark"]) == ["demo"] * 3
    assert runs.loc[HOSTILE_RUN, "benchmark"] == HOSTILE_PREFIX and runs.loc["odd-b", "benchmark"] == "odd"
    sql = "SELECT count(DISTINCT run_id) AS n FROM runs WHERE benchmark = 'demo'"
    assert goldenkit.history.query(sql, results_dir=bench[0], baselines_dir=None)["n"].iloc[0] == 3


def test_a_cache_written_before_the_column_is_not_trusted(tmp_path: Path) -> None:
    benchmark_run(tmp_path, "a", "p", 3)
    runs_df(tmp_path, None)
    cache = json.loads((tmp_path / CACHE_FILE).read_text())
    del cache["columns"]
    for entry in cache["runs"].values():
        del entry["row"]["benchmark"]
    (tmp_path / CACHE_FILE).write_text(json.dumps(cache))
    assert list(runs_df(tmp_path, None)["benchmark"]) == ["p"]


def test_the_page_shows_the_numbers_goldenkit_leaderboard_prints(
    bench: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    results, site = bench
    html = (site / "leaderboards" / "demo.html").read_text(encoding="utf-8")
    assert remote_references(html) == [] and "default-src 'none'" in html
    paths = [str(results / f"demo-{a}") for a in AGENTS]
    capsys.readouterr()
    assert cli_main(["leaderboard", *paths, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    table = cells(html, "leaderboard")
    assert [r["run_id"] for r in doc["table"]] == ["demo-candidate", "demo-baseline", "demo-budget"]
    assert (  # each run's label (the recorded agent's name), then its id
        [r[2] for r in table]
        == [f"{r['label']} {r['run_id']}" for r in doc["table"]]
        == ["candidate demo-candidate", "baseline demo-baseline", "budget demo-budget"]
    )
    for row, want in zip(table, doc["table"], strict=True):
        lo, hi = want["rank_low"], want["rank_high"]
        rank = str(lo) if lo == hi else f"{lo}–{hi}"
        shown = f"{want['label']} {want['run_id']}"
        assert row[:5] == [want["group"], rank, shown, want["model"], f"{want['k']}/{want['n']}"]
        assert row[5] == f"{_pct(want['pass_rate'])} [{_pct(want['ci_low'])}, {_pct(want['ci_high'])}]"
        assert row[6:] == [_pct(want["pass_at_k"]), _pct(want["pass_hat_k"]), str(want["errors"])]
    assert [r[0] for r in table] == ["top", "top", "A"] and table[0][4] == "356/400" and table[2][4] == "322/400"
    pairs = {(r[0], r[1]): r for r in cells(html, "pairs")}
    assert [p["a"] + " " + p["b"] for p in doc["pairs"]] == [" ".join(k) for k in pairs]
    for p in doc["pairs"]:
        row = pairs[(p["a"], p["b"])]
        assert row[2:6] == [str(p["n_paired"]), str(p["excluded"]), str(p["b_count"]), str(p["c_count"])]
        assert row[8] == ("yes" if p["significant"] else "no")
        assert row[9] == f"{100 * p['diff']:+.1f} [{100 * p['diff_ci_low']:.1f}, {100 * p['diff_ci_high']:.1f}]"
    # hand-checked: candidate vs baseline 14 vs 10 discordant rows (the documented worked example), exact McNemar
    # p = 2 * P(X <= 10), X ~ Binomial(24, 1/2); budget is the baseline with 30 rows refused: 30 vs 0
    top = pairs[("demo-candidate", "demo-baseline")]
    p_exact = 2 * sum(math.comb(24, i) for i in range(11)) / 2**24
    assert (top[4], top[5], top[6], top[8]) == ("14", "10", f"{p_exact:.4f}", "no") and top[6] == "0.5413"
    assert pairs[("demo-baseline", "demo-budget")][4:6] == ["30", "0"]
    assert f"{2 * 0.5**30:.1e}" == pairs[("demo-baseline", "demo-budget")][6]
    assert 'id="top-note"' in html and "indistinguishable from the leader" in html
    capsys.readouterr()
    assert cli_main(["leaderboard", *paths]) == 0  # the text table prints the same figures
    text = capsys.readouterr().out
    for row in pairs.values():
        assert row[9] in text  # "+1.0 [-1.5, 3.6]": the paired difference as the text table prints it
    for row, want in zip(table, doc["table"], strict=True):
        assert f"{100 * want['pass_rate']:.1f} [{100 * want['ci_low']:.1f}, {100 * want['ci_high']:.1f}]" in text
        assert row[5].startswith(f"{100 * want['pass_rate']:.1f}%")


def test_hostile_names_are_escaped_and_the_hand_numbers_shown(bench: tuple[Path, Path]) -> None:
    site = bench[1]
    page = site / "leaderboards" / f"{slug(HOSTILE_PREFIX)}.html"
    html = page.read_text(encoding="utf-8")
    for raw in (HOSTILE_RUN, HOSTILE_MODEL, HOSTILE_PREFIX, "<script>", "<img", "<i>"):
        assert raw not in html, raw
    assert "h&lt;img src=x onerror=alert(1)&gt;" in html and "m&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Leaderboard x&lt;i&gt;&quot;&amp;" in html
    table = cells(html, "leaderboard")
    assert [r[:5] for r in table] == [
        ["top", "1", "m-plain ok", "m-plain", "20/20"],  # the label (the model here), then the run id
        ["A", "2", f"{HOSTILE_MODEL} {HOSTILE_RUN}", HOSTILE_MODEL, "12/20"],
    ]
    assert [r[5] for r in table] == ["100.0% [83.9%, 100.0%]", "60.0% [38.7%, 78.1%]"]  # Wilson, by hand
    assert [r[6] for r in table] == ["100.0%", "60.0%"]  # pass@1 is the pass rate with one repeat
    (pair,) = cells(html, "pairs")
    assert pair[:9] == ["ok", HOSTILE_RUN, "20", "0", "8", "0", "0.0078", "0.0078", "yes"]  # 2 * 0.5**8, one pair
    assert "broken (invalid): INVALID" in html  # the invalid run of the group is named and left out
    index = (site / "index.html").read_text(encoding="utf-8")
    assert HOSTILE_PREFIX not in index and "x&lt;i&gt;&quot;&amp;: 2 runs" in index
    assert f'href="leaderboards/{slug(HOSTILE_PREFIX)}.html"' in index


def test_a_mismatched_group_says_not_comparable(bench: tuple[Path, Path]) -> None:
    site = bench[1]
    html = (site / "leaderboards" / "odd.html").read_text(encoding="utf-8")
    assert "not comparable" in html and "run odd-b vs odd-a: repeats differ: 3 vs 1" in html
    assert 'id="leaderboard"' not in html and 'id="pairs"' not in html and "top" not in html.split("<main>")[1]
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "<h2>Leaderboards</h2>" in index and 'href="leaderboards/odd.html">odd: 2 runs</a> not comparable' in index
    assert 'href="leaderboards/demo.html">demo: 3 runs</a> top group: demo-candidate, demo-baseline' in index
    assert not (site / "leaderboards" / "alone.html").exists()  # one ok run: nothing to rank


def test_leaderboards_are_reused_while_their_runs_are_unchanged(bench: tuple[Path, Path], tmp_path: Path) -> None:
    results = tmp_path / "results"
    hostile_group(results)
    mismatched_group(results)
    site = tmp_path / "site"
    first = build_site(site, results, tmp_path / "b", render=False)
    pages = sorted(p for p in first.rendered if p.startswith("leaderboards/"))
    assert pages == sorted(["leaderboards/odd.html", f"leaderboards/{slug(HOSTILE_PREFIX)}.html"])
    again = build_site(site, results, tmp_path / "b", render=False)
    assert not [p for p in again.rendered if p.startswith("leaderboards/")]
    assert set(pages) <= set(again.reused)
    assert "not comparable" in (site / "index.html").read_text()  # the note survives a reuse
    later = (results / "odd-b" / "run.json").stat().st_mtime_ns + 10**9
    os.utime(results / "odd-b" / "run.json", ns=(later, later))
    third = build_site(site, results, tmp_path / "b", render=False)
    assert [p for p in third.rendered if p.startswith("leaderboards/")] == ["leaderboards/odd.html"]
    for name in ("odd-a", "odd-b"):
        for f in (results / name).iterdir():
            f.unlink()
        (results / name).rmdir()
    build_site(site, results, tmp_path / "b", render=False)
    assert not (site / "leaderboards" / "odd.html").exists()
    assert "leaderboards/odd.html" not in (site / "index.html").read_text()
