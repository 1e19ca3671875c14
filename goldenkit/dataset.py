"""Read and validate goldenkit datasets, and compute their canonical content hash.

A dataset is a folder holding ``dataset.jsonl`` (one row per line) and
``dataset.json`` (the manifest), or a bare ``.jsonl`` file. Each row is::

    {"id": "refund-0142", "slice": "refunds", "tags": ["multi_turn"], "split": "dev",
     "source": "prod-2026-09", "added": "2026-09-18", "case": {...}}

Row rules (anything else is refused with a :class:`~goldenkit.errors.DatasetError`
naming ``file:line``; no row is ever skipped):

* ``id``: non-empty string (not only whitespace), unique in the file.
* ``slice``: non-empty string.
* ``split``: ``"dev"`` or ``"holdout"``. A row without a split (absent or null)
  is refused, because the split decides who may look at a row, unless the
  manifest declares ``"default_split"`` (``"dev"`` or ``"holdout"``), which then
  applies to such rows.
* ``tags``: list of non-empty strings; absent or null means ``[]``.
* ``source``, ``added``: strings, or absent/null (then ``None``). ``added`` is
  not parsed: it is provenance text (usually an ISO date).
* ``case``: a JSON object (the eval case, in any shape goldenkit.formats reads).
* No other top-level key is allowed (a typo such as ``"slcie"`` would otherwise
  be silently ignored); put extra data inside ``case``.

The file must be UTF-8 without a byte-order mark; CRLF line ends are accepted
and hash the same as LF; blank lines are ignored (and do not change the hash).

The manifest ``dataset.json`` is a JSON object with ``name`` (non-empty
string), ``version`` (non-empty string) and ``changelog``: a non-empty list of
``{"version", "date" (YYYY-MM-DD), "why"}`` entries, oldest first (it is
append-only: new versions go at the end), versions unique, dates not
decreasing, and the last entry's version equal to ``version``. Optional keys:
``description``, ``case_format`` (``adk``, ``vertex`` or ``contract``: the shape
of every row's case, otherwise detected per row) and ``default_split``; other
keys are kept in :attr:`Dataset.manifest` untouched.

A bare ``.jsonl`` file has no manifest, unless it is named ``dataset.jsonl``
and a ``dataset.json`` sits beside it; without one, the name is the file's stem
and the version is ``None``.

**Content hash** (:func:`canonical_sha256`): split the file's bytes on LF only
(never ``str.splitlines()``, which also breaks on U+2028, U+2029 and U+0085
that JSON writers leave raw inside strings); strip ASCII whitespace (space,
tab, CR, LF, VT, FF) from both ends of each line; drop empty lines; sort the
lines by their bytes; feed each line followed by ``\\n`` to SHA-256.
Reordering rows or switching CRLF/LF keeps the hash; editing any row changes it.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import operator
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from goldenkit.cases import CASE_SHAPES
from goldenkit.errors import DatasetError
from goldenkit.schema import DATA_FILE, MANIFEST_FILE, ROW_COLUMNS, SPLITS

if TYPE_CHECKING:
    from goldenkit.cases import Case


_BOM = b"\xef\xbb\xbf"
# The ASCII whitespace stripped from both ends of a line: space, tab, LF, VT, FF, CR.
_WS_BYTES = b" \t\n\x0b\x0c\r"
_IS_WS = np.zeros(256, dtype=bool)
_IS_WS[list(_WS_BYTES)] = True
_ROW_KEYS = frozenset(ROW_COLUMNS)
_SPLIT_SET = frozenset(SPLITS)
# How many problems a DatasetError lists in ``problems`` (the message shows the first).
_MAX_PROBLEMS = 50


# --------------------------------------------------------------------------- lines and hash


@dataclass(frozen=True)
class _Lines:
    """The non-empty lines of a file: stripped byte spans and 1-based line numbers."""

    starts: np.ndarray  # int64, start offset of each stripped line
    ends: np.ndarray  # int64, end offset (exclusive)
    numbers: np.ndarray  # int64, 1-based physical line number (counting LFs)
    clean: bool  # every line is "text\n" back to back: no blank lines, no stripped bytes
    lf: np.ndarray  # int64, offset of every LF in the file


_SCAN_CHUNK = 1 << 20
_PARALLEL_SCAN = 16 << 20


def _find_lf(buf: np.ndarray) -> np.ndarray:
    """Offsets of every LF byte in ``buf``.

    Large buffers are scanned in two halves on two threads (numpy releases the GIL).
    """
    if len(buf) < _PARALLEL_SCAN:
        return _find_lf_serial(buf)
    half = len(buf) // 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(_find_lf_serial, (buf[:half], buf[half:]))
    return np.concatenate([first, second + half])


def _find_lf_serial(buf: np.ndarray) -> np.ndarray:
    """Offsets of every LF byte, scanning 1 MiB at a time (the mask stays in cache)."""
    if len(buf) <= _SCAN_CHUNK:
        return np.flatnonzero(buf == 10)
    mask = np.empty(_SCAN_CHUNK, dtype=bool)
    parts = []
    for at in range(0, len(buf), _SCAN_CHUNK):
        part = buf[at : at + _SCAN_CHUNK]
        m = mask[: len(part)]
        np.equal(part, 10, out=m)
        parts.append(np.flatnonzero(m) + at)
    return np.concatenate(parts)


def _scan_lines(data: bytes) -> _Lines:
    """Split ``data`` on LF, strip ASCII whitespace from each line and keep the non-empty ones.

    Vectorized with numpy: one pass finds the LFs; stripping then only looks at the
    bytes next to each line's ends, repeating while any line still starts or ends
    with whitespace (so the work is proportional to the whitespace, not the file).
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    n = len(buf)
    lf = _find_lf(buf)
    starts = np.empty(len(lf) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = lf + 1
    ends = np.empty(len(lf) + 1, dtype=np.int64)
    ends[:-1] = lf
    ends[-1] = n
    stripped = False
    # Leading whitespace.
    active = np.flatnonzero(starts < ends)
    while len(active):
        active = active[_IS_WS[buf[starts[active]]]]
        if not len(active):
            break
        stripped = True
        starts[active] += 1
        active = active[starts[active] < ends[active]]
    # Trailing whitespace.
    active = np.flatnonzero(starts < ends)
    while len(active):
        active = active[_IS_WS[buf[ends[active] - 1]]]
        if not len(active):
            break
        stripped = True
        ends[active] -= 1
        active = active[starts[active] < ends[active]]
    keep = starts < ends
    numbers = np.flatnonzero(keep) + 1
    starts = starts[keep]
    ends = ends[keep]
    # "Clean": the lines tile the file as line + LF with nothing in between, so the
    # byte range [starts[i], starts[i+1]) is exactly line i plus its LF.
    clean = (
        not stripped
        and len(starts) > 0
        and n > 0
        and data[-1:] == b"\n"
        and int(starts[0]) == 0
        and len(numbers) == len(lf)  # one non-empty line per LF: no blank lines
    )
    return _Lines(starts=starts, ends=ends, numbers=numbers, clean=bool(clean), lf=lf)


def _compact(data: bytes, lines: _Lines) -> np.ndarray:
    """The file rewritten as each stripped line + LF, in file order (for non-clean files).

    Vectorized: each line keeps its stripped bytes and the LF that ends it; every
    other byte (CRs, stripped whitespace, blank lines) is deleted in one numpy call.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends = lines.starts, lines.ends
    if int(lines.numbers[-1]) > len(lines.lf):  # the last line has no LF: give it one
        buf = np.append(buf, np.uint8(10))
        lf = np.append(lines.lf, len(buf) - 1)
    else:
        lf = lines.lf
    own_lf = lf[lines.numbers - 1]  # the LF that ends each line
    # Gaps, in file order: before the first line; per line, between its end and its
    # LF and between its LF and the next line's start; after the last LF.
    gap_starts = np.empty(2 * len(starts) + 1, dtype=np.int64)
    gap_ends = np.empty_like(gap_starts)
    gap_starts[0], gap_ends[0] = 0, starts[0]
    gap_starts[1::2], gap_ends[1::2] = ends, own_lf
    gap_starts[2::2] = own_lf + 1
    gap_ends[2:-1:2] = starts[1:]
    gap_ends[-1] = len(buf)
    gap_lens = gap_ends - gap_starts
    keep = gap_lens > 0
    gap_starts, gap_lens = gap_starts[keep], gap_lens[keep]
    if not len(gap_lens):
        return buf
    # Indices of every byte in the gaps, without a Python loop.
    shift = gap_starts - np.concatenate(([0], np.cumsum(gap_lens)[:-1]))
    doomed = np.arange(int(gap_lens.sum()), dtype=np.int64) + np.repeat(shift, gap_lens)
    return np.delete(buf, doomed)


# Sorting lines by their bytes, vectorized. After skipping a prefix all lines
# share, each round compares a 21-byte window of every still-tied line as three
# integer keys. A key holds 7 content bytes (big-endian, zero past the line's
# end) and, in its low byte, how many bytes the line has left in that window
# (0..7) or 8 when it goes on: so "ab" < "ab\0" < "ab\1" as bytes. Lines still
# tied after _SORT_ROUNDS rounds (long shared prefixes) are finished with
# Python's bytes comparison, tie group by tie group.
_KEY_BYTES = 7
_KEYS_PER_ROUND = 3
_SORT_ROUNDS = 3
_PREFIX_STEPS = 8
_TOP_BYTES_MASK = np.array([((1 << (8 * r)) - 1) << (8 * (8 - r)) for r in range(8)], dtype=np.uint64)


def _window_view(data: bytes) -> np.ndarray:
    """A view of ``data`` as big-endian uint64 starting at every byte offset (no copy)."""
    return np.ndarray(shape=(len(data) - 7,), dtype=">u8", buffer=data, strides=(1,))


def _keys_at(words: np.ndarray, starts: np.ndarray, lens: np.ndarray, k: int) -> np.ndarray:
    """Sort keys of the lines (starts, lens) for the 7 bytes at offset ``k`` (see above)."""
    last = len(words) - 1
    pos = starts + k
    if int(pos.max()) <= last:
        w = words[pos].astype(np.uint64)
    else:
        # Near the end of the buffer the window moves left: shift the wanted bytes back up.
        clamped = np.minimum(pos, last)
        w = words[clamped].astype(np.uint64)
        w <<= np.minimum(pos - clamped, 7).astype(np.uint64) * np.uint64(8)
    rem = lens - k
    if int(rem.min()) > _KEY_BYTES:  # every line goes on past this window
        w &= _TOP_BYTES_MASK[_KEY_BYTES]
        w |= np.uint64(8)
        return w
    w &= _TOP_BYTES_MASK[np.clip(rem, 0, _KEY_BYTES)]
    w |= np.clip(rem, 0, 8).astype(np.uint64)
    return w


def _sort_order(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Permutation of the lines (starts, ends) that sorts them by their bytes."""
    n = len(starts)
    lens = ends - starts
    if n < 2 or len(data) < 16:
        items = [data[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        return np.asarray(sorted(range(n), key=items.__getitem__), dtype=np.int64)
    words = _window_view(data)
    # Skip a prefix every line shares (JSONL rows all start with '{"id": "' or alike).
    k = 0
    for _ in range(_PREFIX_STEPS):
        key = _keys_at(words, starts, lens, k)
        if key.min() != key.max() or int(key[0]) & 0xFF != 8:
            break
        k += _KEY_BYTES
    order = np.arange(n, dtype=np.int64)  # order[j] = line at sorted position j
    segment = np.zeros(n, dtype=np.int64)  # first sorted position of j's tie group
    active = np.arange(n, dtype=np.int64)  # sorted positions still tied with a neighbour
    for round_no in range(_SORT_ROUNDS):
        if not len(active):
            break
        lines = order[active]
        s, ln = starts[lines], lens[lines]
        keys = [_keys_at(words, s, ln, k + j * _KEY_BYTES) for j in range(_KEYS_PER_ROUND)]
        going_on = (keys[-1] & np.uint64(0xFF)) == 8
        # A key equal on every active line orders nothing: leave it out of the sort.
        varying = [key for key in keys if key.min() != key.max()]
        seg = segment[active]
        sort_keys = varying[::-1] + ([seg] if round_no else [])
        if sort_keys:
            perm = np.lexsort(sort_keys)
            lines, seg, going_on = lines[perm], seg[perm], going_on[perm]
            varying = [key[perm] for key in varying]
            order[active] = lines
        new = np.zeros(len(active), dtype=bool)
        new[0] = True
        new[1:] = seg[1:] != seg[:-1]
        for key in varying:
            new[1:] |= key[1:] != key[:-1]
        seg = np.maximum.accumulate(np.where(new, active, 0))
        segment[active] = seg
        bounds = np.flatnonzero(new)
        sizes = np.diff(np.append(bounds, len(active)))
        k += _KEYS_PER_ROUND * _KEY_BYTES
        # Still tied: in a group of 2+ and the line goes on past the window.
        active = active[(np.repeat(sizes, sizes) > 1) & going_on]
    if len(active):
        # Long shared prefixes: finish each tie group with Python's bytes comparison.
        seg = segment[active]
        bounds = np.flatnonzero(np.diff(seg)) + 1
        for group in np.split(active, bounds):
            lines = order[group]
            tails = [data[a + k : b] for a, b in zip(starts[lines].tolist(), ends[lines].tolist(), strict=True)]
            order[group] = lines[sorted(range(len(lines)), key=tails.__getitem__)]
    return order


def _hash_lines(data: bytes, lines: _Lines, chunks: int = 8) -> str:
    """SHA-256 of the lines in byte order, each followed by LF.

    The sorted bytes are gathered by pyarrow ``take`` from a zero-copy binary array
    whose values are "line + LF" (a compacted copy of the file when it has blank
    lines, CRs or other stripped whitespace), in chunks, each hashed on a worker
    thread while the next is gathered (both release the GIL).
    """
    h = hashlib.sha256()
    n = len(lines.starts)
    if not n:
        return h.hexdigest()
    order = _sort_order(data, lines.starts, lines.ends)
    if lines.clean:
        source = memoryview(data)
        offsets = np.empty(n + 1, dtype=np.int64)
        offsets[:-1] = lines.starts
        offsets[-1] = len(data)
    else:
        source = _compact(data, lines).data
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lines.ends - lines.starts + 1, out=offsets[1:])
    # Lines already in order in the file form runs hashed straight from the buffer
    # (a file written sorted needs no copy at all).
    run_starts = np.flatnonzero(np.diff(order) != 1) + 1
    if len(run_starts) < n // 16:
        view = source
        bounds = [0, *run_starts.tolist(), n]
        for a, b in itertools.pairwise(bounds):
            h.update(view[int(offsets[order[a]]) : int(offsets[order[b - 1] + 1])])
        return h.hexdigest()
    values = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(source)])
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = []
        for part in np.array_split(order, max(1, min(chunks, n // 1000))):
            taken = values.take(pa.array(part))
            offs = np.frombuffer(taken.buffers()[1], dtype=np.int64)[taken.offset : taken.offset + len(taken) + 1]
            chunk = memoryview(taken.buffers()[2])[int(offs[0]) : int(offs[-1])]
            pending.append(pool.submit(h.update, chunk))
        for f in pending:
            f.result()
    return h.hexdigest()


def canonical_sha256(data: bytes) -> str:
    """The canonical content hash of a JSONL file's bytes (see the module docstring).

    >>> canonical_sha256(b'{"b":1}\\r\\n{"a":2}\\n\\n') == canonical_sha256(b'{"a":2}\\n{"b":1}')
    True
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    return _hash_lines(data, _scan_lines(data))


# --------------------------------------------------------------------------- the Dataset


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated dataset.

    ``rows`` is a DataFrame with the columns id, slice, tags, split, source,
    added, case (``case`` holds the raw case dict, ``tags`` a list). ``sha256``
    is the canonical hash of the whole file (a :meth:`subset` keeps its parent's
    name, version and hash: it identifies the dataset the rows were drawn from).
    ``manifest`` is the parsed dataset.json (``{}`` when there is none);
    ``case_format`` is the declared case shape, or ``None`` (detected per row).
    """

    name: str
    version: str | None
    sha256: str
    path: Path
    manifest: dict[str, Any]
    case_format: str | None
    rows: pd.DataFrame
    data_path: Path | None = field(default=None, repr=False)
    _line_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    _raw: bytes = field(default=b"", repr=False)
    _spans: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64), repr=False)
    _positions: dict[str, int] = field(default_factory=dict, repr=False)
    _cases: dict[str, Case] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> list[str]:
        """Row ids in row order."""
        return self.rows["id"].tolist()

    def _position(self, row_id: str) -> int:
        if not self._positions and len(self.rows):
            self._positions.update({rid: i for i, rid in enumerate(self.rows["id"].tolist())})
        try:
            return self._positions[row_id]
        except KeyError:
            raise DatasetError(f'no row with id "{row_id}"', path=str(self.data_path or self.path)) from None

    def line_number(self, row_id: str) -> int | None:
        """The 1-based line of ``row_id`` in the dataset file (None when unknown)."""
        pos = self._position(row_id)
        if len(self._line_numbers) > pos:
            return int(self._line_numbers[pos])
        return None

    def raw_line(self, row_id: str) -> bytes:
        """The row's original line (stripped of surrounding whitespace and the line end)."""
        pos = self._position(row_id)
        if len(self._spans) <= pos:
            raise DatasetError(f'row "{row_id}": original line not available', path=str(self.path))
        s, e = self._spans[pos]
        return self._raw[int(s) : int(e)]

    def case(self, row_id: str) -> Case:
        """The row's case normalized to :class:`goldenkit.cases.Case` (cached).

        A case that cannot be normalized is a DatasetError naming file:line.
        """
        cached = self._cases.get(row_id)
        if cached is not None:
            return cached
        from goldenkit.formats import normalize_case  # lazy: formats sits beside this module

        pos = self._position(row_id)
        raw = self.rows["case"].iat[pos]
        where = str(self.data_path or self.path)
        line = self.line_number(row_id)
        try:
            case = normalize_case(raw, self.case_format, row_id=row_id)
        except DatasetError as exc:
            if exc.path is not None:
                raise
            raise DatasetError(f'row "{row_id}": {exc.detail}', path=where, line=line) from exc
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise DatasetError(f'row "{row_id}": cannot read case: {exc!r}', path=where, line=line) from exc
        self._cases[row_id] = case
        return case

    def subset(self, ids_or_rows: Iterable[str] | pd.DataFrame | pd.Series) -> Dataset:
        """A Dataset holding only the given rows (by id, or a DataFrame with an ``id`` column).

        Rows come in the order given (a set gives the dataset's order). An unknown
        id is a DatasetError. The subset keeps this dataset's name, version and
        sha256: they identify the dataset the rows were drawn from.
        """
        if isinstance(ids_or_rows, pd.DataFrame):
            ids = ids_or_rows["id"].tolist()
        elif isinstance(ids_or_rows, (set, frozenset)):
            wanted = set(ids_or_rows)
            ids = [rid for rid in self.rows["id"].tolist() if rid in wanted]
            missing = wanted.difference(ids)
            if missing:
                self._position(sorted(missing)[0])
        else:
            ids = list(ids_or_rows)
        positions = np.fromiter((self._position(rid) for rid in ids), dtype=np.int64, count=len(ids))
        if len(set(ids)) != len(ids):
            dup = next(rid for rid, n in pd.Series(ids).value_counts().items() if n > 1)
            raise DatasetError(f'subset names id "{dup}" twice', path=str(self.path))
        rows = self.rows.take(positions).reset_index(drop=True)
        return replace(
            self,
            rows=rows,
            _line_numbers=self._line_numbers[positions] if len(self._line_numbers) else self._line_numbers,
            _spans=self._spans[positions] if len(self._spans) else self._spans,
            _positions={},
            _cases={rid: c for rid, c in self._cases.items() if rid in set(ids)},
        )


# --------------------------------------------------------------------------- manifest


def _read_manifest(path: Path) -> dict[str, Any]:
    """Read and validate dataset.json; every problem names the file."""
    where = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read manifest: {exc.strerror or exc}", path=where) from None
    if raw.startswith(_BOM):
        raise DatasetError("file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM", path=where)
    try:
        manifest = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        line = _json_error_line(exc)
        raise DatasetError(f"invalid JSON: {_json_error_text(exc)}", path=where, line=line) from None
    if not isinstance(manifest, dict):
        raise DatasetError(f"manifest must be a JSON object, got {_json_type(manifest)}", path=where)
    for key in ("name", "version"):
        value = manifest.get(key)
        if key not in manifest:
            raise DatasetError(f'manifest has no "{key}"', path=where)
        if not isinstance(value, str) or not value.strip():
            raise DatasetError(f'"{key}" must be a non-empty string, got {_json_repr(value)}', path=where)
    changelog = manifest.get("changelog")
    if "changelog" not in manifest:
        raise DatasetError('manifest has no "changelog" (a list of {version, date, why})', path=where)
    if not isinstance(changelog, list) or not changelog:
        raise DatasetError(
            f'"changelog" must be a non-empty list of {{version, date, why}}, got {_json_repr(changelog)}', path=where
        )
    seen: dict[str, int] = {}
    prev_date: date | None = None
    for i, entry in enumerate(changelog):
        at = f"changelog[{i}]"
        if not isinstance(entry, dict):
            raise DatasetError(f"{at} must be an object with version, date, why", path=where)
        for key in ("version", "date", "why"):
            value = entry.get(key)
            if not isinstance(value, str) or not value.strip():
                raise DatasetError(f'{at}: "{key}" must be a non-empty string, got {_json_repr(value)}', path=where)
        try:
            day = date.fromisoformat(entry["date"])
        except ValueError:
            raise DatasetError(
                f'{at}: "date" must be YYYY-MM-DD, got {_json_repr(entry["date"])}', path=where
            ) from None
        if len(entry["date"]) != 10:
            raise DatasetError(f'{at}: "date" must be YYYY-MM-DD, got {_json_repr(entry["date"])}', path=where)
        if entry["version"] in seen:
            raise DatasetError(
                f'{at}: version "{entry["version"]}" already in changelog[{seen[entry["version"]]}]', path=where
            )
        seen[entry["version"]] = i
        if prev_date is not None and day < prev_date:
            raise DatasetError(
                f"{at}: date {entry['date']} is earlier than the entry before it "
                "(the changelog is append-only, oldest first)",
                path=where,
            )
        prev_date = day
    if changelog[-1]["version"] != manifest["version"]:
        raise DatasetError(
            f'version is "{manifest["version"]}" but the last changelog entry is "{changelog[-1]["version"]}" '
            "(append an entry for the new version)",
            path=where,
        )
    case_format = manifest.get("case_format")
    if case_format is not None and case_format not in CASE_SHAPES:
        raise DatasetError(
            f'"case_format" must be one of {", ".join(CASE_SHAPES)}, got {_json_repr(case_format)}', path=where
        )
    default_split = manifest.get("default_split")
    if default_split is not None and default_split not in SPLITS:
        raise DatasetError(f'"default_split" must be "dev" or "holdout", got {_json_repr(default_split)}', path=where)
    return manifest


# --------------------------------------------------------------------------- rows


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _json_repr(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_error_text(exc: orjson.JSONDecodeError) -> str:
    """orjson's reason and column (the caller names the file and line)."""
    return f"{exc.msg} at column {exc.colno}"


def _json_error_line(exc: orjson.JSONDecodeError) -> int | None:
    return exc.lineno


def _diagnose_line(line: bytes) -> str:
    """Why one line is not a JSON object (called only for a line that failed to parse)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = line[exc.start : exc.start + 1].hex()
        return f"invalid UTF-8 byte 0x{bad} at column {exc.start + 1} (the file must be UTF-8)"
    if line.startswith(_BOM):
        return "byte-order mark (BOM) at the start of the line; save the file as UTF-8 without BOM"
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return f"invalid JSON: {_json_error_text(exc)}"
    return "invalid JSON"


class _Problems:
    """Problems found in a file, reported in line order."""

    def __init__(self, where: str, numbers: np.ndarray) -> None:
        self.where = where
        self.numbers = numbers
        self.items: list[tuple[int, str]] = []

    def add(self, index: int, message: str) -> None:
        self.items.append((int(self.numbers[index]), message))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        self.items.sort(key=lambda t: t[0])
        line, message = self.items[0]
        more = len(self.items) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''}; `goldenkit dataset validate` lists them)"
        err = DatasetError(message, path=self.where, line=line)
        err.problems = [  # type: ignore[attr-defined]
            f"{self.where}:{ln}: {msg}" for ln, msg in self.items[:_MAX_PROBLEMS]
        ]
        err.problem_count = len(self.items)  # type: ignore[attr-defined]
        raise err


def _parse_rows(data: bytes, lines: _Lines, problems: _Problems) -> list[Any]:
    """orjson-parse every line; failures are recorded (with the reason) and parsing continues."""
    loads = orjson.loads
    mv = memoryview(data)
    starts = lines.starts.tolist()
    ends = lines.ends.tolist()
    try:  # the fast path: every line parses
        return list(map(loads, map(mv.__getitem__, map(slice, starts, ends))))
    except orjson.JSONDecodeError:
        pass
    objs: list[Any] = []
    for i, (s, e) in enumerate(zip(starts, ends, strict=True)):
        try:
            objs.append(loads(mv[s:e]))
        except orjson.JSONDecodeError:
            problems.add(i, _diagnose_line(bytes(mv[s:e])))
            objs.append(None)
    return objs


class _Missing:
    """Marks a key absent from a row (``null`` is a value: it means "not set")."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _column(objs: list[dict[str, Any]], key: str) -> list[Any]:
    """``[o.get(key, _MISSING) for o in objs]``, at C speed."""
    return list(map(dict.get, objs, itertools.repeat(key), itertools.repeat(_MISSING)))


def _types(values: Iterable[Any]) -> set[type]:
    return set(map(type, values))


def _positions(values: list[Any], ok_types: frozenset[type]) -> list[int]:
    """Positions whose value's type is not in ``ok_types``."""
    return [i for i, v in enumerate(values) if type(v) not in ok_types]


_STR = frozenset({str})
_OPTIONAL_STR = frozenset({str, type(None), _Missing})
_OPTIONAL_LIST = frozenset({list, type(None), _Missing})
_DICT = frozenset({dict})
_LIST = frozenset({list})


_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError)
_GET_CASE = operator.itemgetter("case")
_GET_TAGS = operator.itemgetter("tags")
_STRING = pa.large_string()
_ROW_STRUCT = pa.struct(
    [(key, _STRING) for key in ("id", "slice", "split", "source", "added")] + [("tags", pa.list_(_STRING))]
)


def _fast_rows(objs: list[Any]) -> pd.DataFrame | None:
    """The rows DataFrame when every row is valid and has all seven keys, else None.

    The common case, checked in few passes over the rows: every row holds exactly
    the seven known keys (a length pass and a subset pass), one pyarrow struct
    conversion reads the six small fields of every dict in C++ and doubles as
    their type check, and the checks that remain run on Arrow arrays. Anything
    unusual (an absent optional key, a null, any problem) returns None, and the
    caller runs :func:`_validate_rows`, which names every problem.
    """
    n = len(objs)
    try:  # a row that is not a dict raises TypeError
        if sum(map(len, objs)) != len(ROW_COLUMNS) * n or not all(map(_ROW_KEYS.issuperset, objs)):
            return None  # a key missing or unknown somewhere (with no unknown key, 7 per row means all 7)
    except TypeError:
        return None
    cases = list(map(_GET_CASE, objs))
    tags = list(map(_GET_TAGS, objs))
    # (pyarrow would read a string as a list of characters, hence the type check of tags.)
    if _types(cases) != _DICT or _types(tags) != _LIST:
        return None
    try:
        table = pa.array(objs, type=_ROW_STRUCT)
    except _ARROW_ERRORS:
        return None
    fields = {key: table.field(key) for key in ("id", "slice", "split", "source", "added", "tags")}
    if any(fields[key].null_count for key in ("id", "slice", "split", "tags")):
        return None
    ids = fields["id"]
    # id: not empty, not only whitespace (utf8_is_space is str.isspace), unique.
    if n and (pc.min(pc.utf8_length(ids)).as_py() == 0 or pc.any(pc.utf8_is_space(ids)).as_py()):
        return None
    if pc.count_distinct(ids).as_py() != n:
        return None
    distinct_slices = pc.unique(fields["slice"]).to_pylist()
    if "" in distinct_slices or any(map(str.isspace, distinct_slices)):
        return None
    if not set(pc.unique(fields["split"]).to_pylist()) <= _SPLIT_SET:
        return None
    flat_tags = fields["tags"].flatten()
    if flat_tags.null_count:
        return None
    distinct_tags = pc.unique(flat_tags).to_pylist()
    if "" in distinct_tags or any(map(str.isspace, distinct_tags)):
        return None
    index = pd.RangeIndex(n)
    return pd.DataFrame(
        {
            "id": pd.array(ids, dtype="str"),
            "slice": pd.array(fields["slice"], dtype="str"),
            "tags": pd.Series(tags, dtype=object, index=index),
            "split": pd.array(fields["split"], dtype="str"),
            "source": pd.array(fields["source"], dtype="str"),
            "added": pd.array(fields["added"], dtype="str"),
            "case": pd.Series(cases, dtype=object, index=index),
        },
        index=index,
    )


def _validate_rows(objs: list[Any], problems: _Problems, default_split: str | None) -> dict[str, list[Any]]:
    """Check every row and return the columns. Problems are recorded (not raised), one per row.

    Each check runs over whole columns with C-level set/map operations, and walks
    the rows one by one only when a column is known to hold a problem, to name them.
    """
    n = len(objs)
    failed: set[int] = set()

    def bad(i: int, message: str) -> None:
        if i not in failed:
            failed.add(i)
            problems.add(i, message)

    if _types(objs) != {dict}:
        for i, o in enumerate(objs):
            if o is None:  # unparseable line, already recorded
                failed.add(i)
            elif type(o) is not dict:
                bad(i, f"a row must be a JSON object, got {_json_type(o)}")
        objs = [o if type(o) is dict else {} for o in objs]

    columns = {key: _column(objs, key) for key in ROW_COLUMNS}
    missing = {key: values.count(_MISSING) for key, values in columns.items()}

    # Unknown keys: a row has one iff it holds more keys than the known ones it has.
    known_present = len(ROW_COLUMNS) * n - sum(missing.values())
    if sum(map(len, objs)) != known_present:
        allowed = ", ".join(ROW_COLUMNS)
        for i, o in enumerate(objs):
            extra = [k for k in o if k not in _ROW_KEYS]
            if extra:
                bad(i, f'unknown key "{extra[0]}" (a row has {allowed}; put other data inside "case")')

    def required_str(key: str) -> list[Any]:
        values = columns[key]
        if _types(values) != _STR:
            for i, v in enumerate(values):
                if type(v) is str:
                    continue
                if v is None or v is _MISSING:
                    bad(i, f'missing "{key}"')
                else:
                    bad(i, f'"{key}" must be a string, got {_json_type(v)} {_json_repr(v)}')
                values[i] = None
        distinct = set(values)
        distinct.discard(None)
        if "" in distinct or any(map(str.isspace, distinct)):
            for i, v in enumerate(values):
                if v is not None and not v.strip():
                    bad(i, f'empty "{key}"')
        return values

    ids = required_str("id")
    slices = required_str("slice")

    splits = columns["split"]
    if _types(splits) != _STR or not set(splits) <= _SPLIT_SET:
        for i, v in enumerate(splits):
            if (v is None or v is _MISSING) and default_split is not None:
                splits[i] = default_split
            elif v is None or v is _MISSING:
                bad(i, 'missing "split" (must be "dev" or "holdout"; or set "default_split" in dataset.json)')
            elif type(v) is not str or v not in _SPLIT_SET:
                bad(i, f'"split" must be "dev" or "holdout", got {_json_repr(v)}')

    tags = columns["tags"]
    tag_types = _types(tags)
    if tag_types != {list}:
        if not tag_types <= _OPTIONAL_LIST:
            for i in _positions(tags, _OPTIONAL_LIST):
                bad(i, f'"tags" must be a list of strings, got {_json_type(tags[i])} {_json_repr(tags[i])}')
                tags[i] = None
        tags = [[] if t is None or t is _MISSING else t for t in tags]
    flat = list(itertools.chain.from_iterable(tags))
    if flat and (_types(flat) != _STR or "" in (distinct := set(flat)) or any(map(str.isspace, distinct))):
        for i, v in enumerate(tags):
            for t in v:
                if type(t) is not str:
                    bad(i, f'"tags" must be a list of strings, found {_json_type(t)} {_json_repr(t)}')
                    break
                if not t.strip():
                    bad(i, 'empty string in "tags"')
                    break

    for key in ("source", "added"):
        values = columns[key]
        value_types = _types(values)
        if value_types != _STR:
            if not value_types <= _OPTIONAL_STR:
                for i in _positions(values, _OPTIONAL_STR):
                    bad(i, f'"{key}" must be a string, got {_json_type(values[i])} {_json_repr(values[i])}')
            columns[key] = [v if type(v) is str else None for v in values]

    cases = columns["case"]
    if _types(cases) != _DICT:
        for i in _positions(cases, _DICT):
            v = cases[i]
            bad(
                i,
                'missing "case"'
                if v is None or v is _MISSING
                else f'"case" must be a JSON object, got {_json_type(v)}',
            )
            cases[i] = {}

    # Duplicate ids: a set tells whether there are any; only then walk the rows.
    present = [v for v in ids if v is not None] if None in ids else ids
    if len(set(present)) != len(present):
        first_seen: dict[str, int] = {}
        for i, v in enumerate(ids):
            if v is None:
                continue
            if v in first_seen:
                bad(i, f'duplicate id "{v}" (first on line {int(problems.numbers[first_seen[v]])})')
            else:
                first_seen[v] = i

    return {
        "id": ids,
        "slice": slices,
        "tags": tags,
        "split": splits,
        "source": columns["source"],
        "added": columns["added"],
        "case": cases,
    }


def _str_column(values: list[Any]) -> pd.api.extensions.ExtensionArray:
    """A pandas ``str`` column via pyarrow (about 3x faster than letting pandas convert)."""
    return pd.array(pa.array(values, type=pa.large_string()), dtype="str")


def _rows_frame(columns: dict[str, list[Any]]) -> pd.DataFrame:
    n = len(columns["id"])
    index = pd.RangeIndex(n)
    return pd.DataFrame(
        {
            "id": _str_column(columns["id"]),
            "slice": _str_column(columns["slice"]),
            "tags": pd.Series(columns["tags"], dtype=object, index=index),
            "split": _str_column(columns["split"]),
            "source": _str_column(columns["source"]),
            "added": _str_column(columns["added"]),
            "case": pd.Series(columns["case"], dtype=object, index=index),
        },
        index=index,
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while building many containers.

    Parsing 100,000 rows creates over a million dicts and lists, all kept alive.
    With the collector on, its passes re-traverse them again and again (parsing
    runs about 3x slower); re-enabled as is, the next allocation would traverse
    all of them as "young" objects once more. So on the way out, the new objects
    are moved straight to the oldest generation (``freeze`` then ``unfreeze``,
    which moves objects without traversing them), where long-lived data belongs
    and where the normal schedule of full collections will see them. Nothing is
    lost or leaked: cyclic garbage that existed before is in the oldest
    generation too and is collected as usual. When the application has frozen
    objects itself (``gc.freeze``), they are left alone and the collector is
    simply re-enabled.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _read_rows(data: bytes, where: str, default_split: str | None) -> tuple[str, pd.DataFrame, _Lines]:
    """Validate the bytes of a dataset.jsonl; return (sha256, rows, lines).

    The hash (sort and SHA-256, which release the GIL) runs on a worker thread
    while this thread parses and validates the rows.
    """
    if data.startswith(_BOM):
        raise DatasetError(
            "file starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM", path=where, line=1
        )
    lines = _scan_lines(data)
    if not len(lines.starts):
        raise DatasetError("empty dataset: no rows", path=where)
    problems = _Problems(where, lines.numbers)
    with ThreadPoolExecutor(max_workers=1) as pool:
        hashing = pool.submit(_hash_lines, data, lines)
        with _gc_paused():
            objs = _parse_rows(data, lines, problems)
            rows = _fast_rows(objs) if not problems.items else None
            if rows is None:
                columns = _validate_rows(objs, problems, default_split)
                if problems.items:
                    hashing.cancel()
                    problems.raise_if_any()
                rows = _rows_frame(columns)
            del objs
        sha = hashing.result()
    return sha, rows, lines


def read_dataset(path: str | Path) -> Dataset:
    """Read, validate and hash a dataset folder (dataset.jsonl + dataset.json) or a .jsonl file.

    Every problem is a :class:`~goldenkit.errors.DatasetError` whose message names
    ``file:line``; when a file has several, the first (by line) is in the message
    and up to 50 are in the exception's ``problems`` list.
    """
    p = Path(path)
    if p.is_dir():
        data_path = p / DATA_FILE
        manifest_path: Path | None = p / MANIFEST_FILE
        if not data_path.is_file():
            raise DatasetError(f"dataset folder has no {DATA_FILE}", path=str(p))
        if not manifest_path.is_file():  # type: ignore[union-attr]
            raise DatasetError(f"dataset folder has no {MANIFEST_FILE} (name, version, changelog)", path=str(p))
    elif p.is_file():
        data_path = p
        sibling = p.with_name(MANIFEST_FILE)
        manifest_path = sibling if p.name == DATA_FILE and sibling.is_file() else None
    elif not p.exists():
        raise DatasetError("no such dataset file or folder", path=str(p))
    else:
        raise DatasetError("not a dataset file or folder", path=str(p))

    manifest = _read_manifest(manifest_path) if manifest_path is not None else {}
    try:
        data = data_path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror or exc}", path=str(data_path)) from None
    sha, rows, lines = _read_rows(data, str(data_path), manifest.get("default_split"))
    name = manifest.get("name") or (p.name if p.is_dir() else p.stem)
    return Dataset(
        name=name,
        version=manifest.get("version"),
        sha256=sha,
        path=p,
        manifest=manifest,
        case_format=manifest.get("case_format"),
        rows=rows,
        data_path=data_path,
        _line_numbers=lines.numbers,
        _raw=data,
        _spans=np.column_stack([lines.starts, lines.ends]),
    )


def rows_to_jsonl(rows: Sequence[dict[str, Any]]) -> bytes:
    """Serialize row dicts as JSONL bytes (one compact JSON object per line, LF)."""
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


__all__ = ["DATA_FILE", "MANIFEST_FILE", "Dataset", "canonical_sha256", "read_dataset", "rows_to_jsonl"]
