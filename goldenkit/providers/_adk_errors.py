"""How the adk provider classifies what went wrong while an agent ran: transient or permanent."""

from __future__ import annotations

import asyncio
from typing import Any

from goldenkit.errors import ProviderError

__all__ = ["_error_from_exception", "_status_transient"]

# HTTP status codes and their gRPC / google.genai status names that are worth a retry.
_TRANSIENT_CODES = {"408", "429", "500", "502", "503", "504"}
_TRANSIENT_NAMES = {"RESOURCE_EXHAUSTED", "UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "ABORTED"}


def _status_transient(code: Any) -> bool:
    s = str(code).strip().upper()
    return s in _TRANSIENT_CODES or s in _TRANSIENT_NAMES or (s.isdigit() and len(s) == 3 and s.startswith("5"))


def _error_from_exception(exc: BaseException, where: str) -> ProviderError:
    """Classify an exception raised while the agent ran."""
    if isinstance(exc, ProviderError):
        return exc
    code = getattr(exc, "code", None)
    status = code if isinstance(code, int) else None
    name = type(exc).__name__
    msg = str(exc).splitlines()[0] if str(exc) else name
    if len(msg) > 300:
        msg = msg[:297] + "..."
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | ConnectionError):
        transient = True
    elif code is not None:
        transient = _status_transient(code)
    else:
        transient = name in {
            "ReadError",
            "ConnectError",
            "RemoteProtocolError",
            "ReadTimeout",
            "ConnectTimeout",
            "PoolTimeout",
            "ServerDisconnectedError",
            "ClientConnectionError",
        }
    return ProviderError(f"adk {where} error: {name}: {msg}", transient=transient, status=status)
