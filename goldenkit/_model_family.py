"""Model families: which models judge their own kind (self-preference).

A judge that shares the candidate's model family tends to favour its answers. :func:`model_family` names a
model id's family from one table (:data:`MODEL_FAMILIES`); :func:`self_preference` is the flag the
calibration report shows and a gate reads (one rule, one place: both call this module).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODEL_FAMILIES", "model_family", "self_preference"]

#: Model families, most specific first: ``(family, name)``; a model id is in the family when ``name``
#: starts it or follows a separator in it (``openai/gpt-4o-mini``, ``anthropic.claude-3-5``,
#: ``meta-llama/Llama-3.1-8B``, ``qwen2.5:7b``), case aside.
MODEL_FAMILIES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "gpt-4o"),
    ("gpt-4.1", "gpt-4.1"),
    ("gpt-4", "gpt-4"),
    ("gpt-5", "gpt-5"),
    ("gpt-3.5", "gpt-3.5"),
    ("openai o-series", "o1"),
    ("openai o-series", "o3"),
    ("openai o-series", "o4"),
    ("claude", "claude"),
    ("gemini", "gemini"),
    ("gemma", "gemma"),
    ("llama", "llama"),
    ("qwen", "qwen"),
    ("mistral", "mistral"),
    ("mistral", "mixtral"),
    ("deepseek", "deepseek"),
    ("phi", "phi"),
)


def model_family(model: str | None) -> str | None:
    """The family of a model id by :data:`MODEL_FAMILIES` (None when it is in none).

    >>> model_family("openai/gpt-4o-mini"), model_family("anthropic.claude-3-5-sonnet"), model_family("x")
    ('gpt-4o', 'claude', None)
    """
    name = (model or "").strip().lower()
    for family, prefix in MODEL_FAMILIES:
        at = name.find(prefix)
        while at >= 0:
            before = name[at - 1] if at else ""
            after = name[at + len(prefix) : at + len(prefix) + 1]
            if (not before or not before.isalnum()) and not (prefix[-1].isdigit() and after.isdigit()):
                return family
            at = name.find(prefix, at + 1)
    return None


def self_preference(
    judge_model: str | None, candidate_model: str | None, judge_provider: str | None = None
) -> dict[str, Any] | None:
    """The self-preference flag (module doc): None when either model is unknown, else ``flag``, ``family``,
    ``judge`` (provider:model), ``candidate`` and ``why``."""
    if not judge_model or not candidate_model:
        return None
    judge = f"{judge_provider}:{judge_model}" if judge_provider else judge_model
    jf, cf = model_family(judge_model), model_family(candidate_model)
    flag = jf is not None and jf == cf
    if flag:
        why = (
            f"the judge {judge} and the candidate {candidate_model} share the model family {jf}: it may favour its own"
        )
    else:
        jn, cn = jf or "no known family", cf or "no known family"
        why = f"the judge {judge} ({jn}) and the candidate {candidate_model} ({cn}) are of different families"
    return {"flag": flag, "family": jf if flag else None, "judge": judge, "candidate": candidate_model, "why": why}
