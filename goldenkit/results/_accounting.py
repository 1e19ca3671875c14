"""What a run cost: calls, tokens, latency and money, per run, per slice and per passing row, by role.

This is the one place a run's usage is added up; run.json's ``accounting``, the printed run summary, the
report's usage table and the pages all read it (compare's paired change per row:
:mod:`goldenkit.results._usage_change`).

**Roles.** The candidate's usage is in each outcome's own columns (its calls are the outcome's ``attempts``,
retries included, less the simulated user's calls, which a conversation's attempts count too; ``tokens_in``,
``tokens_out``, ``tokens_cached``, ``tokens_reasoning``; ``cost``); the judge's (every model grader) and the
simulated user's are in the outcome's ``usage`` map (:data:`goldenkit.schema.USAGE_COUNTS`). Each role is
summed apart; a count no outcome reported is null (never 0).

**Money** (:mod:`goldenkit._pricing`). An outcome's money for a role is the price the provider returned (label
``provider``), else its tokens at the user's ``[pricing]`` for the role's model (label ``[pricing] SOURCE
DATE``), else none. A group's money is shown only when every outcome whose calls reported usage for the role
has money: otherwise it is ``n/a`` and the label says how many were unpriced and why: no price for the model,
or a price and no token counts to apply it to (a sum over part of the calls would read as the whole). Calls
that reported no usage (an ERROR's) add to ``calls`` only, never to tokens or money. ``total_money`` is the
sum over the roles, shown only when each role that reported usage has money; otherwise its label names each
role without (``n/a (judge: no prices)``) unless no role has any.

**Latency** percentiles (p50, p95: linear interpolation between the order statistics, numpy's default and R's
``quantile(type = 7)``) are over answered outcomes (not ERROR); time to first token over streamed ones. **Per
passing row**: the group's tokens (in + out) and money of the candidate alone (:data:`PASSING_ROW_ROLE`: what
choosing this model costs; the judge and the simulated user are the evaluation's own spend, in
``total_money``), divided by its rows whose repeats collapse to PASS
(:func:`goldenkit.stats.collapse_repeats`) under the run's own rule (:func:`collapse_rule`; run.json and the
report alike): what a passing verdict cost, the failures' calls included. The frontier's two measures read the
same role (:func:`outcome_cost`).

>>> import pandas as pd
>>> df = pd.DataFrame({"row_id": ["a", "b"], "repeat": [0, 0], "slice": ["s", "s"], "verdict": ["PASS", "FAIL"],
...     "attempts": [1, 1], "tokens_in": [100, 300], "tokens_out": [10, 30], "cost": [None, None],
...     "latency_ms": [1000.0, 3000.0]})
>>> t = accounting(df).iloc[-1]  # the OVERALL row
>>> int(t["tokens_in"]), int(t["calls"]), t["latency_p50_ms"], t["tokens_per_passing_row"], t["total_money_label"]
(400, 2, 2000.0, 440.0, 'n/a (no prices)')
>>> cost_line(run_totals(df))
'cost: 400 tokens in, 40 out, 2 calls, p50 2.0 s; money n/a (no prices)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goldenkit._display import money as usd
from goldenkit._pricing import NO_MONEY, PER_TOKENS, PROVIDER, Pricing
from goldenkit._registry import publish
from goldenkit.config import config_for_run, pricing
from goldenkit.errors import ConfigError, ResultsError
from goldenkit.results._manifest import read_manifest
from goldenkit.schema import (
    CANDIDATE,
    ERROR,
    JUDGE,
    PASS,
    ROLES,
    SIMULATOR_ROLE,
    TOKEN_COUNTS,
    USAGE_COUNTS,
)

if TYPE_CHECKING:
    import pandas as pd

#: The column prefix of each role's figures in :func:`accounting` (the candidate's have none).
PREFIX = {CANDIDATE: "", JUDGE: "judge_", SIMULATOR_ROLE: "simulator_"}
#: A role's figures (prefixed by :data:`PREFIX`): its calls and token counts, its money and where it came from.
ROLE_COLUMNS = ("calls", *TOKEN_COUNTS, "money", "money_label")
#: The roles whose calls made the answers: a regrade copies their spend with them (:func:`run_totals`).
COPIED_ROLES = (CANDIDATE, SIMULATOR_ROLE)
#: The one role whose tokens and money a passing row's cost counts, in the accounting and the frontier alike.
PASSING_ROW_ROLE = CANDIDATE
NO_PRICES = f"{NO_MONEY} (no prices)"


def role_models(manifest: Mapping[str, Any] | None) -> dict[str, str | None]:
    """The model of the judge and of the simulated user a run recorded (run.json ``judge_version``,
    ``<model>+rubric...``, when there is one judge; ``simulator_version.model``), to price their tokens."""
    man = manifest or {}
    judges = [j for j in str(man.get("judge_version") or "").split(",") if j]
    judge = judges[0].rpartition("+rubric.")[0] or None if len(judges) == 1 else None
    sim = man.get("simulator_version")
    model = sim.get("model") if isinstance(sim, Mapping) else None
    return {JUDGE: judge, SIMULATOR_ROLE: str(model) if model else None}


def collapse_rule(manifest: Mapping[str, Any] | None) -> str:
    """The rule a run's repeats collapse by: the one its decided repeats stopped under (run.json
    ``stop_decided_repeats``), else majority."""
    rule = (manifest or {}).get("stop_decided_repeats")
    return rule if isinstance(rule, str) else "majority"


def run_pricing(manifest: Mapping[str, Any] | None, run_dir: str | Path | None = None) -> Pricing:
    """The ``[pricing]`` of the goldenkit.toml a run recorded (:func:`goldenkit.config.config_for_run`); no
    prices when it recorded none, or when that file can no longer be read as it was (moved, changed since):
    its money is then n/a, never a guess."""
    config = (manifest or {}).get("config")
    extra = config.get("extra") if isinstance(config, Mapping) else None
    if not (isinstance(extra, Mapping) and extra.get("config_file")):
        return Pricing()
    try:
        return pricing(config_for_run(None, manifest, run_dir))
    except ConfigError:
        return Pricing()


def _model_id(agent: Any) -> str | None:
    model = agent.get("model_id") if isinstance(agent, Mapping) else None
    return str(model) if model else None


def _column(outcomes: pd.DataFrame, name: str) -> list[Any]:
    return outcomes[name].tolist() if name in outcomes.columns else [None] * len(outcomes)


def _numbers(values: Sequence[Any]) -> np.ndarray:
    """``values`` as floats, NaN where one is missing (None, NA, NaN)."""
    import pandas as pd

    return np.asarray(pd.to_numeric(pd.Series(values, dtype=object), errors="coerce"), dtype=float)


def _role_usages(outcomes: pd.DataFrame, role: str) -> dict[str, np.ndarray]:
    """Each outcome's usage of ``role``: ``calls`` and the token counts and ``cost`` as floats (NaN: not
    reported) and ``used`` (the role made calls or reported usage for the outcome)."""
    if role == CANDIDATE:
        out = {k: _numbers(_column(outcomes, k)) for k in (*TOKEN_COUNTS, "cost")}
        # the candidate's calls: its attempts, less the simulated user's (a conversation's attempts count both)
        sim = _role_usages(outcomes, SIMULATOR_ROLE)["calls"] if "usage" in outcomes.columns else 0.0
        out["calls"] = _numbers(_column(outcomes, "attempts")) - np.nan_to_num(sim)
        tokens = np.column_stack([out[k] for k in TOKEN_COUNTS]) if len(outcomes) else np.zeros((0, 1))
        out["used"] = (np.nan_to_num(out["calls"]) > 0) | (~np.isnan(tokens)).any(axis=1)
        return out
    cells = [c.get(role) if isinstance(c, Mapping) else None for c in _column(outcomes, "usage")]
    usages = [c if isinstance(c, Mapping) else None for c in cells]
    if not any(u is not None for u in usages):  # the role made no call (most runs have no judge)
        return {**{k: np.full(len(usages), np.nan) for k in USAGE_COUNTS}, "used": np.zeros(len(usages), bool)}
    out = {k: _numbers([u.get(k) if u is not None else None for u in usages]) for k in USAGE_COUNTS}
    out["used"] = np.array([u is not None for u in usages], dtype=bool)
    return out


def _prices(pricing: Pricing, models: Sequence[str | None]) -> dict[str, np.ndarray]:
    """Per outcome, its model's prices (USD per token; NaN: unpriced) and their labels."""
    known = {m: pricing.price(m) for m in set(models)}
    per = {k: np.full(len(models), np.nan) for k in ("input", "output", "cached_input")}
    labels = np.array([None] * len(models), dtype=object)
    for i, m in enumerate(models):
        price = known[m]
        if price is not None:
            per["input"][i], per["output"][i] = price.input / PER_TOKENS, price.output / PER_TOKENS
            cached = price.input if price.cached_input is None else price.cached_input
            per["cached_input"][i], labels[i] = cached / PER_TOKENS, price.label
    return {**per, "label": labels}


def _spend(outcomes: pd.DataFrame, pricing: Pricing, models: Mapping[str, str | None]) -> dict[str, Any]:
    """Per outcome and role (arrays): the counts, the money and its label, whether the role was used and
    whether it reported usage (a call that reported none is neither priced nor counted in tokens)."""
    spend: dict[str, Any] = {}
    own = [_model_id(a) for a in _column(outcomes, "agent_version")]
    for role in ROLES:
        u = _role_usages(outcomes, role)
        pre = PREFIX[role]
        reported = u["used"] & (~np.isnan(np.column_stack([u[k] for k in (*TOKEN_COUNTS, "cost")]))).any(axis=1)
        spend[f"{pre}used"], spend[f"{pre}reported"] = u["used"], reported
        for key in ("calls", *TOKEN_COUNTS):
            spend[f"{pre}{key}"] = u[key]
        model = models.get(role)
        p = _prices(pricing, own if role == CANDIDATE and not model else [model] * len(outcomes))
        tin, tout = u["tokens_in"], u["tokens_out"]
        cached = np.minimum(np.nan_to_num(u["tokens_cached"]), np.nan_to_num(tin))
        priced = (tin - cached) * p["input"] + cached * p["cached_input"] + tout * p["output"]
        provider = ~np.isnan(u["cost"])
        spend[f"{pre}money"] = np.where(provider, u["cost"], priced)
        labels = np.where(provider, PROVIDER, p["label"])
        labels[np.isnan(spend[f"{pre}money"])] = None
        spend[f"{pre}money_label"] = labels
        spend[f"{pre}price_known"] = ~np.isnan(p["input"])  # priced, though its counts may be missing
    return spend


def _sum(values: np.ndarray, mask: np.ndarray) -> int | None:
    got = values[mask]
    got = got[~np.isnan(got)]
    return int(got.sum()) if got.size else None


def _money_sum(money: np.ndarray, labels: np.ndarray, mask: np.ndarray, known: np.ndarray) -> tuple[Any, str]:
    """A group's money for one role and its label (see the module doc: all priced, or n/a saying why: no
    prices, or a price whose token counts the server did not report)."""
    used = int(mask.sum())
    if not used:
        return None, ""
    missing = mask & np.isnan(money)
    unpriced, uncounted = int(missing.sum()), int((missing & known).sum())
    if not unpriced:
        return float(money[mask].sum()), " + ".join(sorted({str(lab) for lab in labels[mask]}))
    why = "unpriced" if not uncounted else "without token counts" if uncounted == unpriced else "unpriced or uncounted"
    if unpriced == used:
        whole = {"unpriced": NO_PRICES, "without token counts": f"{NO_MONEY} (no token counts to price)"}
        return None, whole.get(why, f"{NO_MONEY} (no prices or no token counts)")
    return None, f"{NO_MONEY} ({unpriced:,} of {used:,} outcomes {why})"


def _quantile(values: np.ndarray, q: float) -> float | None:
    got = values[~np.isnan(values)]
    return float(np.quantile(got, q)) if got.size else None


def _group(
    spend: Mapping[str, Any], mask: np.ndarray, answered: np.ndarray, lat: np.ndarray, ttft: np.ndarray
) -> dict[str, Any]:
    """The figures of one group of outcomes (``mask``)."""
    row: dict[str, Any] = {"outcomes": int(mask.sum())}
    keep = mask & answered
    row["latency_p50_ms"] = _quantile(lat[keep], 0.5)
    row["latency_p95_ms"] = _quantile(lat[keep], 0.95)
    row["ttft_p50_ms"] = _quantile(ttft[keep], 0.5)
    total: list[tuple[str, Any, str]] = []
    for role in ROLES:
        pre = PREFIX[role]
        used = mask & spend[f"{pre}used"]
        for key in ("calls", *TOKEN_COUNTS):
            row[f"{pre}{key}"] = _sum(spend[f"{pre}{key}"], used)
        reported = mask & spend[f"{pre}reported"]
        money, label = _money_sum(
            spend[f"{pre}money"], spend[f"{pre}money_label"], reported, spend[f"{pre}price_known"]
        )
        row[f"{pre}money"], row[f"{pre}money_label"] = money, label
        if reported.any():
            total.append((role, money, label))
    row["total_money"], row["total_money_label"] = _total(total)
    return row


def _total(parts: Sequence[tuple[str, Any, str]]) -> tuple[float | None, str]:
    """The money of the roles that reported usage (``(role, money, label)``) and its label (module doc)."""
    missing = [(role, lab) for role, m, lab in parts if m is None]
    if not parts or missing:
        return None, _unpriced(missing, len(parts))
    return float(sum(m for _, m, _ in parts)), " + ".join(sorted({p for _, _, lab in parts for p in lab.split(" + ")}))


def _roles_total(roles: Mapping[str, Mapping[str, Any]]) -> tuple[float | None, str]:
    """:func:`_total` of nested role figures (a role whose money label is empty reported no usage)."""
    return _total([(r, f["money"], f["money_label"]) for r, f in roles.items() if f.get("money_label")])


def _unpriced(missing: Sequence[tuple[str, str]], roles: int) -> str:
    """The label of a total that is n/a: the roles' own when every role's is the same (``n/a (no prices)``),
    else each unpriced role named (``n/a (judge: no prices)``: the candidate's money is counted)."""
    if not missing:
        return NO_PRICES
    if len(missing) == roles and len({lab for _, lab in missing}) == 1:
        return missing[0][1]
    inner = [f"{role}: {lab.removeprefix(NO_MONEY).strip().strip('()') or 'no prices'}" for role, lab in missing]
    return f"{NO_MONEY} ({'; '.join(inner)})"


def accounting(
    outcomes: pd.DataFrame,
    pricing: Pricing | None = None,
    *,
    by: str | None = "slice",
    rule: str | None = None,
    models: Mapping[str, str | None] | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """What the outcomes cost, one row per group of ``by`` (``None``: the run only) and :data:`OVERALL` last.

    ``outcomes``: a run's outcome DataFrame (:meth:`goldenkit.results.Run.outcomes`); ``pricing``: the
    user's prices (:func:`goldenkit.config.pricing`); ``manifest``: the run's run.json, which gives ``rule``
    (:func:`collapse_rule`) and ``models``, the judge's and simulator's models to price their tokens
    (:func:`role_models`; the candidate's is each outcome's ``agent_version.model_id``), unless given.
    Columns: ``outcomes, rows, passing_rows, latency_p50_ms, latency_p95_ms, ttft_p50_ms``; per role
    (prefix ``""``, ``judge_``, ``simulator_``) ``calls, tokens_in, tokens_out, tokens_cached,
    tokens_reasoning, money, money_label``; ``total_money, total_money_label`` over the roles;
    ``tokens_per_passing_row`` and ``money_per_passing_row`` (the candidate's: :data:`PASSING_ROW_ROLE`).
    Missing figures are None.
    """
    import pandas as pd

    from goldenkit.stats import OVERALL, collapse_repeats  # statsmodels and pandas: loaded at the end of a run

    spend = _spend(outcomes, pricing or Pricing(), models if models is not None else role_models(manifest))
    rule = rule or collapse_rule(manifest)
    verdicts = _column(outcomes, "verdict")
    answered = np.array([v != ERROR for v in verdicts], dtype=bool)
    lat, ttft = _numbers(_column(outcomes, "latency_ms")), _numbers(_column(outcomes, "ttft_ms"))
    rows = collapse_repeats(outcomes, rule) if len(outcomes) else None
    keys = np.array([str(k) for k in _column(outcomes, by)] if by is not None else [], dtype=object)
    groups = [(k, keys == k) for k in sorted(set(keys))]
    groups.append((OVERALL, np.ones(len(outcomes), dtype=bool)))
    out = []
    for name, mask in groups:
        row = {by or "group": name, **_group(spend, mask, answered, lat, ttft)}
        if rows is not None:
            in_group = rows if name == OVERALL or by is None else rows[rows[by].astype(str) == name]
            row["rows"], row["passing_rows"] = len(in_group), int((in_group["verdict"] == PASS).sum())
        else:
            row["rows"] = row["passing_rows"] = 0
        passing, pre = row["passing_rows"], PREFIX[PASSING_ROW_ROLE]
        tokens = [row[f"{pre}tokens_in"], row[f"{pre}tokens_out"]]
        row["tokens_per_passing_row"] = (
            sum(t for t in tokens if t is not None) / passing
            if passing and any(t is not None for t in tokens)
            else None
        )
        money = row[f"{pre}money"]
        row["money_per_passing_row"] = money / passing if passing and money is not None else None
        out.append(row)
    first = ["outcomes", "rows", "passing_rows", "latency_p50_ms", "latency_p95_ms", "ttft_p50_ms"]
    table = pd.DataFrame(out).set_index(by or "group")
    rest = [c for c in table.columns if c not in first]
    return table[first + rest].astype(object).where(table[first + rest].notna(), None)


def outcome_cost(
    outcomes: pd.DataFrame, pricing: Pricing | None = None, *, models: Mapping[str, str | None] | None = None
) -> dict[str, np.ndarray]:
    """Each outcome's ``tokens`` (in + out; 0 where not reported) and ``money`` (0 where no usage was
    reported, NaN where unpriced) of :data:`PASSING_ROW_ROLE`, by the rules of :func:`accounting`: summed
    over a group they are the numerators of its per passing row figures."""
    spend = _spend(outcomes, pricing or Pricing(), models or {})
    pre = PREFIX[PASSING_ROW_ROLE]
    money = np.array([np.nan if m is None else m for m in spend[f"{pre}money"]], dtype=float)
    tokens = np.nan_to_num(spend[f"{pre}tokens_in"]) + np.nan_to_num(spend[f"{pre}tokens_out"])
    return {
        "tokens": np.where(spend[f"{pre}used"], tokens, 0.0),
        "money": np.where(spend[f"{pre}reported"], money, 0.0),
    }


def run_totals(
    outcomes: pd.DataFrame,
    pricing: Pricing | None = None,
    *,
    manifest: Mapping[str, Any] | None = None,
    models: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The run's totals as run.json's ``accounting`` keeps them: the :data:`OVERALL` row of
    :func:`accounting` of the run (``manifest``: its run.json), the roles nested (``{"candidate": {calls,
    tokens_in, ..., money, money_label}, "judge": {...}}``: a role that made no call left out), the rest flat;
    JSON-ready.

    A regrade (run.json ``regraded_from``) called only its judge: ``roles`` and ``total_money`` are what it
    spent, and the spend of :data:`COPIED_ROLES` it copied with the answers is under ``copied`` (``{from_run,
    roles, total_money, total_money_label}``, the run that made those calls), so that runs added up count
    every call once."""
    from goldenkit.stats import OVERALL

    row = accounting(outcomes, pricing, by=None, models=models, manifest=manifest).loc[OVERALL].to_dict()
    roles: dict[str, Any] = {}
    for role in ROLES:
        figures = {c: _plain(row.pop(f"{PREFIX[role]}{c}")) for c in ROLE_COLUMNS}
        if figures["calls"] or any(figures[k] is not None for k in TOKEN_COUNTS):
            roles[role] = figures
    out = {**{k: _plain(v) for k, v in row.items()}, "roles": roles}
    source = (manifest or {}).get("regraded_from")
    if not isinstance(source, Mapping):
        return out
    copied = {role: roles.pop(role) for role in COPIED_ROLES if role in roles}
    out["total_money"], out["total_money_label"] = _roles_total(roles)
    money, label = _roles_total(copied)
    origin = source.get("answers_from") or source.get("run_id")
    out["copied"] = {"from_run": origin, "roles": copied, "total_money": money, "total_money_label": label}
    return out


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _seconds(ms: Any) -> str:
    return f"{float(ms) / 1000:.1f} s" if ms is not None else "n/a"


def cost_line(totals: Mapping[str, Any]) -> str:
    """The run summary's line: ``cost: 12,345 tokens in, 2,100 out, 108 calls, p50 1.2 s; money n/a (no
    prices)`` (the judge's and simulator's usage after the candidate's; money with where it came from).

    A regrade's own spend comes first, then what it copied: ``cost: judge 600 tokens in, 40 out, 2 calls;
    money n/a (no prices); from run src (copied, not spent again): 80 tokens in, ...``."""
    copied = totals.get("copied")
    if not isinstance(copied, Mapping):
        return "cost: " + _spend_text(totals, totals.get("latency_p50_ms"))
    roles = totals.get("roles") or {}
    own = "; ".join([f"{r} {_usage_text(roles[r])}" for r in ROLES if roles.get(r)] + [_money_text(totals)])
    copy = _spend_text(copied, totals.get("latency_p50_ms"))
    own = own if roles else "no model calls"
    return f"cost: {own}; from run {copied.get('from_run')} (copied, not spent again): {copy}"


def _spend_text(spend: Mapping[str, Any], p50: Any) -> str:
    """The candidate's usage and latency, the other roles', and the money (of ``spend``: totals or a copy)."""
    roles = spend.get("roles") or {}
    parts = [_usage_text(roles.get(CANDIDATE) or {}) + f", p50 {_seconds(p50)}"]
    parts += [f"{role} {_usage_text(roles[role])}" for role in ROLES if role != CANDIDATE and roles.get(role)]
    return "; ".join([*parts, _money_text(spend)])


def _money_text(spend: Mapping[str, Any]) -> str:
    money, label = spend.get("total_money"), spend.get("total_money_label") or NO_PRICES
    return f"money {usd(money)} ({label})" if money is not None else f"money {label}"


def totals_text(totals: Mapping[str, Any] | None) -> str:
    """A run's totals in a few words for a table of runs (the pages): ``12,345 in / 2,100 out tokens, 108
    calls; $0.42 (provider)``, or ``...; money n/a (no prices)``; empty for a run that counted nothing."""
    if not isinstance(totals, Mapping):
        return ""
    roles, copied = totals.get("roles") or {}, totals.get("copied")
    money, label = totals.get("total_money"), totals.get("total_money_label") or NO_PRICES
    said = f"{usd(money)} ({label})" if money is not None else f"money {label}"
    if isinstance(copied, Mapping):  # a regrade: what it spent; the answers' cost is the run it names
        own = [f"{r} {_tokens_text(roles[r])}" for r in ROLES if roles.get(r)] or ["no model calls"]
        return f"{', '.join(own)}; {said}; answers from run {copied.get('from_run')}"
    return f"{_tokens_text(roles.get(CANDIDATE) or {})}; {said}"


def _tokens_text(figures: Mapping[str, Any]) -> str:
    tin, tout = figures.get("tokens_in"), figures.get("tokens_out")
    tokens = f"{tin:,} in / {tout:,} out tokens" if tin is not None and tout is not None else "tokens n/a"
    return f"{tokens}, {figures.get('calls') or 0:,} calls"


def run_totals_of(path: str | Path) -> dict[str, Any] | None:
    """run.json's ``accounting`` of the run folder ``path`` (None: a run from before accounting, or no run.json)."""
    try:
        manifest = read_manifest(Path(path))
    except (OSError, ResultsError):
        return None
    totals = manifest.get("accounting")
    return totals if isinstance(totals, dict) else None


def _usage_text(figures: Mapping[str, Any]) -> str:
    """``12,345 tokens in, 2,100 out, 108 calls`` (a count not reported: n/a)."""
    tin, tout, calls = figures.get("tokens_in"), figures.get("tokens_out"), figures.get("calls") or 0
    text = f"{tin:,} tokens in" if tin is not None else "tokens in n/a"
    if figures.get("tokens_cached"):
        text += f" ({figures['tokens_cached']:,} cached)"
    text += f", {tout:,} out" if tout is not None else ", out n/a"
    if figures.get("tokens_reasoning"):
        text += f" ({figures['tokens_reasoning']:,} reasoning)"
    return text + f", {calls:,} calls"


__all__ = [
    "COPIED_ROLES",
    "NO_PRICES",
    "PASSING_ROW_ROLE",
    "PREFIX",
    "ROLE_COLUMNS",
    "accounting",
    "collapse_rule",
    "cost_line",
    "outcome_cost",
    "role_models",
    "run_pricing",
    "run_totals",
    "run_totals_of",
    "totals_text",
]

publish(globals())
