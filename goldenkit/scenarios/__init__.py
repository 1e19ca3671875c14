"""Scenarios a model writes from an agent's config, added to a dataset as a new version.

This layer may call providers (the generating model, an ADK agent's module for its
config); the dataset layer below it reads, validates and hashes files and knows
nothing of running. ``goldenkit dataset generate`` is its command.

* :mod:`goldenkit.scenarios.agent_config`: the agent's config (JSON, TOML, YAML or an ADK agent).
* :mod:`goldenkit.scenarios.generate`: :func:`generate_scenarios`, the generators, the parsing.
"""

from __future__ import annotations

__all__: list[str] = []
