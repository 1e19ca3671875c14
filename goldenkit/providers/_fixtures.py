"""``fixtures``: recorded answers replayed by (row id, repeat), so CI grades without a model.

A fixture set is a folder::

    meta.json       {"schema_version": 1, "agent": "baseline", "model_id": "...",
                     "system_prompt_sha256": "...", "git_commit": "..." (optional),
                     "settings": {...}}
    fixtures.jsonl  one line per row x repeat:
                    {"row_id": "...", "repeat": 0,
                     "turns": [{"text": "...", "tool_calls": [{"name": "...", "args": {...}}]}],
                     "tokens_in": 812, "tokens_out": 95, "latency_ms": 1234.0, "model": "...",
                     "error": null | {"kind": "transient", "message": "...", "status": 503}}

A simulated conversation (a scenario row run with ``--user-simulator``) is recorded
the same way, each turn also carrying ``"user"`` (the message it answers: the
starting prompt, then the simulator's), with ``"conversation": {"turns", "stopped"}``
on the line and the simulator's version in meta.json (``simulator_version``). A
replay (:meth:`FixturesProvider.open_conversation`) sends the recorded user turns
back and answers each with the recorded agent turn, so the whole conversation
replays without any model; a user message that differs from the recorded one
(the scenario was edited, or a live simulator wrote something else) is a
:class:`ReplayDivergence` naming the turn, an ERROR with ``error_kind``
``infrastructure`` (the recording holds no answer to it). A line recorded before conversations were simulated (its
one turn has no ``user``) replays as that one turn.

When a pair appears more than once, the last line wins (a re-recorded answer
supersedes the earlier one). A missing pair is an ``infrastructure`` error ("no recorded
answer for row X repeat K"); a recorded error is replayed as that error, of its recorded
``kind`` (one of the taxonomy's, :data:`goldenkit.schema.ERROR_KINDS`; an older recording's
``permanent`` reads as ``refused``, see :func:`goldenkit.schema.error_kind`). The
agent version of a replay is the one recorded in meta.json, so a recording and
its replay have the same run key except for ``mode``.

:class:`FixtureRecorder` writes the same format during a live run (``--record DIR``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from goldenkit._registry import publish
from goldenkit._scrub import mask_secrets, scrub
from goldenkit.errors import ConfigError, ProviderError
from goldenkit.providers._base import Provider, Response, TurnOutput
from goldenkit.records import Case, ImagePart
from goldenkit.schema import error_kind

META_FILE = "meta.json"
FIXTURES_FILE = "fixtures.jsonl"
FIXTURES_SCHEMA_VERSION = 1
#: What :meth:`FixtureConversation.recorded_user` returns after the recording's last turn.
RECORDING_ENDS = "\x00recording ends"


_NUMBER = (int, float)
#: a fixture line's fields and turn fields with a type: (name, types, what the error says it must be)
_Fields = tuple[tuple[str, type | tuple[type, ...], str], ...]
_LINE_FIELDS: _Fields = (
    ("tokens_in", int, "an integer"),
    ("tokens_out", int, "an integer"),
    ("tokens_cached", int, "an integer"),
    ("tokens_reasoning", int, "an integer"),
    ("latency_ms", _NUMBER, "a number"),
    ("ttft_ms", _NUMBER, "a number"),
    ("cost", _NUMBER, "a number"),
    ("model", str, "a text"),
)
_TURN_FIELDS: _Fields = (
    ("text", str, "a text"),
    ("user", str, "a text"),
    ("tool_calls", list, "a list"),
    ("tool_responses", list, "a list"),
    ("intermediate", list, "a list"),
)


def _typed(value: Any, types: type | tuple[type, ...], what: str, field_name: str, where: str) -> None:
    if value is None or (isinstance(value, types) and not isinstance(value, bool)):
        return
    shown = scrub(json.dumps(value))[:40]  # masked before it is cut
    raise ConfigError(f"{where}: field {field_name} must be {what} or null, got {type(value).__name__} {shown}")


def _check_fields(rec: dict[str, Any], where: str) -> None:
    """A fixture line of the right shape with a field of the wrong type: one line naming the line and the field."""
    for name, types, what in _LINE_FIELDS:
        _typed(rec.get(name), types, what, name, where)
        value = rec.get(name)  # a count, a time or a price: never negative, NaN or infinite
        if isinstance(value, int | float) and not (value >= 0 and value != float("inf")):
            raise ConfigError(f"{where}: field {name} must be {what} >= 0 or null, got {value!r}")
    for k, turn in enumerate(rec.get("turns") or []):
        if not isinstance(turn, dict):
            raise ConfigError(f"{where}: field turns[{k}] must be an object")
        for name, types, what in _TURN_FIELDS:
            _typed(turn.get(name), types, what, f"turns[{k}].{name}", where)
        for j, call in enumerate(turn.get("tool_calls") or []):
            at = f"turns[{k}].tool_calls[{j}]"
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise ConfigError(f"{where}: field {at} must be an object with a text name")
            _typed(call.get("args"), dict, "an object", f"{at}.args", where)
        for j, step in enumerate(turn.get("intermediate") or []):
            if not (isinstance(step, list) and len(step) == 2 and all(isinstance(x, str) for x in step)):
                raise ConfigError(f"{where}: field turns[{k}].intermediate[{j}] must be a pair of texts")


class FixturesProvider(Provider):
    """Replay a fixture folder (``fixtures=DIR``)."""

    name = "fixtures"
    mode = "fixtures"

    def __init__(self, *, fixtures: str | Path | None = None, path: str | Path | None = None, **_ignored: Any) -> None:
        folder = fixtures or path
        if not folder:
            raise ConfigError("provider fixtures: --fixtures DIR is required")
        self.path = Path(folder)
        meta_path = self.path / META_FILE
        data_path = self.path / FIXTURES_FILE
        if not self.path.is_dir():
            raise ConfigError(f"{self.path}: fixtures folder not found")
        if not data_path.exists():
            raise ConfigError(f"{data_path}: fixtures file not found")
        self.meta: dict[str, Any] = {}
        if meta_path.exists():
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise ConfigError(f"{meta_path}: invalid JSON: {exc}") from None
            if not isinstance(meta, dict):
                raise ConfigError(f"{meta_path}: must be a JSON object")
            self.meta = meta
        self.records: dict[tuple[str, int], dict[str, Any]] = {}
        with data_path.open("rb") as fh:
            lines = fh.read().split(b"\n")
        for i, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                if i == len(lines):  # torn last line of an interrupted recording
                    break
                raise ConfigError(f"{data_path}:{i}: invalid JSON") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("row_id"), str):
                raise ConfigError(f"{data_path}:{i}: a fixture line needs a string row_id")
            rep = rec.get("repeat", 0)
            if not isinstance(rep, int) or isinstance(rep, bool) or rep < 0:
                raise ConfigError(f"{data_path}:{i}: repeat must be an integer >= 0")
            if rec.get("error") is None and not isinstance(rec.get("turns"), list):
                raise ConfigError(f"{data_path}:{i}: a fixture line needs turns (a list) or an error")
            _check_fields(rec, f"{data_path}:{i}")
            self.records[(rec["row_id"], rep)] = rec

    def image_refusal(self, image: ImagePart) -> str | None:
        return None  # answers recorded earlier: nothing is sent

    def settings(self) -> dict[str, Any]:
        return {
            "fixtures": str(self.path),
            "agent": self.meta.get("agent"),
            "model": self.meta.get("model_id"),
            "recorded_settings": self.meta.get("settings"),
        }

    def recorded_agent_version(self) -> dict[str, Any]:
        return {
            "git_commit": self.meta.get("git_commit"),
            "model_id": self.meta.get("model_id"),
            "prompt_sha256": self.meta.get("system_prompt_sha256"),
        }

    async def complete(self, case: Case, *, repeat: int = 0) -> Response:
        rec = self.records.get((case.id, repeat))
        if rec is None:
            raise ProviderError(
                f"no recorded answer for row {case.id} repeat {repeat} in {self.path}", kind="infrastructure"
            )
        err = rec.get("error")
        if err:
            if not isinstance(err, dict):
                err = {"message": str(err)}
            raise ProviderError(
                f"recorded error: {err.get('message') or 'error'}",
                kind=error_kind(err.get("kind")),
                status=err.get("status"),
            )
        return Response(
            turns=[TurnOutput.from_dict(t) for t in rec["turns"]],
            tokens_in=rec.get("tokens_in"),
            tokens_out=rec.get("tokens_out"),
            cost=rec.get("cost"),
            model=rec.get("model"),
            raw={"latency_ms": rec.get("latency_ms")},
            tokens_cached=rec.get("tokens_cached"),
            tokens_reasoning=rec.get("tokens_reasoning"),
        )

    def recorded_simulator_version(self) -> dict[str, Any] | None:
        """The user simulator the conversations were recorded with (meta.json), if any."""
        sim = self.meta.get("simulator_version")
        return sim if isinstance(sim, dict) else None

    def open_conversation(self, case: Case, repeat: int) -> FixtureConversation:
        """The recorded conversation of ``case`` x ``repeat`` (a missing or error record fails at the first turn)."""
        return FixtureConversation(self, case, repeat)

    def recorded_latency_ms(self, row_id: str, repeat: int) -> float | None:
        rec = self.records.get((row_id, repeat))
        return None if rec is None else rec.get("latency_ms")


class ReplayDivergence(ProviderError):
    """A replayed conversation departed from its recording: an ``infrastructure`` error (the
    recording holds no answer to what was asked; nobody's answer), its message saying so."""

    default_kind = "infrastructure"


class FixtureConversation:
    """One recorded conversation, replayed turn by turn (see the module doc)."""

    def __init__(self, provider: FixturesProvider, case: Case, repeat: int) -> None:
        self.provider, self.case, self.repeat = provider, case, repeat
        self._turns: list[dict[str, Any]] | None = None

    async def _recorded(self) -> list[dict[str, Any]]:
        if self._turns is None:
            resp = await self.provider.complete(self.case, repeat=self.repeat)  # a recorded error is raised here
            rec = self.provider.records[(self.case.id, self.repeat)]
            self._turns = list(rec["turns"])
            self._response = resp
        return self._turns

    def recorded_user(self, turn: int) -> str | None:
        turns = self._turns or []
        if turn >= len(turns):
            return RECORDING_ENDS
        user = turns[turn].get("user")
        return user if isinstance(user, str) else RECORDING_ENDS

    async def send(self, user: str, done: Any) -> Response:
        turns = await self._recorded()
        k = len(done)
        where = f"row {self.case.id} repeat {self.repeat} turn {k + 1}"
        if k >= len(turns):
            raise ReplayDivergence(f"{where}: the recording ends after {len(turns)} turn(s)", transient=False)
        recorded = turns[k].get("user")
        if recorded is None and k == 0:
            recorded = self.case.prompt  # recorded before conversations were simulated: its one opening turn
        if recorded != user:
            raise ReplayDivergence(
                f"{where}: the user message differs from the recording (recorded {_short(recorded)}, "
                f"now {_short(user)})",
                transient=False,
            )
        out = TurnOutput.from_dict(turns[k])
        resp = self._response
        last = k == len(turns) - 1  # the line's token counts are the conversation's: counted once
        return Response(
            turns=[out],
            tokens_in=resp.tokens_in if last else None,
            tokens_out=resp.tokens_out if last else None,
            model=resp.model,
            tokens_cached=resp.tokens_cached if last else None,
            tokens_reasoning=resp.tokens_reasoning if last else None,
        )

    async def aclose(self) -> None:
        return None


def _short(text: Any) -> str:
    s = scrub(json.dumps(text, ensure_ascii=False))  # an error excerpt: masked before it is cut
    return s if len(s) <= 80 else s[:77] + '..."'


class FixtureRecorder:
    """Append the answers of a live run to a fixture folder, in the replay format, as received: only
    the secret values in use are masked, and a recorded error's message is scrubbed as text for
    people (:mod:`goldenkit._scrub`), so a replay grades what the live run graded.

    ``meta.json`` is written when the recorder opens (an existing one is kept when
    it describes the same agent); each answer or error is one flushed line.
    """

    def __init__(self, folder: str | Path, meta: dict[str, Any]) -> None:
        self.path = Path(folder)
        self.path.mkdir(parents=True, exist_ok=True)
        meta_path = self.path / META_FILE
        full = {"schema_version": FIXTURES_SCHEMA_VERSION, **meta}
        if meta_path.exists():
            try:
                old = json.loads(meta_path.read_text(encoding="utf-8"))
            except ValueError:
                old = None
            keys = ("model_id", "system_prompt_sha256")
            if isinstance(old, dict) and any(old.get(k) != full.get(k) for k in keys):
                raise ConfigError(
                    f"{meta_path}: recorded for another agent (model_id/system prompt differ); record into a new folder"
                )
        text = json.dumps(full, indent=2, ensure_ascii=False)  # its settings were redacted by key
        meta_path.write_text(mask_secrets(text) + "\n", encoding="utf-8")
        # The caller repairs a torn last line (goldenkit.results.repair_jsonl) before appending.
        data_path = self.path / FIXTURES_FILE
        self._fh: IO[str] = data_path.open("a", encoding="utf-8")

    def write(
        self,
        row_id: str,
        repeat: int,
        response: Response | None,
        *,
        latency_ms: float | None,
        error: ProviderError | None = None,
    ) -> None:
        rec: dict[str, Any] = {"row_id": row_id, "repeat": repeat}
        if response is not None:
            rec.update(
                turns=response.trajectory(),
                tokens_in=response.tokens_in,
                tokens_out=response.tokens_out,
                latency_ms=latency_ms,
                model=response.model,
                error=None,
            )
            if response.cost is not None:
                rec["cost"] = response.cost
            for key in ("tokens_cached", "tokens_reasoning"):  # written when the server reported them
                if getattr(response, key) is not None:
                    rec[key] = getattr(response, key)
            if isinstance(response.raw, dict) and isinstance(response.raw.get("conversation"), dict):
                rec["conversation"] = response.raw["conversation"]
        else:
            rec.update(
                turns=[],
                latency_ms=latency_ms,
                error={
                    "kind": error.kind if error else "infrastructure",
                    "message": scrub(str(error)) if error else "error",  # an error excerpt: text for people
                    "status": error.status if error else None,
                },
            )
        # the answer as received (data of record): only the secret values in use are masked
        self._fh.write(mask_secrets(json.dumps(rec, ensure_ascii=False, default=str)) + "\n")
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


__all__ = [
    "FIXTURES_FILE",
    "META_FILE",
    "RECORDING_ENDS",
    "FixtureConversation",
    "FixtureRecorder",
    "FixturesProvider",
    "ReplayDivergence",
]

publish(globals())
