"""The guided demo: the whole pipeline on a bundled dataset and its two recorded agent versions.

:func:`run_demo` does what a team's CI does on a pull request, with recorded
answers instead of a model (nothing is called over the network):

1. **validate** the dataset: every row, and every case normalized;
2. **run** the ``baseline`` and the ``candidate`` agent with the ``fixtures``
   provider (``DATASET/fixtures/baseline`` and ``DATASET/fixtures/candidate``)
   on the holdout split, with the repeats of the dataset's goldenkit.toml
   (``[run] repeats``, else 3), graded by its ``[graders]``, into
   ``RESULTS_DIR/demo-baseline`` and ``RESULTS_DIR/demo-candidate``;
3. **compare** them row by row (:func:`goldenkit.compare.compare_runs`);
4. **gate** the candidate against the baseline with the ``[gate]`` policy of
   the dataset's goldenkit.toml, exactly as ``goldenkit gate`` does;
5. **render** ``report.html`` and ``compare.html`` into the candidate's run
   folder (the notebooks of :mod:`goldenkit.notebooks`, in one kernel).

:func:`story` turns the result into the text ``goldenkit demo`` prints; every
number in it is computed from the runs, none is written down here.

Re-running: the two demo runs are **overwritten**, never resumed. Each demo
starts from empty run folders so that what it prints always reflects the
fixtures and graders as they are now (a resumed run would keep outcomes graded
by older fixtures whose meta.json did not change). Only a folder that is a
fixtures-mode goldenkit run with the demo's run id is deleted; anything else
in the way is an error, never removed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldenkit._findings import describe, reason_parts
from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.baselines import read_baseline
from goldenkit.compare import Comparison, compare_runs, why
from goldenkit.config import find_config, load_config, section
from goldenkit.dataset import Dataset, read_dataset
from goldenkit.demo._data import DATASET_NAME, bundled, committed_baseline, shown
from goldenkit.errors import ConfigError, InfrastructureError, InputError, ResultsError
from goldenkit.gate import DECISION_NAMES, GateDecision, GatePolicy, evaluate_gate
from goldenkit.graders import build_graders
from goldenkit.notebooks import execute_notebooks
from goldenkit.providers import get_provider
from goldenkit.report import p_value, pct
from goldenkit.results import Run, read_manifest, read_run
from goldenkit.runner import RunSummary, run_eval
from goldenkit.schema import RUN_FILE, VALID, RunRecord

__all__ = [
    "AGENTS",
    "DEFAULT_DATASET",
    "DemoResult",
    "replay_agent",
    "run_demo",
    "run_id_of",
    "story",
    "validate_dataset",
]

#: The two recorded agent versions, in the order they are run: base, then candidate.
AGENTS = ("baseline", "candidate")
#: The bundled dataset (package data: the installed package's copy, else a checkout's datasets/support-agent)
DEFAULT_DATASET = bundled("datasets", DATASET_NAME)
RUN_ID_PREFIX = "demo-"
DEFAULT_REPEATS = 3
DEMO_SPLIT = "holdout"


def run_id_of(agent: str) -> str:
    """The fixed run id of an agent's demo run (``demo-baseline``, ``demo-candidate``)."""
    return RUN_ID_PREFIX + agent


@dataclass
class DemoResult:
    """Everything :func:`run_demo` produced; :func:`story` reads only this."""

    dataset: Dataset
    config_path: Path | None
    results_dir: Path
    summaries: dict[str, RunSummary]
    baseline: Run
    candidate: Run
    comparison: Comparison
    policy: GatePolicy
    decision: GateDecision
    html: list[Path] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    #: the candidate gated against the committed snapshot (baselines/COMMITTED_BASELINE.json), when there is one
    committed: GateDecision | None = None
    #: where that snapshot is (bundled with the package, or a checkout's baselines/)
    committed_path: Path | None = None

    @property
    def gate_exit_code(self) -> int:
        """The exit code ``goldenkit gate`` gives for the candidate against the baseline."""
        return self.decision.exit_code


# --------------------------------------------------------------------------- steps


def validate_dataset(path: str | Path) -> Dataset:
    """Read and validate the dataset, then normalize every case (the first bad one raises)."""
    ds = read_dataset(path)
    for row_id in ds.ids:
        ds.case(row_id)
    return ds


def _fixtures_dir(dataset_dir: Path, agent: str) -> Path:
    folder = dataset_dir / "fixtures" / agent
    if not (folder / "fixtures.jsonl").is_file():
        raise InputError(
            f"{folder}: no recorded answers (fixtures.jsonl) for the {agent} agent; "
            f"the demo needs {dataset_dir / 'fixtures'}/{{{','.join(AGENTS)}}}"
        )
    return folder


def _clear_demo_run(results_dir: Path, run_id: str) -> None:
    """Remove an earlier demo run with this id so the demo starts fresh; refuse anything else."""
    folder = results_dir / run_id
    if not folder.exists():
        return
    if not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder; remove it or pass another --results-dir")
    manifest: RunRecord | None = None
    if (folder / RUN_FILE).is_file():
        try:
            manifest = read_manifest(folder)
        except ResultsError:  # not a run.json the demo wrote: never deleted
            manifest = None
    is_demo = manifest is not None and manifest["run_id"] == run_id and manifest.get("mode") == "fixtures"
    if not is_demo and any(folder.iterdir()):
        raise InputError(
            f"{folder}: exists and is not a demo run (fixtures mode, run id {run_id}); "
            "the demo will not delete it: move it or pass another --results-dir"
        )
    shutil.rmtree(folder)


def _repeats(cfg: dict[str, Any]) -> int:
    value = section(cfg, "run").get("repeats", DEFAULT_REPEATS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{cfg.get('_path', 'goldenkit.toml')}: [run] repeats must be a positive integer")
    return value


def _gate(policy: GatePolicy, base: Run, cand: Run) -> tuple[Comparison, GateDecision]:
    """Compare and gate as ``goldenkit gate CAND --baseline BASE`` does (same inputs, same decision)."""
    decision = evaluate_gate(cand, policy=policy, baseline=base)  # the gate owns its comparison
    comparison = decision.comparison
    if comparison is None:  # regression off: the story still shows the paired comparison
        comparison = compare_runs(base, cand, rule=policy.rule, alpha=policy.alpha)
    return comparison, decision


def _render(
    base: Run, cand: Run, results_dir: Path, policy: GatePolicy, config_path: Path | None, timeout: float
) -> list[Path]:
    """report.html and compare.html into the candidate's folder, the two notebooks in one kernel."""
    common = {"results_dir": str(results_dir.resolve()), "rule": policy.rule}
    jobs: list[tuple[str | Path, Mapping[str, Any], str | None]] = [
        ("report", {"run": str(cand.path.resolve()), **common}, None),
        (
            "compare",
            {
                "base": str(base.path.resolve()),
                "cand": str(cand.path.resolve()),
                "alpha": policy.alpha,
                "config": str(config_path.resolve()) if config_path is not None else None,
                **common,
            },
            None,
        ),
    ]
    pages = [r.html for r in execute_notebooks(jobs, cand.path, timeout=timeout)]
    return [p for p in pages if p is not None]


def _run_agents(
    ds: Dataset, cfg: dict[str, Any], policy: GatePolicy, dataset_dir: Path, out: Path, say: Callable[[str], None]
) -> dict[str, RunSummary]:
    """Run both demo agents from their fixture folders; an INVALID run stops the demo."""
    summaries: dict[str, RunSummary] = {}
    for agent in AGENTS:
        summaries[agent] = replay_agent(ds, cfg, policy, dataset_dir, out, agent, say=say)
    return summaries


def replay_agent(
    ds: Dataset,
    cfg: dict[str, Any],
    policy: GatePolicy,
    dataset_dir: Path,
    out: Path,
    agent: str,
    *,
    say: Callable[[str], None],
    **config: Any,
) -> RunSummary:
    """Replay one recorded agent's fixtures into a fresh demo run (``config`` is added to the
    run's recorded settings); an INVALID run stops the demo."""
    run_id = run_id_of(agent)
    _clear_demo_run(out, run_id)
    summary = run_eval(
        ds,
        get_provider("fixtures", fixtures=str(_fixtures_dir(dataset_dir, agent))),
        build_graders(cfg),
        repeats=_repeats(cfg),
        run_id=run_id,
        results_dir=out,
        sample={"split": DEMO_SPLIT, "per_slice": None, "seed": None},
        max_error_rate=policy.max_error_rate if policy.max_error_rate is not None else 0.02,
        progress=False,
        config={"config_file": cfg.get("_path"), "config_sha256": cfg.get("_sha256"), "demo": True, **config},
    )
    if summary.validity != VALID:
        raise InfrastructureError(f"demo run {run_id} is INVALID: {summary.invalid_reason}; results in {summary.path}")
    say(f"ran {agent:<9} -> {summary.path}: {_run_line(summary)}")
    return summary


def run_demo(
    dataset: str | Path = DEFAULT_DATASET,
    results_dir: str | Path = "results",
    *,
    html: bool = True,
    log: Callable[[str], None] | None = None,
    notebook_timeout: float = 600,
) -> DemoResult:
    """Validate, run both agents from their fixtures, compare, gate and render (see the module docstring).

    ``log`` receives one line as each step finishes (``print`` shows progress).
    Raises :class:`~goldenkit.errors.InfrastructureError` when a demo run is
    INVALID (it is then no evidence and no story is told), and the usual
    input errors for a bad dataset, config or fixture folder.
    """
    say = log or (lambda _line: None)
    timings: dict[str, float] = {}
    dataset_dir = shown(Path(dataset))
    out = Path(results_dir)

    t = time.perf_counter()
    ds = validate_dataset(dataset_dir)
    timings["validate"] = time.perf_counter() - t
    n_split = int((ds.rows["split"] == DEMO_SPLIT).sum())
    say(
        f"validated {dataset_dir}: {ds.name} {ds.version or ''}, {len(ds)} rows "
        f"({n_split} {DEMO_SPLIT}), every case normalized, sha256 {ds.sha256[:12]}"
    )
    config_path = find_config(dataset_dir=dataset_dir)
    cfg = load_config(config_path) if config_path is not None else {}
    where = f"{cfg.get('_path', 'goldenkit.toml')} [gate]"
    policy = GatePolicy.from_config(section(cfg, "gate"), where=where)

    t = time.perf_counter()
    summaries = _run_agents(ds, cfg, policy, dataset_dir, out, say)
    timings["run"] = time.perf_counter() - t

    base, cand = (read_run(out / run_id_of(agent)) for agent in AGENTS)
    t = time.perf_counter()
    comparison, decision = _gate(policy, base, cand)
    timings["compare_gate"] = time.perf_counter() - t
    say(f"compared {cand.run_id} with {base.run_id} and applied the gate of {config_path or 'the defaults'}")
    committed_path = committed_baseline()
    committed = _gate_committed(policy, cand, committed_path, say)

    pages: list[Path] = []
    if html:
        t = time.perf_counter()
        pages = _render(base, cand, out, policy, config_path, notebook_timeout)
        timings["html"] = time.perf_counter() - t
        say(f"rendered {', '.join(p.name for p in pages)} in {timings['html']:.0f} s")
    return DemoResult(
        dataset=ds,
        config_path=config_path,
        results_dir=out,
        summaries=summaries,
        baseline=base,
        candidate=cand,
        comparison=comparison,
        policy=policy,
        decision=decision,
        html=pages,
        timings=timings,
        committed=committed,
        committed_path=shown(committed_path) if committed is not None and committed_path is not None else None,
    )


def _gate_committed(
    policy: GatePolicy, cand: Run, path: Path | None, say: Callable[[str], None]
) -> GateDecision | None:
    """The candidate gated against the committed baseline snapshot of the bundled dataset, when it is there
    (package data, or ``baselines/`` of a checkout): the same decision as against the baseline run made a
    minute earlier."""

    if path is None:
        return None
    snapshot = read_baseline(path)
    if (snapshot.manifest.get("dataset") or {}).get("sha256") != (cand.manifest.get("dataset") or {}).get("sha256"):
        return None  # a snapshot of another dataset (the demo was given its own)
    decision = evaluate_gate(cand, policy=policy, baseline=snapshot)
    code, summary = decision.exit_code, decision.summary()
    say(f"gated {cand.run_id} against the committed baseline {shown(path)}: exit {code}, {summary}")
    return decision


# --------------------------------------------------------------------------- the story


def _run_line(s: RunSummary) -> str:
    c = s.counts
    return (
        f"{c.get('total', 0)} outcomes ({c.get('expected', 0) // max(1, s.manifest.get('repeats') or 1)} rows x "
        f"{s.manifest.get('repeats')} repeats), {c.get('ERROR', 0)} ERROR ({s.error_rate:.1%}), {s.validity}"
    )


def _reason_text(reasons: Any) -> str:
    if isinstance(reasons, dict):
        return "; ".join(f"{k}: {v}" for k, v in reasons.items() if v)
    return str(reasons or "")


def _checks_of(reasons: Any, grader: str) -> list[str]:
    """The single checks (``grader: check``) of one grader's reason in a flip's reasons."""
    text = reasons.get(grader) if isinstance(reasons, dict) else None
    return [f"{grader}: {check}" for check in reason_parts(grader, text)] if isinstance(text, str) and text else []


def _worst_slice(comparison: Comparison, names: Sequence[str]) -> pd.Series:
    """The slice to tell the story of: a critical slice that failed the gate, else the largest b - c."""
    sl = comparison.slices
    for name in names:
        hit = sl[sl["slice"].astype(str) == name]
        if len(hit):
            return hit.iloc[0]
    return sl.assign(_net=sl["b"] - sl["c"]).sort_values("_net", ascending=False, kind="stable").iloc[0]


def story(result: DemoResult, *, examples: int = 3, width: int = 100) -> str:
    """The demo's summary: headline rates, the paired test, the slice that regressed, its flips, the gate, the pages."""
    lines = _story_headline(result)
    slice_lines, name = _story_slice(result)
    lines += slice_lines
    lines += _story_flips(result.comparison, name, examples, width)
    lines += _story_gate(result)
    return "\n".join(lines)


def _story_headline(result: DemoResult) -> list[str]:
    """The title, 1. the headline rates and 2. the paired test."""
    cmp = result.comparison
    ov = cmp.overall
    ds = result.dataset
    lines: list[str] = []
    add = lines.append
    reps = result.candidate.manifest.get("repeats")
    add(
        f"== goldenkit demo: {ds.name} {ds.version or ''} ({int(ov['rows'])} {DEMO_SPLIT} rows x {reps} repeats, "
        f"recorded answers, no model called) =="
    )
    add("")
    # 1. the headline
    diff_pts = 100 * float(ov["diff"])
    add(
        f"1. The headline: pass rate {pct(ov['p_base'], 0)} -> {pct(ov['p_cand'], 0)} "
        f"({int(ov['k_base'])}/{int(ov['n_base'])} -> {int(ov['k_cand'])}/{int(ov['n_cand'])} rows, "
        f"repeats collapsed by {cmp.rule}): {diff_pts:+.1f} points, looks like a small "
        f"{'win' if diff_pts > 0 else 'loss' if diff_pts < 0 else 'change'}."
    )
    add(
        f"   baseline {pct(ov['p_base'])} [95% Wilson {pct(ov['base_ci_low'])}, {pct(ov['base_ci_high'])}]   "
        f"candidate {pct(ov['p_cand'])} [{pct(ov['cand_ci_low'])}, {pct(ov['cand_ci_high'])}]"
    )
    # 2. paired
    b, c, p = cmp.b, cmp.c, cmp.p_value
    verdict = "indistinguishable from noise" if p >= cmp.alpha else "a significant change"
    add(
        f"2. Paired, row by row: {b + c} rows flipped, {b} broke vs {c} fixed; "
        f"two-sided exact McNemar p = {p_value(p, significant=2)}, {verdict}. "
        f"Difference {diff_pts:+.1f} points [95% CI {100 * float(ov['diff_ci_low']):+.1f}, "
        f"{100 * float(ov['diff_ci_high']):+.1f}]."
    )
    return lines


def _story_slice(result: DemoResult) -> tuple[list[str], str]:
    """3. the slice the story is about (a failed critical slice, else the largest b - c) and its name."""
    cmp = result.comparison
    lines: list[str] = []
    add = lines.append
    failed_slices = [
        r.name.split("[", 1)[1].rstrip("]")
        for r in result.decision.failed_rules
        if r.name.startswith("regression.") and "[" in r.name
    ]
    worst = _worst_slice(cmp, failed_slices or list(result.policy.critical))
    name = str(worst["slice"])
    sl = cmp.slices
    others = sl[sl["slice"].astype(str) != name]
    crit = " (declared critical)" if name in result.policy.critical else ""
    if int(worst["b"]) <= int(worst["c"]):
        add(
            f"3. By slice: no slice has more rows broken than fixed (largest: {name}, "
            f"{int(worst['b'])} broke vs {int(worst['c'])} fixed)."
        )
    else:
        add(
            f"3. By slice: {name}{crit} regressed, {int(worst['rows'])} rows, "
            f"{pct(worst['p_base'])} -> {pct(worst['p_cand'])}: {int(worst['b'])} broke vs {int(worst['c'])} fixed, "
            f"two-sided p = {p_value(worst['p_val'], significant=2)}."
        )
        add(
            f"   The other {len(others)} slices: {int(others['b'].sum())} broke vs {int(others['c'].sum())} fixed; "
            f"their gains hide the {name} loss in the average."
        )
    return lines, name


def _story_flips(cmp: Comparison, name: str, examples: int, width: int) -> list[str]:
    """4. why the slice's rows broke: its largest cluster of findings (:func:`goldenkit.why`), with the first
    few rows of it, else the first rows of its flip list."""
    lines: list[str] = []
    add = lines.append
    broke = cmp.flips[(cmp.flips["status"] == "NEW_FAILURE") & (cmp.flips["slice"] == name)]
    clusters = why(cmp, examples=examples)
    top = clusters[clusters["slice"] == name].head(1)
    grader = ""
    if len(top) and len(broke):
        c = top.iloc[0]
        grader, named = str(c["grader"]), broke[broke["row_id"].isin(c["row_ids"])]
        add(
            f"4. Why: in {int(c['rows'])} of the {len(broke)} {name} rows that broke, the grader says "
            f"{describe(str(c['check']), str(c['subject']))} (first {min(examples, len(named))} NEW_FAILURE rows "
            "of the flip list):"
        )
    else:
        named = broke
        add(f"4. The flip list: {len(broke)} {name} rows broke" + (" (first ones below):" if len(broke) else "."))
    for rec in named.head(examples).to_dict("records"):
        add(f"   {rec['row_id']} NEW_FAILURE, the candidate said: {one_line(rec['cand_response'], width - 40)!r}")
        for check in _checks_of(rec["cand_reasons"], grader) or [_reason_text(rec["cand_reasons"])]:
            add(f"      {one_line(check, 170)}")
    return lines


def _story_gate(result: DemoResult) -> list[str]:
    """5. the gate's decision and command, 6. the pages."""
    lines: list[str] = []
    add = lines.append
    d = result.decision
    cfg = result.config_path or "defaults"
    add(f"5. The gate ({cfg}; critical slices: {', '.join(result.policy.critical) or 'none'}):")
    for r in d.failed_rules:
        add(f"   [{r.mark}] {r.name}: {r.detail}")
    add(f"   gate {DECISION_NAMES[d.exit_code]}: `goldenkit gate` would exit {d.exit_code}.")
    add(
        f"   goldenkit gate {result.candidate.run_id} --baseline {result.baseline.run_id} "
        f"--results-dir {result.results_dir} --config {cfg}"
    )
    if result.committed is not None:  # the committed snapshot gives the same decision
        code, cand, path = result.committed.exit_code, result.candidate.run_id, result.committed_path
        add(f"   Against the committed baseline {path}: exit {code}.")
        add(f"   goldenkit gate {cand} --baseline {path} --results-dir {result.results_dir}")
    # 6. the pages
    if result.html:
        add("6. The reports (open in a browser; offline, self-contained):")
        lines.extend(f"   {shown(p)}" for p in result.html)
    else:
        add(
            f"6. No HTML (--no-html). Render it with: goldenkit report {result.candidate.run_id} "
            f"--baseline {result.baseline.run_id} --results-dir {result.results_dir} --config {cfg}"
        )
    return lines


publish(globals())
