"""Providers: the systems under test, by name (openai, ollama, fixtures, callable, adk)."""

# Built-in providers register themselves when imported (google-adk itself loads lazily).
from goldenkit.providers import adk as _adk  # noqa: E402,F401
from goldenkit.providers import callable as _callable  # noqa: E402,F401
from goldenkit.providers import fixtures as _fixtures  # noqa: E402,F401
from goldenkit.providers import ollama as _ollama  # noqa: E402,F401
from goldenkit.providers import openai as _openai  # noqa: E402,F401
from goldenkit.providers.base import (
    Provider,
    Response,
    TurnOutput,
    get_provider,
    provider_names,
    register_provider,
)

__all__ = ["Provider", "Response", "TurnOutput", "get_provider", "provider_names", "register_provider"]
