"""Deprecated import location: use :mod:`goldenkit.leaderboards.passk` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.leaderboards.passk import *  # noqa: F403
from goldenkit.leaderboards.passk import __all__ as __all__

warnings.warn(
    "goldenkit.passk is deprecated: import from goldenkit.leaderboards.passk", DeprecationWarning, stacklevel=2
)
