"""What people read first about a run: its label (:func:`run_label`), one rule for every display.

A run is labelled by ``goldenkit run --label TEXT`` (``[run] label``, ``run_eval(label=...)``;
checked by :data:`goldenkit._constraints.RUN_OPTIONS`), recorded in run.json as ``label``.
Without one, the label is derived from what run.json records of the system under test, so
that runs differing only in a setting read differently:

==========================  ==========================================================
a model (openai, ollama)    the model, then each setting that differs from its default
                            (:data:`SHOWN_SETTINGS`): ``tiny T=0.8 seed=1``
a callable agent            its function's name (``mymod:answer`` -> ``answer``)
an ADK agent                the agent's name (else its attribute in ``module:attr``)
a fixtures replay           the recorded agent's label, derived the same way from what
                            the recording kept (its agent name, else its model)
an imported run             the harness and its file (and the model when recorded)
==========================  ==========================================================

Whatever its source, a label is shown as one line for people: control and invisible formatting characters
(a newline, a right-to-left override, a zero-width space in a model name or a system prompt) are dropped,
whitespace is collapsed, credential-shaped text is masked (:func:`goldenkit._text.one_line`) and it is cut
at :data:`SHOWN_LENGTH` characters.

The label is for reading, never for comparing: it is not in the protocol key
(:func:`goldenkit.compare.protocol_key`), and two runs may share one. Leaderboards, the runs
index (:func:`goldenkit.history.runs_df`, column ``label``), pages, reprs and the run report
show it first and the run id after it.

>>> run_label({"label": "nightly candidate", "run_id": "r1"})
'nightly candidate'
>>> settings = {"model": "tiny", "temperature": 0.8, "seed": 1, "history": "actual", "max_tool_steps": 8}
>>> run_label({"provider": {"name": "openai", "settings": settings}, "run_id": "r2"})
'tiny T=0.8 seed=1'
>>> run_label({"provider": {"name": "callable", "settings": {"callable": "mymod:answer"}}, "run_id": "r3"})
'answer'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from goldenkit._checks import _unprintable
from goldenkit._text import one_line

__all__ = ["SHOWN_LENGTH", "SHOWN_SETTINGS", "labelled", "run_label"]

#: The most characters of a label shown (a given one has at most 80; a derived one may list many settings).
SHOWN_LENGTH = 120

#: The settings of a model provider (its run.json ``provider.settings``) that a derived label shows when they
#: differ from their default, in this order: ``(setting, short name, default)``. A default is the value the
#: provider records when the option is not given (tests/test_run_label.py checks them against the providers).
SHOWN_SETTINGS: tuple[tuple[str, str, Any], ...] = (
    ("temperature", "T", None),
    ("seed", "seed", None),
    ("max_tokens", "max_tokens", None),
    ("tool_choice", "tool_choice", None),
    ("history", "history", "actual"),
    ("max_tool_steps", "max_tool_steps", 8),
)
#: Settings whose value is a mapping of extra request fields, shown key by key (``top_p=0.9``).
_EXTRA = ("extra", "options")
#: Characters of a replaced system prompt shown in a label.
_SYSTEM_SHOWN = 24


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str | int):
        return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _differing(settings: Mapping[str, Any]) -> list[str]:
    """``T=0.8``, ``seed=1``, ...: the shown settings that differ from their defaults, then extra fields."""
    out = [
        f"{short}={_value(settings[key])}"
        for key, short, default in SHOWN_SETTINGS
        if settings.get(key) is not None and settings.get(key) != default
    ]
    for key in _EXTRA:
        out.extend(f"{k}={_value(v)}" for k, v in sorted(_dict(settings.get(key)).items()))
    system = _text(settings.get("system"))
    if system is not None:
        cut = " ".join(system.split())
        out.append(f'system "{cut[:_SYSTEM_SHOWN].rstrip()}{"..." if len(cut) > _SYSTEM_SHOWN else ""}"')
    return out


def _tail(spec: Any) -> str | None:
    """``answer`` of ``mymod:answer`` (or ``mymod:Agent.answer``, ``pkg.agent:root_agent`` -> ``root_agent``)."""
    text = _text(spec)
    return None if text is None else text.rpartition(":")[2].rpartition(".")[2] or text


def _from_settings(settings: Mapping[str, Any], model: Any) -> str | None:
    """The label of a system under test from its provider settings (a live run's, or a recording's)."""
    if "callable" in settings:
        name = _tail(settings.get("callable"))
        return None if name is None else " ".join([name, *_differing(settings)])
    if "agent_name" in settings or "factory" in settings:  # an ADK agent (a factory's is built at run time)
        agent = _text(settings.get("agent_name")) or _tail(settings.get("agent")) or "agent"
        return " ".join([agent, *_differing(settings)])
    name = _text(settings.get("model")) or _text(model)
    return None if name is None else " ".join([name, *_differing(settings)])


def _fixtures(settings: Mapping[str, Any], model: Any) -> str | None:
    """A replay: the recorded agent as a recording by goldenkit describes it, else its recorded agent's name."""
    recorded = _dict(settings.get("recorded_settings"))
    if any(recorded.get(k) is not None for k in ("callable", "model", "agent_name")):
        return _from_settings(recorded, model)
    return _text(settings.get("agent")) or _text(settings.get("model")) or _text(model)


def _imported(manifest: Mapping[str, Any], model: Any) -> str | None:
    source = _dict(manifest.get("source"))
    harness = _text(source.get("format")) or _text(_dict(manifest.get("provider")).get("name"))
    file = _text(source.get("file_name"))
    what = " ".join(x for x in (harness, file) if x) or None
    name = _text(model)
    return f"{name} ({what})" if name and what else name or what


def run_label(manifest: Mapping[str, Any]) -> str:
    """The label of the run whose run.json is ``manifest``: the one it was given, else one derived from what
    distinguishes it (see the module doc); the run id when nothing is recorded to derive one from."""
    given = _text(manifest.get("label"))
    if given is not None:
        return _shown(given) or str(manifest.get("run_id") or "(unnamed run)")
    provider = _dict(manifest.get("provider"))
    settings = _dict(provider.get("settings"))
    model = _dict(manifest.get("agent_version")).get("model_id")
    if manifest.get("mode") == "imported":
        derived = _imported(manifest, model)
    elif provider.get("name") == "fixtures":
        derived = _fixtures(settings, model)
    else:
        derived = _from_settings(settings, model)
    return _shown(derived or "") or str(manifest.get("run_id") or "(unnamed run)")


def _shown(text: str) -> str:
    """``text`` as one line for people (the module doc): what :func:`goldenkit._checks._unprintable` finds
    dropped but whitespace, which becomes single spaces; secrets masked; cut at :data:`SHOWN_LENGTH`.

    >>> _shown("ti\\u202eny  T=0.8\\nseed=1 \\u200b end")
    'tiny T=0.8 seed=1 end'
    """
    return one_line("".join(ch for ch in text if ch.isspace() or _unprintable(ch) is None), SHOWN_LENGTH)


def labelled(label: Any, run_id: Any) -> str:
    """A run in one text cell: its label, then its id in parentheses (the id alone when they are the same).

    >>> labelled("tiny T=0.8 seed=1", "2026-12-05-tiny"), labelled("r1", "r1")
    ('tiny T=0.8 seed=1 (2026-12-05-tiny)', 'r1')
    """
    shown = _text(label)
    return str(run_id) if shown is None or shown == str(run_id) else f"{shown} ({run_id})"
