"""Whether two runs can be compared: every part of the comparability key, one reason a line.

Two runs are comparable when their dataset hashes, repeats, collapse rules, grader
versions, red-row choice, ADK criteria, judge version, agent artifacts and user
simulator agree (and, when asked, their row ids): :func:`comparability_differences`
lists each reason they are not, and :func:`goldenkit.compare.compare_runs` refuses
them (exit 4) naming every one.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from goldenkit.formats.eval_config import criteria_differences


def _short(v: Any) -> str:
    s = str(v)
    return s[:12] + "..." if len(s) > 15 else s


def manifest_get(m: dict[str, Any], *path: str) -> Any:
    """``m[path[0]][path[1]]...``, or None where a step is missing or not a mapping."""
    cur: Any = m
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


def comparability_differences(
    base_manifest: dict[str, Any],
    cand_manifest: dict[str, Any],
    *,
    base_rule: str = "majority",
    cand_rule: str = "majority",
    base_ids: Any = None,
    cand_ids: Any = None,
) -> list[str]:
    """Every reason two sides cannot be compared, one line each (empty: comparable)."""
    diffs: list[str] = []
    bs, cs = manifest_get(base_manifest, "dataset", "sha256"), manifest_get(cand_manifest, "dataset", "sha256")
    if not bs or not cs:
        missing = " and ".join(n for n, v in (("base", bs), ("candidate", cs)) if not v)
        diffs.append(f"dataset sha256 missing in {missing}")
    elif bs != cs:
        diffs.append(f"dataset sha256 differs: {_short(bs)} vs {_short(cs)}")
    br, cr = base_manifest.get("repeats"), cand_manifest.get("repeats")
    if br != cr:
        diffs.append(f"repeats differ: {br} vs {cr}")
    if base_rule != cand_rule:
        diffs.append(f"collapse rule differs: {base_rule} vs {cand_rule}")
    bg = base_manifest.get("graders") or {}
    cg = cand_manifest.get("graders") or {}
    if bg != cg:
        parts = []
        for name in sorted(set(bg) | set(cg)):
            if name not in cg:
                parts.append(f"{name} only in base")
            elif name not in bg:
                parts.append(f"{name} only in candidate")
            elif bg[name] != cg[name]:
                parts.append(f"{name} {bg[name]} vs {cg[name]}")
        diffs.append("grader versions differ: " + "; ".join(parts))
    b_red, c_red = (bool(manifest_get(m, "sample", "include_red")) for m in (base_manifest, cand_manifest))
    if b_red != c_red:  # absent means false: runs from before red rows existed ran without them
        diffs.append(f"red rows (include_red) differ: {str(b_red).lower()} vs {str(c_red).lower()}")
    diffs += criteria_differences(base_manifest.get("criteria"), cand_manifest.get("criteria"))
    bj, cj = base_manifest.get("judge_version"), cand_manifest.get("judge_version")
    if bj != cj:
        diffs.append(f"judge version differs: {bj} vs {cj}")
    arts = [manifest_get(m, "agent_version", "artifacts_sha256") or "(none)" for m in (base_manifest, cand_manifest)]
    diffs += [] if arts[0] == arts[1] else [f"agent_version.artifacts_sha256 differs: {' vs '.join(map(_short, arts))}"]
    if (bv := base_manifest.get("simulator_version")) != (cv := cand_manifest.get("simulator_version")):
        diffs.append(f"user simulator differs: {json.dumps(bv, sort_keys=True)} vs {json.dumps(cv, sort_keys=True)}")
    if base_ids is not None and cand_ids is not None:
        bset, cset = pd.Index(base_ids), pd.Index(cand_ids)
        only_b = bset.difference(cset)
        only_c = cset.difference(bset)
        if len(only_b) or len(only_c):

            def ex(ix: pd.Index) -> str:
                shown = ", ".join(map(str, ix[:5]))
                return shown + (", ..." if len(ix) > 5 else "")

            parts = []
            if len(only_b):
                parts.append(f"{len(only_b)} only in base ({ex(only_b)})")
            if len(only_c):
                parts.append(f"{len(only_c)} only in candidate ({ex(only_c)})")
            diffs.append("row set differs: " + "; ".join(parts))
    return diffs
