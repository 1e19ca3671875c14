"""outcomes.parquet: the outcome schema in Arrow, records to tables, the Parquet writer and reader.

Free-form nested JSON columns (``trajectory``) are kept as JSON text, so every
run has the same schema; Parquet is written one row group per batch of records,
so a run of millions of outcomes is written in flat memory. Every outcome is stored as
in ``outcomes.jsonl`` (:func:`goldenkit.results.stored_outcome`: the text for people
scrubbed), and every string written has the secret values in use masked
(:func:`mask_table`): the data of record is never rewritten otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, NotRequired, Union, get_args, get_origin, is_typeddict

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from goldenkit._files import replaced_together
from goldenkit._registry import publish
from goldenkit._scrub import current_scope, mask_secrets_value
from goldenkit._text import one_line
from goldenkit.errors import ResultsError
from goldenkit.results._jsonl import stored_outcome
from goldenkit.schema import JSON_TEXT, OUTCOME_FIELDS, outcome_hints

_ORJSON_JSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY

_SCALARS: dict[Any, pa.DataType] = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}


def arrow_type(hint: Any) -> pa.DataType:
    """The Arrow type of a field of the outcome model (:class:`goldenkit.schema.Outcome`), every value nullable:
    a number, text or flag as itself, a list of text as a list, a record (a TypedDict) as a struct of its fields
    in order, a map of names as a map, and a field marked :data:`goldenkit.schema.JSON_TEXT` (free-form nested
    JSON: the trajectory, a result's findings) as JSON text, so every run has the same schema."""
    if get_origin(hint) is NotRequired:  # a field older records lack
        return arrow_type(get_args(hint)[0])
    if get_origin(hint) is Annotated:
        return pa.string() if JSON_TEXT in get_args(hint)[1:] else arrow_type(get_args(hint)[0])
    if get_origin(hint) in (Union, UnionType):
        kinds = [a for a in get_args(hint) if a is not type(None)]
        if len(kinds) != 1:
            raise TypeError(f"outcome model: {hint} is not one type (mark free-form JSON with JSON_TEXT)")
        return arrow_type(kinds[0])
    if hint in _SCALARS:
        return _SCALARS[hint]
    if is_typeddict(hint):
        return pa.struct([(name, arrow_type(h)) for name, h in outcome_hints(hint).items()])
    origin, args = get_origin(hint), get_args(hint)
    if origin is list:
        return pa.list_(arrow_type(args[0]))
    if origin is dict and args[0] is str:
        return pa.map_(pa.string(), arrow_type(args[1]))
    raise TypeError(f"outcome model: no Arrow type for {hint}")


# The outcome schema in Arrow, derived field by field from the model (goldenkit.schema.Outcome). Its free-form
# nested JSON columns (the trajectory; tool args of any shape) are JSON text, decoded on read.
OUTCOME_SCHEMA = pa.schema([(name, arrow_type(hint)) for name, hint in outcome_hints().items()])
JSON_COLUMNS = tuple(
    name for name, hint in outcome_hints().items() if get_origin(hint) is Annotated and JSON_TEXT in get_args(hint)
)


_ALL_FIELDS = operator.itemgetter(*OUTCOME_FIELDS)


def _columns(records: Sequence[dict[str, Any]]) -> list[Sequence[Any]]:
    """The records' values column by column, in :data:`OUTCOME_FIELDS` order (a missing field is None)."""
    try:  # every field present (what the runner writes): one C-level pick per record, then transpose
        return list(zip(*map(_ALL_FIELDS, records), strict=True)) if records else [() for _ in OUTCOME_FIELDS]
    except KeyError:  # a record without some field (written by hand or by an older version)
        return [[rec.get(name) for rec in records] for name in OUTCOME_FIELDS]


def _json_cell(value: Any) -> str | None:
    if value is None:
        return None
    if value == []:  # most trajectories: no tool calls
        return "[]"
    return orjson.dumps(value, default=str, option=_ORJSON_JSON).decode()


def _grades(cell: Any) -> list[tuple[str, Any]] | None:
    """A graders cell as Arrow map items, each result's findings as JSON text."""
    if cell is None:
        return None
    items = list(cell.items())
    for i, (name, g) in enumerate(items):
        found = g.get("findings") if isinstance(g, dict) else None
        if found is not None and not isinstance(found, str):  # only failing results carry findings
            items[i] = (name, {**g, "findings": _json_cell(found)})
    return items


def outcomes_table(records: Sequence[dict[str, Any]]) -> pa.Table:
    """Outcome records as an Arrow table with :data:`OUTCOME_SCHEMA` (JSON columns encoded)."""
    arrays = {}
    for name, values in zip(OUTCOME_FIELDS, _columns(records), strict=True):
        if name in JSON_COLUMNS:
            values = [_json_cell(v) for v in values]
        elif name == "graders":
            values = [_grades(v) for v in values]
        elif name == "usage":
            values = [None if v is None else list(v.items()) for v in values]
        arrays[name] = pa.array(values, type=OUTCOME_SCHEMA.field(name).type)
    return pa.table(arrays)


def _strings(arr: pa.Array) -> list[pa.Array]:
    """The string arrays inside ``arr`` (itself, or the children of a list, struct or map)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return [arr]
    if pa.types.is_map(t):
        return _strings(arr.keys) + _strings(arr.items)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _strings(arr.flatten())
    if pa.types.is_struct(t):
        return [s for i in range(t.num_fields) for s in _strings(arr.field(i))]
    return []


def _holds_one(arrays: list[pa.Array], known: tuple[str, ...]) -> bool:
    """Whether any string in ``arrays`` holds one of the ``known`` secrets: a vectorized search
    over all of them at once."""
    strings = [a.cast(pa.string()) for arr in arrays for a in _strings(arr) if a.null_count < len(a)]
    if not strings:
        return False
    joined = pa.concat_arrays(strings)
    return any(pc.any(pc.match_substring(joined, v)).as_py() for v in known)


def mask_table(table: pa.Table) -> pa.Table:
    """``table`` with the secret values in use masked in its strings (:func:`goldenkit._scrub.mask_secrets`).

    The strings are searched for the known values in Arrow, all columns at once; only when one
    occurs is each column searched, and a column where one does is converted to Python and masked.
    """
    scope = current_scope()
    known = tuple(scope.values) if scope is not None else ()
    if not known or not _holds_one([c for col in table.columns for c in col.chunks], known):
        return table
    for i, name in enumerate(table.column_names):
        column = table.column(i)
        if _holds_one(column.chunks, known):
            clean = pa.array(mask_secrets_value(column.to_pylist(), scope), type=column.type)
            table = table.set_column(i, name, clean)
    return table


#: Outcomes per Parquet row group.
ROW_GROUP = 10_000

#: Outcome records handed to :func:`write_parquet_batches` at a time (the runner reads its
#: outcomes back this many at a time): about 3 MB of records as Python dicts; their Arrow
#: tables, a few hundred bytes an outcome, are gathered into row groups of :data:`ROW_GROUP`.
RECORD_BATCH = 1_000


def write_parquet(records: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write the outcome records to ``path`` (atomically) as Parquet."""
    write_parquet_batches((records[i : i + RECORD_BATCH] for i in range(0, len(records), RECORD_BATCH)), path)


def write_parquet_batches(
    batches: Iterable[Sequence[dict[str, Any]]], path: str | Path, *, row_group: int = ROW_GROUP
) -> int:
    """Write outcome records arriving in batches to ``path`` as Parquet, in row groups of ``row_group`` outcomes
    (batches are gathered until at least that many wait; the last group holds the rest), secrets masked.

    Only one batch of records is in memory at a time, beside the Arrow tables of
    the row group being gathered, so a run of millions of outcomes is written in
    flat memory. The file appears whole or not at all (:func:`goldenkit._files.replaced_together`):
    an exception while writing leaves no file behind. Returns
    the number of records written.
    """
    written = 0
    with replaced_together(path) as (tmp,), pq.ParquetWriter(tmp, OUTCOME_SCHEMA, compression="zstd") as pw:
        gathered: list[pa.Table] = []
        for batch in batches:
            if batch:
                gathered.append(mask_table(outcomes_table([stored_outcome(r) for r in batch])))
                written += len(batch)
            if sum(t.num_rows for t in gathered) >= row_group:
                _write_group(pw, gathered)
        _write_group(pw, gathered)
    return written


def _write_group(pw: pq.ParquetWriter, gathered: list[pa.Table]) -> None:
    """Write the gathered tables as one row group and empty the list."""
    if gathered:
        table = pa.concat_tables(gathered)
        pw.write_table(table, row_group_size=max(table.num_rows, 1))
        gathered.clear()


def read_parquet(path: Path, cols: Sequence[str], dictionary: Sequence[str] = ()) -> pa.Table:
    """The ``cols`` of an outcomes.parquet (those in ``dictionary`` dictionary-encoded); a column added
    since it was written (``ttft_ms``) comes back null. A file that cannot be read (cut short, bytes
    changed, not Parquet) is a :class:`ResultsError` naming it."""
    try:  # a ParquetFile, not pq.read_table (which builds a dataset around the file: 2-3 times slower a run)
        present = set(pq.read_schema(path).names)
        wanted = [c for c in cols if c in present]
        with pq.ParquetFile(path, read_dictionary=[c for c in dictionary if c in present]) as file:
            table = file.read(columns=wanted)
    except (pa.ArrowException, OSError) as exc:  # a bad footer, page or compressed block; ArrowIOError is OSError
        raise ResultsError(f"{path}: unreadable (cut short or corrupt): {one_line(exc, 160)}") from None
    for c in cols:
        if c not in present:
            table = table.append_column(OUTCOME_SCHEMA.field(c), pa.nulls(table.num_rows, OUTCOME_SCHEMA.field(c).type))
    graders = OUTCOME_SCHEMA.field("graders")
    if "graders" in wanted and table.schema.field("graders").type != graders.type:  # written before findings
        table = table.set_column(table.schema.get_field_index("graders"), graders, table["graders"].cast(graders.type))
    return table.select(list(cols))


__all__ = [
    "OUTCOME_SCHEMA",
    "RECORD_BATCH",
    "ROW_GROUP",
    "mask_table",
    "outcomes_table",
    "read_parquet",
    "write_parquet",
    "write_parquet_batches",
]

publish(globals())
