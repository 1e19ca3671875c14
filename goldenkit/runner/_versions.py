"""The agent version a run records: the git commit, the model id, the prompt's hash.

:func:`agent_version` is what identifies the system under test in the run key
(:mod:`goldenkit.runner._runkey`); :func:`git_commit` asks git for the commit of
the working directory; :func:`canonical` is the JSON that version hashes are
taken of, and that run keys are compared in.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from typing import Any

from goldenkit._registry import publish
from goldenkit._scrub import redact_settings
from goldenkit.providers import Provider
from goldenkit.schema import TRANSPORT_SETTINGS


def canonical(obj: Any) -> bytes:
    """``obj`` as canonical JSON bytes (sorted keys, no spaces): what version hashes are taken of."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The commit checked out in ``cwd`` (the working directory), or None outside a git repository."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def agent_version(
    provider: Provider, cwd: str | os.PathLike[str] | None = None, *, artifacts_sha256: str | None = None
) -> dict[str, Any]:
    """``{git_commit, model_id, prompt_sha256}`` of the system under test, plus ``artifacts_sha256``
    when the run names the agent's artifacts (:mod:`goldenkit._artifacts`; absent otherwise, so a
    run without artifacts keeps the agent version it always had).

    A replaying provider (fixtures) returns the version recorded with its
    answers. Otherwise: the git commit of the working directory (None outside
    git), the provider's model id, and the SHA-256 of the system prompt plus the
    provider settings that shape answers (model, temperature, seed, max_tokens,
    ...; not where it is served from, :data:`goldenkit.schema.TRANSPORT_SETTINGS`).
    """
    extra = {"artifacts_sha256": artifacts_sha256} if artifacts_sha256 is not None else {}
    recorded = provider.recorded_agent_version()
    if recorded is not None:
        return {**{k: recorded.get(k) for k in ("git_commit", "model_id", "prompt_sha256")}, **extra}
    settings = redact_settings(provider.settings())
    behaviour = {k: v for k, v in settings.items() if k not in TRANSPORT_SETTINGS}
    digest = hashlib.sha256(canonical({"system": settings.get("system"), "settings": behaviour})).hexdigest()
    return {"git_commit": git_commit(cwd), "model_id": provider.model_id, "prompt_sha256": digest, **extra}


__all__ = ["agent_version", "canonical", "git_commit"]

publish(globals())
