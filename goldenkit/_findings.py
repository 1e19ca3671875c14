"""What a failing check found, as data: findings, value-free subjects, and the reading of reason texts.

Every grader explains a FAIL in words (its ``reason``). Beside the words, each
failing check is a :class:`Finding`: the ``grader``, the ``check`` and its
``subject`` -- what the check is about, said the same way on every row it
concerns. Values that vary per row (order ids, amounts, dates: any word with a
digit in it) are left out of a subject (:func:`value_free`), so one cause on
fifty rows is one subject.

=====================  =================================================  ================================
grader                 check                                              subject
=====================  =================================================  ================================
contract               must_contain, must_not                             the string (``"already shipped"``)
                       must_contain_any                                   the listed strings
                       regex, regex_not                                   the pattern (``/IPX\\d/``)
                       refusal, json, number                              what went wrong (``no refusal``)
                       exact, normalized                                  (none)
                       turns.missing                                      (none)
trajectory             tools.missing, tools.extra, tools.args,            the call with its argument names
                       tools.bad_args                                     (``lookup_order(order_id)``)
                       tools.order                                        the expected calls
                       tool_before_text                                   the tool (``lookup_order``)
                       turns.missing                                      (none)
retrieval              retrieval.missing, retrieval.unexpected            the document id
rubrics                rubric                                             the rubric's text (its id in a
                                                                          reason written without findings)
reference              rouge1                                             ``below <threshold>``
state                  state.missing, state.value                         the key (``cart.items``)
judge                  reject                                             each of the judge's reasons
any other grader       explanation                                        each part of its reason text
=====================  =================================================  ================================

**Reading the words.** A grader's findings are read from its reason by the
parser of its wording, one section below per grader (here, not in the
graders' modules: the analysis reads findings and never imports a grader).
Each built-in grader
applies it to the reason it writes and stores the findings in the outcome's
graders cell (``findings``, each ``{"grader", "check", "subject"}``). An older
outcome (written before findings were stored) or a baseline snapshot (which
keeps only reasons) is read with the same parser (:func:`findings_in`), so
old and new runs find the same subjects. A grader of another harness, or one
whose words no parser knows, gives one ``explanation`` finding per part of its
reason. Findings never change a verdict, a score or a grader's version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Finding",
    "describe",
    "findings_in",
    "reason_findings",
    "reason_parts",
    "value_free",
]

_VALUE = re.compile(r"[^\s\"'`,;()\[\]{}<>]*\d[^\s\"'`,;()\[\]{}<>]*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
PLACEHOLDER = "<value>"
_MAX_GENERIC = 5  # explanation findings per grader result, at most


@dataclass(frozen=True)
class Finding:
    """One failing check: the grader, the check, and its value-free subject."""

    grader: str
    check: str
    subject: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"grader": self.grader, "check": self.check, "subject": self.subject}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any], grader: str = "") -> Finding:
        """A finding from its stored dict (a missing grader is ``grader``)."""
        return cls(str(value.get("grader") or grader), str(value.get("check") or ""), str(value.get("subject") or ""))

    @property
    def label(self) -> str:
        """``grader: what it found``, as the reports print it."""
        return f"{self.grader}: {describe(self.check, self.subject)}"


def value_free(text: str, limit: int = 80) -> str:
    """``text`` on one line with every word holding a digit replaced by ``<value>``, shortened to ``limit``.

    >>> value_free("refund of $119.00 for order A-204939 by 2026-09-18")
    'refund of <value> for order <value> by <value>'
    """
    flat = _VALUE.sub(PLACEHOLDER, " ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _unquote(inner: str) -> str:
    return inner.replace('\\"', '"')


def _quoted_subject(text: str) -> str:
    """The first quoted string of ``text``, value-free, in quotes ('' when there is none)."""
    m = _QUOTED.search(text)
    return f'"{value_free(_unquote(m.group(1)))}"' if m else ""


def _split(reason: str, starts: str) -> list[str]:
    """``reason`` cut at every ``"; "`` that opens a part (``starts``: a regex of how parts begin)."""
    return [p for p in re.split(f"; (?={starts})", reason) if p]


# --------------------------------------------------------------------------- contract

_CONTRACT_CHECKS = "must_contain_any|must_contain|must_not|regex_not|regex|refusal|exact|normalized|json|number"
_CONTRACT_STARTS = rf"(?:turn \d+: )?(?:(?:{_CONTRACT_CHECKS}): |no answer \()"
_REFUSAL = (
    ("unexpected refusal", "an unexpected refusal"),
    ("expected a refusal", "no refusal where one was expected"),
    ("code after", "code after the refusal"),
    ("the answer goes on", "a long answer after the refusal"),
)


def _contract(part: str) -> tuple[str, str] | None:
    """(check, subject) of one part of the contract grader's reason (see ``check_text``)."""
    part = re.sub(r"^turn \d+: ", "", part)
    if part.startswith("no answer ("):
        return "turns.missing", ""
    check, sep, rest = part.partition(": ")
    if not sep or check not in _CONTRACT_CHECKS.split("|"):
        return None
    if check in ("must_contain", "must_not"):
        return check, _quoted_subject(rest)
    if check == "must_contain_any":
        body = rest.removeprefix("none of ").removesuffix(" found")
        return check, ", ".join(f'"{value_free(_unquote(m.group(1)))}"' for m in _QUOTED.finditer(body))
    if check == "regex":
        end = rest.rfind('/ in "')
        return check, rest[len("no match for ") : end + 1] if end > 0 else ""
    if check == "regex_not":
        end = rest.find('/ matched "')
        return check, rest[: end + 1] if end > 0 else ""
    if check == "refusal":
        return check, next((s for head, s in _REFUSAL if rest.startswith(head)), "")
    if check == "json":
        key = _quoted_subject(rest)
        if rest.startswith("missing key"):
            return check, f"missing key {key}"
        if rest.startswith("key "):
            return check, f"key {key} of another type"
        return check, "not valid JSON" if rest.startswith("not valid") else "not an object"
    if check == "number":
        return check, "no number" if rest.startswith("no number") else "another number"
    return check, ""


# --------------------------------------------------------------------------- trajectory

_TRAJECTORY_STARTS = (
    r"tools \(|turn \d+|tool_before_text: |missing \[|extra \[|called with |out of order: "
    r"|(?:F1|ALIGN) \d|\d+ expected turns|[A-Z_]+ score "
)
_CALL_BITS = (
    ("missing [", "tools.missing"),
    ("extra [", "tools.extra"),
    ("called with arguments that are not a JSON object [", "tools.bad_args"),
    ("called with other args [", "tools.args"),
)


def _calls(text: str) -> list[str]:
    """The calls of a list as the trajectory grader shows them (``[name(k='v', ...), ...]``), as
    value-free subjects ``name(k, ...)``; a name shown alone stays alone."""
    out: list[str] = []
    keys: list[str] = []
    depth, quote, escaped, name, buf = 0, "", False, "", ""
    for ch in text:
        if quote:
            escaped, quote = (False, quote) if escaped else (ch == "\\", "" if ch == quote else quote)
            continue
        if depth >= 2 and ch in "'\"":
            quote = ch
        elif ch in "([{":
            if depth == 1 and ch == "(":
                name, keys, buf = buf.strip(), [], ""
            depth += 1
        elif ch in ")]}":
            if depth == 2 and ch == ")":
                out.append(f"{name}({', '.join(keys)})")
                name, buf = "", ""
            elif depth == 1 and buf.strip() and not buf.strip().startswith("+"):
                out.append(buf.strip())
            depth -= 1
        elif depth == 2 and ch == "=" and buf.strip():
            keys.append(buf.strip())
            buf = "\x00"  # a value follows: nothing is a key until the next comma
        elif ch == "," and depth in (1, 2):
            if depth == 1 and buf.strip() and not buf.strip().startswith("+"):
                out.append(buf.strip())
            buf = ""
        elif depth in (1, 2) and not buf.startswith("\x00"):
            buf += ch
    return out


def _trajectory(part: str) -> list[tuple[str, str]]:
    """(check, subject) pairs of one part of the trajectory grader's reason."""
    part = re.sub(r"^(?:tools \([A-Z_]+\)|turn \d+(?: \([A-Z_]+\))?): ", "", part)
    for head, check in _CALL_BITS:
        if part.startswith(head):
            return [(check, c) for c in _calls(part[len(head) - 1 :])]
    if part.startswith("out of order: expected ["):
        expected = part[len("out of order: expected ") :].split("], got [", 1)[0] + "]"
        return [("tools.order", ", ".join(_calls(expected)))]
    if part.startswith("no such turn"):
        return [("turns.missing", "")]
    if part.startswith("tool_before_text: "):
        tool = part.rsplit(" before any call to ", 1)[-1]
        return [("tool_before_text", ", ".join(_calls(f"[{tool}]")))]
    return []


# --------------------------------------------------------------------------- the others


def _ids(text: str) -> list[str]:
    body = text[text.find("[") + 1 : text.rfind("]")]
    return [value_free(x) for x in body.split(", ") if x and not x.startswith("+")]


def _retrieval(part: str) -> list[tuple[str, str]]:
    for head in ("missing", "unexpected"):
        if part.startswith(head + " ["):
            return [(f"retrieval.{head}", i) for i in _ids(part)]
    return []


def _rubrics(part: str) -> list[tuple[str, str]]:
    m = re.match(r"(\S+) FAIL(?::|$)", part)
    return [("rubric", m.group(1))] if m else []


def _state(part: str) -> list[tuple[str, str]]:
    m = re.match(r"(?:final state \(\d+ expected keys\): )?([^\s;]+): (missing \(|expected )", part)
    if not m:
        return []
    return [("state.missing" if m.group(2).startswith("missing") else "state.value", m.group(1))]


def _reference(part: str) -> list[tuple[str, str]]:
    m = re.match(r"ROUGE-1 F \S+ < ([^\s;]+)", part)
    return [("rouge1", f"below {m.group(1)}")] if m else []


def _judge(reason: str) -> list[tuple[str, str]]:
    if not reason.startswith("REJECT"):
        return []
    why = [value_free(r) for r in reason[len("REJECT") :].removeprefix(":").split("; ") if r.strip()]
    return [("reject", w) for w in why] or [("reject", "")]


def _by_part(starts: str, read: Callable[[str], list[tuple[str, str]]]) -> Callable[[str], list[tuple[str, str]]]:
    def parse(reason: str) -> list[tuple[str, str]]:
        return [pair for part in _split(reason, starts) for pair in read(part)]

    return parse


def _one(read: Callable[[str], tuple[str, str] | None]) -> Callable[[str], list[tuple[str, str]]]:
    def parse(part: str) -> list[tuple[str, str]]:
        found = read(part)
        return [] if found is None else [found]

    return parse


#: The parser of each built-in grader's wording, by the grader's name.
_PARSERS: dict[str, Callable[[str], list[tuple[str, str]]]] = {
    "contract": _by_part(_CONTRACT_STARTS, _one(_contract)),
    "trajectory": _by_part(_TRAJECTORY_STARTS, _trajectory),
    "retrieval": _by_part(r"retrieved \[|missing \[|unexpected \[|precision", _retrieval),
    "rubrics": _by_part(r"\S+ (?:FAIL|PENDING|ERROR)(?::|$)", _rubrics),
    "state": _by_part(r"[^\s;]+: (?:missing \(|expected )", _state),
    "reference": _reference,
    "judge": _judge,
}


def reason_parts(grader: str, reason: str) -> list[str]:
    """The single checks of a built-in grader's reason (the whole reason for any other grader).

    >>> reason_parts("contract", 'must_contain: missing "a; b"; must_not: found "c" in "...c..."')
    ['must_contain: missing "a; b"', 'must_not: found "c" in "...c..."']
    """
    starts = {"contract": _CONTRACT_STARTS, "trajectory": _TRAJECTORY_STARTS}.get(grader)
    return _split(reason, starts) if starts else [reason]


def reason_findings(family: str, reason: str | None, *, grader: str | None = None) -> tuple[Finding, ...]:
    """The findings in a reason written in the wording of the built-in grader ``family`` (none for
    another name); ``grader`` names the grader in them (default: ``family``).

    >>> [f.label for f in reason_findings("trajectory", "tools (IN_ORDER): missing [lookup_order(order_id='A-1')]")]
    ['trajectory: lookup_order(order_id) was not called']
    """
    parse = _PARSERS.get(family)
    if not reason or parse is None:
        return ()
    name = grader or family
    return tuple(dict.fromkeys(Finding(name, check, subject) for check, subject in parse(reason)))


def _explanations(grader: str, reason: str) -> list[Finding]:
    parts = [value_free(p) for p in reason.split("; ") if p.strip()]
    return [Finding(grader, "explanation", p) for p in dict.fromkeys(parts)][:_MAX_GENERIC]


def _stored(value: Any) -> list[Mapping[str, Any]] | None:
    """A grader result's stored findings (a list, or its JSON text as Parquet keeps it), or None when it
    has none stored (an older outcome)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if value is None or isinstance(value, (float, bytes)):
        return None
    if isinstance(value, Iterable):
        return [f for f in value if isinstance(f, Mapping)]
    return None


def findings_in(graders: Mapping[str, Any], *, failed: bool = True) -> list[Finding]:
    """Every finding of one outcome's graders cell (``{name: {passed, reason, findings, ...}}``), or of
    a ``{name: reason}`` dict (what a baseline keeps), in grader order, each once.

    Stored findings are taken as they are; a result without them is read from its reason
    (:func:`reason_findings`), and a failed result whose words no parser knows gives its
    ``explanation`` findings. A result that errored, or neither passed nor failed, has none.
    ``failed``: whether the outcome is a FAIL (what a bare reason's result is taken to be).
    """
    out: list[Finding] = []
    for name, g in graders.items():
        res: Mapping[str, Any] = g if isinstance(g, Mapping) else {"reason": g}
        if res.get("error"):
            continue
        stored = _stored(res.get("findings"))
        if stored is not None:
            out += [Finding.from_dict(f, str(name)) for f in stored]
            continue
        passed = res.get("passed") if "passed" in res else (False if failed else None)
        reason = res.get("reason")
        if passed is None or not isinstance(reason, str) or not reason:
            continue
        found = list(reason_findings(str(name), reason))
        if not found and passed is False:
            found = _explanations(str(name), reason)
        out += found
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------- words

_PHRASES = {
    "tools.missing": "{s} was not called",
    "tools.extra": "{s} was called, not expected",
    "tools.args": "{s} was called with other arguments",
    "tools.bad_args": "{s} was called with arguments that are not a JSON object",
    "tools.order": "the calls came out of order (expected {s})",
    "tool_before_text": "{s} was not called before the answer",
    "turns.missing": "a turn is missing",
    "must_contain": "the answer lacks {s}",
    "must_contain_any": "the answer has none of {s}",
    "must_not": "the answer says {s}",
    "regex": "the answer does not match {s}",
    "regex_not": "the answer matches {s}",
    "exact": "the answer is not the expected text",
    "normalized": "the answer is not the expected text (normalized)",
    "refusal": "{s}",
    "json": "JSON: {s}",
    "number": "{s} in the answer",
    "retrieval.missing": "{s} was not retrieved",
    "retrieval.unexpected": "{s} was retrieved, not expected",
    "rubric": "the rubric {s} was not met",
    "rouge1": "ROUGE-1 {s}",
    "state.missing": "the final state lacks {s}",
    "state.value": "the final state has another {s}",
    "reject": "rejected: {s}",
    "explanation": "{s}",
}


def describe(check: str, subject: str) -> str:
    """A finding in words: ``describe("tool_before_text", "lookup_order")`` is
    ``'lookup_order was not called before the answer'``."""
    phrase = _PHRASES.get(check)
    if phrase is None:
        return f"{check} {subject}".strip()
    if not subject and "{s}" in phrase:
        return {"reject": "rejected"}.get(check, f"{check} failed")
    return phrase.format(s=subject)
