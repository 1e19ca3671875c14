"""Reference match: ROUGE-1 F-measure against the reference answer, as ADK's response_match_score.

ADK's ``response_match_score`` (RougeEvaluator) scores each turn with the
``rouge-score`` library: ``RougeScorer(["rouge1"], ...).score(reference,
response)["rouge1"].fmeasure``, where a turn's text is its parts' texts joined
with ``"\\n"`` (parts without text skipped; a missing response or reference is
``""``, which scores 0). The case score is the mean over turns (paired with
``zip``) and it passes when the score is >= the threshold: the case's
``response_match_score`` criterion (a number or ``{"threshold": ...}``), else
the grader's threshold, default 0.8 (ADK's default when there is no
test_config.json).

Tokenization. Current ADK releases (the one in goldenkit's dev extra among
them) give the scorer a Unicode-aware tokenizer: the text is NFKC-normalized
and lowercased; CJK ideographs, kana and hangul syllables are one token each;
Thai, Lao, Khmer and Myanmar text is cut into base-character clusters (a base
character with the combining marks after it); other runs of letters, digits
and combining marks form words; every other character separates words; a
word made only of ASCII goes through rouge-score's own tokenizer (keeping
``[a-z0-9]`` runs, Porter-stemming tokens longer than 3 characters), other
words stay whole and unstemmed. ``tokenizer="adk"`` (the default) does the
same; ``tokenizer="default"`` is rouge-score's plain tokenizer with the
stemmer (older ADK releases, and Vertex's ``rouge_1``), which drops every
non-ASCII letter, so Cyrillic or Chinese text scores 0. On ASCII text the two
agree.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

from rouge_score import tokenize

from goldenkit._checks import unit_threshold
from goldenkit._findings import reason_findings
from goldenkit._registry import publish
from goldenkit.errors import ConfigError, InputError
from goldenkit.graders._base import Grader, GradeResult, final_reference, options_version, selected_for
from goldenkit.graders._criteria import criterion, has_criteria, is_simulated
from goldenkit.records import Case, Response

if TYPE_CHECKING:
    from rouge_score import rouge_scorer

# rouge-score's scorer and nltk's Porter stemmer import scipy (seconds); they are
# loaded when the first score is computed, so a run that never scores ROUGE starts fast.

__all__ = ["DEFAULT_THRESHOLD", "TOKENIZERS", "ReferenceMatchGrader", "UnicodeTokenizer", "rouge1_f"]

DEFAULT_THRESHOLD = 0.8
TOKENIZERS = ("adk", "default")
_METRIC = "response_match_score"
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _cluster_script(ch: str) -> bool:
    """Thai, Lao, Myanmar or Khmer: scripts written without spaces between words."""
    cp = ord(ch)
    return 0x0E00 <= cp <= 0x0EFF or 0x1000 <= cp <= 0x109F or 0x1780 <= cp <= 0x17FF


def _single_token_script(ch: str) -> bool:
    """CJK unified ideographs, hiragana, katakana and hangul syllables: one token per character."""
    cp = ord(ch)
    return 0x4E00 <= cp <= 0x9FFF or 0x3040 <= cp <= 0x30FF or 0xAC00 <= cp <= 0xD7AF


class _CachedPorter:
    """The Porter stemmer rouge-score uses, memoized (stemming dominates the cost of a score)."""

    def __init__(self) -> None:
        from nltk.stem import porter

        self.stem = lru_cache(maxsize=200_000)(porter.PorterStemmer().stem)


class StemmingTokenizer:
    """rouge-score's default tokenizer with its Porter stemmer (``DefaultTokenizer(use_stemmer=True)``), memoized."""

    def __init__(self, use_stemmer: bool = True) -> None:
        self._stemmer = _CachedPorter() if use_stemmer else None

    def tokenize(self, text: str) -> list[str]:
        return list(tokenize.tokenize(text, self._stemmer))


class UnicodeTokenizer:
    """The Unicode-aware word splitting described in the module doc, feeding rouge-score's own tokenizer."""

    def __init__(self, use_stemmer: bool = True) -> None:
        self._ascii = StemmingTokenizer(use_stemmer=use_stemmer)

    @staticmethod
    def words(text: str) -> list[str]:
        """The words of ``text`` before ASCII words are handed to rouge-score."""
        text = unicodedata.normalize("NFKC", text).lower()
        if text.isascii():
            return _ASCII_WORD.findall(text)
        words: list[str] = []
        current: list[str] = []

        def flush() -> None:
            if current:
                words.append("".join(current))
                current.clear()

        for ch in text:
            if ch < "\x80":  # ASCII: letters and digits make words, everything else separates
                if ch.isalnum():
                    current.append(ch)
                else:
                    flush()
                continue
            mark = unicodedata.category(ch).startswith("M")
            if _single_token_script(ch):
                flush()
                words.append(ch)
            elif _cluster_script(ch) and not mark:
                flush()  # a base character opens a new cluster
                current.append(ch)
            elif mark or ch.isalnum():
                current.append(ch)
            else:
                flush()
        flush()
        return words

    def tokenize(self, text: str) -> list[str]:
        normalized = unicodedata.normalize("NFKC", text)
        if normalized.isascii():
            # every word is ASCII: rouge-score's tokenizer on the whole text splits and stems the same way
            return self._ascii.tokenize(normalized)
        tokens: list[str] = []
        for word in self.words(normalized):
            if word.isascii():
                tokens.extend(self._ascii.tokenize(word))
            else:
                tokens.append(word)
        return tokens


@lru_cache(maxsize=4)
def _scorer(tokenizer: str) -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer

    if tokenizer == "adk":
        return rouge_scorer.RougeScorer(["rouge1"], tokenizer=UnicodeTokenizer(use_stemmer=True))
    if tokenizer == "default":
        return rouge_scorer.RougeScorer(["rouge1"], tokenizer=StemmingTokenizer(use_stemmer=True))
    raise InputError(f"unknown ROUGE tokenizer {tokenizer!r} (expected one of {', '.join(TOKENIZERS)})")


def rouge1_f(reference: str, response: str, *, tokenizer: str = "adk") -> float:
    """ROUGE-1 F-measure of ``response`` against ``reference``, as ADK's response_match_score.

    >>> round(rouge1_f("I have set the device_3 status to off.", "Device 3 is now off."), 4)
    0.4286
    """
    return float(_scorer(tokenizer).score(reference or "", response or "")["rouge1"].fmeasure)


class ReferenceMatchGrader(Grader):
    """ROUGE-1 F-measure of the answer against the reference (see the module doc).

    ADK and Vertex cases are scored per turn against each turn's expected
    response (every turn, as ADK: a turn without one has reference ``""`` and
    scores 0); contract cases compare the final answer with ``case.reference``
    (or the last turn's expected response). Options: ``threshold`` (default
    0.8; a case's ``response_match_score`` criterion wins), ``tokenizer``
    (``"adk"`` or ``"default"``). It is hard, like ADK's metric; leave
    ``reference`` out of ``[graders] use`` to keep references as data only.
    """

    name = "reference"
    BASE_VERSION = "1"

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD, tokenizer: str = "adk", hard: bool = True) -> None:
        if tokenizer not in TOKENIZERS:
            raise ConfigError(f"graders.reference.tokenizer must be one of {', '.join(TOKENIZERS)}, got {tokenizer!r}")
        self.threshold = unit_threshold(threshold, "graders.reference.threshold")
        self.tokenizer = tokenizer
        self.hard = hard
        self.version = options_version(
            self.BASE_VERSION,
            {
                "threshold": None if self.threshold == DEFAULT_THRESHOLD else self.threshold,
                "tokenizer": None if tokenizer == "adk" else tokenizer,
            },
        )

    def _threshold(self, case: Case) -> tuple[bool, float]:
        """(applies?, threshold) from the case's criteria."""
        if is_simulated(case.criteria):
            return False, self.threshold
        named, settings = criterion(case.criteria, _METRIC)
        if named:
            return True, float(settings.get("threshold", self.threshold))
        if has_criteria(case.criteria):
            return False, self.threshold
        return True, self.threshold

    def _pairs(self, case: Case, response: Response) -> list[tuple[str, str]]:
        if case.shape == "contract":
            ref = final_reference(case)
            return [] if ref is None else [(ref, response.text)]
        if not any(t.expected_response is not None for t in case.turns) and case.reference is None:
            return []
        refs = [t.expected_response for t in case.turns]
        if refs and refs[-1] is None and case.reference is not None:
            refs[-1] = case.reference  # a case-level reference is the final turn's
        return [(r or "", t.text) for r, t in zip(refs, response.turns, strict=False)]

    def applies(self, case: Case) -> bool:
        if not self._threshold(case)[0]:
            return False
        if case.shape == "contract":
            return final_reference(case) is not None
        return case.reference is not None or any(t.expected_response is not None for t in case.turns)

    def grade(self, case: Case, response: Response) -> GradeResult:
        if not selected_for(case, self.name):
            return GradeResult(passed=None, reason="not selected for this case")
        applies, threshold = self._threshold(case)
        if is_simulated(case.criteria):
            return GradeResult(passed=None, reason="simulated-user scenario: no expected answers")
        if not applies:
            return GradeResult(passed=None, reason=f"the case's criteria do not ask for {_METRIC}")
        pairs = self._pairs(case, response)
        if not pairs:
            return GradeResult(passed=None, reason="no reference answer")
        scores = [rouge1_f(ref, got, tokenizer=self.tokenizer) for ref, got in pairs]
        score = sum(scores) / len(scores)
        passed = score >= threshold
        if passed:
            return GradeResult(passed=True, score=score, reason="")
        low = [(i, s) for i, s in enumerate(scores) if s < threshold]
        parts = [f"ROUGE-1 F {score:.3f} < {threshold:g}"]
        if len(pairs) > 1:
            parts.append("low turns: " + ", ".join(f"{i + 1} ({s:.2f})" for i, s in low[:5]))
        reason = "; ".join(parts)
        return GradeResult(False, score, reason, findings=reason_findings("reference", reason, grader=self.name))


publish(globals())
