"""Old import locations, kept working for one release: one table and one rule, no shim files.

A module that is not public API has a private name (``goldenkit.runner._evaluate``); its
old name (``goldenkit.runner.evaluate``) still imports, as the same module object, with a
DeprecationWarning naming the public place to import from. :data:`MOVED` lists the other
old locations (modules that moved to another package). The finder answers only for
``goldenkit.*`` names that no file answers for, after every other finder of ``sys.meta_path``.

>>> import sys, warnings
>>> _ = sys.modules.pop("goldenkit.compare.protocol", None)  # imported before: no new warning
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     import goldenkit.compare.protocol as old
>>> import goldenkit.compare._protocol as new
>>> print(old is new, caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
True goldenkit.compare.protocol is deprecated (it is the private goldenkit.compare._protocol):
import from goldenkit.compare
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "MovedFinder", "moved_target"]

#: Old module -> (the module it is now, the public place to import its names from).
MOVED: dict[str, tuple[str, str]] = {
    "goldenkit.cases": ("goldenkit.records", "goldenkit.records"),
    "goldenkit.comparability": ("goldenkit.compare._protocol", "goldenkit.compare"),
    "goldenkit.flips": ("goldenkit.compare._flips", "goldenkit.compare"),
    "goldenkit.policy": ("goldenkit.gate._policy", "goldenkit.gate"),
    "goldenkit.evidence": ("goldenkit.gate._evidence", "goldenkit.gate"),
    "goldenkit.alignment": ("goldenkit.leaderboards._alignment", "goldenkit.leaderboards"),
    "goldenkit.ranking": ("goldenkit.leaderboards._ranking", "goldenkit.leaderboards"),
    "goldenkit.passk": ("goldenkit.leaderboards._passk", "goldenkit.leaderboards"),
    "goldenkit.pairwise": ("goldenkit.leaderboards._pairwise", "goldenkit.leaderboards"),
    "goldenkit.leaderboard_report": ("goldenkit.leaderboards._report", "goldenkit.leaderboards"),
    "goldenkit.demo_benchmark": ("goldenkit.demo._benchmark", "goldenkit.demo"),
    "goldenkit.dataset.generate": ("goldenkit.scenarios._generate", "goldenkit.scenarios"),
    "goldenkit.dataset.agent_config": ("goldenkit.scenarios._agent_config", "goldenkit.scenarios"),
    "goldenkit.runner.index": ("goldenkit.runner._outcome_index", "goldenkit.runner._outcome_index"),
    "goldenkit.history.index": ("goldenkit.history._run_index", "goldenkit.history"),
}


def moved_target(name: str) -> tuple[str, str] | None:
    """Where the old module ``name`` is now and where to import from, or None when it never moved.

    >>> moved_target("goldenkit.runner.evaluate")
    ('goldenkit.runner._evaluate', 'goldenkit.runner')
    >>> moved_target("goldenkit.scrub"), moved_target("goldenkit.runner.nothing")
    (('goldenkit._scrub', 'goldenkit'), None)
    """
    if name in MOVED:
        return MOVED[name]
    package, _, module = name.rpartition(".")
    if not package.startswith("goldenkit") or module.startswith("_"):
        return None
    private = f"{package}._{module}"
    parent = sys.modules.get(package)
    if parent is None or not isinstance(vars(parent).get(module, parent), ModuleType):
        return None  # the package's own name (goldenkit.history.trend is a function): importing would replace it
    if importlib.util.find_spec(private) is None:
        return None
    return private, package


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it is now: the import system returns ``sys.modules[name]``."""

    def __init__(self, target: str, public: str) -> None:
        self.target, self.public = target, public

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        shown = f"it is the private {self.target}" if self.target != self.public else f"it is {self.target}"
        warnings.warn(f"{name} is deprecated ({shown}): import from {self.public}", DeprecationWarning, stacklevel=2)
        sys.modules[name] = importlib.import_module(self.target)


class MovedFinder(importlib.abc.MetaPathFinder):
    """The finder of the old locations (:func:`moved_target`); goldenkit appends it to ``sys.meta_path`` once."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("goldenkit."):
            return None
        found = moved_target(fullname)
        if found is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(*found))


def install() -> None:
    """Append the finder to ``sys.meta_path`` unless one is there (``import goldenkit`` calls this once)."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
