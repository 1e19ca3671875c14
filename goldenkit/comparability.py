"""Deprecated import location: use :mod:`goldenkit.compare.protocol` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.compare.protocol import *  # noqa: F403
from goldenkit.compare.protocol import __all__ as __all__

warnings.warn(
    "goldenkit.comparability is deprecated: import from goldenkit.compare.protocol", DeprecationWarning, stacklevel=2
)
