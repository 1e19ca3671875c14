"""Deprecated import location: use :mod:`goldenkit.leaderboards.pairwise` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.leaderboards.pairwise import *  # noqa: F403
from goldenkit.leaderboards.pairwise import __all__ as __all__

warnings.warn(
    "goldenkit.pairwise is deprecated: import from goldenkit.leaderboards.pairwise", DeprecationWarning, stacklevel=2
)
