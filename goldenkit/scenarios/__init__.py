"""Scenarios a model writes from an agent's config, added to a dataset as a new version.

This layer may call providers (the generating model, an ADK agent's module for its
config); the dataset layer below it reads, validates and hashes files and knows
nothing of running. ``goldenkit dataset generate`` is its command.

* :mod:`goldenkit.scenarios._agent_config`: the agent's config (JSON, TOML, YAML or an ADK agent).
* :mod:`goldenkit.scenarios._generate`: :func:`generate_scenarios`, the generators, the parsing.
"""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
