"""Deprecated import location: use :mod:`goldenkit.leaderboards.ranking` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.leaderboards.ranking import *  # noqa: F403
from goldenkit.leaderboards.ranking import __all__ as __all__

warnings.warn(
    "goldenkit.ranking is deprecated: import from goldenkit.leaderboards.ranking", DeprecationWarning, stacklevel=2
)
