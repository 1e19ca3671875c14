"""``goldenkit demo --benchmark``: the three recorded agents of the bundled dataset on one leaderboard.

:func:`run_benchmark` runs ``baseline``, ``candidate`` and ``budget`` (the
baseline prompt on a smaller model; ``scripts/make_support_fixtures.py``)
with the protocol of :func:`goldenkit.demo.run_demo` -- the holdout split,
the dataset's repeats and graders, runs ``demo-<agent>`` overwritten, never
resumed -- and returns their :class:`~goldenkit.leaderboards._ranking.Leaderboard`;
:func:`benchmark_story` says in words what it shows. Every number is
computed from the runs on the spot.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit.config import find_config, load_config, section
from goldenkit.demo._data import shown
from goldenkit.demo._story import DEFAULT_DATASET, replay_agent, validate_dataset
from goldenkit.gate import GatePolicy
from goldenkit.leaderboards import leaderboard
from goldenkit.report import p_value, pct

__all__ = ["BENCHMARK_AGENTS", "benchmark_story", "run_benchmark"]


#: The three recorded agents of ``goldenkit demo --benchmark`` (``budget``: the baseline prompt on a smaller model).
BENCHMARK_AGENTS = ("baseline", "candidate", "budget")


def run_benchmark(
    dataset: str | Path = DEFAULT_DATASET,
    results_dir: str | Path = "results",
    *,
    log: Callable[[str], None] | None = None,
) -> Any:
    """Run the three recorded agents as ``demo-<agent>`` and return their :class:`~goldenkit.leaderboards.Leaderboard`.

    The same protocol as :func:`run_demo` (holdout split, the dataset's
    repeats and graders), each run overwritten, never resumed; the leaderboard
    uses the rule and alpha of the dataset's ``[gate]``.
    """

    say = log or (lambda _line: None)
    dataset_dir, out = shown(Path(dataset)), Path(results_dir)
    ds = validate_dataset(dataset_dir)
    say(f"validated {dataset_dir}: {ds.name} {ds.version or ''}, {len(ds)} rows, sha256 {ds.sha256[:12]}")
    config_path = find_config(dataset_dir=dataset_dir)
    cfg = load_config(config_path) if config_path is not None else {}
    policy = GatePolicy.from_config(section(cfg, "gate"), where=f"{cfg.get('_path', 'goldenkit.toml')} [gate]")
    paths = [
        replay_agent(ds, cfg, policy, dataset_dir, out, agent, say=say, benchmark="demo").path
        for agent in BENCHMARK_AGENTS
    ]
    return leaderboard(paths, alpha=policy.alpha, rule=policy.rule)


def benchmark_story(lb: Any) -> str:
    """What the three-way leaderboard says, in words; every number read from ``lb``."""
    t = lb.table.reset_index(drop=True)
    pairs = lb.pairs.set_index(["a", "b"])
    lines = []
    first, second = t.iloc[0], t.iloc[1]
    p12 = pairs.loc[(first["run_id"], second["run_id"])]
    tied = "statistically tied" if not p12["significant"] else "significantly different"
    lines.append(
        f"- {first['run_id']} ({pct(first['pass_rate'])}) and {second['run_id']} ({pct(second['pass_rate'])}): "
        f"{int(p12['b_count'])} vs {int(p12['c_count'])} discordant rows, "
        f"exact McNemar p = {p_value(p12['p_val'], significant=2)} "
        f"(Holm {p_value(p12['p_adj'], significant=2)}): {tied}; groups {first['group']} and {second['group']}."
    )
    for r in t.iloc[2:].to_dict("records"):
        above = [pairs.loc[(a, r["run_id"])] for a in t["run_id"] if (a, r["run_id"]) in pairs.index]
        worst = max(above, key=lambda p: float(p["p_adj"]))
        verdict = "significantly behind both" if all(p["significant"] for p in above) else "not separable from all"
        lines.append(
            f"- {r['run_id']} ({pct(r['pass_rate'])}): {verdict} "
            f"(largest Holm p = {p_value(worst['p_adj'], significant=2)}, "
            f"{int(worst['b_count'])} vs {int(worst['c_count'])}); "
            + (
                f"rank {r['rank_low']}"
                if r["rank_low"] == r["rank_high"]
                else f"ranks {r['rank_low']}-{r['rank_high']}"
            )
            + f", group {r['group']}."
        )
    tops = [str(r) for r in t[t["group"] == "top"]["run_id"]]
    if len(tops) > 1:
        lines.append(
            f"Sorted by pass rate alone, {first['run_id']} would be first; the paired tests say "
            f"{len(tops)} runs share first place ({', '.join(tops)})."
        )
    return "\n".join(lines)


publish(globals())
