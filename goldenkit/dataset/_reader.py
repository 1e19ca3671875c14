"""The :class:`Dataset` record and :func:`read_dataset`, which reads, checks and hashes a dataset;
:func:`validate_dataset`, which lists every problem of its rows and cases in one pass."""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import orjson

from goldenkit._registry import publish
from goldenkit.dataset._lines import Lines, sha256_of_lines, split_lines
from goldenkit.dataset._manifest import read_manifest
from goldenkit.dataset._problems import BOM, BOM_MESSAGE, Problems
from goldenkit.dataset._rows import FRAME_COLUMNS, check_rows, rows_frame
from goldenkit.errors import DatasetError
from goldenkit.schema import DATA_FILE, MANIFEST_FILE

if TYPE_CHECKING:
    import pandas as pd

    from goldenkit.records import Case


@dataclass(frozen=True, eq=False)
class Dataset:
    """A validated dataset.

    ``rows`` is a DataFrame with the columns id, slice, tags, split, source,
    added (``tags`` a list), built from the validated columns the first time it
    is asked for (a run reads those columns through :meth:`column`, so running a
    dataset does not import pandas). A row's case is not a column:
    :meth:`raw_case` parses it from the row's line (a fresh dict on every call)
    and :meth:`case` normalizes it. ``sha256`` is the canonical hash of the whole
    file (a :meth:`subset` keeps its parent's name, version and hash: it
    identifies the dataset the rows were drawn from). ``manifest`` is the parsed
    dataset.json (``{}`` when there is none); ``case_format`` is the declared
    case shape, or ``None`` (detected per row).

    Besides the rows it keeps each row's line as read (stripped of surrounding
    whitespace, for :meth:`raw_line` and :meth:`raw_case`) and its line number.
    """

    name: str
    version: str | None
    sha256: str
    path: Path
    manifest: dict[str, Any]
    case_format: str | None
    _columns: dict[str, list[Any]] = field(repr=False)  # FRAME_COLUMNS -> values in row order
    data_path: Path | None = field(default=None, repr=False)
    _line_numbers: list[int] = field(default_factory=list, repr=False)
    _lines: list[bytes] = field(default_factory=list, repr=False)  # each row's line, in row order
    _positions: dict[str, int] = field(default_factory=dict, repr=False)
    _cases: dict[str, Case] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self._columns["id"])

    @functools.cached_property
    def rows(self) -> pd.DataFrame:
        """The rows as a DataFrame (built on first access; strings as pandas ``str``, ``tags`` lists)."""
        return rows_frame(self._columns)

    @property
    def ids(self) -> list[str]:
        """Row ids in row order."""
        return self.column("id")

    def column(self, name: str) -> list[Any]:
        """One column of the rows as a new list, in row order (``name`` one of FRAME_COLUMNS; a missing
        ``source`` or ``added`` is None here, NaN in :attr:`rows`)."""
        try:
            return list(self._columns[name])
        except KeyError:
            raise KeyError(f"no row column {name!r} (columns: {', '.join(FRAME_COLUMNS)})") from None

    def with_tags(self, tags: Sequence[list[str]]) -> Dataset:
        """The same dataset with every row's tags replaced by ``tags`` (in row order)."""
        if len(tags) != len(self):
            raise ValueError(f"{len(tags)} tag lists for {len(self)} rows")
        return replace(self, _columns={**self._columns, "tags": [list(t) for t in tags]})

    def _position(self, row_id: str) -> int:
        if not self._positions and len(self):
            self._positions.update({rid: i for i, rid in enumerate(self._columns["id"])})
        try:
            return self._positions[row_id]
        except KeyError:
            raise DatasetError(f'no row with id "{row_id}"', path=str(self.data_path or self.path)) from None

    def line_number(self, row_id: str) -> int | None:
        """The 1-based line of ``row_id`` in the dataset file (None when unknown)."""
        pos = self._position(row_id)
        return self._line_numbers[pos] if pos < len(self._line_numbers) else None

    def raw_line(self, row_id: str) -> bytes:
        """The row's original line (stripped of surrounding whitespace and the line end)."""
        pos = self._position(row_id)
        if pos >= len(self._lines):
            raise DatasetError(f'row "{row_id}": original line not available', path=str(self.path))
        return self._lines[pos]

    def raw_case(self, row_id: str) -> dict[str, Any]:
        """The row's case as written (parsed from its line: a fresh dict on every call).

        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "d.jsonl"
        >>> _ = f.write_text('{"id": "a", "slice": "s", "split": "dev", "case": {"prompt": "hi"}}\\n')
        >>> read_dataset(f).raw_case("a")
        {'prompt': 'hi'}
        """
        case: dict[str, Any] = orjson.loads(self.raw_line(row_id))["case"]
        return case

    def case(self, row_id: str) -> Case:
        """The row's case normalized to :class:`goldenkit.records.Case` (cached).

        A case that cannot be normalized is a DatasetError naming file:line.
        """
        cached = self._cases.get(row_id)
        if cached is not None:
            return cached
        try:
            case = normalized_case(self.raw_case(row_id), self.case_format, row_id)
        except DatasetError as exc:
            if exc.path is not None:
                raise
            raise self._case_error(row_id, exc.detail) from exc
        self._cases[row_id] = case
        return case

    def _case_error(self, row_id: str, why: str) -> DatasetError:
        where = str(self.data_path or self.path)
        return DatasetError(f'row "{row_id}": {why}', path=where, line=self.line_number(row_id))

    def subset(self, ids_or_rows: Iterable[str] | pd.DataFrame | pd.Series) -> Dataset:
        """A Dataset holding only the given rows (by id, or a DataFrame with an ``id`` column).

        Rows come in the order given (a set gives the dataset's order). An unknown
        id is a DatasetError. The subset keeps this dataset's name, version and
        sha256: they identify the dataset the rows were drawn from.
        """
        if isinstance(ids_or_rows, (set, frozenset)):
            wanted = set(ids_or_rows)
            ids = [rid for rid in self._columns["id"] if rid in wanted]
            missing = wanted.difference(ids)
            if missing:
                self._position(sorted(missing)[0])
        else:
            ids = list(ids_or_rows["id"] if _is_frame(ids_or_rows) else ids_or_rows)
        positions = [self._position(rid) for rid in ids]
        if len(set(ids)) != len(ids):
            dup = next(rid for rid, n in Counter(ids).items() if n > 1)
            raise DatasetError(f'subset names id "{dup}" twice', path=str(self.path))
        kept = set(ids)
        return replace(
            self,
            _columns={name: [values[p] for p in positions] for name, values in self._columns.items()},
            _line_numbers=[self._line_numbers[p] for p in positions] if self._line_numbers else [],
            _lines=[self._lines[p] for p in positions] if self._lines else [],
            _positions={},
            _cases={rid: c for rid, c in self._cases.items() if rid in kept},
        )


def normalized_case(
    raw: dict[str, Any], case_format: str | None, row_id: str, unknown: list[str] | None = None
) -> Case:
    """A row's case normalized (``unknown`` as in :func:`goldenkit.formats.normalize_case`); a problem is a
    DatasetError whose detail does not name the row (the caller names it with its file and line)."""
    from goldenkit.formats import normalize_case  # lazy: formats sits beside this package

    try:
        return normalize_case(raw, case_format, row_id=row_id, unknown=unknown)
    except DatasetError as exc:
        if exc.path is not None:
            raise
        raise DatasetError(exc.detail.removeprefix(f'case "{row_id}": ')) from exc
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise DatasetError(f"cannot read case: {exc!r}") from exc


def _is_frame(obj: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``obj`` is a pandas DataFrame (there can be one only once pandas is imported)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(obj, pandas.DataFrame)


def _dataset_files(p: Path) -> tuple[Path, Path | None]:
    """(the JSONL file, its manifest or None) of a dataset folder or file."""
    if p.is_dir():
        data_path, manifest_path = p / DATA_FILE, p / MANIFEST_FILE
        if not data_path.is_file():
            raise DatasetError(f"dataset folder has no {DATA_FILE}", path=str(p))
        if not manifest_path.is_file():
            raise DatasetError(f"dataset folder has no {MANIFEST_FILE} (name, version, changelog)", path=str(p))
        return data_path, manifest_path
    if p.is_file():
        sibling = p.with_name(MANIFEST_FILE)
        return p, sibling if p.name == DATA_FILE and sibling.is_file() else None
    if not p.exists():
        raise DatasetError("no such dataset file or folder", path=str(p))
    raise DatasetError("not a dataset file or folder", path=str(p))


@dataclass(frozen=True)
class _Source:
    """A dataset's files, read and split into lines, before its rows are checked."""

    path: Path
    data_path: Path
    manifest: dict[str, Any]
    lines: Lines

    def check_rows(self) -> tuple[dict[str, list[Any]], Problems]:
        """The checked columns, and every problem of every row."""
        problems = Problems(str(self.data_path), self.lines.numbers)
        return check_rows(self.lines, problems, self.manifest.get("default_split")), problems

    def dataset(self, columns: dict[str, list[Any]]) -> Dataset:
        p, manifest = self.path, self.manifest
        return Dataset(
            name=manifest.get("name") or (p.name if p.is_dir() else p.stem),
            version=manifest.get("version"),
            sha256=sha256_of_lines(self.lines.texts),
            path=p,
            manifest=manifest,
            case_format=manifest.get("case_format"),
            _columns=columns,
            data_path=self.data_path,
            _line_numbers=self.lines.numbers,
            _lines=self.lines.texts,
        )


def _read_source(path: str | Path) -> _Source:
    """The files of a dataset; a problem of the files themselves (none, a bad manifest, a BOM, no rows) raises."""
    p = Path(path)
    data_path, manifest_path = _dataset_files(p)
    manifest = read_manifest(manifest_path) if manifest_path is not None else {}
    try:
        data = data_path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror or exc}", path=str(data_path)) from None
    if data.startswith(BOM):
        raise DatasetError(BOM_MESSAGE, path=str(data_path), line=1)
    lines = split_lines(data)
    if not lines.texts:
        raise DatasetError("empty dataset: no rows", path=str(data_path))
    return _Source(p, data_path, manifest, lines)


def read_dataset(path: str | Path) -> Dataset:
    """Read, validate and hash a dataset folder (dataset.jsonl + dataset.json) or a .jsonl file.

    Every problem is a :class:`~goldenkit.errors.DatasetError` whose message names
    ``file:line``; when a file has several, the first (by line) is in the message
    and up to 50 are in the exception's ``problems`` list. Cases are normalized
    when asked for (:meth:`Dataset.case`); :func:`validate_dataset` checks them all.
    """
    source = _read_source(path)
    columns, problems = source.check_rows()
    problems.raise_if_any()
    return source.dataset(columns)


@dataclass(frozen=True)
class Validation:
    """What :func:`validate_dataset` found: ``problems`` (``file:line: row "ID": ...``, in line order), the
    ``dataset`` (None when a row has a problem) and every case that normalized, by row id."""

    problems: list[str]
    dataset: Dataset | None
    cases: dict[str, Case]


def validate_dataset(path: str | Path) -> Validation:
    """Every problem of every row in one pass: the row's own (every field, ids, keys written twice) and
    its case's (each unknown ``expect`` key, then what keeps the case from normalizing), each naming
    ``file:line`` and the row's id. A problem of the files themselves raises, as in :func:`read_dataset`.

    A row whose fields have problems still has its case checked, when the case is an object and the
    row has an id. (:func:`read_dataset` stays the fast path: it normalizes no case.)
    """
    source = _read_source(path)
    columns, problems = source.check_rows()
    dataset = None if problems.items else source.dataset(columns)
    case_format = source.manifest.get("case_format")
    cases: dict[str, Case] = {}
    for i, line in enumerate(source.lines.texts):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # already a problem of its row
        row_id, raw = (obj.get("id"), obj.get("case")) if type(obj) is dict else (None, None)
        if type(row_id) is not str or not row_id.strip() or type(raw) is not dict:
            continue
        found: list[str] = []
        try:
            cases[row_id] = normalized_case(raw, case_format, row_id, found)
        except DatasetError as exc:
            found.append(exc.detail if exc.path is None else str(exc))
        for problem in found:
            problems.add(i, problem, row_id)
    return Validation(problems.listed(), dataset, cases)


def rows_to_jsonl(rows: Sequence[dict[str, Any]]) -> bytes:
    """Serialize row dicts as JSONL bytes (one compact JSON object per line, LF)."""
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


publish(globals())
