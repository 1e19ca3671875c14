"""Where the demo's data is: the bundled support-agent dataset (with its recorded answers) and its committed baseline.

The checkout keeps one copy of each: ``datasets/support-agent/`` and
``baselines/support-agent-holdout.{json,parquet}``. The build configuration
maps those folders into this package as package data (``pyproject.toml``'s
``package-dir`` and ``package-data``; ``setup.py`` lists the packages), so an
installed goldenkit carries them as ``goldenkit/demo/datasets/support-agent/``
and ``goldenkit/demo/baselines/``, and ``goldenkit demo`` works in an empty
folder. An editable install (a checkout) finds them beside the package. The
demo only reads them: its runs go to the results folder it is given.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["COMMITTED_BASELINE", "DATASET_NAME", "bundled", "committed_baseline", "shown"]

#: The bundled dataset's folder name (under ``datasets/``).
DATASET_NAME = "support-agent"
#: The committed snapshot of the bundled dataset's baseline fixtures (holdout, 3 repeats), under ``baselines/``.
COMMITTED_BASELINE = "support-agent-holdout"
#: A checkout's top-level folder: the package's parent.
_CHECKOUT = Path(__file__).resolve().parents[2]


def bundled(folder: str, *parts: str) -> Path:
    """A bundled file or folder (``bundled("datasets", "support-agent")``): the installed package's copy,
    else a checkout's; the package's path when neither exists (reading it then names what is missing)."""
    packaged = resources.files(__package__ or __name__).joinpath(folder, *parts)
    for candidate in (packaged, _CHECKOUT.joinpath(folder, *parts)):
        if isinstance(candidate, Path) and candidate.exists():
            return candidate
    return Path(str(packaged))


def committed_baseline() -> Path | None:
    """The committed baseline snapshot's .json (its .parquet beside it), or None when it is not there."""
    path = bundled("baselines", f"{COMMITTED_BASELINE}.json")
    return path if path.is_file() else None


def shown(path: Path) -> Path:
    """``path`` as a person would type it here: relative to the working folder when it lies under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path
