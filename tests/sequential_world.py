"""The world the sequential gate's tests share: a 240-row dataset of three slices (refunds critical) and
deterministic callable agents, each verdict drawn from a hash of the row (no randomness between runs)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from factories import row, write_dataset

from goldenkit.records import Case

ROWS = 240
SLICES = ("billing", "refunds", "shipping")


def u(*parts: object) -> float:
    """A uniform number in [0, 1) fixed by ``parts``."""
    return int(hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:12], 16) / 16**12


def good(case: Case, repeat: int = 0) -> str:
    """Passes 80% of the rows, the same ones on every run."""
    return "yes" if u("pass", case.turns[-1].user) < 0.8 else "no"


def broken(case: Case, repeat: int = 0) -> str:
    """``good``, except a planted regression: refunds rows break at 60%, the others at 5%."""
    q = case.turns[-1].user
    return "no" if u("break", q) < (0.6 if "refunds" in q else 0.05) else good(case, repeat)


def write_world(root: Path) -> Path:
    """The dataset folder ``root/ds`` (its goldenkit.toml declares refunds critical)."""
    lines = []
    for i in range(ROWS):
        sl = SLICES[i % 3]
        lines.append(
            row(f"{sl}-{i:03d}", {"prompt": f"{sl} question {i}", "expect": {"must_contain": ["yes"]}}, slice=sl)
        )
    (root / "ds").mkdir()  # a world is written once
    return write_dataset(root, lines, name="d", toml='[gate]\ncritical = ["refunds"]\n')
