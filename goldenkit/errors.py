"""The exception tree of goldenkit and the exit code each error maps to.

Only ``goldenkit.cli`` turns an exception into a process exit; library code
raises, and callers decide.

::

    GoldenkitError                      exit 1 unless a subclass says otherwise
    ├── UsageError                      exit 1  bad command-line arguments
    ├── InputError                      exit 1  bad input file, argument or config
    │   ├── DatasetError                exit 1  a dataset file is malformed (file:line)
    │   ├── ConfigError                 exit 1  goldenkit.toml or a policy is malformed
    │   └── ResultsError                exit 1  a run folder or outcome file is malformed
    ├── GateFailed                      exit 2  the quality gate failed (also an empty run)
    ├── InfrastructureError             exit 3  the run is not evidence (INVALID run)
    │   └── ProviderError               exit 3  one model call failed (carries transient/permanent)
    └── ComparisonInvalid               exit 4  two runs cannot be compared

Exit codes: 0 ok · 1 usage or bad input · 2 quality gate failed · 3 infrastructure
failure · 4 comparison invalid.
"""

from __future__ import annotations

from collections.abc import Sequence

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_GATE_FAILED = 2
EXIT_INFRASTRUCTURE = 3
EXIT_COMPARISON_INVALID = 4


class GoldenkitError(Exception):
    """Base of every error goldenkit raises on purpose; ``str(err)`` is one line."""

    exit_code: int = EXIT_BAD_INPUT


class UsageError(GoldenkitError):
    """The command line was wrong (unknown option, missing argument)."""

    exit_code = EXIT_BAD_INPUT


class InputError(GoldenkitError):
    """An input file, argument or setting is invalid."""

    exit_code = EXIT_BAD_INPUT


class DatasetError(InputError):
    """A dataset file is malformed. The message names ``file:line`` where known."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")


class ConfigError(InputError):
    """goldenkit.toml, a policy or a provider setting is malformed."""


class ResultsError(InputError):
    """A run folder, baseline or outcome file is missing or malformed."""


class GateFailed(GoldenkitError):
    """The quality gate failed; ``decision`` holds the GateDecision when there is one."""

    exit_code = EXIT_GATE_FAILED

    def __init__(self, message: str, decision: object | None = None) -> None:
        self.decision = decision
        super().__init__(message)


class InfrastructureError(GoldenkitError):
    """The run could not produce evidence (INVALID run, every call errored)."""

    exit_code = EXIT_INFRASTRUCTURE


class ProviderError(InfrastructureError):
    """One model call failed.

    ``transient`` errors (429, 408, 5xx, timeouts, dropped connections) are retried
    by the runner; permanent ones (401, 403, 404, malformed reply, a 429 saying the
    quota is exhausted or asking to wait longer than the run's ``max_retry_after``)
    are not.
    ``retry_after`` is the server's Retry-After in seconds, when it sent one.
    The message never contains a secret: URLs are given without userinfo or keys.
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        status: int | None = None,
        url: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.transient = transient
        self.status = status
        self.url = url
        self.retry_after = retry_after
        super().__init__(message)

    @property
    def kind(self) -> str:
        return "transient" if self.transient else "permanent"


class ComparisonInvalid(GoldenkitError):
    """Two runs differ in a key that makes a paired comparison meaningless."""

    exit_code = EXIT_COMPARISON_INVALID

    def __init__(self, message: str, differences: Sequence[str] = ()) -> None:
        self.differences = list(differences)
        super().__init__(message)


__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_COMPARISON_INVALID",
    "EXIT_GATE_FAILED",
    "EXIT_INFRASTRUCTURE",
    "EXIT_OK",
    "ComparisonInvalid",
    "ConfigError",
    "DatasetError",
    "GateFailed",
    "GoldenkitError",
    "InfrastructureError",
    "InputError",
    "ProviderError",
    "ResultsError",
    "UsageError",
]
