"""goldenkit.toml: where it is found and how it is read.

The file has one table per stage: ``[run]`` (runner defaults), ``[graders]``
(which graders, their options), ``[judge]``, ``[gate]`` (the quality-gate
policy) and ``[stats]``. Each stage parses its own table; this module only
finds and reads the file and reports malformed TOML with its path.

Lookup order for a dataset: an explicit ``--config`` path; ``goldenkit.toml``
in the dataset folder; ``goldenkit.toml`` in the current directory; built-in
defaults (an empty table for every stage).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from goldenkit.errors import ConfigError

CONFIG_NAME = "goldenkit.toml"


def read_config(path: str | Path) -> dict[str, Any]:
    """Read one goldenkit.toml; malformed TOML is a ConfigError naming the file."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None


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


def section(cfg: dict[str, Any], name: str) -> dict[str, Any]:
    """One table of the config; a non-table value is a ConfigError."""
    value = cfg.get(name, {})
    if not isinstance(value, dict):
        where = cfg.get("_path", CONFIG_NAME)
        raise ConfigError(f"{where}: [{name}] must be a table")
    return value
