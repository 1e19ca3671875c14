"""Files replaced whole or not at all: every file or folder goldenkit writes in place of another goes
through :func:`replaced_together` (or :func:`write_atomic`, its one-file form).

The new content is written beside each target under a temporary name; only when every one of them
was written and flushed to disk are they renamed over their targets, in the order given. A write
that fails (a full disk, ``OSError(ENOSPC)`` halfway through a file) or any other exception leaves
every target as it was and removes the temporary files: a baseline's rows, its header and its
history line, a run.json, an outcomes.parquet, a dataset version's folder are never half new.

:func:`disk_state` is a file's identity on disk, for a cache of what was read from it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["disk_state", "replaced_together", "write_atomic"]


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _flush(path: Path) -> None:
    """Flush a written file to disk (a folder's files, a symlink: left to the rename)."""
    if path.is_file() and not path.is_symlink():
        with path.open("rb") as fh:
            os.fsync(fh.fileno())


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def replaced_together(*paths: str | os.PathLike[str]) -> Iterator[list[Path]]:
    """Temporary paths, one beside each of ``paths``, to write the new files (or folders) into.

    When the block ends without an exception, each is flushed and renamed over its target, in the
    order given (put the file that says the others are complete last); when the block raises, the
    temporaries are removed and the exception goes on, every target untouched.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("old")
    >>> try:
    ...     with replaced_together(d / "a.txt", d / "b.txt") as (a, b):
    ...         _ = a.write_text("new")
    ...         raise OSError(28, "No space left on device")
    ... except OSError:
    ...     pass
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('old', ['a.txt'])
    """
    targets = [Path(p) for p in paths]
    temporaries = [_temporary(t) for t in targets]
    for tmp in temporaries:
        _remove(tmp)  # left by a process of the same id that died
    try:
        yield temporaries
        for tmp in temporaries:
            _flush(tmp)
    except BaseException:
        for tmp in temporaries:
            _remove(tmp)
        raise
    for tmp, target in zip(temporaries, targets, strict=True):
        os.replace(tmp, target)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) whole or not at all (:func:`replaced_together`)."""
    with replaced_together(path) as (tmp,):
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def disk_state(path: str | os.PathLike[str] | None) -> tuple[int, int, int, int] | None:
    """``path`` as it is on disk (inode, size, modification and change times; None when absent or unreadable), the
    key of a cache of what was read from it: a file rewritten in place with its old size and modification time has
    a new change time, one replaced by another file a new inode."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
