"""What a provider is: a system under test that turns a Case into a Response.

A provider is looked up by name in a registry users can extend
(:func:`register_provider`). It raises :class:`goldenkit.errors.ProviderError`
for a failed call (``transient`` or permanent); the runner retries transient
ones and records what still fails as ERROR. Providers never grade.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from goldenkit.cases import Case, ToolCall
from goldenkit.errors import ConfigError


@dataclass
class TurnOutput:
    """What the system under test produced for one user turn."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_responses: list[dict[str, Any]] = field(default_factory=list)
    intermediate: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "tool_responses": self.tool_responses,
            "intermediate": [list(x) for x in self.intermediate],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TurnOutput:
        return cls(
            text=d.get("text") or "",
            tool_calls=[ToolCall(c["name"], dict(c.get("args") or {})) for c in d.get("tool_calls") or []],
            tool_responses=list(d.get("tool_responses") or []),
            intermediate=[(str(a), str(b)) for a, b in d.get("intermediate") or []],
        )


@dataclass
class Response:
    """A provider's answer to a whole case (every turn).

    ``turns`` holds one TurnOutput per user turn sent. ``text`` is the final
    answer (the last turn's text). Token counts are None when the provider does
    not report them; ``cost`` is None unless the provider returns a price.
    ``ttft_ms`` is the time to the first token of a streamed call (None unstreamed).
    """

    turns: list[TurnOutput]
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    model: str | None = None
    raw: Any = None
    ttft_ms: float | None = None
    retrieved: list[str] | None = None  # ids the agent retrieved, in order (None: not reported)

    @property
    def text(self) -> str:
        return self.turns[-1].text if self.turns else ""

    @property
    def tool_calls(self) -> list[list[ToolCall]]:
        """Actual tool calls per turn."""
        return [list(t.tool_calls) for t in self.turns]

    @classmethod
    def from_text(cls, text: str, **kwargs: Any) -> Response:
        return cls(turns=[TurnOutput(text=text)], **kwargs)

    def trajectory(self) -> list[dict[str, Any]]:
        """The whole trajectory as JSON-ready dicts (what an outcome keeps)."""
        return [t.to_dict() for t in self.turns]


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

    @property
    def model_id(self) -> str | None:
        return self.settings().get("model")

    def configure(self, *, timeout: float | None = None, max_in_flight: int | None = None) -> None:
        """Called by the runner before a run: per-request timeout and the in-flight limit
        (HTTP providers size their connection pool with it). Default: nothing to do."""
        return None

    def recorded_agent_version(self) -> dict[str, Any] | None:
        """The agent version recorded with replayed answers (fixtures), else None so the
        runner derives it (git commit, model id, sha256 of system prompt + settings)."""
        return None

    async def aclose(self) -> None:
        return None


ProviderFactory = Callable[..., Provider]
_REGISTRY: dict[str, ProviderFactory] = {}


def register_provider(name: str, factory: ProviderFactory, *, replace: bool = False) -> None:
    """Make ``factory(**options) -> Provider`` available under ``name``."""
    if name in _REGISTRY and not replace:
        raise ConfigError(f"provider {name!r} is already registered")
    _REGISTRY[name] = factory


def get_provider(name: str, **options: Any) -> Provider:
    """Build the provider registered under ``name`` with ``options``."""
    _load_builtins()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise ConfigError(f"unknown provider {name!r} (known: {known})") from None
    return factory(**options)


def provider_names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def _load_builtins() -> None:
    # Built-in providers register themselves on import.
    import goldenkit.providers  # noqa: F401
