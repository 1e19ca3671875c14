"""What identifies a run: the agent version, the run key, secret redaction and validity.

A run folder may be resumed only by an invocation with the same run key
(:data:`RUN_KEY_FIELDS`); :func:`key_differences` says what differs. The working
directory's git commit is recorded in the agent version and per invocation, but
a new commit alone does not refuse a resume (a nightly run survives a docs
commit): the model id, the prompt hash, the graders, the judge, the dataset
hash and the sample still do. The sample spec holds ``include_red: true`` when
the run includes the red rows (absent means false), so a red run and a run
without them never resume into each other, and compare refuses to pair them.
A run graded with ``--criteria FILE`` has ``criteria`` (the file's name, SHA-256
and ignored criteria) in its key; null (or absent, in older runs) means the
cases' own criteria.

Redaction (:func:`redact_settings`, :func:`redact_text`, :func:`is_secret_key`) lives in
:mod:`goldenkit.scrub`, the one scrubber; the names are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from goldenkit.providers.base import Provider
from goldenkit.schema import ERROR, INVALID, TRANSPORT_SETTINGS, VALID
from goldenkit.scrub import SECRET_WORDS, is_secret_key, key_words, redact_settings, redact_text

#: Run-key fields that must agree to resume a run.
RUN_KEY_FIELDS = ("dataset", "agent_version", "judge_version", "graders", "repeats", "sample", "mode", "criteria")
#: Agent-version fields recorded but not compared on resume.
RESUME_IGNORES = frozenset({"git_commit"})


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
    when the run names the agent's artifacts (:mod:`goldenkit.artifacts`; absent otherwise, so a
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


def _comparable(field: str, value: Any) -> Any:
    if field == "dataset":
        return {x: (value or {}).get(x) for x in ("name", "version", "sha256")}
    if field == "agent_version" and isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k not in RESUME_IGNORES}
    return value


def key_differences(
    old: Mapping[str, Any], new: Mapping[str, Any], *, fields: Sequence[str] = RUN_KEY_FIELDS
) -> list[str]:
    """``"field: old != new"`` for every run-key field that differs (a git commit alone never does).

    ``fields``: what is compared (a resume adds ``shard``: a shard resumes only as the same shard).

    >>> a = {"repeats": 1, "agent_version": {"git_commit": "a1", "model_id": "m"}}
    >>> key_differences(a, {"repeats": 1, "agent_version": {"git_commit": "b2", "model_id": "m"}})
    []
    >>> key_differences(a, {"repeats": 3, "agent_version": {"git_commit": "a1", "model_id": "m"}})
    ['repeats: 1 != 3']
    """
    diffs = []
    for k in fields:
        a, b = _comparable(k, old.get(k)), _comparable(k, new.get(k))
        if canonical(a) != canonical(b):
            diffs.append(f"{k}: {json.dumps(a, default=str)} != {json.dumps(b, default=str)}")
    return diffs


def validity(
    counts: Mapping[str, int], expected: int, max_error_rate: float, stopped: str | None, first_error: str | None
) -> tuple[str, str | None, float]:
    """``(VALID | INVALID, why, error rate)`` of a run's final counts.

    The error rate is ``(ERROR outcomes + grader_errors) / total``: a model or
    judge call that failed is missing evidence whether or not it decided the row
    (``grader_errors``: outcomes that are not ERROR but have a grader that could not grade).
    """
    total = counts.get("total", 0)
    errors = counts.get(ERROR, 0)
    failed = errors + counts.get("grader_errors", 0)
    rate = failed / total if total else 0.0
    if stopped:
        return INVALID, stopped, rate
    if expected and total == 0:
        return INVALID, "no outcome was written", rate
    if total and errors == total:
        why = f"every call errored ({errors} of {total})"
        if first_error:
            why += f"; e.g. {first_error}"
        return INVALID, why, rate
    if rate > max_error_rate:
        what = f"{failed} of {total}"
        if counts.get("grader_errors"):
            what += f", {counts['grader_errors']} of them a soft grader that could not grade"
        return INVALID, f"error rate {rate:.1%} ({what}) exceeds max_error_rate {max_error_rate:.1%}", rate
    if total < expected:
        return INVALID, f"incomplete: {total} of {expected} outcomes", rate
    return VALID, None, rate


__all__ = [
    "RUN_KEY_FIELDS",
    "SECRET_WORDS",
    "TRANSPORT_SETTINGS",
    "agent_version",
    "canonical",
    "git_commit",
    "is_secret_key",
    "key_differences",
    "key_words",
    "redact_settings",
    "redact_text",
    "validity",
]
