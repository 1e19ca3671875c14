"""Hash shards: one logical run split over N machines, each running the rows of its shard.

**Shard rule**, exactly: a row's shard (1-based, of N) is::

    int(sha256(utf8(id)).hexdigest(), 16) mod N + 1

It is applied after the split filter and the stratified sample, so the N
shards partition exactly the rows an unsharded run would call (every repeat
of a row lands in the row's shard). The rule depends on the row id alone: it
is reproducible in any language, and independent of the order of the rows,
of the other rows and of library versions. In a shell::

    printf %s refund-0142 | sha256sum   # cfa19b05...42ac15f: as an integer, mod N, + 1

(For N a power of two only the last hex digit matters: ``f`` mod 4 is 3, shard 4.)

>>> shard_of("refund-0142", 4), shard_of("refund-0143", 4)
(4, 3)
>>> parse_shard("2/4")
(2, 4)

``goldenkit run ... --shard K/N`` records ``{"k": K, "n": N}`` as ``shard`` in
run.json; a resume must give the same spec. ``goldenkit merge`` unites the N
shard runs into one ordinary run (:mod:`goldenkit.runner._merge`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from goldenkit._registry import publish
from goldenkit.errors import ConfigError, UsageError


def shard_of(row_id: str, n: int) -> int:
    """The shard (1..n) of the row ``row_id`` under the shard rule (see the module doc)."""
    return int(hashlib.sha256(row_id.encode("utf-8")).hexdigest(), 16) % n + 1


def check_shard(shard: tuple[int, int]) -> tuple[int, int]:
    """``(k, n)`` as ints, when ``1 <= k <= n``; else a ConfigError (exit 1)."""
    try:
        k, n = shard
    except (TypeError, ValueError):
        raise ConfigError(f"shard must be a pair (k, n), got {shard!r}") from None
    if isinstance(k, bool) or isinstance(n, bool) or not isinstance(k, int) or not isinstance(n, int):
        raise ConfigError(f"shard must be two integers (k, n), got {shard!r}")
    if not 1 <= k <= n:
        raise ConfigError(f"shard {k}/{n}: need 1 <= K <= N")
    return k, n


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)``; anything else (``"0/4"``, ``"5/4"``, ``"2"``, ``"a/b"``) is a UsageError."""
    parts = text.strip().split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise UsageError(f"--shard {text!r}: expected K/N with whole numbers, e.g. 2/8")
    k, n = int(parts[0]), int(parts[1])
    if not 1 <= k <= n:
        raise UsageError(f"--shard {text}: need 1 <= K <= N")
    return k, n


def shard_rows(dataset: Any, shard: tuple[int, int]) -> Any:
    """The rows of ``dataset`` in shard ``k`` of ``n`` (a subset in the dataset's order)."""
    k, n = shard
    ids = [str(r) for r in dataset.column("id")]
    return dataset.subset([r for r in ids if shard_of(r, n) == k])


def shard_record(shard: tuple[int, int] | None) -> dict[str, int] | None:
    """What run.json records as ``shard``: ``{"k": K, "n": N}``, or None for an unsharded run."""
    return None if shard is None else {"k": shard[0], "n": shard[1]}


__all__ = ["check_shard", "parse_shard", "shard_of", "shard_record", "shard_rows"]

publish(globals())
