"""Imports inside functions: each module that keeps one says why, with a ceiling, so the count cannot grow unnoticed.

An import belongs at the top of its module, where a reader sees what the module depends on and
an import cycle shows at once. goldenkit keeps one inside a function only for a reason named here:
the CLI lists a command's options without loading what the command runs, ``import goldenkit`` and a
run's first call load no pandas, an optional dependency loads where its feature is used, a built-in
loads the first time a run asks for it. A module listed with a ceiling keeps at most that many
(``import`` statements in its functions and methods); any other module keeps none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import goldenkit

PACKAGE = Path(goldenkit.__file__).resolve().parent

COMMAND = (
    "a command's module is imported to list its options: goldenkit CMD --help loads none of what the command runs "
    "(tests/test_cli_help.py); each function imports what it runs"
)
HEAVY = (
    "pandas, numpy, pyarrow, scipy, statsmodels, matplotlib, duckdb or Jinja2 load when a function needs them, "
    "not when its module is imported (tests/test_public_api.py, tests/test_startup.py)"
)
OPTIONAL = "an optional dependency (an extra: ray, google-adk, ipywidgets, nltk, rouge-score, zstandard, yaml)"
NOTEBOOK = "Jupyter's stack (papermill, nbconvert, nbformat, jupyter_client) loads when a notebook is executed"
FIRST_CALL = "what a run needs after its first call (tests/test_startup.py, benchmarks/bench_startup.py)"
LEFT = "some are light modules (standard library or goldenkit's own) that could move to the top"

DEFERRED: dict[str, tuple[int, str]] = {
    "_display.py": (4, HEAVY),
    "_protocol_key.py": (1, HEAVY),
    "audit/_browser.py": (1, OPTIONAL),
    "audit/_labelling.py": (1, OPTIONAL),
    "audit/_session.py": (1, OPTIONAL),
    "commands/_agent.py": (1, COMMAND),
    "commands/_args.py": (1, COMMAND),
    "commands/_audit.py": (1, COMMAND),
    "commands/_baseline.py": (7, COMMAND),
    "commands/_benchmark.py": (2, COMMAND),
    "commands/_compare.py": (16, COMMAND),
    "commands/_dataset.py": (8, COMMAND),
    "commands/_demo.py": (3, COMMAND),
    "commands/_estimate.py": (7, COMMAND),
    "commands/_gate.py": (3, COMMAND),
    "commands/_import_run.py": (1, COMMAND),
    "commands/_judge.py": (8, COMMAND),
    "commands/_judge_evidence.py": (4, COMMAND),
    "commands/_leaderboard.py": (1, COMMAND),
    "commands/_leaderboard_text.py": (1, COMMAND),
    "commands/_merge.py": (1, COMMAND),
    "commands/_pages.py": (1, COMMAND),
    "commands/_pairwise_judge.py": (4, COMMAND),
    "commands/_query.py": (2, COMMAND),
    "commands/_regrade.py": (3, COMMAND),
    "commands/_report.py": (8, COMMAND),
    "commands/_report_leaderboard.py": (3, COMMAND),
    "commands/_run.py": (6, COMMAND),
    "commands/_sequential.py": (9, COMMAND),
    "commands/_stats.py": (1, COMMAND),
    "dataset/_reader.py": (1, "the case formats load when a case is normalized (read_dataset alone needs none)"),
    "dataset/_rows.py": (1, HEAVY),
    "gate/_policy.py": (2, "the [gate] table loads to check goldenkit.toml; a decision's display (_reprs) when shown"),
    "graders/_build.py": (2, "the judge and rubric graders load when a run uses them (tests/test_startup.py)"),
    "graders/_calibration.py": (1, HEAVY),
    "graders/_match.py": (2, OPTIONAL),
    "harnesses/_inspect_log.py": (1, OPTIONAL),
    "history/_sql.py": (2, HEAVY),
    "leaderboards/_ranking.py": (1, "pairwise judging calls models through the runner's seam, loaded when asked for"),
    "notebooks/__init__.py": (10, f"{NOTEBOOK}; {LEFT}"),
    "pages/_html.py": (2, HEAVY),
    "pages/_leaderboards.py": (4, f"{HEAVY}; {LEFT}"),
    "pages/_plots.py": (9, f"{HEAVY}; {LEFT}"),
    "pages/_site.py": (4, "the report's pages load when a page renders, the process pool when many do"),
    "providers/_adk.py": (6, OPTIONAL),
    "providers/_adk_events.py": (1, OPTIONAL),
    "providers/_client.py": (7, f"aiohttp and httpx-aiohttp load when a client is configured; {LEFT}"),
    "providers/_http.py": (1, LEFT),
    "providers/_spec.py": (2, "a provider or simulator is built from a recorded spec on use"),
    "report/_compare.py": (3, f"{HEAVY}; {LEFT}"),
    "report/_coverage.py": (3, f"{HEAVY}; {LEFT}"),
    "report/_explore.py": (1, OPTIONAL),
    "report/_html.py": (3, f"{HEAVY}; IPython in a notebook only; {LEFT}"),
    "report/_markdown.py": (2, LEFT),
    "report/_page.py": (5, f"{HEAVY}; {LEFT}"),
    "report/_run.py": (4, f"{HEAVY}; {LEFT}"),
    "report/_sequence.py": (1, HEAVY),
    "results/_accounting.py": (4, f"{HEAVY}; {FIRST_CALL}"),
    "results/_judge_figures.py": (1, LEFT),
    "results/_light.py": (2, HEAVY),
    "results/_run.py": (4, f"{HEAVY}; {LEFT}"),
    "results/_usage_change.py": (3, HEAVY),
    "runner/_budget.py": (2, FIRST_CALL),
    "runner/_evaluate.py": (5, f"{FIRST_CALL}; Ray and the fixture recorder when asked for"),
    "runner/_options.py": (1, HEAVY),
    "runner/_progress.py": (1, "tqdm.auto loads when a progress bar is drawn"),
    "runner/_ray_executor.py": (1, OPTIONAL),
    "runner/_ray_worker.py": (1, OPTIONAL),
    "runner/_summary.py": (1, HEAVY),
    "scenarios/_agent_config.py": (4, f"{OPTIONAL}; the agent's module when a config names one"),
    "stats/_clustered.py": (1, HEAVY),
}


def function_imports(path: Path) -> list[int]:
    """The line of each ``import`` statement inside a function or method of ``path`` (nested ones once)."""
    found: dict[int, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found[id(inner)] = inner.lineno
    return sorted(found.values())


def _counts() -> dict[str, list[int]]:
    counts = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = function_imports(path)
        if lines:
            counts[path.relative_to(PACKAGE).as_posix()] = lines
    return counts


def test_no_module_keeps_more_function_level_imports_than_its_reason_allows() -> None:
    over = []
    for module, lines in _counts().items():
        ceiling, _why = DEFERRED.get(module, (0, ""))
        if len(lines) > ceiling:
            where = ", ".join(f"goldenkit/{module}:{n}" for n in lines)
            over.append(f"{module}: {len(lines)} function-level imports, {ceiling} allowed ({where})")
    assert over == [], "import at the top of the module, or list the module here with its reason:\n" + "\n".join(over)


def test_each_listed_module_still_keeps_one_and_says_why() -> None:
    counts = _counts()
    stale = [m for m in DEFERRED if m not in counts]
    assert stale == [], f"no function-level import left: remove {stale} from DEFERRED"
    assert all(ceiling > 0 and len(why) > 20 for ceiling, why in DEFERRED.values())
    assert sum(c for c, _ in DEFERRED.values()) <= 222  # 269 before issue 39's third pass moved 50 to the top


def test_the_counter_sees_methods_nested_and_async_functions_but_not_the_module_top(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import json\n"
        "def f():\n"
        "    import sys\n"
        "    def g():\n"
        "        from json import dumps\n"
        "class C:\n"
        "    async def h(self):\n"
        "        import csv, io\n"
    )
    assert function_imports(src) == [6, 8, 11]
