"""Progress of a run: done / total, PASS / FAIL / ERROR, calls/s and ETA.

Drawn by ``tqdm.auto``: a live widget in Jupyter, a redrawn bar on a terminal,
nothing when stderr is not a terminal (a CI log) or with ``progress=False``
(``goldenkit run --quiet``). A text stream passed as ``progress=`` gets the bar
when it is a terminal, else a plain line every ``every`` seconds (a log file).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import IO, Any

from goldenkit.schema import ERROR, FAIL, PASS, SKIPPED

_BAR = "[{bar:24}] {n_fmt}/{total_fmt} {postfix[0]} | elapsed {elapsed} ETA {remaining}"


def _fmt_duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Counts the outcomes of a run as they are written and shows them (see the module doc).

    ``target``: None or True (stderr through ``tqdm.auto``), False (nothing), or a text stream.
    """

    def __init__(self, total: int, target: bool | IO[str] | None, *, every: float = 10.0) -> None:
        self.total = total
        self.done = 0
        self.calls = 0
        self.counts: Counter[str] = Counter()
        self.t0 = time.monotonic()
        self._every = every
        self._last = 0.0
        self._log: IO[str] | None = None
        self._bar: Any = None
        if target is False or total == 0:
            return
        stream = None if target is None or target is True else target
        if stream is not None and not getattr(stream, "isatty", lambda: False)():
            self._log = stream
            return
        from tqdm.auto import tqdm  # only a run that may show a bar loads it

        bar = tqdm(
            total=total,
            file=stream,
            disable=None,  # quiet on a stream that is not a terminal; Jupyter always shows its widget
            bar_format=_BAR,
            postfix=[self._counts_text()],
            ascii=" #",
            mininterval=0.2,
            leave=True,
        )
        self._bar = None if bar.disable else bar

    def _counts_text(self) -> str:
        c = self.counts
        rate = self.calls / max(1e-9, time.monotonic() - self.t0)
        skipped = f" SKIPPED {c[SKIPPED]}" if c[SKIPPED] else ""
        return f"PASS {c[PASS]} FAIL {c[FAIL]} ERROR {c[ERROR]}{skipped} | {rate:.1f} calls/s"

    def update(self, verdict: str, calls: int) -> None:
        """One outcome written, after ``calls`` calls."""
        self.done += 1
        self.counts[verdict] += 1
        self.calls += calls
        if self._bar is not None:
            self._bar.postfix[0] = self._counts_text()
            self._bar.update(1)
        elif self._log is not None and time.monotonic() - self._last >= self._every:
            self._last = time.monotonic()
            self._write_line()

    def _write_line(self) -> None:
        if self._log is None:
            return
        el = time.monotonic() - self.t0
        eta = _fmt_duration(el / self.done * (self.total - self.done)) if self.done else "--:--"
        self._log.write(
            f"goldenkit run: {self.done}/{self.total} {self._counts_text()} | elapsed {_fmt_duration(el)} ETA {eta}\n"
        )
        self._log.flush()

    def close(self) -> None:
        """Show the final counts and end the bar."""
        if self._bar is not None:
            self._bar.postfix[0] = self._counts_text()
            self._bar.refresh()
            self._bar.close()
            self._bar = None
        elif self._log is not None:
            self._write_line()
            self._log = None


__all__ = ["Progress"]
