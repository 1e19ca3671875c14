"""goldenkit.toml: where it is found and how it is read.

The file has one table per stage: ``[run]`` (runner defaults), ``[graders]``
(which graders, their options), ``[judge]``, ``[gate]`` (the quality-gate
policy) and ``[stats]``. Each stage parses its own table; this module only
finds and reads the file and reports malformed TOML with its path.

Lookup order for a dataset: an explicit ``--config`` path; ``goldenkit.toml``
in the dataset folder; ``goldenkit.toml`` in the current directory; built-in
defaults (an empty table for every stage).

Every command that applies a policy to a run it did not start (gate, compare,
report, regrade, judge, leaderboard) finds the file with :func:`config_for_run`:
``--config``; else the file the run recorded (run.json ``config.extra.config_file``
with its ``config_sha256``); else the one beside the run's dataset; else the
current folder's. A recorded file whose SHA-256 is no longer the one the run
recorded (edited since, or another file at that path) is refused unless named
with ``--config``. :func:`describe_config` is the line that names the file, its
SHA-256 and how it was found.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit.errors import ConfigError

CONFIG_NAME = "goldenkit.toml"


def read_config(path: str | Path) -> dict[str, Any]:
    """Read one goldenkit.toml; malformed TOML is a ConfigError naming the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        cfg = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None
    cfg["_sha256"] = hashlib.sha256(data).hexdigest()
    return cfg


def find_config(explicit: str | Path | None = None, dataset_dir: str | Path | None = None) -> Path | None:
    """The goldenkit.toml that applies, or None when there is none."""
    if explicit is not None:
        return Path(explicit)
    candidates = []
    if dataset_dir is not None:
        d = Path(dataset_dir)
        candidates.append((d if d.is_dir() else d.parent) / CONFIG_NAME)
    candidates.append(Path.cwd() / CONFIG_NAME)
    for c in candidates:
        if c.is_file():
            return c
    return None


def load_config(explicit: str | Path | None = None, dataset_dir: str | Path | None = None) -> dict[str, Any]:
    """The applicable configuration as a dict (empty when no file applies)."""
    path = find_config(explicit, dataset_dir)
    if path is None:
        return {}
    cfg = read_config(path)
    cfg.setdefault("_path", str(path))
    return cfg


def _recorded(manifest: Mapping[str, Any]) -> tuple[str | None, str | None]:
    extra = (manifest.get("config") or {}).get("extra") if isinstance(manifest.get("config"), Mapping) else None
    if not isinstance(extra, Mapping):
        return None, None
    path, sha = extra.get("config_file"), extra.get("config_sha256")
    return (str(path) if path else None), (str(sha) if sha else None)


def config_for_run(explicit: str | Path | None, manifest: Mapping[str, Any] | None) -> dict[str, Any]:
    """The goldenkit.toml that applies to a run (see the module doc), with ``_path``, ``_sha256``,
    ``_how`` (how it was found); a recorded file that changed since the run is a ConfigError."""
    man = manifest or {}
    if explicit is not None:
        return {**load_config(explicit), "_how": "--config"}
    path, sha = _recorded(man)
    if path is not None and sha is not None and not Path(path).is_file():  # never another file in its place
        raise ConfigError(
            f"{path}: the goldenkit.toml the run recorded (sha256 {sha[:12]}) is not there; "
            "pass --config FILE to apply a policy to this run"
        )
    if path is not None and Path(path).is_file():
        cfg = {**load_config(path), "_how": "recorded by the run"}
        if sha is not None and cfg.get("_sha256") != sha:  # another file at that path, or an edit since the run
            raise ConfigError(
                f"{path}: the goldenkit.toml the run recorded changed since the run (sha256 {sha[:12]} then, "
                f"{cfg['_sha256'][:12]} now); pass --config {path} to apply it as it is now"
            )
        return cfg
    ds = (man.get("dataset") or {}).get("path") if isinstance(man.get("dataset"), Mapping) else None
    found = find_config(None, ds if ds and Path(ds).exists() else None)
    if found is None:
        return {"_how": "none found: built-in defaults"}
    how = (
        "beside the dataset"
        if ds and found.parent == Path(ds if Path(ds).is_dir() else Path(ds).parent)
        else "current folder"
    )
    return {**load_config(found), "_how": how}


def describe_config(cfg: Mapping[str, Any]) -> str:
    """``config: PATH (sha256 0123456789ab, HOW)``, and the change of a recorded file when there is one."""
    if not cfg.get("_path"):
        return f"config: {cfg.get('_how') or 'none found: built-in defaults'}"
    line = f"config: {cfg['_path']} (sha256 {str(cfg.get('_sha256'))[:12]}, {cfg.get('_how') or 'given'})"
    return line


def section(cfg: dict[str, Any], name: str) -> dict[str, Any]:
    """One table of the config; a non-table value is a ConfigError."""
    value = cfg.get(name, {})
    if not isinstance(value, dict):
        where = cfg.get("_path", CONFIG_NAME)
        raise ConfigError(f"{where}: [{name}] must be a table")
    return value
