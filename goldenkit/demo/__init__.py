"""The guided demo: ``goldenkit demo`` (:mod:`goldenkit.demo._story`) and ``goldenkit demo --benchmark``
(:mod:`goldenkit.demo._benchmark`), on the bundled dataset's recorded answers."""

from __future__ import annotations

from goldenkit.demo._story import *  # noqa: F403
from goldenkit.demo._story import __all__ as _story_all

__all__ = list(_story_all)
