"""What a run calls, built from the resolved options of ``goldenkit run``.

The provider (the system under test, :func:`build_provider`), the simulated user
of scenario rows (:func:`build_simulator`), the graders (:func:`grader_list`),
the run's transport applied to the judges (:func:`apply_transport_to_judges`),
the first two and the last built by the library from the run's options (:mod:`goldenkit.providers._spec`,
which a Ray worker of ``--executor ray`` calls too, importing no command module).
The options themselves (``[run]`` of goldenkit.toml, the command line, the
defaults) are resolved by :func:`goldenkit.commands._run.resolve_options`.
"""

from __future__ import annotations

import argparse
from typing import Any

from goldenkit.providers import (
    PROVIDER_OPTIONS,
    SIMULATOR_OPTIONS,
    TRANSPORT_OPTIONS,
    apply_transport_to_judges,
    build_provider,
    build_simulator,
)


def grader_list(args: argparse.Namespace, cfg: dict[str, Any], model: str | None = None) -> list[Any]:
    """The graders of ``[graders] use`` (or ``--graders a,b``), built with their options by the library's
    :func:`goldenkit.graders.build_graders`, as :func:`goldenkit.runner.run_eval` builds them."""
    return graders_named(getattr(args, "graders", None), cfg, model)


def grader_use(names: str | None) -> list[str] | None:
    """The grader names of ``--graders a,b``; None (``[graders] use``) when not given."""
    return [n.strip() for n in names.split(",") if n.strip()] if names else None


def graders_named(names: str | None, cfg: dict[str, Any], model: str | None = None) -> list[Any]:
    """:func:`goldenkit.graders.build_graders` with ``--graders a,b`` (``names``; None: ``[graders] use``)."""
    from goldenkit.graders import build_graders

    return build_graders(cfg, use=grader_use(names), generator_model=model)


__all__ = [
    "PROVIDER_OPTIONS",
    "SIMULATOR_OPTIONS",
    "TRANSPORT_OPTIONS",
    "apply_transport_to_judges",
    "build_provider",
    "build_simulator",
    "grader_list",
    "grader_use",
    "graders_named",
]
