"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk).

A built-in provider's module is imported the first time its name is asked for
(:func:`get_provider`), so a run of an in-process callable never loads the HTTP
stack or ADK's adapter; :func:`provider_names` imports them all.
"""

from __future__ import annotations

from goldenkit.providers.base import (
    BUILTINS,
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_factory,
    provider_names,
    register_provider,
)

__all__ = [
    "BUILTINS",
    "Provider",
    "Response",
    "TurnOutput",
    "get_provider",
    "provider_factory",
    "provider_names",
    "register_provider",
]
