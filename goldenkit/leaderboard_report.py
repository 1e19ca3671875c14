"""Deprecated import location: use :mod:`goldenkit.leaderboards.report` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.leaderboards.report import *  # noqa: F403
from goldenkit.leaderboards.report import __all__ as __all__

warnings.warn(
    "goldenkit.leaderboard_report is deprecated: import from goldenkit.leaderboards.report",
    DeprecationWarning,
    stacklevel=2,
)
