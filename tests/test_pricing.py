"""[pricing] in goldenkit.toml: the user's prices per model, each with a source and a date; money labelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldenkit._pricing import NO_MONEY, PROVIDER, Price, Pricing, money_label
from goldenkit.config import TABLE_KEYS, check_travelling, pricing, read_config
from goldenkit.errors import ConfigError

GOOD = {"input": 2.5, "output": 10, "cached_input": 1.25, "source": "vendor list", "date": "2026-11-01"}


def test_cost_prices_cached_input_apart_and_none_when_unpriced_or_uncounted() -> None:
    p = Pricing.from_config({"gpt-x": GOOD}, "g.toml")
    # 1,000 input of which 400 cached, 200 output: (600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6
    assert p.cost("gpt-x", 1000, 200, 400) == pytest.approx((1500 + 500 + 2000) / 1e6)
    assert p.cost("gpt-x", 1000, 200) == pytest.approx((2500 + 2000) / 1e6)
    assert p.cost("gpt-y", 1000, 200) is None  # an unpriced model: no money, never a guess
    assert p.cost("gpt-x", None, 200) is None and p.cost("gpt-x", 1000, None) is None
    assert p.cost(None, 1, 1) is None
    # no cached price: cached tokens are input tokens at the input price
    plain = Pricing.from_config({"m": {"input": 2.0, "output": 0, "source": "s", "date": "2026-01-02"}}, "g.toml")
    assert plain.cost("m", 10, 0, 10) == pytest.approx(20 / 1e6)


def test_labels_say_where_money_came_from() -> None:
    p = Pricing.from_config({"source": "list", "date": "2026-11-01", "m": {"input": 1, "output": 1}}, "g.toml")
    price = p.price("m")
    assert isinstance(price, Price) and price.source == "list"  # the table-wide source and date apply
    assert money_label(False, price) == "[pricing] list 2026-11-01"
    assert money_label(True, price) == PROVIDER == "provider"  # the provider's own price wins
    assert money_label(False, p.price("unpriced")) == NO_MONEY == "n/a"
    assert not Pricing() and p


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"m": {"output": 1, "source": "s", "date": "2026-01-01"}}, r'^g\.toml: \[pricing\."m"\] input: missing'),
        ({"m": {"input": 1, "source": "s", "date": "2026-01-01"}}, r'^g\.toml: \[pricing\."m"\] output: missing'),
        ({"m": {"input": 1, "output": 1, "date": "2026-01-01"}}, r'\[pricing\."m"\] source: missing'),
        ({"m": {"input": 1, "output": 1, "source": "s"}}, r'\[pricing\."m"\] date: missing'),
        ({"m": {**GOOD, "date": "last week"}}, r'\[pricing\."m"\] date: .last week. is not a date'),
        ({"m": {**GOOD, "source": " "}}, r'\[pricing\."m"\] source: must be a non-empty string'),
        ({"m": {**GOOD, "input": -1}}, r'\[pricing\."m"\] input: must be a number .* \(got -1\)'),
        ({"m": {**GOOD, "output": "0.6"}}, r'\[pricing\."m"\] output: must be a number'),
        ({"m": {**GOOD, "output": True}}, r'\[pricing\."m"\] output: must be a number'),
        ({"m": {**GOOD, "cached_input": float("nan")}}, r'\[pricing\."m"\] cached_input: must be a number'),
        ({"m": {**GOOD, "ouput": 1}}, r'\[pricing\."m"\] ouput: unknown key \(did you mean output\?\)'),
        ({"sorce": "s", "m": GOOD}, r"\[pricing\] sorce: unknown key \(did you mean source\?\)"),
    ],
)
def test_a_bad_price_is_one_line_naming_the_model_and_key(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        Pricing.from_config(table, "g.toml")
    assert "\n" not in str(info.value)


def test_goldenkit_toml_declares_pricing_and_checks_it_when_read(tmp_path: Path) -> None:
    assert TABLE_KEYS["pricing.*"] == frozenset({"input", "output", "cached_input", "source", "date"})
    path = tmp_path / "goldenkit.toml"
    path.write_text('[pricing."org/m-1.5"]\ninput = 0.15\noutput = 0.6\nsource = "list"\ndate = "2026-11-01"\n')
    cfg = read_config(path)
    assert pricing(cfg).cost("org/m-1.5", 2_000_000, 1_000_000) == pytest.approx(0.3 + 0.6)
    assert not pricing({})  # no [pricing]: no prices
    path.write_text('[pricing."m"]\ninput = 0.15\noutput = 0.6\nsource = "list"\n')
    with pytest.raises(ConfigError, match=r'goldenkit\.toml: \[pricing\."m"\] date: missing'):
        read_config(path)
    # prices say nothing about where requests go: a goldenkit.toml beside a dataset may carry them
    check_travelling({"pricing": {"m": GOOD}}, path)
