"""One protocol key: everything in a run's manifest that can change a verdict.

:func:`protocol_key` is the one place that says what makes two runs
comparable. It is built from a run's manifest (run.json, or the manifest a
baseline snapshot copied whole), so runs written before it still read:

================  ==========================================================
key               from the manifest
================  ==========================================================
dataset           ``dataset.sha256`` and ``dataset.version`` (for an imported
                  run, ``dataset.sha256`` is the per-row input fingerprint)
sample            the sample spec: split, per_slice, seed, tags, ``include_red``
                  (absent means false)
repeats           ``repeats``
rule              the collapse rule applied to this side
stop_decided      the rule a row's repeats stopped under once its verdict was
                  decided (``stop_decided_repeats``); absent when every
                  repeat was called (a full run's key is what it always was).
                  Under that rule the collapsed verdicts are the full run's,
                  so it is no difference between two sides; read under
                  another rule they are not a full run's verdicts
graders           every grader: ``{version, hard}``; a version changes with
                  every verdict-changing option (thresholds, match types), and
                  ``hard`` is recorded per grader (older runs: the built-in
                  default, every grader hard but ``judge`` and ``rubrics``)
criteria          the ``--criteria`` file's sha256 and what it ignored (its
                  name is kept for messages, never compared)
judge             ``judge_version`` (model, rubric, parameters)
simulator         ``simulator_version`` (the user simulator and its turn limit)
vision            whether rows with images were sent (absent means true)
artifacts         ``agent_version.artifacts_sha256`` (prompts, corpora, tools)
grading           who graded: ``goldenkit`` (live, fixtures and regrade runs,
                  which differ only in where the answers came from) or
                  ``imported`` (another tool's own scorers)
inputs            an imported run's per-row input fingerprint
                  (``source.inputs_sha256``; also when ``--dataset`` named a dataset)
================  ==========================================================

The agent's identity (model id, prompt hash, git commit) stays outside the
key: it is what a comparison compares. Concurrency, timeouts, retries,
progress and paths never enter it. :func:`protocol_differences` lists, one
line each, every key that differs; compare (exit 4), the history index,
leaderboard alignment, resume and regrade all call it.

>>> a = {"dataset": {"sha256": "ab" * 32, "version": "1"}, "repeats": 3, "graders": {"contract": "1"}}
>>> protocol_differences(protocol_key(a), protocol_key({**a, "repeats": 1}))
['repeats differ: 3 vs 1']
>>> protocol_differences(protocol_key(a), protocol_key({**a, "grader_hard": {"contract": False}}))
['grader settings differ: contract hard true vs false']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from goldenkit._registry import publish
from goldenkit.formats import criteria_differences

__all__ = [
    "PROTOCOL_FIELDS",
    "SOFT_BY_DEFAULT",
    "comparability_differences",
    "manifest_get",
    "protocol_differences",
    "protocol_key",
    "protocol_sha256",
]

#: The fields of a protocol key, in order (``stop_decided`` only when set).
PROTOCOL_FIELDS = (
    "dataset",
    "sample",
    "repeats",
    "rule",
    "stop_decided",
    "graders",
    "criteria",
    "judge",
    "simulator",
    "vision",
    "artifacts",
    "grading",
    "inputs",
)
#: Built-in graders that are soft unless configured hard (what a manifest without ``grader_hard`` meant).
SOFT_BY_DEFAULT = frozenset({"judge", "rubrics"})


def manifest_get(m: Mapping[str, Any], *path: str) -> Any:
    """``m[path[0]][path[1]]...``, or None where a step is missing or not a mapping."""
    cur: Any = m
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def _sample(m: Mapping[str, Any]) -> dict[str, Any]:
    spec = dict(m.get("sample") or {})
    spec.pop("shard", None)  # a shard's rows are a part of the run's, merged into it (never a protocol)
    spec["include_red"] = bool(spec.get("include_red"))
    for k in ("split", "per_slice", "seed"):
        spec.setdefault(k, None)
    return {k: spec[k] for k in sorted(spec)}


def _graders(m: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    versions = m.get("graders") or {}
    hard = m.get("grader_hard") or {}
    out = {}
    for name in sorted(versions):
        h = hard.get(name, name not in SOFT_BY_DEFAULT)
        out[str(name)] = {"version": str(versions[name]), "hard": bool(h)}
    return out


def _criteria(m: Mapping[str, Any]) -> dict[str, Any] | None:
    rec = m.get("criteria")
    if not isinstance(rec, Mapping):
        return None
    ignored = sorted(str(x) for x in rec.get("ignored") or [])
    return {"sha256": rec.get("sha256"), "ignored": ignored, "file": rec.get("file")}


def protocol_key(manifest: Mapping[str, Any], *, rule: str | None = None) -> dict[str, Any]:
    """Everything in ``manifest`` that can change a verdict (see the module docstring).

    ``rule``: the collapse rule this side is read under (default: the manifest's
    ``rule``, else ``majority``).
    """
    m = manifest
    stop = {"stop_decided": m["stop_decided_repeats"]} if m.get("stop_decided_repeats") else {}
    return {
        "dataset": {"sha256": manifest_get(m, "dataset", "sha256"), "version": manifest_get(m, "dataset", "version")},
        "sample": _sample(m),
        "repeats": m.get("repeats"),
        "rule": rule or m.get("rule") or "majority",
        "graders": _graders(m),
        "criteria": _criteria(m),
        "judge": m.get("judge_version"),
        "simulator": m.get("simulator_version") or None,
        "vision": m.get("vision") is not False,
        "artifacts": manifest_get(m, "agent_version", "artifacts_sha256"),
        "grading": "imported" if m.get("mode") == "imported" else "goldenkit",
        "inputs": manifest_get(m, "source", "inputs_sha256"),
        **stop,
    }


def protocol_sha256(key: Mapping[str, Any]) -> str:
    """The SHA-256 of a protocol key's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _short(v: Any) -> str:
    s = str(v)
    return s[:12] + "..." if len(s) > 15 else s


def _js(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _grader_differences(bg: Mapping[str, Any], cg: Mapping[str, Any]) -> list[str]:
    versions, settings = [], []
    for name in sorted(set(bg) | set(cg)):
        if name not in cg:
            versions.append(f"{name} only in base")
        elif name not in bg:
            versions.append(f"{name} only in candidate")
        elif bg[name]["version"] != cg[name]["version"]:
            versions.append(f"{name} {bg[name]['version']} vs {cg[name]['version']}")
        elif bg[name]["hard"] != cg[name]["hard"]:
            b, c = (str(x[name]["hard"]).lower() for x in (bg, cg))
            settings.append(f"{name} hard {b} vs {c}")
    out = ["grader versions differ: " + "; ".join(versions)] if versions else []
    return out + (["grader settings differ: " + "; ".join(settings)] if settings else [])


def _dataset_differences(b: Mapping[str, Any], c: Mapping[str, Any]) -> list[str]:
    bs, cs = b.get("sha256"), c.get("sha256")
    if not bs or not cs:
        missing = " and ".join(n for n, v in (("base", bs), ("candidate", cs)) if not v)
        return [f"dataset sha256 missing in {missing}"]
    if bs != cs:
        return [f"dataset sha256 differs: {_short(bs)} vs {_short(cs)}"]
    if b.get("version") != c.get("version"):
        return [f"dataset version differs: {b.get('version')} vs {c.get('version')}"]
    return []


def _sample_differences(b: Mapping[str, Any], c: Mapping[str, Any]) -> list[str]:
    out = []
    if b["include_red"] != c["include_red"]:
        out.append(f"red rows (include_red) differ: {str(b['include_red']).lower()} vs {str(c['include_red']).lower()}")
    rest = [k for k in sorted(set(b) | set(c)) if k != "include_red" and b.get(k) != c.get(k)]
    if rest:
        out.append("sample differs: " + "; ".join(f"{k} {_js(b.get(k))} vs {_js(c.get(k))}" for k in rest))
    return out


def _unnamed(criteria: Mapping[str, Any] | None) -> Any:
    return None if criteria is None else {k: v for k, v in criteria.items() if k != "file"}


def protocol_differences(base: Mapping[str, Any], cand: Mapping[str, Any]) -> list[str]:
    """Every reason two protocol keys differ, one line each (empty: the same protocol)."""
    diffs = _dataset_differences(base["dataset"], cand["dataset"])
    diffs += _sample_differences(base["sample"], cand["sample"])
    if base["repeats"] != cand["repeats"]:
        diffs.append(f"repeats differ: {base['repeats']} vs {cand['repeats']}")
    if base["rule"] != cand["rule"]:
        diffs.append(f"collapse rule differs: {base['rule']} vs {cand['rule']}")
    for side, key in (("base", base), ("candidate", cand)):
        stopped = key.get("stop_decided")
        if stopped and stopped != key["rule"]:
            diffs.append(
                f"the {side} stopped decided repeats under rule {stopped}: read under {key['rule']} its "
                "verdicts are not a full run's"
            )
    diffs += _grader_differences(base["graders"], cand["graders"])
    if _unnamed(base["criteria"]) != _unnamed(cand["criteria"]):  # the file's name alone changes no verdict
        diffs += criteria_differences(base["criteria"], cand["criteria"])
    if base["judge"] != cand["judge"]:
        diffs.append(f"judge version differs: {base['judge']} vs {cand['judge']}")
    if base["simulator"] != cand["simulator"]:
        diffs.append(f"user simulator differs: {_js(base['simulator'])} vs {_js(cand['simulator'])}")
    if base["vision"] != cand["vision"]:
        diffs.append(f"vision differs: {str(base['vision']).lower()} vs {str(cand['vision']).lower()}")
    arts = [k["artifacts"] or "(none)" for k in (base, cand)]
    if arts[0] != arts[1]:
        diffs.append(f"agent_version.artifacts_sha256 differs: {' vs '.join(map(_short, arts))}")
    if base.get("inputs") != cand.get("inputs"):
        diffs.append(f"imported inputs differ: {_short(base.get('inputs'))} vs {_short(cand.get('inputs'))}")
    if base["grading"] != cand["grading"]:
        diffs.append(f"grading differs: {base['grading']} vs {cand['grading']} (another tool's scorers)")
    return diffs


def _row_set_difference(base_ids: Any, cand_ids: Any) -> list[str]:
    import pandas as pd

    bset, cset = pd.Index(base_ids), pd.Index(cand_ids)
    only_b, only_c = bset.difference(cset), cset.difference(bset)
    if not len(only_b) and not len(only_c):
        return []

    def ex(ix: pd.Index) -> str:
        return ", ".join(map(str, ix[:5])) + (", ..." if len(ix) > 5 else "")

    parts = [f"{len(only_b)} only in base ({ex(only_b)})"] if len(only_b) else []
    parts += [f"{len(only_c)} only in candidate ({ex(only_c)})"] if len(only_c) else []
    return ["row set differs: " + "; ".join(parts)]


def comparability_differences(
    base_manifest: Mapping[str, Any],
    cand_manifest: Mapping[str, Any],
    *,
    base_rule: str = "majority",
    cand_rule: str = "majority",
    base_ids: Any = None,
    cand_ids: Any = None,
) -> list[str]:
    """Every reason two sides cannot be compared, one line each (empty: comparable).

    The protocol keys of both manifests (:func:`protocol_key` under each side's
    rule) and, when both are given, the row ids.
    """
    diffs = protocol_differences(
        protocol_key(base_manifest, rule=base_rule), protocol_key(cand_manifest, rule=cand_rule)
    )
    if base_ids is not None and cand_ids is not None:
        diffs += _row_set_difference(base_ids, cand_ids)
    return diffs


publish(globals(), "goldenkit.compare")
