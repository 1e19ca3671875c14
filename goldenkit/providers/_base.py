"""What a provider is: a system under test that turns a Case into a Response.

A provider is looked up by name in a registry users can extend
(:func:`register_provider`). It raises :class:`goldenkit.errors.ProviderError`
for a failed call (``transient`` or permanent); the runner retries transient
ones and records what still fails as ERROR. Providers never grade.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from goldenkit._registry import Registry, publish
from goldenkit.records import Case, ImagePart, Response, TurnOutput

# Response and TurnOutput live in goldenkit.records; they stay importable from here.
__all__ = [
    "BUILTINS",
    "Provider",
    "ProviderFactory",
    "Response",
    "TurnOutput",
    "get_provider",
    "provider_names",
    "register_provider",
]


class Provider(ABC):
    """Base class of providers.

    Subclasses set ``name`` and implement :meth:`complete`. ``settings`` returns
    the provider configuration that identifies the agent version (model id,
    temperature, ...) with every secret removed; it is written to run.json.
    ``mode`` is ``"live"`` or ``"fixtures"``. ``bounds_calls`` is True when every
    request :meth:`complete` makes is bounded by the timeout given to
    :meth:`configure` (the HTTP providers: connect, read and pool timeouts), so the
    runner need not guard the call with a deadline of its own.
    """

    name: ClassVar[str] = "provider"
    mode: ClassVar[str] = "live"
    bounds_calls: ClassVar[bool] = False

    @abstractmethod
    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        """Run the whole case (every turn) once; ``repeat`` is the 0-based repeat index."""

    def settings(self) -> dict[str, Any]:
        return {}

    def image_refusal(self, image: ImagePart) -> str | None:
        """Why this provider cannot send ``image`` to the system under test (None: it can).

        A run refuses, before the first call, every row carrying an image its provider
        cannot send (:func:`goldenkit.providers._images.check_images`): an image is never
        dropped. The default refuses, so a provider that does not say it sends images
        never silently ignores one; the chat, callable, fixtures and adk providers override it.
        """
        return f"provider {self.name} does not send images"

    @property
    def model_id(self) -> str | None:
        return self.settings().get("model")

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        """Called by the runner before a run: per-request timeout and the in-flight limit
        (HTTP providers size their connection pool with it). Default: nothing to do."""
        return None

    def secret_values(self) -> tuple[str, ...]:
        """The secret values this provider holds (an API key, a password), which a run masks in
        everything it writes (:mod:`goldenkit._scrub`); never written anywhere. Default: none."""
        return ()

    def recorded_agent_version(self) -> dict[str, Any] | None:
        """The agent version recorded with replayed answers (fixtures), else None so the
        runner derives it (git commit, model id, sha256 of system prompt + settings)."""
        return None

    async def aclose(self) -> None:
        return None


ProviderFactory = Callable[..., Provider]
BUILTINS = {
    "adk": "goldenkit.providers._adk:adk_provider",
    "callable": "goldenkit.providers._callable:CallableProvider",
    "fixtures": "goldenkit.providers._fixtures:FixturesProvider",
    "ollama": "goldenkit.providers._ollama:OllamaProvider",
    "openai": "goldenkit.providers._openai:OpenAIProvider",
}
_REGISTRY: Registry[ProviderFactory] = Registry("provider", BUILTINS)


def register_provider(name: str, factory: ProviderFactory, *, replace: bool = False) -> None:
    """Make ``factory(**options) -> Provider`` available under ``name`` (a built-in's name needs ``replace``)."""
    _REGISTRY.register(name, factory, replace=replace)


def provider_factory(name: str) -> ProviderFactory:
    """The factory registered under ``name`` (a built-in is imported on first use); else a ConfigError naming them."""
    return _REGISTRY.get(name)


def get_provider(name: str, **options: Any) -> Provider:
    """Build the provider registered under ``name`` with ``options``."""
    return provider_factory(name)(**options)


def provider_names() -> list[str]:
    """Every provider's name (this imports every built-in)."""
    return _REGISTRY.names()


publish(globals())
