"""Build contract-shape cases from chat-style samples (openai/evals, inspect_ai).

Both formats give an ``input`` (a string, or a list of chat messages) and a
list of accepted answers (openai ``ideal``, inspect ``target``). Neither says
how an answer is graded: that lives in the eval's registry entry or scorer,
not in the samples file. goldenkit therefore maps answers per FILE:

* **short answers** (every answer in the file has at most
  :data:`SHORT_ANSWER_WORDS` words, e.g. "Paris", "Season 11", "[claim]"):
  the answers are answer keys, graded like openai's ``Includes``:
  ``expect.must_contain_any`` = the answers, and ``reference`` = the first;
* **long answers** (any answer longer): they are reference answers for a judge
  or a similarity grader (openai's model-graded ``fact``, inspect's
  ``model_graded_fact``): only ``reference`` = the first answer is set.

Either way every answer is kept in ``case["answers"]`` and the record under
``case["original"]``.

Chat input: leading system messages without a ``name`` become ``system``
(joined by a blank line); openai few-shot messages (role ``system`` named
``example_user`` / ``example_assistant``) become ``user`` / ``assistant``
history turns (name kept); the final message is the prompt and everything
between is ``history``. Image parts (inspect ``ContentImage``, OpenAI ``image_url``)
go with their message: the prompt's to ``images``, a history message's to its
``images`` (see :func:`goldenkit.formats._common.contract_images`). When the
input does not end with a user message (a
system-only puzzle, an assistant prefill) the last message's text is still sent
as the user turn, and ``case["note"]`` says so.
"""

from __future__ import annotations

from typing import Any

from goldenkit._registry import publish
from goldenkit.formats._common import case_error, chat_message, message_to_dict

#: Answers of at most this many words are answer keys (must_contain_any); longer ones are references.
SHORT_ANSWER_WORDS = 3

_FEW_SHOT_ROLES = {"example_user": "user", "example_assistant": "assistant"}


def input_to_contract(value: Any, *, row_id: str | None, field: str = "input") -> dict[str, Any]:
    """``{"prompt", "system"?, "history"?, "note"?}`` from a string or chat-message input."""
    if isinstance(value, str):
        if not value.strip():
            raise case_error(row_id, f"{field} is empty")
        return {"prompt": value}
    if not isinstance(value, list) or not value:
        raise case_error(row_id, f"{field} must be a non-empty string or a non-empty list of chat messages")
    msgs = [chat_message(m, row_id=row_id, field=f"{field}[{i}]") for i, m in enumerate(value)]
    out: dict[str, Any] = {}
    last = msgs[-1]
    if last.role != "user":
        out["note"] = (
            f"the input ends with a {last.role} message, not a user message; its text is sent as the user turn"
        )
    rest = msgs[:-1]
    system: list[str] = []
    while rest and rest[0].role == "system" and not rest[0].name:
        if rest[0].images:
            raise case_error(row_id, f"{field}: a system message carries an image (only user messages may)")
        system.append(rest.pop(0).content)
    history = []
    for m in rest:
        entry = message_to_dict(m)
        if m.role == "system" and m.name in _FEW_SHOT_ROLES:
            entry["role"] = _FEW_SHOT_ROLES[m.name]
        history.append(entry)
    out["prompt"] = last.content
    if last.images:
        out["images"] = [i.to_dict() for i in last.images]
    if system:
        out["system"] = "\n\n".join(system)
    if history:
        out["history"] = history
    return out


def short_answers(answer_lists: list[list[str]]) -> bool:
    """Whether every answer in a file is short enough to be an answer key."""
    return all(len(a.split()) <= SHORT_ANSWER_WORDS for answers in answer_lists for a in answers)


def answers_to_contract(answers: list[str], *, short: bool) -> dict[str, Any]:
    """``reference``, ``answers`` and (for short answers) ``expect.must_contain_any``."""
    out: dict[str, Any] = {"answers": list(answers)}
    if answers:
        out["reference"] = answers[0]
        if short:
            out["expect"] = {"must_contain_any": list(answers)}
    return out


__all__ = ["SHORT_ANSWER_WORDS", "answers_to_contract", "input_to_contract", "short_answers"]

publish(globals())
