"""A provider built from a recorded spec: the options of a run (``[run]`` of goldenkit.toml, the command line).

:func:`build_provider` builds the system under test from the run's options (``provider``, ``model``,
``base_url``, ... and the transport options), :func:`build_simulator` the simulated user of scenario rows,
and :func:`apply_transport_to_judges` hands the run's ``ca_bundle`` / ``no_proxy`` to the judges' HTTP
providers. The library builds them: a Ray worker rebuilds its provider here from the options it was shipped
(:class:`goldenkit.runner._ray_executor.SpecSetup`), importing no module of the command line, and
``goldenkit run`` calls the same functions.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from goldenkit._constraints import handed_to
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, UsageError

#: Transport options: handed to providers that take them, silently left out for those that make no HTTP calls
#: (like the timeout), so one [run] table serves fixtures and live runs (the run options' table says which).
TRANSPORT_OPTIONS = handed_to("transport")
#: Options handed to the provider factory (those it accepts by name), the transport options last.
PROVIDER_OPTIONS = (*handed_to("provider"), *TRANSPORT_OPTIONS)
#: Options of the simulated user besides --user-simulator (the [run] user_* keys, in their order there).
SIMULATOR_OPTIONS = handed_to("simulator")


def build_simulator(opts: dict[str, Any]) -> Any:
    """The ``--user-simulator`` (None when not given); ``--user-*`` options without it are a usage error."""
    from goldenkit.providers._simulator import get_simulator

    name = opts.get("user_simulator")
    if name is None:
        stray = [k for k in SIMULATOR_OPTIONS if opts.get(k) is not None]
        if stray:
            raise UsageError(f"goldenkit run: --{stray[0].replace('_', '-')} needs --user-simulator")
        return None
    return get_simulator(
        name,
        callable_spec=opts.get("user_callable"),
        model=opts.get("user_model"),
        base_url=opts.get("user_base_url"),
        api_key_env=opts.get("user_api_key_env"),
        temperature=opts.get("user_temperature"),
        seed=opts.get("user_seed"),
    )


def build_provider(opts: dict[str, Any]) -> Any:
    from goldenkit.providers._base import get_provider, provider_factory, provider_names

    name = opts.get("provider")
    if not name:
        raise UsageError(f"goldenkit run: --provider is required (one of: {', '.join(provider_names())})")
    given = {k: opts[k] for k in PROVIDER_OPTIONS if opts.get(k) is not None}
    try:
        factory = provider_factory(name)
    except ConfigError:
        factory = None  # get_provider below says which names there are
    if factory is not None:
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            dropped = sorted(k for k in given if k not in params and k not in TRANSPORT_OPTIONS)
            if dropped:
                flags = ", ".join("--" + k.replace("_", "-") for k in dropped)
                raise UsageError(f"goldenkit run: {flags} does not apply to provider {name}")
            given = {k: v for k, v in given.items() if k in params}
    return get_provider(name, **given)


def apply_transport_to_judges(graders: Sequence[Any], opts: dict[str, Any]) -> None:
    """The run's ``--ca-bundle`` / ``--no-proxy`` also apply to a judge's HTTP provider."""
    if opts.get("ca_bundle") is None and not opts.get("no_proxy"):
        return
    for grader in graders:
        set_transport = getattr(getattr(grader, "provider", None), "set_transport", None)
        if callable(set_transport):
            set_transport(ca_bundle=opts.get("ca_bundle"), no_proxy=bool(opts.get("no_proxy")))


__all__ = [
    "PROVIDER_OPTIONS",
    "SIMULATOR_OPTIONS",
    "TRANSPORT_OPTIONS",
    "apply_transport_to_judges",
    "build_provider",
    "build_simulator",
]

publish(globals())
