"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk).

A built-in provider's module is imported the first time its name is asked for
(:func:`get_provider`), so a run of an in-process callable never loads the HTTP
stack or ADK's adapter; :func:`provider_names` imports them all.
"""

from __future__ import annotations

from goldenkit._registry import lazy_attributes
from goldenkit.providers._base import (
    BUILTINS,
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_factory,
    provider_names,
    register_provider,
)

#: Imported on first use (the simulator's module loads the HTTP clients of its providers).
_LAZY = {
    "AdkProvider": "goldenkit.providers._adk",
    "CallableProvider": "goldenkit.providers._callable",
    "CallableSimulator": "goldenkit.providers._simulator",
    "ChatSimulator": "goldenkit.providers._simulator",
    "FixturesProvider": "goldenkit.providers._fixtures",
    "OllamaProvider": "goldenkit.providers._ollama",
    "OpenAIProvider": "goldenkit.providers._openai",
    "SIMULATOR_SYSTEM_PROMPT": "goldenkit.providers._simulator",
    "SIMULATOR_USER_PROMPT": "goldenkit.providers._simulator",
    "SimulatorError": "goldenkit.providers._simulator",
    "UserSimulator": "goldenkit.providers._simulator",
}
__getattr__ = lazy_attributes(__name__, _LAZY)

__all__ = [
    *_LAZY,
    "BUILTINS",
    "Provider",
    "Response",
    "TurnOutput",
    "get_provider",
    "provider_factory",
    "provider_names",
    "register_provider",
]
