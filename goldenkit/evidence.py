"""Deprecated import location: use :mod:`goldenkit.gate.evidence` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.gate.evidence import *  # noqa: F403
from goldenkit.gate.evidence import __all__ as __all__

warnings.warn("goldenkit.evidence is deprecated: import from goldenkit.gate.evidence", DeprecationWarning, stacklevel=2)
