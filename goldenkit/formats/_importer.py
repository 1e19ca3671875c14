"""Import a foreign eval file into a goldenkit dataset folder.

:func:`import_dataset` writes ``dataset.jsonl`` (one row per case:
``{id, slice, tags, split, source, added, case}``) and ``dataset.json``
(``{name, version, changelog, case_format, imported_from}``).

Formats and what lands in each row's ``case``:

=============  =====================================================================  ===========
format         source files                                                           case shape
=============  =====================================================================  ===========
adk            ``*.evalset.json`` / ``*.test.json`` (EvalSet, legacy A, legacy B),    adk
               or a folder of them (searched recursively); a conversation-
               scenarios file (``{"scenarios": [...]}``): one scenario case each
vertex         eval ``.json`` (records, one record, ``eval_cases``, column frame),     vertex
               ``.jsonl``, ``.csv``
golden         java-ai-golden JSONL (``#`` comments skipped; manifest beside it)      contract
openai-evals   ``samples.jsonl`` (``.gz`` too), or a folder of them (recursively)      contract
inspect        inspect_ai samples ``.jsonl`` / ``.json`` / ``.csv``                   contract
=============  =====================================================================  ===========

Import is lossless: ADK and Vertex records are stored as written (ADK cases
gain ``criteria`` and ``criteria_source``; legacy ADK records are converted to
EvalCase dicts with the legacy record under ``original``); golden rows are
contract cases as they stand; openai-evals and inspect samples are converted
to contract cases with the sample under ``original``. Every case is
normalized once while importing, so a case goldenkit cannot read is refused
here, with the file and line or position, rather than at run time.

ADK criteria: ``test_config.json`` beside each test file is copied into every
case's ``criteria`` (``criteria_source: "test_config.json"``); without one, ADK's
default ``{"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}`` is
used and ``criteria_source`` says ``"default"``. ``criteria=`` (``--criteria FILE``)
names an ADK eval config read instead (:mod:`goldenkit.formats._eval_config`):
every case gets its criteria, ``criteria_source`` is the file's name, and the
manifest records the file's name and SHA-256.

Slices: ``slice`` names a field when any record has it (dotted paths such as
``expect.layer`` or ``metadata.category`` reach into objects) and each row's
slice is then that field's value (a row without it is an error); otherwise
``slice`` is the literal slice of every row. The default is the file's stem
(``roll_die`` for ``roll_die.test.json``; the folder name for a file named
``samples.jsonl``).

Tags derived from each normalized case: ``multi_turn`` (more than one user
turn), ``tool_use`` (expected tool calls), ``refusal`` (expect.refusal is
true), ``red`` (a red/adversarial golden row), ``simulated_user`` (an ADK or
Vertex scenario replayed as its opening turn).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit.errors import DatasetError, InputError
from goldenkit.formats._adk import read_adk, read_test_config
from goldenkit.formats._common import LFS_POINTER_PREFIX, decode_text, line_of
from goldenkit.formats._contract import read_golden, read_golden_manifest
from goldenkit.formats._eval_config import EvalCriteria, read_eval_config
from goldenkit.formats._import_manifest import import_manifest, stem as file_stem
from goldenkit.formats._inspect import read_inspect
from goldenkit.formats._normalize import normalize_case
from goldenkit.formats._openai_evals import read_openai_evals
from goldenkit.formats._vertex import read_vertex
from goldenkit.records import Case
from goldenkit.schema import DATA_FILE, MANIFEST_FILE

#: Import formats and the case shape each one writes.
IMPORT_FORMATS: dict[str, str] = {
    "adk": "adk",
    "vertex": "vertex",
    "golden": "contract",
    "openai-evals": "contract",
    "inspect": "contract",
}
_FORMAT_ALIASES = {
    "openai_evals": "openai-evals",
    "openai": "openai-evals",
    "evals": "openai-evals",
    "inspect_ai": "inspect",
    "inspect-ai": "inspect",
    "java-ai-golden": "golden",
    "contract": "golden",
}
_SPLITS = ("dev", "holdout")


@dataclass
class _Record:
    """One imported case before it becomes a row."""

    id: str
    case: dict[str, Any]
    file: str  # the source file's name (relative to the source folder for folder imports)
    line: int | None  # 1-based line in that file, when the format is line-based
    where: str  # position for messages when there is no line ("eval_cases[2]", "index 0")
    record: Any  # the record as written, for slice-field lookup
    default_slice: str

    def at(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else f"{self.file} {self.where}".rstrip()


def import_dataset(
    src: str | Path,
    out_dir: str | Path,
    fmt: str,
    *,
    slice: str | None = None,  # noqa: A002 - the CLI option's name
    split: str | None = None,
    source: str | None = None,
    name: str | None = None,
    added: str | None = None,
    overwrite: bool = False,
    criteria: EvalCriteria | str | Path | None = None,
) -> Path:
    """Turn a foreign eval file (or folder, for adk and openai-evals) into a dataset folder.

    ``slice`` is a field name (dotted paths allowed) or a literal slice name;
    ``split`` is ``dev`` (default) or ``holdout``; ``source`` (default: the source
    file's name) is written into every row; ``name`` overrides the dataset name;
    ``added`` (default: today, UTC) is every row's ``added`` date. The output
    folder must not already hold a dataset unless ``overwrite``. Returns the
    output folder. Raises :class:`~goldenkit.errors.DatasetError` (naming file and
    line or position) on any record goldenkit cannot read, and on duplicate ids.
    ``criteria`` (adk only): an ADK eval config (a path, or :func:`~goldenkit.formats._eval_config.read_eval_config`'s
    result) whose criteria every case gets in place of a ``test_config.json`` beside its file.
    """
    src = Path(src)
    out = Path(out_dir)
    fmt_key, split, added = _checked_options(src, out, fmt, split, added, overwrite)
    shape = IMPORT_FORMATS[fmt_key]
    if criteria is not None and fmt_key != "adk":
        raise InputError(f"--criteria (an ADK eval config) applies to --format adk, not {fmt_key}")
    if criteria is not None and not isinstance(criteria, EvalCriteria):
        criteria = read_eval_config(criteria)
    records, imported_from, golden_manifest = _read_files(src, fmt_key, criteria)
    _check_unique(records)
    slice_field = _slice_field(slice, records)
    rows = _rows(records, shape, slice, slice_field, split=split, source=source, added=added)
    imported_from["slice"] = {"field": slice_field} if slice_field else {"name": slice or "file stem (default)"}

    manifest = import_manifest(
        src, fmt_key, shape, name, added=added, golden=golden_manifest, imported_from=imported_from
    )
    out.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    (out / DATA_FILE).write_text(body, encoding="utf-8", newline="\n")
    (out / MANIFEST_FILE).write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8", newline="\n"
    )
    return out


def _checked_options(
    src: Path, out: Path, fmt: str, split: str | None, added: str | None, overwrite: bool
) -> tuple[str, str, str]:
    """The format key, the split and the added date, each checked, before anything is read."""
    fmt_key = _FORMAT_ALIASES.get(fmt.lower(), fmt.lower()) if isinstance(fmt, str) else fmt
    if fmt_key not in IMPORT_FORMATS:
        raise InputError(f"unknown import format {fmt!r} (expected one of {', '.join(IMPORT_FORMATS)})")
    split = split or "dev"
    if split not in _SPLITS:
        raise InputError(f"split must be dev or holdout, got {split!r}")
    if not src.exists():
        raise InputError(f"{src}: no such file or folder")
    if not overwrite and ((out / DATA_FILE).exists() or (out / MANIFEST_FILE).exists()):
        raise InputError(f"{out}: already holds a dataset (pass overwrite to replace it)")
    added = added or datetime.now(UTC).date().isoformat()
    try:
        if len(added) != 10:
            raise ValueError(added)
        date.fromisoformat(added)
    except ValueError:
        raise InputError(f"added must be a date YYYY-MM-DD, got {added!r}") from None
    return fmt_key, split, added


def _read_files(
    src: Path, fmt_key: str, criteria: EvalCriteria | None = None
) -> tuple[list[_Record], dict[str, Any], dict[str, Any] | None]:
    """Every record of the source files, the provenance of each file, and a golden manifest if one is beside them."""
    records: list[_Record] = []
    imported_from: dict[str, Any] = {"format": fmt_key, "source": src.name, "files": []}
    golden_manifest: dict[str, Any] | None = None
    for path, rel in _source_files(src, fmt_key):
        if path.name.endswith((".lz4", ".zst")):
            raise DatasetError(
                "is lz4/zstd-compressed; decompress it first (gzip .gz files are read as they are)", path=rel
            )
        data = path.read_bytes()
        _refuse_lfs_pointer(data, rel)
        file_info: dict[str, Any] = {"file": rel, "sha256": hashlib.sha256(data).hexdigest()}
        if path.suffix == ".gz":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise DatasetError(f"cannot decompress: {exc}", path=rel) from None
            _refuse_lfs_pointer(data, rel)
        new, notes = _read(fmt_key, path, rel, data, criteria)
        if fmt_key == "golden":
            golden_manifest = read_golden_manifest(path)
            if golden_manifest is not None:
                notes["manifest"] = golden_manifest
        file_info["records"] = len(new)
        file_info.update(notes)
        imported_from["files"].append(file_info)
        records.extend(new)
    return records, imported_from, golden_manifest


def _rows(
    records: list[_Record],
    shape: str,
    slice_arg: str | None,
    slice_field: str | None,
    *,
    split: str,
    source: str | None,
    added: str,
) -> list[dict[str, Any]]:
    """One dataset row per record, its case normalized once (a case goldenkit cannot read is refused here)."""
    rows = []
    for rec in records:
        case = _normalize(rec, shape)
        rows.append(
            {
                "id": rec.id,
                "slice": _slice_of(rec, slice_arg, slice_field),
                "tags": _tags(case),
                "split": split,
                "source": source or rec.file.rsplit("/", 1)[-1],
                "added": added,
                "case": rec.case,
            }
        )
    return rows


# --- reading -------------------------------------------------------------------------------------


def _source_files(src: Path, fmt: str) -> list[tuple[Path, str]]:
    """The files to read, with names relative to the source (folder) for messages and provenance."""
    if src.is_file():
        return [(src, src.name)]
    if fmt == "adk":
        found = sorted(
            p for p in src.rglob("*.json") if p.name.endswith((".test.json", ".evalset.json")) and p.is_file()
        )
    elif fmt == "openai-evals":
        found = sorted(p for p in src.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    else:
        raise InputError(f"{src}: is a folder; the {fmt} importer reads one file")
    if not found:
        raise InputError(f"{src}: no {fmt} files in this folder")
    return [(p, p.relative_to(src).as_posix()) for p in found]


def _refuse_lfs_pointer(data: bytes, rel: str) -> None:
    if data.startswith(LFS_POINTER_PREFIX):
        oid = re.search(rb"oid sha256:([0-9a-f]{64})", data)
        size = re.search(rb"size (\d+)", data)
        what = ""
        if oid:
            what = f" (oid sha256:{oid.group(1).decode()[:12]}…"
            what += f", {size.group(1).decode()} bytes)" if size else ")"
        raise DatasetError(
            f"is a Git LFS pointer file{what}, not the data; fetch the real file (git lfs pull) and import that",
            path=rel,
        )


def _default_slice(path: Path, rel: str) -> str:
    stem = file_stem(rel)
    if stem == "samples" and path.parent.name:
        return path.parent.name
    return stem


def _read(
    fmt: str, path: Path, rel: str, data: bytes, criteria: EvalCriteria | None = None
) -> tuple[list[_Record], dict[str, Any]]:
    """The records of one source file (messages name ``rel``), and notes for the manifest."""
    default = _default_slice(path, rel)
    shown = Path(rel)
    readers: dict[str, Callable[[Path, Path, str, bytes, str], tuple[list[_Record], dict[str, Any]]]] = {
        "adk": functools.partial(_read_adk, criteria=criteria),
        "vertex": _read_vertex,
        "golden": _read_golden,
        "openai-evals": _read_openai,
        "inspect": _read_inspect,
    }
    try:
        return readers[fmt](path, shown, rel, data, default)
    except DatasetError as exc:
        if exc.path is None:
            raise DatasetError(exc.detail, path=rel, line=exc.line) from None
        raise


def _read_adk(
    path: Path, shown: Path, rel: str, data: bytes, default: str, criteria: EvalCriteria | None = None
) -> tuple[list[_Record], dict[str, Any]]:
    cases, kind, header = read_adk(shown, data)
    out = [
        _Record(eval_id, dict(case), rel, None, where, case.get("original", case), default)
        for eval_id, case, where in cases
    ]
    if criteria is not None:  # an eval config in place of test_config.json, which is then not read
        notes: dict[str, Any] = {"kind": kind, **criteria.stamp([rec.case for rec in out])}
    else:
        found, source = read_test_config(path)
        for rec in out:
            rec.case["criteria"], rec.case["criteria_source"] = dict(found), source
        notes = {"kind": kind, "criteria": found, "criteria_source": source}
    if header:
        notes["eval_set"] = header  # the EvalSet's own fields (id, name, description, timestamp)
    return out, notes


def _read_vertex(path: Path, shown: Path, rel: str, data: bytes, default: str) -> tuple[list[_Record], dict[str, Any]]:
    out = [_Record(rid, rec, rel, line_of(where), where, rec, default) for rid, rec, where in read_vertex(shown, data)]
    return out, {}


def _read_golden(path: Path, shown: Path, rel: str, data: bytes, default: str) -> tuple[list[_Record], dict[str, Any]]:
    out = [_Record(rid, row, rel, line, "", row, default) for rid, row, line in read_golden(shown, data)]
    text = decode_text(data, rel)
    comments = [
        {"line": n, "text": line.rstrip("\r")}
        for n, line in enumerate(text.split("\n"), start=1)
        if line.strip().startswith("#")
    ]
    return out, {"comments": comments} if comments else {}


def _read_openai(path: Path, shown: Path, rel: str, data: bytes, default: str) -> tuple[list[_Record], dict[str, Any]]:
    cases, notes = read_openai_evals(shown, decode_text(data, rel), default)
    return [_Record(rid, case, rel, line, "", case["original"], default) for rid, case, line in cases], notes


def _read_inspect(path: Path, shown: Path, rel: str, data: bytes, default: str) -> tuple[list[_Record], dict[str, Any]]:
    cases, notes = read_inspect(shown, decode_text(data, rel), default, base_dir=path.parent)
    out = [_Record(rid, case, rel, line_of(where), where, case["original"], default) for rid, case, where in cases]
    return out, notes


# --- rows ----------------------------------------------------------------------------------------


def _check_unique(records: list[_Record]) -> None:
    seen: dict[str, _Record] = {}
    for rec in records:
        if not rec.id.strip():
            raise DatasetError(f"{rec.where + ': ' if rec.line is None and rec.where else ''}empty id", path=rec.file)
        if rec.id in seen:
            first = seen[rec.id]
            msg = f'duplicate id "{rec.id}" (first at {first.at()})'
            if rec.line is None:
                msg = f"{rec.where}: {msg}" if rec.where else msg
            raise DatasetError(msg, path=rec.file, line=rec.line)
        seen[rec.id] = rec


def _normalize(rec: _Record, shape: str) -> Case:
    try:
        return normalize_case(rec.case, shape, row_id=rec.id)
    except DatasetError as exc:
        msg = exc.detail if rec.line is not None or not rec.where else f"{rec.where}: {exc.detail}"
        raise DatasetError(msg, path=rec.file, line=rec.line) from None


def _lookup(obj: Any, dotted: str) -> tuple[bool, Any]:
    """``(found, value)`` for a field or dotted path inside a record."""
    if isinstance(obj, Mapping) and dotted in obj:
        return True, obj[dotted]
    cur = obj
    for part in dotted.split("."):
        if isinstance(cur, str) and cur.strip()[:1] == "{":
            try:
                cur = json.loads(cur)
            except json.JSONDecodeError:
                return False, None
        if not isinstance(cur, Mapping) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _find(rec: _Record, field: str) -> tuple[bool, Any]:
    found, value = _lookup(rec.record, field)
    if not found:
        found, value = _lookup(rec.case, field)
    return found, value


def _slice_field(slice_arg: str | None, records: list[_Record]) -> str | None:
    if not slice_arg:
        return None
    return slice_arg if any(_find(r, slice_arg)[0] for r in records) else None


def _slice_of(rec: _Record, slice_arg: str | None, field: str | None) -> str:
    if field is None:
        return slice_arg or rec.default_slice
    found, value = _find(rec, field)
    if not found or value is None or value == "":
        raise DatasetError(
            f'{rec.where + ": " if rec.line is None and rec.where else ""}case "{rec.id}" has no value '
            f'for the slice field "{field}"',
            path=rec.file,
            line=rec.line,
        )
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DatasetError(
            f'case "{rec.id}": slice field "{field}" must be a string or number, got {type(value).__name__}',
            path=rec.file,
            line=rec.line,
        )
    return str(value)


def _tags(case: Case) -> list[str]:
    tags = []
    if len(case.turns) > 1:
        tags.append("multi_turn")
    if any(t.expected_tools for t in case.turns) or case.expect.get("tools"):
        tags.append("tool_use")
    if case.expect.get("refusal") is True:
        tags.append("refusal")
    if case.expect.get("red") is True:
        tags.append("red")
    if "simulated_user" in case.criteria:
        tags.append("simulated_user")
    return tags


__all__ = ["IMPORT_FORMATS", "import_dataset"]

publish(globals())
