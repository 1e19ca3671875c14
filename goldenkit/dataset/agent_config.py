"""Deprecated import location: use :mod:`goldenkit.scenarios.agent_config` (kept for one release).

Scenario generation calls providers, so it moved out of the dataset layer, which knows nothing of running.
"""

from __future__ import annotations

import warnings

from goldenkit.scenarios.agent_config import *  # noqa: F403
from goldenkit.scenarios.agent_config import __all__ as __all__

warnings.warn(
    "goldenkit.dataset.agent_config is deprecated: import from goldenkit.scenarios.agent_config",
    DeprecationWarning,
    stacklevel=2,
)
