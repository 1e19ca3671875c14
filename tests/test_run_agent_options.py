"""The option lists of goldenkit.providers name [run] keys of the run options' table."""

from __future__ import annotations

from goldenkit._constraints import RUN_TABLE
from goldenkit.providers import PROVIDER_OPTIONS, SIMULATOR_OPTIONS, TRANSPORT_OPTIONS

RUN_KEYS = [name for name, option in RUN_TABLE.items() if option.key]


def test_the_simulator_options_are_the_user_keys_of_run_in_their_order() -> None:
    assert SIMULATOR_OPTIONS == tuple(k for k in RUN_KEYS if k.startswith("user_") and k != "user_simulator")


def test_the_provider_and_transport_options_are_run_keys() -> None:
    assert set(PROVIDER_OPTIONS) <= set(RUN_KEYS)
    assert set(TRANSPORT_OPTIONS) <= set(PROVIDER_OPTIONS)
