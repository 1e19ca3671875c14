"""results/latest: the pointer to the newest run (a symlink, or a pointer file where links are not allowed).

The newest run is the newest that did something: a run points it at itself when it ends (and a merge at
the merged run), but a resume that wrote no outcome (every outcome already there, or its budget spent
before a call) leaves it where it was (:meth:`goldenkit.runner._run.RunExecution.finish`), so the
notebooks' default opens the run just made. A new run moves it even when it is INVALID or stopped (every
call failed, a budget, a sequential decision): that is the run just made, and its report says so.
"""

from __future__ import annotations

import os
from pathlib import Path

from goldenkit._files import replaced_together
from goldenkit._registry import publish

#: The name of the pointer to the newest run in a results folder.
LATEST = "latest"


def update_latest(results_dir: str | os.PathLike[str], run_id: str) -> Path:
    """Point ``results_dir/latest`` at the run ``run_id`` and return the pointer's path.

    A relative symlink (``latest -> RUN_ID``), or where links are not allowed a
    one-line file holding the run id; either is replaced atomically. A real
    folder called ``latest`` is left alone.
    """
    d = Path(results_dir)
    link = d / LATEST
    if link.is_dir() and not link.is_symlink():
        return link
    with replaced_together(link) as (tmp,):
        try:
            os.symlink(run_id, tmp, target_is_directory=True)
        except OSError:  # no symlinks here (a Windows account without the privilege, some mounts)
            tmp.write_text(run_id + "\n", encoding="utf-8")
    return link


def follow_latest(p: Path) -> Path:
    """The run folder a ``latest`` pointer (symlink or pointer file) names; any other path as it is."""
    if p.name != LATEST:
        return p
    if p.is_symlink():
        return p.parent / os.readlink(p)
    if p.is_file():
        return p.parent / p.read_text(encoding="utf-8").strip()
    return p


__all__ = ["LATEST", "follow_latest", "update_latest"]

publish(globals())
