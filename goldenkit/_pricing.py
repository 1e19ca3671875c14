"""Prices the user gave (``[pricing]`` in goldenkit.toml), and where a sum of money came from.

goldenkit never invents money from token counts: an outcome's ``cost`` is the
price the provider returned, and the only other source is a price table the
user wrote, with where it came from and when::

    [pricing."gpt-4o-mini"]          # the model id, as the run records it (agent_version.model_id)
    input = 0.15                     # USD per million input (prompt) tokens
    output = 0.60                    # USD per million output (completion) tokens, reasoning tokens included
    cached_input = 0.075             # optional: USD per million cached input tokens (else the input price)
    source = "openai.com/api/pricing"
    date = "2026-11-01"               # or a TOML date: date = 2026-11-01

``source`` and ``date`` may also be written once in ``[pricing]`` for every
model below it; a model's own wins. Cached input tokens are part of the input
tokens (as servers count them), so they are priced at ``cached_input`` and the
rest at ``input``.

Every sum of money is shown with its label (:func:`money_label`): ``provider``
(the provider returned the price: it wins over a table), ``[pricing] SOURCE
DATE`` (computed from the user's prices), or ``n/a`` (neither: no guess).

>>> p = Pricing.from_config({"m": {"input": 1.0, "output": 2.0, "source": "list", "date": "2026-11-01"}}, "g.toml")
>>> p.cost("m", 1_000_000, 500_000), p.cost("other", 10, 10), p.cost("m", None, 5)
(2.0, None, None)
>>> money_label(False, p.price("m")), money_label(True, None), money_label(False, None)
('[pricing] list 2026-11-01', 'provider', 'n/a')
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from goldenkit._text import did_you_mean
from goldenkit.errors import ConfigError

#: The kinds of tokens a model is priced by, USD per million tokens (``cached_input`` optional).
PRICE_KINDS = ("input", "output", "cached_input")
#: Where a price comes from: required for every model (in its table or once in ``[pricing]``).
PROVENANCE_KEYS = ("source", "date")
PROVIDER = "provider"  # the label of a cost the provider returned
NO_MONEY = "n/a"  # the label (and the figure) when neither the provider nor the user gave a price
PER_TOKENS = 1_000_000
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # the one form a label shows


@dataclass(frozen=True)
class Price:
    """One model's prices, USD per million tokens, with where and when they were read."""

    input: float
    output: float
    cached_input: float | None
    source: str
    date: str
    origin: str | None = None  # the file's kind when it is not the user's own (goldenkit.config.pricing)

    @property
    def label(self) -> str:
        """``[pricing] SOURCE DATE`` (and ``(ORIGIN)``): where money computed from these prices came from."""
        return f"[pricing] {self.source} {self.date}" + (f" ({self.origin})" if self.origin else "")

    def cost(self, tokens_in: int | None, tokens_out: int | None, tokens_cached: int | None = None) -> float | None:
        """USD for one call's tokens; None when a count is missing (a missing count is never 0)."""
        if tokens_in is None or tokens_out is None:
            return None
        cached = min(max(int(tokens_cached or 0), 0), int(tokens_in))
        cached_price = self.input if self.cached_input is None else self.cached_input
        usd = (int(tokens_in) - cached) * self.input + cached * cached_price + int(tokens_out) * self.output
        return usd / PER_TOKENS


@dataclass(frozen=True)
class Pricing:
    """The ``[pricing]`` table: one :class:`Price` per model id (empty: no prices, money is ``n/a``)."""

    models: Mapping[str, Price] = field(default_factory=dict)

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None, where: str) -> Pricing:
        """Read ``[pricing]`` (see the module doc); ``where`` names the file. The first problem is one
        ConfigError line naming the model and the key (``g.toml: [pricing."m"] output: missing``)."""
        if not table:
            return cls()
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: [pricing] must be a table")
        shared = {k: v for k, v in table.items() if not isinstance(v, Mapping) and not str(k).startswith("_")}
        for key, value in shared.items():
            if key not in PROVENANCE_KEYS:
                hint = did_you_mean(str(key), PROVENANCE_KEYS)
                raise ConfigError(
                    f"{where}: [pricing] {key}: unknown key{hint}; [pricing] holds source, date and one "
                    '[pricing."MODEL"] table per model'
                )
            _provenance(key, value, f"{where}: [pricing] {key}")
        models = {str(m): _price(m, v, shared, where) for m, v in table.items() if isinstance(v, Mapping)}
        return cls(models)

    def price(self, model: str | None) -> Price | None:
        """The prices of ``model`` (its id exactly as the run records it), or None when it is unpriced."""
        return self.models.get(model) if model is not None else None

    def cost(
        self, model: str | None, tokens_in: int | None, tokens_out: int | None, tokens_cached: int | None = None
    ) -> float | None:
        """USD for these tokens of ``model``; None when the model is unpriced or a count is missing."""
        price = self.price(model)
        return None if price is None else price.cost(tokens_in, tokens_out, tokens_cached)

    def __bool__(self) -> bool:
        return bool(self.models)


def money_label(from_provider: bool, price: Price | None) -> str:
    """Where a sum of money came from: ``provider`` (the provider's own price wins), the price table's
    ``[pricing] SOURCE DATE``, or ``n/a`` (no price at all: the sum is not shown)."""
    if from_provider:
        return PROVIDER
    return price.label if price is not None else NO_MONEY


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: must be a non-empty string (got {value!r})")
    return value.strip()


def _provenance(key: str, value: Any, where: str) -> str:
    """A ``source`` (non-empty text) or a ``date`` (``"YYYY-MM-DD"`` or a TOML date) as the label shows it."""
    if key == "date" and type(value) is dt.date:  # date = 2026-11-01 (a date, not a date and time)
        value = value.isoformat()
    text = _text(value, where)
    if key == "date":
        try:
            if not _ISO_DATE.fullmatch(text):  # fromisoformat also reads 20261101
                raise ValueError(text)
            dt.date.fromisoformat(text)
        except ValueError:
            raise ConfigError(f"{where}: {text!r} is not a date (write YYYY-MM-DD)") from None
    return text


def _usd(value: Any, where: str) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    if not ok:
        raise ConfigError(f"{where}: must be a number of USD per million tokens, 0 or more (got {value!r})")
    return float(value)


def _price(model: Any, table: Mapping[str, Any], shared: Mapping[str, Any], where: str) -> Price:
    at = f'{where}: [pricing."{model}"]'
    known = (*PRICE_KINDS, *PROVENANCE_KEYS)
    for key in table:
        if key not in known:
            raise ConfigError(
                f"{at} {key}: unknown key{did_you_mean(str(key), known) or '; known: ' + ', '.join(known)}"
            )
    for key in ("input", "output"):
        if key not in table:
            raise ConfigError(f"{at} {key}: missing (USD per million {key} tokens)")
    provenance = {}
    for key in PROVENANCE_KEYS:
        if key not in table and key not in shared:
            raise ConfigError(f"{at} {key}: missing (say where the prices come from: source and date)")
        provenance[key] = _provenance(key, table.get(key, shared.get(key)), f"{at} {key}")
    cached = table.get("cached_input")
    return Price(
        input=_usd(table["input"], f"{at} input"),
        output=_usd(table["output"], f"{at} output"),
        cached_input=None if cached is None else _usd(cached, f"{at} cached_input"),
        source=provenance["source"],
        date=provenance["date"],
    )
