"""The graders a command runs, from ``--graders a,b`` or ``[graders] use`` (:func:`grader_list`).

The provider, the simulated user and the run's transport applied to the judges are built by the
library from the run's options (``goldenkit.providers``: ``build_provider``, ``build_simulator``,
``apply_transport_to_judges``), which a Ray worker of ``--executor ray`` calls too, importing no
command module. The options themselves (``[run]`` of goldenkit.toml, the command line, the
defaults) are resolved by :func:`goldenkit.commands._run.resolve_options`.
"""

from __future__ import annotations

import argparse
from typing import Any


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
    "grader_list",
    "grader_use",
    "graders_named",
]
