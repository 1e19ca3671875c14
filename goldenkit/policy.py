"""Deprecated import location: use :mod:`goldenkit.gate.policy` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.gate.policy import *  # noqa: F403
from goldenkit.gate.policy import __all__ as __all__

warnings.warn("goldenkit.policy is deprecated: import from goldenkit.gate.policy", DeprecationWarning, stacklevel=2)
