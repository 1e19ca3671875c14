"""A run's budget: ``--max-calls N``, ``--max-tokens-total N`` and ``--max-cost USD``, kept by its limiter.

A budget is counted where the run's calls are admitted: the run's one
:class:`~goldenkit.runner._limits.Limiter` (on a Ray run, the limiter actor every
worker asks, :mod:`goldenkit.runner._ray_limits`). A call is admitted only while
every budget remains (a call is counted when it is admitted, so ``--max-calls`` is
never passed); the tokens and the money of a call are added when it returns, so
``--max-tokens-total`` and ``--max-cost`` are overshot by at most the calls in
flight. A budget that cannot be counted is not kept silently: once a call returns without its token
counts (``--max-tokens-total``) or without a price or the counts to price it (``--max-cost``), the next
call is refused (``... cannot be counted``), so a server that reports no usage stops the run at its first
call instead of running it unbounded. Every call the run makes counts: the candidate's attempts (retries
included), a conversation's turns, the judge's calls.

A call refused raises :class:`BudgetSpent`: the row it was for is not written (it
is still to run), the workers stop, the outcomes so far are kept, and the run is
INVALID with the reason ``stopped: budget: ...`` naming what was spent and what
remains (run.json ``stopped_because: "budget"`` and ``budget``). ``goldenkit gate``
on it exits 3: not evidence. The same run id with a larger budget resumes it; a
budget is the run's total over every invocation (what earlier invocations spent
counts), not one session's.

Money is the provider's own price when it returned one, else the user's ``[pricing]``
(:mod:`goldenkit._pricing`; a dataset's own goldenkit.toml sets none:
:func:`goldenkit.config.budget_pricing`); ``--max-cost`` on a model without prices is
refused before anything is written (:func:`check_prices`).

>>> counter = BudgetCounter(Budget(max_calls=2))
>>> counter.admit(); counter.admit(); counter.spent.calls
2
>>> counter.admit()
Traceback (most recent call last):
...
goldenkit.runner._budget.BudgetSpent: --max-calls 2 reached
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from goldenkit.errors import ConfigError
from goldenkit.schema import RunRecord

#: The run options of a budget (RunOptions fields, ``[run]`` keys, ``--max-calls`` ...), in the order shown.
BUDGET_OPTIONS = ("max_calls", "max_tokens_total", "max_cost")
#: The ``stopped`` mark of a run whose budget was spent, until its reason is written with the final spend.
STOPPED = "stopped: budget"
_WHAT = {"max_calls": "calls", "max_tokens_total": "tokens", "max_cost": "cost"}


class BudgetSpent(BaseException):
    """A call the run's budget refused. Like a cancellation it is a signal to stop, not a row's error:
    no grader or agent wrapper catches it (they catch ``Exception``); the run's workers do."""


@dataclass(frozen=True)
class Budget:
    """What a run may spend (None: no limit) and the prices its money is counted in."""

    max_calls: int | None = None
    max_tokens_total: int | None = None
    max_cost: float | None = None
    pricing: Any = None  # a goldenkit._pricing.Pricing (max_cost needs one for every model called)

    @classmethod
    def of(cls, limits: Any) -> Budget | None:
        """The budget of a run's :class:`~goldenkit.runner._calls.CallLimits`; None when it sets none."""
        values = {name: getattr(limits, name, None) for name in BUDGET_OPTIONS}
        if all(v is None for v in values.values()):
            return None
        return cls(**values, pricing=getattr(limits, "pricing", None))

    def call_spend(self, model: str | None, resp: Any) -> tuple[int | None, float | None]:
        """``(tokens or None, USD or None)`` of one call's response (a Response, or a usage mapping of
        :data:`goldenkit.schema.USAGE_COUNTS`: the simulated user's): tokens in + out (None when a count is
        missing: a missing count is never 0); the provider's price, else the ``[pricing]`` of ``model``;
        None when neither prices it."""
        if isinstance(resp, Mapping):
            resp = _Usage(resp)
        tin, tout = getattr(resp, "tokens_in", None), getattr(resp, "tokens_out", None)
        cost = getattr(resp, "cost", None)
        if cost is None and self.pricing is not None:
            cost = self.pricing.cost(model, tin, tout, getattr(resp, "tokens_cached", None))
        return (None if tin is None or tout is None else int(tin) + int(tout)), cost


@dataclass
class Spend:
    """What a run spent: calls admitted, tokens and USD of the calls returned, calls without a price,
    calls returned without their token counts."""

    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    unpriced: int = 0
    uncounted: int = 0

    @classmethod
    def from_record(cls, rec: Any) -> Spend | None:
        """The ``spent`` of a run.json ``budget`` record; None when there is none to read."""
        if not isinstance(rec, Mapping) or not isinstance(rec.get("spent"), Mapping):
            return None
        got = rec["spent"]
        nums = {k: got.get(k) for k in ("calls", "tokens", "cost", "unpriced", "uncounted")}
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in nums.values()):
            return None
        return cls(
            calls=int(nums["calls"]),
            tokens=int(nums["tokens"]),
            cost=float(nums["cost"]),
            unpriced=int(nums["unpriced"]),
            uncounted=int(nums["uncounted"]),
        )


class BudgetCounter:
    """The spend of one run against its :class:`Budget` (kept by the run's limiter)."""

    def __init__(self, budget: Budget, spent: Spend | None = None) -> None:
        self.budget = budget
        self.spent = spent or Spend()
        self.refused: str | None = None  # which budget refused a call (its flag and limit)
        self.uncountable = False  # it refused because what it counts was not reported

    def admit(self) -> None:
        """Count one call, or raise :class:`BudgetSpent` when a budget is reached or cannot be counted
        (nothing counted)."""
        for name in BUDGET_OPTIONS:
            limit = getattr(self.budget, name)
            if limit is None:
                continue
            flag = f"--{name.replace('_', '-')} {limit:g}"
            blind = {"max_tokens_total": self.spent.uncounted, "max_cost": self.spent.unpriced}.get(name, 0)
            if blind:
                what = "no token counts" if name == "max_tokens_total" else "no price and no token counts to price"
                self.refused, self.uncountable = f"{flag} cannot be counted: {blind} call(s) returned {what}", True
                raise BudgetSpent(self.refused)
            if getattr(self.spent, _WHAT[name]) >= limit:
                self.refused = f"{flag} reached"
                raise BudgetSpent(self.refused)
        self.spent.calls += 1

    def add(self, tokens: int | None, cost: float | None) -> None:
        """A call returned: its tokens (None: not reported) and its money (None: no price for it)."""
        if tokens is None:
            self.spent.uncounted += 1
        else:
            self.spent.tokens += tokens
        if cost is None or not math.isfinite(cost):
            self.spent.unpriced += 1
        else:
            self.spent.cost += cost

    def remaining(self) -> dict[str, float]:
        """What remains of each budget set (0 when spent or overshot)."""
        out: dict[str, float] = {}
        for name in BUDGET_OPTIONS:
            limit = getattr(self.budget, name)
            if limit is not None:
                out[_WHAT[name]] = max(0, limit - getattr(self.spent, _WHAT[name]))
        return out

    def record(self, stopped: bool) -> dict[str, Any]:
        """run.json's ``budget``: the limits, what was spent (over every invocation), what remains."""
        limits = {name: getattr(self.budget, name) for name in BUDGET_OPTIONS}
        spent = asdict(self.spent)
        spent["cost"] = round(spent["cost"], 6)
        return {**limits, "spent": spent, "remaining": self.remaining(), "stopped": stopped, "counts": "total"}

    def reason(self, run_id: str) -> str:
        """``stopped: budget: --max-calls 100 reached; spent ...; remaining ...; resume with ...``."""
        left = ", ".join(f"{_figure(k, v)}" for k, v in self.remaining().items())
        how = "without that budget (or with a provider that reports usage)" if self.uncountable else "a larger budget"
        spent = f"spent {self.spent_text()}; remaining {left}"
        return f"{STOPPED}: {self.refused or 'reached'}; {spent}; resume with --run-id {run_id} and {how}"

    def spent_text(self) -> str:
        """``100 calls, 5400 tokens, $0.0123`` (money only when a budget counts it or a price was known)."""
        s = self.spent
        parts = [f"{s.calls} calls", f"{s.tokens} tokens"]
        if self.budget.max_cost is not None or s.cost:
            parts.append(f"${s.cost:.4f}" + (f" ({s.unpriced} calls without a price)" if s.unpriced else ""))
        return ", ".join(parts)


def _figure(what: str, value: float) -> str:
    return f"${value:.4f}" if what == "cost" else f"{int(value)} {what}"


def earlier_spend(manifest: Mapping[str, Any] | None, jsonl: Path, budget: Budget) -> Spend:
    """What a resumed run's earlier invocations spent: their run.json ``budget`` record, else their calls
    (run.json's invocations) and the tokens and money of the outcomes they wrote (``jsonl``): the candidate's
    and each other role's of the outcome's ``usage`` (the judge's, the simulated user's, priced as the model
    run.json records for it: :func:`goldenkit.results.role_models`)."""
    if manifest is None:
        return Spend()
    recorded = Spend.from_record(manifest.get("budget"))
    if recorded is not None:
        return recorded
    invocations = (manifest.get("timings") or {}).get("invocations") or []
    spent = Spend(calls=sum(int(i.get("calls") or 0) for i in invocations if isinstance(i, Mapping)))
    from goldenkit.results import role_models

    models = {"": (manifest.get("agent_version") or {}).get("model_id"), **role_models(manifest)}  # "": candidate
    if jsonl.is_file():
        with jsonl.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:  # a torn last line: the outcome reader cuts it
                    continue
                roles = rec.get("usage") if isinstance(rec.get("usage"), Mapping) else {}
                for role, used in [("", rec), *roles.items()]:
                    if isinstance(used, Mapping):
                        tokens, cost = budget.call_spend(models.get(role), used)
                        spent.tokens += tokens or 0
                        spent.cost += cost or 0.0
    return spent


class _Usage:
    """An outcome record's (or a usage's) token counts and cost, read as a response's."""

    def __init__(self, rec: Mapping[str, Any]) -> None:
        self.tokens_in, self.tokens_out = rec.get("tokens_in"), rec.get("tokens_out")
        self.tokens_cached, self.cost = rec.get("tokens_cached"), rec.get("cost")


def finish_budget(limiter: Any, manifest: RunRecord, stopped: str | None, run_id: str) -> str | None:
    """At a run's end: run.json's ``budget`` record (when the run has one) and the run's ``stopped`` reason,
    which names the spend when the budget stopped it (``stopped_because: "budget"``)."""
    counter = getattr(limiter, "budget", None)
    if not isinstance(counter, BudgetCounter):
        return stopped
    by_budget = stopped == STOPPED
    manifest["budget"] = counter.record(by_budget)
    if not by_budget:
        return stopped
    manifest["stopped_because"] = "budget"
    return counter.reason(run_id)


def budget_limits(limits: Any, cfg: Mapping[str, Any], callers: Sequence[Any], *, simulator: Any = None) -> Any:
    """``limits`` (a run's CallLimits) with the ``[pricing]`` of ``cfg`` a budget trusts (unless it has
    prices; :func:`goldenkit.config.budget_pricing`: never a dataset's own goldenkit.toml's) when the run
    has a budget; its
    ``max_cost`` refused (:func:`check_prices`) when a model of ``callers`` (the provider, the graders'
    providers: the judge's) or the ``simulator``'s (a simulated user that asks a model) has no prices."""
    if Budget.of(limits) is None:
        return limits
    from goldenkit.config import budget_pricing

    prices = limits.pricing
    if prices is None:
        prices = budget_pricing(cfg, max_cost=limits.max_cost is not None)
    out = dataclasses.replace(limits, pricing=prices)
    models = [getattr(c, "model", None) for c in callers if c is not None]
    if getattr(simulator, "model", None) is not None:  # a scripted user calls no model: nothing to price
        models.append(simulator.model)
    check_prices(Budget.of(out), models, str(cfg.get("_path") or "goldenkit.toml"))
    return out


def check_prices(budget: Budget | None, models: Sequence[str | None], where: str) -> None:
    """Refuse, before anything is written, ``max_cost`` when a model the run calls (``models``: the
    candidate's, the judge's) has no ``[pricing]``: its money could not be counted."""
    if budget is None or budget.max_cost is None:
        return
    pricing = budget.pricing
    for model in dict.fromkeys(models):
        if pricing is None or pricing.price(model) is None:
            name = "its model" if model is None else f'model "{model}"'
            raise ConfigError(
                f"--max-cost (max_cost) needs prices: {where} has no [pricing] for {name}; "
                f'add [pricing."{model or "MODEL"}"] input, output, source and date, or leave --max-cost out'
            )


__all__ = [
    "BUDGET_OPTIONS",
    "STOPPED",
    "Budget",
    "BudgetCounter",
    "BudgetSpent",
    "Spend",
    "budget_limits",
    "check_prices",
    "earlier_spend",
    "finish_budget",
]
