"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk)."""

from goldenkit.providers.base import (
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_names,
    register_provider,
)

__all__ = ["Provider", "Response", "TurnOutput", "get_provider", "provider_names", "register_provider"]
