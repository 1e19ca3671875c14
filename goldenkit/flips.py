"""Deprecated import location: use :mod:`goldenkit.compare.flips` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.compare.flips import *  # noqa: F403
from goldenkit.compare.flips import __all__ as __all__

warnings.warn("goldenkit.flips is deprecated: import from goldenkit.compare.flips", DeprecationWarning, stacklevel=2)
