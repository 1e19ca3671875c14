"""The run folder of one invocation: its id, its one writer, what an earlier invocation left.

:func:`open_run_folder` validates the run id, takes the folder's lock
(:class:`RunLock`), and on a resume checks the run key (and the shard spec) and
repairs a torn last outcome line; :func:`scan_outcomes` then reads the outcomes
already written, a line at a time (the last record per row x repeat wins). A folder has one writer: a
second process, or a second run in the same process, that opens a run id while
the first is alive gets a :class:`~goldenkit.errors.ResultsError` naming the
holder's PID (exit 1); a lock left by a process that died (SIGKILL, a crash,
a lost machine) is taken over, and the takeover is logged and recorded.

The lock is ``.lock`` in the run folder: ``flock`` on it, with the holder's PID
written inside. The kernel drops a dead process's ``flock``, so a stale lock
is told from a live one without guessing from PIDs. A released lock is left
as an empty file.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldenkit._checks import check_output
from goldenkit._constraints import RUN_OPTIONS
from goldenkit._protocol_key import protocol_differences, protocol_key
from goldenkit._registry import publish
from goldenkit._text import one_line
from goldenkit.errors import ConfigError, ResultsError
from goldenkit.results import read_manifest, repair_jsonl, scan_jsonl
from goldenkit.runner._runkey import RESUME_IGNORES, key_differences
from goldenkit.schema import OUTCOMES_JSONL, RUN_FILE, TRANSPORT_SETTINGS, RunRecord

try:
    import fcntl
except ImportError:  # Windows: no flock; the folder is not locked there
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("goldenkit.runner")
LOCK_FILE = ".lock"
_SECOND: tuple[int, str] = (-1, "")


def utc_now() -> str:
    """Now in UTC as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (every outcome's ``started_at``).

    The date-time text of the current second is formatted once and reused, so a
    call costs a clock read and the milliseconds.
    """
    global _SECOND
    t = time.time()
    sec = int(t)
    cached_sec, text = _SECOND
    if sec != cached_sec:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        _SECOND = (sec, text)
    return f"{text}.{int((t - sec) * 1000):03d}Z"


def new_run_id() -> str:
    """``YYYYMMDD-HHMMSS-xxxxxx`` (UTC time and 6 random hex digits): sortable and unique."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


class RunLock:
    """The one-writer lock of a run folder (see the module doc)."""

    def __init__(self, run_dir: Path, run_id: str) -> None:
        self.path = run_dir / LOCK_FILE
        self.run_id = run_id
        self._fd: int | None = None

    def acquire(self) -> int | None:
        """Take the lock; returns the PID of a dead holder whose lock was taken over, else None.

        Raises ResultsError naming the holder's PID when a live process holds it.
        """
        if fcntl is None:
            return None
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f"process {holder}" if holder is not None else "another process"
            if holder == os.getpid():
                who += " (this process: another run with this id is still going)"
            raise ResultsError(
                f"run {self.run_id} is being written by {who} (lock {self.path}); "
                "wait for it to finish, stop it, or use another --run-id"
            ) from None
        stale = _read_pid(fd)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return stale

    def release(self) -> None:
        """Give the lock up (the file stays, empty)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing drops the flock


def _read_pid(fd: int) -> int | None:
    text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


@dataclass
class RunFolder:
    """An opened (and locked) run folder: where things go and what an earlier invocation wrote."""

    run_id: str
    path: Path
    lock: RunLock
    old_manifest: RunRecord | None = None
    took_over_from: int | None = None

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def jsonl(self) -> Path:
        return self.path / OUTCOMES_JSONL


def check_run_id(run_id: object) -> str:
    """``run_id`` if it is a valid run id (:data:`goldenkit._constraints.RUN_OPTIONS`: one folder name of
    letters, digits, ``.``, ``_`` and ``-``, never a separator, ``..``, a control character, empty or
    ``latest``); else a one-line ConfigError."""
    try:
        checked = RUN_OPTIONS["run_id"].check(run_id)
    except ValueError as exc:
        raise ConfigError(f"run id {exc}") from None
    if not isinstance(checked, str):  # None: no run id at all
        raise ConfigError(f"run id must be a name, got {run_id!r}")
    return checked


def open_run_folder(
    results_dir: str | os.PathLike[str],
    run_id: str | None,
    key: Mapping[str, Any],
    *,
    retry_errors: bool,
    settings: Mapping[str, Any] | None = None,
) -> RunFolder:
    """Create, or lock and check for a resume, the folder of run ``run_id`` (a new id when None).

    ``settings``: the provider's (redacted) settings, which a refused resume names when they changed."""
    run_id = check_run_id(run_id or new_run_id())
    check_output(results_dir, "--results-dir", folder=True)  # no control character, no file where a folder goes
    run_dir = Path(results_dir) / run_id
    if retry_errors and not (run_dir / RUN_FILE).exists():
        raise ResultsError(f"--retry-errors: no run {run_id} under {results_dir}")
    run_dir.mkdir(parents=True, exist_ok=True)
    folder = RunFolder(run_id, run_dir, RunLock(run_dir, run_id))
    folder.took_over_from = folder.lock.acquire()
    try:
        _read_earlier(folder, key if settings is None else {**key, "provider": {"settings": dict(settings)}})
    except BaseException:
        folder.lock.release()
        raise
    if folder.took_over_from is not None:
        log.warning(
            "goldenkit: run %s: took over the lock of process %s, which is no longer running",
            run_id,
            folder.took_over_from,
        )
    return folder


def run_key_differences(old: Mapping[str, Any], new: Mapping[str, Any], *, also: tuple[str, ...] = ()) -> list[str]:
    """Why two invocations are not one run: their protocol keys (:func:`goldenkit.compare.protocol_key`),
    the agent's identity (a new git commit alone never differs; a changed prompt hash is said as the
    provider settings that changed, :func:`agent_differences`) and the mode, plus the fields ``also``."""
    diffs = protocol_differences(protocol_key(old), protocol_key(new))
    return diffs + agent_differences(old, new) + key_differences(old, new, fields=("mode", *also))


def agent_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``agent_version: max_tokens 256 -> 512, model_id a -> b``: each agent-version field that differs,
    a prompt hash as the ``provider.settings`` (of run.json) that changed, when both sides recorded them."""
    if not key_differences(old, new, fields=("agent_version",)):
        return []
    a, b = old.get("agent_version"), new.get("agent_version")
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return key_differences(old, new, fields=("agent_version",))
    parts: list[str] = []
    for name in sorted((set(a) | set(b)) - RESUME_IGNORES):
        if a.get(name) == b.get(name):
            continue
        named = _setting_changes(old, new) if name == "prompt_sha256" else []
        parts += named or [f"{name} {_shown(a.get(name))} -> {_shown(b.get(name))}"]
    return [f"agent_version: {', '.join(parts)}"]


def _setting_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``name old -> new`` for each answer-shaping provider setting that differs (none when a side has none)."""
    sa, sb = _settings(old), _settings(new)
    if not isinstance(sa, Mapping) or not isinstance(sb, Mapping):
        return []
    names = sorted((set(sa) | set(sb)) - set(TRANSPORT_SETTINGS))
    return [f"{k} {_shown(sa.get(k))} -> {_shown(sb.get(k))}" for k in names if sa.get(k) != sb.get(k)]


def _settings(manifest: Mapping[str, Any]) -> Any:
    provider = manifest.get("provider")
    return provider.get("settings") if isinstance(provider, Mapping) else None


#: How a run folder that cannot be resumed ends its error: a command that names its runs another way (the
#: ``--run-prefix`` of ``goldenkit benchmark``) says its own option in its place.
NEW_RUN_ID = "use a new --run-id"


def _shown(value: Any) -> str:
    """A setting's value in a message: ``unset``, a hash's first 12 digits, a text quoted and cut short."""
    if value is None:
        return "unset"
    if isinstance(value, str):
        return value[:12] if re.fullmatch(r"[0-9a-f]{32,}", value) else json.dumps(one_line(value, 40))
    return one_line(json.dumps(value, sort_keys=True, default=str), 60)


def _read_earlier(folder: RunFolder, key: Mapping[str, Any]) -> None:
    """The earlier invocation's manifest and outcomes (a resume), after checking its run key."""
    if not folder.run_file.exists():
        if folder.jsonl.exists():
            raise ResultsError(f"{folder.path}: outcomes.jsonl without run.json; not a goldenkit run, {NEW_RUN_ID}")
        return
    old = read_manifest(folder.path)  # the one reader of run.json (older formats read, a newer one refused)
    diffs = run_key_differences(old, key, also=("shard",))
    if diffs:
        raise ResultsError(f"cannot resume run {folder.run_id}: its run key differs ({'; '.join(diffs)}); {NEW_RUN_ID}")
    folder.old_manifest = old
    if folder.jsonl.exists():
        repair_jsonl(folder.jsonl)


def scan_outcomes(path: Path) -> Iterator[tuple[dict[str, Any], int, int]]:
    """``(record, offset, length)`` of every outcome line of ``path``, in file order (none if it is absent).

    Read by the one outcome reader (:func:`goldenkit.results.scan_jsonl`): a malformed
    line is a ResultsError naming ``file:line``, a torn last line is skipped (and
    :func:`repair_jsonl` cuts it). One line is in memory at a time.
    """
    if not path.exists():
        return
    for line in scan_jsonl(path):
        yield line.record, line.offset, line.length


__all__ = [
    "LOCK_FILE",
    "NEW_RUN_ID",
    "RunFolder",
    "RunLock",
    "check_run_id",
    "new_run_id",
    "open_run_folder",
    "scan_outcomes",
    "utc_now",
]

publish(globals())
