"""Deprecated import location: use :mod:`goldenkit.runner.outcome_index` (kept for one release)."""

from __future__ import annotations

import warnings

from goldenkit.runner.outcome_index import *  # noqa: F403
from goldenkit.runner.outcome_index import __all__ as __all__

warnings.warn(
    "goldenkit.runner.index is deprecated: import from goldenkit.runner.outcome_index", DeprecationWarning, stacklevel=2
)
