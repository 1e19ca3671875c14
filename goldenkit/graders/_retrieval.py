"""The retrieval grader: the ids the agent retrieved against the case's retrieval oracle.

A case names the ids it should retrieve in ``expect.retrieval`` (alias
``expect.rag``, the golden harness's oracle): a list of ids, or an object
``{"ids": [...], "k": 5, "min_precision": 0.6, "min_recall": 1.0}`` that
overrides the grader's settings for that case.

What was retrieved: ``Response.retrieved`` (a provider or a callable reports the
ids, in rank order), else the ids found in the responses of the tools named in
``tools`` (the ADK provider records every tool response): every value of an
``id_field`` key (default ``"id"``) at any depth of the response, and every
string of a list of strings, in the order met, duplicates dropped. A provider
that reports nothing, with no such tool configured, cannot be graded (an error
result, never a FAIL).

The grade:

* ``mode = "exact"`` (default): PASS when the retrieved set equals the expected
  set (nothing missing, nothing unexpected);
* ``mode = "at_k"``: precision@k = |expected ∩ top k| / |top k| and recall@k =
  |expected ∩ top k| / |expected| (``k`` default: every retrieved id); PASS when
  both reach ``min_precision`` (default 0) and ``min_recall`` (default 1). The
  score is recall@k.

The reason always lists what was retrieved (the outcome keeps it), then the
missing and the unexpected ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from goldenkit._checks import unit_threshold
from goldenkit._findings import reason_findings
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, InputError
from goldenkit.graders._base import Grader, GradeResult, options_version, selected_for
from goldenkit.records import Case, Response

__all__ = ["RetrievalGrader", "ids_in", "retrieved_ids"]

_MODES = ("exact", "at_k")
_SHOWN = 40


def ids_in(value: Any, id_field: str = "id") -> list[str]:
    """Ids in one tool response (see the module doc), in the order met.

    >>> ids_in({"results": [{"id": "d1", "text": "..."}, {"id": "d7"}]})
    ['d1', 'd7']
    >>> ids_in(["c-1", "c-2"])
    ['c-1', 'c-2']
    """
    out: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            if k == id_field and isinstance(v, (str, int)) and not isinstance(v, bool):
                out.append(str(v))
            else:
                out += ids_in(v, id_field)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            out += value
        else:
            for v in value:
                out += ids_in(v, id_field)
    return out


def _dedup(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def retrieved_ids(response: Response, tools: Sequence[str], id_field: str = "id") -> list[str] | None:
    """``response.retrieved``, else the ids in the responses of ``tools``; None when neither is there."""
    if response.retrieved is not None:
        return _dedup(str(r) for r in response.retrieved)
    if not tools:
        return None
    found: list[str] = []
    for turn in response.turns:
        for tr in turn.tool_responses:
            if isinstance(tr, Mapping) and tr.get("name") in tools:
                found += ids_in(tr.get("response"), id_field)
    return _dedup(found)


def _show(ids: Sequence[str]) -> str:
    more = f", +{len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return "[" + ", ".join(ids[:_SHOWN]) + more + "]"


class RetrievalGrader(Grader):
    """Retrieved ids against ``expect.retrieval`` / ``expect.rag`` (see the module doc).

    Options: ``mode`` (``exact`` | ``at_k``), ``k``, ``min_precision``,
    ``min_recall``, ``tools`` (tool names whose responses hold the retrieved
    ids), ``id_field`` (default ``"id"``).
    """

    name = "retrieval"
    BASE_VERSION = "1"

    def __init__(
        self,
        *,
        mode: str = "exact",
        k: int | None = None,
        min_precision: float = 0.0,
        min_recall: float = 1.0,
        tools: Sequence[str] = (),
        id_field: str = "id",
        hard: bool = True,
    ) -> None:
        if mode not in _MODES:
            raise ConfigError(f"graders.retrieval: mode must be one of {', '.join(_MODES)}, got {mode!r}")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ConfigError(f"graders.retrieval: k must be a positive integer, got {k!r}")
        if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
            raise ConfigError("graders.retrieval: tools must be a list of tool names")
        try:
            self.min_precision = unit_threshold(min_precision, "graders.retrieval: min_precision")
            self.min_recall = unit_threshold(min_recall, "graders.retrieval: min_recall")
        except InputError as exc:
            raise ConfigError(str(exc)) from None
        self.mode, self.k, self.tools, self.id_field, self.hard = mode, k, list(tools), id_field, hard
        self.version = options_version(
            self.BASE_VERSION,
            {
                "mode": None if mode == "exact" else mode,
                "k": k,
                "min_precision": None if self.min_precision == 0.0 else self.min_precision,
                "min_recall": None if self.min_recall == 1.0 else self.min_recall,
                "id_field": None if id_field == "id" else id_field,
            },
        )

    @staticmethod
    def _oracle(case: Case) -> Any:
        expect = case.expect or {}
        return expect.get("retrieval", expect.get("rag"))

    def applies(self, case: Case) -> bool:
        return self._oracle(case) is not None

    def _spec(self, case: Case) -> tuple[list[str], str, int | None, float, float]:
        """(expected ids, mode, k, min precision, min recall) for ``case``."""
        oracle = self._oracle(case)
        mode, k, p, r = self.mode, self.k, self.min_precision, self.min_recall
        if isinstance(oracle, Mapping):
            mode = "at_k" if any(x in oracle for x in ("k", "min_precision", "min_recall")) else mode
            k = oracle.get("k", k)
            p = unit_threshold(oracle.get("min_precision", p), "expect.retrieval.min_precision")
            r = unit_threshold(oracle.get("min_recall", r), "expect.retrieval.min_recall")
            oracle = oracle.get("ids")
        if not isinstance(oracle, list) or not all(isinstance(x, (str, int)) for x in oracle):
            raise InputError(f"case {case.id}: expect.retrieval must be a list of ids (or {{'ids': [...], ...}})")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise InputError(f"case {case.id}: expect.retrieval.k must be a positive integer, got {k!r}")
        return _dedup(str(x) for x in oracle), mode, k, p, r

    def grade(self, case: Case, response: Response) -> GradeResult:
        if not selected_for(case, self.name):
            return GradeResult(passed=None, reason="not selected for this case")
        if self._oracle(case) is None:
            return GradeResult(passed=None, reason="no retrieval expectation")
        expected, mode, k, min_p, min_r = self._spec(case)
        got = retrieved_ids(response, self.tools, self.id_field)
        if got is None:
            return GradeResult(
                passed=None,
                error=True,
                reason="the provider reports no retrieved ids (Response.retrieved) and no [graders.retrieval] tools",
            )
        top = got[:k] if k is not None else got
        want = set(expected)
        missing = [x for x in expected if x not in set(top)]
        unexpected = [x for x in top if x not in want]
        bits = [f"retrieved {_show(got)}"]
        if missing:
            bits.append(f"missing {_show(missing)}")
        if unexpected:
            bits.append(f"unexpected {_show(unexpected)}")
        if mode == "exact":
            passed = not missing and not unexpected
            score = 1.0 if passed else 0.0
        else:
            hits = len(top) - len(unexpected)
            precision = hits / len(top) if top else (1.0 if not expected else 0.0)
            recall = hits / len(expected) if expected else 1.0
            passed = precision >= min_p and recall >= min_r
            score = recall
            at = f"@{k}" if k is not None else ""
            bits.insert(1, f"precision{at} {precision:.3g} (min {min_p:g}), recall{at} {recall:.3g} (min {min_r:g})")
        reason = "; ".join(bits)
        return GradeResult(passed, score, reason, findings=reason_findings("retrieval", reason, grader=self.name))


publish(globals())
