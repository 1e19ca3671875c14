"""The guided demo: ``goldenkit demo`` (:mod:`goldenkit.demo._story`) and ``goldenkit demo --benchmark``
(:mod:`goldenkit.demo._benchmark`), on the bundled dataset's recorded answers."""

from goldenkit._registry import attach_stub as _attach_stub

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
