"""The option lists of goldenkit.commands._agent name [run] keys of the run options' table."""

from __future__ import annotations

from goldenkit._constraints import RUN_TABLE
from goldenkit.commands._agent import PROVIDER_OPTIONS, SIMULATOR_OPTIONS, TRANSPORT_OPTIONS

RUN_KEYS = [name for name, option in RUN_TABLE.items() if option.key]


def test_the_simulator_options_are_the_user_keys_of_run_in_their_order() -> None:
    assert SIMULATOR_OPTIONS == tuple(k for k in RUN_KEYS if k.startswith("user_") and k != "user_simulator")


def test_the_provider_and_transport_options_are_run_keys() -> None:
    assert set(PROVIDER_OPTIONS) <= set(RUN_KEYS)
    assert set(TRANSPORT_OPTIONS) <= set(PROVIDER_OPTIONS)


def test_the_old_import_path_still_works() -> None:
    from goldenkit.commands import _agent, _run as run

    for name in ("PROVIDER_OPTIONS", "TRANSPORT_OPTIONS", "build_provider", "build_simulator"):
        assert getattr(run, name) is getattr(_agent, name)
    assert run.apply_transport_to_judges is _agent.apply_transport_to_judges
    assert run.grader_list is _agent.grader_list
