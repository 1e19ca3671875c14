"""Deprecated import location: use :mod:`goldenkit.leaderboards.alignment` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.leaderboards.alignment import *  # noqa: F403
from goldenkit.leaderboards.alignment import __all__ as __all__

warnings.warn(
    "goldenkit.alignment is deprecated: import from goldenkit.leaderboards.alignment", DeprecationWarning, stacklevel=2
)
