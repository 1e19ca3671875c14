"""The agent's artifacts (prompt files, a RAG corpus, tool definitions) as one order-independent SHA-256.

``goldenkit run --artifact PATH`` (repeatable; ``[run] artifacts = [...]``, paths
relative to the config file) records :func:`artifacts_sha256` of the files and
folders that define the agent as ``agent_version.artifacts_sha256``: part of the
run key (a resume with other artifacts is refused) and of the comparability key
(two runs with different artifacts are not compared, exit 4). A run without
artifacts has no such field, so its agent version is what it was before.

**The artifacts hash**, exactly:

1. every path given must exist (else an InputError naming it); a file is one
   entry named by its file name; a folder is walked recursively and each file
   in it is an entry named ``<folder name>/<path inside the folder>``, with
   ``/`` between the parts (POSIX, on every system);
2. inside a folder, names starting with ``.`` are left out, files and folders
   alike (``.git``, ``.venv``, ``.DS_Store``, editor swap files); a hidden path
   given by name is included. Empty folders add nothing: only files count;
3. symbolic links are followed: a link to a file is an entry with the target's
   bytes under the link's name, a link to a folder is walked like a folder; a
   dangling link or a folder that contains itself is an InputError naming it;
4. each entry is the line ``name + NUL + lowercase hex SHA-256 of the file's
   bytes`` (the name as UTF-8); the same line twice (one file given twice)
   counts once, the same name with other bytes is an InputError;
5. the lines are sorted by their UTF-8 bytes, and the hash is the SHA-256 of
   each line followed by ``\\n``.

So the order of the paths, of the folder listing and the folder's location on
disk do not matter; a file's name, place inside its folder or bytes do
(renaming the folder given does too). Reproducible in any language:

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "prompt.md").write_text("You are helpful.")
>>> h = hashlib.sha256(b"prompt.md\\0" + hashlib.sha256(b"You are helpful.").hexdigest().encode() + b"\\n")
>>> artifacts_sha256([d / "prompt.md"]) == h.hexdigest()
True
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from goldenkit.errors import InputError

__all__ = ["artifact_entries", "artifacts_sha256", "module_source_sha256", "source_sha256"]

_BLOCK = 1 << 20


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            while block := fh.read(_BLOCK):
                h.update(block)
    except OSError as exc:
        raise InputError(f"artifact {path}: cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()


def _walk(root: Path, name: str, seen: frozenset[str]) -> Iterator[tuple[str, Path]]:
    """``(entry name, file)`` of every file under ``root`` (hidden names left out, links followed)."""
    real = os.path.realpath(root)
    if real in seen:
        raise InputError(f"artifact {root}: the folder contains itself (a symbolic link loop)")
    seen = seen | {real}
    try:
        children = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        raise InputError(f"artifact {root}: cannot list: {exc.strerror or exc}") from None
    for child in children:
        if child.name.startswith("."):
            continue
        path = Path(child.path)
        inner = f"{name}/{child.name}"
        if not path.exists():
            raise InputError(f"artifact {path}: a dangling symbolic link")
        if path.is_dir():
            yield from _walk(path, inner, seen)
        else:
            yield inner, path


def artifact_entries(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The sorted, unique entry lines ``name NUL sha256`` of ``paths`` (rules 1-4 of the module doc)."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    lines: dict[str, str] = {}  # name -> sha256
    for given in paths:
        path = Path(given)
        if not path.exists():
            what = "a dangling symbolic link" if path.is_symlink() else "no such file or folder"
            raise InputError(f"artifact {given}: {what}")
        name = path.resolve().name if path.name in ("", ".", "..") else path.name
        files = _walk(path, name, frozenset()) if path.is_dir() else iter([(name, path)])
        for entry, file in files:
            digest = _file_sha256(file)
            if lines.setdefault(entry, digest) != digest:
                raise InputError(f"artifact {given}: {entry!r} is also given with other content")
    return sorted(
        (f"{name}\0{digest}" for name, digest in lines.items()), key=lambda s: s.encode("utf-8", "surrogateescape")
    )


def artifacts_sha256(paths: Iterable[str | os.PathLike[str]]) -> str | None:
    """The artifacts hash of ``paths`` (see the module doc); None when no path is given."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not paths:
        return None
    h = hashlib.sha256()
    for line in artifact_entries(paths):
        h.update(line.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest()


def source_sha256(obj: object) -> str | None:
    """The SHA-256 of the source file that defines ``obj`` (a function, a class, an agent object's class),
    or None when it has none (a builtin, code typed at a prompt).

    An in-process agent's version includes it, so its identity follows its code: a resume after the
    function changed is refused, and two runs of different code never share an agent version.

    >>> source_sha256(len) is None
    True
    """

    kinds = (inspect.isfunction, inspect.isclass, inspect.ismethod, inspect.ismodule)
    target = obj if any(k(obj) for k in kinds) else type(obj)
    try:
        path = inspect.getsourcefile(target)  # type: ignore[arg-type]
    except TypeError:
        return None
    if path is None or not Path(path).is_file():
        return None
    return _file_sha256(Path(path))


def module_source_sha256(spec: str) -> str | None:
    """:func:`source_sha256` of the imported module that ``module:attr`` names (None when it is not imported)."""

    module = sys.modules.get(spec.partition(":")[0]) if ":" in spec else None
    return source_sha256(module) if module is not None else None
