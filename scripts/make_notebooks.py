"""Write notebooks/*.ipynb (shipped in the wheel as package data, without outputs) from the cell sources below.

The notebooks are thin: a ``parameters`` cell of literals (papermill injects
the real values after it), then one goldenkit call per cell. The run report's
and the comparison's cells come from their declaration in the library
(goldenkit/report/_layout.py, which ``goldenkit pages`` follows as well); the
other notebooks' cells are below. Edit them and re-run
``python scripts/make_notebooks.py``; tests check that the committed notebooks
match this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from goldenkit.report import LAYOUTS

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def setup(imports: str) -> str:
    """The setup cell: the notebook's imports, then the display settings."""
    return f"{imports}\n\nreport.setup_notebook()"


#: the run report and the comparison are declared in the library (goldenkit.report.LAYOUTS), which the pages
#: of ``goldenkit pages`` follow too; their notebooks are written from that declaration
REPORT = LAYOUTS["report"].cells()
COMPARE = LAYOUTS["compare"].cells()

AUDIT = [
    (
        "md",
        "# Failure audit\nRead failing rows and mark each one as a label error, an agent error or unclear. "
        "Marks are appended to `audits/<dataset>-<date>.jsonl`; "
        "`goldenkit audit apply` turns confirmed label errors into a new dataset version.",
    ),
    (
        "params",
        """\
run = "results/latest"  # run folder or run id (several: a list of them)
results_dir = "results"  # where run ids are looked up
dataset = None  # dataset folder (None: the path recorded in the run)
rule = "majority"  # repeat collapse rule: a row is failing when its repeats collapse to FAIL
interactive = True  # True: widget browser in Jupyter; False (papermill): a fixed sample
n_per_slice = 3  # failing rows sampled per slice when not interactive
seed = 0  # sampling seed (same seed, same sample)
audits_dir = "audits"  # marks go to <audits_dir>/<dataset>-<date>.jsonl""",
    ),
    ("code", setup("from goldenkit import audit, report")),
    (
        "code",
        "session = audit.open_audit(run, results_dir=results_dir, dataset=dataset, rule=rule, audits_dir=audits_dir)\n"
        "session.summary(live=interactive)",
    ),
    (
        "md",
        "## Failing rows\nIn Jupyter: filter by slice, tag, grader or cluster, page through the rows, mark each one; "
        "**apply as new version** writes the label errors (corrected, or dropped without a correction) as a new "
        "dataset version in a new folder, as `goldenkit audit apply` does, after it says which version and folder "
        "and you confirm. The summary above follows the marks as you save them.",
    ),
    (
        "code",
        "session.failures_view(interactive=interactive, n_per_slice=n_per_slice, seed=seed)",
    ),
    (
        "md",
        "## Judge-graded figures\nFor a run graded by an LLM judge: the judge's pass rate (what the judge thinks) "
        "beside the prediction-powered estimate of the human pass rate, with n human, N judged, lambda and the "
        "effective sample size gained. In Jupyter, **human verdict** saves your PASS or FAIL on the row on show "
        "(hand-picked: shown, never used for inference) and **label next** proposes the rows whose labels narrow "
        "the interval most, drawn with recorded probabilities; the figures under the widget follow each verdict.",
    ),
    ("code", "session.judge_figures()"),
    (
        "md",
        "## Label-error share per slice\nFrom every marks file of this dataset; unclear rows stay in the denominator.",
    ),
    ("code", "report.label_error_table(session.all_marks())"),
]

COVERAGE = [
    (
        "md",
        "# Slice coverage\nThe dataset's slices against production traffic, and the rows each slice needs "
        "to detect a change in a paired comparison.",
    ),
    (
        "params",
        """\
dataset = "datasets/support-agent"  # dataset folder
split = None  # count only this split ("holdout": what CI compares on); None: all rows
traffic = None  # CSV (slice,count or slice,share) or JSON {slice: count}; None: dataset shares only
delta = 0.05  # change in pass rate to detect
discordance = 0.10  # expected share of rows that flip either way between two versions
alpha = 0.05  # significance level of the planned comparison
power = 0.8  # chance of detecting a change of delta
min_ratio = 0.5  # under-tested: dataset share below min_ratio x traffic share""",
    ),
    ("code", setup("from goldenkit import report")),
    (
        "code",
        """plan = dict(delta=delta, discordance=discordance, alpha=alpha, power=power)
coverage = report.dataset_coverage(dataset, split=split, traffic=traffic, min_ratio=min_ratio, **plan)
coverage""",
    ),
    ("code", "report.table_html(report.format_coverage_table(coverage.table))"),
    ("code", "report.coverage_figure(coverage.table)"),
]

LEADERBOARD = [
    (
        "md",
        "# Leaderboard\nMany comparable runs ranked: which differences are evidence, and which are noise.",
    ),
    (
        "params",
        """\
runs = []  # run folders, or run ids under results_dir
results_dir = "results"  # where run ids are looked up
alpha = 0.05  # significance level of the pairwise tests (Holm over all pairs)
rule = "majority"  # repeat collapse rule: majority | all | any | at_least:K
frontier_seed = 0  # seed of the quality-cost frontier's bootstrap over rows
frontier_resamples = 2000  # its resamples""",
    ),
    (
        "code",
        setup("import goldenkit\nfrom goldenkit import leaderboards, report"),
    ),
    (
        "code",
        "board = goldenkit.leaderboard(\n"
        "    runs, alpha, rule, results_dir=results_dir, frontier_seed=frontier_seed, "
        "frontier_resamples=frontier_resamples\n"
        ")",
    ),
    ("code", "leaderboards.notes_block(board)"),
    (
        "md",
        "## The table\nBest first. `rank` is every place the paired tests cannot rule out; `top` marks the runs "
        "indistinguishable from the leader.",
    ),
    ("code", "report.table_html(leaderboards.format_leaderboard_table(board))"),
    (
        "md",
        "## Pairwise differences\nRow minus column, in points, over rows graded in both; `*`: Holm-adjusted "
        "exact McNemar p < alpha.",
    ),
    ("code", "report.table_html(leaderboards.difference_matrix(board))"),
    ("md", "## Pass rates with their intervals"),
    ("code", "leaderboards.interval_figure(board)"),
    (
        "md",
        "## Quality against cost\nWhat a passing row cost each run (tokens; money only where the provider "
        "returned a price, labelled, else n/a) and the quality-cost frontier: the runs no other run beats on "
        "both pass rate and cost, with the probability of being on it from a paired bootstrap over rows.",
    ),
    ("code", "report.table_html(leaderboards.cost_table(board))"),
    ("code", "leaderboards.frontier_figure(board)"),
    ("md", "## Per slice\nEach slice ranked on its own rows (Holm over that slice's pairs)."),
    ("code", "by_slice = goldenkit.leaderboard(runs, alpha=alpha, rule=rule, by_slice=True, results_dir=results_dir)"),
    ("code", "report.table_html(leaderboards.slice_leaderboards(by_slice))"),
]

SPECS = {"report": REPORT, "compare": COMPARE, "audit": AUDIT, "coverage": COVERAGE, "leaderboard": LEADERBOARD}


def build(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    out = []
    for kind, source in cells:
        if kind == "md":
            out.append(new_markdown_cell(source))
        elif kind == "params":
            out.append(new_code_cell(source, metadata={"tags": ["parameters"]}))
        else:
            out.append(new_code_cell(source))
    # Stable cell ids so regenerating an unchanged notebook changes nothing.
    for i, cell in enumerate(out):
        cell["id"] = f"cell-{i:02d}"
    nb = new_notebook(cells=out)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def render(name: str) -> str:
    return nbformat.writes(build(SPECS[name])) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    NOTEBOOKS.mkdir(exist_ok=True)
    stale = []
    for name in SPECS:
        path = NOTEBOOKS / f"{name}.ipynb"
        text = render(name)
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print("out of date (run scripts/make_notebooks.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
