"""Rows at a time: a row's repeats stop once its verdict is decided, and a sequential run's rows go in
a design order that a monitor (the sequential gate) may stop.

With ``RunOptions.stop_decided_repeats`` a run's work items are rows, not pairs: a row's repeats
are called in order, one after the other (other rows stay concurrent), and the row stops as soon
as :func:`goldenkit.stats.decided_rows` says its collapsed verdict can no longer change (the repeats
not yet called counted as unknown, as errored repeats are in the collapse). Those repeats are
*not needed*: never called, never written, counted in run.json's ``decided_repeats``; the run is
complete without them, and resuming it without the option calls them.

With a :class:`RowMonitor` (``RunOptions.sequential``, the sequential gate of
:mod:`goldenkit.gate._sequential`) the rows are those of ``monitor.order`` (taken lazily, in that
order, at most ``max_in_flight`` at a time) and each row's outcomes go to ``monitor.observe`` in
that order: rows finish out of order, the monitor reads the longest finished prefix. When it says
the decision is reached, no further row is taken and the calls in flight are cancelled; the rows
after the prefix are not needed either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from goldenkit.runner._outcome_index import CODES, OutcomeIndex
from goldenkit.stats import decided_rows, parse_rule

# ``run`` below is a goldenkit.runner._run.RunExecution (which imports this module: typed Any here)
RunExecution = Any

__all__ = ["RowMonitor", "RowSchedule"]

_MASK = 0x0F


class RowMonitor(Protocol):
    """What a sequential run asks of the procedure that may stop it (see :mod:`goldenkit.gate._sequential`)."""

    def order(self, rows: Sequence[tuple[str, str]]) -> list[str]:
        """The rows to run, in the design order, from the run's ``(row_id, slice)``."""
        ...

    def observe(self, row_id: str, outcomes: list[dict[str, Any]]) -> bool:
        """One more row of the prefix, with its outcomes (``repeat, verdict, error_kind``); True: stop."""
        ...

    def record(self, *, calls: int, calls_full: int, finished: bool) -> dict[str, Any]:
        """run.json's ``sequential``; ``finished``: the run was not interrupted."""
        ...


class RowSchedule:
    """Runs a run's rows a row at a time (see the module doc)."""

    def __init__(self, rule: str, monitor: RowMonitor | None = None) -> None:
        parse_rule(rule)
        self.rule, self.monitor = rule, monitor
        self.order: list[str] = []
        self.halted = False
        self.consumed = 0  # rows of the order the monitor has read
        self._finished: dict[int, list[dict[str, Any]]] = {}
        self._seen: dict[str, list[dict[str, Any]]] = {}
        self._inflight: set[asyncio.Task[None]] = set()
        self._positions: dict[str, int] = {}
        self._pending = np.zeros(0, dtype=bool)

    # ------------------------------------------------------------ the work

    async def work(self, run: RunExecution) -> None:
        """Call what the rows still need, row by row, until every row is decided or the monitor stops."""
        index = run.plan.index
        self._pending = np.zeros(len(index), dtype=bool)
        self._pending[run.plan.todo] = True
        if self.monitor is not None:
            self.order = self.monitor.order([(rid, run.plan.row_info[rid][0]) for rid in index.row_ids])
            self._seen = _earlier_outcomes(run, set(self.order))
            run.on_outcome = self._note
        else:
            per_row = self._pending.reshape(-1, index.repeats).any(axis=1)
            self.order = [index.row_ids[i] for i in np.flatnonzero(per_row)]
        self._positions = {rid: i for i, rid in enumerate(self.order)}
        await run.in_workers(self._rows(), len(self.order), lambda rid: self._row(run, rid))

    def _rows(self) -> Iterator[str]:
        for rid in self.order:  # taken lazily: a worker takes the next row only when it is free
            if self.halted:
                return
            yield rid

    async def _row(self, run: RunExecution, row_id: str) -> None:
        index = run.plan.index
        row = index.position[row_id]
        for repeat in range(index.repeats):
            if self.halted or self._decided(index, row):
                break
            i = row * index.repeats + repeat
            if self._pending[i]:
                if not await self._call(run, row_id, repeat):
                    return
                self._pending[i] = False
        if self.monitor is not None and not self.halted:
            self._finish(row_id)

    async def _call(self, run: RunExecution, row_id: str, repeat: int) -> bool:
        """Call one repeat; False when the sequential stop cancelled it."""
        task = asyncio.create_task(run.run_one(row_id, repeat))
        self._inflight.add(task)
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.halted and task.cancelled() and not (current is not None and current.cancelling()):
                return False  # the decision was reached: this call is not needed
            raise
        finally:
            self._inflight.discard(task)
        return True

    def _decided(self, index: OutcomeIndex, row: int) -> bool:
        n_pass, n_fail, n_error, unrun = self._counts(index, np.array([row]))
        return bool(decided_rows(n_pass, n_fail, n_error, unrun, self.rule)[0])

    def _counts(self, index: OutcomeIndex, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per row: PASS, FAIL and ERROR repeats written, and repeats not yet called (pending or absent)."""
        status = (index.status & _MASK).reshape(-1, index.repeats)[rows]
        pending = self._pending.reshape(-1, index.repeats)[rows] if len(self._pending) else status == 0
        known = ~pending & (status != 0)
        count = [((status == CODES[v]) & known).sum(axis=1) for v in ("PASS", "FAIL", "ERROR")]
        return count[0], count[1], count[2], (~known).sum(axis=1)

    # ------------------------------------------------------------ the monitor

    def _note(self, rec: dict[str, Any]) -> None:
        keep = {k: rec.get(k) for k in ("repeat", "verdict", "error_kind", "slice")}
        self._seen.setdefault(str(rec["row_id"]), []).append(keep)

    def _finish(self, row_id: str) -> None:
        """Row ``row_id`` is done: hand the finished prefix of the order to the monitor."""
        monitor = self.monitor
        if monitor is None:
            return
        self._finished[self._positions[row_id]] = self._seen.pop(row_id, [])
        while self.consumed in self._finished and not self.halted:
            outcomes = self._finished.pop(self.consumed)
            rid = self.order[self.consumed]
            self.consumed += 1
            if monitor.observe(rid, _last_per_repeat(outcomes)):
                self.halt()

    def halt(self) -> None:
        """The decision is reached: take no further row and cancel the calls in flight."""
        self.halted = True
        for task in list(self._inflight):
            task.cancel()

    # ------------------------------------------------------------ the record

    def not_needed(self, index: OutcomeIndex) -> int:
        """Pairs never called that the run does not need: the repeats of decided rows, and (sequential, once
        the monitor stopped the run) every pair of the rows after the prefix it read; rows a budget or an
        interruption left unread are still to run, not unneeded."""
        self._pending = np.zeros(0, dtype=bool)  # what is not written now was not called
        absent = (index.status & _MASK).reshape(-1, index.repeats) == 0
        rows = np.arange(absent.shape[0])
        n_pass, n_fail, n_error, unrun = self._counts(index, rows)
        decided = decided_rows(n_pass, n_fail, n_error, unrun, self.rule)
        out = absent & decided[:, None]
        if self.monitor is not None and self.halted:
            used = np.zeros(absent.shape[0], dtype=bool)
            used[[index.position[rid] for rid in self.order[: self.consumed]]] = True
            out |= absent & ~used[:, None]
        return int(out.sum())

    def record(self, run: RunExecution, not_needed: int, finished: bool) -> dict[str, Any]:
        """What run.json records of this way of running: ``decided_repeats`` and (sequential) ``sequential``."""
        index = run.plan.index
        out: dict[str, Any] = {"decided_repeats": {"rule": self.rule, "not_needed": not_needed}}
        if self.monitor is not None:
            calls = int(index.counts()["total"])
            full = len(index)  # the fixed-size run calls every row x repeat of the run
            out["sequential"] = self.monitor.record(calls=calls, calls_full=full, finished=finished)
        return out


def _last_per_repeat(outcomes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row's outcomes, the last one per repeat (a retried ERROR is superseded)."""
    by_repeat = {int(o.get("repeat") or 0): o for o in outcomes}
    return [by_repeat[r] for r in sorted(by_repeat)]


def _earlier_outcomes(run: RunExecution, rows: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The outcomes an earlier invocation wrote of ``rows`` (a resumed sequential run), per row."""
    index = run.plan.index
    out: dict[str, list[dict[str, Any]]] = {}
    if not (index.offset >= 0).any():
        return out
    for batch in index.batches(run.folder.jsonl, 1000):
        for rec in batch:
            rid = str(rec.get("row_id"))
            if rid in rows:
                out.setdefault(rid, []).append({k: rec.get(k) for k in ("repeat", "verdict", "error_kind", "slice")})
    return out
