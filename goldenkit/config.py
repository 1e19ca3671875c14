"""goldenkit.toml: where it is found, how it is read and what it may say.

The file has one table per stage: ``[run]`` (runner defaults), ``[graders]``
(which graders, their options), ``[judge]``, ``[gate]`` (the quality-gate
policy), ``[benchmark]`` and ``[pricing]`` (the user's prices per model:
:mod:`goldenkit._pricing`). Each stage parses its own table; this module finds
and reads the file and checks it whole when it is read (:func:`check_config`):
an unknown table or key at any level is a ConfigError with a did-you-mean
(``[gates]``: did you mean ``[gate]``?), and a boolean is a TOML boolean (the
string ``"false"`` is an error, never true). The keys of each table are
:data:`TABLE_KEYS`: ``[run]`` is the run options' :data:`~goldenkit._constraints.RUN_TABLE`, ``[gate]``
``GatePolicy``'s ``GATE_KEYS``, and ``[judge]``, ``[graders]``, ``[metrics]`` and ``[benchmark]`` are declared
key by key in :mod:`goldenkit._config_tables` (what each key takes, its default), each value checked when the
file is read; their readers take the values from :func:`table_values`.

Lookup order for a dataset: an explicit ``--config`` path; ``goldenkit.toml``
in the dataset folder; ``goldenkit.toml`` in the current directory; built-in
defaults (an empty table for every stage).

**A dataset cannot redirect credentials.** A goldenkit.toml found beside the
dataset (not named with ``--config``) travels with the data: it may set grading
and gate policy, never where requests and keys go (``base_url``, headers,
``api_key_env``, proxies, CA, the judge's and simulator's endpoints, a Ray
address) nor where files are written (``record``, ``results_dir``) nor which code runs (a
``callable``, an ADK ``agent``): such a key
is a one-line ConfigError naming it (:func:`check_travelling`); naming the file
with ``--config`` allows it.

**A dataset cannot set what its run may spend.** A budget (``--max-cost``, and the
money any budget counts) trusts only the ``[pricing]`` of the user's own
configuration: the file named with ``--config``, or the working folder's
goldenkit.toml when that is not the dataset's own (:func:`budget_pricing`). A
dataset's ``[pricing]`` (price 0 would lift any ``--max-cost``) is still shown,
each money label naming it (``[pricing] SOURCE DATE (dataset's goldenkit.toml)``,
:func:`pricing`), and a ``--max-cost`` run with only a dataset's prices is refused
before anything is written.

Every command that applies a policy to a run it did not start (gate, compare,
report, regrade, judge, leaderboard) finds the file with :func:`config_for_run`:
``--config``; else the file the run recorded (run.json ``config.extra``:
``config_file``, absolute, and ``config_file_from_run``, relative to the run
folder, with ``config_sha256``), tried at its absolute path, then relative to
the run folder, then (a moved checkout) by its name beside the run's dataset;
else the one beside the run's dataset; else the current folder's. A recorded
file is taken only with the SHA-256 the run recorded: one that changed since (an
edit, another file at that path) is refused unless named with ``--config``. The
dataset is found the same way (:func:`dataset_path_for_run`: run.json
``dataset.path``, absolute, then ``dataset.path_from_run``), so a run is gated,
compared, reported and regraded from any working directory.
:func:`describe_config` is the line that names the file, its SHA-256 and how it
was found.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit._config_tables import DECLARED, GRADERS_KEYS, check_run_table, check_table
from goldenkit._constraint_types import Flag, Kind, TableKey
from goldenkit._constraints import RUN_TABLE
from goldenkit._pricing import PRICE_KINDS, PROVENANCE_KEYS, Pricing
from goldenkit._text import did_you_mean
from goldenkit.errors import ConfigError

CONFIG_NAME = "goldenkit.toml"
#: What a money label says of prices read from a dataset's own goldenkit.toml (:func:`pricing`).
DATASET_PRICES = "dataset's goldenkit.toml"

#: Every table of goldenkit.toml and its known keys: a table declared key by key (what each takes, its default:
#: :data:`goldenkit._config_tables.DECLARED`, checked here by :func:`check_table`), the names of its keys, or
#: None (``[run]``: the run options' table, checked here by :func:`goldenkit._config_tables.check_run_table`;
#: else its owner checks them when it parses the table: ``[gate]`` ``GatePolicy.from_config``, a grader's
#: options its factory). A key whose value is a table has an entry of its own (``"gate.slices.*"``: every table under
#: ``[gate.slices]``); a table with entries below it takes no other table, one without takes any
#: (``[graders.trajectory.args]``).
TABLE_KEYS: dict[str, Mapping[str, TableKey] | frozenset[str] | None] = {
    "run": None,
    "gate": None,
    "gate.slices": None,
    "gate.slices.*": frozenset({"min_pass_rate", "min_wilson_lower"}),
    **DECLARED,
    "judge.options": None,  # the judge provider's own options
    "graders.*": None,  # a grader's options: the grader's factory checks them
    "graders.judge.options": None,
    "graders.rubrics.options": None,
    "metrics.weights": None,  # metric = weight: goldenkit.metrics.metric_weights checks the names
    "pricing": None,  # source, date and one table per model: goldenkit._pricing.Pricing.from_config checks them
    "pricing.*": frozenset((*PRICE_KINDS, *PROVENANCE_KEYS)),  # a model's prices (USD per million tokens)
}
#: Keys whose value must be a TOML boolean, by table (a declared table's: those its keys declare true or false).
BOOLEAN_KEYS: dict[str, frozenset[str]] = {
    "run": frozenset(name for name, option in RUN_TABLE.items() if option.key and option.takes == Kind("bool")),
    "gate": frozenset({"regression"}),
}
_BOOLEAN_WORDS = {"true", "false"}

# Where requests, keys and files go, and which code runs (a callable, an agent module): never set by a
# goldenkit.toml that travels inside a dataset folder.
_REDIRECTS = re.compile(
    r"(^|_)(url|urls|headers?|api_key|api_key_env|key_env|proxy|proxies|ca_bundle|ca|cert|verify|"
    r"endpoint|address|host|record|results_dir|dir|output|callable)$|^agent$"
)


def _where(path: str | Path | None, table: str) -> str:
    return f"{path or CONFIG_NAME}: [{table}]" if table else f"{path or CONFIG_NAME}:"


def _known(table: str) -> tuple[bool, frozenset[str] | None]:
    """Whether ``table`` (dotted) is a known table, and its known keys (None: any)."""
    parent = table.rpartition(".")[0]
    found = table if table in TABLE_KEYS else f"{parent}.*" if parent and f"{parent}.*" in TABLE_KEYS else None
    if found is None:
        return False, None
    keys = TABLE_KEYS[found]
    return True, None if keys is None else frozenset(keys)


def _booleans(table: str) -> frozenset[str]:
    keys = TABLE_KEYS.get(table)
    if isinstance(keys, Mapping):
        return frozenset(k for k, spec in keys.items() if isinstance(spec.constraint, Flag))
    return BOOLEAN_KEYS.get(table, frozenset())


def _subtables(table: str) -> list[str]:
    """The names of the tables declared under ``table`` (``"*"``: any name)."""
    return [k[len(table) + 1 :] for k in TABLE_KEYS if k.startswith(f"{table}.") and "." not in k[len(table) + 1 :]]


def _unknown(path: str | Path | None, table: str, key: str, value: Any, known: list[str]) -> ConfigError:
    """The one-line error of an unknown key (or table, when ``value`` is one) of ``table``, with a did-you-mean."""
    if isinstance(value, Mapping):
        hint = did_you_mean(key, known).replace("mean ", f"mean [{table}.").replace("?)", "]?)")
        listed = ", ".join(f"[{table}.{k}]" for k in sorted(known)) or "none"
        return ConfigError(f"{path or CONFIG_NAME}: [{table}.{key}]: unknown table{hint or f'; known: {listed}'}")
    hint = did_you_mean(key, known)
    return ConfigError(f"{path or CONFIG_NAME}: [{table}] {key}: unknown key{hint or '; known: ' + ', '.join(known)}")


def _check_table(table: str, value: Mapping[str, Any], path: str | Path | None) -> None:
    keys, subtables = _known(table)[1], _subtables(table)
    for key, v in value.items():
        name = f"{table}.{key}"
        if keys is not None and key not in keys and not (isinstance(v, Mapping) and f"{table}.*" in TABLE_KEYS):
            raise _unknown(path, table, key, v, sorted(keys))
        if key in _booleans(table) and not isinstance(v, bool):
            raise ConfigError(f"{_where(path, table)} {key} = {v!r} is not a boolean: write true or false (no quotes)")
        if isinstance(v, str) and v.strip().lower() in _BOOLEAN_WORDS:
            raise ConfigError(
                f"{_where(path, table)} {key} = {v!r}: a quoted {v.strip().lower()!r} is a string, not a boolean; "
                "write true or false without quotes"
            )
        if isinstance(v, Mapping) and _known(name)[0]:
            _check_table(name, v, path)
        elif isinstance(v, Mapping) and subtables and "*" not in subtables:
            raise _unknown(path, table, key, v, subtables)


def check_config(cfg: Mapping[str, Any], path: str | Path | None = None) -> None:
    """Check a goldenkit.toml whole (see the module doc): the first unknown table or key, a table that is not
    one, or a boolean that is not a TOML boolean is a ConfigError naming it, with a did-you-mean."""
    tables = sorted(k for k in TABLE_KEYS if "." not in k)
    for name, value in cfg.items():
        if name.startswith("_"):
            continue
        if name not in TABLE_KEYS:
            hint = did_you_mean(name, tables).replace("mean ", "mean [").replace("?)", "]?)")
            raise ConfigError(f"{path or CONFIG_NAME}: [{name}]: unknown table{hint}; known: {', '.join(tables)}")
        if not isinstance(value, Mapping):
            raise ConfigError(f"{_where(path, name)} must be a table")
        if name == "graders":
            for key, v in value.items():
                if key not in GRADERS_KEYS and not isinstance(v, Mapping):
                    hint = did_you_mean(key, GRADERS_KEYS)
                    raise ConfigError(
                        f"{_where(path, name)} {key}: unknown key{hint}; [graders] holds use and one "
                        "[graders.NAME] table of options per grader"
                    )
        _check_table(name, value, path)
        for table in (t for t in DECLARED if t == name or t.startswith(f"{name}.")):  # each key by its constraint
            inner = _inner(value, table.split(".")[1:])
            if inner is not None:
                check_table(table, inner, str(path or CONFIG_NAME))
        if name == "run":
            check_run_table(value, str(path or CONFIG_NAME))
        if name == "pricing":
            Pricing.from_config(value, str(path or CONFIG_NAME))


def _inner(table: Mapping[str, Any], names: list[str]) -> Any:
    """The table under ``table`` at the dotted ``names`` (none: ``table`` itself), or None when absent."""
    for name in names:
        value = table.get(name)
        if not isinstance(value, Mapping):
            return None
        table = value
    return table


def table_values(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Table ``name`` (dotted: ``"graders.rubrics"``) of a goldenkit.toml dict, checked key by key against its
    declaration (:data:`goldenkit._config_tables.DECLARED`), every absent key at its default (an absent table:
    every key at its default); a refusal is a ConfigError naming the file, the table and the key.

    >>> table_values({"judge": {"provider": "openai"}}, "judge")["hard"]
    False
    """
    names = name.split(".")
    top = cfg.get(names[0], {})
    where = str(cfg.get("_path") or CONFIG_NAME)
    if not isinstance(top, Mapping):
        raise ConfigError(f"{where}: [{names[0]}] must be a table")
    inner = _inner(top, names[1:])
    return check_table(name, {} if inner is None else inner, where)


def check_travelling(cfg: Mapping[str, Any], path: str | Path | None, table: str = "") -> None:
    """Refuse, in a goldenkit.toml found beside the dataset, any key saying where requests, keys or files go."""
    for key, value in cfg.items():
        if key.startswith("_") and not table:
            continue
        if _REDIRECTS.search(key) and not (table.startswith("pricing.") and key in PRICE_KINDS):
            shown = f"[{table}] {key}" if table else key
            raise ConfigError(
                f"{path or CONFIG_NAME}: {shown}: a goldenkit.toml found beside the dataset may set grading and "
                f"gate policy, not where requests, keys or files go; pass it with --config {path} to use it"
            )
        if isinstance(value, Mapping):
            check_travelling(value, path, f"{table}.{key}" if table else key)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping):
                    check_travelling(item, path, f"{table}.{key}" if table else key)


def read_config(path: str | Path) -> dict[str, Any]:
    """Read one goldenkit.toml and check it whole (:func:`check_config`); malformed TOML is a ConfigError
    naming the file."""
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
    check_config(cfg, p)
    cfg["_sha256"] = hashlib.sha256(data).hexdigest()
    return cfg


def _beside(dataset: str | os.PathLike[str]) -> Path:
    d = Path(dataset)
    return (d if d.is_dir() else d.parent) / CONFIG_NAME


def find_config(
    explicit: str | os.PathLike[str] | None = None, dataset_dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The goldenkit.toml that applies, or None when there is none."""
    if explicit is not None:
        return Path(explicit)
    candidates = [_beside(dataset_dir)] if dataset_dir is not None else []
    candidates.append(Path.cwd() / CONFIG_NAME)
    for c in candidates:
        if c.is_file():
            return c
    return None


def load_config(
    explicit: str | os.PathLike[str] | None = None, dataset_dir: str | os.PathLike[str] | None = None
) -> dict[str, Any]:
    """The applicable configuration as a dict (empty when no file applies), with ``_path``, ``_sha256`` and
    ``_how``; a file found beside the dataset is held to :func:`check_travelling`."""
    path = find_config(explicit, dataset_dir)
    if path is None:
        return {}
    cfg = read_config(path)
    cfg.setdefault("_path", str(path))
    cfg["_dataset_file"] = dataset_dir is not None and _same_file(path, _beside(dataset_dir))
    if explicit is not None:
        cfg["_how"] = "--config"
    elif dataset_dir is not None and path == _beside(dataset_dir):
        check_travelling(cfg, path)
        cfg["_how"] = "beside the dataset"
    else:
        cfg["_how"] = "current folder"
    return cfg


def _same_file(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def from_run(path: str | Path, run_dir: str | Path) -> str:
    """``path`` relative to the run folder ``run_dir`` (as run.json records it beside the absolute path)."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(run_dir))


def _recorded_candidates(absolute: Any, relative: Any, run_dir: str | Path | None) -> list[tuple[Path, str]]:
    out = [(Path(str(absolute)), "recorded by the run")] if absolute else []
    if relative and run_dir is not None:
        out.append((Path(run_dir) / str(relative), "recorded by the run, relative to the run folder"))
    return out


def dataset_path_for_run(manifest: Mapping[str, Any] | None, run_dir: str | Path | None = None) -> Path | None:
    """Where the dataset of a run is now: run.json ``dataset.path`` (absolute), else ``dataset.path_from_run``
    under ``run_dir``; None when neither is there (the caller checks the sha256). A run recorded before paths
    travelled has only ``path``, as given where it ran: tried as it is, then under the run folder and its parent."""
    ds = (manifest or {}).get("dataset")
    if not isinstance(ds, Mapping):
        return None
    candidates = [p for p, _ in _recorded_candidates(ds.get("path"), ds.get("path_from_run"), run_dir)]
    older = ds.get("path") and not ds.get("path_from_run") and not Path(str(ds["path"])).is_absolute()
    if older and run_dir is not None:
        candidates += [Path(run_dir) / str(ds["path"]), Path(run_dir).parent / str(ds["path"])]
    return next((p for p in candidates if p.exists()), None)


def _recorded(manifest: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    config = manifest.get("config")
    extra = config.get("extra") if isinstance(config, Mapping) else None
    if not isinstance(extra, Mapping):
        return None, None, None
    path, rel, sha = extra.get("config_file"), extra.get("config_file_from_run"), extra.get("config_sha256")
    return (str(path) if path else None), (str(rel) if rel else None), (str(sha) if sha else None)


def _sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _recorded_config(man: Mapping[str, Any], run_dir: str | Path | None) -> dict[str, Any] | None:
    """The file the run recorded, found by its absolute path, relative to the run folder, or by name and
    sha256 beside the run's dataset (see the module doc); None when the run recorded none."""
    path, rel, sha = _recorded(man)
    if path is None:
        return None
    candidates = _recorded_candidates(path, rel, run_dir)
    ds = dataset_path_for_run(man, run_dir)
    if ds is not None and sha is not None:
        candidates.append((_beside(ds).with_name(Path(path).name), "beside the run's dataset, same sha256"))
    changed = None
    for p, how in candidates:
        if not p.is_file():
            continue
        if sha is None or _sha256_of(p) == sha:
            own = ds is not None and _same_file(p, _beside(ds))
            return {**load_config(p), "_how": how, "_dataset_file": own}
        changed = changed or p
    if changed is not None:  # another file at that path, or an edit since the run
        now = _sha256_of(changed)
        raise ConfigError(
            f"{changed}: the goldenkit.toml the run recorded changed since the run (sha256 {str(sha)[:12]} then, "
            f"{now[:12]} now); pass --config {changed} to apply it as it is now"
        )
    raise ConfigError(
        f"{path}: the goldenkit.toml the run recorded (sha256 {str(sha)[:12]}) is not there"
        + (" nor relative to the run folder" if rel and run_dir is not None else "")
        + (" nor beside the run's dataset" if ds is not None else "")
        + "; pass --config FILE to apply a policy to this run"
    )


def config_for_run(
    explicit: str | os.PathLike[str] | None, manifest: Mapping[str, Any] | None, run_dir: str | Path | None = None
) -> dict[str, Any]:
    """The goldenkit.toml that applies to a run (see the module doc), with ``_path``, ``_sha256``,
    ``_how`` (how it was found); ``run_dir`` is the run's folder (recorded paths relative to it are
    tried); a recorded file that changed since the run is a ConfigError."""
    man = manifest or {}
    if explicit is not None:
        return load_config(explicit)
    recorded = _recorded_config(man, run_dir)
    if recorded is not None:
        return recorded
    ds = dataset_path_for_run(man, run_dir)
    cfg = load_config(None, ds)
    return cfg if cfg else {"_how": "none found: built-in defaults"}


def describe_config(cfg: Mapping[str, Any]) -> str:
    """``config: PATH (sha256 0123456789ab, HOW)``, and the change of a recorded file when there is one."""
    if not cfg.get("_path"):
        return f"config: {cfg.get('_how') or 'none found: built-in defaults'}"
    line = f"config: {cfg['_path']} (sha256 {str(cfg.get('_sha256'))[:12]}, {cfg.get('_how') or 'given'})"
    return line


def pricing(cfg: Mapping[str, Any]) -> Pricing:
    """The ``[pricing]`` table of a config as :class:`~goldenkit._pricing.Pricing` (empty: no prices), for
    showing money: a dataset's own goldenkit.toml's prices labelled :data:`DATASET_PRICES`."""
    prices = Pricing.from_config(cfg.get("pricing"), str(cfg.get("_path") or CONFIG_NAME))
    if not cfg.get("_dataset_file"):
        return prices
    return Pricing({m: dataclasses.replace(p, origin=DATASET_PRICES) for m, p in prices.models.items()})


def budget_pricing(cfg: Mapping[str, Any], *, max_cost: bool) -> Pricing:
    """The prices a run's budget counts money at: the ``[pricing]`` of the user's own configuration (named
    with ``--config``, or the working folder's goldenkit.toml when it is not the dataset's own), never a
    dataset's (see the module doc): none then, and with ``max_cost`` a one-line ConfigError naming the file."""
    if cfg.get("_how") == "--config" or not cfg.get("_dataset_file"):
        return pricing(cfg)
    if max_cost:
        raise ConfigError(
            f"{cfg.get('_path')}: --max-cost counts money only at your own prices, not at the [pricing] of the "
            f"{DATASET_PRICES} (it travels with the data); give prices with --config FILE (a goldenkit.toml "
            "with [pricing]) or leave --max-cost out"
        )
    return Pricing()


def section(cfg: dict[str, Any], name: str) -> dict[str, Any]:
    """One table of the config; a non-table value is a ConfigError."""
    value = cfg.get(name, {})
    if not isinstance(value, dict):
        where = cfg.get("_path", CONFIG_NAME)
        raise ConfigError(f"{where}: [{name}] must be a table")
    return value
