"""inspect_ai dataset samples (JSONL, JSON, CSV) as contract cases.

Records are read as inspect_ai's ``json_dataset`` / ``csv_dataset`` read them:

* ``.jsonl``: one JSON object a line (blank lines are skipped); ``.json``: a
  list of records or one record; ``.csv``: ``csv.DictReader`` (every cell is a
  string; an empty cell is missing; ``metadata`` and ``sandbox`` cells holding
  JSON are parsed).
* Field names: ``input`` (else ``question``, else ``prompt``) and ``target``
  (else ``answer``, else ``ideal``), so files that need inspect's
  ``FieldSpec(input="question", target="answer")`` (biology_qa) import as they are.
* ``input``: a non-empty string or chat messages (role system/user/assistant/tool;
  a missing or unknown role is an error).
* ``target``: None/missing -> no answer; a list -> its items as strings;
  anything else -> ``str(target)``.
* ``choices``: a list (empty items dropped), or a string split on ``,`` (or on
  whitespace when that yields a single item).
* ``id``: kept as a string; a record without one gets ``<name>-<n>`` (n = its
  1-based position, as inspect's ``auto_id`` numbers samples).
* ``metadata``: a dict, or a JSON string holding one.
* Images: a ``ContentImage`` part (``{"type": "image", "image": ...}``) of a chat
  input goes with its message (:mod:`goldenkit.formats._contract_build`). A URL or
  data URI is kept; a file name is read now, relative to the samples file as
  inspect resolves it, and embedded as a data URI, so the dataset carries the
  image and a run reads no file. A missing file is an error naming the line.

Mapping to the contract shape: the input as described in
:mod:`goldenkit.formats._contract_build`; the targets are the answers (short
answers -> ``expect.must_contain_any`` + ``reference``, long ones ->
``reference``). A multiple-choice sample (``choices``) is rendered as inspect's
``multiple_choice`` solver would ask it: the question, then the lettered
choices (``A) ...``), then an instruction to answer ``ANSWER: <letter>``; the
target letters become ``expect.regex`` (one pattern per correct letter) and
the correct choices' texts the ``reference``. ``choices`` and ``metadata``
(parsed) are kept on the case; every column, including ones inspect would drop
(``label``, ``extra``, ``sandbox``), stays in ``original``.
"""

from __future__ import annotations

import csv
import io
import json
import mimetypes
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldenkit.errors import DatasetError
from goldenkit.formats._common import is_missing, json_object_line, lenient_json, line_of, maybe_json
from goldenkit.formats._contract_build import answers_to_contract, input_to_contract, short_answers
from goldenkit.records import ImagePart

INPUT_FIELDS = ("input", "question", "prompt")
TARGET_FIELDS = ("target", "answer", "ideal")
MCQ_INSTRUCTION = "Answer with the letter of the correct choice, on a line of the form 'ANSWER: <letter>'."


def read_inspect(
    path: Path, text: str, prefix: str, *, base_dir: Path | None = None
) -> tuple[list[tuple[str, dict[str, Any], str]], dict[str, Any]]:
    """Cases of an inspect_ai samples file as ``(id, contract case, where)``, and notes for the manifest.

    ``base_dir``: the folder image file paths are relative to (the samples file's; default:
    ``path``'s folder).
    """
    records = _records(path, text)
    folder = base_dir if base_dir is not None else path.parent
    embedded = 0
    if not records:
        raise DatasetError("no samples", path=path.name)
    input_field = _pick(records, INPUT_FIELDS)
    if input_field is None:
        raise DatasetError(
            f"no input column (looked for {', '.join(INPUT_FIELDS)})", path=path.name, line=line_of(records[0][0])
        )
    target_field = _pick(records, TARGET_FIELDS)
    prepared = []
    for where, rec, original in records:
        try:
            prepared.append((where, rec, original, _answers(rec.get(target_field) if target_field else None)))
        except ValueError as exc:
            raise DatasetError(str(exc), path=path.name, line=line_of(where)) from None
    has_choices = any(not is_missing(rec.get("choices")) for _, rec, _, _ in prepared)
    short = short_answers([a for _, rec, _, a in prepared if is_missing(rec.get("choices"))])
    width = len(str(len(prepared)))
    out = []
    for n, (where, rec, original, answers) in enumerate(prepared, start=1):
        try:
            rec, n_files = _embed_image_files(rec, input_field, folder)
            embedded += n_files
            case = _case(rec, input_field, answers, short)
            case["original"] = original
        except (DatasetError, ValueError) as exc:
            msg = exc.detail if isinstance(exc, DatasetError) else str(exc)
            raise DatasetError(msg, path=path.name, line=line_of(where)) from None
        raw_id = rec.get("id")
        if is_missing(raw_id) or raw_id == "":
            rid = f"{prefix}-{n:0{width}d}"
        elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
            rid = str(raw_id)
        else:
            raise DatasetError(
                f"id must be a string or an integer, got {raw_id!r}", path=path.name, line=line_of(where)
            )
        out.append((rid, case, where))
    notes: dict[str, Any] = {"input_field": input_field, "target_field": target_field}
    notes["answer_mapping"] = "must_contain_any" if short else "reference"
    if embedded:
        notes["images"] = f"{embedded} image file(s) named in the samples embedded as base64 data"
    if has_choices:
        notes["choices"] = "multiple choice: lettered choices in the prompt, expect.regex on 'ANSWER: <letter>'"
    return out, notes


def _records(path: Path, text: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(where, record with JSON cells parsed, record as written)`` for each sample."""
    suffix = path.suffix.lower()
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    if suffix == ".jsonl":
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            rec = json_object_line(line, where=path.name, lineno=lineno, what="a sample")
            out.append((f"line {lineno}", rec, rec))
    elif suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg}", path=path.name, line=exc.lineno) from None
        docs = doc if isinstance(doc, list) else [doc]
        for i, rec in enumerate(docs):
            if not isinstance(rec, dict):
                raise DatasetError(f"record [{i}] must be a JSON object", path=path.name)
            out.append((f"[{i}]", rec, rec))
    elif suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""), dialect="unix")
        for row in reader:
            lineno = reader.line_num
            if None in row:
                raise DatasetError("row has more cells than the header", path=path.name, line=lineno)
            parsed: dict[str, Any] = {}
            for key, cell in row.items():
                if cell is None or cell == "":
                    continue  # an empty cell is a missing value
                value: Any = cell
                if key == "metadata":
                    value = maybe_json(cell, row_id=f"line {lineno}", field=key)
                elif key in ("sandbox", "files"):
                    value = lenient_json(cell)
                elif key in INPUT_FIELDS:
                    value = _chat_or_text(cell)
                parsed[key] = value
            out.append((f"line {lineno}", parsed, dict(row)))
    else:
        raise DatasetError(
            f"unsupported inspect_ai samples file type {suffix!r} (use .jsonl, .json or .csv)", path=path.name
        )
    return out


def _embed_image_files(rec: dict[str, Any], input_field: str, folder: Path) -> tuple[dict[str, Any], int]:
    """The record with each ``ContentImage`` that names a file (``{"type": "image", "image": "bike.png"}``,
    relative to the samples file as inspect resolves it) given as a data URI of the file's bytes, and
    how many were embedded. URLs and data URIs stay as they are; a missing file is an error."""
    value = rec.get(input_field)
    if not isinstance(value, list):
        return rec, 0
    count = 0
    messages = []
    for message in value:
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            messages.append(message)
            continue
        parts = []
        for part in content:
            image = part.get("image") if isinstance(part, Mapping) and part.get("type") == "image" else None
            if isinstance(image, str) and image.strip() and not image.startswith("data:") and "://" not in image:
                parts.append({**part, "image": _data_uri(folder, image.strip())})
                count += 1
            else:
                parts.append(part)
        messages.append({**message, "content": parts})
    return ({**rec, input_field: messages}, count) if count else (rec, 0)


def _data_uri(folder: Path, name: str) -> str:
    file = Path(name) if Path(name).is_absolute() else folder / name
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ValueError(f"image file {name!r} cannot be read: {exc.strerror or exc}") from None
    mime, _ = mimetypes.guess_type(file.name)
    if mime is None or not mime.startswith("image/"):
        raise ValueError(f"image file {name!r} is not an image by its name (use .png, .jpg, .gif, .webp, ...)")
    return ImagePart(mime, data=data).data_uri()


def _chat_or_text(cell: str) -> Any:
    """A CSV input cell holding a JSON list of chat messages, parsed; any other cell is text."""
    parsed = lenient_json(cell)
    if isinstance(parsed, list) and parsed and all(isinstance(m, Mapping) for m in parsed):
        return parsed
    return cell


def _pick(records: list[tuple[str, dict[str, Any], dict[str, Any]]], names: tuple[str, ...]) -> str | None:
    for name in names:
        if any(name in rec for _, rec, _ in records):
            return name
    return None


def _answers(target: Any) -> list[str]:
    if is_missing(target):
        return []
    if isinstance(target, list):
        return [str(t) for t in target if str(t) != ""]
    if isinstance(target, Mapping):
        raise ValueError("target must be a string or a list of strings, got an object")
    return [str(target)] if str(target) != "" else []


def _choices(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(c) for c in value if str(c) != ""]
    if isinstance(value, str):
        items = [c.strip() for c in value.split(",")]
        if len(items) == 1:
            items = value.split()
        return [c for c in items if c]
    raise ValueError("choices must be a list or a comma-separated string")


def _case(rec: dict[str, Any], input_field: str, answers: list[str], short: bool) -> dict[str, Any]:
    if is_missing(rec.get(input_field)):
        raise ValueError(f"sample has no {input_field} (inspect_ai: 'No input in dataset')")
    case = input_to_contract(rec[input_field], row_id=None, field=input_field)
    if not is_missing(rec.get("choices")):
        choices = _choices(rec["choices"])
        if not choices:
            raise ValueError("choices is empty")
        letters = string.ascii_uppercase[: len(choices)]
        if len(choices) > len(string.ascii_uppercase):
            raise ValueError("more than 26 choices")
        correct = []
        for answer in answers:
            if answer in letters and len(answer) == 1:
                correct.append(answer)
            elif answer in choices:
                correct.append(letters[choices.index(answer)])
            else:
                raise ValueError(
                    f"target {answer!r} is neither a choice letter (A-{letters[-1]}) nor one of the choices"
                )
        listing = "\n".join(f"{letter}) {choice}" for letter, choice in zip(letters, choices, strict=True))
        case["prompt"] = f"{case['prompt']}\n\n{listing}\n\n{MCQ_INSTRUCTION}"
        case["choices"] = choices
        case["answers"] = answers
        if correct:
            case["reference"] = "\n".join(choices[letters.index(c)] for c in correct)
            case["expect"] = {"regex": [rf"ANSWER\s*:[^\n]*\b{c}\b" for c in correct]}
    else:
        case.update(answers_to_contract(answers, short=short))
    if not is_missing(rec.get("metadata")):
        metadata = maybe_json(rec["metadata"], field="metadata")
        if not isinstance(metadata, Mapping):
            raise ValueError("metadata must be an object (or a JSON string of one)")
        case["metadata"] = dict(metadata)
    return case


__all__ = ["INPUT_FIELDS", "MCQ_INSTRUCTION", "TARGET_FIELDS", "read_inspect"]
