"""goldenkit: evaluate LLM models and agents on versioned golden datasets."""

from goldenkit.cases import Case, Message, ToolCall, ToolResponse, Turn
from goldenkit.errors import (
    ComparisonInvalid,
    ConfigError,
    DatasetError,
    GateFailed,
    GoldenkitError,
    InfrastructureError,
    InputError,
    ProviderError,
    ResultsError,
    UsageError,
)
from goldenkit.graders.base import GradeResult, Grader, get_grader, register_grader
from goldenkit.providers.base import Provider, Response, TurnOutput, get_provider, register_provider

__version__ = "0.1.0"

__all__ = [
    "Case",
    "ComparisonInvalid",
    "ConfigError",
    "DatasetError",
    "GateFailed",
    "GoldenkitError",
    "GradeResult",
    "Grader",
    "InfrastructureError",
    "InputError",
    "Message",
    "Provider",
    "ProviderError",
    "Response",
    "ResultsError",
    "ToolCall",
    "ToolResponse",
    "Turn",
    "TurnOutput",
    "UsageError",
    "get_grader",
    "get_provider",
    "register_grader",
    "register_provider",
]
