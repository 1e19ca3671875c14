"""What run.json records: the run key (what a resume must agree on) and the manifest around it.

:func:`run_key` gathers what identifies a run (the dataset, the agent's
version, the graders with their hard flags, the judge, repeats, the sample,
the mode, the criteria file, vision; a shard's spec beside it);
:func:`run_manifest` makes run.json of it (:func:`goldenkit.results.run_record`, which every writer of
run.json builds its record with: the protocol key built from the run key, stored whole with its SHA-256),
with the redacted provider settings, the configuration, timings, and the ``label`` the run was given
(``--label``; None: derived where it is shown, :func:`goldenkit._run_label.run_label`). The dataset
and the goldenkit.toml are recorded absolute and relative to the run folder
(``dataset.path`` / ``path_from_run``, ``config.extra.config_file`` /
``config_file_from_run``, each beside its sha256), so every command finds them
from any working directory (:mod:`goldenkit.config`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

from goldenkit._artifacts import artifacts_sha256
from goldenkit._protocols import DatasetLike
from goldenkit._scrub import redact_settings
from goldenkit.config import from_run
from goldenkit.formats import EvalCriteria
from goldenkit.graders import Grader
from goldenkit.providers import Provider
from goldenkit.results import run_record
from goldenkit.runner._calls import CallLimits
from goldenkit.runner._folder import RunFolder, utc_now
from goldenkit.runner._shard import shard_record
from goldenkit.runner._versions import agent_version
from goldenkit.schema import AgentVersion, RunKey, RunRecord

__all__ = ["run_key", "run_manifest"]


def run_key(
    dataset: DatasetLike,
    provider: Provider,
    graders: list[Grader],
    *,
    judge_version: str | None,
    repeats: int,
    sample_spec: dict[str, Any],
    shard: tuple[int, int] | None,
    artifacts: Sequence[str | os.PathLike[str]] | None = None,
    criteria: EvalCriteria | None = None,
    vision: bool = True,
) -> RunKey:
    if judge_version is None:
        jv = sorted({str(v) for g in graders if (v := getattr(g, "judge_version", None))})
        judge_version = ",".join(jv) or None
    # a shard's spec is recorded beside the run key (a resume compares it), never inside it:
    # the merged run of the shards has exactly the run key of the unsharded run
    key: RunKey = {
        "dataset": {
            "name": dataset.name,
            "version": dataset.version,
            "sha256": dataset.sha256,
            "path": os.path.abspath(path) if (path := getattr(dataset, "path", None)) is not None else None,
        },
        "agent_version": cast(
            AgentVersion, agent_version(provider, artifacts_sha256=artifacts_sha256(artifacts or ()))
        ),
        "judge_version": judge_version,
        "graders": {g.name: str(g.version) for g in graders},
        "grader_hard": {g.name: bool(g.hard) for g in graders},
        "repeats": int(repeats),
        "sample": sample_spec,
        "mode": provider.mode,
        "criteria": criteria.record() if criteria is not None else None,
        "vision": bool(vision),
    }
    if (spec := shard_record(shard)) is not None:
        key["shard"] = spec
    return key


def _travelling_dataset(dataset: dict[str, Any] | None, folder: RunFolder) -> dict[str, Any] | None:
    """run.json's ``dataset``: its ``path`` absolute and ``path_from_run`` (relative to the run folder), so that
    it is found from any working directory and in a moved checkout (:func:`goldenkit.config.dataset_path_for_run`)."""
    if not isinstance(dataset, Mapping) or not dataset.get("path"):
        return dataset
    path = os.path.abspath(str(dataset["path"]))
    return {**dataset, "path": path, "path_from_run": from_run(path, folder.path)}


def _travelling_config(config: Mapping[str, Any], folder: RunFolder) -> dict[str, Any]:
    """The configuration recorded, its goldenkit.toml (``config_file``) absolute and relative to the run
    folder (``config_file_from_run``), beside its ``config_sha256`` (:func:`goldenkit.config.config_for_run`)."""
    out = dict(config)
    if out.get("config_file"):
        out["config_file"] = os.path.abspath(str(out["config_file"]))
        out["config_file_from_run"] = from_run(out["config_file"], folder.path)
    return out


def run_manifest(
    key: RunKey,
    provider: Provider,
    folder: RunFolder,
    opts: CallLimits,
    *,
    todo: int,
    retry_errors: bool,
    config: Mapping[str, Any] | None,
    commit: str | None,
    label: str | None = None,
) -> RunRecord:
    """run.json as an invocation of run ``key`` starts (a resume keeps the earlier invocations' label,
    start and timings)."""
    old = folder.old_manifest
    invocation: dict[str, Any] = {
        "started_at": utc_now(),
        "pending": todo,
        "retry_errors": bool(retry_errors),
        "git_commit": commit,
    }
    if folder.took_over_from is not None:
        invocation["lock_taken_over_from_pid"] = folder.took_over_from
    timings = old.get("timings") if old is not None else None
    earlier = (timings.get("invocations") or []) if timings else []
    return run_record(
        {**key, "dataset": _travelling_dataset(key["dataset"], folder)},
        run_id=folder.run_id,
        label=label if label is not None or old is None else old.get("label"),  # given, else kept on a resume
        provider={"name": provider.name, "settings": redact_settings(provider.settings())},
        config={
            "max_in_flight": opts.max_in_flight,
            "rpm": opts.rpm,
            "timeout": opts.timeout,
            "max_retries": opts.max_retries,
            "max_retry_after": opts.max_retry_after,
            **({"extra": redact_settings(_travelling_config(config, folder))} if config else {}),
        },
        started_at=(old.get("started_at") if old is not None else None) or utc_now(),
        max_error_rate=opts.max_error_rate,
        timings={"invocations": [*earlier, invocation]},
    )
