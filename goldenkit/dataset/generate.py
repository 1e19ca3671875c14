"""Deprecated import location: use :mod:`goldenkit.scenarios.generate` (kept for one release).

Scenario generation calls providers, so it moved out of the dataset layer, which knows nothing of running.
"""

from __future__ import annotations

import warnings

from goldenkit.scenarios.generate import *  # noqa: F403
from goldenkit.scenarios.generate import __all__ as __all__

warnings.warn(
    "goldenkit.dataset.generate is deprecated: import from goldenkit.scenarios.generate",
    DeprecationWarning,
    stacklevel=2,
)
