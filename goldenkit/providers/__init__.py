"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk).

A built-in provider's module is imported the first time its name is asked for
(:func:`get_provider`), so a run of an in-process callable never loads the HTTP
stack or ADK's adapter; :func:`provider_names` imports them all.
"""

from __future__ import annotations

import importlib

from goldenkit.providers.base import (
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_factory,
    provider_names,
    register_provider,
)

BUILTINS = ("adk", "callable", "fixtures", "ollama", "openai")


def load_builtins(name: str | None = None) -> None:
    """Import the built-in provider ``name`` (every one when None); each registers itself on import."""
    for builtin in BUILTINS if name is None else [name] if name in BUILTINS else []:
        importlib.import_module(f"goldenkit.providers.{builtin}")


__all__ = [
    "BUILTINS",
    "Provider",
    "Response",
    "TurnOutput",
    "get_provider",
    "load_builtins",
    "provider_factory",
    "provider_names",
    "register_provider",
]
