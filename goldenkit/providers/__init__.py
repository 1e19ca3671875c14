"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk)."""

from goldenkit.providers.base import (
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_names,
    register_provider,
)

# Built-in providers register themselves when imported (google-adk itself loads lazily).
from goldenkit.providers import adk as _adk  # noqa: E402,F401

__all__ = ["Provider", "Response", "TurnOutput", "get_provider", "provider_names", "register_provider"]
