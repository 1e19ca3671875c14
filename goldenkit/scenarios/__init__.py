"""Scenarios a model writes from an agent's config, added to a dataset as a new version.

This layer may call providers (the generating model, an ADK agent's module for its
config); the dataset layer below it reads, validates and hashes files and knows
nothing of running. ``goldenkit dataset generate`` is its command.

* :mod:`goldenkit.scenarios._agent_config`: the agent's config (JSON, TOML, YAML or an ADK agent).
* :mod:`goldenkit.scenarios._generate`: :func:`generate_scenarios`, the generators, the parsing.
"""

from __future__ import annotations

from goldenkit._registry import lazy_attributes

_LAZY = {
    "GENERATION_PROMPT": "goldenkit.scenarios._generate",
    "Generator": "goldenkit.scenarios._generate",
    "ModelGenerator": "goldenkit.scenarios._generate",
    "generate_scenarios": "goldenkit.scenarios._generate",
    "read_agent_config": "goldenkit.scenarios._agent_config",
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = sorted(_LAZY)
