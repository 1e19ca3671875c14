"""The failing rows of one or more runs, a seeded sample of them, and each as an escaped HTML card."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from html import escape
from typing import Any

import pandas as pd

from goldenkit import stats
from goldenkit._display import STYLE, HTMLBlock
from goldenkit._findings import findings_in
from goldenkit._registry import publish
from goldenkit.dataset import Dataset
from goldenkit.errors import DatasetError, InputError
from goldenkit.records import grader_results, transcript_text
from goldenkit.schema import FAIL

# Columns of failing_rows(), in order.
FAILURE_COLUMNS = (
    "run_id",
    "row_id",
    "slice",
    "tags",
    "split",
    "source",
    "graders_failed",
    "passed",
    "repeat",
    "prompt",
    "expected",
    "response",
    "reasons",
    "findings",
)


def case_texts(dataset: Dataset | None, row_id: str) -> tuple[str, str]:
    """The prompt (all user turns) and what is expected of a dataset row, as text.

    Without a dataset, or for a row it does not hold, both are empty strings.
    A case that cannot be normalized falls back to its raw JSON.
    """
    if dataset is None:
        return "", ""
    try:
        case = dataset.case(row_id)
    except DatasetError:
        try:
            raw = dataset.raw_case(row_id)
        except DatasetError:
            return "", ""
        return json.dumps(raw, ensure_ascii=False, indent=1, default=str), ""
    turns = [t.user for t in case.turns]
    if case.scenario is not None:
        turns = [f"{case.scenario.starting_prompt}\n[plan of the simulated user] {case.scenario.plan}"]
    prompt = turns[0] if len(turns) == 1 else "\n".join(f"[turn {i + 1}] {u}" for i, u in enumerate(turns))
    if case.system:
        prompt = f"[system] {case.system}\n{prompt}"
    parts = []
    if case.reference:
        parts.append(f"reference: {case.reference}")
    if case.expect:
        parts.append("expect: " + json.dumps(case.expect, ensure_ascii=False, sort_keys=True, default=str))
    tools = [[c.to_dict() for c in turn] for turn in case.expected_trajectory]
    if any(tools) and "tools" not in case.expect:
        parts.append("tools: " + json.dumps(tools, ensure_ascii=False, default=str))
    return prompt, "\n".join(parts)


def failing_rows(outcomes: pd.DataFrame, dataset: Dataset | None = None, rule: str = "majority") -> pd.DataFrame:
    """One line per (run, row) whose repeats collapse to FAIL under ``rule``.

    Shows the first failing repeat's response and its failed graders' reasons
    (``grader: reason`` lines) and findings (each as ``grader: what it found``, the
    line of :func:`goldenkit.why` it is in), the graders that failed in any repeat, how many
    graded repeats passed, and -- when ``dataset`` is given -- the row's prompt,
    expectation and source. Ordered by slice, then row id, then run. (In how many runs each
    row failed is :func:`goldenkit.history.failure_counts`.)
    """
    if outcomes.empty:
        return pd.DataFrame(columns=list(FAILURE_COLUMNS))
    runs = outcomes["run_id"].astype(str) if "run_id" in outcomes.columns else pd.Series("", index=outcomes.index)
    sources: dict[str, Any] = {}
    if dataset is not None:
        sources = dict(zip(dataset.rows["id"], dataset.rows["source"], strict=True))
    records = []
    for run_id, group in outcomes.groupby(runs, sort=True):
        collapsed = stats.collapse_repeats(group, rule)
        failed = collapsed[collapsed["verdict"].astype(str) == FAIL]
        if failed.empty:
            continue
        wanted = set(failed["row_id"].astype(str))
        sub = group[group["row_id"].astype(str).isin(wanted)].sort_values(["row_id", "repeat"], kind="stable")
        for row_id, reps in sub.groupby(sub["row_id"].astype(str), sort=False):
            fails = reps[reps["verdict"].astype(str) == FAIL]
            first = fails.iloc[0] if len(fails) else reps.iloc[0]
            failed_graders = sorted(
                {name for g in reps["graders"] for name, res in grader_results(g).items() if res.get("passed") is False}
            )
            reasons = [
                f"{name}: {res.get('reason') or '(no reason)'}"
                for name, res in grader_results(first["graders"]).items()
                if res.get("passed") is False
            ]
            if not reasons and first.get("detail"):
                reasons = [str(first["detail"])]
            graded = reps["verdict"].astype(str).isin(["PASS", "FAIL"])
            n_pass = int((reps["verdict"].astype(str) == "PASS").sum())
            prompt, expected = case_texts(dataset, row_id)
            source = sources.get(row_id)
            records.append(
                {
                    "run_id": str(run_id),
                    "row_id": row_id,
                    "slice": str(first["slice"]),
                    "tags": list(first["tags"]) if first.get("tags") is not None else [],
                    "split": str(first.get("split") or ""),
                    "source": "" if source is None or pd.isna(source) else str(source),
                    "graders_failed": failed_graders,
                    "passed": f"{n_pass}/{int(graded.sum())}",
                    "repeat": int(first["repeat"]),
                    "prompt": prompt,
                    "expected": expected,
                    "response": transcript_text(first.get("trajectory"))  # a conversation: turn by turn
                    or ("" if first.get("response") is None else str(first["response"])),
                    "reasons": "\n".join(reasons),
                    "findings": [f.label for f in findings_in(grader_results(first["graders"]))],
                }
            )
    out = pd.DataFrame(records, columns=list(FAILURE_COLUMNS))
    return out.sort_values(["slice", "row_id", "run_id"], kind="stable").reset_index(drop=True)


def audit_sample(failures: pd.DataFrame, n_per_slice: int, seed: int = 0) -> pd.DataFrame:
    """A deterministic sample of at most ``n_per_slice`` failing rows per slice.

    Rows are ranked within their slice by SHA-256 of ``"<seed>:<run_id>:<row_id>"``
    and the first ``n_per_slice`` kept, so the sample depends only on the seed
    and the set of failures, never on their order or on the platform. Output is
    ordered by slice, then rank.
    """
    if n_per_slice < 0:
        raise InputError(f"n_per_slice must be >= 0, got {n_per_slice}")
    if failures.empty or n_per_slice == 0:
        return failures.iloc[0:0].copy()
    key = [
        hashlib.sha256(f"{seed}:{r}:{i}".encode()).hexdigest()
        for r, i in zip(failures["run_id"].astype(str), failures["row_id"].astype(str), strict=True)
    ]
    ranked = failures.assign(_key=key).sort_values(["slice", "_key"], kind="stable")
    return ranked.groupby("slice", sort=True).head(n_per_slice).drop(columns="_key").reset_index(drop=True)


def failure_card_html(row: Mapping[str, Any]) -> str:
    """One failing row as an HTML table: prompt, expected, response, reasons side by side (escaped)."""

    def cell(text: Any) -> str:
        return f"<td><pre>{escape('' if text is None else str(text))}</pre></td>"

    tags = ", ".join(row.get("tags") or [])
    head = (
        f"<b>{escape(str(row.get('row_id', '')))}</b> · slice {escape(str(row.get('slice', '')))}"
        f" · run {escape(str(row.get('run_id', '')))} · passed {escape(str(row.get('passed', '')))}"
        + (f" · tags {escape(tags)}" if tags else "")
        + (f" · source {escape(str(row.get('source')))}" if row.get("source") else "")
    )
    return (
        f'<div class="gk-card"><div>{head}</div><table class="gk-side-by-side">'
        "<tr><th>prompt</th><th>expected</th><th>response</th><th>reasons</th></tr><tr>"
        + cell(row.get("prompt"))
        + cell(row.get("expected"))
        + cell(row.get("response"))
        + cell(row.get("reasons"))
        + "</tr></table></div>"
    )


def sample_cards_html(sample: pd.DataFrame) -> HTMLBlock:
    """The papermill view of the audit: each sampled failing row as an escaped side-by-side card, per slice."""
    if sample.empty:
        return HTMLBlock("<p>No failing rows to audit.</p>")
    parts = [STYLE]
    for sl, group in sample.groupby("slice", sort=True):
        parts.append(f"<h3>{escape(str(sl))} ({len(group)} sampled)</h3>")
        parts.extend(failure_card_html(rec) for rec in group.to_dict("records"))
    return HTMLBlock("\n".join(parts))


publish(globals())
