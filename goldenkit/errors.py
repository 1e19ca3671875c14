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
    ├── GateFailed                      exit 2  the quality gate failed: a failure shown
    ├── InfrastructureError             exit 3  not evidence (an INVALID or empty run; a gate not shown either way)
    │   └── ProviderError               exit 3  one model call failed; ``kind``: transient, infrastructure,
    │                                           refused, agent, grader or simulator (whose fault it is)
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


#: The error taxonomy's kinds (an outcome's ``error_kind``), spelled as :mod:`goldenkit.schema` spells
#: them (``schema.ERROR_KINDS``; this module is below every other and imports none of them).
ERROR_KINDS = ("transient", "infrastructure", "refused", "agent", "grader", "simulator")


class ProviderError(InfrastructureError):
    """One model call failed; ``kind`` says whose fault it is (the outcome's ``error_kind``).

    Kinds (:data:`ERROR_KINDS`, defined in :mod:`goldenkit.schema`):

    * ``transient``: might succeed if tried again (429 with a short wait, 408, 5xx,
      a dropped connection, a deadline hit); the runner retries these;
    * ``infrastructure``: an answer nobody gave (401/403, quota exhausted, a
      Retry-After over the cap, TLS and proxy failures, an HTML page or another
      content type where JSON was due, a gateway's 404, a stream cut before its end
      marker, a deadline still hit on the last attempt; a network or OS error raised
      inside an agent); not retried;
    * ``refused``: the candidate's own request refused by the model (context length,
      content filter, an invalid tool schema); not retried;
    * ``agent``: an in-process agent's or callable's own code raised; not retried;
    * ``simulator`` (:class:`goldenkit.providers._simulator.SimulatorError`) and ``grader``.

    ``transient`` (derived) says whether the runner retries the call: ``kind ==
    "transient"``, or an error of another kind that wraps a transient failure (a
    simulator's 503). Built without ``kind``, ``transient=True`` means ``transient``
    and anything else ``infrastructure`` (never the candidate's fault by default).
    ``final_kind`` is the kind recorded when the runner gives up on a retried error
    (a deadline hit on the last attempt is ``infrastructure``); default ``kind``.
    ``retry_after`` is the server's Retry-After in seconds, when it sent one.
    ``attempts`` is set by the runner: how many times the failing call was tried.
    ``partial`` is what the call produced before it failed (a conversation's
    earlier turns, a :class:`goldenkit.records.Response`), kept in the outcome's trajectory.
    The message never contains a secret: URLs are given without userinfo or keys.
    """

    default_kind: str | None = None  # a subclass's fixed kind (SimulatorError: "simulator")

    def __init__(
        self,
        message: str,
        *,
        kind: str | None = None,
        transient: bool | None = None,
        status: int | None = None,
        url: str | None = None,
        retry_after: float | None = None,
        final_kind: str | None = None,
    ) -> None:
        if kind is None:
            kind = self.default_kind or ("transient" if transient else "infrastructure")
        if kind not in ERROR_KINDS or (final_kind is not None and final_kind not in ERROR_KINDS):
            raise ValueError(f"unknown error kind {kind!r} (known: {', '.join(ERROR_KINDS)})")
        self.kind = kind
        self._retryable = kind == "transient" if transient is None else bool(transient)
        self.final_kind = final_kind or kind
        self.status = status
        self.url = url
        self.retry_after = retry_after
        self.attempts: int | None = None
        self.partial: object | None = None
        super().__init__(message)

    @property
    def transient(self) -> bool:
        """Whether a retry may help (the runner retries only these)."""
        return self._retryable

    def with_message(self, message: str) -> ProviderError:
        """The same error (class, kind, status, ...) with another message."""
        out = type(self).__new__(type(self))
        out.__dict__.update(self.__dict__)
        Exception.__init__(out, message)
        return out

    def given_up(self, attempts: int) -> ProviderError:
        """The error as the runner records it when it stops after ``attempts`` tries: of ``final_kind``."""
        out = self.with_message(str(self))
        out.kind = self.final_kind
        out.attempts = attempts
        return out


class ComparisonInvalid(GoldenkitError):
    """Two runs differ in a key that makes a paired comparison meaningless."""

    exit_code = EXIT_COMPARISON_INVALID

    def __init__(self, message: str, differences: Sequence[str] = ()) -> None:
        self.differences = list(differences)
        super().__init__(message)


__all__ = [
    "ERROR_KINDS",
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

# A root name: its public home is the root (goldenkit._registry.publish, whose layer is above this one).
GoldenkitError.__module__ = "goldenkit"
