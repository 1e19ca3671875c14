"""Deprecated import location: use :mod:`goldenkit.demo.benchmark` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.demo.benchmark import *  # noqa: F403
from goldenkit.demo.benchmark import __all__ as __all__

warnings.warn(
    "goldenkit.demo_benchmark is deprecated: import from goldenkit.demo.benchmark", DeprecationWarning, stacklevel=2
)
