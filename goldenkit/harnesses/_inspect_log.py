"""inspect_ai eval logs: the JSON log (``.json``) and the zipped log (``.eval``).

A ``.eval`` file is a zip archive: ``header.json`` (``version, status, eval, plan,
results, stats``), one ``samples/<id>_epoch_<n>.json`` per sample attempt, and
``summaries.json``. Members are deflate- or (current inspect) zstd-compressed (zip
method 93, which Python's :mod:`zipfile` reads only from 3.14): those are
decompressed here with :mod:`zstandard`. A JSON log holds the same objects inline
(``samples[]``).

Mapping: sample ``id`` -> row id (as a string), ``input`` (chat messages without
their per-run random ``id``) -> the input the fingerprint covers, ``epoch`` -> repeat (1-based there,
0-based here), the scorer's value -> verdict (``--scorer``, default the first scorer
of ``results.scores``; ``C``/``I``, booleans, numbers against ``--threshold``).
A sample with ``error`` set is an ERROR whose detail is ``inspect error: <message>``;
its kind is ``refused`` when the message names a context length or a content filter,
else ``infrastructure`` (a provider outage; inspect does not say whose code raised).
Earlier attempts listed in ``error_retries`` are not errors. A sample that hit a
limit (``limit``: tokens, messages, time; a string in ``summaries.json``) is scored by
inspect, nearly always as incorrect, and keeps that score and verdict: a candidate
that loops until its limit stays in the denominator. Its detail names the limit
(``inspect limit: message (limit 34)``), the run's ``notes`` count the limited samples
by type and ``source.identifiers.limits`` holds the counts. A limited sample without a
score is an ERROR (kind ``agent`` for a token or message limit the candidate used up,
else ``infrastructure``).

A log run with ``--no-score`` has no scorer: every sample is SKIPPED (not graded, so
not evidence until ``goldenkit regrade`` grades the stored answers with goldenkit's
graders, reading each row's input and target as a contract case). A log written
without samples (``--no-log-samples``) is refused: it holds no per-sample evidence.
A log whose ``status`` is not ``success`` is a run that did not finish (INVALID, not
evidence). Expected outcomes: the ids in ``eval.dataset.sample_ids`` (else those
present) x ``eval.config.epochs``.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from goldenkit.errors import DatasetError, InputError
from goldenkit.formats import answers_to_contract, input_to_contract, short_answers
from goldenkit.harnesses._common import (
    Imported,
    Sample,
    error_kind_of,
    grader_version,
    pick,
    read_json,
    typed,
    verdict_of,
)
from goldenkit.schema import AGENT, ERROR, INFRASTRUCTURE, SKIPPED

#: The grader an unscored log (``--no-score``) is recorded with.
UNSCORED = "unscored"

_ZSTD = 93  # zip compression method of Zstandard


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """One member's bytes; zstd members are read raw from the archive and decompressed here."""
    if info.compress_type != _ZSTD:
        return zf.read(info)
    import zstandard

    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise InputError(f"{path}: member {info.filename}: bad local header (truncated zip?)")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        raw = fh.read(info.compress_size)
    if len(raw) < info.compress_size:
        raise InputError(f"{path}: member {info.filename} is truncated")
    data = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise InputError(f"{path}: member {info.filename} fails its size or CRC check (truncated or corrupt)")
    return data


def _json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Any:
    try:
        return json.loads(_member(zf, info, path))
    except InputError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise InputError(f"{path}: member {info.filename} cannot be read ({exc}); truncated or corrupt .eval") from None
    except Exception as exc:  # zstandard.ZstdError, invalid JSON
        raise InputError(f"{path}: member {info.filename} is not valid ({exc}); truncated or corrupt .eval") from None


def read_log(path: Path) -> dict[str, Any]:
    """The log as one dict (header keys plus ``samples``), from a ``.json`` or ``.eval`` file."""
    if path.suffix == ".json":
        log = read_json(path, "inspect JSON log")
        if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
            raise InputError(f"{path}: not an inspect log (no 'eval' object)")
        return log
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{path}: not a readable .eval zip ({exc}); truncated or not an inspect log") from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if "header.json" in infos:
            log = _json_member(zf, infos["header.json"], path)
        elif "_journal/start.json" in infos:  # a run still going, or killed: only the journal's start
            log = _json_member(zf, infos["_journal/start.json"], path)
            log.setdefault("status", "started")
        else:
            raise InputError(f"{path}: .eval zip without header.json; not an inspect log")
        if not isinstance(log, dict):
            raise InputError(f"{path}: not an inspect log (header.json is not an object)")
        names = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        log["samples"] = [_json_member(zf, infos[n], path) for n in names]
        if not names and "summaries.json" in infos:
            log["samples"] = _json_member(zf, infos["summaries.json"], path)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise InputError(f"{path}: not an inspect log (no 'eval' object in the header)")
    return dict(log)


def _scorers(log: dict[str, Any], where: str) -> list[str]:
    results = typed(log, "results", "object", where, default={})
    listed = typed(results, "scores", "list", where, field="results.scores", default=[])
    names = [str(s.get("name")) for s in listed if isinstance(s, dict)]
    if not names:
        listed = typed(log["eval"], "scorers", "list", where, field="eval.scorers", default=[])
        names = [str(s.get("name")) for s in listed if isinstance(s, dict)]
    for i, sample in enumerate(log.get("samples") or []):
        for name in typed(sample, "scores", "object", where, field=f"samples[{i}].scores", default={}):
            if name not in names:
                names.append(str(name))
    return list(dict.fromkeys(names))


def _tokens(usage: Any, where: str) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict) or not usage:
        return None, None
    counts = [u for u in usage.values() if isinstance(u, dict)]
    ins = sum(typed(u, "input_tokens", "integer", where, field="model_usage.input_tokens", default=0) for u in counts)
    outs = sum(
        typed(u, "output_tokens", "integer", where, field="model_usage.output_tokens", default=0) for u in counts
    )
    return ins, outs


def _response(sample: dict[str, Any], where: str) -> str | None:
    out = sample.get("output")
    if isinstance(out, dict):
        choices = typed(out, "choices", "list", where, field="output.choices") or []
        if choices and isinstance(choices[0], dict):
            message = typed(choices[0], "message", "object", where, field="output.choices[0].message", default={})
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        if isinstance(out.get("completion"), str):
            return str(out["completion"])
    return None


def _error(sample: dict[str, Any]) -> str | None:
    """The ERROR detail of a sample attempt with ``error`` set (None otherwise)."""
    err = sample.get("error")
    if err:
        message = err.get("message") if isinstance(err, dict) else err
        return f"inspect error: {str(message).strip().splitlines()[0] if str(message).strip() else 'error'}"
    return None


def _limit(sample: dict[str, Any]) -> tuple[str, str] | None:
    """The limit a sample hit, as ``(type, detail)`` (None: it hit none)."""
    limit = sample.get("limit")
    if not limit:
        return None
    if isinstance(limit, dict):
        number = limit.get("limit")
        shown = f"{number:g}" if isinstance(number, (int, float)) and not isinstance(number, bool) else number
        kind = str(limit.get("type") or "limit")
        return kind, f"inspect limit: {kind}" + (f" (limit {shown})" if shown is not None else "")
    return str(limit), f"inspect limit: {limit}"


def _answers(target: Any) -> list[str]:
    """The target's answers, stripped (inspect's scorers compare them stripped: a target " Yes" answers "Yes")."""
    if target is None:
        return []
    values = target if isinstance(target, list) else [target]
    return [str(t).strip() for t in values if str(t).strip()]


def _case(raw: dict[str, Any], short: bool) -> dict[str, Any] | None:
    """The sample's input and target as a contract case, for a regrade (None: goldenkit cannot read the input)."""
    try:
        case = input_to_contract(identity_input(raw.get("input")), row_id=str(raw.get("id")))
    except DatasetError:
        return None
    case.update(answers_to_contract(_answers(raw.get("target")), short=short))
    return case


def identity_input(value: Any) -> Any:
    """The sample input the fingerprint covers: a string as is; chat messages without their ``id``.

    inspect gives each chat message a fresh random ``id`` when a run builds it, so the
    same sample would otherwise get another fingerprint in every run.
    """
    if isinstance(value, list):
        return [{k: v for k, v in m.items() if k != "id"} if isinstance(m, dict) else m for m in value]
    return value


def _sample(raw: Any, i: int, path: Path, scorer: str | None, threshold: float | None, short: bool) -> Sample:
    if not isinstance(raw, dict) or raw.get("id") is None or str(raw.get("id")) == "":
        raise InputError(f"{path}: sample #{i + 1} has no id")
    rid, epoch = str(raw["id"]), raw.get("epoch", 1)
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 1:
        raise InputError(f"{path}: sample {rid}: epoch {epoch!r} is not a positive integer")
    where = f"{path}: sample {rid} epoch {epoch}"
    tokens_in, tokens_out = _tokens(raw.get("model_usage"), where)
    total = raw.get("total_time")
    common: dict[str, Any] = {
        "row_id": rid,
        "repeat": epoch - 1,
        "input": identity_input(raw.get("input")),
        "where": where,
        "response": _response(raw, where),
        "fields": raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {},
        "latency_ms": float(total) * 1000 if isinstance(total, (int, float)) else None,
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "started_at": raw.get("started_at") if isinstance(raw.get("started_at"), str) else None,
        "case": _case(raw, short),
    }
    failed = _error(raw)
    if failed is not None:
        return Sample(verdict=ERROR, detail=failed, error_kind=error_kind_of(failed), **common)
    limit = _limit(raw)
    if scorer is None:
        detail = "inspect: not scored (a log run with --no-score)" + (f"; {limit[1]}" if limit else "")
        return Sample(verdict=SKIPPED, detail=detail, **common)
    score = typed(raw, "scores", "object", where, default={}).get(scorer)
    if limit is not None and not (isinstance(score, dict) and "value" in score):
        kind = AGENT if limit[0] in ("token", "message") else INFRASTRUCTURE
        return Sample(verdict=ERROR, detail=f"{limit[1]}, not scored", error_kind=kind, **common)
    if not isinstance(score, dict) or "value" not in score:
        raise InputError(f"{where}: no score from scorer {scorer!r}")
    verdict, number = verdict_of(score["value"], threshold, where, scorer)
    reason = score.get("explanation")
    return Sample(
        verdict=verdict,
        score=number,
        reason=None if reason is None else str(reason),
        detail=None if limit is None else limit[1],
        **common,
    )


def _limits(raw_samples: list[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for raw in raw_samples:
        limit = _limit(raw) if isinstance(raw, dict) and not raw.get("error") else None
        if limit is not None:
            counts[limit[0]] = counts.get(limit[0], 0) + 1
    return counts


def _notes(limits: dict[str, int], scorer: str | None) -> list[str]:
    notes = []
    if limits:
        by_type = ", ".join(f"{kind} {n}" for kind, n in sorted(limits.items()))
        notes.append(f"{sum(limits.values())} sample(s) hit a limit ({by_type}); each keeps the score inspect gave it")
    if scorer is None:
        notes.append("the log has no scores (--no-score): every sample is SKIPPED until goldenkit regrade grades it")
    return notes


def read_inspect(path: Path, *, scorer: str | None = None, threshold: float | None = None) -> Imported:
    """Read an inspect ``.json`` or ``.eval`` log as one imported run."""
    log = read_log(path)
    ev = log["eval"]
    raw_samples = log.get("samples") or []
    if not isinstance(raw_samples, list):
        raise InputError(f"{path}: 'samples' is not a list")
    if not raw_samples:
        status = log.get("status")
        raise InputError(f"{path}: no samples: the inspect log (status {status!r}) was written without samples")
    results = typed(log, "results", "object", str(path), default={})
    scored = typed(results, "scores", "list", str(path), field="results.scores") or any(
        isinstance(r, dict) and r.get("scores") for r in raw_samples
    )
    if not scored and scorer is not None:
        raise InputError(f"{path}: no scores in the log (run with --no-score?); leave out --scorer, or regrade it")
    name = pick(scorer, _scorers(log, str(path)), "scorer", str(path), "--scorer") if scored else None
    answers = [_answers(raw.get("target")) for raw in raw_samples if isinstance(raw, dict)]
    short = short_answers(answers)
    samples = [_sample(raw, i, path, name, threshold, short) for i, raw in enumerate(raw_samples)]
    limits = _limits(raw_samples)
    where = str(path)
    config = typed(ev, "config", "object", where, field="eval.config", default={})
    epochs = typed(config, "epochs", "integer", where, field="eval.config.epochs") or max(
        (s.repeat + 1 for s in samples), default=1
    )
    ids = typed(ev, "dataset", "object", where, field="eval.dataset", default={}).get("sample_ids")
    order = {str(sid): i for i, sid in enumerate(ids if isinstance(ids, list) else [])}
    samples.sort(key=lambda s: (order.get(s.row_id, len(order)), s.row_id, s.repeat))  # the dataset's order
    status = str(log.get("status") or "unknown")
    stats = typed(log, "stats", "object", where, default={})
    return Imported(
        format="inspect",
        file=path,
        task=str(ev.get("task") or "inspect"),
        task_version=None if ev.get("task_version") is None else str(ev.get("task_version")),
        samples=samples,
        grader=name or UNSCORED,
        grader_version=grader_version("inspect", threshold),
        notes=_notes(limits, name),
        repeats=int(epochs),
        expected_rows=len(ids) if isinstance(ids, list) else None,
        model_id=typed(ev, "model", "text", where, field="eval.model"),
        identifiers={
            "run_id": ev.get("run_id"),
            "eval_id": ev.get("eval_id"),
            "eval_set_id": ev.get("eval_set_id"),
            "task": ev.get("task"),
            "task_id": ev.get("task_id"),
            "model": ev.get("model"),
            "created": ev.get("created"),
            "started_at": stats.get("started_at"),
            "completed_at": stats.get("completed_at"),
            "status": status,
            "log_version": log.get("version"),
            "inspect_ai": typed(ev, "packages", "object", where, field="eval.packages", default={}).get("inspect_ai"),
            "epochs": epochs,
            "limit": config.get("limit"),
            "limits": limits,
        },
        not_finished=None if status == "success" else f"the inspect log's status is {status!r}",
    )
