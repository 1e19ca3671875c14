"""What identifies a run: the run key, and what differs between two (the resume check).

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

The agent version (:func:`agent_version`, :func:`git_commit`, :func:`canonical`) lives in
:mod:`goldenkit.runner._versions`, a run's validity (:func:`validity`) in
:mod:`goldenkit.runner._validity`, redaction (:func:`redact_settings`, :func:`redact_text`,
:func:`is_secret_key`) in :mod:`goldenkit._scrub`, the one scrubber; their names are
re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from goldenkit._scrub import SECRET_WORDS, is_secret_key, key_words, redact_settings, redact_text
from goldenkit.runner._validity import validity
from goldenkit.runner._versions import agent_version, canonical, git_commit
from goldenkit.schema import TRANSPORT_SETTINGS

#: Run-key fields that must agree to resume a run.
RUN_KEY_FIELDS = ("dataset", "agent_version", "judge_version", "graders", "repeats", "sample", "mode", "criteria")
#: Agent-version fields recorded but not compared on resume.
RESUME_IGNORES = frozenset({"git_commit"})


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
