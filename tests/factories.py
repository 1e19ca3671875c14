"""Datasets and runs for the tests: one writer each, so a change of format is one edit.

* :func:`write_dataset` writes a dataset folder (``dataset.json`` with its changelog,
  ``dataset.jsonl``, and a ``goldenkit.toml`` when given) from rows;
* :func:`row`, :func:`rows_of` and :func:`numbered_rows` build those rows; :func:`tiny_dataset`
  is the small dataset the command line's tests share;
* :func:`write_guide_project` writes the files docs/first-dataset.md shows (``shop/``
  and ``shop_agent.py``);
* :func:`graded_run` makes a run folder of given verdicts with the library's own
  runner and writer (:func:`goldenkit.runner.run_eval` over an in-process agent).

``tests/conftest.py`` offers :func:`write_dataset` and :func:`graded_run` as fixtures
writing under the test's ``tmp_path`` (``new_dataset``, ``new_run``). A test about
hand-edited or malformed files writes them itself.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "first-dataset.md"
FILE_LANGS = ("json", "jsonl", "toml", "python")
_FENCE = re.compile(r"^```(\w*)\s*$")
_NAMES_A_FILE = re.compile(r"`([\w./-]+)`:\s*$")

#: The word every row :func:`graded_run` writes expects; an answer holding it passes.
PASS_WORD = "yes"


def manifest(name: str = "t", version: str = "1.0.0", **more: Any) -> dict[str, Any]:
    """A ``dataset.json``: its name, version and a changelog naming that version; ``more`` adds keys."""
    return {
        "name": name,
        "version": version,
        "changelog": [{"version": version, "date": "2026-01-01", "why": "t"}],
    } | more


def row(rid: str, case: Mapping[str, Any], *, slice: str = "s", split: str = "dev", **more: Any) -> dict[str, Any]:
    """One dataset row: ``{"id", "slice", "split", "case"}`` plus ``more`` (``tags``, ...)."""
    return {"id": rid, "slice": slice, "split": split, "case": dict(case)} | more


def rows_of(
    cases: Mapping[str, Mapping[str, Any]], *, slices: Mapping[str, str] | None = None, split: str = "dev"
) -> list[dict[str, Any]]:
    """One row per ``cases`` item (id -> case), in the slice ``slices`` names (``"s"`` when it names none)."""
    return [row(rid, case, slice=(slices or {}).get(rid, "s"), split=split) for rid, case in cases.items()]


def numbered_rows(
    n: int,
    case: Callable[[int], Mapping[str, Any]],
    *,
    slice: Callable[[int], str] = lambda i: "s",
    split: Callable[[int], str] = lambda i: "dev",
    ids: str = "r{:03d}",
) -> list[dict[str, Any]]:
    """``n`` rows with ids ``ids.format(i)``; the case, slice and split of row ``i`` come from the functions given."""
    return [row(ids.format(i), case(i), slice=slice(i), split=split(i)) for i in range(n)]


def write_dataset(
    root: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    folder: str = "ds",
    name: str = "t",
    version: str = "1.0.0",
    toml: str | None = None,
    meta: Mapping[str, Any] | None = None,
    newline: str = "\n",
) -> Path:
    """The dataset folder ``root/folder`` holding ``rows`` (one JSON line each); returns the folder.

    ``meta`` adds keys to ``dataset.json`` (``red_rows``, ...); ``toml`` is written as its
    ``goldenkit.toml``; ``newline`` ends every line (``"\\r\\n"`` for a Windows file).
    """
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "dataset.json").write_text(json.dumps(manifest(name, version) | dict(meta or {})), encoding="utf-8")
    with (d / "dataset.jsonl").open("w", encoding="utf-8", newline="") as fh:
        fh.write("".join(json.dumps(r) + newline for r in rows))
    if toml is not None:
        (d / "goldenkit.toml").write_text(toml, encoding="utf-8")
    return d


def tiny_dataset(root: Path, n: int, *, toml: str | None = None) -> Path:
    """The dataset ``tiny`` of ``n`` rows ``r000``.. expecting "yes", in slices even/odd, every third
    row in the holdout split (the command line's tests run it); ``toml`` is its goldenkit.toml."""
    rows = numbered_rows(
        n,
        lambda i: {"prompt": f"question {i}", "expect": {"must_contain": ["yes"]}},
        slice=lambda i: "even" if i % 2 == 0 else "odd",
        split=lambda i: "dev" if i % 3 else "holdout",
    )
    return write_dataset(root, rows, name="tiny", toml=toml)


@dataclass(frozen=True)
class Block:
    """A fenced block of a markdown guide."""

    lang: str
    text: str
    line: int  # the line of its opening fence
    file: str | None  # the file the line before it names


def blocks(markdown: str) -> list[Block]:
    """The fenced blocks of ``markdown``, in order."""
    out: list[Block] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        named = _NAMES_A_FILE.search(before)
        text = "".join(line + "\n" for line in lines[i + 1 : end])
        lang = fence.group(1)
        out.append(Block(lang, text, i + 1, named.group(1) if named and lang in FILE_LANGS else None))
        i = end + 1
    return out


def write_guide_project(root: Path, toml: str | None = None) -> Path:
    """The files docs/first-dataset.md shows, under ``root`` (``shop/`` and ``shop_agent.py``);
    ``toml`` replaces its goldenkit.toml. Returns ``root``."""
    for b in blocks(GUIDE.read_text(encoding="utf-8")):
        if b.file is not None:
            (root / b.file).parent.mkdir(parents=True, exist_ok=True)
            (root / b.file).write_text(b.text, encoding="utf-8")
    if toml is not None:
        (root / "shop" / "goldenkit.toml").write_text(toml, encoding="utf-8")
    return root


def _verdict_rows(verdicts: Mapping[str, str | Sequence[str]]) -> dict[str, list[str]]:
    rows = {rid: [v] if isinstance(v, str) else list(v) for rid, v in verdicts.items()}
    counts = {len(v) for v in rows.values()}
    if len(counts) > 1:
        raise ValueError(f"graded_run: every row needs as many verdicts (one per repeat), got {sorted(counts)}")
    bad = sorted({v for vs in rows.values() for v in vs} - {"PASS", "FAIL", "ERROR"})
    if bad:
        raise ValueError(f"graded_run: a verdict is PASS, FAIL or ERROR, got {bad}")
    return rows


def graded_run(
    root: Path,
    verdicts: Mapping[str, str | Sequence[str]],
    *,
    run_id: str = "run",
    slices: Mapping[str, str] | None = None,
    dataset: Path | None = None,
    **options: Any,
) -> Path:
    """A run folder ``root/results/<run_id>`` whose row ``rid`` has the verdicts ``verdicts[rid]`` gives
    (one per repeat, or one string for a single repeat), made by :func:`goldenkit.runner.run_eval`.

    Each row expects :data:`PASS_WORD`; the agent answers it (PASS), answers without it (FAIL) or
    raises (ERROR, the agent's own error). The dataset is written to ``root/ds`` (rows in the
    slices ``slices`` names) unless ``dataset`` names one with the same row ids. ``options`` go
    to ``run_eval`` (``max_error_rate=1.0`` keeps a run of many ERRORs VALID).
    """
    from goldenkit.records import Response, TurnOutput
    from goldenkit.results import outcomes_df
    from goldenkit.runner import run_eval

    wanted = _verdict_rows(verdicts)
    if dataset is None:
        cases = {rid: {"prompt": f"question {rid}", "expect": {"must_contain": [PASS_WORD]}} for rid in wanted}
        dataset = write_dataset(root, rows_of(cases, slices=slices), folder="ds")
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def agent(case: Any) -> Response:
        with lock:
            n = calls[case.id] = calls.get(case.id, -1) + 1
        verdict = wanted[case.id][n]
        if verdict == "ERROR":
            raise RuntimeError(f"planted error on {case.id}")
        return Response(turns=[TurnOutput(text=f"{PASS_WORD}, done" if verdict == "PASS" else "no")])

    repeats = len(next(iter(wanted.values()), ["PASS"]))
    kwargs: dict[str, Any] = {"max_in_flight": 1, "progress": False, "results_dir": root / "results"}
    run_eval(dataset, agent, run_id=run_id, repeats=repeats, **(kwargs | options))
    run = Path(root / "results" if "results_dir" not in options else options["results_dir"]) / run_id
    got = {(r, int(k)): v for r, k, v in outcomes_df(run)[["row_id", "repeat", "verdict"]].itertuples(index=False)}
    want = {(rid, k): v for rid, vs in wanted.items() for k, v in enumerate(vs)}
    if got != want:
        raise AssertionError(f"graded_run: the run's verdicts {sorted(got.items())} are not {sorted(want.items())}")
    return run
