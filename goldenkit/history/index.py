"""The old import location of :mod:`goldenkit.history.run_index` (the index of every run), kept for one release.

It only re-exports the new module. It warns (and moves to the deprecated
locations of the architecture test) once nothing in goldenkit imports it.
"""

from __future__ import annotations

from goldenkit.history.run_index import *  # noqa: F403
from goldenkit.history.run_index import __all__ as __all__
