"""Human verdicts on a run's answers: ``labels.jsonl`` beside the run, append-only, never in the outcomes.

One line per label::

    {"schema_version": 1, "row_id": "refund-0142", "repeat": null, "human": "FAIL",
     "who": "ana", "at": "2026-12-05T09:00:00+00:00", "source": "import",
     "probability": 0.25, "answer_sha256": "..."}

* ``repeat`` null: the label is the row's verdict (the run's collapsed verdict is
  what it corrects); a number: that repeat's answer.
* ``probability``: the sampling design, the probability with which the row was
  drawn for labelling (``goldenkit judge next`` records it); null for a row picked
  by hand, which is shown but never used for inference (a hand-picked sample is
  not a design: it would bias any interval built on it).
* ``answer_sha256``: the SHA-256 of the answers the human read (the row's
  responses in repeat order, or the one repeat's), so a label follows the answers,
  not the run: it applies to a regrade of the same answers, and is refused for a
  run whose answers differ.

A later label of the same row and repeat supersedes an earlier one (the file
keeps both); one input that labels a row twice is refused, naming both lines. A
label without a probability that supersedes one with a probability keeps it: the
draw, not the route, made the row part of the design (a correction stays in it).
:func:`add_labels` checks every label before it writes any (a refused file
changes nothing); :func:`read_labels` returns the labels that apply to a run: its
own, and those of the run its answers were regraded from; only the latest label
of a row must be on the run's answers (a row labelled again after its answers
changed is labelled).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldenkit._registry import publish
from goldenkit.errors import InputError
from goldenkit.results._jsonl import scan_jsonl
from goldenkit.results._run import Run, read_run

__all__ = ["LABELS_FILE", "HumanLabel", "add_labels", "answers_sha256", "labelled", "read_labels"]

LABELS_FILE = "labels.jsonl"
_VERDICTS = ("PASS", "FAIL")
_SOURCES = ("audit", "import", "calibration", "next")


@dataclass(frozen=True)
class HumanLabel:
    """One human verdict on a run's answers (see the module doc)."""

    row_id: str
    repeat: int | None
    human: str
    who: str
    at: str
    source: str
    probability: float | None
    answer_sha256: str

    @property
    def designed(self) -> bool:
        """True when the row was drawn by a recorded sampling design (usable for inference)."""
        return self.probability is not None

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": 1, **asdict(self)}


def answers_sha256(run: Run) -> dict[tuple[str, int | None], str]:
    """``(row_id, repeat) -> sha256`` of the answer a label would bind, and ``(row_id, None)`` for the row's
    answers in repeat order."""
    out = run.outcomes(columns=["row_id", "repeat", "response"])
    by_row: dict[str, list[tuple[int, str]]] = {}
    shas: dict[tuple[str, int | None], str] = {}
    for rid, rep, text in zip(out["row_id"], out["repeat"], out["response"], strict=True):
        answer = "" if text is None or text != text else str(text)  # NaN: no answer
        by_row.setdefault(str(rid), []).append((int(rep), answer))
        shas[(str(rid), int(rep))] = hashlib.sha256(answer.encode("utf-8")).hexdigest()
    for rid, answers in by_row.items():
        joined = json.dumps([a for _, a in sorted(answers)], ensure_ascii=False)
        shas[(rid, None)] = hashlib.sha256(joined.encode("utf-8")).hexdigest()
    return shas


def _checked(raw: Mapping[str, Any], where: str, default_prob: Any) -> tuple[str, int | None, str, float | None]:
    """A label's ``(row id, repeat, human, probability)``, each checked (an InputError naming ``where``)."""
    rid = raw.get("id", raw.get("row_id"))
    if not isinstance(rid, str) or not rid:
        raise InputError(f"{where}: a label needs a non-empty string id")
    repeat = raw.get("repeat")
    if repeat is not None and (isinstance(repeat, bool) or not isinstance(repeat, int)):
        raise InputError(f"{where}: repeat must be an integer or absent, got {repeat!r}")
    human = raw.get("human")
    if human not in _VERDICTS:
        raise InputError(f"{where}: human must be PASS or FAIL, got {human!r}")
    prob = raw.get("probability", default_prob)
    if prob is not None and (isinstance(prob, bool) or not isinstance(prob, int | float) or not 0 < prob <= 1):
        raise InputError(f"{where}: probability must be a number in (0, 1], got {prob!r}")
    return rid, repeat, str(human), None if prob is None else float(prob)


def _label(
    raw: Mapping[str, Any], where: str, shas: Mapping[tuple[str, int | None], str], defaults: Mapping[str, Any]
) -> HumanLabel:
    rid, repeat, human, prob = _checked(raw, where, defaults.get("probability"))
    if (rid, repeat) not in shas:
        what = f"row {rid!r}" if repeat is None else f"row {rid!r} repeat {repeat}"
        raise InputError(f"{where}: {what} is not in the run")
    return HumanLabel(
        row_id=rid,
        repeat=repeat,
        human=str(human),
        who=str(raw.get("who") or defaults.get("who") or "unknown"),
        at=str(raw.get("at") or datetime.now(UTC).isoformat(timespec="seconds")),
        source=str(defaults.get("source", "import")),
        probability=prob,
        answer_sha256=shas[(rid, repeat)],
    )


def add_labels(
    run: Run | str | os.PathLike[str],
    labels: Iterable[Mapping[str, Any]],
    *,
    who: str | None = None,
    source: str = "import",
    probability: float | None = None,
    where: str = "labels",
    line_numbers: Sequence[int] | None = None,
) -> list[HumanLabel]:
    """Append human verdicts to the run's ``labels.jsonl`` and return them; every label is checked first
    (an id the run has, PASS or FAIL, a probability in (0, 1]), so a refused batch writes nothing.
    ``where`` names the input in errors, as ``where:N`` with N the label's line number (``line_numbers``,
    else its position)."""
    if source not in _SOURCES:
        raise InputError(f"add_labels: source must be one of {', '.join(_SOURCES)}, got {source!r}")
    r = run if isinstance(run, Run) else read_run(run)
    shas = answers_sha256(r)
    defaults = {"who": who, "source": source, "probability": probability}
    raws = list(labels)
    numbers = list(line_numbers) if line_numbers is not None else list(range(1, len(raws) + 1))
    checked = [_label(raw, f"{where}:{n}", shas, defaults) for raw, n in zip(raws, numbers, strict=True)]
    seen: dict[tuple[str, int | None], int] = {}
    for lab, n in zip(checked, numbers, strict=True):
        first = seen.setdefault((lab.row_id, lab.repeat), n)
        if first != n:
            what = f"row {lab.row_id!r}" + ("" if lab.repeat is None else f" repeat {lab.repeat}")
            raise InputError(f"{where}:{n}: {what} is labelled on line {first} too (one verdict per row and input)")
    earlier = _latest(r)
    checked = [
        replace(lab, probability=earlier[key].probability)
        if lab.probability is None and (key := (lab.row_id, lab.repeat)) in earlier
        else lab
        for lab in checked
    ]
    if checked:
        text = "".join(json.dumps(lab.to_dict(), ensure_ascii=False) + "\n" for lab in checked)
        fd = os.open(Path(r.path) / LABELS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    return checked


def _file_labels(path: Path) -> list[HumanLabel]:
    if not path.is_file():
        return []
    out = []
    for line in scan_jsonl(path):  # a line edited by hand is checked as an imported one is
        rec, where = line.record, f"{path}:{line.number}"
        rid, repeat, human, prob = _checked(rec, where, None)
        sha = rec.get("answer_sha256")
        if not isinstance(sha, str) or not sha:
            raise InputError(f"{where}: a stored label needs the answer_sha256 of the answers it was given on")
        who, at, source = (str(rec.get(k) or "") for k in ("who", "at", "source"))
        out.append(HumanLabel(rid, repeat, human, who or "unknown", at, source or "import", prob, sha))
    return out


def read_labels(run: Run | str | os.PathLike[str], *, skip_other_answers: bool = False) -> list[HumanLabel]:
    """The labels that apply to ``run``, the latest per (row, repeat): its own, and those of the run its
    answers were regraded from. Labels whose answers are not the run's are an :class:`InputError` naming
    the rows (labels are refused for a run whose answers differ); ``skip_other_answers`` leaves them out
    instead (what the audit shows while the person labels those rows again)."""
    r = run if isinstance(run, Run) else read_run(run)
    latest = _latest(r)
    shas = answers_sha256(r) if latest else {}
    other = {key: lab for key, lab in latest.items() if shas.get(key) != lab.answer_sha256}
    if other and not skip_other_answers:
        rows = sorted({lab.row_id for lab in other.values()})
        named = ", ".join(repr(x) for x in rows[:5]) + (", ..." if len(rows) > 5 else "")
        what = f"label of row {named} was" if len(rows) == 1 else f"labels of {len(rows)} rows ({named}) were"
        raise InputError(
            f"{r.path}: the human {what} given on other answers than this run's "
            "(labels follow the answers: label this run's rows again)"
        )
    return [lab for key, lab in latest.items() if key not in other]


def labelled(run: Run) -> set[tuple[str, int | None]]:
    """The (row, repeat) keys that hold a label already: a new label of one replaces it."""
    return set(_latest(run))


def _latest(r: Run) -> dict[tuple[str, int | None], HumanLabel]:
    """The latest label per (row, repeat), those of the run its answers were regraded from first; unchecked."""
    found = _file_labels(Path(r.path) / LABELS_FILE)
    regraded = r.manifest.get("regraded_from")
    source = regraded["path"] if regraded else None
    if isinstance(source, str) and (Path(source) / LABELS_FILE).is_file():
        found = _file_labels(Path(source) / LABELS_FILE) + found
    return {(lab.row_id, lab.repeat): lab for lab in found}


publish(globals())
