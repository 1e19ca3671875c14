"""goldenkit: evaluate LLM models and agents on versioned golden datasets.

The public API is listed once, in ``__init__.pyi`` beside this file: each public name and
the module it lives in. Type checkers and editors read it as the package's stub; here the
same lines become ``__all__`` and a PEP 562 ``__getattr__`` that imports each name on first
use, so ``import goldenkit`` stays cheap (`goldenkit run` reaches its first model call
without loading pandas, statsmodels or scipy). Modules that are not public API have
private names.
"""

from goldenkit._registry import attach_stub as _attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = _attach_stub(__name__, __file__)
